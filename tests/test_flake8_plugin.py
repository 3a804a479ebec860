"""The flake8 front reports what the engine reports, with flake8's columns, and stays out
of the way: no parse when no GL code can be reported, no exception ever."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from flake8.main.cli import main as flake8_main

import gradlint.engine
from gradlint.config import load_settings
from gradlint.diagnostics import Applicability, Edit, Fix
from gradlint.engine import lint_file
from gradlint.flake8_plugin import GradlintChecker
from gradlint.rules.base import Rule

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
FORMAT = "%(path)s|%(row)d|%(col)d|%(code)s|%(text)s"


class AugAddRule(Rule):
    """## What it does
    Flags `x += y` (a stand-in rule for testing the fronts' plumbing)."""

    code = "GL901"
    name = "test-aug-add"
    message = "augmented addition"
    fix_title = "Rewrite as a plain assignment"
    trigger_tokens = ("+=",)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if not isinstance(node.operator, cst.AddAssign):
            return
        target = self.context.module.code_for_node(node.target)
        value = self.context.module.code_for_node(node.value)
        start, end = self.context.position_of(node)
        edit = Edit(start, end, f"{target} = {target} + {value}")
        self.report(node, fix=Fix(self.fix_title, (edit,), Applicability.UNSAFE))


class ExplodingRule(Rule):
    """## What it does
    Raises on every call (a stand-in for a rule bug)."""

    code = "GL902"
    name = "test-exploding"
    message = "never reported"
    trigger_tokens = ("(",)

    def visit_Call(self, node: cst.Call) -> None:
        raise ValueError("rule bug")


@pytest.fixture(autouse=True)
def fresh_plugin_state(monkeypatch):
    # parse_options stores flake8's selection on the class; each test starts unparsed.
    monkeypatch.setattr(GradlintChecker, "_flake8_selected", None)


@pytest.fixture
def test_rules(install_rules):
    install_rules([AugAddRule, ExplodingRule])


def run_flake8(capsys, *args: str) -> tuple[list[tuple[str, int, int, str]], str]:
    """flake8 in this process (so monkeypatched rules apply), one job, no config files."""
    flake8_main(["--isolated", "--jobs=1", f"--format={FORMAT}", *args])
    captured = capsys.readouterr()
    rows = []
    for line in captured.out.splitlines():
        path, row, col, code, _text = line.split("|", 4)
        rows.append((path, int(row), int(col), code))
    return rows, captured.err


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_flake8_reports_engine_findings_with_one_based_code_point_columns(
    tmp_path, capsys, test_rules
):
    # Non-ASCII text before the finding: a byte or UTF-16 column would differ from the
    # code-point column the CLI prints.
    path = write(tmp_path, "mod.py", 's = "é😋"; w = 1; w += 1\nv = 2\nv += s\n')
    rows, err = run_flake8(capsys, "--select", "GL901", str(path))
    assert err == ""
    engine = lint_file(path).diagnostics
    assert rows == [(str(path), d.start.line, d.start.column + 1, d.code) for d in engine]
    assert rows == [
        (str(path), 1, len('s = "é😋"; w = 1; ') + 1, "GL901"),
        (str(path), 3, 1, "GL901"),
    ]


def test_plugin_yields_flake8_tuples_directly(test_rules):
    lines = ["x = 1\n", "x += 2\n"]
    results = list(GradlintChecker(None, "mod.py", lines).run())
    assert results == [(2, 0, "GL901 augmented addition [error, once]", GradlintChecker)]


def test_noqa_for_the_reported_code_hides_it_and_other_codes_do_not(tmp_path, capsys, test_rules):
    path = write(
        tmp_path,
        "mod.py",
        """\
        x = 1
        x += 1  # noqa: GL901
        x += 2  # noqa: E501
        x += 3  # noqa
        x += 4  # noqa:GL9
        x += 5
        """,
    )
    rows, _ = run_flake8(capsys, "--select", "GL", str(path))
    assert [row[1] for row in rows] == [3, 6]
    assert [d.start.line for d in lint_file(path).diagnostics] == [3, 6]


def test_noqa_for_another_gl_code_does_not_hide(tmp_path, capsys, test_rules):
    path = write(tmp_path, "mod.py", "x = 1\nx += 1  # noqa: GL001\n")
    rows, _ = run_flake8(capsys, "--select", "GL", str(path))
    assert [row[1] for row in rows] == [2]
    assert [d.start.line for d in lint_file(path).diagnostics] == [2]


@pytest.mark.parametrize(
    "options",
    [
        ["--select", "E9"],
        ["--ignore", "G"],
        ["--extend-ignore", "GL"],
        ["--select", "GL0"],
    ],
    ids=["select-E9", "ignore-G", "extend-ignore-GL", "select-other-family"],
)
def test_nothing_is_parsed_when_no_gl_code_can_be_reported(
    tmp_path, capsys, monkeypatch, test_rules, options
):
    calls = []
    monkeypatch.setattr(gradlint.engine, "lint_source", lambda *a, **k: calls.append(a) or [])
    path = write(tmp_path, "mod.py", "x = 1\nx += 1\n")
    rows, _ = run_flake8(capsys, *options, str(path))
    assert not [row for row in rows if row[3].startswith("GL")]
    assert calls == []


def test_default_selection_includes_gl(tmp_path, capsys, test_rules):
    # flake8 selects every installed plugin's codes by default (extended_default_select).
    path = write(tmp_path, "mod.py", "x = 1\nx += 1\n")
    rows, _ = run_flake8(capsys, str(path))
    assert ("GL901", 2) in [(row[3], row[1]) for row in rows]


def test_rules_flake8_would_discard_are_not_run(tmp_path, capsys, test_rules):
    # GL902 raises whenever it runs; selecting only GL901 must not run it at all.
    path = write(tmp_path, "mod.py", "x = f(1)\nx += 1\n")
    rows, err = run_flake8(capsys, "--select", "GL901", str(path))
    assert rows == [(str(path), 2, 1, "GL901")]
    assert err == ""


def test_internal_error_is_one_stderr_note_without_traceback(tmp_path, capsys, test_rules):
    path = write(tmp_path, "mod.py", "x = f(1)\nx += 1\n")
    rows, err = run_flake8(capsys, "--select", "GL", str(path))
    assert rows == []
    assert err.count("\n") == 1
    assert err.startswith(f"gradlint: internal error on {path}: ValueError: rule bug")
    assert "Traceback" not in err


def test_source_libcst_cannot_parse_yields_nothing(test_rules):
    assert list(GradlintChecker(None, "bad.py", ["x +=\n"]).run()) == []


def test_syntax_error_leaves_flake8_its_e999(tmp_path, capsys, test_rules):
    path = write(tmp_path, "bad.py", "x = (\n")
    rows, err = run_flake8(capsys, str(path))
    assert [row[3] for row in rows] == ["E999"]
    assert err == ""


def test_gradlint_configuration_applies_under_flake8(tmp_path, capsys, test_rules):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.gradlint]\nper-file-ignores = { "skipped_*.py" = ["GL901"] }\n', encoding="utf-8"
    )
    kept = write(tmp_path, "kept.py", "x = 1\nx += 1\n")
    skipped = write(tmp_path, "skipped_one.py", "x = 1\nx += 1\n")
    rows, err = run_flake8(capsys, "--select", "GL901", str(kept), str(skipped))
    assert err == ""
    assert rows == [(str(kept), 2, 1, "GL901")]


