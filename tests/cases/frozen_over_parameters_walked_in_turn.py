"""Parameters frozen by one loop over several modules' parameters walked in turn
(`list(G.parameters()) + list(D.parameters())`, `itertools.chain(...)`) are frozen: a
forward of those modules on inputs without history records nothing. Before, only a loop
over one module's `.parameters()` counted, and the forward below was a false GL012."""

import itertools

import torch
import torch.nn as nn

G = nn.Linear(3, 3)
D = nn.Linear(3, 1)
E = nn.Linear(3, 3)
F = nn.Linear(3, 1)
H = nn.Linear(3, 1)
K = nn.Linear(3, 1)


def score_frozen_pair():
    for p in list(G.parameters()) + list(D.parameters()):
        p.requires_grad = False
    z = torch.randn(4, 3)
    print(D(G(z)).mean().item())


def score_frozen_chain():
    for p in itertools.chain(E.parameters(), F.parameters()):
        p.requires_grad_(False)
    z = torch.randn(4, 3)
    print(F(E(z)).mean().item())


def score_half_frozen():
    for p in H.parameters():
        p.requires_grad = False
    z = torch.randn(4, 3)
    print(H(z).mean().item())
    print(K(z).mean().item())  # error: GL012
