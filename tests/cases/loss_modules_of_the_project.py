"""A loss module the project writes (`class DiceLoss(nn.Module)`) computes its value
from its inputs, as torch's own losses do: an evaluation's output handed to it and only
read as numbers afterwards was built for nothing (GL012). The instance's class runs its
`forward`, or its `__call__` when it has one. Silent: a loss module that keeps its
input on itself (read out of sight), and one whose value is backpropagated. Lint only:
markers are the expected findings."""

import torch
import torch.nn as nn


class DiceLoss(nn.Module):
    def forward(self, y, t):
        return 1 - (2 * (y * t).sum() + 1) / (y.sum() + t.sum() + 1)


class CalledLoss:
    def __call__(self, y, t):
        return (y - t).abs().mean()


class KeepingLoss(nn.Module):
    def forward(self, y, t):
        self.last = y
        return (y - t).pow(2).mean()


model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X_all, Y_all = torch.randn(100, 4), torch.rand(100, 2)
dice = DiceLoss()
l1 = CalledLoss()
keeping = KeepingLoss()
for step in range(10):
    opt.zero_grad()
    dice(model(X_all), Y_all).backward()
    opt.step()

out = model(X_all)  # error: GL012
print(dice(out, Y_all).item())

out2 = model(X_all)  # error: GL012
print(l1(out2, Y_all).item())

out3 = model(X_all)
print(keeping(out3, Y_all).item())

out4 = model(X_all)
loss = dice(out4, Y_all)
print(loss.item())
loss.backward()
