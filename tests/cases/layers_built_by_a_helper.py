"""Layers a function of the file builds into a plain list and hands back to be stored on
`self` (analysis/registration.py): `self.layers = make_layers(n)`, or one place of the
tuple a builder returns (`self.n, self.layers, self.loss = build(n)`, as
pytorch-yolo-v3's `create_modules` did). Nothing registers them: the optimizer built
from `parameters()` never sees them. A list the caller wraps, or one the helper also
hands to a registering container, or a helper that may return something else, is not
such a list."""

import torch
from torch import nn


def make_layers(n):
    layers = []
    for _ in range(n):
        layers.append(nn.Linear(4, 4))
    return layers


def build(n):
    layers = []
    for _ in range(n):
        layers.append(nn.Linear(4, 4))
    return n, layers, nn.MSELoss()


def make_sequential(n):
    layers = [nn.Linear(4, 4) for _ in range(n)]
    return layers, nn.Sequential(*layers)


def make_maybe(n):
    if n == 0:
        return None
    return [nn.Linear(4, 4) for _ in range(n)]


class Stored(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = make_layers(3)  # error: GL017

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Unpacked(nn.Module):
    def __init__(self):
        super().__init__()
        self.n, self.layers, self.loss = build(3)  # error: GL017

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Wrapped(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(make_layers(3))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Viewed(nn.Module):
    def __init__(self):
        super().__init__()
        self.parts, self.body = make_sequential(2)

    def forward(self, x):
        return self.body(x)


class Maybe(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = make_maybe(2)

    def forward(self, x):
        for layer in self.layers or []:
            x = layer(x)
        return x


with torch.no_grad():
    for net in (Stored(), Unpacked(), Wrapped(), Viewed(), Maybe()):
        # the first two count 0 parameters: their layers are not registered
        print(type(net).__name__, sum(p.numel() for p in net.parameters()), net(torch.randn(1, 4)))
