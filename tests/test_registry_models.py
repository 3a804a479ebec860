"""A model built by a registry (`model = models.load(ckpt)`) has a class out of sight.
When it is called the way a `forward` of the project that differentiates takes its
arguments, that forward may run: fmu2/PyTorch-MAML's evaluation puts the MAML model in
eval mode and calls `model(x_shot, x_query, y_shot, inner_args, meta_train=False)`, whose
forward adapts with `autograd.grad` (the eighth census batch's GL004 false positives,
whose `no_grad` fix would raise)."""

from __future__ import annotations

from pathlib import Path

from test_project import findings, write

MAML = """
import torch
import torch.nn as nn
from torch import autograd


class MAML(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def _adapt(self, x, y, params):
        loss = nn.functional.cross_entropy(self.fc(x), y)
        grads = autograd.grad(loss, params, create_graph=False)
        return [p - 0.1 * g for p, g in zip(params, grads)]

    def forward(self, x_shot, x_query, y_shot, inner_args, meta_train):
        params = self._adapt(x_shot, y_shot, list(self.parameters()))
        return nn.functional.linear(x_query, params[0], params[1])


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, params=None):
        return self.fc(x)
"""

EVALUATE = """
import torch
import models


def main(ckpt, loader, inner_args):
    model = models.load(ckpt)
    model.eval()
    accs = []
    for x_shot, x_query, y_shot, y_query in loader:
        logits = CALL
        accs.append((logits.argmax(1) == y_query).float().mean().item())
    return accs
"""


def _evaluate(tmp_path: Path, call: str) -> list[tuple[int, str]]:
    (tmp_path / ".git").mkdir(parents=True)
    write(
        tmp_path,
        {
            "models/__init__.py": "from .maml import MAML, Plain\n\ndef load(ckpt):\n    return ckpt\n",
            "models/maml.py": MAML,
            "test.py": EVALUATE.replace("CALL", call),
        },
    )
    return findings(tmp_path / "test.py")


def test_a_call_that_fits_only_a_differentiating_forward_uses_its_graph(tmp_path: Path):
    call = "model(x_shot, x_query, y_shot, inner_args, meta_train=False)"
    assert _evaluate(tmp_path, call) == []


def test_a_bare_forward_of_a_model_out_of_sight_is_still_an_evaluation(tmp_path: Path):
    # `model(x)` fits the plain forward as well: nothing says the MAML one runs
    assert _evaluate(tmp_path / "bare", "model(x_query)") == [(10, "GL004")]
    # a keyword only the plain forward names
    assert _evaluate(tmp_path / "kw", "model(x_query, params=None)") == [(10, "GL004")]
