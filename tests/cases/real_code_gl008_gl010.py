"""GL008 and GL010 on the shapes real code has (bench/real-code, /work/ledger_work), reduced:
the findings that must stay (markers) and the look-alikes that must stay silent."""
from contextlib import nullcontext

import torch
import torch.autograd as autograd
import torch.nn.functional as F
from torch import nn
from torch.utils import checkpoint as checkpoint_module
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

USE_CUDA = False
# RL-Adventure notebooks: every Variable goes through a lambda that forwards **kwargs.
Variable = lambda *args, **kwargs: autograd.Variable(*args, **kwargs).cuda() if USE_CUDA else autograd.Variable(*args, **kwargs)  # noqa: E731


# RL-Adventure 1.dqn: act() picks an action through a volatile Variable, grad on.
class DQN(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Linear(4, 2)

    def forward(self, x):
        return self.layers(x)

    def act(self, state):
        state = Variable(torch.FloatTensor(state).unsqueeze(0), volatile=True)  # error: GL008
        q_value = self.forward(state)  # error: GL012 (the volatile flag does nothing)
        return q_value.max(1)[1].data[0]


# awd-lstm-lm generate.py: a module-level volatile input, then forwards with grad on.
model = nn.LSTM(4, 4)
start = Variable(torch.rand(1, 1, 4), volatile=True)  # error: GL008


# locuslab/TCN utils.get_batch: the flag is only true for callers already under no_grad.
def get_batch(source, i, seq_len, evaluation=False):
    return Variable(source[:, i : i + seq_len], volatile=evaluation)


# locuslab/TCN pmnist_test.py: a volatile Variable made inside `with torch.no_grad()`.
def pmnist_test(net, loader):
    with torch.no_grad():
        for data, target in loader:
            data, target = Variable(data, volatile=True), Variable(target)
            net(data)


# A local Variable that does not pass keywords on to torch's.
def make_variable(x, volatile=False):
    return x


def local_variable(x):
    return make_variable(x, volatile=True)


# The missing call, in a helper and as the second of two managers.
def notebook_cell(net, x):
    with torch.no_grad:  # error: GL008
        return net(x)


def second_item(net, x):
    with torch.autocast("cpu"), torch.inference_mode:  # error: GL008
        return net(x)


# Managers chosen at run time, entered by hand, or passed in: all correct.
def chosen(net, x, train, no_grad):
    ctx = nullcontext() if train else torch.no_grad()
    with ctx:
        y = net(x)
    with no_grad:
        y = net(y)
    guard = torch.no_grad()
    guard.__enter__()
    y = net(y)
    guard.__exit__(None, None, None)
    torch.set_grad_enabled(train)
    return y


@torch.no_grad
def bare_decorator(net, x):
    return net(x)


def bare_statements(net, x):
    torch.enable_grad()  # error: GL008
    autograd.no_grad  # error: GL008
    return net(x)


# -- GL010 --------------------------------------------------------------------------


# The usual shape: checkpoint inside forward on an argument of forward. The first
# block's caller may pass the raw batch, but from here `x` is unknown: silent.
class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))
        self.reentrant = True

    def forward(self, x, *args):
        for block in self.blocks:
            x = checkpoint(block, x)
        x = checkpoint(self.blocks[0], x, use_reentrant=self.reentrant)
        x = checkpoint(self.blocks[1], *args)
        return x


# diffusers: the keyword arguments come in a dict.
def diffusers_style(block, hidden_states):
    ckpt_kwargs = {"use_reentrant": False}
    return torch.utils.checkpoint.checkpoint(block, hidden_states, **ckpt_kwargs)


# Pytorch-UNet use_checkpointing(): calls the module torch.utils.checkpoint itself (a
# TypeError of its own), not the checkpoint function.
class UNetLike(nn.Module):
    def use_checkpointing(self):
        self.inc = torch.utils.checkpoint(self.inc)


def raw_batches(block, head, loader, optimizer):
    # the loop trains on what it iterates: a batch of data, which does not require grad,
    # so the reentrant checkpoint hands `block` no gradient (measured on torch 2.13)
    for x, y in loader:
        loss = F.mse_loss(head(checkpoint(block, x)), y)  # error: GL010
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def made_to_require_grad(block):
    x = torch.randn(4, 8)
    x.requires_grad = True
    y = torch.zeros(4, 8)
    y.copy_(block(x))
    return checkpoint(block, x).sum() + checkpoint(block, y).sum()


def inference_only(block):
    with torch.no_grad():
        return checkpoint(block, torch.randn(4, 8))


# A module of this file named like torch's function.
def shadowed(block, checkpoint=checkpoint):
    return checkpoint(block, torch.randn(4, 8))


def flagged_shapes(block, head):
    x = torch.randn(4, 8)
    a = checkpoint_module.checkpoint(block, torch.zeros(4, 8))  # error: GL010
    with torch.no_grad():
        features = F.normalize(block(x), dim=-1)
        pooled = features.mean(dim=0, keepdim=True)
    b = checkpoint(head, features)  # error: GL010
    c = checkpoint(head, pooled.expand(4, 8))  # error: GL010
    d = checkpoint(lambda: head(x))  # error: GL010
    e = checkpoint(head, x.data, use_reentrant=True)  # error: GL010
    f = checkpoint_sequential(nn.Sequential(block, head), segments=2, input=x)  # error: GL010
    g = checkpoint_sequential(nn.Sequential(block, head), 1, x)
    return a, b, c, d, e, f, g


# In a loop, what the call's own statement binds comes back as its next input, and the
# call's result is not seen through: both silent (the second one is a real pitfall, given
# up for the first).
def loop_carried(block, bias, steps):
    h = torch.zeros(4, 8)
    for _ in range(steps):
        h = checkpoint(block, h) + bias
    g = torch.zeros(4, 8)
    for _ in range(steps):
        g = checkpoint(block, g)
    return h, g
