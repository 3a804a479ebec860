"""`loss = Variable(loss, requires_grad=True)`, the way old code silenced "element 0 of
tensors does not require grad": the Variable is a new leaf that copies the loss's data,
not its history (measured on torch 2.13: `grad_fn` None, `is_leaf` True, and every
parameter's `.grad` stays None after the backward). Whatever the loss was computed
from, the optimizer step after it applies nothing. Before, only a leaf rebuilt from
data visibly cut on the way (`.item()`, `.data`) was reported (a policy-gradient
script of the fresh dev batch)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

policy = nn.Linear(4, 2)
optimizer = torch.optim.Adam(policy.parameters())


def optimize(states, actions, rewards):
    logits = policy(states)
    loss = torch.dot(F.cross_entropy(logits, actions, reduction="none"), rewards)
    loss = Variable(loss, requires_grad=True)
    optimizer.zero_grad()
    loss.backward()  # error: GL009
    optimizer.step()


def optimize_copied_by_torch_tensor(act_p, actions):
    loss = torch.tensor(F.cross_entropy(act_p, actions), requires_grad=True)
    optimizer.zero_grad()
    loss.backward()  # error: GL009
    optimizer.step()


def a_leaf_of_numbers_is_its_own_demo():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    opt = torch.optim.SGD([x], lr=0.1)
    x.backward(torch.ones(2))
    opt.step()


def optimize_as_it_is(states, actions, rewards):
    logits = policy(states)
    loss = torch.dot(F.cross_entropy(logits, actions, reduction="none"), rewards)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def fit_a_point_given_its_gradient(init, blackbox_grad, steps=100):
    """Review of 2026-12-07: the new leaf is the variable an optimizer fits, given its
    gradient from outside autograd (a simulator)."""
    z = torch.tensor(init, requires_grad=True)
    opt = torch.optim.SGD([z], lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        z.backward(blackbox_grad(z.detach().numpy()))
        opt.step()
    return z
