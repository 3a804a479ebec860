"""The project-wide pass: a file is linted with what its imports of the project's own
files do (analysis/project.py)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from gradlint.analysis import project
from gradlint.engine import lint_file

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


def test_a_loader_in_another_file_that_returns_an_eval_model(tmp_path):
    write(
        tmp_path,
        {
            "loading.py": """
                import torch


                def load_model(path):
                    model = torch.load(path)
                    model.eval()
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


def test_a_tracker_class_of_another_file_that_keeps_the_loss(tmp_path):
    write(
        tmp_path,
        {
            "meters.py": """
                class AverageMeter:
                    def __init__(self):
                        self.sum = 0

                    def update(self, val, n=1):
                        self.sum += val
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
    ],
    ids=["returns-the-tensor", "more-than-a-return", "other-parameter"],
)
def test_helpers_that_are_not_number_sinks(tmp_path, helper):
    write(
        tmp_path,
        {
            "utils.py": helper,
            "agent.py": ROLLOUT.replace("from .base import *", "from utils import *"),
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
