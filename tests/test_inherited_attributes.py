"""A model kept in `self` by a base class and shown to be a module with weights by a
subclass of the same file (issue "Generalise", roles inferred from use): the base class
builds `self.model` through a factory whose class is out of sight, and only the
subclass hands `self.model.parameters()` to its optimizer (the shape of
adik993/ppo-pytorch's `Agent` and `PPO`, which sit in two files there: see
bench/real-code/DEV-MISSES.md). The base class's acting method runs that model's
forward, and its result is only read as numbers."""

from __future__ import annotations

import textwrap

import pytest
from test_project import findings, write

AGENT = """
    import torch
    import torch.nn as nn


    class Agent:
        def __init__(self, model_factory, device):
            self.model = model_factory.create()
            self.device = device

        def act(self, state):
            logits = self.model.policy_logits(torch.tensor(state, device=self.device))
            return logits.argmax(-1).cpu().numpy()
"""

PPO = """
    from torch.optim import Adam

    from agent import Agent


    class PPO(Agent):
        def __init__(self, model_factory, device):
            super().__init__(model_factory, device)
            self.optimizer = Adam(self.model.parameters(), 1e-3)
"""

# the same subclass of another class: it says nothing of Agent's `self.model`
OTHER = PPO.replace("from agent import Agent", "from base import Base").replace(
    "PPO(Agent)", "PPO(Base)"
)


def test_a_subclass_of_another_class_shows_nothing(tmp_path):
    source = AGENT + OTHER.replace("from base import Base", "class Base:\n        pass")
    write(tmp_path, {"agent.py": source})
    assert findings(tmp_path / "agent.py") == []


def test_a_subclass_in_the_same_file_shows_the_base_classes_model(tmp_path):
    source = AGENT + PPO.replace("from agent import Agent", "")
    write(tmp_path, {"agent.py": source})
    assert findings(tmp_path / "agent.py") == [(11, "GL012")]


# A template method: the base class keeps or builds the model, a subclass's evaluation
# runs it and reads its result only as a number (cnguyen10/few_shot_meta_learning's
# MLBaseClass and its algorithms have this layout).
NET = """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x):
            return self.fc(x)
"""

EVALUATION = """

    class Algo(Base):
        def evaluation(self, x, y):
            logits = self.model(x)
            return (logits.argmax(1) == y).float().mean().item()
"""


@pytest.mark.parametrize(
    ("built", "found"),
    [
        ("Net()", [(21, "GL012")]),
        ("nn.Dropout(0.1)", []),  # a module without weights records nothing
    ],
)
def test_a_model_the_base_class_of_the_same_file_builds(tmp_path, built, found):
    base = f"""

    class Base:
        def __init__(self):
            self.model = {built}
"""
    write(tmp_path, {"algo.py": NET + base + EVALUATION})
    assert findings(tmp_path / "algo.py") == found


REPLACING = """

    class Algo(Base):
        def __init__(self):
            super().__init__()
            self.model = torch.sigmoid

        def evaluation(self, x, y):
            logits = self.model(x)
            return (logits.argmax(1) == y).float().mean().item()
"""


def test_a_subclass_that_replaces_the_base_classes_model_runs_its_own(tmp_path):
    # the subclass's own assignment decides for its methods, in the same file or where
    # the base is another file's
    base = "\n\n    class Base:\n        def __init__(self):\n            self.model = Net()\n"
    write(tmp_path, {"algo.py": NET + base + REPLACING})
    assert findings(tmp_path / "algo.py") == []
    write(
        tmp_path / "p",
        {
            ".git/HEAD": "",
            "base.py": BASE_FILE.replace("MODEL", "Net()"),
            "algo.py": "import torch\nfrom base import Base\n"
            + textwrap.dedent(REPLACING).replace("super().__init__()", "super().__init__(0.1)"),
        },
    )
    assert findings(tmp_path / "p" / "algo.py") == []


BASE_FILE = (
    NET
    + """

    class Base:
        def __init__(self, lr):
            self.model = MODEL
"""
)


@pytest.mark.parametrize(
    ("built", "found"),
    [
        ("Net()", [(6, "GL012")]),
        ("Net().to('cpu')", [(6, "GL012")]),
        ("nn.Dropout(0.1)", []),
        ("make_model()", []),  # what it builds is out of sight
    ],
)
def test_a_model_the_base_class_of_another_file_builds(tmp_path, built, found):
    write(
        tmp_path,
        {
            ".git/HEAD": "",
            "base.py": BASE_FILE.replace("MODEL", built),
            "algo.py": "from base import Base\n" + textwrap.dedent(EVALUATION),
        },
    )
    assert findings(tmp_path / "algo.py") == found


KEEPING_BASE = """
    class Base:
        def __init__(self, model, lr):
            self.model = model
            self.lr = lr
"""


@pytest.mark.parametrize(
    ("tail", "found"),
    [
        # no `__init__` of its own: the constructions hand the base its model
        ("\nalgo = Algo(Net(), 0.1)\n", [(6, "GL012")]),
        ("\nalgo = Algo(model=Net(), lr=0.1)\n", [(6, "GL012")]),
        ("\nalgo = Algo(None, 0.1)\n", []),
        ("", []),  # built nowhere in sight
        # its own `__init__` builds the model at the call that hands it up
        (
            "\n    def __init__(self):\n        super().__init__(Net(), 0.1)\n",
            [(6, "GL012")],
        ),
        (
            "\n    def __init__(self):\n        super().__init__(nn.Identity(), 0.1)\n",
            [],
        ),
    ],
)
def test_a_model_handed_to_the_base_class_of_another_file(tmp_path, tail, found):
    algo = "from torch import nn\nfrom base import Base\nfrom models import Net\n"
    algo += textwrap.dedent(EVALUATION) + tail
    write(
        tmp_path,
        {".git/HEAD": "", "models.py": NET, "base.py": KEEPING_BASE, "algo.py": algo},
    )
    assert findings(tmp_path / "algo.py") == [(line + 2, code) for line, code in found]