def test_plugin_does_not_import_the_engine_when_gl_is_off(tmp_path):
    # Importing the engine means importing LibCST (~0.2 s): a flake8 run that cannot
    # report GL must not pay for it.
    path = write(tmp_path, "mod.py", "x = 1\n")
    script = (
        "import sys; from flake8.main.cli import main;"
        f"main(['--isolated', '--jobs=1', '--select', 'E9', {str(path)!r}]);"
        "print(sorted(m for m in ('gradlint.engine', 'libcst') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


# --- against the real rules (skipped until they are registered) ---------------------


def _fixture_files() -> list[Path]:
    return sorted(FIXTURES.glob("GL*/*.py"))


def test_flake8_matches_the_engine_on_the_fixtures(monkeypatch):
    monkeypatch.chdir(REPO)
    files = [f for f in _fixture_files() if not f.name.endswith(".fixed.py")]
    if not files:
        pytest.skip("no fixtures yet")
    out = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "GL", f"--format={FORMAT}"]
        + [str(f.relative_to(REPO)) for f in files],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert out.stderr == ""
    flake8_rows = set()
    for line in out.stdout.splitlines():
        path, row, col, code, _ = line.split("|", 4)
        flake8_rows.add((path, int(row), int(col), code))
    # The configuration `gradlint check` would use here.
    config = load_settings(REPO).config
    engine_rows = set()
    for f in files:
        relative = str(f.relative_to(REPO))
        result = lint_file(relative, config)
        assert result.error is None, result.error
        engine_rows.update(
            (relative, d.start.line, d.start.column + 1, d.code) for d in result.diagnostics
        )
    assert engine_rows, "the fixtures' bad files should produce findings"
    assert flake8_rows == engine_rows


def test_real_rule_and_noqa_through_the_flake8_command(tmp_path):
    snippet = "import torch\nw = torch.ones(3, requires_grad=True)\nw += 1\n"
    flagged = write(tmp_path, "flagged.py", snippet)
    hidden = write(tmp_path, "hidden.py", snippet.replace("w += 1", "w += 1  # noqa: GL002"))
    out = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "GL", f"--format={FORMAT}"]
        + [str(flagged), str(hidden)],
        capture_output=True,
        text=True,
    )
    assert [line.split("|")[:4] for line in out.stdout.splitlines()] == [
        [str(flagged), "3", "1", "GL002"]
    ]


def test_disable_noqa_shows_what_noqa_hides(tmp_path, capsys, test_rules):
    path = write(tmp_path, "mod.py", "x = 1\nx += 1  # noqa\n")
    rows, _ = run_flake8(capsys, "--select", "GL", str(path))
    assert rows == []
    rows, _ = run_flake8(capsys, "--select", "GL", "--disable-noqa", str(path))
    assert [row[1] for row in rows] == [2]
