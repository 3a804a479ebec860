"""A trainer module: an nn.Module whose `forward` computes the loss and steps the
optimizer only under `if self.training:`, run in eval mode for validation (DALLE2's
`DecoderTrainer`). In eval mode its forward builds a graph nothing uses (GL004), in this
file or imported from another; its instance call hands back what `forward` returns,
so a `loss.item()` it returns carries no graph into an accumulator (no GL015)."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from test_project import findings, write

from gradlint.analysis.index import FileIndex

TRAINER = """
import torch
import torch.nn.functional as F
from torch import nn


class Trainer(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.opt = torch.optim.Adam(net.parameters())

    def forward(self, x, y):
        loss = F.mse_loss(self.net(x), y)
        if self.training:
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        return loss.item()
"""

LOOPS = """
def main(train_loader, val_loader):
    trainer = Trainer(nn.Linear(3, 1))
    for epoch in range(10):
        trainer.train()
        for x, y in train_loader:
            trainer(x, y)
        trainer.eval()
        total = 0.0
        for x, y in val_loader:
            loss = CALL
            total += loss
        print(total)
"""


@pytest.mark.parametrize("call", ["trainer(x, y)", "trainer.forward(x, y)"])
def test_a_trainer_module_in_eval_mode_records_for_nothing(tmp_path: Path, call: str):
    write(tmp_path, {"train.py": TRAINER + LOOPS.replace("CALL", call)})
    assert findings(tmp_path / "train.py") == [(29, "GL004")]


@pytest.mark.parametrize("call", ["trainer(x, y)", "trainer.forward(x, y)"])
def test_a_trainer_module_of_another_file(tmp_path: Path, call: str):
    main = "from torch import nn\n\nfrom trainer import Trainer\n\n" + LOOPS.replace("CALL", call)
    write(tmp_path, {"setup.py": "", "trainer.py": TRAINER, "train.py": main})
    assert findings(tmp_path / "train.py") == [(15, "GL004")]


def test_a_forward_that_always_steps_uses_its_graph(tmp_path: Path):
    """Without the `if self.training:` the forward trains in eval mode too (a frozen
    batch norm, say): its graph is used, and nothing is reported."""
    trainer = TRAINER.replace("        if self.training:\n", "        if True:\n")
    write(tmp_path, {"train.py": trainer + LOOPS.replace("CALL", "trainer(x, y)")})
    assert findings(tmp_path / "train.py") == []


def _branches(source: str) -> dict[str, tuple[bool, bool]]:
    """name of each `mark_<name>()` call -> (runs only in training, only in eval)."""
    index = FileIndex(cst.parse_module(source))
    found = {}
    for call in index.calls:
        name = getattr(call.func, "value", "")
        if isinstance(name, str) and name.startswith("mark_"):
            found[name[5:]] = (
                index.runs_only_in_mode(call, training=True),
                index.runs_only_in_mode(call, training=False),
            )
    return found


def test_the_branches_a_module_takes_in_one_mode():
    source = """
class M:
    def forward(self, x):
        mark_both()
        if self.training:
            mark_train()
        else:
            mark_eval()
        if self.training and x is not None:
            mark_train_and()
        else:
            mark_else_of_and()
        if not self.training:
            mark_not()
        else:
            mark_else_of_not()
        if not self.training:
            return mark_eval_return()
        mark_after_eval_return()

    def step(self):
        if self.training:
            return None
        mark_after_train_return()
"""
    assert _branches(source) == {
        "both": (False, False),
        "train": (True, False),
        "eval": (False, True),
        "train_and": (True, False),
        "else_of_and": (False, False),
        "not": (False, True),
        "else_of_not": (True, False),
        "eval_return": (False, True),
        "after_eval_return": (True, False),
        "after_train_return": (False, True),
    }


def test_a_class_defined_twice_is_not_taken_for_the_first(tmp_path: Path):
    """A notebook's later cell defines `Net` again, with layers: the instance built from
    it is not known to hand back the first definition's history-free output, so its
    loss is not said to lack a graph (GL009, an error, would be false)."""
    source = """
import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        return torch.eye(x.size()[0], 3)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 3)

    def forward(self, x):
        return self.fc(x)


net = Net()
opt = torch.optim.Adam(net.parameters())
loss = F.mse_loss(net(torch.zeros(2, 10)), torch.zeros(2, 3))
loss.backward()
opt.step()
"""
    write(tmp_path, {"net.py": source})
    assert findings(tmp_path / "net.py") == []
