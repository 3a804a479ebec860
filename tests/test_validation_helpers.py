"""Shapes of a plain validation helper seen in fresh development repositories (a
career-path seq2seq's `valid(classifier, valid, criterion)`): the model handed on as
`classifier.cuda()`, the criterion a parameter every caller fills with a torch loss,
each batch's loss kept in a list made for it and read back only as numbers, and a
parameter elsewhere named like the helper (`def label_data(train, valid)`) that is not
a reference to it."""

from __future__ import annotations

import textwrap

import pytest

from gradlint.config import Config
from gradlint.engine import lint_source

SOURCE = """
import torch
from torch import nn


def train(classifier, loader, criterion, optim):
    for x, y in loader:
        loss = criterion(classifier(x), y)
        optim.zero_grad()
        loss.backward()
        optim.step()


def valid(classifier, loader, criterion):
    loss_list = []
    for x, y in loader:
        pred = classifier(x)
        loss = criterion(pred, y)
        loss_list.append(loss)
    return READ


def one_epoch(classifier, criterion, optim, train_set, valid_set):
    train(classifier, train_set, criterion, optim)
    return valid(classifier, valid_set, criterion)


def label_data(train, valid):
    return [t for t in train] + [v for v in valid]


def main(train_set, valid_set):
    classifier = nn.Linear(4, 2)
    optim = torch.optim.Adam(classifier.parameters())
    criterion = torch.nn.CrossEntropyLoss()
    for epoch in range(3):
        print(one_epoch(classifier.cuda(), criterion, optim, train_set, valid_set))
"""


def _found(read: str) -> list[tuple[str, int]]:
    source = textwrap.dedent(SOURCE.replace("READ", read))
    return [(d.code, d.start.line) for d in lint_source(source, "v.py", Config(preview=True))]


@pytest.mark.parametrize(
    "read",
    [
        "torch.mean(torch.FloatTensor(loss_list)).item()",
        "sum(loss.item() for loss in loss_list) / len(loss_list)",
        "torch.stack(loss_list).mean().item()",
    ],
)
def test_a_validation_forward_whose_losses_are_kept_and_read_as_numbers(read: str):
    # the forward records for nothing (GL012), and the list keeps each batch's graph
    # alive until it is read (GL015): the criterion is a torch loss, every caller
    # handing on main's `torch.nn.CrossEntropyLoss()`
    assert _found(read) == [("GL012", 17), ("GL015", 19)]


def test_kept_losses_that_are_backpropagated_afterwards():
    # a list of losses summed and backpropagated (a micro-batch step) uses every graph
    step = "total = torch.stack(loss_list).sum()\n    total.backward()\n    return total.item()"
    source = textwrap.dedent(SOURCE.replace("return READ", step))
    found = [(d.code, d.start.line) for d in lint_source(source, "v.py", Config(preview=True))]
    assert found == []


def test_a_criterion_that_is_not_a_loss_module_is_out_of_sight():
    # `criterion` filled with a plain function of the caller's: what it keeps is unknown
    source = SOURCE.replace("criterion = torch.nn.CrossEntropyLoss()", "criterion = make_loss()")
    source = textwrap.dedent(source.replace("READ", "torch.FloatTensor(loss_list).mean().item()"))
    found = [(d.code, d.start.line) for d in lint_source(source, "v.py", Config(preview=True))]
    assert found == []
