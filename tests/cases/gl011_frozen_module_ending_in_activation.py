"""GL011 asks whether the module is frozen: a frozen `nn.Sequential` ending in a ReLU,
run on inputs without history, records nothing, so changing its output in place
raises nothing; the same module trained raises at backward (checked on torch). A
switch of `self.features` in one class says nothing of another class's namesake."""

import torch
from torch import nn


class FrozenFeatures(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.features.requires_grad_(False)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = self.features(x)
        h += 1
        return self.head(h)


class TrainedFeatures(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = self.features(x)
        h += 1  # error: GL011
        return self.head(h)


def train(net, steps=2):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(steps):
        loss = net(torch.randn(3, 4)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
