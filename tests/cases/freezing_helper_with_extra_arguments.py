"""A freezing helper called with more positional arguments than it names (`*rest`
takes them): which parameter each binds is not read, and reading it must not crash the
analysis (it raised IndexError once every call was asked whether it freezes a model)."""

import torch
from torch import nn


def set_requires_grad(model, flag, *rest):
    for p in model.parameters():
        p.requires_grad_(flag)


net = nn.Linear(3, 1)
set_requires_grad(net, True, "extra")


def evaluate(xs):
    net.eval()
    total = 0.0
    for x in xs:
        total += net(x).sum().item()  # error: GL004
    return total
