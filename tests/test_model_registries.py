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
