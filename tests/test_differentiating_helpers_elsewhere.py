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
        # `accelerator.backward(loss)`: the argument is the loss
        ("def step(accelerator, loss):\n    accelerator.backward(loss)\n", {"step": ["loss"]}),
        ("def step(loss):\n    loss.backward()\n", {"step": ["loss"]}),
        # `y.backward(g)` hands a gradient, `acc.backward(loss)` a loss: both count
        ("def backprop(y, g):\n    y.backward(g)\n", {"backprop": ["y", "g"]}),
        ("def step(acc, loss):\n    acc.backward(loss)\n", {"step": ["acc", "loss"]}),
        (
            "import torch\ndef jac(y, x):\n    return torch.autograd.grad(outputs=[y.sum()], inputs=x)\n",
            {"jac": ["y"]},
        ),
        # through the names the body binds from it
        (
            "import torch\ndef g(y, x):\n    y = y.reshape(-1, 1)\n"
            "    return torch.autograd.grad(y, x, torch.ones_like(y))\n",
            {"g": ["y"]},
        ),
        (
            "import torch\ndef g(u, x):\n    s = u.sum()\n    return torch.autograd.grad(s, x)\n",
            {"g": ["u"]},
        ),
        # rebound before it is differentiated: no longer what the caller passed (what
        # is differentiated is computed from `x`)
        (
            "import torch\ndef g(y, x):\n    y = x * 2\n    return torch.autograd.grad(y, x)\n",
            {"g": ["x"]},
        ),
        # a training loop differentiates what its loader yields, not the model it calls
        (
            "def train(model, loader, opt):\n    for x, y in loader:\n"
            "        loss = (model(x) - y).pow(2).mean()\n        loss.backward()\n        opt.step()\n",
            {"train": ["loader"]},
        ),
        # elements of a list it is handed, and an apex-style scaled loss
        (
            "import torch\ndef grads(outputs, x):\n"
            "    return [torch.autograd.grad(o, x, create_graph=True)[0] for o in outputs]\n",
            {"grads": ["outputs"]},
        ),
        # read through a cut: what is differentiated holds none of its graph
        (
            "import torch.nn.functional as F\ndef distill(student, x, teacher_logits):\n"
            "    target = teacher_logits.detach().softmax(-1)\n"
            "    loss = F.kl_div(student(x).log_softmax(-1), target)\n    loss.backward()\n",
            {"distill": ["x"]},
        ),
        (
            "def scaled(out, ref):\n    s = ref.norm().item()\n    (out * s).sum().backward()\n",
            {"scaled": ["out"]},
        ),
        # `self.accelerator.backward(loss)`: the argument
        (
            "def step(self, loss):\n    self.accelerator.backward(loss)\n",
            {"step": ["loss"]},
        ),
    ],
)
def test_the_summary_names_the_parameters_differentiated(source: str, expected: dict):
    functions = summarise_source(source, "utils.py").functions
    assert {name: functions[name].differentiated_params for name in expected} == expected


RESHAPING = """
import torch


def gradients(y, x):
    y = y.reshape(-1, 1)
    return torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y), create_graph=True)[0]
"""

EVALUATE = """
import torch
import torch.nn as nn
from utils import gradients


def evaluate(model, x):
    u = model(x)
    u_x = gradients(u, x)
    return u_x.detach().numpy()


model = nn.Sequential(nn.Linear(1, 20), nn.Tanh(), nn.Linear(20, 1))
model.load_state_dict(torch.load("m.pt"))
model.eval()
print(evaluate(model, torch.rand(10, 1, requires_grad=True)))
"""


def test_a_helper_that_rebinds_what_it_differentiates_uses_it_too(tmp_path: Path):
    write(tmp_path, {"utils.py": RESHAPING, "main.py": EVALUATE})
    assert preview_findings(tmp_path / "main.py") == []


TRAIN = """
def train(model, loader, opt):
    for x, y in loader:
        opt.zero_grad()
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        opt.step()
"""

WARM_UP = """
import torch
import torch.nn as nn
from train import train


def main():
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 1))
    model.eval()
    print(model(torch.randn(2, 4)).shape)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model.train()
    train(model, [(torch.randn(2, 4), torch.randn(2, 1))], opt)


main()
"""


def test_a_training_step_elsewhere_does_not_use_a_forward_beside_it(tmp_path: Path):
    # `train` differentiates its own losses, not what main hands it: the warm-up
    # forward's graph is still thrown away
    write(tmp_path, {"train.py": TRAIN, "main.py": WARM_UP})
    assert (9, "GL004") in preview_findings(tmp_path / "main.py")


ATTACK = """
import torch


def attack(model, images, y, criterion):
    images = images.clone().requires_grad_(True)
    loss = criterion(model(images), y)
    model.zero_grad()
    loss.backward()
    return (images + 0.01 * images.grad.sign()).detach()
"""

PREDICT_THEN_ATTACK = """
import torch
import torch.nn as nn
from attacks import attack

model = nn.Sequential(nn.Linear(4, 3))
model.eval()
x = torch.randn(1, 4)
logits = model(x)
probability, category_id = torch.topk(torch.sigmoid(logits), 1)
print(probability)
adv = attack(model, x, category_id[0], nn.CrossEntropyLoss())
print(model(adv).argmax())
"""


def test_indices_handed_to_a_differentiating_helper_carry_no_graph(tmp_path: Path):
    # the attack differentiates a loss of its `y`, but topk's indices hold no history:
    # the first forward's graph is still thrown away
    write(tmp_path, {"attacks.py": ATTACK, "main.py": PREDICT_THEN_ATTACK})
    assert preview_findings(tmp_path / "main.py") == [(8, "GL004"), (12, "GL004")]


def test_a_loss_scaled_by_a_context_manager_is_differentiated():
    # apex's `with amp.scale_loss(loss, opt) as scaled: scaled.backward()`
    source = (
        "def step(loss, opt, amp):\n    with amp.scale_loss(loss, opt) as scaled:\n"
        "        scaled.backward()\n"
    )
    assert "loss" in summarise_source(source, "utils.py").functions["step"].differentiated_params


@pytest.mark.parametrize(
    "indices",
    [
        "probability, category_id = torch.topk(torch.sigmoid(logits), 1)",
        "probability, category_id = logits.max(1)",
        "probability, category_id = torch.max(logits, dim=1)",
        "probability, category_id = logits.sort(descending=True)",
    ],
)
def test_indices_unpacked_from_a_reduction_carry_no_graph(tmp_path: Path, indices: str):
    main = PREDICT_THEN_ATTACK.replace(
        "probability, category_id = torch.topk(torch.sigmoid(logits), 1)", indices
    )
    write(tmp_path, {"attacks.py": ATTACK, "main.py": main})
    assert (8, "GL004") in preview_findings(tmp_path / "main.py")


ELEMENTWISE = """
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
x, y = torch.randn(2, 4), torch.randn(2, 4)
h, c = torch.max(model(x), model(y))
c.sum().backward()
a, b = model(x).max(model(y))
b.sum().backward()
"""


def test_an_elementwise_max_unpacked_keeps_its_graph(tmp_path: Path):
    # `torch.max(a, b)` of two tensors is one tensor: its rows keep their graph
    write(tmp_path, {"main.py": ELEMENTWISE})
    assert [code for _line, code in preview_findings(tmp_path / "main.py")] == []
