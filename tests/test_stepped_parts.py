"""GL011's optimizer form when the optimizer holds a part of a model
(`Adam(critic.Q1.parameters())`) and the forward is of the whole model (`q1, q2 =
critic(s)`): the step changes weights the forward saved only when the forward runs the
part and the part saves its weight, and the backward that raises must go through what
the part computed. Each case below was run under torch 2.13 by a review: the true one
raises "modified by an inplace operation", the others run clean."""

from __future__ import annotations

import textwrap

import pytest

from gradlint.config import Config
from gradlint.engine import lint_source

TWO_PARTS = """
import torch
from torch import nn


class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = {part_a}
        self.b = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.aux = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x):
        return {returned}


m = Two()
opt_part = torch.optim.SGD(m.{stepped}.parameters(), lr=0.1)
for _ in range(3):
    {forward}
    first.sum().backward(retain_graph=True)
    opt_part.step()
    {loss}.sum().backward()
"""
DEEP = "nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))"


def gl011_lines(**parts: str) -> list[int]:
    return gl011_lines_of(TWO_PARTS, **parts)


def gl011_lines_of(template: str, **parts: str) -> list[int]:
    source = textwrap.dedent(template.format(**parts))
    config = Config(select=["GL011"])
    return [d.start.line for d in lint_source(source, "train.py", config) if d.code == "GL011"]


def test_a_loss_through_every_output_of_the_model_after_a_part_stepped():
    # twinned heads, one stepped, the loss of both: raises
    assert gl011_lines(
        part_a=DEEP,
        returned="self.a(x), self.b(x)",
        stepped="a",
        forward="qa, qb = m(torch.randn(8, 4))\n    first = qa",
        loss="(qa + qb)",
    ) == [24]


# each runs clean under torch: the stepped part's weights are not on the backward's way
CLEAN = {
    # `out[1]` is head b's output alone
    "one name holding the outputs, indexed past the stepped part": dict(
        part_a=DEEP,
        stepped="a",
        forward="out = m(torch.randn(8, 4))\n    first = out[0]",
        loss="out[1]",
    ),
    # the auxiliary head is run by no forward of the model
    "a part the forward does not run": dict(
        part_a=DEEP,
        stepped="aux",
        forward="qa, qb = m(torch.randn(8, 4))\n    first = m.aux(torch.randn(8, 4))",
        loss="(qa + qb)",
    ),
    # `nn.Linear` on raw input keeps the input for its weight's gradient, not the weight
    "a single layer part on the forward's own input": dict(
        part_a="nn.Linear(4, 1)",
        stepped="a",
        forward="qa, qb = m(torch.randn(8, 4))\n    first = qa",
        loss="(qa + qb)",
    ),
}


@pytest.mark.parametrize("case", CLEAN)
def test_a_stepped_part_the_backward_does_not_need(case):
    assert gl011_lines(returned="self.a(x), self.b(x)", **CLEAN[case]) == []


def test_a_single_layer_part_on_features_the_forward_computed_saves_its_weight():
    # `x = self.b(x)` rebinds the input: the head's input has history, so the
    # layer keeps its weight for the input's gradient, and the step breaks it (raises)
    source = TWO_PARTS.replace(
        "    def forward(self, x):\n", "    def forward(self, x):\n        x = self.b(x)\n"
    ).replace(
        "self.b = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))",
        "self.b = nn.Sequential(nn.Linear(4, 4), nn.ReLU())",
    )
    lines = gl011_lines_of(
        source,
        part_a="nn.Linear(4, 1)",
        returned="self.a(x), self.b(x)",
        stepped="a",
        forward="qa, qb = m(torch.randn(8, 4))\n    first = qa",
        loss="(qa + qb)",
    )
    assert lines == [25]
