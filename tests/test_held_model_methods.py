"""A method of a model handed to an object, whose class is in another file of the
project: the project's definitions say whether it is a forward (issue "Generalise",
thirteenth census batch: disentangling-vae's Visualizer, dilated RNN's reshaping
helper)."""

from __future__ import annotations

from test_project import findings, write

DRNN = """
    import torch
    from torch import nn


    class DRNN(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.cell = nn.GRU(n, n)

        def _prepare_inputs(self, x, rate):
            return torch.cat([x[j::rate] for j in range(rate)], 1)

        def embed(self, x):
            return self.cell(x)[0]
"""

TEST = """
    import torch
    from drnn import DRNN


    def check(model):
        x = torch.randn(24, 3, 10).to("cpu")
        next(model.parameters())
        split = model.METHOD(x, 2)
        print(split.size())
"""


def test_a_project_method_that_only_reshapes_is_no_forward(tmp_path):
    write(tmp_path, {"drnn.py": DRNN, "test.py": TEST.replace("METHOD", "_prepare_inputs")})
    assert findings(tmp_path / "test.py") == []


def test_a_project_method_that_runs_the_layers_is_a_forward(tmp_path):
    write(tmp_path, {"drnn.py": DRNN, "test.py": TEST.replace("METHOD", "embed")})
    assert findings(tmp_path / "test.py") == [(8, "GL012")]


def test_an_attribute_no_class_defines_is_a_submodule(tmp_path):
    write(tmp_path, {"drnn.py": DRNN, "test.py": TEST.replace("METHOD", "cell")})
    assert findings(tmp_path / "test.py") == [(8, "GL012")]
