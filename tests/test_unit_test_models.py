"""Unit tests run models too: a smoke test's forward whose output is only checked for
its shape records a graph for nothing (GL012, a hint). The fresh samples of real code
(bench/real-code/fresh) showed how the model in a test is known to hold weights when
no `nn.Linear` is in sight:

- its class extends a torch.nn layer or container rather than `nn.Module` (`class
  CModel(nn.Sequential)` handing the container the layers its configuration names,
  `class MaskedConv2d(nn.Conv2d)`), in the file or imported from the project;
- its class is the test file's own subclass of a project class (`class
  CModel(OriginalCModel)`);
- pytest hands it in: the test's parameter is filled by the file's fixture of that name;
- a namesake local of another test, frozen there, is another object.

And the traps: a loss or an activation extended is no model with weights, a fixture
that freezes its model hands one that records nothing, and a test that backpropagates
uses its graph."""

from __future__ import annotations

import textwrap
from pathlib import Path

from gradlint.config import Config
from gradlint.engine import lint_file, lint_source

HEADER = """
import pytest
import torch
import torch.nn as nn

INP = torch.randn(1, 3, 8, 8)
"""


def findings(source: str, path: str = "test_model.py") -> list[tuple[str, str]]:
    source = textwrap.dedent(HEADER) + textwrap.dedent(source)
    lines = source.splitlines()
    return [
        (d.code, lines[d.start.line - 1].strip())
        for d in lint_source(source, path, Config(select=["GL012"]))
    ]


def test_a_subclass_of_a_torch_container_holds_the_layers_it_hands_it():
    source = """
    class CModel(nn.Sequential):
        def __init__(self, names):
            layers = [getattr(nn, name)(3, 3, 1) for name in names]
            super().__init__(*layers)


    def test_config():
        model = CModel(["Conv2d"])
        assert model(INP).shape == (1, 3, 8, 8)
    """
    assert findings(source) == [("GL012", "assert model(INP).shape == (1, 3, 8, 8)")]


def test_a_subclass_of_a_weighted_torch_layer_keeps_its_weight():
    source = """
    class MaskedConv2d(nn.Conv2d):
        def forward(self, x):
            return super().forward(x)


    if __name__ == "__main__":
        m = MaskedConv2d(3, 8, 3, padding=1)
        y = m(INP)
        print(y.shape)
    """
    assert findings(source, "conv.py") == [("GL012", "y = m(INP)")]


def test_a_subclass_of_a_loss_or_an_activation_holds_no_weights():
    source = """
    class FocalLoss(nn.CrossEntropyLoss):
        pass


    class Swish(nn.SiLU):
        pass


    def test_loss():
        x = torch.randn(4, 3)
        assert FocalLoss()(x, torch.tensor([0, 1, 2, 0])).item() > 0
        assert Swish()(x).shape == (4, 3)
    """
    assert findings(source) == []


def test_a_namesake_local_frozen_in_another_test_is_another_model():
    source = """
    def test_plain():
        m = nn.Conv2d(3, 8, 1)
        assert m(INP).shape == (1, 8, 8, 8)


    def test_frozen():
        m = nn.Conv2d(3, 8, 1)
        m = m.eval().requires_grad_(False)
        assert m(INP).shape == (1, 8, 8, 8)
    """
    assert findings(source) == [("GL012", "assert m(INP).shape == (1, 8, 8, 8)")]


def test_a_fixture_hands_the_test_its_model():
    source = """
    @pytest.fixture
    def tiny_model():
        return nn.Sequential(nn.Linear(3, 4), nn.Tanh())


    @pytest.fixture()
    def frozen_model():
        model = nn.Linear(3, 4)
        model.requires_grad_(False)
        yield model


    def test_forward_shape(tiny_model):
        out = tiny_model(torch.randn(2, 3))
        assert out.shape == (2, 4)


    def test_frozen_forward(frozen_model):
        out = frozen_model(torch.randn(2, 3))
        assert out.shape == (2, 4)


    def test_it_learns(tiny_model):
        out = tiny_model(torch.randn(2, 3))
        out.sum().backward()
        assert tiny_model[0].weight.grad is not None


    def test_no_fixture(other_model):
        out = other_model(torch.randn(2, 3))
        assert out.shape == (2, 4)
    """
    assert findings(source) == [("GL012", "out = tiny_model(torch.randn(2, 3))")]


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


