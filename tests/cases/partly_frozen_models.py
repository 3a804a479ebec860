"""A model some of whose parameters are frozen by a test of each one's name (hat's
sgd_frozen: `if not n.startswith('last'): p.requires_grad = False`) still records a
graph through the others: its eval-mode forward is GL004's. A freeze that a flag guards,
not the parameter, freezes them all when it runs."""

import torch
from torch import nn

head_only = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
for name, p in head_only.named_parameters():
    if not name.startswith("1."):
        p.requires_grad = False

model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))


def freeze(frozen):
    for p in model.parameters():
        if frozen:
            p.requires_grad = False


def evaluate_head_only(x):
    head_only.eval()
    out = head_only(x)  # error: GL004
    return out.argmax(1).cpu().numpy()


def evaluate_frozen(x):
    model.eval()
    out = model(x)
    return out.argmax(1).cpu().numpy()
