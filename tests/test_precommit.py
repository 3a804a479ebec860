"""The pre-commit manifest: valid by pre-commit's own schema, and its hooks do what the
docs say when real pre-commit runs them on a repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pre_commit.clientlib import load_manifest

from gradlint.engine import rule_by_code

REPO = Path(__file__).resolve().parents[1]
MANIFEST = REPO / ".pre-commit-hooks.yaml"
SNIPPET = "import torch\nw = torch.ones(3, requires_grad=True)\nw += 1\n"
NOTEBOOK = (
    '{"cells": [{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [],'
    f' "source": {SNIPPET!r}}}], "metadata": {{}}, "nbformat": 4, "nbformat_minor": 5}}\n'
).replace("'", '"')


def hooks() -> dict[str, dict]:
    return {hook["id"]: hook for hook in load_manifest(str(MANIFEST))}


def test_manifest_is_valid_for_pre_commit():
    manifest = hooks()
    assert set(manifest) == {"gradlint", "gradlint-fix"}
    for hook in manifest.values():
        assert hook["language"] == "python"
        # Notebooks too (identify tags .ipynb as jupyter), as ruff's hooks do.
        assert hook["types_or"] == ["python", "pyi", "jupyter"]
        assert hook["entry"].split()[:2] == ["gradlint", "check"]
        # Files named by pre-commit must still honour [tool.gradlint] exclude.
        assert "--force-exclude" in hook["entry"].split()
    assert "--fix" in manifest["gradlint-fix"]["entry"].split()
    # Unsafe fixes are an opt-in (args), never the hook's default.
    assert "--unsafe-fixes" not in manifest["gradlint-fix"]["entry"]


def test_validate_manifest_command_accepts_it():
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(MANIFEST)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def run_hook(tmp_path: Path, hook_id: str, files: dict[str, str], args=()) -> tuple[int, str]:
    """Run one manifest hook with real pre-commit on a fresh git repository.

    The hook is copied into a `repo: local` configuration with `language: system`, so
    pre-commit runs the gradlint installed here instead of building a virtualenv from
    PyPI; entry, types and require_serial are the manifest's own."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    hook = dict(hooks()[hook_id])
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    config_lines = [
        "repos:",
        "- repo: local",
        "  hooks:",
        f"  - id: {hook['id']}",
        f"    name: {hook['name']}",
        f"    entry: {hook['entry']}",
        "    language: system",
        f"    types: {hook['types']}",
        f"    types_or: {hook['types_or']}",
        f"    require_serial: {str(hook['require_serial']).lower()}",
        f"    args: {list(args)}",
    ]
    (repo / ".pre-commit-config.yaml").write_text("\n".join(config_lines) + "\n", encoding="utf-8")
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(tmp_path),
    }
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True, env=env)
    subprocess.run([*git, "add", "."], cwd=repo, check=True, env=env)
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color=never"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
    )
    return result.returncode, result.stdout + result.stderr


def test_check_hook_fails_on_a_finding_and_skips_excluded_and_non_python_files(tmp_path):
    code, output = run_hook(
        tmp_path,
        "gradlint",
        {
            "pyproject.toml": '[tool.gradlint]\nextend-exclude = ["generated"]\n',
            "train.py": SNIPPET,
            "generated/model.py": SNIPPET,
            "notes.txt": SNIPPET,
            "explore.ipynb": NOTEBOOK,
        },
    )
    assert code == 1, output
    assert "train.py:3:1: GL002" in output
    assert "explore.ipynb:cell 1:3:1: GL002" in output
    assert "generated" not in output
    assert "notes.txt" not in output


def test_check_hook_passes_clean_code(tmp_path):
    code, output = run_hook(tmp_path, "gradlint", {"clean.py": "x = 1\n"})
    assert code == 0, output


def test_fix_hook_applies_unsafe_fixes_only_when_asked(tmp_path):
    code, output = run_hook(tmp_path, "gradlint-fix", {"train.py": SNIPPET})
    assert code == 1, output
    assert (tmp_path / "repo" / "train.py").read_text(encoding="utf-8") == SNIPPET

    if rule_by_code("GL002").fix_title is None:
        return
    code, output = run_hook(
        tmp_path / "unsafe", "gradlint-fix", {"train.py": SNIPPET}, args=["--unsafe-fixes"]
    )
    fixed = (tmp_path / "unsafe" / "repo" / "train.py").read_text(encoding="utf-8")
    assert fixed != SNIPPET
    assert "no_grad" in fixed
    # pre-commit fails a hook that modified files, so the user reviews the fix first.
    assert code == 1, output
    assert "files were modified by this hook" in output
