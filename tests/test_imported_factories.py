"""A model built by a factory function of another project file (`model =
build_model()` after `from models import build_model`): what every return of the
factory builds says whether the model holds weights, as a class imported by name does.
Found by the plumbing probe (a model's provenance crossed with where eval() is and how
the output ends as numbers): with no eval() in sight, such a model's wasted evaluation
forward was missed however its output was used."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_project import findings, write

NET = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)
"""

MAIN = """
import torch
import torch.nn.functional as F
IMPORT


def train(model, loader):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()


def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        correct += model(x).argmax(1).eq(y).sum().item()
    return correct


if __name__ == "__main__":
    loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]
    model = BUILD
    train(model, loader)
    print(evaluate(model, loader))
"""

FORWARD_LINE = 17  # `correct += model(x)...` in MAIN, after the import line


def _main(import_line: str, build: str) -> str:
    return MAIN.replace("IMPORT", import_line).replace("BUILD", build)


@pytest.mark.parametrize(
    ("factory", "build"),
    [
        ("def build_model():\n    return Net()\n", "build_model()"),
        # the instance moved and loaded before it is returned
        (
            "def load_model(path):\n    m = Net().to('cpu')\n    m.load_state_dict(torch.load(path))"
            "\n    return m\n",
            "load_model('w.pt')",
        ),
        # one of two classes, each with weights, picked by an argument
        (
            "class Wide(Net):\n    pass\n\n\ndef get_model(name):\n    if name == 'a':\n"
            "        return Net()\n    return Wide()\n",
            "get_model('a')",
        ),
    ],
)
def test_a_model_built_by_another_files_factory_holds_weights(tmp_path: Path, factory, build):
    name = build.partition("(")[0]
    write(
        tmp_path,
        {
            "setup.py": "",
            "models.py": NET + "\n\n" + factory,
            "main.py": _main(f"from models import {name}", build),
        },
    )
    assert findings(tmp_path / "main.py") == [(FORWARD_LINE, "GL012")]


def test_a_factory_re_exported_by_a_package(tmp_path: Path):
    write(
        tmp_path,
        {
            "setup.py": "",
            "models/__init__.py": "from .factory import build_model\n",
            "models/factory.py": "from .net import Net\n\n\ndef build_model():\n    return Net()\n",
            "models/net.py": NET,
            "main.py": _main("from models import build_model", "build_model()"),
        },
    )
    assert findings(tmp_path / "main.py") == [(FORWARD_LINE, "GL012")]


def test_a_factory_that_hands_on_another_factorys_model(tmp_path: Path):
    factory = "def make():\n    return Net()\n\n\ndef build_model():\n    return make()\n"
    write(
        tmp_path,
        {
            "setup.py": "",
            "models.py": NET + "\n\n" + factory,
            "main.py": _main("from models import build_model", "build_model()"),
        },
    )
    assert findings(tmp_path / "main.py") == [(FORWARD_LINE, "GL012")]


@pytest.mark.parametrize(
    "factory",
    [
        # a function, not a module with weights
        "def build_model():\n    return lambda x: x @ torch.ones(4, 3)\n",
        # a parameterless module on one path
        "def build_model(plain=False):\n    if plain:\n        return nn.Identity()\n"
        "    return Net()\n",
        # what it returns is rebound by a loop: not known
        "def build_model():\n    m = None\n    for m in [Net()]:\n        pass\n    return m\n",
    ],
)
def test_a_factory_that_may_return_something_else_says_nothing(tmp_path: Path, factory):
    write(
        tmp_path,
        {
            "setup.py": "",
            "models.py": NET + "\n\n" + factory,
            "main.py": _main("from models import build_model", "build_model()"),
        },
    )
    assert findings(tmp_path / "main.py") == []


def test_evaluation_under_no_grad_says_nothing(tmp_path: Path):
    main = _main("from models import build_model", "build_model()").replace(
        "    print(evaluate(model, loader))",
        "    with torch.no_grad():\n        print(evaluate(model, loader))",
    )
    write(
        tmp_path,
        {
            "setup.py": "",
            "models.py": NET + "\n\ndef build_model():\n    return Net()\n",
            "main.py": main,
        },
    )
    assert findings(tmp_path / "main.py") == []
