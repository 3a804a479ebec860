"""A forward's result returned by a function of one file and only read as numbers by
its callers in the project's other files (kuc2477/pytorch-wgan-gp's `sample_image`,
whose images are only saved): the caller search tells, per call, whether the result is
only read as numbers there, by the definition result_uses applies in the linted file
(summary_facts.ResultUse)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_project import write

from gradlint.analysis import project
from gradlint.config import Config
from gradlint.engine import lint_file

MODEL = """
import torch
from torch import nn


class WGAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.generator = nn.Linear(3, 3)

    def forward(self, z):
        return self.generator(z)

    def sample_image(self, size):
        return self.generator(torch.randn(size, 3))
"""

UTILS = """
import torchvision


def test_model(model, sample_size, path):
    torchvision.utils.save_image(model.sample_image(sample_size).data, path)
"""


def _findings(path: Path) -> list[tuple[int, str, list[str]]]:
    result = lint_file(path, Config(preview=True))
    assert result.error is None, result.error
    return [
        (d.start.line, d.code, [f"{Path(r.path).name}:{r.start.line}" for r in d.related])
        for d in result.diagnostics
    ]


def test_a_method_whose_callers_elsewhere_only_save_images(tmp_path: Path):
    write(tmp_path, {"setup.py": "", "model.py": MODEL, "utils.py": UTILS})
    assert _findings(tmp_path / "model.py") == [(14, "GL012", ["utils.py:5"])]


def test_one_caller_elsewhere_that_differentiates_keeps_it_quiet(tmp_path: Path):
    train = "def train(model):\n    model.sample_image(4).sum().backward()\n"
    write(tmp_path, {"setup.py": "", "model.py": MODEL, "utils.py": UTILS, "train.py": train})
    assert _findings(tmp_path / "model.py") == []


def test_a_caller_elsewhere_that_keeps_the_result_keeps_it_quiet(tmp_path: Path):
    train = "def train(model, out):\n    out.append(model.sample_image(4))\n"
    write(tmp_path, {"setup.py": "", "model.py": MODEL, "utils.py": UTILS, "train.py": train})
    assert _findings(tmp_path / "model.py") == []


GENERATE = """
import torch
from torch import nn

netG = nn.Linear(3, 3)


def generate_image(noise):
    samples = netG(noise)
    return samples * 0.5 + 0.5


# a file without one of GL012's tokens is not parsed for it (engine._may_run)
def to_numbers(t):
    return t.detach().numpy()
"""


@pytest.mark.parametrize("import_line", ["from utils import generate_image", "from utils import *"])
def test_a_module_function_whose_callers_elsewhere_only_save_images(tmp_path, import_line):
    train = (
        f"import torch\nimport torchvision\n{import_line}\n\n\n"
        "def train(loader):\n"
        "    for step, x in enumerate(loader):\n"
        "        images = generate_image(x)\n"
        "        torchvision.utils.save_image(images, 'out.png')\n"
    )
    write(tmp_path, {"setup.py": "", "utils.py": GENERATE, "train.py": train})
    assert _findings(tmp_path / "utils.py") == [(8, "GL012", ["train.py:8"])]


def test_a_star_import_that_may_bring_another_definition_is_no_call(tmp_path: Path):
    # `from other import *` may define generate_image too: which one runs is not told
    train = (
        "import torchvision\nfrom utils import *\nfrom other import *\n\n\n"
        "def train(x):\n"
        "    torchvision.utils.save_image(generate_image(x), 'out.png')\n"
    )
    other = "def generate_image(x):\n    return x\n"
    write(tmp_path, {"setup.py": "", "utils.py": GENERATE, "train.py": train, "other.py": other})
    assert _findings(tmp_path / "utils.py") == []


@pytest.mark.parametrize(
    ("use", "numbers_only"),
    [
        ("print(f(x).item())", True),
        ("y = f(x)\n    print(y.argmax(1).tolist())", True),
        ("save(f(x).data)", True),  # detached first: the project's helper cannot use it
        ("save(f(x))", False),
        ("y = f(x)\n    y.backward()", False),
        ("y = f(x)\n    return y", False),
        ("out.append(f(x))", False),
        ("y = f(x).detach()\n    y.requires_grad_()", False),
        ("torchvision.utils.save_image(f(x), 'p.png')", True),
        ("print((f(x) > 0).sum())", True),
        ("y = f(x)\n    g = lambda: y\n    print(y.item())", False),
    ],
)
def test_the_caller_search_reads_a_result_as_result_uses_does(tmp_path, use, numbers_only):
    write(
        tmp_path,
        {
            "setup.py": "",
            "utils.py": "def f(x):\n    return x * 2\n",
            "train.py": (
                "import torchvision\nfrom utils import f\nfrom helpers import save\n\n\n"
                f"def train(x, out):\n    {use}\n"
            ),
        },
    )
    query = project.MethodQuery(
        str(tmp_path / "utils.py"), "", "f", "", frozenset(), frozenset(), frozenset()
    )
    index = project.ProjectIndex(str(tmp_path / "utils.py"))
    contexts = project.caller_contexts(index, query)
    assert contexts is not None and len(contexts) == 1
    assert contexts[0].numbers_only is numbers_only


def test_a_search_counting_unknown_receivers_has_its_own_key():
    query = project.MethodQuery(
        "m.py", "WGAN", "sample_image", "", frozenset(), frozenset(), frozenset()
    )
    wider = project.MethodQuery(
        "m.py",
        "WGAN",
        "sample_image",
        "",
        frozenset(),
        frozenset(),
        frozenset(),
        unknown_receivers=True,
    )
    assert query.key("/r") != wider.key("/r")
    assert project.MethodQuery.from_key(wider.key("/r")) == (wider, "/r")
    # a key recorded before the field reads back as before
    assert '"unknown receivers"' not in query.key("/r")
    assert project.MethodQuery.from_key(query.key("/r")) == (query, "/r")


def test_a_method_called_beside_its_class_is_judged_at_that_call(tmp_path: Path):
    # SAC's `self.actor.get_action(s).detach()` in the class's own file: GL012 reports
    # that call; the method's body is not reported a second time
    beside = MODEL + (
        "\n\nclass Agent:\n"
        "    def __init__(self):\n"
        "        self.gan = WGAN()\n\n"
        "    def act(self):\n"
        "        return self.gan.sample_image(1).detach()\n"
    )
    write(tmp_path, {"setup.py": "", "model.py": beside, "utils.py": UTILS})
    assert [(line, code) for line, code, _ in _findings(tmp_path / "model.py")] == [(22, "GL012")]


# jalola/improved-wgan-pytorch: the generator is a parameter of the helper, filled only
# by train.py, where its parameters go to the optimizer
GENERATE_OF = """
import torch
import torch.nn.init as init


