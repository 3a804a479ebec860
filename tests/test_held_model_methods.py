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


UPSAMPLER = """
    from torch import nn


    class Refiner(nn.Module):
        def __init__(self, n, act):
            super().__init__()
            self.conv = nn.Conv2d(n, n, 3)
            self.up = nn.Upsample(scale_factor=2, mode="bicubic")
            self.drop = nn.Dropout(0.1)
            self.act = act
"""

OTHER_UPSAMPLER = """
    from torch import nn


    class Learned(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.up = nn.ConvTranspose2d(n, n, 2, stride=2)
"""

EVALUATED = """
    import torch
    from refiner import Refiner


    def show(model):
        model.eval()
        x = torch.randn(1, 3, 8, 8)
        out = model.METHOD(x)
        print(out.shape)
"""


def test_a_submodule_the_project_builds_without_parameters_is_no_forward(tmp_path):
    """`model.up(x)` where every class of the project stores a torch.nn layer without
    weights in `self.up` (PICNNSR-like upsampling, a dropout of a decoder's test)."""
    for attribute in ("up", "drop"):
        test = TEST.replace("drnn import DRNN", "refiner import Refiner")
        write(tmp_path, {"refiner.py": UPSAMPLER, "test.py": test.replace("METHOD", attribute)})
        assert findings(tmp_path / "test.py") == [], attribute


def test_a_submodule_one_class_builds_with_weights_may_be_a_forward(tmp_path):
    test = TEST.replace("drnn import DRNN", "refiner import Refiner").replace("METHOD", "up")
    # a script that imports both: a Learned may be the model handed to `check`
    script = "from learned import Learned\nfrom test import check\n"
    files = {"refiner.py": UPSAMPLER, "learned.py": OTHER_UPSAMPLER, "test.py": test}
    write(tmp_path, files)
    assert findings(tmp_path / "test.py") == []  # nothing links learned.py to test.py
    write(tmp_path, {"run.py": script})
    assert findings(tmp_path / "test.py") == [(8, "GL012")]


def test_a_submodule_built_from_what_the_class_is_handed_may_hold_weights(tmp_path):
    test = TEST.replace("drnn import DRNN", "refiner import Refiner").replace("METHOD", "act")
    write(tmp_path, {"refiner.py": UPSAMPLER, "test.py": test})
    assert findings(tmp_path / "test.py") == [(8, "GL012")]


def test_an_evaluated_model_s_parameterless_submodule_is_no_forward(tmp_path):
    for attribute, expected in (("drop", []), ("conv", [(8, "GL004")])):
        write(
            tmp_path, {"refiner.py": UPSAMPLER, "test.py": EVALUATED.replace("METHOD", attribute)}
        )
        assert findings(tmp_path / "test.py") == expected, attribute


def test_the_search_for_what_the_project_stores_in_an_attribute_is_a_dependency(tmp_path):
    """A cached result that a parameterless `self.up` kept silent is stale once a class
    of the project stores a layer with weights there."""
    from gradlint.analysis import project
    from gradlint.config import Config
    from gradlint.engine import lint_source

    test = TEST.replace("drnn import DRNN", "refiner import Refiner").replace("METHOD", "up")
    write(tmp_path, {"refiner.py": UPSAMPLER, "test.py": test})
    path = tmp_path / "test.py"
    dependencies: dict[str, str] = {}
    lint_source(path.read_text(encoding="utf-8"), str(path), Config(), dependencies=dependencies)
    assert any(key.startswith(project.ATTRIBUTES_PREFIX) for key in dependencies)
    assert project.dependencies_unchanged(dependencies)
    assert not project.affected_by(dependencies, str(tmp_path.parent / "elsewhere.py"))
    write(tmp_path, {"learned.py": OTHER_UPSAMPLER})
    assert project.affected_by(dependencies, str(tmp_path / "learned.py"))
    assert project.dependencies_unchanged(dependencies)  # no file imports it yet
    write(tmp_path, {"run.py": "from learned import Learned\nfrom test import check\n"})
    assert not project.dependencies_unchanged(dependencies)
