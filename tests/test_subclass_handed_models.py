"""A base class's method that runs the model a subclass of another file hands it
(`class Agent(BaseAgent): def __init__(self): super().__init__(QNet())`, and `BaseAgent.
evaluate` in base.py calling `self.model(x)`): the model is what every such subclass
hands up, the template-method shape of RL agents and meta-learners. Found by the
plumbing probe (bench/plumbing/probe.py): with no `eval()` inside the method, the
wasted forward was missed however its output was used."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_project import findings, write

NET = """
import torch.nn as nn


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)
"""

BASE = """
import torch


class BaseAgent:
    def __init__(self, model):
        self.model = model

    def evaluate(self, loader):
        correct = 0
        for x, y in loader:
            correct += self.model(x).argmax(1).eq(y).sum().item()
        return correct
"""

FORWARD_LINE = 11  # `correct += self.model(x)...` in BASE

AGENT = """
import torch
from base import BaseAgent
from models import QNet


class Agent(BaseAgent):
    def __init__(self):
        super().__init__(HANDED)


loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]
print(Agent().evaluate(loader))
"""


def _project(tmp_path: Path, handed: str = "QNet()", **extra: str) -> None:
    files = {"setup.py": "", "models.py": NET, "base.py": BASE}
    files["agent.py"] = AGENT.replace("HANDED", handed)
    files.update(extra)
    write(tmp_path, files)


def test_the_model_a_subclass_of_another_file_hands_up_holds_weights(tmp_path: Path):
    _project(tmp_path)
    assert findings(tmp_path / "base.py") == [(FORWARD_LINE, "GL012")]


def test_a_model_built_first_then_handed_up(tmp_path: Path):
    agent = AGENT.replace(
        "        super().__init__(HANDED)",
        "        net = QNet()\n        torch.optim.Adam(net.parameters())\n"
        "        super(Agent, self).__init__(net)",
    )
    _project(tmp_path, **{"agent.py": agent})
    assert findings(tmp_path / "base.py") == [(FORWARD_LINE, "GL012")]


@pytest.mark.parametrize(
    "handed",
    [
        "lambda x: x @ torch.ones(4, 3)",  # a function: no weights to record a graph for
        "None",
    ],
)
def test_a_subclass_that_hands_up_something_else_says_nothing(tmp_path: Path, handed: str):
    _project(tmp_path, handed)
    assert findings(tmp_path / "base.py") == []


def test_every_subclass_must_hand_up_a_model(tmp_path: Path):
    other = "from base import BaseAgent\n\n\nclass Scripted(BaseAgent):\n    def __init__(self):\n"
    other += "        super().__init__(lambda x: x)\n"
    _project(tmp_path, **{"scripted.py": other})
    assert findings(tmp_path / "base.py") == []


def test_a_subclass_without_its_own_init_says_nothing(tmp_path: Path):
    agent = "from base import BaseAgent\n\n\nclass Agent(BaseAgent):\n    pass\n"
    _project(tmp_path, **{"agent.py": agent})
    assert findings(tmp_path / "base.py") == []


def test_the_method_under_no_grad_says_nothing(tmp_path: Path):
    base = BASE.replace("    def evaluate", "    @torch.no_grad()\n    def evaluate")
    _project(tmp_path, **{"base.py": base})
    assert findings(tmp_path / "base.py") == []


def test_the_search_for_subclasses_is_a_dependency(tmp_path: Path):
    """A cached result of base.py is stale once a subclass's file changes what it hands
    up, and a file that starts to derive from the class is a change too."""
    from gradlint.analysis import project
    from gradlint.config import Config
    from gradlint.engine import lint_source

    _project(tmp_path)
    path = tmp_path / "base.py"
    dependencies: dict[str, str] = {}
    lint_source(path.read_text(encoding="utf-8"), str(path), Config(), dependencies=dependencies)
    assert any(key.startswith(project.SUBCLASSES_PREFIX) for key in dependencies)
    assert project.dependencies_unchanged(dependencies)
    assert project.affected_by(dependencies, str(tmp_path / "agent.py"))
    assert not project.affected_by(dependencies, str(tmp_path.parent / "elsewhere.py"))
    write(tmp_path, {"agent.py": AGENT.replace("HANDED", "None")})
    assert not project.dependencies_unchanged(dependencies)