def generate_image(netG, noise):
    with torch.no_grad():
        noisev = noise
    samples = netG(noisev)
    return samples * 0.5 + 0.5
"""


def _train_calling(call: str, setup: str = "aG = Generator()") -> str:
    return (
        "import torch\nimport torchvision\nfrom models import Generator\n"
        "from utils import generate_image\n\n\n"
        "def train(loader, z):\n"
        f"    {setup}\n"
        "    opt = torch.optim.Adam(aG.parameters())\n"
        "    for x in loader:\n"
        "        opt.zero_grad()\n"
        "        aG(x).mean().backward()\n"
        "        opt.step()\n"
        f"        torchvision.utils.save_image({call}, 'out.png')\n"
    )


@pytest.mark.parametrize("call", ["generate_image(aG, z)", "generate_image(noise=z, netG=aG)"])
def test_a_model_handed_in_by_callers_elsewhere_is_a_model(tmp_path: Path, call: str):
    write(tmp_path, {"setup.py": "", "utils.py": GENERATE_OF, "train.py": _train_calling(call)})
    assert _findings(tmp_path / "utils.py") == [(8, "GL012", ["train.py:14"])]


@pytest.mark.parametrize(
    "call",
    [
        "generate_image(z, aG)",  # the model goes to `noise`: `netG` is z
        "generate_image(*[aG], z)",  # bound out of sight
        "generate_image(aG, z) + generate_image(g, z)",  # one caller's g shows nothing
    ],
)
def test_a_parameter_not_shown_to_be_a_model_by_every_caller_says_nothing(
    tmp_path: Path, call: str
):
    train = _train_calling(call).replace("def train(loader, z)", "def train(loader, z, g)")
    write(tmp_path, {"setup.py": "", "utils.py": GENERATE_OF, "train.py": train})
    assert _findings(tmp_path / "utils.py") == []


@pytest.mark.parametrize(
    ("use", "models"),
    [
        ("opt = Adam(net.parameters())\n    f(net, x)", {0}),
        ("net.eval()\n    f(x, model=net)", {"model"}),
        ("f(net, x)", set()),  # nothing shows net to be a model
        ("def inner():\n        net.zero_grad()\n    f(net, x)", set()),  # another scope
        ("net.load_state_dict(sd)\n    f(*xs, net)", set()),  # after a starred argument
    ],
)
def test_the_caller_search_tells_which_arguments_are_models(tmp_path, use, models):
    write(
        tmp_path,
        {
            "setup.py": "",
            "utils.py": "def f(a, b=None, model=None):\n    return a\n",
            "train.py": f"from utils import f\n\n\ndef train(net, x, xs, sd):\n    {use}\n",
        },
    )
    query = project.MethodQuery(
        str(tmp_path / "utils.py"), "", "f", "", frozenset(), frozenset(), frozenset()
    )
    contexts = project.caller_contexts(project.ProjectIndex(str(tmp_path / "utils.py")), query)
    assert contexts is not None and len(contexts) == 1
    assert contexts[0].model_arguments == models
