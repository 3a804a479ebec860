"""A sum re-created by the loop right around a counted one (`loss_d_sum = 0.0`, then `for
_ in range(n_critic):`) holds that count of graphs at most: a within-step sum, not a
history (GL006 says nothing). Re-created by a loop further out, with another loop
between that does not re-create it (a list made per epoch, filled in every train step
of every episode), it holds the steps of all those iterations: a history, reported."""

from __future__ import annotations

from pathlib import Path

from test_project import preview_findings

NESTED = """
import torch

w = torch.zeros(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for epoch in range(10):
    epoch_losses = []
    for episode in range(100):
        for step in range(50):
            loss = ((w - 1.0) ** 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            epoch_losses.append(loss)
    print(epoch, sum(epoch_losses))
"""

KEPT_LINE = 13  # epoch_losses.append(loss)


def _findings(tmp_path: Path, source: str) -> list[tuple[int, str]]:
    path = tmp_path / "train.py"
    path.write_text(source.lstrip(), encoding="utf-8")
    return preview_findings(path)


def test_a_loop_between_the_reset_and_the_counted_loop_keeps_a_history(tmp_path: Path):
    assert _findings(tmp_path, NESTED) == [(KEPT_LINE, "GL006")]


def test_reset_by_the_loop_right_around_it_holds_a_count(tmp_path: Path):
    moved = NESTED.replace("    epoch_losses = []\n    for episode", "    for episode").replace(
        "    for episode in range(100):\n",
        "    for episode in range(100):\n        epoch_losses = []\n",
    )
    assert "        epoch_losses = []\n        for step" in moved
    assert _findings(tmp_path, moved) == []
