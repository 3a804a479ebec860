"""Unit tests of a flow's layers, the ninth census batch's normalizing_flows test.py: a
layer imported from the project, its forward run with autograd recording, and its
result only compared in an `assert` (a message formatted with `.format`). Three GL012
misses there, each for a reason of its own: the holder class defined above the class
whose weights it holds, a `'...'.format(d)` read as an escape, and a file whose only
reads are comparisons kept out by GL012's token gate."""

from __future__ import annotations

from pathlib import Path

from test_project import findings, write

LAYERS = """
import torch
import torch.nn as nn


class Split(nn.Module):
    def __init__(self, n_channels):
        super().__init__()
        self.gaussianize = Gaussianize(n_channels // 2)

    def forward(self, x):
        x1, x2 = x.chunk(2, dim=1)
        z2, logdet = self.gaussianize(x1, x2)
        return x1, z2, logdet


class Gaussianize(nn.Module):
    def __init__(self, n_channels):
        super().__init__()
        self.net = nn.Conv2d(n_channels, 2 * n_channels, kernel_size=3, padding=1)

    def forward(self, x1, x2):
        h = self.net(x1)
        return x2 - h, -h.sum()


class Shuffle(nn.Module):
    def forward(self, x):
        return x.flip(1), torch.zeros(())
"""

TEST = """
import torch
import unittest
from layers import LAYER


class TestLayers(unittest.TestCase):
    def test_split(self):
        net = LAYER(10)
        x = torch.randn(4, 10, 8, 8)
        x1, z2, logd = net(x)
        d_logd = logd.norm()
        assert d_logd < 1e-4, 'norm of difference = {}'.format(d_logd)
"""


def _test_file(tmp_path: Path, layer: str) -> list[tuple[int, str]]:
    (tmp_path / ".git").mkdir(parents=True)
    write(tmp_path, {"layers.py": LAYERS, "test_layers.py": TEST.replace("LAYER", layer)})
    return findings(tmp_path / "test_layers.py")


def test_a_holder_defined_above_the_class_with_weights_holds_them(tmp_path: Path):
    assert _test_file(tmp_path, "Split") == [(10, "GL012")]


def test_a_layer_with_no_weights_records_nothing(tmp_path: Path):
    # `Shuffle` builds no weights and holds no class that does
    assert _test_file(tmp_path, "Shuffle") == []


def test_only_a_comparison_and_a_formatted_message_read_it(tmp_path: Path):
    # the file's only reads: `<` in an assert, `.format` of its message (no print, no
    # `.item()`): the rule runs on it and follows the value into both
    one_read = TEST.replace("LAYER", "Split").replace(
        ", 'norm of difference = {}'.format(d_logd)", ""
    )
    (tmp_path / ".git").mkdir(parents=True)
    write(tmp_path, {"layers.py": LAYERS, "test_layers.py": one_read})
    assert findings(tmp_path / "test_layers.py") == [(10, "GL012")]


def test_a_formatted_value_that_is_also_backpropagated_is_used(tmp_path: Path):
    used = TEST.replace("LAYER", "Split").replace(
        "        assert d_logd", "        d_logd.backward()\n        assert d_logd"
    )
    (tmp_path / ".git").mkdir(parents=True)
    write(tmp_path, {"layers.py": LAYERS, "test_layers.py": used})
    assert findings(tmp_path / "test_layers.py") == []
