"""`--diff-base REF`: lint what a change touches, and the files that import it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gradlint import cli, engine
from gradlint.analysis.project import importers

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

LEAF = "import torch\nw = torch.ones(3, requires_grad=True)\nw += 1\n"
UTILS = "def evaluate(model, x):\n    return model(x)\n"
TRAIN = (
    "import torch\nfrom utils import evaluate\n\nw = torch.ones(3, requires_grad=True)\nw += 1\n"
)


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """main: utils.py, train.py (imports utils), other.py, pkg/; then a branch."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    files = {
        "utils.py": UTILS,
        "train.py": TRAIN,
        "other.py": LEAF,
        "pkg/__init__.py": "",
        "pkg/helpers.py": UTILS,
        "pkg/run.py": "from . import helpers\n" + LEAF,
        "pkg/lone.py": LEAF,
        ".gitignore": "ignored.py\n",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "topic")
    monkeypatch.chdir(root)
    return root


def linted(capsys, *argv: str) -> tuple[int, list[str]]:
    """Exit status and the files linted (every test file has a finding, or imports one
    that has: with -j1 and no cache, linted files are the files in the JSON report)."""
    code = cli.main(["--isolated", "-j1", "--no-cache", "--output-format", "json", *argv])
    out = capsys.readouterr().out
    names = {os.path.relpath(row["filename"]) for row in json.loads(out)}
    return code, sorted(Path(name).as_posix() for name in names)


def test_only_changed_files_and_their_importers_are_linted(repo, capsys, monkeypatch):
    seen: list[str] = []
    original = engine.lint_source

    def counting(source, path="-", config=None, **options):
        seen.append(Path(path).as_posix())
        return original(source, path, config, **options)

    monkeypatch.setattr(engine, "lint_source", counting)
    assert linted(capsys, "--diff-base", "main")[0] == 0
    assert seen == []  # nothing changed
    (repo / "utils.py").write_text(UTILS + "\n# changed\n")
    git(repo, "commit", "-qam", "edit utils")
    (repo / "pkg" / "helpers.py").write_text(UTILS + "x = 1\n")  # modified, not committed
    (repo / "new.py").write_text(LEAF)  # untracked
    (repo / "ignored.py").write_text(LEAF)  # untracked but ignored
    code, files = linted(capsys, "--diff-base", "main")
    assert sorted(seen) == ["new.py", "pkg/helpers.py", "pkg/run.py", "train.py", "utils.py"]
    assert code == 1 and files == ["new.py", "pkg/run.py", "train.py"]
    # Paths still narrow the selection.
    seen.clear()
    assert linted(capsys, "--diff-base", "main", "pkg")[1] == ["pkg/run.py"]
    assert sorted(seen) == ["pkg/helpers.py", "pkg/run.py"]


def test_a_deleted_module_re_lints_its_importers(repo, capsys):
    git(repo, "rm", "-q", "utils.py")
    git(repo, "commit", "-qm", "drop utils")
    assert linted(capsys, "--diff-base", "main") == (1, ["train.py"])


def test_importers_follow_the_project_wide_resolution(repo):
    changed = {os.path.realpath(repo / "pkg" / "helpers.py")}
    candidates = {os.path.realpath(p) for p in repo.rglob("*.py")}
    assert importers(candidates, changed) == {os.path.realpath(repo / "pkg" / "run.py")}
    package = {os.path.realpath(repo / "pkg" / "__init__.py")}
    assert importers(candidates, package) == {os.path.realpath(repo / "pkg" / "run.py")}
    # A file that merely mentions the name is not an importer.
    (repo / "mention.py").write_text("# utils is a word\nutils = 1\n")
    top = {os.path.realpath(repo / "utils.py")}
    assert importers(candidates | {os.path.realpath(repo / "mention.py")}, top) == {
        os.path.realpath(repo / "train.py")
    }


def test_not_a_repository_and_a_bad_ref_are_one_line_usage_errors(tmp_path, capsys, repo):
    assert cli.main(["--isolated", "--diff-base", "no-such-ref", "."]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'no-such-ref' is not a commit of the repository" in err
    outside = tmp_path / "plain"
    outside.mkdir()
    (outside / "a.py").write_text(LEAF)
    assert cli.main(["--isolated", "--diff-base", "main", str(outside)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs a git repository" in err
    assert cli.main(["--isolated", "--diff-base", "main", "-"]) == 2


def _repository(root: Path, files: dict[str, str]) -> Path:
    """A repository whose branch main holds `files`, checked out on a new branch topic."""
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "topic")
    return root


def _add_submodule(root: Path, library: Path, where: str) -> None:
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), where)
    git(root, "commit", "-q", "-m", f"add {where}")


