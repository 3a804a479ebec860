"""Suppressions at scale: --add-noqa, GL100 unused-noqa and its fix, and the baseline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gradlint import cli, engine, suppressions
from gradlint.config import Config
from gradlint.fixes import fix_source

ROOT = Path(__file__).resolve().parent.parent
LEAF = "import torch\nw = torch.ones(3, requires_grad=True)\n"


def lint(source: str, cfg: Config | None = None) -> list[tuple[int, str]]:
    return [(d.start.line, d.code) for d in engine.lint_source(source, "m.py", cfg)]


def added(source: str) -> str:
    new, _ = suppressions.add_noqa(source, engine.lint_source(source, "m.py"))
    return new


WITH_PREVIEW = Config(preview=True)  # fixtures of preview rules included
# Preview rules on too: GL100 judges only codes of rules that run, and `GL00` covers GL009.
WITH_GL100 = Config(extend_select=("GL100",), preview=True)


# --- where a directive goes ----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("w += 1\n", "w += 1  # noqa: GL002\n"),
        ("w += 1   \n", "w += 1  # noqa: GL002   \n"),
        ("w += 1  # see issue 3\n", "w += 1  # see issue 3  # noqa: GL002\n"),
        ("w += 1  # noqa: E501\n", "w += 1  # noqa: E501, GL002\n"),
        ("w += 1  # NOQA:E501,W291\n", "w += 1  # NOQA:E501,W291, GL002\n"),
        # The line ends inside a string: the comment goes where the statement ends.
        ('w += f("""a\nb""")\n', 'w += f("""a\nb""")  # noqa: GL002\n'),
        ('w += f("""a\nb""") # x\n', 'w += f("""a\nb""") # x  # noqa: GL002\n'),
        # ... or in a backslash continuation, where no comment may follow.
        ("w += 1 + \\\n    2\n", "w += 1 + \\\n    2  # noqa: GL002\n"),
        # Inside brackets each line takes its own comment.
        ("w.add_(\n    1)\n", "w.add_(  # noqa: GL002\n    1)\n"),
        ("w += 1\r\n", "w += 1  # noqa: GL002\r\n"),
    ],
)
def test_add_noqa_places_a_directive_python_accepts_and_that_silences(body, expected):
    source = LEAF + body
    assert lint(source) == [(3, "GL002")]
    new = added(source)
    assert new == LEAF + expected
    compile(new, "m.py", "exec")
    assert lint(new) == []


def test_add_noqa_merges_codes_of_one_line_and_leaves_suppressed_lines_alone():
    source = LEAF + "w += 1; w.add_(1)\nw += 2  # noqa\nw += 3  # noqa: GL00\n"
    new, count = suppressions.add_noqa(source, engine.lint_source(source, "m.py"))
    assert (new, count) == (source.replace("w.add_(1)\n", "w.add_(1)  # noqa: GL002\n"), 1)


def test_add_noqa_silences_every_fixture_and_keeps_it_valid_python():
    paths = sorted((ROOT / "fixtures").glob("GL*/bad_*.py"))
    assert len(paths) > 20
    for path in paths:
        if path.name.endswith(".fixed.py"):
            continue
        source = path.read_text(encoding="utf-8")
        found = engine.lint_source(source, str(path), WITH_PREVIEW)
        assert found, path
        new, count = suppressions.add_noqa(source, found)
        compile(new, str(path), "exec")
        assert engine.lint_source(new, str(path), WITH_PREVIEW) == [], path
        assert 0 < count <= len(found)
        # Only comments were added: the code tokens are unchanged.
        assert _code_tokens(new) == _code_tokens(source), path


def _code_tokens(source: str) -> list[str]:
    import io
    import tokenize

    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)
    return [
        t.string
        for t in tokenize.generate_tokens(io.StringIO(source).readline)
        if t.type not in skip
    ]


def test_a_directive_at_the_end_of_a_multi_line_string_silences_its_first_line_in_flake8_too(
    tmp_path,
):
    source = LEAF + 'w += f("""a\nb""")  # noqa: GL002\nw += 1 + \\\n    2  # noqa: GL002\nw += 9\n'
    assert lint(source) == [(7, "GL002")]
    path = tmp_path / "m.py"
    path.write_text(source)
    out = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "GL"]
        + ["--format=%(row)d|%(code)s", str(path)],
        capture_output=True,
        text=True,
    )
    assert out.stdout.split() == ["7|GL002"], out.stderr


def test_cli_add_noqa_writes_files_and_reports_the_count(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(LEAF + "w += 1\nw -= 1\n")
    (tmp_path / "b.py").write_text("x = 1\n")
    assert cli.main(["--isolated", "-j1", "--add-noqa", "."]) == 0
    out = capsys.readouterr().out
    assert out == "Added 2 noqa directives.\n"
    assert (tmp_path / "a.py").read_text() == LEAF + (
        "w += 1  # noqa: GL002\nw -= 1  # noqa: GL002\n"
    )
    assert (tmp_path / "b.py").read_text() == "x = 1\n"
    assert cli.main(["--isolated", "-j1", "."]) == 0
    assert cli.main(["--isolated", "-j1", "--add-noqa", "."]) == 0
    assert capsys.readouterr().out.endswith("\nAdded 0 noqa directives.\n")


@pytest.mark.parametrize(
    "argv",
    [
        ["--add-noqa", "--fix", "a.py"],
        ["--add-noqa", "--diff", "a.py"],
        ["--add-noqa", "-"],
        ["--add-noqa", "--baseline", "b.json", "a.py"],
        ["--write-baseline", "b.json", "--fix", "a.py"],
        ["--baseline", "b.json", "--write-baseline", "c.json", "a.py"],
    ],
)
def test_combinations_that_mean_nothing_are_usage_errors(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(LEAF + "w += 1\n")
    (tmp_path / "b.json").write_text('{"gradlint_baseline": 1, "findings": []}')
    assert cli.main(["--isolated", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gradlint: error: ") and err.count("\n") == 1
    assert (tmp_path / "a.py").read_text() == LEAF + "w += 1\n"


# --- GL100 unused-noqa ---------------------------------------------------------------


def test_gl100_is_selected_only_by_its_own_code():
    source = LEAF + "x = 1  # noqa: GL002\n"
    assert lint(source) == []
    assert lint(source, Config(select=("GL",))) == []
    assert lint(source, Config(select=("ALL",))) == []
    assert lint(source, Config(select=("GL1",))) == []
    assert lint(source, WITH_GL100) == [(3, "GL100")]
    assert lint(source, Config(select=("GL002", "GL100"))) == [(3, "GL100")]


def test_gl100_from_the_command_line_and_the_configuration(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("x = 1  # noqa: GL002\n")
    assert cli.main(["--isolated", "-j1", "--no-cache", "a.py"]) == 0
    assert cli.main(["--isolated", "-j1", "--no-cache", "--extend-select", "GL100", "a.py"]) == 1
    assert "a.py:1:8: GL100 [*] Unused `noqa` directive (unused: GL002)" in capsys.readouterr().out
    (tmp_path / "pyproject.toml").write_text('[tool.gradlint]\nextend-select = ["GL100"]\n')
    assert cli.main(["-j1", "--no-cache", "a.py"]) == 1
    # Turned on in the file, an --extend-select GL on the command line keeps it on, an
    # --ignore GL100 turns it off.
    assert cli.main(["-j1", "--no-cache", "--extend-select", "GL", "a.py"]) == 1
    assert cli.main(["-j1", "--no-cache", "--ignore", "GL100", "a.py"]) == 0
    (tmp_path / "pyproject.toml").write_text('[tool.gradlint]\nextend-select = ["GL"]\n')
    assert cli.main(["-j1", "--no-cache", "a.py"]) == 0


@pytest.mark.parametrize(
    ("line", "unused"),
    [
        ("w += 1  # noqa: GL002", None),  # used
        ("x = 1  # noqa: GL002", "GL002"),
        ("x = 1  # noqa: GL00", "GL00"),  # a prefix that silences nothing
        ("x = 1  # noqa", None),  # bare: may silence other tools
        ("x = 1  # noqa: E501", None),  # another tool's code
        ("x = 1  # noqa: GL999", None),  # no rule of this version: left alone
        ("x = 1  # noqa: GL100", None),  # never judges itself
        ("x = 1  # noqa: GL", None),  # covers GL100 too
        ("x = 1  # noqa: gl002", None),  # not a code flake8 reads
        ("w += 1  # noqa: GL001, GL002", "GL001"),
    ],
)
def test_gl100_judges_only_what_the_run_can_judge(line, unused):
    found = engine.lint_source(LEAF + line + "\n", "m.py", WITH_GL100)
    got = [d.message for d in found if d.code == "GL100"]
    assert got == ([] if unused is None else [f"Unused `noqa` directive (unused: {unused})"])


def test_gl100_leaves_codes_of_rules_that_are_not_enabled():
    source = LEAF + "x = 1  # noqa: GL002\n"
    assert lint(source, Config(select=("GL001", "GL100"))) == []
    assert lint(source, Config(extend_select=("GL100",), ignore=("GL002",))) == []
    per_file = Config(extend_select=("GL100",), per_file_ignores={"m.py": ("GL002",)})
    assert lint(source, per_file) == []


def test_gl100_sees_findings_that_start_inside_a_multi_line_string():
    used = LEAF + 'w += f("""a\nb""")  # noqa: GL002\n'
    assert lint(used, WITH_GL100) == []
    assert lint(LEAF + 'x = f("""a\nb""")  # noqa: GL002\n', WITH_GL100) == [(4, "GL100")]


@pytest.mark.parametrize(
    ("line", "fixed"),
    [
        ("x = 1  # noqa: GL002", "x = 1"),
        ("x = 1\t# noqa:GL002", "x = 1"),
        ("x = 1  # noqa: E501, GL002", "x = 1  # noqa: E501"),
        ("x = 1  # noqa: GL002,E501", "x = 1  # noqa: E501"),
        ("w += 1  # noqa: GL001, GL002", "w += 1  # noqa: GL002"),
        ("x = 1  # why  # noqa: GL002", "x = 1  # why"),
        ("x = 1  # noqa: GL002  because", "x = 1  # because"),
        ("if True:\n    # noqa: GL002\n    x = 1", "if True:\n\n    x = 1"),
    ],
)
def test_gl100_fix_removes_only_the_unused_codes(line, fixed):
    outcome = fix_source(LEAF + line + "\n", "m.py", WITH_GL100, unsafe=False)
    assert outcome.source == LEAF + fixed + "\n"
    assert [d.code for d in outcome.fixed] == ["GL100"]
    assert not [d for d in outcome.remaining if d.code == "GL100"]


def test_gl100_documentation_and_listing(capsys):
    assert cli.main(["rule", "GL100"]) == 0
    assert "## What it does" in capsys.readouterr().out
    assert cli.main(["rule", "--all"]) == 0
    out = capsys.readouterr().out
    autograd, _, meta = out.partition("\n\n")
    assert "GL100" not in autograd and meta.splitlines()[1].startswith("GL100  unused-noqa")
    assert cli.main(["rule", "--all", "--output-format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["code"] for r in rows if r["explicit_only"]] == ["GL100"]


# --- baseline ------------------------------------------------------------------------


def check(capsys, *argv: str) -> tuple[int, list[tuple[str, int, str]]]:
    code = cli.main(["--isolated", "-j1", "--no-cache", "--output-format", "json", *argv])
    rows = json.loads(capsys.readouterr().out or "[]")
    return code, [(Path(r["filename"]).name, r["location"]["row"], r["code"]) for r in rows]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(LEAF + "w += 1\nw.add_(2)\n")
    (tmp_path / "src" / "b.py").write_text(LEAF + "w += 1\n")
    return tmp_path


def test_baseline_hides_recorded_findings_and_reports_new_ones(repo, capsys):
    assert cli.main(["--isolated", "-j1", "--write-baseline", "gl.json", "src"]) == 0
    assert capsys.readouterr().out == "Recorded 3 findings in gl.json.\n"
    data = json.loads((repo / "gl.json").read_text())
    assert {(e["file"], e["code"], e["count"]) for e in data["findings"]} == {
        ("src/a.py", "GL002", 1),
        ("src/b.py", "GL002", 1),
    } | {("src/a.py", "GL002", 1)}
    assert check(capsys, "--baseline", "gl.json", "src") == (0, [])
    # Lines inserted above move every finding: still recorded.
    (repo / "src" / "a.py").write_text("# a header\n\n" + LEAF + "w += 1\nw.add_(2)\n")
    assert check(capsys, "--baseline", "gl.json", "src") == (0, [])
    # A new finding, and a second copy of a recorded one, are reported.
    (repo / "src" / "a.py").write_text(LEAF + "w += 1\nw.add_(2)\nw += 1\nw.mul_(3)\n")
    code, rows = check(capsys, "--baseline", "gl.json", "src")
    assert code == 1 and rows == [("a.py", 5, "GL002"), ("a.py", 6, "GL002")]
    # Changing the flagged code itself makes it new.
    (repo / "src" / "b.py").write_text(LEAF + "w += 2\n")
    code, rows = check(capsys, "--baseline", "gl.json", "src/b.py")
    assert rows == [("b.py", 3, "GL002")]


def test_baseline_paths_are_relative_to_the_baseline_file(repo, capsys, monkeypatch):
    assert cli.main(["--isolated", "-j1", "--write-baseline", "gl.json", "src"]) == 0
    capsys.readouterr()
    monkeypatch.chdir(repo / "src")
    assert check(capsys, "--baseline", "../gl.json", "a.py", "b.py") == (0, [])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist; write one with --write-baseline"),
        ("{not json", "is not valid JSON"),
        ('{"findings": []}', "is not a gradlint baseline"),
        ('{"gradlint_baseline": 1, "findings": [{"file": "a.py"}]}', "malformed entry"),
        ('{"gradlint_baseline": 1, "findings": 5}', '"findings" must be a list'),
        ('{"gradlint_baseline": 1, "findings": [[1]]}', "malformed entry"),
        ('{"gradlint_baseline": 1, "findings": ["a"]}', "malformed entry"),
        (
            '{"gradlint_baseline": 1, "findings": '
            '[{"file": "a", "code": "GL002", "fingerprint": "0", "count": 1e400}]}',
            "malformed entry",
        ),
        pytest.param("[" * 100_000 + "]" * 100_000, "not valid JSON", id="nested"),
        (b"\xff\xfe", "not valid JSON"),
    ],
)
def test_a_bad_baseline_is_a_one_line_usage_error(repo, capsys, content, message):
    if isinstance(content, bytes):
        (repo / "gl.json").write_bytes(content)
    elif content is not None:
        (repo / "gl.json").write_text(content)
    assert cli.main(["--isolated", "-j1", "--baseline", "gl.json", "src"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_baseline_that_is_not_a_regular_file_is_refused_at_once(repo, kind):
    """A FIFO would block the run forever, a link to /dev/zero exhaust its memory."""
    import os

    if kind == "fifo":
        os.mkfifo(repo / "gl.json")
    else:
        (repo / "gl.json").symlink_to("/dev/zero")
    run = subprocess.run(
        [sys.executable, "-m", "gradlint", "--isolated", "--baseline", "gl.json", "src"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert "not a regular file" in run.stderr


def test_a_failed_baseline_write_keeps_the_previous_baseline(repo):
    """The new baseline is over the file size limit (EFBIG, as a full disk gives
    ENOSPC): the old one is left whole."""
    import os
    import resource

    old = '{"gradlint_baseline": 1, "findings": []}\n'
    (repo / "gl.json").write_text(old)

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (200, resource.RLIM_INFINITY))

    run = subprocess.run(
        [sys.executable, "-m", "gradlint", "--isolated", "--no-cache", "-j1"]
        + ["--write-baseline", "gl.json", "src"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=small_files,
    )
    assert run.returncode == 2 and "cannot write baseline" in run.stderr
    assert (repo / "gl.json").read_text() == old
    assert [p.name for p in repo.iterdir() if p.name.startswith(".gl.json")] == []


def test_write_baseline_creates_a_readable_file(repo):
    assert cli.main(["--isolated", "-j1", "--no-cache", "--write-baseline", "gl.json", "src"]) == 0
    mode = (repo / "gl.json").stat().st_mode & 0o777
    assert mode == 0o666 & ~_umask()  # as open() makes it, not mkstemp's 0o600


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_notebook_baseline_matches_the_flagged_code_not_the_message(tmp_path, monkeypatch, capsys):
    """`w.mul_(0)` gets the same message as the recorded `w += 1`: it is new all the same."""
    monkeypatch.chdir(tmp_path)

    def notebook(line: str) -> str:
        cells = [
            {"cell_type": "code", "metadata": {}, "source": s, "outputs": []} for s in (LEAF, line)
        ]
        for cell in cells:
            cell["execution_count"] = None
        return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})

    (tmp_path / "nb.ipynb").write_text(notebook("w += 1\n"))
    assert cli.main(["--isolated", "-j1", "--write-baseline", "gl.json", "nb.ipynb"]) == 0
    capsys.readouterr()
    assert check(capsys, "--baseline", "gl.json", "nb.ipynb") == (0, [])
    (tmp_path / "nb.ipynb").write_text(notebook("\n\nw  +=  1\n"))
    assert check(capsys, "--baseline", "gl.json", "nb.ipynb") == (0, [])
    (tmp_path / "nb.ipynb").write_text(notebook("w.mul_(0)\n"))
    assert check(capsys, "--baseline", "gl.json", "nb.ipynb") == (1, [("nb.ipynb", 1, "GL002")])


def test_every_front_accepts_a_configuration_that_selects_gl100(tmp_path):
    from gradlint import flake8_plugin, lsp

    (tmp_path / "pyproject.toml").write_text('[tool.gradlint]\nextend-select = ["GL100"]\n')
    (tmp_path / "m.py").write_text("x = 1  # noqa: GL002\n")
    warnings: list[str] = []
    config = lsp.config_for(str(tmp_path / "m.py"), warnings.append)
    assert warnings == [] and "GL100" in config.enabled_codes("m.py")
    found = engine.lint_source("x = 1  # noqa: GL002\n", "m.py", config)
    assert [d.code for d in found] == ["GL100"]
    assert "GL100" in flake8_plugin._config_for_directory(str(tmp_path)).extend_select


def test_add_noqa_never_writes_into_a_string_when_line_breaks_disagree():
    # Lone carriage returns: LibCST and the editor see lines there, tokenize does not.
    source = LEAF.replace("\n", "\r") + 's = """a\rb"""; w += 1\r'
    found = engine.lint_source(source, "m.py")
    assert found
    with pytest.raises(suppressions.CannotAddNoqa, match="lone carriage return"):
        suppressions.add_noqa(source, found)


def test_cli_add_noqa_reports_a_file_it_cannot_change_and_goes_on(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_bytes((LEAF + "w += 1\n").replace("\n", "\r").encode())
    (tmp_path / "b.py").write_text(LEAF + "w += 1\n")
    assert cli.main(["--isolated", "-j1", "--add-noqa", "."]) == 0
    captured = capsys.readouterr()
    assert captured.out == "Added 1 noqa directive.\n"
    assert captured.err == (
        "gradlint: warning: a.py: noqa directives not added: its lines end with a lone "
        "carriage return (\\r)\n"
    )
    assert b"noqa" not in (tmp_path / "a.py").read_bytes()
