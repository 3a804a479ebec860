"""GL002 through `zip`: each name of `for t, p in zip(a.parameters(), b.parameters())`
holds a parameter of its own argument, as `for p in a.parameters()` does. An EMA or a
soft target update written in place outside `no_grad` raises on the first call; a
target frozen once, anywhere in the file (a loop over its parameters, or
`requires_grad_(False)` on what the name is bound to), raises nothing."""

import copy

import torch
from torch import nn

model = nn.Linear(3, 1)
ema = copy.deepcopy(model)
frozen = copy.deepcopy(model)
for q in frozen.parameters():
    q.requires_grad = False
frozen_inline = copy.deepcopy(model).requires_grad_(False)


def update_ema(decay=0.999):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)  # error: GL002


def soft_update(target, source, tau):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.copy_(target_param * (1.0 - tau) + param * tau)  # error: GL002


def soft_update_enumerated(target, source, tau):
    for i, (target_param, param) in enumerate(zip(target.parameters(), source.parameters())):
        target_param.copy_(param)  # error: GL002


def update_frozen(tau=0.01):
    for t, p in zip(frozen.parameters(), model.parameters()):
        t.mul_(1 - tau).add_(p.detach() * tau)


def update_frozen_inline(tau=0.01):
    for t, p in zip(frozen_inline.parameters(), model.parameters()):
        t.mul_(1 - tau).add_(p.detach() * tau)


@torch.no_grad()
def soft_update_no_grad(target, source, tau):
    for t, p in zip(target.parameters(), source.parameters()):
        t.mul_(1 - tau).add_(p, alpha=tau)


def hard_update_through_data(target, source):
    for t, p in zip(target.parameters(), source.parameters()):
        t.data.copy_(p.data)


def gradients_handed_over(model, grads):
    for p, g in zip(model.parameters(), grads):
        p.grad = g
        g.zero_()  # a gradient, not a parameter


def shrink_frozen(factor=0.5):
    for t in frozen.parameters():
        t.mul_(factor)


def shrink_a_namesake(frozen, factor=0.5):
    for t in frozen.parameters():
        t.mul_(factor)  # error: GL002


def soft_update_detached_first(target, source, tau):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.detach_()  # DeepRL: the target's parameter leaves autograd first
        target_param.copy_(target_param * (1.0 - tau) + param * tau)


def train_with_ema(net, steps, beta=0.999):
    ema = copy.deepcopy(net).eval().requires_grad_(False)  # frozen in this function
    for _ in range(steps):
        for p_ema, p_net in zip(ema.parameters(), net.parameters()):
            p_ema.copy_(p_net.detach().lerp(p_ema, beta))
    return ema


def update_ema_counted(decay=0.999):
    for i, e in enumerate(ema.parameters(), start=1):
        e.mul_(decay)  # error: GL002
