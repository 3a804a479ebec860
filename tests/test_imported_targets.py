"""GL013 (in preview): a TD target computed by a helper of another project file (`target =
td_target(target_net, r, s2, done)` after `from rl_utils import td_target`): the
network it is handed runs its forward with autograd recording, and the target comes
back with that graph, as it does from a helper of the same file. Found by the
training-side plumbing probe (bench/plumbing/training_probe.py, family T)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_project import preview_findings, write

HELPERS = """
import torch


def td_target(q, r, s2, done, gamma=0.99):
    next_q = q(s2).max(1)[0]
    return r + gamma * next_q * (1 - done)
"""

MAIN = """
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from rl_utils import td_target

q_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
target_net = copy.deepcopy(q_net)
opt = torch.optim.Adam(q_net.parameters())
for s, a, r, s2, d in [(torch.randn(8, 4), torch.zeros(8, dtype=torch.long), torch.randn(8), torch.randn(8, 4), torch.zeros(8))]:
    TARGET
    q_sa = q_net(s).gather(1, a.unsqueeze(1)).squeeze(1)
    loss = F.mse_loss(q_sa, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

TARGET_LINE = 12  # the TARGET line in MAIN


def _lint(tmp_path: Path, target: str, helpers: str = HELPERS) -> list[tuple[int, str]]:
    main = MAIN.replace("TARGET", target)
    write(tmp_path, {"setup.py": "", "rl_utils.py": helpers, "main.py": main})
    return preview_findings(tmp_path / "main.py")


@pytest.mark.parametrize("network", ["q_net", "target_net"])
def test_a_target_from_a_helper_of_another_file(tmp_path: Path, network: str):
    found = _lint(tmp_path, f"target = td_target({network}, r, s2, d)")
    assert found == [(TARGET_LINE, "GL013")]


@pytest.mark.parametrize(
    "target",
    [
        "with torch.no_grad():\n        target = td_target(target_net, r, s2, d)",
        "target = td_target(target_net, r, s2, d).detach()",
    ],
)
def test_a_target_cut_by_the_caller_is_no_bootstrap_pitfall(tmp_path: Path, target: str):
    # a detached target's forward still records a graph for nothing (GL012's finding)
    assert [code for _, code in _lint(tmp_path, target) if code == "GL013"] == []


@pytest.mark.parametrize(
    "helpers",
    [
        # the helper cuts it itself
        HELPERS.replace("max(1)[0]", "max(1)[0].detach()"),
        # the helper runs under no_grad
        HELPERS.replace("def td_target", "@torch.no_grad()\ndef td_target"),
        # the forward alone, nothing bootstrapped: a second view, not a target
        "def td_target(q, r, s2, done):\n    return q(s2).max(1)[0]\n",
        # an addition inside the forward's own arguments bootstraps nothing
        "def td_target(q, r, s2, done):\n    return q(s2 - r.mean()).max(1)[0]\n",
        # detached by a later statement of the helper
        "def td_target(q, r, s2, done):\n    t = r + 0.99 * q(s2).max(1)[0]\n"
        "    t = t.detach()\n    return t\n",
    ],
)
def test_a_helper_that_hands_back_no_bootstrapped_forward_says_nothing(tmp_path, helpers):
    found = _lint(tmp_path, "target = td_target(q_net, r, s2, d)", "import torch\n\n\n" + helpers)
    assert [code for _, code in found if code == "GL013"] == []


def test_the_network_that_only_picks_the_action_is_no_target(tmp_path: Path):
    # double DQN: the online network's argmax picks the action, the frozen target
    # network values it; the indices hold no graph of the online network
    helpers = (
        "def td_target(q, target_q, r, s2, done):\n"
        "    a2 = q(s2).argmax(1, keepdim=True)\n"
        "    return r + 0.99 * target_q(s2).gather(1, a2).squeeze(1) * (1 - done)\n"
    )
    target = "target_net.requires_grad_(False)\n    target = td_target(q_net, target_net, r, s2, d)"
    found = _lint(tmp_path, target, helpers)
    assert [code for _, code in found if code == "GL013"] == []
