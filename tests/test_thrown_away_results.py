"""Forwards whose results are thrown away in tests and scripts (issue "Generalise",
section 2; the census's development misses in AntixK's VAE tests and torch_geometric's
convolution tests): a result unpacked into a method of its model (`*result`), a method
result bound and never read, a method that reaches the layers through another method
of its class, and a class whose weights are bare `Parameter`s."""

from __future__ import annotations

from pathlib import Path

from test_project import write

from gradlint.engine import lint_file

NETS = {
    ".git/HEAD": "",
    "nets/__init__.py": "from .dreamer import Dreamer\nfrom .bilinear import Bilinear\n",
    "nets/dreamer.py": """
        import torch
        from torch import nn


        class Dreamer(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Linear(4, 8)

            def forward(self, x):
                out = self.head(x)
                return out, x

            def objective(self, out, x, weight=1.0):
                return {"total": weight * (out.sum() - x.sum())}

            def render(self, z):
                return self.head(z)

            def dream(self, count):
                z = torch.randn(count, 4)
                return self.render(z).tanh()

            def noise(self, count):
                return self.jitter(torch.randn(count, 4))

            def jitter(self, z):
                return z + 1
    """,
    "nets/bilinear.py": """
        import torch
        from torch.nn import Module, Parameter


        class Bilinear(Module):
            def __init__(self, n, m):
                super().__init__()
                self.weight = Parameter(torch.empty(n, m))

            def forward(self, x):
                return x @ self.weight


        class Plain(Module):
            def __init__(self, n, m):
                super().__init__()
                self.weight = torch.empty(n, m)

            def forward(self, x):
                return x @ self.weight
    """,
}


def findings(root: Path, name: str, text: str) -> list[tuple[str, int, str]]:
    write(root, {**NETS, name: text})
    result = lint_file(root / name)
    assert result.error is None, result.error
    return [(d.code, d.start.line, d.message) for d in result.diagnostics]


def lines(found: list[tuple[str, int, str]]) -> list[tuple[str, int]]:
    return [(code, line) for code, line, _ in found]


OBJECTIVE = """
import torch
from nets.dreamer import Dreamer


def check_objective():
    net = Dreamer()
    outputs = net(torch.randn(2, 4))
    total = net.objective(*outputs, weight=0.5)
    USE
"""


def test_a_result_unpacked_into_a_method_of_its_model_and_only_printed(tmp_path):
    found = findings(tmp_path, "checks/objective.py", OBJECTIVE.replace("USE", "print(total)"))
    assert lines(found) == [("GL012", 7)]


def test_a_result_unpacked_into_a_method_of_its_model_then_differentiated(tmp_path):
    for use in (
        'total["total"].backward()',
        "torch.autograd.grad(total['total'], net.head.weight)",
    ):
        assert findings(tmp_path, "checks/objective.py", OBJECTIVE.replace("USE", use)) == [], use


def test_a_result_unpacked_into_something_other_than_its_model(tmp_path):
    # a function of unknown effect, or another object's method: it may keep the graph
    for call in ("keep(*outputs)", "other.objective(*outputs)"):
        text = OBJECTIVE.replace("net.objective(*outputs, weight=0.5)", call)
        text = text.replace("USE", "print(total)")
        text = "from store import keep, other\n" + text
        assert findings(tmp_path, "checks/objective.py", text) == [], call


SAMPLING = """
import torch
from nets.dreamer import Dreamer

model = Dreamer()
print("sampling from", type(model).__name__)  # the file's tokens: GL012 runs on it


def test_dream():
    model.train()
    images = model.CALL
"""


def test_a_method_result_never_read_through_a_method_of_its_class(tmp_path):
    # `dream` reaches the layers through `self.render(z)`, as IWAE's `sample` does
    # through `self.decode(z)`; the images are bound and never read
    found = findings(tmp_path, "checks/sampling.py", SAMPLING.replace("CALL", "dream(16)"))
    assert lines(found) == [("GL012", 10)]
    assert "never used" in found[0][2]


def test_a_method_result_never_read_that_runs_no_layer(tmp_path):
    # `noise` calls a method of its class that runs no layer: no forward
    assert findings(tmp_path, "checks/sampling.py", SAMPLING.replace("CALL", "noise(16)")) == []


def test_a_result_never_read_in_a_function_that_differentiates(tmp_path):
    # a hook or an attribute may carry the graph to the backward
    text = SAMPLING.replace("CALL", "dream(16)") + "    model.head.weight.sum().backward()\n"
    assert findings(tmp_path, "checks/sampling.py", text) == []


def test_a_result_read_later_is_not_thrown_away(tmp_path):
    text = SAMPLING.replace("CALL", "dream(16)") + "    return images\n"
    assert findings(tmp_path, "checks/sampling.py", text) == []


CONV = """
import torch
from nets.bilinear import LAYER


def test_layer():
    layer = LAYER(3, 2)
    out = layer(torch.randn(4, 3))
    assert out.size() == (4, 2)
    assert layer(torch.randn(4, 3)).tolist() != out.tolist()
"""


def test_a_class_whose_weights_are_bare_parameters_has_parameters(tmp_path):
    found = findings(tmp_path, "checks/conv.py", CONV.replace("LAYER", "Bilinear"))
    assert lines(found) == [("GL012", 7), ("GL012", 9)]


def test_a_class_that_stores_plain_tensors_has_no_parameters(tmp_path):
    assert findings(tmp_path, "checks/conv.py", CONV.replace("LAYER", "Plain")) == []
