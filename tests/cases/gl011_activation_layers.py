"""GL011 on the output of a torch.nn activation layer changed in place inside
`forward()`: `self.act(h)` with `self.act = nn.Sigmoid()` saves its output as
`torch.sigmoid(h)` does, and `nn.ReLU(inplace=True)` its rewritten input as relu does
(checked on torch: `out += x` after either raises at backward). Not the add before the
activation (ResNet's order), nor a layer that saves its input instead (LeakyReLU), and
`self.relu(x)` is the layer's call, not a tensor method of `self`. Lint only: markers are
the expected findings."""

import torch
from torch import nn


class GatedHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.act = nn.Sigmoid()

    def forward(self, x):
        out = self.act(self.fc(x))
        out += 1  # error: GL011
        return out


class ResidualBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(3)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.bn(self.conv(x)))
        out += x  # error: GL011
        return out


class ResNetOrder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(3)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.bn(self.conv(x))
        out += x
        return self.relu(out)


class LeakyBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.act = nn.LeakyReLU(0.1)

    def forward(self, x):
        out = self.act(self.fc(x))
        out += 1  # leaky_relu saves its input, not its output
        return out


for block, x in ((GatedHead(), torch.randn(2, 3)), (ResidualBlock(), torch.randn(1, 3, 4, 4))):
    block(x).sum().backward()
for block, x in ((ResNetOrder(), torch.randn(1, 3, 4, 4)), (LeakyBlock(), torch.randn(2, 3))):
    block(x).sum().backward()
