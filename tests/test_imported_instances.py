"""A model another project file builds once at its top level (`model = Net()` in a
training script, `net = nn.Sequential(...)`) and an evaluation file imports by name
(`from models import model`): the instance holds weights as the class it is built
from does. Found by the plumbing probe (bench/plumbing/probe.py, provenance P23): with
no eval() in sight, such a model's wasted evaluation forward was missed however its
output was used."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_project import findings, write

MAIN = """
import torch
IMPORT


def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        correct += model(x).argmax(1).eq(y).sum().item()
    return correct


if __name__ == "__main__":
    loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]
    print(evaluate(NAME, loader))
"""

FORWARD_LINE = 8  # `correct += model(x)...` in MAIN

NET = """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)
"""


def _project(tmp_path: Path, models: str, import_line: str, name: str) -> Path:
    main = MAIN.replace("IMPORT", import_line).replace("NAME", name)
    write(tmp_path, {"setup.py": "", "models.py": models, "main.py": main})
    return tmp_path / "main.py"


@pytest.mark.parametrize(
    "built",
    [
        "model = Net()",
        "model = Net().to('cpu')",
        "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))",
        "if True:\n    model = Net()",
    ],
)
def test_an_imported_top_level_model_holds_weights(tmp_path: Path, built):
    path = _project(tmp_path, NET + "\n\n" + built + "\n", "from models import model", "model")
    assert findings(path) == [(FORWARD_LINE, "GL012")]


def test_an_imported_model_under_another_name(tmp_path: Path):
    path = _project(tmp_path, NET + "\n\nmodel = Net()\n", "from models import model as m", "m")
    assert findings(path) == [(FORWARD_LINE, "GL012")]


@pytest.mark.parametrize(
    "built",
    [
        # bound twice: which one is imported is not one construction's
        "model = Net()\nmodel = None",
        # a parameterless layer
        "model = nn.ReLU()",
        # a function, not an instance
        "def model(x):\n    return x",
        # what a loader returns is out of sight
        "model = load()",
        # frozen where it is built: its forward records nothing of its own
        "model = Net()\nmodel.requires_grad_(False)",
        "model = Net()\nfor p in model.parameters():\n    p.requires_grad = False",
    ],
)
def test_an_imported_name_that_may_be_something_else_says_nothing(tmp_path: Path, built):
    models = NET + "\n\ndef load():\n    return None\n\n\n" + built + "\n"
    path = _project(tmp_path, models, "from models import model", "model")
    assert findings(path) == []
