"""A helper of another project file that differentiates what it is handed (a PINN's
`gradients(u, x)` in utils, an `accelerator.backward(loss)` wrapper): a forward whose
output is handed to it has its graph used, as with a helper of the same file. An
evaluation of a PINN computes derivatives of the network's output with respect to its
inputs, so wrapping it in `torch.no_grad()` would break it: no GL004 or GL012 there."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_project import findings, preview_findings, write

from gradlint.analysis.project import summarise_source

UTILS = """
import torch


def gradients(y, x):
    return torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y), create_graph=True)


def to_numpy(t):
    return t.detach().cpu().numpy()
"""

PINN = """
import torch
import torch.nn as nn
from utils import gradients, to_numpy


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net_u = nn.Sequential(nn.Linear(2, 20), nn.Tanh(), nn.Linear(20, 1))

    def function(self, x, y):
        u = self.net_u(torch.hstack((x, y)))
        u_x = gradients(u, x)[0]
        return u, u_x


if __name__ == "__main__":
    model = Model()
    model.net_u = torch.load("m.pt")
    model.net_u.eval()
    xt = torch.rand(10, 1, requires_grad=True)
    yt = torch.rand(10, 1, requires_grad=True)
    u, u_x = model.function(xt, yt)
    print(to_numpy(u), to_numpy(u_x))
"""

# the same evaluation without the derivative: its forward's graph is thrown away
PLAIN = PINN.replace("        u_x = gradients(u, x)[0]\n", "        u_x = u * 2\n")

PREDICT = """
import torch
import torch.nn as nn
from utils import gradients, to_numpy


def predict(net, x):
    u = net(x)
    u_x = gradients(u, x)[0]
    return to_numpy(u), to_numpy(u_x)


net = nn.Sequential(nn.Linear(1, 20), nn.Tanh(), nn.Linear(20, 1))
net.load_state_dict(torch.load("m.pt"))
net.eval()
print(predict(net, torch.rand(10, 1, requires_grad=True)))
"""


@pytest.mark.parametrize("main", [PINN, PREDICT])
def test_a_derivative_taken_by_a_helper_of_another_file_uses_the_graph(tmp_path: Path, main: str):
    write(tmp_path, {"utils.py": UTILS, "main.py": main})
    assert preview_findings(tmp_path / "main.py") == []


def test_the_same_helper_in_the_same_file_uses_it_too(tmp_path: Path):
    here = PINN.replace("from utils import gradients, to_numpy\n", UTILS)
    write(tmp_path, {"main.py": here})
    assert preview_findings(tmp_path / "main.py") == []


def test_without_the_derivative_the_wasted_forward_is_reported(tmp_path: Path):
    write(tmp_path, {"utils.py": UTILS, "main.py": PLAIN})
    codes = {code for _line, code in preview_findings(tmp_path / "main.py")}
    assert codes & {"GL004", "GL012"}


def test_a_helper_elsewhere_that_only_makes_numbers_uses_nothing(tmp_path: Path):
    # `to_numpy(net(x))` alone: the helper's module differentiates elsewhere in its
    # text, but not what this call hands it
    main = PREDICT.replace("    u_x = gradients(u, x)[0]\n", "    u_x = u\n").replace(
        "torch.rand(10, 1, requires_grad=True)", "torch.rand(10, 1)"
    )
    write(tmp_path, {"utils.py": UTILS, "main.py": main})
    assert findings(tmp_path / "main.py") != []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (UTILS, {"gradients": ["y"], "to_numpy": []}),
        # `accelerator.backward(loss)`: the call does not tell which is the tensor
        (
            "def step(accelerator, loss):\n    accelerator.backward(loss)\n",
            {"step": ["accelerator", "loss"]},
        ),
        ("def step(loss):\n    loss.backward()\n", {"step": ["loss"]}),
        (
            "import torch\ndef jac(y, x):\n    return torch.autograd.grad(outputs=[y.sum()], inputs=x)\n",
            {"jac": ["y"]},
        ),
        # rebound before it is differentiated: no longer what the caller passed
        (
            "import torch\ndef g(y, x):\n    y = x * 2\n    return torch.autograd.grad(y, x)\n",
            {"g": []},
        ),
    ],
)
def test_the_summary_names_the_parameters_differentiated(source: str, expected: dict):
    functions = summarise_source(source, "utils.py").functions
    assert {name: functions[name].differentiated_params for name in expected} == expected
