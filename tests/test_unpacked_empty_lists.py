"""Lists made empty together (`outs, ys = [], []`) hold only what is appended to them,
as `outs = []` does: the outputs a validation pass gathers in a training script and
reads back as numbers (`torch.cat(outs).argmax(1)...item()`) recorded their graphs for
nothing. Found by the plumbing probe (bench/plumbing/probe.py): a script that trains
and evaluates in one scope, with no eval() switch, was missed."""

from __future__ import annotations

import textwrap

from gradlint.config import Config
from gradlint.engine import lint_source

SCRIPT = """
import torch
import torch.nn as nn
import torch.nn.functional as F

loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]
model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    MADE
    for x, y in loader:
        outs.append(model(x))
        ys.append(y)
    READ
"""

READ_AS_NUMBERS = "print(torch.cat(outs).argmax(1).eq(torch.cat(ys)).float().mean().item())"


def _lint(made: str, read: str = READ_AS_NUMBERS) -> list[tuple[str, int]]:
    source = textwrap.dedent(SCRIPT).replace("MADE", made).replace("READ", read)
    return [(d.code, d.start.line) for d in lint_source(source, "t.py", Config(preview=True))]


def test_lists_made_empty_together_hold_what_is_appended():
    for made in ("outs, ys = [], []", "[outs, ys] = [list(), []]", "outs = []; ys = []"):
        assert _lint(made) == [("GL012", 16)], made


def test_a_list_that_starts_with_something_else_says_nothing():
    assert _lint("outs, ys = [model(loader[0][0])], []") == []
    assert _lint("outs, ys = list(range(0)), []") == []


def test_gathered_outputs_that_are_trained_on_say_nothing():
    trained = "F.cross_entropy(torch.cat(outs), torch.cat(ys)).backward()"
    assert _lint("outs, ys = [], []", trained) == []
