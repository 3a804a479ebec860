"""GL012 on a forward whose result is only tested for a condition: `torch.isnan(out)`,
`(out > 0)`, `.any()` and `.all()` give bool tensors without history, so a forward
read only that way records its graph for nothing. Not when the tested value is also
the loss the function backpropagates. (No other word here lets the file through
GL012's text gate: the tests themselves must.)"""

import torch
from torch import nn

model = nn.Linear(3, 2)
opt = torch.optim.Adam(model.parameters())


def nan_check(x):
    out = model(x)  # error: GL012
    if torch.isnan(out).any():
        raise ValueError("nan")


def sign_check(x):
    out = model(x)  # error: GL012
    if (out > 0).any():
        raise ValueError("positive")


def skip_bad_batches(loader):
    for x, y in loader:
        loss = (model(x) - y).pow(2).mean()
        if torch.isfinite(loss).all():
            opt.zero_grad()
            loss.backward()
            opt.step()