CMODEL = """
    import torch.nn as nn


    class CModel(nn.Sequential):
        def __init__(self, layer_config):
            super().__init__(*[eval(name)(3, 3, 1) for name in layer_config])
"""

TEST = """
    import torch

    from pkg.models import CModel as OriginalCModel

    INP = torch.randn(1, 3, 8, 8)


    class CModel(OriginalCModel):
        @staticmethod
        def module_from_name(name):
            return eval(name)


    def test_imported():
        model = OriginalCModel(["nn.Conv2d"])
        assert model(INP).shape == (1, 3, 8, 8)


    def test_own_subclass():
        model = CModel(["nn.Conv2d"])
        assert model(INP).shape == (1, 3, 8, 8)
"""


def test_an_imported_container_subclass_and_the_tests_own_subclass_of_it(tmp_path):
    """bonlime/pytorch-tools' tests/models/test_cmodel.py: nine smoke tests of a model
    built from a configuration."""
    (tmp_path / "setup.py").write_text("", encoding="utf-8")
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/models/__init__.py": "from .cmodel import CModel\n",
            "pkg/models/cmodel.py": CMODEL,
            "tests/test_cmodel.py": TEST,
        },
    )
    result = lint_file(tmp_path / "tests" / "test_cmodel.py", Config(select=["GL012"]))
    assert result.error is None, result.error
    assert [(d.start.line, d.code) for d in result.diagnostics] == [(16, "GL012"), (21, "GL012")]


FLOWS = """
    import torch
    import torch.nn as nn


    class FlowSequential(nn.Sequential):
        def forward(self, x):
            for module in self._modules.values():
                x = module(x)
            return x


    class Sigmoid(nn.Module):
        def forward(self, x):
            return torch.sigmoid(x)


    class ActNorm(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(n))

        def forward(self, x):
            return x * self.weight
"""

FLOW_TESTS = """
    import unittest

    import torch

    {import_line}


    class TestFlow(unittest.TestCase):
        def testSigmoid(self):
            m1 = {prefix}FlowSequential({prefix}Sigmoid())
            y = m1(torch.randn(4, 3))
            self.assertTrue(y.abs().max() < 1)

        def testActNorm(self):
            m1 = {prefix}FlowSequential({prefix}ActNorm(3))
            y = m1(torch.randn(4, 3))
            self.assertTrue(y.abs().max() < 10)
"""


def test_a_container_subclass_without_an_init_holds_what_it_is_handed(tmp_path):
    """ikostrikov/pytorch-flows' flow_test.py: `FlowSequential(Sigmoid())` holds no
    weights, `FlowSequential(ActNorm(n))` does; in the file, or imported."""
    (tmp_path / "setup.py").write_text("", encoding="utf-8")
    write(tmp_path, {"flows.py": FLOWS})
    write(
        tmp_path,
        {"flow_test.py": FLOW_TESTS.format(import_line="import flows as fnn", prefix="fnn.")},
    )
    result = lint_file(tmp_path / "flow_test.py", Config(select=["GL012"]))
    assert result.error is None, result.error
    assert [d.start.line for d in result.diagnostics] == [16]
    own = textwrap.dedent(FLOWS) + textwrap.dedent(FLOW_TESTS.format(import_line="", prefix=""))
    lines = own.splitlines()
    act_norm_forward = lines.index("    def testActNorm(self):") + 3
    assert [d.start.line for d in lint_source(own, "flow_test.py", Config(select=["GL012"]))] == [
        act_norm_forward
    ]


CONFTEST = """
    import pytest
    import torch.nn as nn

    from models import Net


    @pytest.fixture
    def net():
        return Net()


    @pytest.fixture
    def layer():
        return nn.Linear(3, 4)


    @pytest.fixture
    def data():
        return [1, 2]
"""

NET = """
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)

        def forward(self, x):
            return self.fc(x)
"""

CONFTEST_TESTS = """
    import torch


    def test_net(net):
        assert net(torch.randn(2, 3)).shape == (2, 4)


    def test_layer(layer):
        assert layer(torch.randn(2, 3)).shape == (2, 4)


    def test_data(data):
        assert len(data) == 2
"""


