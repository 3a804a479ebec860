"""The distribution name users install: `torch-gradlint` (the registry's `gradlint` is
another project), used by every instruction that says what to install."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

from gradlint import about, cli
from gradlint.config import tomllib
from gradlint.output.common import ReportOptions
from gradlint.results import FileResult

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
    assert project["scripts"]["gradlint"] == "gradlint.cli:console_main"
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


# --- links: one declared home --------------------------------------------------------

URL_RE = re.compile(r"https?://[^\s)\"'`<>\]]+")
# Links of this project (as opposed to torch's issues, libcst's docs, ...).
OURS = re.compile(r"https?://(?:www\.)?(?:github\.com|gitlab\.com)/[^/\s]*gradlint", re.I)


def test_the_home_is_declared_once_and_about_spells_it():
    urls = PYPROJECT["project"]["urls"]
    assert urls == {about.HOME_LABEL: about.HOME}, (
        f"[project.urls] declares the home once; set about.HOME to {urls.get(about.HOME_LABEL)!r}"
    )


def test_every_link_to_the_project_starts_with_the_home():
    home = about.HOME
    wrong: list[str] = []
    literal_homes: list[str] = []
    for path in [*USER_FACING, ROOT / "pyproject.toml"]:
        text = path.read_text(encoding="utf-8")
        for url in URL_RE.findall(text):
            if OURS.match(url) and not (url == home or url.startswith(home + "/")):
                wrong.append(f"{path.relative_to(ROOT)}: {url}")
            if url.startswith(home) and path.suffix == ".py":
                literal_homes.append(str(path.relative_to(ROOT)))
    assert not wrong, wrong
    # In code, the home is spelled in about.py alone; everything else asks it.
    assert set(literal_homes) <= {"gradlint/about.py"}, literal_homes


def test_findings_sarif_and_rule_docs_link_to_the_home(tmp_path):
    from gradlint import engine
    from gradlint.output import sarif

    home = about.home()
    source = (ROOT / "fixtures" / "GL008").glob("bad_*.py").__next__().read_text()
    found = engine.lint_source(source, "bad.py")
    assert found
    for diagnostic in found:
        assert diagnostic.url == f"{home}/blob/main/docs/rules/{diagnostic.code}.md"
        # ... and the page it names is in the repository.
        assert (ROOT / "docs" / "rules" / f"{diagnostic.code}.md").is_file()
    buffer = io.StringIO()
    sarif.write([FileResult("bad.py", found, source=source)], buffer, ReportOptions())
    driver = json.loads(buffer.getvalue())["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == home
    for rule in driver["rules"]:
        assert rule["helpUri"] == about.rule_url(rule["id"])


def test_the_home_is_not_read_from_installed_metadata(tmp_path, monkeypatch):
    """The first finding's link costs no `importlib.metadata` read: the declared home
    is about.HOME (the test above keeps it equal to pyproject.toml's), whatever an
    installed distribution's metadata says."""
    from gradlint import engine

    info = tmp_path / "torch_gradlint-9.9.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch-gradlint\nVersion: 9.9\n"
        "Project-URL: Homepage, https://example.org/published/\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert about.home() == about.HOME
    rule = engine.ALL_RULES[0]
    assert rule.url() == f"{about.HOME}/blob/main/docs/rules/{rule.code}.md"


def test_rule_documentation_is_complete_offline(monkeypatch, capsys):
    """`gradlint rule CODE` prints the whole page from the package, no link needed."""
    for code in ("GL001", "GL008"):
        assert cli.main(["rule", code]) == 0
        out = capsys.readouterr().out
        page = (ROOT / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
        for heading in ("## What it does", "## Why is this bad?", "## Example"):
            assert heading in out and heading in page


# --- the test extra ------------------------------------------------------------------


def test_the_test_extra_brings_numpy_so_torch_imports_quietly():
    extra = PYPROJECT["project"]["optional-dependencies"]["test"]
    assert any(re.split(r"[<>=!~;\[ ]", dep)[0] == "numpy" for dep in extra)
    # What a run with that extra installed prints when torch loads: nothing.
    done = subprocess.run(
        [sys.executable, "-c", "import torch; torch.zeros(1).numpy()"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "NumPy" not in done.stderr and "numpy" not in done.stderr, done.stderr
