"""A forward's result returned by a function of one file and only read as numbers by
its callers in the project's other files (kuc2477/pytorch-wgan-gp's `sample_image`,
whose images are only saved): the caller search tells, per call, whether the result is
only read as numbers there, by the definition result_uses applies in the linted file
(summary_facts.ResultUse)."""

from __future__ import annotations

import os
import textwrap
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


# the script that builds the model and hands it to the helpers: what links their files
MAIN = "from model import WGAN\nimport train\nimport utils\n"


def test_a_method_whose_callers_elsewhere_only_save_images(tmp_path: Path):
    write(tmp_path, {"setup.py": "", "model.py": MODEL, "utils.py": UTILS, "main.py": MAIN})
    assert _findings(tmp_path / "model.py") == [(14, "GL012", ["utils.py:5"])]


def test_one_caller_elsewhere_that_differentiates_keeps_it_quiet(tmp_path: Path):
    train = "def train(model):\n    model.sample_image(4).sum().backward()\n"
    files = {"setup.py": "", "model.py": MODEL, "utils.py": UTILS, "main.py": MAIN}
    write(tmp_path, {**files, "train.py": train})
    assert _findings(tmp_path / "model.py") == []
    # a script nothing links to the model's file holds none of its objects
    write(tmp_path, {"main.py": MAIN.replace("import train\n", "")})
    assert _findings(tmp_path / "model.py") == [(14, "GL012", ["utils.py:5"])]


def test_a_caller_elsewhere_that_keeps_the_result_keeps_it_quiet(tmp_path: Path):
    train = "def train(model, out):\n    out.append(model.sample_image(4))\n"
    files = {"setup.py": "", "model.py": MODEL, "utils.py": UTILS, "main.py": MAIN}
    write(tmp_path, {**files, "train.py": train})
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


def test_a_method_called_in_its_own_file_searches_no_other_file(tmp_path, monkeypatch):
    # any call of the method in the class's own file settles the question (GL012 judges
    # that call there): the project's other files are neither read nor searched for it
    beside = MODEL + (
        "\n\nclass Agent:\n"
        "    def __init__(self):\n"
        "        self.gan = WGAN()\n\n"
        "    def act(self):\n"
        "        return self.gan.sample_image(1).detach()\n"
    )
    write(tmp_path, {"setup.py": "", "model.py": beside, "utils.py": UTILS})
    searched: list[str] = []
    search = project.method_calls

    def recording(query, root):
        searched.append(query.method)
        return search(query, root)

    monkeypatch.setattr(project, "method_calls", recording)
    assert [(line, code) for line, code, _ in _findings(tmp_path / "model.py")] == [(22, "GL012")]
    assert "sample_image" not in searched


@pytest.mark.parametrize(
    ("calls_here", "expected"),
    [
        ("", []),  # not searched: its text never names the method
        ("def f(gan):\n    return gan.sample_image(2).data\n", 1),
        ("def f(other):\n    return other.sample_image(2)\n", 1),  # an unknown receiver
    ],
)
def test_the_calls_in_the_linted_file_are_the_whole_searchs_there(tmp_path, calls_here, expected):
    write(tmp_path, {"setup.py": "", "model.py": MODEL + calls_here, "utils.py": UTILS})
    query = project.MethodQuery(
        str(tmp_path / "model.py"),
        "WGAN",
        "sample_image",
        "",
        frozenset(),
        frozenset(),
        frozenset({"forward", "sample_image"}),
        unknown_receivers=True,
    )
    index = project.ProjectIndex(str(tmp_path / "model.py"))
    here = index.method_calls_here(query)
    everywhere = project.method_calls(query, str(tmp_path))
    assert here is not None and everywhere is not None
    assert len(here) == (expected or 0)
    model = os.path.abspath(tmp_path / "model.py")
    assert here == [c for c in everywhere[0] if os.path.abspath(c.path) == model]


@pytest.mark.parametrize(
    "uses",
    [
        ["print(f(x).item())", "save(f(x).data)"],
        ["print(f(x).item())", "save(f(x))"],
        ["out.append(f(x))", "print(f(x).item())"],
        ["y = f(x)\n    print(y.argmax(1).tolist())", "y = f(x)\n    y.backward()"],
    ],
)
def test_calls_read_as_numbers_answers_as_the_callers_contexts_do(tmp_path, uses):
    files = {"setup.py": "", "utils.py": "def f(x):\n    return x * 2\n"}
    for i, use in enumerate(uses):
        files[f"train{i}.py"] = (
            "import torchvision\nfrom utils import f\nfrom helpers import save\n\n\n"
            f"def train(x, out):\n    {use}\n"
        )
    write(tmp_path, files)
    query = project.MethodQuery(
        str(tmp_path / "utils.py"), "", "f", "", frozenset(), frozenset(), frozenset()
    )
    index = project.ProjectIndex(str(tmp_path / "utils.py"))
    contexts = project.caller_contexts(index, query)
    assert contexts is not None and len(contexts) == len(uses)
    expected = [c.call for c in contexts] if all(c.numbers_only for c in contexts) else None
    assert project.calls_read_as_numbers(index, query) == expected


