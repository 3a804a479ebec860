"""A model built by picking a class from a registry (`MODELS = {"mlp": MLP, "cnn":
CNN}`, then `model = MODELS[args.arch]()`): it holds weights when every class the
registry lists does. Found by the plumbing probe (bench/plumbing/probe.py): with no
eval() in sight the wasted evaluation forward was missed."""

from __future__ import annotations

import textwrap

import pytest

from gradlint.config import Config
from gradlint.engine import lint_source

SOURCE = """
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


REGISTRY


def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        correct += model(x).argmax(1).eq(y).sum().item()
    return correct


model = BUILD
loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]
print(evaluate(model, loader))
"""


def _lint(registry: str, build: str) -> list[tuple[str, int]]:
    source = textwrap.dedent(SOURCE).replace("REGISTRY", registry).replace("BUILD", build)
    return [(d.code, d.start.line) for d in lint_source(source, "t.py", Config(preview=True))]


@pytest.mark.parametrize(
    ("registry", "build"),
    [
        ('MODELS = {"mlp": MLP, "linear": nn.Linear}', 'MODELS["mlp"]()'),
        ("MODELS = [MLP]", "MODELS[0]()"),
    ],
)
def test_a_class_picked_from_a_registry_of_models(registry: str, build: str):
    assert _lint(registry, build) == [("GL012", 21)]


@pytest.mark.parametrize(
    "registry",
    [
        'MODELS = {"mlp": MLP, "identity": nn.Identity}',  # one builds no weights
        'MODELS = {"mlp": MLP, "fn": make}',  # one cannot be told
        'MODELS = {"mlp": MLP, **OTHERS}',  # more than the literal shows
    ],
)
def test_a_registry_that_may_build_something_else_says_nothing(registry: str):
    assert _lint(registry, 'MODELS["mlp"]()') == []


ACTIVATIONS = """
import torch
import torch.nn as nn


class ActivationFunction(nn.Module):
    def __init__(self):
        super().__init__()
        self.config = {"name": self.__class__.__name__}


class Sigmoid(ActivationFunction):
    def forward(self, x):
        return 1 / (1 + torch.exp(-x))


class Swish(ActivationFunction):
    def forward(self, x):
        return x * torch.sigmoid(x)


act_fn_by_name = {"sigmoid": Sigmoid, "swish": Swish}
x = torch.linspace(-5, 5, 100)
for name in act_fn_by_name:
    act_fn = BUILD
    print(act_fn(x).numpy())
"""


@pytest.mark.parametrize("build", ["act_fn_by_name[name]()", "Sigmoid()"])
def test_subclasses_of_a_parameterless_module_hold_no_weights(build: str):
    """A false GL012 error on a course notebook's activation functions (phlippe's
    uvadlc tutorial 3, a registry of `ActivationFunction` subclasses): a subclass of a
    module class that holds no layers, adding none, records nothing on plain inputs."""
    source = textwrap.dedent(ACTIVATIONS).replace("BUILD", build)
    assert [(d.code, d.start.line) for d in lint_source(source, "t.py", Config(preview=True))] == []


ZOO = """
import torch
import torchvision.models as models
from torchvision import models as tv


def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        correct += model(x).argmax(1).eq(y).sum().item()
    return correct


model = BUILD
loader = [(torch.randn(8, 3, 32, 32), torch.randint(0, 3, (8,)))]
print(evaluate(model, loader))
"""


@pytest.mark.parametrize(
    ("build", "found"),
    [
        # the ImageNet example's spelling, and getattr on the zoo: every model there
        # has weights
        ("models.__dict__[arch](pretrained=True)", [("GL012", 10)]),
        ("getattr(tv, arch)()", [("GL012", 10)]),
        ("getattr(models.detection, arch)()", [("GL012", 10)]),
        # not the zoo
        ("getattr(torch, arch)()", []),
        ("vars(models)[arch]()", []),
        ("globals()[arch]()", []),
    ],
)
def test_a_model_picked_from_a_model_zoo_by_name(build: str, found):
    source = textwrap.dedent(ZOO).replace("BUILD", build)
    source = source.replace("model = ", 'arch = "resnet18"\nmodel = ')
    diagnostics = lint_source(source, "t.py", Config(preview=True))
    assert [(d.code, d.start.line) for d in diagnostics] == found


MODELS_FILE = """
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


class Scale(nn.Module):
    def forward(self, x):
        return 2 * x


REGISTRY
"""

PICKING = """
import torch

from models import MODELS


def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        correct += model(x).argmax(1).eq(y).sum().item()
    return correct


model = MODELS["mlp"]()
loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]
print(evaluate(model, loader))
"""


@pytest.mark.parametrize(
    ("registry", "found"),
    [
        ('MODELS = {"mlp": MLP}', [(9, "GL012")]),
        ("MODELS = [MLP, MLP]", [(9, "GL012")]),
        ('MODELS = {"mlp": MLP, "scale": Scale}', []),  # one builds no weights
        ('MODELS = {"mlp": MLP, **OTHERS}', []),
        ('MODELS = {"mlp": MLP}\nMODELS["scale"] = Scale', []),  # no longer only those
        ('MODELS = {"mlp": MLP}\nMODELS = {}', []),
        # changed by a method or a registering function, or handed on: out of sight
        ('MODELS = {"mlp": MLP}\nMODELS.update({"scale": Scale})', []),
        ("MODELS = [MLP]\nMODELS.append(Scale)", []),
        (
            'MODELS = {"mlp": MLP}\n\n\ndef register(cls):\n    MODELS[cls.__name__] = cls',
            [],
        ),
        ('MODELS = {"mlp": MLP}\nALIAS = MODELS\nALIAS["scale"] = Scale', []),
    ],
)
def test_a_registry_of_another_file(tmp_path, registry: str, found):
    from test_project import findings, write

    write(
        tmp_path,
        {
            ".git/HEAD": "",
            "models.py": MODELS_FILE.replace("REGISTRY", registry),
            "evaluate.py": PICKING,
        },
    )
    assert findings(tmp_path / "evaluate.py") == found


def test_a_registry_of_another_file_changed_by_the_importer(tmp_path):
    from test_project import findings, write

    picking = PICKING.replace(
        'model = MODELS["mlp"]()', 'MODELS["mlp"] = Scale\nmodel = MODELS["mlp"]()'
    )
    write(
        tmp_path,
        {
            ".git/HEAD": "",
            "models.py": MODELS_FILE.replace("REGISTRY", 'MODELS = {"mlp": MLP}'),
            "evaluate.py": picking,
        },
    )
    assert findings(tmp_path / "evaluate.py") == []


def test_a_zoo_name_bound_to_something_else_is_no_zoo():
    source = textwrap.dedent(ZOO).replace(
        "model = BUILD",
        'models = types.SimpleNamespace(identity=torch.nn.Identity)\nmodel = getattr(models, "identity")()',
    )
    source = "import types\n" + source
    assert [d.code for d in lint_source(source, "t.py", Config(preview=True))] == []