def test_a_conftest_fixture_hands_the_test_its_model_and_its_absence_is_a_dependency(tmp_path):
    """pytest looks a fixture up in the conftest.py files from the test's folder up to
    the root: one that builds the project's model or a torch layer hands a module with
    weights. Which conftest.py files there are decides the answer, so the root's files
    are a dependency of it: a conftest.py added later re-lints the test."""
    from gradlint.analysis import project

    (tmp_path / "setup.py").write_text("", encoding="utf-8")
    write(tmp_path, {"models.py": NET, "tests/test_net.py": CONFTEST_TESTS})
    test = tmp_path / "tests" / "test_net.py"

    def lint() -> tuple[list[int], dict[str, str]]:
        dependencies: dict[str, str] = {}
        found = lint_source(
            test.read_text(encoding="utf-8"),
            str(test),
            Config(select=["GL012"]),
            dependencies=dependencies,
        )
        return [d.start.line for d in found], dependencies

    lines, dependencies = lint()
    assert lines == []
    assert project.dependencies_unchanged(dependencies)
    write(tmp_path, {"conftest.py": CONFTEST})
    assert not project.dependencies_unchanged(dependencies)
    lines, dependencies = lint()
    assert lines == [5, 9]
    assert project.dependencies_unchanged(dependencies)


def test_a_torch_base_built_without_weights_gives_none():
    """A review's traps, each measured on torch 2.13 (the output does not require
    grad): a container whose own `__init__` hands it parameterless layers or nothing,
    InstanceNorm (no affine parameters by default), a norm layer built with
    `affine=False`; and the same layer extended with its weights does record."""
    source = """
    class Head(nn.Sequential):
        def __init__(self, p):
            super().__init__(nn.Flatten(), nn.Dropout(p), nn.ReLU())


    class Preprocess(nn.Sequential):
        def __init__(self):
            super().__init__()
            self.scale = 2.0


    class MyIN(nn.InstanceNorm2d):
        pass


    class StatsOnly(nn.BatchNorm2d):
        def __init__(self, n):
            super(StatsOnly, self).__init__(n, affine=False)


    class Affine(nn.BatchNorm2d):
        def __init__(self, n):
            nn.BatchNorm2d.__init__(self, n)


    def test_shapes():
        head, pre, inorm, stats, affine = Head(0.1), Preprocess(), MyIN(3), StatsOnly(3), Affine(3)
        assert head(INP).shape == (1, 192)
        assert pre(INP).shape == (1, 3, 8, 8)
        assert inorm(INP).shape == (1, 3, 8, 8)
        assert stats(INP).shape == (1, 3, 8, 8)
        assert affine(INP).shape == (1, 3, 8, 8)
    """
    assert findings(source) == [("GL012", "assert affine(INP).shape == (1, 3, 8, 8)")]


def test_a_namesake_that_aliases_one_shared_model_is_the_same_model():
    """`m = self.model` or `m = get_model()` in the function that freezes and in the
    one that runs it name one object: the freeze counts (torch: no grad)."""
    source = """
    _MODEL = nn.Linear(4, 3)


    def get_model():
        return _MODEL


    def setup():
        m = get_model()
        m.requires_grad_(False)


    def predict(x):
        m = get_model()
        return m(x).argmax(1).tolist()


    class Agent:
        def __init__(self):
            self.model = nn.Linear(4, 3)

        def freeze(self):
            m = self.model
            m.requires_grad_(False)

        def predict(self, x):
            m = self.model
            return m(x).argmax(1).tolist()
    """
    assert findings(source, "agent.py") == []


def test_a_parametrized_or_class_fixture_overrides_the_files():
    source = """
    @pytest.fixture
    def model():
        return nn.Linear(3, 3)


    @pytest.mark.parametrize("model", [nn.Identity(), nn.ReLU()])
    def test_parametrized(model):
        assert model(torch.randn(2, 3)).shape == (2, 3)


    class TestIdentity:
        @pytest.fixture
        def model(self):
            return nn.Identity()

        def test_shape(self, model):
            assert model(torch.randn(2, 3)).shape == (2, 3)


    def test_module_fixture(model):
        assert model(torch.randn(2, 3)).shape == (2, 3)
    """
    assert findings(source) == [("GL012", "assert model(torch.randn(2, 3)).shape == (2, 3)")]
    lines = (textwrap.dedent(HEADER) + textwrap.dedent(source)).splitlines()
    found = lint_source("\n".join(lines), "test_model.py", Config(select=["GL012"]))
    assert [lines[d.start.line - 2].strip() for d in found] == ["def test_module_fixture(model):"]