def test_the_names_read_in_a_scope_are_found_once_for_every_name():
    import ast

    source = textwrap.dedent(
        """
        def f(a, b=c0):
            x = a + b
            y = x * 2
            @deco(y)
            def g(z=x):
                global w
                return y + z
            h = lambda: a
            print([x for x in range(3)], y, w)
            class K:
                k = b
            return x
        """
    )
    tree = ast.parse(source)
    func = tree.body[0]
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}

    def by_walk(name):  # what _loads_in found with a walk of the scope for each name
        found = []
        for node in ast.walk(func):
            if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
                return None
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                inner = parents.get(id(node))
                while inner is not None and not isinstance(inner, project._SCOPES):
                    inner = parents.get(id(inner))
                if inner is not func:
                    return None
                found.append(node)
        return found

    assert project._parents(tree) == parents
    for name in ("a", "b", "c0", "x", "y", "z", "w", "print", "range", "deco", "nothing"):
        expected = by_walk(name)
        found = project._loads_in(func, name, parents)
        assert (found is None) == (expected is None), name
        assert expected is None or [id(n) for n in found] == [id(n) for n in expected], name
    assert project._scope_reads(func) is project._scope_reads(func)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    for name in ("deco", "print", "range", "nothing"):
        assert project._calls_named(tree, name) == [
            c for c in calls if getattr(c.func, "id", getattr(c.func, "attr", None)) == name
        ]


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


@pytest.mark.parametrize(
    ("built", "models"),
    [
        ("Net()", {0}),  # a project class that holds layers with weights
        ("Scale()", set()),  # a project module class without any
        ("make()", set()),  # a factory out of sight says nothing
    ],
)
def test_a_caller_that_builds_a_project_model_passes_a_model(tmp_path, built, models):
    # kuc2477/pytorch-wgan-gp's main.py: `wgan = WGAN(...)` then `utils.test_model(wgan, ...)`
    write(
        tmp_path,
        {
            "setup.py": "",
            "utils.py": "def f(a, b=None):\n    return a\n",
            "models.py": (
                "from torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.fc = nn.Linear(3, 3)\n\n\n"
                "class Scale(nn.Module):\n    def forward(self, x):\n        return 2 * x\n"
            ),
            "train.py": (
                "from models import Net, Scale\nfrom utils import f\n\n\n"
                f"def train(x):\n    net = {built}\n    f(net, x)\n"
            ),
        },
    )
    query = project.MethodQuery(
        str(tmp_path / "utils.py"), "", "f", "", frozenset(), frozenset(), frozenset()
    )
    contexts = project.caller_contexts(project.ProjectIndex(str(tmp_path / "utils.py")), query)
    assert contexts is not None and len(contexts) == 1
    assert contexts[0].model_arguments == models


# rail-berkeley/rlkit: a policy hands itself to a helper of another file that runs it on
# numpy observations and hands back numpy actions (`return eval_np(self, obs)`)
EVAL_NP = """
import torch
from torch import nn


class Base(nn.Module):
    pass


def eval_np(module, *args):
    outputs = module(*args)
    return outputs.detach().cpu().numpy()
"""


def _policy(layer: str, decorator: str = "") -> str:
    return (
        "from torch import nn\nfrom core import eval_np\n\n\n"
        "class Policy(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        f"        self.fc = {layer}\n\n    def forward(self, x):\n        return self.fc(x)\n\n"
        f"    {decorator}\n    def get_actions(self, obs):\n        return eval_np(self, obs)\n"
    )


@pytest.mark.parametrize(
    ("layer", "decorator", "expected"),
    [
        ("nn.Linear(3, 2)", "", [(10, "GL012", ["core.py:11"])]),  # a class with weights
        ("nn.ReLU()", "", []),  # a parameterless module: no graph to record
        ("nn.Linear(3, 2)", "@staticmethod", []),  # no instance: `self` is an argument
    ],
)
def test_a_module_that_hands_itself_to_a_helper_elsewhere_is_a_model(
    tmp_path, layer, decorator, expected
):
    policy = _policy(layer, decorator)
    if decorator:
        policy = policy.replace("def get_actions(self, obs)", "def get_actions(self, obs=None)")
    write(tmp_path, {"setup.py": "", "core.py": EVAL_NP, "nets.py": policy})
    assert _findings(tmp_path / "core.py") == expected
