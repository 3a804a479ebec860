"""A model reached through attributes of what a function is handed (`evaluate(agent,
loader)` running `agent.policy.net(x)`): the attribute path of the object each caller
in this file passes (`agent = Agent()`, whose policy keeps a `Net()`), as an element by
a constant key is. Found by the plumbing probe (bench/plumbing/probe.py): with no
`eval()` in sight the wasted forward was missed."""

from __future__ import annotations

import textwrap

from gradlint.config import Config
from gradlint.engine import lint_source

SOURCE = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


class Policy:
    def __init__(self):
        self.net = NET


class Agent:
    def __init__(self):
        self.policy = Policy()


def evaluate(agent, loader):
    correct = 0
    for x, y in loader:
        correct += agent.policy.net(x).argmax(1).eq(y).sum().item()
    return correct


agent = Agent()
loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]
print(evaluate(agent, loader))
"""


def _lint(net: str) -> list[tuple[str, int]]:
    source = textwrap.dedent(SOURCE).replace("NET", net)
    return [(d.code, d.start.line) for d in lint_source(source, "t.py", Config(preview=True))]


def test_a_model_two_attributes_into_what_the_callers_pass():
    assert _lint("Net()") == [("GL012", 28)]


def test_a_function_two_attributes_in_says_nothing():
    assert _lint("lambda x: x @ torch.ones(4, 3)") == []
