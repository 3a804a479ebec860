"""GL002 on a target whose parameters are switched off in a way other than a plain loop
over its parameters: each of these targets is frozen, so its in-place update raises
nothing."""

import copy

import torch
from torch import nn


class MoCo(nn.Module):
    def __init__(self, m=0.999):
        super().__init__()
        self.m = m
        self.encoder_q = nn.Linear(3, 1)
        self.encoder_k = nn.Linear(3, 1)
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)
            param_k.requires_grad = False

    def momentum_update(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.mul_(self.m).add_(param_q.detach(), alpha=1 - self.m)


class Agent:
    def __init__(self):
        self.network = nn.Linear(3, 1)
        self.target_network = nn.Linear(3, 1)
        for p in self.target_network.parameters():
            p.detach_()

    def soft_update(self, tau):
        for t, s in zip(self.target_network.parameters(), self.network.parameters()):
            t.copy_(t * (1 - tau) + s.detach() * tau)


net = nn.Linear(3, 1)
chained = copy.deepcopy(net).requires_grad_(False).eval()
annotated: nn.Module = copy.deepcopy(net).requires_grad_(False)


def update_chained(beta=0.99):
    for e, p in zip(chained.parameters(), net.parameters()):
        e.copy_(p.detach().lerp(e, beta))


def update_annotated(beta=0.99):
    for e, p in zip(annotated.parameters(), net.parameters()):
        e.copy_(p.detach().lerp(e, beta))


def ema_step(ema, model, beta):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.copy_(p.detach().lerp(e, beta))


def train(model, steps):
    ema = copy.deepcopy(model)
    for p in ema.parameters():
        p.requires_grad_(False)
    for _ in range(steps):
        ema_step(ema, model, 0.99)
    return ema


def unfrozen_namesake(beta=0.99):
    ema = copy.deepcopy(net)
    for e, p in zip(ema.parameters(), net.parameters()):
        e.copy_(p.detach().lerp(e, beta))  # error: GL002


def set_requires_grad(model, flag):
    for p in model.parameters():
        p.requires_grad_(flag)


toggled = copy.deepcopy(net)
set_requires_grad(toggled, False)


def update_toggled(beta=0.99):
    for e, p in zip(toggled.parameters(), net.parameters()):
        e.copy_(p.detach().lerp(e, beta))
