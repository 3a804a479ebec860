"""The command line end to end, through `main([...])`, on small projects in tmp_path.

The plumbing is tested with three tiny stand-in rules (so these tests do not move when the
real rules do); one test runs the real GL002 through the CLI.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import libcst as cst
import libcst.matchers as m
import pytest

from gradlint import cache as cache_module
from gradlint import cli, engine, fileio
from gradlint.diagnostics import Applicability, Edit, Fix
from gradlint.rules.base import Rule


class _CallRule(Rule):
    callee: str
    replacement: str | None = None

    def visit_Call(self, node: cst.Call) -> None:
        if not m.matches(node.func, m.Name(self.callee)):
            return
        fix = None
        if self.replacement is not None:
            start, end = self.context.position_of(node.func)
            fix = Fix(self.fix_title, (Edit(start, end, self.replacement),), self.fix_applicability)
        self.report(node, fix=fix)


class BadCall(_CallRule):
    """## What it does
    Flags calls to `bad()`.

    ## Why is this bad?
    Test rule.
    """

    code = "GL901"
    name = "bad-call"
    message = "`bad()` is bad"
    fix_title = "Call `good()` instead"
    fix_applicability = Applicability.SAFE
    trigger_tokens = ("bad",)
    callee, replacement = "bad", "good"


class WorseCall(_CallRule):
    """## What it does
    Flags calls to `worse()`, with an unsafe fix.
    """

    code = "GL902"
    name = "worse-call"
    message = "`worse()` is worse"
    fix_title = "Call `better()` instead"
    fix_applicability = Applicability.UNSAFE
    trigger_tokens = ("worse",)
    callee, replacement = "worse", "better"


class LoudCall(_CallRule):
    """## What it does
    Flags calls to `loud()`; there is no fix.
    """

    code = "GL903"
    name = "loud-call"
    message = "`loud()` is loud"
    trigger_tokens = ("loud",)
    callee = "loud"


FAKE_RULES = [BadCall, WorseCall, LoudCall]
LINE_RE = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<code>GL\d{3}) ", re.M)


@pytest.fixture
def project(tmp_path, monkeypatch, install_rules):
    """An empty project directory as the working directory, with the stand-in rules."""
    install_rules(FAKE_RULES)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(cli.OUTPUT_FORMAT_ENV, raising=False)
    monkeypatch.delenv(cli.CACHE_DIR_ENV, raising=False)
    return tmp_path


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def findings(text: str) -> list[tuple[str, int, str]]:
    return [(m["path"], int(m["line"]), m["code"]) for m in LINE_RE.finditer(text)]


class LintCounter:
    """Counts calls to engine.lint_source (in this process: use --jobs 1)."""

    def __init__(self, monkeypatch) -> None:
        self.paths: list[str] = []
        original = engine.lint_source

        def counting(source, path="-", config=None, **options):
            self.paths.append(path)
            return original(source, path, config, **options)

        monkeypatch.setattr(engine, "lint_source", counting)


# --- basics ---------------------------------------------------------------------------------


def test_findings_exit_1_clean_exit_0_and_exit_zero(project, capsys):
    write(project, {"a.py": "bad()\nloud()\n", "b.py": "fine()\n"})
    code, out, _ = run(capsys, "-j1", "a.py", "b.py")
    assert code == 1
    assert findings(out) == [("a.py", 1, "GL901"), ("a.py", 2, "GL903")]
    assert run(capsys, "-j1", "b.py")[0] == 0
    assert run(capsys, "-j1", "--exit-zero", "a.py")[0] == 0


def test_check_subcommand_and_default_path(project, capsys):
    write(project, {"pkg/a.py": "bad()\n"})
    code, out, _ = run(capsys, "check", "-j1")
    assert code == 1 and findings(out) == [(os.path.join("pkg", "a.py"), 1, "GL901")]


def test_no_python_files_is_a_warning_and_exit_0(project, capsys):
    code, out, err = run(capsys, "-j1", ".")
    assert code == 0 and "no Python files found" in err


def test_help_and_version(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for option in (
        "--select",
        "--ignore",
        "--extend-select",
        "--output-format",
        "--fix",
        "--unsafe-fixes",
        "--diff",
        "--fix-only",
        "--show-fixes",
        "--statistics",
        "--exit-zero",
        "--jobs",
        "--no-cache",
        "--cache-dir",
        "--stdin-filename",
        "--force-exclude",
        "--config",
        "exit status",
    ):
        assert option in out, option
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"gradlint {__import__('gradlint').__version__}"


def test_bad_usage_exits_2(project, capsys):
    assert run(capsys, "--jobs", "0")[0] == 2
    assert run(capsys, "--no-such-option")[0] == 2
    code, _, err = run(capsys, "-", "a.py")
    assert code == 2 and "stdin" in err


def test_python_dash_m_gradlint(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "gradlint", "--no-cache", "-j1", "a.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "All checks passed!" in proc.stdout


LEAF_UPDATES = "import torch\nw = torch.ones(3, requires_grad=True)\n" + "w += 1\n" * 3000


def test_the_command_writes_all_of_a_long_report_before_it_exits(tmp_path):
    # The command skips the interpreter's teardown (cli.console_main): the output must
    # still come out whole, with the exit status.
    (tmp_path / "a.py").write_text(LEAF_UPDATES, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "gradlint", "--isolated", "--no-cache", "-j1", "a.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 3002 and lines[-2] == "Found 3000 errors."
    assert lines[-1].startswith("3000 unsafe fixes available")
    assert proc.stderr == ""


def test_under_a_profiler_the_command_exits_as_usual(tmp_path):
    # cProfile (as coverage, a debugger) writes its report at exit, which os._exit skips
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "cProfile", "-m", "gradlint", "--isolated", "--no-cache", "a.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "All checks passed!" in proc.stdout and "function calls" in proc.stdout


def test_a_reader_that_leaves_early_ends_the_run_quietly(tmp_path):
    (tmp_path / "a.py").write_text(LEAF_UPDATES, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradlint", "--isolated", "--no-cache", "-j1", "a.py"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert b"GL002" in proc.stdout.readline()
    proc.stdout.close()  # `gradlint a.py | head -1`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert err == ""


# --- output formats -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["concise", "full", "json", "github", "sarif"])
def test_every_output_format_is_parseable(project, capsys, fmt):
    write(project, {"a.py": "x = 1\nbad()\n", "b.py": "loud()\n"})
    code, out, _ = run(capsys, "-j1", "--output-format", fmt, ".")
    assert code == 1
    expected = {("a.py", 2, "GL901"), ("b.py", 1, "GL903")}
    if fmt == "concise":
        assert set(findings(out)) == expected
    elif fmt == "full":
        assert "GL901" in out and "GL903" in out and "bad()" in out  # shows the source line
    elif fmt == "json":
        data = json.loads(out)
        got = {(os.path.basename(d["filename"]), d["location"]["row"], d["code"]) for d in data}
        assert got == expected
    elif fmt == "github":
        lines = [line for line in out.splitlines() if line.startswith("::error")]
        assert len(lines) == 2 and all("file=" in line for line in lines)
    else:
        sarif = json.loads(out)
        assert sarif["version"] == "2.1.0"
        results = sarif["runs"][0]["results"]
        assert sorted(r["ruleId"] for r in results) == ["GL901", "GL903"]


def test_output_format_from_environment_and_config(project, capsys, monkeypatch):
    write(project, {"a.py": "bad()\n"})
    monkeypatch.setenv(cli.OUTPUT_FORMAT_ENV, "json")
    code, out, _ = run(capsys, "-j1", "a.py")
    assert json.loads(out)[0]["code"] == "GL901"
    monkeypatch.setenv(cli.OUTPUT_FORMAT_ENV, "xml")
    code, _, err = run(capsys, "-j1", "a.py")
    assert code == 2 and "GRADLINT_OUTPUT_FORMAT" in err and "xml" in err
    monkeypatch.delenv(cli.OUTPUT_FORMAT_ENV)
    write(project, {"pyproject.toml": '[tool.gradlint]\noutput-format = "sarif"\n'})
    assert json.loads(run(capsys, "-j1", "a.py")[1])["version"] == "2.1.0"
    # The command line wins over the configuration.
    assert findings(run(capsys, "-j1", "--output-format", "concise", "a.py")[1])


def test_statistics(project, capsys):
    write(project, {"a.py": "bad()\nbad()\nloud()\n"})
    code, out, _ = run(capsys, "-j1", "--statistics", "a.py")
    assert code == 1
    rows = [line.split("\t") for line in out.splitlines() if "\t" in line]
    assert [(r[0].strip(), r[1].strip()) for r in rows] == [("2", "GL901"), ("1", "GL903")]
    data = json.loads(run(capsys, "-j1", "--statistics", "--output-format", "json", "a.py")[1])
    assert {row["code"]: row["count"] for row in data} == {"GL901": 2, "GL903": 1}


# --- selection and configuration -----------------------------------------------------------


def test_noqa_and_file_level_noqa(project, capsys):
    write(
        project,
        {
            "a.py": "bad()  # noqa: GL901\nloud()  # noqa\nbad()\n",
            "b.py": "# gradlint: noqa\nbad()\n",
        },
    )
    code, out, _ = run(capsys, "-j1", ".")
    assert findings(out) == [("a.py", 3, "GL901")]


def test_noqa_for_another_code_does_not_suppress(project, capsys):
    write(project, {"a.py": "bad()  # noqa: GL903\n"})
    code, out, _ = run(capsys, "-j1", ".")
    assert findings(out) == [("a.py", 1, "GL901")]


def test_select_ignore_and_extend_select_on_the_command_line(project, capsys):
    write(project, {"a.py": "bad()\nworse()\nloud()\n"})

    def codes(*args):
        return [code for _, _, code in findings(run(capsys, "-j1", *args, "a.py")[1])]

    assert codes() == ["GL901", "GL902", "GL903"]
    assert codes("--select", "GL901,GL903") == ["GL901", "GL903"]
    assert codes("--select", "GL90", "--ignore", "GL902") == ["GL901", "GL903"]
    assert codes("--select", "GL901", "--ignore", "GL") == ["GL901"]  # more specific wins
    assert codes("--select", "GL901", "--extend-select", "GL903") == ["GL901", "GL903"]
    assert codes("--select", "GL901", "--select", "GL902") == ["GL901", "GL902"]


def test_config_file_selection_and_command_line_precedence(project, capsys):
    write(
        project,
        {
            "pyproject.toml": '[tool.gradlint]\nselect = ["GL901", "GL902"]\nignore = ["GL902"]\n',
            "a.py": "bad()\nworse()\nloud()\n",
        },
    )

    def codes(*args):
        return [code for _, _, code in findings(run(capsys, "-j1", *args, "a.py")[1])]

    assert codes() == ["GL901"]
    assert codes("--select", "GL903") == ["GL903"]  # a new select replaces the file's
    assert codes("--extend-select", "GL902") == ["GL901", "GL902"]  # re-enables its ignore
    assert codes("--ignore", "GL9") == []  # drops the file's more specific select
    assert codes("--isolated") == ["GL901", "GL902", "GL903"]


def test_per_file_ignores(project, capsys):
    write(
        project,
        {
            "pyproject.toml": '[tool.gradlint.per-file-ignores]\n"tests/*" = ["GL901"]\n"gen_*.py" = ["GL9"]\n',
            "tests/test_a.py": "bad()\nloud()\n",
            "src/gen_b.py": "bad()\n",
            "src/c.py": "bad()\n",
        },
    )
    code, out, _ = run(capsys, "-j1", ".")
    assert findings(out) == [
        (os.path.join("src", "c.py"), 1, "GL901"),
        (os.path.join("tests", "test_a.py"), 2, "GL903"),
    ]
    # Matching is anchored at the config's directory, not the working directory.
    os.chdir(project / "src")
    code, out, _ = run(capsys, "-j1", "..")
    assert [code for *_, code in findings(out)] == ["GL901", "GL903"]


def test_config_is_found_above_the_first_path(project, capsys):
    write(
        project,
        {
            "pyproject.toml": '[tool.gradlint]\nselect = ["GL903"]\n',
            "deep/er/a.py": "bad()\nloud()\n",
        },
    )
    os.chdir(project / "deep")
    code, out, _ = run(capsys, "-j1", "er")
    assert [code for *_, code in findings(out)] == ["GL903"]
    write(project, {"other.toml": 'select = ["GL901"]\n'})
    code, out, _ = run(capsys, "-j1", "--config", str(project / "other.toml"), "er")
    assert [code for *_, code in findings(out)] == ["GL901"]


@pytest.mark.parametrize(
    ("config", "args", "message"),
    [
        ('[tool.gradlint]\nselct = ["GL901"]\n', [], "did you mean 'select'"),
        ('[tool.gradlint]\nselect = "GL901"\n', [], "expected a list of strings"),
        ('[tool.gradlint]\nselect = ["GL999"]\n', [], "unknown rule selector 'GL999'"),
        ("[tool.gradlint\n", [], "not valid TOML"),
        ("", ["--select", "GL901,NOPE"], "--select: unknown rule selector 'NOPE'"),
        ("", ["--ignore", "GL9999"], "--ignore: unknown rule selector"),
        ("", ["--output-format", "xml"], "unknown format 'xml'"),
        ("", ["--config", "missing.toml"], "not found"),
    ],
)
def test_configuration_errors_exit_2(project, capsys, config, args, message):
    write(project, {"pyproject.toml": config, "a.py": "bad()\n"})
    code, out, err = run(capsys, "-j1", *args, "a.py")
    assert code == 2
    assert message in err and err.startswith("gradlint: error:")
    assert out == ""


# --- files ------------------------------------------------------------------------------------


def test_gitignore_and_excludes_are_honoured(project, capsys):
    write(
        project,
        {
            ".gitignore": "generated/\n*_tmp.py\n",
            "pyproject.toml": '[tool.gradlint]\nextend-exclude = ["legacy"]\n',
            "a.py": "bad()\n",
            "generated/g.py": "bad()\n",
            "x_tmp.py": "bad()\n",
            "legacy/old.py": "bad()\n",
            ".venv/lib/v.py": "bad()\n",
        },
    )
    code, out, _ = run(capsys, "-j1", ".")
    assert findings(out) == [("a.py", 1, "GL901")]
    # Named explicitly, an excluded file is linted, unless --force-exclude.
    assert findings(run(capsys, "-j1", "legacy/old.py")[1]) == [("legacy/old.py", 1, "GL901")]
    assert run(capsys, "-j1", "--force-exclude", "legacy/old.py")[0] == 0
    assert run(capsys, "-j1", "--force-exclude", "x_tmp.py")[0] == 0
    code, out, _ = run(capsys, "-j1", "--no-respect-gitignore", ".")
    assert len(findings(out)) == 3
    code, out, _ = run(capsys, "-j1", "--extend-exclude", "a.py", ".")
    assert code == 0


def test_broken_inputs_each_get_one_line_and_the_run_goes_on(project, capsys, monkeypatch):
    write(
        project,
        {
            "good.py": "bad()\n",
            "syntax.py": "bad(\n",
            "latin1.py": "bad()\n# caf\xe9\n".encode("latin-1"),
            "empty.py": "",
            "unreadable.py": "bad()\n",
        },
    )
    (project / "loop.py").symlink_to(project / "loop.py")
    (project / "dirloop").symlink_to(project, target_is_directory=True)
    unreadable = str(project / "unreadable.py")

    def fake_open(path, *args, **kwargs):
        if str(path) == unreadable:
            raise PermissionError(13, "Permission denied", str(path))
        return open(path, *args, **kwargs)

    # Sources are read by gradlint.fileio; `open` there is the one place to fail.
    monkeypatch.setattr(fileio, "open", fake_open, raising=False)
    for fmt in ("concise", "json"):
        code, out, err = run(capsys, "-j1", "--no-cache", "--output-format", fmt, ".")
        assert code == 1
        lines = [line for line in err.splitlines() if line]
        by_file = {line.split(":")[0]: line for line in lines}
        assert len(lines) == len(by_file) == 4, err  # one line per bad path
        assert "SyntaxError" in by_file["syntax.py"] and ":1:" in by_file["syntax.py"]
        assert "utf-8" in by_file["latin1.py"].lower()
        assert "symbolic link loop" in by_file["loop.py"]
        assert "permission denied" in by_file["unreadable.py"].lower()
        # A link to a directory is not followed while walking: no loop, nothing to say.
        assert "dirloop" not in err
        if fmt == "concise":
            assert findings(out) == [("good.py", 1, "GL901")]
        else:
            assert [d["code"] for d in json.loads(out) if d["code"]] == ["GL901"]


def test_missing_path_is_an_error_line(project, capsys):
    write(project, {"a.py": "x = 1\n"})
    code, out, err = run(capsys, "-j1", "a.py", "nope.py")
    assert code == 1
    assert "nope.py" in err and "no such file" in err


def test_file_errors_exit_0_with_exit_zero(project, capsys):
    write(project, {"syntax.py": "bad(\n"})
    assert run(capsys, "-j1", "--exit-zero", "syntax.py")[0] == 0


# --- stdin ------------------------------------------------------------------------------------


def feed_stdin(monkeypatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))


def test_stdin(project, capsys, monkeypatch):
    feed_stdin(monkeypatch, "bad()\n")
    code, out, _ = run(capsys, "-")
    assert code == 1 and findings(out) == [("-", 1, "GL901")]
    feed_stdin(monkeypatch, "x = 1\nbad()\n")
    code, out, _ = run(capsys, "-", "--stdin-filename", "pkg/mod.py")
    assert findings(out) == [("pkg/mod.py", 2, "GL901")]


def test_stdin_filename_matches_per_file_ignores_and_force_exclude(project, capsys, monkeypatch):
    write(
        project,
        {
            "pyproject.toml": '[tool.gradlint]\nextend-exclude = ["gen"]\n[tool.gradlint.per-file-ignores]\n"tests/*" = ["GL901"]\n'
        },
    )
    feed_stdin(monkeypatch, "bad()\n")
    assert run(capsys, "-", "--stdin-filename", "tests/t.py")[0] == 0
    feed_stdin(monkeypatch, "bad()\n")
    assert run(capsys, "-", "--stdin-filename", "src/t.py")[0] == 1
    feed_stdin(monkeypatch, "bad()\n")
    assert run(capsys, "-", "--stdin-filename", "gen/t.py")[0] == 1
    feed_stdin(monkeypatch, "bad()\n")
    assert run(capsys, "-", "--stdin-filename", "gen/t.py", "--force-exclude")[0] == 0


def test_stdin_fix_prints_the_fixed_source(project, capsys, monkeypatch):
    feed_stdin(monkeypatch, "bad()\nloud()\n")
    code, out, err = run(capsys, "-", "--fix")
    assert out == "good()\nloud()\n"
    assert code == 1 and "GL903" in err and "GL901" not in err


# --- fixes ------------------------------------------------------------------------------------


def test_diff_writes_nothing_and_exits_1(project, capsys):
    source = "bad()\nworse()\n"
    write(project, {"a.py": source, "b.py": "fine()\n"})
    before = {p.name: p.stat().st_mtime_ns for p in project.iterdir()}
    code, out, err = run(capsys, "-j1", "--diff", ".")
    assert code == 1
    assert "--- a/a.py\n+++ b/a.py\n" in out
    assert "-bad()\n+good()\n" in out and "better" not in out
    assert "Would fix 1 error (1 unsafe fix available" in err
    assert (project / "a.py").read_text() == source
    assert {p.name: p.stat().st_mtime_ns for p in project.iterdir()} == before
    code, out, _ = run(capsys, "-j1", "--diff", "--unsafe-fixes", "a.py")
    assert "+better()\n" in out and (project / "a.py").read_text() == source
    assert run(capsys, "-j1", "--diff", "b.py") == (0, "", "")


def test_diff_of_a_name_with_a_space_applies_with_gnu_patch(project, capsys):
    """`diff -u` ends each header's name with a tab; without it GNU patch reads the name
    only up to the first space."""
    import shutil
    import subprocess

    write(project, {"my file.py": "bad()\n"})
    code, out, _ = run(capsys, "-j1", "--diff", "--unsafe-fixes", "my file.py")
    assert code == 1 and out.startswith("--- a/my file.py\t\n+++ b/my file.py\t\n@@")
    if shutil.which("patch") is None:
        return
    applied = subprocess.run(
        ["patch", "-p1", "--batch"], input=out, text=True, capture_output=True, cwd=project
    )
    assert applied.returncode == 0, applied.stdout
    assert (project / "my file.py").read_text() == "good()\n"
    assert run(capsys, "-j1", "--diff", "my file.py")[0] == 0


def test_diff_and_fix_only_say_when_only_unsafe_fixes_exist(project, capsys):
    write(project, {"a.py": "worse()\nworse()\n", "b.py": "bad()\nworse()\n"})
    code, out, err = run(capsys, "-j1", "--diff", "a.py")
    # No diff to show, but the user learns why and what would show one.
    assert (code, out) == (0, "")
    assert (
        err
        == "No findings would be fixed (2 unsafe fixes available with `--diff --unsafe-fixes`).\n"
    )
    code, out, err = run(capsys, "-j1", "--diff", "b.py")
    assert code == 1 and "+good()" in out
    assert err == "Would fix 1 error (1 unsafe fix available with `--diff --unsafe-fixes`).\n"
    # With --unsafe-fixes nothing is hidden, so no hint.
    code, out, err = run(capsys, "-j1", "--diff", "--unsafe-fixes", "a.py")
    assert code == 1 and err == "Would fix 2 errors.\n"
    code, out, _ = run(capsys, "-j1", "--fix-only", "a.py")
    assert code == 0
    assert out == "No findings fixed (2 unsafe fixes available with `--fix-only --unsafe-fixes`).\n"
    assert (project / "a.py").read_text() == "worse()\nworse()\n"
    code, out, _ = run(capsys, "-j1", "--fix-only", "--show-fixes", "b.py")
    assert "1 \u00d7 GL901 (bad-call)" in out
    assert out.endswith("1 unsafe fix available with `--fix-only --unsafe-fixes`.\n")
    # --fix's own report already ends with the hint.
    write(project, {"a.py": "worse()\n"})
    code, out, _ = run(capsys, "-j1", "--fix", "a.py")
    assert out.endswith("1 unsafe fix available with `--fix --unsafe-fixes`.\n")


def test_statistics_marks_the_rules_fix_would_fix(project, capsys):
    write(project, {"a.py": "bad()\nworse()\nloud()\n"})

    def markers(*options: str) -> dict[str, str]:
        out = run(capsys, "-j1", "--statistics", *options, "a.py")[1]
        rows = [line.split("\t") for line in out.splitlines() if "\t" in line]
        return {row[1].strip(): row[2][:3] for row in rows}

    assert markers() == {"GL901": "[*]", "GL902": "[ ]", "GL903": "[ ]"}
    assert markers("--unsafe-fixes") == {"GL901": "[*]", "GL902": "[*]", "GL903": "[ ]"}


def test_check_never_writes_source_files(project, capsys):
    write(project, {"a.py": "bad()\n"})
    run(capsys, "-j1", "--no-cache", ".")
    assert (project / "a.py").read_text() == "bad()\n"
    assert not (project / ".gradlint_cache").exists()


def test_fix_applies_safe_fixes_only_unless_unsafe(project, capsys):
    write(project, {"a.py": "bad()\nworse()\nloud()\n", "b.py": "worse()\n"})
    code, out, _ = run(capsys, "-j1", "--fix", "a.py")
    assert (project / "a.py").read_text() == "good()\nworse()\nloud()\n"
    assert code == 1
    assert [c for *_, c in findings(out)] == ["GL902", "GL903"]
    assert "1 fixed" in out
    code, out, _ = run(capsys, "-j1", "--fix", "--unsafe-fixes", "b.py")
    assert (project / "b.py").read_text() == "better()\n" and code == 0


def test_fix_keeps_bom_and_line_endings(project, capsys):
    write(project, {"a.py": b"\xef\xbb\xbfbad()\r\nx = 1\r\n"})
    run(capsys, "-j1", "--fix", "a.py")
    assert (project / "a.py").read_bytes() == b"\xef\xbb\xbfgood()\r\nx = 1\r\n"


def test_fix_only_and_show_fixes(project, capsys):
    write(project, {"a.py": "bad()\nbad()\nloud()\n"})
    code, out, _ = run(capsys, "-j1", "--fix-only", "--show-fixes", "a.py")
    assert code == 0
    assert "Fixed 2 errors:" in out and "2 \u00d7 GL901 (bad-call)" in out
    assert "GL903" not in out  # --fix-only does not report what remains
    assert (project / "a.py").read_text() == "good()\ngood()\nloud()\n"
    code, out, _ = run(capsys, "-j1", "--fix-only", "a.py")
    assert code == 0 and "No findings fixed." in out


def test_show_fixes_without_fix_shows_each_fix_title(project, capsys):
    write(project, {"a.py": "bad()\n"})
    code, out, _ = run(capsys, "-j1", "--show-fixes", "a.py")
    assert "Call `good()` instead" in out and (project / "a.py").read_text() == "bad()\n"


# --- cache ------------------------------------------------------------------------------------


def test_second_run_is_served_from_the_cache(project, capsys, monkeypatch):
    write(project, {"a.py": "bad()\n", "b.py": "loud()\n", "c.py": "fine()\n", "s.py": "bad(\n"})
    counter = LintCounter(monkeypatch)
    first = run(capsys, "-j1", ".")
    assert sorted(counter.paths) == ["a.py", "b.py", "c.py", "s.py"]
    assert (
        (project / ".gradlint_cache" / "CACHEDIR.TAG")
        .read_text()
        .startswith("Signature: 8a477f597d28d172789f06886806bc55")
    )
    counter.paths.clear()
    second = run(capsys, "-j1", ".")
    assert counter.paths == []  # nothing linted again
    assert second == first  # same findings, same syntax error line, same exit status
    # The full format needs the source of cached findings too.
    assert "bad()" in run(capsys, "-j1", "--output-format", "full", "a.py")[1]
    # An edited file is linted again, the others are not.
    write(project, {"c.py": "loud()\n"})
    code, out, _ = run(capsys, "-j1", ".")
    assert counter.paths == ["c.py"]
    assert ("c.py", 1, "GL903") in findings(out)
    # A different selection is a different key.
    counter.paths.clear()
    run(capsys, "-j1", "--select", "GL901", ".")
    assert sorted(counter.paths) == ["a.py", "b.py", "c.py", "s.py"]


def test_no_cache_and_fixing_do_not_use_the_cache(project, capsys, monkeypatch):
    write(project, {"a.py": "bad()\n"})
    run(capsys, "-j1", "a.py")
    counter = LintCounter(monkeypatch)
    run(capsys, "-j1", "--no-cache", "a.py")
    assert counter.paths == ["a.py"]
    run(capsys, "-j1", "--diff", "a.py")
    assert counter.paths[1:] and set(counter.paths) == {"a.py"}


def test_cache_dir_option_and_environment(project, capsys, monkeypatch):
    write(project, {"a.py": "bad()\n"})
    run(capsys, "-j1", "--cache-dir", "custom", "a.py")
    assert (project / "custom" / "CACHEDIR.TAG").exists()
    monkeypatch.setenv(cli.CACHE_DIR_ENV, str(project / "fromenv"))
    run(capsys, "-j1", "a.py")
    assert (project / "fromenv" / "CACHEDIR.TAG").exists()
    assert not (project / ".gradlint_cache").exists()


def test_unwritable_cache_warns_once_and_the_run_goes_on(project, capsys):
    write(project, {"a.py": "bad()\n", "b.py": "bad()\n", "blocker": "a file, not a folder"})
    code, out, err = run(capsys, "-j1", "--cache-dir", "blocker/cache", ".")
    assert code == 1 and len(findings(out)) == 2
    assert err.count("cannot write the cache") == 1


def test_corrupt_or_stale_cache_is_ignored(project, capsys, monkeypatch):
    write(project, {"a.py": "bad()\n"})
    run(capsys, "-j1", "a.py")
    [cache_file] = (project / ".gradlint_cache").glob("*/*.json")
    cache_file.write_text("{not json", encoding="utf-8")
    counter = LintCounter(monkeypatch)
    assert findings(run(capsys, "-j1", "a.py")[1]) == [("a.py", 1, "GL901")]
    assert counter.paths == ["a.py"]
    # A different gradlint (version or sources) starts cold.
    monkeypatch.setattr(cache_module, "_FINGERPRINT", "another gradlint")
    run(capsys, "-j1", "a.py")
    assert counter.paths == ["a.py", "a.py"]


# --- parallel ---------------------------------------------------------------------------------


def test_jobs_2_gives_the_same_results_as_jobs_1(project, capsys):
    files = {f"m{i}.py": "x = 1\n" + "bad()\n" * (i % 3) + "loud()\n" * (i % 2) for i in range(8)}
    files["broken.py"] = "bad(\n"
    write(project, files)
    one = run(capsys, "--no-cache", "-j1", "--output-format", "json", ".")
    two = run(capsys, "--no-cache", "-j2", "--output-format", "json", ".")
    assert one == two
    assert len(json.loads(one[1])) == 12  # 7 bad() + 4 loud() + the syntax error


def test_jobs_2_fixes_files(project, capsys):
    write(project, {f"m{i}.py": "bad()\n" for i in range(4)})
    code, _, _ = run(capsys, "--fix", "-j2", ".")
    assert code == 0
    assert {p.read_text() for p in project.glob("m*.py")} == {"good()\n"}


def test_internal_errors_cost_one_file(project, capsys, monkeypatch):
    write(project, {"a.py": "bad()\n", "b.py": "bad()\n"})
    original = engine.lint_source

    def exploding(source, path="-", config=None, **options):
        if path == "a.py":
            raise ValueError("boom")
        return original(source, path, config, **options)

    monkeypatch.setattr(engine, "lint_source", exploding)
    code, out, err = run(capsys, "-j1", "--no-cache", ".")
    assert code == 1 and findings(out) == [("b.py", 1, "GL901")]
    assert "a.py" in err and "internal error: ValueError: boom" in err


def test_only_files_with_findings_keep_their_source():
    clean = cli.process(cli.Task("c.py", None, b"fine()\n"), engine.DEFAULT_CONFIG, "check", False)
    assert clean.result.source is None


# --- rule and lsp -----------------------------------------------------------------------------


def test_rule_documentation_and_listing(project, capsys):
    code, out, _ = run(capsys, "rule", "GL901")
    assert code == 0 and "bad-call (GL901)" in out and "## What it does" in out
    assert run(capsys, "rule", "gl901")[0] == 0
    assert run(capsys, "rule", "bad-call")[0] == 0
    code, out, _ = run(capsys, "rule", "--all")
    # The autograd rules, then (after a blank line) the meta rules such as GL100.
    lines = out.split("\n\n")[0].splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["GL901", "bad-call"],
        ["GL902", "worse-call"],
        ["GL903", "loud-call"],
    ]
    assert "Flags calls to `bad()`." in lines[0]
    data = json.loads(run(capsys, "rule", "--all", "--output-format", "json")[1])
    assert [d["code"] for d in data if not d["explicit_only"]] == ["GL901", "GL902", "GL903"]


def test_unknown_rule_exits_2(project, capsys):
    code, out, err = run(capsys, "rule", "GL999")
    assert code == 2 and "unknown rule 'GL999'" in err and out == ""
    assert run(capsys, "rule")[0] == 2


def test_lsp_without_the_extra(monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "gradlint.lsp", raising=False)
    monkeypatch.setitem(sys.modules, "pygls", None)
    monkeypatch.setitem(sys.modules, "lsprotocol", None)
    code, out, err = run(capsys, "lsp")
    assert code == 2
    assert cli.LSP_MISSING in err


def test_lsp_calls_the_server(monkeypatch, capsys):
    import types

    calls = []
    fake = types.ModuleType("gradlint.lsp")
    fake.main = lambda argv=None: calls.append(argv) or 0
    monkeypatch.setitem(sys.modules, "gradlint.lsp", fake)
    assert run(capsys, "lsp", "--stdio")[0] == 0
    assert calls == [["--stdio"]]


# --- the real rules ---------------------------------------------------------------------------


def test_real_gl002_through_the_cli(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"train.py": "import torch\nw = torch.ones(3, requires_grad=True)\nw += 1\n"})
    code, out, _ = run(capsys, "--no-cache", "-j1", "train.py")
    assert code == 1 and findings(out) == [("train.py", 3, "GL002")]
    code, out, _ = run(capsys, "rule", "GL002")
    assert code == 0 and "## What it does" in out


def test_a_file_that_cannot_be_written_is_one_error(project, capsys, monkeypatch):
    write(project, {"a.py": "bad()\n", "b.py": "bad()\n"})
    target = str(project / "a.py")
    original = os.replace

    def replace(source, destination):
        if str(destination) == target:
            raise PermissionError(13, "Permission denied", str(destination))
        return original(source, destination)

    # Fixes are written to a temporary file renamed over the original.
    monkeypatch.setattr(os, "replace", replace)
    code, out, err = run(capsys, "-j1", "--fix", ".")
    assert code == 1
    assert "a.py:1:1: error: cannot write: permission denied" in err
    assert (project / "a.py").read_text() == "bad()\n"
    assert (project / "b.py").read_text() == "good()\n"
    assert "1 fixed" in out


def test_a_worker_that_dies_costs_only_its_file(project, capsys, monkeypatch):
    write(project, {f"m{i}.py": "bad()\n" for i in range(6)})
    write(project, {"crash.py": "bad()\n"})
    original = engine.lint_source
    parent = os.getpid()

    def dying(source, path="-", config=None, **options):
        if path == "crash.py" and os.getpid() != parent:
            os._exit(1)  # only ever in a worker: the test process must survive
        return original(source, path, config, **options)

    monkeypatch.setattr(engine, "lint_source", dying)
    code, out, err = run(capsys, "--no-cache", "-j2", ".")
    assert code == 1
    assert sorted(p for p, *_ in findings(out)) == [f"m{i}.py" for i in range(6)]
    assert err.count("\n") == 1 and "crash.py" in err and cli.WORKER_DIED in err


def test_diff_of_a_file_whose_name_is_not_utf8(tmp_path):
    """The diff header escapes the name as every format does; the report comes out."""
    import subprocess
    import sys

    (tmp_path / os.fsdecode(b"bad\xff.py")).write_bytes(
        b"import torch\n\nwith torch.no_grad:\n    pass\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "gradlint", "--diff", "."],
        cwd=tmp_path,
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    assert done.returncode == 1, done.stderr
    assert b"--- a/bad\\xff.py" in done.stdout
    assert b"+with torch.no_grad():" in done.stdout


def test_a_run_collects_cyclic_garbage_less_often_and_gives_the_setting_back(
    tmp_path, monkeypatch, capsys
):
    import gc

    seen = []
    real_run_check = cli.run_check

    def spy(args, console):
        seen.append(gc.get_threshold())
        return real_run_check(args, console)

    monkeypatch.setattr(cli, "run_check", spy)
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    before = gc.get_threshold()
    try:
        gc.set_threshold(123, 4, 5)
        assert cli.main(["--no-cache", str(tmp_path / "a.py")]) == 0
        assert gc.get_threshold() == (123, 4, 5)
    finally:
        gc.set_threshold(*before)
    assert seen == [(cli._LINT_GC_THRESHOLD, 4, 5)]
