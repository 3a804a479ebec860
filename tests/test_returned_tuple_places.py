"""A forward's result returned as one place of a tuple (`return action_t, action_np`)
is followed into the method's callers, to the name that place is unpacked into: kept
for nothing when that name is never read, differentiated or kept when it is."""

from __future__ import annotations

from pathlib import Path

from test_project import findings, write

AGENT = """
import torch
from torch import nn


class Agent:
    def __init__(self):
        self.actor = nn.Linear(4, 2)
        self.opt = torch.optim.Adam(self.actor.parameters())

    def _sample_action(self, state):
        action_t = self.actor(state)
        action_t = action_t + 0.1 * torch.randn(action_t.shape)
        action_np = action_t.detach().numpy()
        return action_t, action_np

    def step(self, env, state):
        action_t, action = self._sample_action(state)
        USE
        return env.step(action)
"""


def _lint(tmp_path: Path, use: str) -> list[tuple[int, str]]:
    write(tmp_path, {"agent.py": AGENT.replace("USE", use)})
    return findings(tmp_path / "agent.py")


def test_the_place_unpacked_into_a_name_never_read(tmp_path: Path):
    assert _lint(tmp_path, "pass") == [(11, "GL012")]


def test_the_place_differentiated_by_the_caller(tmp_path: Path):
    use = "self.opt.zero_grad(); action_t.sum().backward(); self.opt.step()"
    assert _lint(tmp_path, use) == []


def test_the_place_kept_by_the_caller(tmp_path: Path):
    assert _lint(tmp_path, "self.kept = action_t") == []


def test_a_call_in_another_file_leaves_it_unknown(tmp_path: Path):
    other = "from agent import Agent\n\ndef run(agent, s):\n    a, b = agent._sample_action(s)\n    return a\n"
    write(tmp_path, {"agent.py": AGENT.replace("USE", "pass"), "run.py": other})
    assert findings(tmp_path / "agent.py") == []
