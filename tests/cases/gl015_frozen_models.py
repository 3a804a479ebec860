"""GL015 and a model whose weights are frozen: a forward of it records nothing for the
weights, so a state carried through it alone grows no graph (first principles of the
rule's claim: the carried value must have history from parameters)."""

import torch
from torch import nn

cell = nn.GRUCell(4, 8)
cell.requires_grad_(False)


def sample_frozen(steps):
    h = torch.zeros(1, 8)
    x = torch.zeros(1, 4)
    for _ in range(steps):
        h = cell(x, h)
    print(h.sum().item())


def sample_frozen_by_a_loop(steps):
    rnn = nn.GRUCell(4, 8)
    for p in rnn.parameters():
        p.requires_grad = False
    h = torch.zeros(1, 8)
    x = torch.zeros(1, 4)
    for _ in range(steps):
        h = rnn(x, h)
    print(h.sum().item())


def sample_unfrozen_after(steps):
    # the weights are switched back on before the loop: the graph grows again
    rnn = nn.GRUCell(4, 8)
    rnn.requires_grad_(False)
    rnn.requires_grad_(True)
    h = torch.zeros(1, 8)
    x = torch.zeros(1, 4)
    for _ in range(steps):
        h = rnn(x, h)  # error: GL015, GL012
    print(h.sum().item())


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 8)
        self.cell = nn.GRUCell(8, 8)

    def forward(self, x, h):
        return self.cell(self.encoder(x), h)


def frozen_encoder_only(steps):
    # a frozen submodule leaves the cell recording: the state still grows a graph
    model = Backbone()
    model.encoder.requires_grad_(False)
    h = torch.zeros(1, 8)
    x = torch.zeros(1, 8)
    for _ in range(steps):
        h = model(x, h)  # error: GL015
    print(h.sum().item())