def test_changes_inside_a_submodule_are_linted(tmp_path, capsys, monkeypatch):
    library = _repository(
        tmp_path / "library",
        {"a.py": LEAF, "b.py": LEAF, "same.py": LEAF, "gone.py": UTILS, "user.py": TRAIN},
    )
    git(library, "checkout", "-q", "main")
    root = _repository(tmp_path / "super", {"top.py": LEAF})
    git(root, "checkout", "-q", "main")
    _add_submodule(root, library, "vendor/lib")
    git(root, "checkout", "-q", "-b", "work")
    monkeypatch.chdir(root)
    assert linted(capsys, "--diff-base", "main") == (0, [])
    inner = root / "vendor" / "lib"
    # Committed in the submodule and recorded by the superproject.
    (inner / "b.py").write_text(LEAF + "# changed\n")
    git(inner, "commit", "-qam", "edit b")
    git(root, "commit", "-qam", "move the submodule")
    # Modified, untracked and deleted in the submodule's working tree.
    (inner / "a.py").write_text(LEAF + "# changed\n")
    (inner / "new.py").write_text(LEAF)
    git(inner, "rm", "-q", "gone.py")
    (inner / "user.py").write_text(TRAIN.replace("from utils", "from gone"))
    git(inner, "commit", "-qam", "drop gone, point user at it")
    (inner / "user.py").write_text(TRAIN.replace("from utils", "from gone") + "# again\n")
    code, files = linted(capsys, "--diff-base", "main")
    assert code == 1
    assert files == [f"vendor/lib/{name}" for name in ("a.py", "b.py", "new.py", "user.py")]
    # Asked from inside the submodule, `main` is the submodule's own branch, which holds
    # the commits made there: only what is not committed differs.
    monkeypatch.chdir(inner)
    assert linted(capsys, "--diff-base", "main")[1] == ["new.py", "user.py"]


def test_every_file_of_a_submodule_added_since_the_base_is_linted(tmp_path, capsys, monkeypatch):
    library = _repository(tmp_path / "library", {"a.py": LEAF, "pkg/b.py": LEAF})
    root = _repository(tmp_path / "super", {"top.py": LEAF})
    _add_submodule(root, library, "lib")
    # A repository of its own that the superproject does not track: new throughout.
    _repository(root / "nested", {"n.py": LEAF})
    monkeypatch.chdir(root)
    assert linted(capsys, "--diff-base", "main")[1] == ["lib/a.py", "lib/pkg/b.py", "nested/n.py"]


def test_each_path_is_asked_of_its_own_repository_in_any_order(tmp_path, capsys, monkeypatch):
    first = _repository(tmp_path / "first", {"a.py": LEAF, "same.py": LEAF})
    second = _repository(tmp_path / "second", {"b.py": LEAF, "same.py": LEAF})
    (first / "a.py").write_text(LEAF + "# changed\n")
    (second / "b.py").write_text(LEAF + "# changed\n")
    monkeypatch.chdir(tmp_path)
    expected = ["first/a.py", "second/b.py"]
    assert linted(capsys, "--diff-base", "main", "first", "second") == (1, expected)
    assert linted(capsys, "--diff-base", "main", "second/b.py", "first") == (1, expected)


def test_a_repositorys_fsmonitor_program_is_never_run(repo, capsys, tmp_path):
    marker = tmp_path / "fsmonitor-ran"
    hook = tmp_path / "fsmonitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\nexit 1\n")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(hook))
    (repo / "utils.py").write_text(UTILS + "# changed\n")
    assert linted(capsys, "--diff-base", "main")[1] == ["train.py"]
    assert not marker.exists()


def test_an_unborn_head_is_one_line(repo, tmp_path, capsys):
    git(repo, "checkout", "-q", "--orphan", "fresh")
    assert cli.main(["--isolated", "--diff-base", "main", "."]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "HEAD has no commits yet" in err, err
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    (empty / "a.py").write_text(LEAF)
    assert cli.main(["--isolated", "--diff-base", "main", str(empty)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "HEAD has no commits yet" in err, err
