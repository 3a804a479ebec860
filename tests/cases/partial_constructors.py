"""A model built through `functools.partial(Model, ...)` (a vocoder's test suite:
`build_compact_model = partial(WaveNet, layers=4)`, then `model = build_compact_model()`)
is that model: a forward of it whose result is only read records for nothing. A partial
of a loss or a parameterless layer builds nothing with weights. Lint only: markers are
the expected findings."""

from functools import partial

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(4, width)

    def forward(self, x):
        return self.fc(x)


build_compact_model = partial(Net, width=8)
build_dropout = partial(nn.Dropout, p=0.1)


def test_net():
    model = build_compact_model()
    y = model(torch.randn(2, 4))  # error: GL012
    print(y.size())


def test_eval_net():
    model = build_compact_model()
    model.eval()
    y = model(torch.randn(2, 4))  # error: GL004
    assert y.shape == (2, 8)


def test_dropout():
    drop = build_dropout()
    y = drop(torch.randn(2, 4))
    print(y.size())
