"""GL015 and a model's forward that unrolls its steps into a preallocated tensor
(`out[:, k] = state`) and returns it: the caller's loss differentiates the unroll, so
its history is the point. Handing back only numbers of it leaves a history nobody
differentiates."""

import torch
from torch import nn


class Stepper(nn.Module):
    def __init__(self):
        super().__init__()
        self.step = nn.Linear(3, 3)

    # 1. trap: the steps are written into `out`, which the forward returns
    def forward(self, x, horizon):
        out = torch.zeros(x.size(0), horizon, 3)
        state = x
        for k in range(horizon):
            state = self.step(state)
            out[:, k, :] = state
        return out.transpose(0, 1)

    # 2. the same unroll, of which only numbers leave the method
    def preview(self, x, horizon):
        grid = torch.zeros(x.size(0), horizon, 3)
        state = x
        for k in range(horizon):
            state = self.step(state)  # error: GL015, GL012
            grid[:, k, :] = state
        return grid.tolist()
