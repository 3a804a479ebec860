"""A loop, or a comprehension, that walks a list of modules written out hands each of
them to its name: `for m in ensemble` with `ensemble = [Net() for _ in range(3)]`, `for
net in [G, D]`, `nn.ModuleList([...])`. Before, the name held no known module unless
the loop also switched its mode or asked its parameters, so an ensemble's prediction
that only reads numbers was silent."""

import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)


ensemble = [Net() for _ in range(3)]
G, D = Net(), Net()
heads = nn.ModuleList([nn.Linear(3, 2), nn.Linear(3, 2)])


def ensemble_prediction(x):
    probs = [m(x).softmax(1) for m in ensemble]  # error: GL012
    return torch.stack(probs).mean(0).argmax(1).tolist()


def ensemble_votes(x):
    votes = []
    for member in ensemble:
        votes.append(member(x).argmax(1).cpu().numpy())  # error: GL012
    return np.stack(votes)


def norms_of_both(z):
    return [net(z).norm().item() for net in [G, D]]  # error: GL012


def head_scores(x):
    return [head(x).max().item() for head in heads]  # error: GL012


# -- what a loop walks that holds no weights: silent ------------------------------------


def activations(x):
    return [f(x).mean().item() for f in [torch.sin, torch.tanh]]


def losses(out, y):
    return [criterion(out, y).item() for criterion in [nn.MSELoss(), nn.L1Loss()]]
