"""A module's method named `backward` or named as torch names an in-place method is no
tensor's: a reversible network's or a normalizing flow's `net.backward(y)` is its
inverse pass and `flow.sample_(n)` runs its layers, so their results, read only as
numbers, still built a graph for nothing (GL012), also when the method reaches the
layers through another method of the class."""

from __future__ import annotations

from pathlib import Path

from test_project import findings, write

REVERSIBLE = """
import torch
import torch.nn as nn


class RevNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))

    def forward(self, x):
        a, b = x.chunk(2, -1)
        return torch.cat([a, b + self.f(a)], -1)

    def _inverse(self, y):
        a, b = y.chunk(2, -1)
        return torch.cat([a, b - self.f(a)], -1)

    def backward(self, y):
        return self._inverse(y)

    def reconstruct_(self, x):
        return self._inverse(self.forward(x))


net = RevNet()
opt = torch.optim.Adam(net.parameters())
for epoch in range(5):
    x = torch.randn(32, 4)
    loss = (net(x) - x.flip(-1)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    inv = net.backward(torch.randn(32, 4))
    print(epoch, inv.abs().max().item())
    err = (net.reconstruct_(x) - x).abs().max().item()
    print(err)
"""


def test_an_inverse_pass_named_backward_and_an_in_place_named_method(tmp_path: Path):
    write(tmp_path, {"flow.py": REVERSIBLE})
    assert findings(tmp_path / "flow.py") == [(33, "GL012"), (35, "GL012")]
