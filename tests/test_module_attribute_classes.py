"""A class reached as an attribute of a module imported whole (`import normflows as
nf`, then `nfm = nf.NormalizingFlow(...)`) is looked up in the project as a class
imported by name is: `nfm.sample(n)` runs the flow's layers with autograd recording
(the eighth census batch's VincentStimper/normalizing-flows example notebooks, whose
plotted samples are only read as numbers)."""

from __future__ import annotations

from pathlib import Path

from test_project import findings, write

FLOWS = """
import torch
import torch.nn as nn


class NormalizingFlow(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.layer = nn.Linear(dim, dim)
        self.dim = dim

    def sample(self, num_samples=1):
        z = torch.randn(num_samples, self.dim)
        return self.layer(z)

    def draw_noise(self, num_samples=1):
        return torch.randn(num_samples, self.dim)


class ConditionalFlow(NormalizingFlow):
    def sample(self, num_samples=1, context=None):
        z = torch.randn(num_samples, self.dim)
        return self.layer(z)
"""

EXAMPLE = """
import numpy as np
import IMPORT


def plot(n):
    model = MAKER(2)
    z = model.METHOD(n)
    return np.asarray(z.detach().cpu().numpy())
"""


def _example(tmp_path: Path, import_line: str, maker: str, method: str) -> list[tuple[int, str]]:
    (tmp_path / ".git").mkdir(parents=True)
    source = EXAMPLE.replace("IMPORT", import_line).replace("MAKER", maker)
    write(
        tmp_path,
        {
            "flows/__init__.py": FLOWS,
            "example.py": source.replace("METHOD", method),
        },
    )
    return findings(tmp_path / "example.py")


def test_a_method_of_a_class_reached_through_its_module_runs_its_layers(tmp_path: Path):
    assert _example(tmp_path / "a", "flows as nf", "nf.NormalizingFlow", "sample") == [(7, "GL012")]
    assert _example(tmp_path / "b", "flows", "flows.NormalizingFlow", "sample") == [(7, "GL012")]


def test_a_method_that_runs_no_layer_is_no_forward(tmp_path: Path):
    assert _example(tmp_path, "flows as nf", "nf.NormalizingFlow", "draw_noise") == []


def test_a_subclass_holds_the_layers_its_base_builds(tmp_path: Path):
    # `class ConditionalNormalizingFlow(NormalizingFlow)` with no `__init__` of its own:
    # its base's builds the weights (normalizing-flows' core_test.py)
    assert _example(tmp_path, "flows as nf", "nf.ConditionalFlow", "sample") == [(7, "GL012")]
