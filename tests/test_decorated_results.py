"""What a decorated function returns goes to its decorator's wrapper, which may do with
it what no caller shows (physicsnemo's `@StaticCaptureTraining(model=..., optim=...)`
backpropagates the loss it is handed): a forward whose result only such a function
returns is not "thrown away". Decorators that hand the result back unchanged
(`staticmethod`, `functools.wraps`, grad-mode managers) change nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_project import findings, write

TRAIN = """
import functools
import torch
from torch import nn
from capture import StaticCaptureTraining

model = nn.Linear(4, 4)
optimizer = torch.optim.Adam(model.parameters())


def unroll(model, x, steps):
    outs = []
    for i in range(steps):
        x = model(x)
        outs.append(x)
    return torch.stack(outs)


DECORATOR
def train_step(x):
    pred = unroll(model, x, 5)
    return (pred ** 2).mean()


def main(loader):
    for x in loader:
        loss = train_step(x)
        print(loss.item())
"""

CAPTURE = "def StaticCaptureTraining(**kw):\n    return lambda f: f\n"


def _lint(tmp_path: Path, decorator: str) -> list[tuple[int, str]]:
    write(tmp_path, {"capture.py": CAPTURE, "train.py": TRAIN.replace("DECORATOR", decorator)})
    return findings(tmp_path / "train.py")


def test_the_result_handed_to_a_training_decorator(tmp_path: Path):
    assert _lint(tmp_path, "@StaticCaptureTraining(model=model, optim=optimizer)") == []


@pytest.mark.parametrize("decorator", ["", "@functools.lru_cache(maxsize=None)"])
def test_a_result_that_reaches_the_caller_unchanged(tmp_path: Path, decorator: str):
    # the forward in `unroll`, collected and returned up to `main`'s `.item()`
    assert _lint(tmp_path, decorator) == [(13, "GL012")]


STEP = """
import torch
from torch import nn
from capture import StaticCaptureTraining

model = nn.Linear(4, 4)
optimizer = torch.optim.Adam(model.parameters())


DECORATOR
def train_step_forward(my_model, invar, outvar):
    loss = 0
    for t in range(3):
        outpred = my_model(invar)
        invar = outpred
        loss = loss + ((outpred - outvar) ** 2).mean()
    return loss


def main(loader):
    for x, y in loader:
        loss = train_step_forward(model, x, y)
        print(loss.detach())
"""


def test_a_model_handed_to_a_decorated_step(tmp_path: Path):
    decorated = STEP.replace("DECORATOR", "@StaticCaptureTraining(model=model, optim=optimizer)")
    write(tmp_path, {"capture.py": CAPTURE, "step.py": decorated})
    assert findings(tmp_path / "step.py") == []
    write(tmp_path, {"step.py": STEP.replace("DECORATOR", "")})
    assert findings(tmp_path / "step.py") == [(13, "GL012")]
