"""Shapes beyond the fixtures: attribute state, aliases, while loops, closures, traps.

Lint-only cases (not run by runtime_check): every `# error:` marker must be reported and
nothing else.
"""
import torch
import torch.nn as nn

# 1. GL001 with attribute state in a method
class Agent:
    def __init__(self):
        self.rnn = nn.GRUCell(4, 8)
        self.h = torch.zeros(1, 8)
        self.opt = torch.optim.Adam(self.rnn.parameters())

    def train(self, xs):
        for x in xs:
            self.h = self.rnn(x, self.h)   # error: GL001
            loss = self.h.pow(2).sum()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()

# 2. set_grad_enabled statement at top of script
def evaluate(model, xs):
    model.eval()
    outs = []
    for x in xs:
        outs.append(model(x))  # error: GL004
    return outs

# 3. torch.set_grad_enabled(False) as statement
def evaluate2(model, xs):
    torch.set_grad_enabled(False)
    model.eval()
    out = model(xs)
    return out

# 4. GL006 in while with self attribute
class T:
    def fit(self, model, opt, data):
        self.history = []
        step = 0
        while step < 10:
            loss = model(data).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            self.history.append(loss)  # error: GL006
            step += 1

# 5. GL002 on nn.Parameter via from import alias
from torch.nn import Parameter as P
w = P(torch.zeros(3))
w.mul_(2)  # error: GL002

# 6. nested function with no_grad decorated caller (closure)
def outer(model):
    @torch.no_grad()
    def ema():
        for p in model.parameters():
            p.mul_(0.9)
    ema()

# 7. Trap: retain_graph in GAN two losses, no carried state
def gan(G, D, z, optD, optG):
    for i in range(10):
        fake = G(z)
        d_loss = D(fake).mean()
        optD.zero_grad()
        d_loss.backward(retain_graph=True)
        optD.step()
        g_loss = -D(fake).mean()
        optG.zero_grad()
        g_loss.backward()
        optG.step()

# 8. GL001: x = f(W @ x) while loop with autograd.grad
from torch.autograd import grad
def f(W, x):
    i = 0
    while i < 5:
        x = torch.tanh(W @ x)  # error: GL001
        g, = grad(x.sum(), W)
        i += 1
    return g

# 9. trap: x is data re-assigned from loader each iteration
def train(model, loader, opt):
    for batch in loader:
        x = batch[0].cuda()
        x = model.preprocess(x)
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()

# 10. trap: lr schedule carried float
def sched(opt, model, x):
    lr = 0.1
    for i in range(10):
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        lr = lr * 0.9
        for g in opt.param_groups:
            g["lr"] = lr


# 9. a local subclass of a torch layer inherits Parameter weights
class ScaledLinear(nn.Linear):
    pass


layer = ScaledLinear(4, 4)
layer.weight.mul_(0.5)  # error: GL002

# 10. requires_grad switched back on before the in-place update
p = torch.zeros(3, requires_grad=True)
p.requires_grad = False
p.fill_(1.0)
p.requires_grad = True
p.add_(1.0)  # error: GL002


# 11. a global parameter updated in a function defined before it
def bump():
    scale.add_(1.0)  # error: GL002


scale = nn.Parameter(torch.ones(1))
bump()


# BEGAN's balance term: a number kept in [0, 1] by builtin min/max, which compute with
# their arguments as `+` does: no tensor operation carries a graph into the next step
_D = nn.Linear(4, 4)
_opt = torch.optim.Adam(_D.parameters())


def began_balance(loader, gamma, lambda_k):
    k_t = 0
    for x in loader:
        _D.zero_grad()
        d_loss_real = (_D(x) - x).abs().mean()
        d_loss = d_loss_real - k_t * d_loss_real
        d_loss.backward()
        _opt.step()
        balance = (gamma * d_loss_real).data[0]
        k_t += lambda_k * balance
        k_t = max(min(1, k_t), 0)


def clipped_state(loader):
    # the state is made of a forward's output: max hands that graph on
    h = torch.zeros(4)
    for x in loader:
        _D.zero_grad()
        out = _D(x + h)
        out.mean().backward()
        _opt.step()
        h = max(out.mean(), 0) * torch.ones(4)  # error: GL001
