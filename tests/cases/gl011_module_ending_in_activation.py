"""GL011 on the output of a module whose last layer is an activation that saves its
output: an `nn.Sequential` ending in `nn.Sigmoid()` or `nn.ReLU(inplace=True)`, or a
module class whose forward returns such a unit's result, directly or bound just before
(LinkNet's decoder blocks, then `d4 += e3`; a class of another project file:
tests/test_project.py). Checked on torch: each marked change raises at backward. Not a
Sequential ending in a layer that saves its input (LeakyReLU) or in a Linear."""

import torch
from torch import nn


class GatedHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())

    def forward(self, x):
        y = self.body(x)
        y *= 2  # error: GL011
        return y


class ConvBnRelu(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.unit = nn.Sequential(
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.BatchNorm2d(channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, inputs):
        return self.unit(inputs)


class UpBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.reduce = ConvBnRelu(channels)
        self.expand = ConvBnRelu(channels)

    def forward(self, x):
        x = self.reduce(x)
        x = self.expand(x)
        return x


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = ConvBnRelu(3)
        self.tail = nn.Sequential(nn.Conv2d(3, 3, 1), nn.ReLU(inplace=True))
        self.up = UpBlock(3)

    def forward(self, x, skip):
        d = self.block(x)
        d += skip  # error: GL011
        t = self.tail(d)
        t += skip  # error: GL011
        u = self.up(x)
        u += skip  # error: GL011
        return t + u


class LeakyTail(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 4), nn.LeakyReLU(0.1))
        self.head = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))

    def forward(self, x):
        y = self.body(x)
        y += 1  # leaky_relu saves its input
        z = self.head(x)
        z += 1  # a Linear last
        return y + z


if __name__ == "__main__":
    for run in (
        lambda: GatedHead()(torch.randn(2, 4)).sum().backward(),
        lambda: Decoder()(torch.randn(1, 3, 4, 4), torch.randn(1, 3, 4, 4)).sum().backward(),
    ):
        try:
            run()
        except RuntimeError as error:
            print("raises:", str(error)[:60])
    LeakyTail()(torch.randn(2, 4)).sum().backward()
