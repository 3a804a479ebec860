"""einops' functions (`rearrange`, `reduce`, `repeat`, `einsum`, `pack`) call torch
underneath: what they return is computed from the tensors handed to them, with their
graph, as a torch function's is (torch_api.GRAPH_PRESERVING_LIBRARY_FUNCTIONS). A value
is followed through them (GL012), the value analysis gives their result its inputs'
history (GL006), and a helper of another file built of them carries its parameters."""

from __future__ import annotations

from pathlib import Path

from test_project import findings, write

from gradlint.analysis import project

EVALUATION = """
import torch
from einops import rearrange
from torch import nn

model = nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(2, 3)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
out = model(torch.randn(5, 3))
y = rearrange(out, "b c -> c b")
print(y.sum().item())
"""

HISTORY = """
import einops
import torch
from torch import nn

model = nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
total = 0
for _ in range(3):
    loss = einops.reduce(model(torch.randn(2, 3)) ** 2, "b c -> ", "mean")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total += loss
print(total)
"""


def test_a_forward_read_as_numbers_through_rearrange(tmp_path: Path):
    write(tmp_path, {"evaluate.py": EVALUATION})
    assert findings(tmp_path / "evaluate.py") == [(12, "GL012")]


def test_a_rearranged_forward_backpropagated(tmp_path: Path):
    used = EVALUATION.replace("print(y.sum().item())", "y.sum().backward()")
    write(tmp_path, {"evaluate.py": used})
    assert findings(tmp_path / "evaluate.py") == []


def test_a_loss_reduced_by_einops_kept_across_iterations(tmp_path: Path):
    write(tmp_path, {"train.py": HISTORY})
    assert findings(tmp_path / "train.py") == [(13, "GL006")]
    write(tmp_path, {"train.py": HISTORY.replace("total += loss", "total += loss.item()")})
    assert findings(tmp_path / "train.py") == []


def test_a_helper_built_of_einops_carries_its_parameter():
    source = """
from einops import rearrange


def to_channels_last(x):
    return rearrange(x, "b c h w -> b h w c")
"""
    summary = project.summarise_source(source, "utils.py")
    assert summary.functions["to_channels_last"].carried_params == ["x"]
