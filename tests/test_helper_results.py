"""An evaluation helper's forward is judged inside the helper: what the helper returns,
an accuracy printed or logged at once (`print(evaluate(model, loader))`), says nothing
of the graph its forward builds, in this file or in another."""

from __future__ import annotations

import textwrap
from pathlib import Path

from test_project import findings, write

from gradlint.config import Config
from gradlint.engine import lint_file, lint_source

EVALUATE = """
def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        out = model(x)
        correct += (out.argmax(1) == y).sum().item()
    return correct
"""

TRAIN = """
import torch
import torch.nn as nn
IMPORT


def main(loader):
    model = nn.Sequential(nn.Linear(3, 2), nn.Dropout(0.1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        model.train()
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        print(evaluate(model, loader))
"""


def _one_file(train: str) -> list[tuple[str, str, str]]:
    source = textwrap.dedent(EVALUATE + train.replace("IMPORT", ""))
    lines = source.splitlines()
    return [
        (d.code, lines[d.start.line - 1].strip(), d.impact.value if d.impact else "")
        for d in lint_source(source, "train.py", Config(preview=True))
    ]


def test_a_printed_helper_result_still_wastes_the_helpers_graph():
    # the helper walks a loader: its forward runs per batch, whatever its call
    assert _one_file(TRAIN) == [("GL004", "print(evaluate(model, loader))", "per-batch")]


def test_the_helpers_result_bound_to_a_name_is_the_same_finding():
    bound = TRAIN.replace(
        "print(evaluate(model, loader))", "acc = evaluate(model, loader)\n        print(acc)"
    )
    assert _one_file(bound) == [("GL004", "acc = evaluate(model, loader)", "per-batch")]


def test_a_frozen_model_handed_to_the_helper_records_nothing():
    # EfficientDet's coco_eval: `model.requires_grad_(False)` before `eval()`
    frozen = TRAIN.replace(
        "        model.eval()\n", "        model.requires_grad_(False)\n        model.eval()\n"
    )
    assert "requires_grad_(False)" in frozen
    assert _one_file(frozen) == []


def test_the_helper_in_another_file(tmp_path: Path):
    write(
        tmp_path,
        {
            "setup.py": "",
            "utils.py": EVALUATE,
            "train.py": TRAIN.replace("IMPORT", "from utils import evaluate"),
        },
    )
    assert [code for _, code in findings(tmp_path / "train.py")] == ["GL004"]


def _impacts(path: Path) -> list[tuple[str, str]]:
    result = lint_file(path, Config(preview=True))
    assert result.error is None, result.error
    return [(d.code, d.impact.value if d.impact else "") for d in result.diagnostics]


def test_the_loop_of_a_helper_in_another_file_makes_it_per_batch(tmp_path: Path):
    # utils.py's summary says its forward sits in its loop over the loader, as the same
    # helper in train.py itself does (test_a_printed_helper_result_still_wastes_...)
    write(
        tmp_path,
        {
            "setup.py": "",
            "utils.py": EVALUATE,
            "train.py": TRAIN.replace("IMPORT", "from utils import evaluate"),
        },
    )
    assert _impacts(tmp_path / "train.py") == [("GL004", "per-batch")]


def test_a_helper_in_another_file_without_a_loop_costs_as_its_call(tmp_path: Path):
    once = "def evaluate(model, x):\n    return model(x).argmax(1).sum().item()\n"
    write(
        tmp_path,
        {
            "setup.py": "",
            "utils.py": once,
            "train.py": TRAIN.replace("IMPORT", "from utils import evaluate"),
        },
    )
    assert _impacts(tmp_path / "train.py") == [("GL004", "per-epoch")]


def test_a_frozen_submodule_leaves_the_model_recording():
    # a frozen backbone while the head still requires grad: still a graph
    with_backbone = (
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.backbone = nn.Linear(3, 3)\n"
        "        self.head = nn.Linear(3, 2)\n\n"
        "    def forward(self, x):\n"
        "        return self.head(self.backbone(x))\n\n\n"
    )
    partly = (
        TRAIN.replace("IMPORT", "IMPORT\n\n\n" + with_backbone)
        .replace("nn.Sequential(nn.Linear(3, 2), nn.Dropout(0.1))", "Net()")
        .replace(
            "        model.eval()\n",
            "        model.backbone.requires_grad_(False)\n        model.eval()\n",
        )
    )
    assert "model.backbone.requires_grad_(False)" in partly
    assert _one_file(partly) == [("GL004", "print(evaluate(model, loader))", "per-batch")]
    wholly = partly.replace("model.backbone.requires_grad_(False)", "model.requires_grad_(False)")
    assert _one_file(wholly) == []
