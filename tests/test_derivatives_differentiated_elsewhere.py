"""A first derivative taken without `create_graph=True` in a helper of one project file
(a WGAN-GP `gradient_penalty`, a PINN's `gradient(y, x)`) whose result another file
differentiates again (adds the penalty to a loss it backpropagates, or takes the
helper's gradient of it once more): the second derivative is lost there, and the
finding is on the helper's `grad`, with the call that differentiates it beside it."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_project import findings, write

from gradlint.engine import lint_file

PENALTY = """
import torch


def gradient_penalty(D, real, fake):
    alpha = torch.rand(real.size(0), 1)
    x = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = D(x)
    grads = torch.autograd.grad(out.sum(), x)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


def gradient(y, x):
    return torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y))[0]
"""

GRAD_LINE = 8  # `grads = torch.autograd.grad(...)` in PENALTY
GRADIENT_LINE = 13  # `return torch.autograd.grad(...)` in PENALTY

WGAN = """
import torch
import torch.nn as nn
from penalty import gradient_penalty

D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.Adam(D.parameters())
for real, fake in [(torch.randn(8, 4), torch.randn(8, 4))]:
    USE
"""

PINN = """
import torch
import torch.nn as nn
from penalty import gradient

u_net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(u_net.parameters())
for step in range(3):
    x = torch.rand(32, 1, requires_grad=True)
    u = u_net(x)
    u_x = gradient(u, x)
    u_xx = gradient(u_x, x)
    loss = (u_xx + u).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def _lint(tmp_path: Path, files: dict[str, str]) -> list[tuple[int, str]]:
    write(tmp_path, {"setup.py": "", "penalty.py": PENALTY, **files})
    return findings(tmp_path / "penalty.py")


@pytest.mark.parametrize(
    "use",
    [
        "loss = D(fake).mean() - D(real).mean() + 10 * gradient_penalty(D, real, fake)\n"
        "    opt.zero_grad()\n    loss.backward()\n    opt.step()",
        "gp = gradient_penalty(D, real, fake)\n    loss = D(fake).mean() + 10 * gp\n"
        "    loss.backward()",
        "(10 * gradient_penalty(D, real, fake)).backward()",
    ],
)
def test_a_penalty_backpropagated_in_another_file(tmp_path: Path, use: str):
    assert _lint(tmp_path, {"train.py": WGAN.replace("USE", use)}) == [(GRAD_LINE, "GL005")]


def test_the_finding_names_the_call_that_differentiates_it(tmp_path: Path):
    use = "loss = 10 * gradient_penalty(D, real, fake)\n    loss.backward()"
    write(tmp_path, {"setup.py": "", "penalty.py": PENALTY, "train.py": WGAN.replace("USE", use)})
    [finding] = lint_file(tmp_path / "penalty.py").diagnostics
    [related] = finding.related
    assert Path(related.path).name == "train.py"
    assert related.start.line == 8


def test_a_second_derivative_through_the_helper_in_another_file(tmp_path: Path):
    assert _lint(tmp_path, {"main.py": PINN}) == [(GRADIENT_LINE, "GL005")]


@pytest.mark.parametrize(
    "use",
    [
        # logged, never differentiated
        "print(gradient_penalty(D, real, fake).item())",
        # computed, then cut before the loss
        "gp = gradient_penalty(D, real, fake).detach()\n    loss = D(fake).mean()\n"
        "    loss.backward()",
        # a loss backpropagated that the penalty does not reach
        "gp = gradient_penalty(D, real, fake)\n    loss = D(fake).mean()\n    loss.backward()",
        # read as a number into the loss (an adaptive weight)
        "loss = D(fake).mean()\n    loss = loss / gradient_penalty(D, real, fake).item()\n"
        "    loss.backward()",
        "gp = gradient_penalty(D, real, fake)\n    loss = D(fake).mean() / gp.item()\n"
        "    loss.backward()",
        # the name is rebound before the backward
        "loss = gradient_penalty(D, real, fake)\n    print(loss.item())\n"
        "    loss = D(fake).mean()\n    loss.backward()",
        # detached by the caller first
        "gp = gradient_penalty(D, real, fake)\n    gp = gp.detach()\n"
        "    loss = D(fake).mean() + gp\n    loss.backward()",
    ],
)
def test_a_penalty_that_no_backward_reaches_says_nothing(tmp_path: Path, use: str):
    assert _lint(tmp_path, {"train.py": WGAN.replace("USE", use)}) == []


def test_a_helper_with_create_graph_says_nothing(tmp_path: Path):
    fixed = PENALTY.replace("x)[0]\n    return ((", "x, create_graph=True)[0]\n    return ((")
    write(tmp_path, {"setup.py": "", "penalty.py": fixed})
    use = "loss = 10 * gradient_penalty(D, real, fake)\n    loss.backward()"
    write(tmp_path, {"train.py": WGAN.replace("USE", use)})
    assert findings(tmp_path / "penalty.py") == []
