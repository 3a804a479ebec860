"""GL015 and loops of a few steps fixed in the code: one such loop is a forward of
fixed depth, but a nest of them that keeps what each builds (a 10 x 10 grid of
generated samples concatenated row by row, with no no_grad) holds every forward of
the nest. A nest whose outer loop starts the state afresh repeats a bounded unroll."""

import torch
from torch import nn

gen = nn.Sequential(nn.Linear(8, 16), nn.Tanh())


# 1. rows of 7 samples, 7 rows, kept in `sheet`: 49 forwards held until `.numpy()`
def sample_sheet():
    for code in range(7):
        z = torch.randn(1, 8)
        for k in range(7):
            piece = gen(z * k)  # error: GL012
            row = torch.cat((row, piece), dim=1) if k > 0 else piece  # error: GL015
        sheet = torch.cat((sheet, row), dim=0) if code > 0 else row  # error: GL015
    return sheet.detach().numpy()


# 2. trap: 4 steps of a cell, repeated for 10 fresh trials compared one by one
def compare_cells(make_cell):
    for _ in range(10):
        cell = make_cell()
        state = None
        for _ in range(4):
            state = cell(torch.randn(2, 8), state)
            for part in state:
                assert torch.isfinite(part).all()


# 3. trap: one loop of 6 fixed steps
def six_steps(cell, x):
    h = torch.zeros(1, 16)
    for _ in range(6):
        h = cell(x, h)
    return h.sum().item()
