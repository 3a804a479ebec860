"""GL003 on a step taken once outside any loop: nothing is lost when the scope made the
tensor and never reads its gradient again (one-step FGSM hands the new tensor back), but
a step on the function's own parameter hands its caller a non-leaf that the caller steps
again (each program below run under torch 2.13)."""

from __future__ import annotations

import textwrap
from pathlib import Path

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

# one-step FGSM, called in a loop: the fixture that runs clean under runtime_check
ONE_STEP_FGSM = (
    Path(__file__).resolve().parent.parent / "fixtures" / "GL003" / "good_fgsm_single_step.py"
).read_text(encoding="utf-8")


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


def test_a_tensor_made_and_stepped_once_is_the_result():
    assert gl003_lines(ONE_STEP_FGSM) == []
    pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(ONE_STEP_FGSM, "good_fgsm_single_step.py", "exec"), namespace)
    namespace["main"]()
