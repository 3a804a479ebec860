"""Where a forward's result ends without its graph being used (analysis.result_uses):
reads that are no escape."""

from __future__ import annotations

import pytest

from gradlint.config import Config
from gradlint.engine import lint_source

GL012 = Config(select=("GL012",))

DELETED = """
import torch
from torch import nn


def show(model, inputs):
    pred, aux = model(inputs)
    print(pred[0].data.mean())
    {after}


net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
show(net, torch.randn(3, 4))
"""


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        ("del pred, aux", ["GL012"]),  # Atcold/pytorch-PPUU's test_actions frees them
        ("del pred", ["GL012"]),
        ("pred.sum().backward()", []),
    ],
    ids=["del-both", "del-one", "differentiated"],
)
def test_a_deleted_result_is_dropped_not_kept(after, expected):
    source = DELETED.format(after=after)
    assert [d.code for d in lint_source(source, "show.py", GL012)] == expected
