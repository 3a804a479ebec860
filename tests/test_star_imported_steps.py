"""A training step kept in another project file and brought in by `from helpers import
*`: a function that backpropagates and returns its loss (`loss = train_step(...)`), or
a method of a star-imported class (`learner = Learner(model, opt)`, then
`learner.update(x, y)`). The loop that keeps what the step returns keeps its graph, as
it does when the step is imported by name. Found by the training-side plumbing probe
(bench/plumbing/training_probe.py): both were missed with the star import, found by
name."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_project import findings, write

HELPERS = """
import torch
import torch.nn.functional as F


def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


class Learner:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt

    def update(self, x, y):
        self.opt.zero_grad()
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        return loss
"""

MAIN = """
import torch
import torch.nn as nn
IMPORT


def train(model, loader, opt):
    SETUP
    losses = []
    for x, y in loader:
        STEP
        losses.append(KEPT)
    return losses


if __name__ == "__main__":
    model = nn.Linear(4, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    print(train(model, [(torch.randn(8, 4), torch.randint(0, 3, (8,)))], opt))
"""

APPEND_LINE = 11  # `losses.append(...)` in MAIN

STEPS = [
    ("pass", "loss = train_step(model, opt, x, y)"),
    ("learner = Learner(model, opt)", "loss = learner.update(x, y)"),
]


def _project(tmp_path: Path, import_line: str, setup: str, step: str, kept: str) -> Path:
    main = (
        MAIN.replace("IMPORT", import_line)
        .replace("SETUP", setup)
        .replace("STEP", step)
        .replace("KEPT", kept)
    )
    write(tmp_path, {"setup.py": "", "helpers.py": HELPERS, "main.py": main})
    return tmp_path / "main.py"


@pytest.mark.parametrize(("setup", "step"), STEPS)
@pytest.mark.parametrize(
    "import_line", ["from helpers import *", "from helpers import train_step, Learner"]
)
def test_a_kept_loss_of_a_step_of_another_file(tmp_path: Path, import_line, setup, step):
    path = _project(tmp_path, import_line, setup, step, "loss")
    assert findings(path) == [(APPEND_LINE, "GL006")]


@pytest.mark.parametrize(("setup", "step"), STEPS)
@pytest.mark.parametrize("kept", ["loss.item()", "loss.detach()"])
def test_a_step_of_a_star_import_kept_as_a_number_says_nothing(tmp_path: Path, setup, step, kept):
    path = _project(tmp_path, "from helpers import *", setup, step, kept)
    assert findings(path) == []


def test_a_name_the_file_binds_itself_hides_the_star_import(tmp_path: Path):
    # this file's own train_step returns a number: the star import's is never run
    own = "\n\ndef train_step(model, opt, x, y):\n    return 0.0\n"
    path = _project(
        tmp_path, "from helpers import *", "pass", "loss = train_step(model, opt, x, y)", "loss"
    )
    path.write_text(path.read_text(encoding="utf-8") + own, encoding="utf-8")
    assert findings(path) == []


def test_the_star_import_that_defines_the_class_is_the_one_asked(tmp_path: Path):
    # two star imports; the later one is summarised for another question (its helper
    # is called), but only the first defines the class
    utils = "import torch\n\n\ndef prep(x):\n    return torch.as_tensor(x).float()\n"
    main = MAIN.replace("IMPORT", "from helpers import *\nfrom utils import *").replace(
        "SETUP", "learner = Learner(model, opt)"
    )
    main = main.replace("STEP", "loss = learner.update(prep(x), y)").replace("KEPT", "loss")
    write(tmp_path, {"setup.py": "", "helpers.py": HELPERS, "utils.py": utils, "main.py": main})
    assert findings(tmp_path / "main.py") == [(APPEND_LINE + 1, "GL006")]
