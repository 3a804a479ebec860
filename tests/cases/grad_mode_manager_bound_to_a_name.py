"""A grad-mode manager bound to a name first and entered through it (`ctx =
torch.no_grad()`, or `ctx = nullcontext() if train else torch.no_grad()`, then `with
ctx:`) switches recording off as written inline does. Before, the name was no manager,
and both evaluations below were reported as recording."""

import contextlib

import torch
import torch.nn as nn

model = nn.Linear(3, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def run_epoch(loader, train):
    ctx = contextlib.nullcontext() if train else torch.no_grad()
    total = 0.0
    with ctx:
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            if train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total += loss.item()
    return total


def evaluate(loader):
    grad_ctx = torch.no_grad()
    with grad_ctx:
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


run_epoch([], True)
run_epoch([], False)


# -- a name bound to something else still records ----------------------------------------


def evaluate_recording(loader):
    ctx = contextlib.nullcontext()
    with ctx:
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)  # error: GL012
