"""A training step kept in a method (`agent.update(batch)`, `self.learner.fit_batch()`),
in this file or in another, that backpropagates a loss and hands the loss tensor back:
the caller's loop trains through it, and a history of what it returns
(`losses.append(loss)`, `total += loss`) keeps every step's graph, as it would if the
backward were written in the loop (GL006). What comes back as `.item()`, detached, or in
a tuple place that holds no backpropagated value, keeps nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_project import findings, write

AGENT = """
import torch
from torch import nn


class Agent:
    def __init__(self):
        self.q = nn.Linear(4, 2)
        self.opt = torch.optim.Adam(self.q.parameters())

    def update(self, s, target):
        loss = ((self.q(s) - target) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return RETURNED
"""

TRAIN = """
from agent import Agent


def train(batches):
    agent = Agent()
    losses = []
    for s, t in batches:
        loss = agent.update(s, t)
        losses.append(loss)
    return sum(losses) / len(losses)
"""

TRAINER = """
from agent import Agent


class Trainer:
    def __init__(self):
        self.agent = Agent()

    def run(self, batches):
        total = 0
        for s, t in batches:
            total += self.agent.update(s, t)
        print(total)
"""


def _lint(tmp_path: Path, returned: str, train: str, name: str = "train.py"):
    write(tmp_path, {"agent.py": AGENT.replace("RETURNED", returned), name: train})
    return findings(tmp_path / name)


def test_a_loss_returned_by_another_files_step_and_kept_in_a_list(tmp_path: Path):
    assert _lint(tmp_path, "loss", TRAIN) == [(9, "GL006")]


def test_a_loss_returned_by_a_step_held_in_an_attribute_and_summed(tmp_path: Path):
    assert _lint(tmp_path, "loss", TRAINER, "trainer.py") == [(11, "GL006")]


@pytest.mark.parametrize("returned", ["loss.item()", "loss.detach()", "float(loss)", "None"])
def test_a_step_that_returns_no_graph_keeps_nothing(tmp_path: Path, returned: str):
    assert _lint(tmp_path, returned, TRAIN) == []
    assert _lint(tmp_path, returned, TRAINER, "trainer.py") == []


def test_the_caller_taking_the_number_keeps_nothing(tmp_path: Path):
    train = TRAIN.replace("losses.append(loss)", "losses.append(loss.item())")
    assert _lint(tmp_path, "loss", train) == []


def test_only_the_tuple_place_that_holds_the_loss(tmp_path: Path):
    returned = "loss, (self.q(s) - target).abs().detach()"
    kept_loss = TRAIN.replace("loss = agent.update(s, t)", "loss, td = agent.update(s, t)")
    assert _lint(tmp_path, returned, kept_loss) == [(9, "GL006")]
    kept_td = kept_loss.replace("losses.append(loss)", "losses.append(td)")
    assert _lint(tmp_path, returned, kept_td) == []


def test_the_same_step_in_the_same_file(tmp_path: Path):
    one_file = AGENT.replace("RETURNED", "loss") + TRAIN.replace("from agent import Agent\n", "")
    write(tmp_path, {"one.py": one_file})
    assert [code for _line, code in findings(tmp_path / "one.py")] == ["GL006"]
    number = AGENT.replace("RETURNED", "loss.item()") + TRAIN.replace(
        "from agent import Agent\n", ""
    )
    write(tmp_path, {"one.py": number})
    assert findings(tmp_path / "one.py") == []


UPDATE = """
def update(optimizer, loss):
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""

RECURRENT = """
import torch
from torch import nn
from utils import update

rnn = nn.GRUCell(4, 8)
head = nn.Linear(8, 1)
opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)


def train(stream):
    h = torch.zeros(1, 8)
    for x, y in stream:
        h = rnn(x, h)
        loss = ((head(h) - y) ** 2).mean()
        update(opt, loss)
"""


def test_state_carried_through_a_loop_whose_backward_is_another_files_helper(tmp_path: Path):
    write(tmp_path, {"utils.py": UPDATE, "train.py": RECURRENT})
    assert findings(tmp_path / "train.py") == [(13, "GL001")]
    detached = RECURRENT.replace("h = rnn(x, h)", "h = rnn(x, h.detach())")
    write(tmp_path, {"train.py": detached})
    assert findings(tmp_path / "train.py") == []
    # a helper that only steps differentiates nothing the loop carries
    write(
        tmp_path, {"utils.py": UPDATE.replace("    loss.backward()\n", ""), "train.py": RECURRENT}
    )
    assert findings(tmp_path / "train.py") == []


EPOCH = """
def train_epoch(model, optimizer, loader):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        total += loss.detach().item()
    return total, optimizer
"""

MAIN = """
import torch
from torch import nn
from train_utils import train_epoch


def main(loader):
    model = nn.Linear(4, 1)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(10):
        loss, optimizer = train_epoch(model, optimizer, loader)
        print(loss)
"""


def test_an_optimizer_handed_back_by_an_epoch_is_not_a_graph(tmp_path: Path):
    # `optimizer.step()` differentiates nothing that the epoch hands back
    write(tmp_path, {"train_utils.py": EPOCH, "main.py": MAIN})
    assert findings(tmp_path / "main.py") == []


AVERAGER = """
import torch


class Averager:
    def __init__(self):
        self.n = 0
        self.sum = 0

    def add(self, v):
        BODY
"""

STEPS = """
import torch
from torch import nn
from utils import Averager

net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def step(x, y):
    cost = ((net(x) - y) ** 2).mean()
    opt.zero_grad()
    cost.backward()
    opt.step()
    return cost


def train(batches):
    loss_avg = Averager()
    for x, y in batches:
        cost = step(x, y)
        loss_avg.add(cost)
"""


def _averaged(tmp_path: Path, body: str) -> list[tuple[int, str]]:
    write(tmp_path, {"utils.py": AVERAGER.replace("BODY", body), "train.py": STEPS})
    return findings(tmp_path / "train.py")


def test_a_tracker_whose_add_keeps_the_loss(tmp_path: Path):
    assert _averaged(tmp_path, "self.sum += v") == [(21, "GL006")]


def test_a_tracker_whose_add_keeps_a_number_made_of_it(tmp_path: Path):
    # `add` is the tracker's own method, not a set's: what it keeps is what it says
    body = "if isinstance(v, torch.Tensor):\n            v = v.data.sum()\n        self.sum += v"
    assert _averaged(tmp_path, body) == []
    assert _averaged(tmp_path, "self.sum += v.item()") == []
