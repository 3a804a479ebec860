"""GL003 on steps taken once, outside any loop: each program below was run under torch
2.13, and each loses its update. A one-step FGSM that hands its new tensor back
(`x_adv = x_adv + eps * x_adv.grad.sign(); return x_adv`) loses nothing and is still
reported: telling it apart needs what the callers do with the result (a review's
programs lost seven of these catches to a rule that looked only at the function)."""

from __future__ import annotations

import textwrap

import pytest

from gradlint.config import Config
from gradlint.engine import lint_source

STEP_ON_A_PARAMETER = """
import torch

def sgd_step(w, lr=0.1):
    w = w - lr * w.grad
    return w

w = torch.zeros(3, requires_grad=True)
for _ in range(3):
    loss = ((w - 1) ** 2).sum()
    loss.backward()
    w = sgd_step(w)
"""

STEP_ON_AN_ALIAS_OF_THE_WEIGHTS = """
import torch
from torch import nn

def train_step(model, x, y, lr):
    w = model.weight
    loss = ((x @ w.T - y) ** 2).mean()
    loss.backward()
    w = w - lr * w.grad

model = nn.Linear(3, 1, bias=False)
before = model.weight.detach().clone()
for _ in range(3):
    train_step(model, torch.randn(4, 3), torch.randn(4, 1), 0.1)
assert torch.equal(model.weight, before)  # never updated
"""

WARM_UP_BEFORE_AN_OPTIMIZER = """
import torch

w = torch.randn(4, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
loss = ((w - 1.0) ** 2).sum()
loss.backward()
w = w - 0.1 * w.grad
first = None
for _ in range(5):
    opt.zero_grad()
    loss = ((w - 1.0) ** 2).sum()
    loss.backward()
    opt.step()
    first = loss.item() if first is None else first
assert loss.item() == first  # the optimizer steps the old leaf: the new `w` never moves
"""


def gl003_lines(source: str) -> list[str]:
    source = textwrap.dedent(source)
    lines = source.splitlines()
    return [
        lines[d.start.line - 1].strip()
        for d in lint_source(source, "step.py", Config(select=["GL003"]))
    ]


def run(source: str) -> None:
    exec(compile(textwrap.dedent(source), "step.py", "exec"), {})


def test_a_step_on_the_functions_parameter_is_lost_to_its_caller():
    assert gl003_lines(STEP_ON_A_PARAMETER) == ["w = w - lr * w.grad"]
    pytest.importorskip("torch")
    with pytest.raises(TypeError):  # the second step reads the non-leaf's `.grad`: None
        run(STEP_ON_A_PARAMETER)


@pytest.mark.parametrize("program", [STEP_ON_AN_ALIAS_OF_THE_WEIGHTS, WARM_UP_BEFORE_AN_OPTIMIZER])
def test_a_step_taken_once_outside_a_loop_is_still_lost(program):
    reported = gl003_lines(program)
    assert len(reported) == 1 and reported[0].startswith("w = w - ")
    pytest.importorskip("torch")
    run(program)  # the assertions inside show the update lost
