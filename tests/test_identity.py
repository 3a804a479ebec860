"""The distribution name users install: `torch-gradlint` (the registry's `gradlint` is
another project), used by every instruction that says what to install."""

from __future__ import annotations

import re
from pathlib import Path

from gradlint import about, cli
from gradlint.config import tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# Every place a user is told what to install: docs, the package's own messages, hooks.
USER_FACING = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "gradlint").rglob("*.py")),
    *sorted((ROOT / "runtime_check").rglob("*.py")),
    ROOT / ".pre-commit-hooks.yaml",
]


def test_distribution_name_is_the_free_one_and_the_command_stays_gradlint():
    project = PYPROJECT["project"]
    assert project["name"] == about.DISTRIBUTION == "torch-gradlint"
    assert project["scripts"]["gradlint"] == "gradlint.cli:main"
    # The extras refer to the distribution by its own name.
    assert all(
        "gradlint[" not in dep or dep.startswith("torch-gradlint[")
        for deps in project["optional-dependencies"].values()
        for dep in deps
    )


def test_every_install_instruction_names_the_distribution():
    wrong: list[str] = []
    for path in USER_FACING:
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"pip install\s+['\"]?(?P<target>[^\s'\"`]+)", text):
            target = match.group("target")
            if target.startswith(("-", ".", "/")) or "{" in target:
                continue  # `pip install -e .`, a path, or the hint built from about.py
            name = re.split(r"[\[<>=!~;]", target)[0]
            if "gradlint" in name and name != about.DISTRIBUTION:
                wrong.append(f"{path.relative_to(ROOT)}: {match.group(0)}")
        for match in re.finditer(r"additional_dependencies:\s*\[([^\]]*)\]", text):
            for dep in match.group(1).split(","):
                name = re.split(r"[\[<>=!~;]", dep.strip().strip("'\""))[0]
                if "gradlint" in name and name != about.DISTRIBUTION:
                    wrong.append(f"{path.relative_to(ROOT)}: {match.group(0)}")
    assert not wrong, wrong


def test_the_lsp_hint_names_the_distribution(capsys, monkeypatch):
    assert cli.LSP_MISSING.endswith("pip install 'torch-gradlint[lsp]'")
    assert "pip install 'torch-gradlint[lsp]'" in cli.check_parser().format_help()
