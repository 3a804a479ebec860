"""A `.py` file with a syntax error: its error is reported, and so are the findings of
the top-level statements before the one the error is in (engine.lint_before_syntax_error),
as a notebook's cells that parse are linted beside one that does not. A file being
edited is mostly code that parses (pytorch_geometric's link_pred.py example was
committed ending in `pred_edge_index = `, with an evaluation above it that a later
commit put under `no_grad`)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from gradlint import cli
from gradlint.diagnostics import FileError
from gradlint.engine import lint_before_syntax_error

EVALUATION = textwrap.dedent(
    """\
    import torch
    from torch import nn

    model = nn.Linear(4, 2)


    def test(x):
        model.eval()
        out = model(x)
        return out.argmax(1).tolist()


    print(test(torch.randn(3, 4)))
    """
)
FINDING = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):\d+: (?P<code>GL\d{3}) ", re.M)


def run(capsys, tmp_path: Path, *argv: str) -> tuple[int, list[tuple[int, str]], str]:
    code = cli.main(["--isolated", "--no-cache", "-j1", *argv])
    out, err = capsys.readouterr()
    return code, [(int(m["line"]), m["code"]) for m in FINDING.finditer(out)], err


def test_the_statements_before_a_half_typed_one_are_linted(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(EVALUATION + "pred = \n", encoding="utf-8")
    code, found, err = run(capsys, tmp_path, "a.py")
    assert code == 1
    assert found == [(9, "GL004")]
    assert "a.py:14:8: error: SyntaxError: invalid syntax; the lines before 14 were linted" in err


def test_an_error_inside_a_function_leaves_that_function_out(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    broken = EVALUATION.replace("return out.argmax(1).tolist()", "return out.argmax(1).tolist(")
    (tmp_path / "a.py").write_text(broken, encoding="utf-8")
    code, found, err = run(capsys, tmp_path, "a.py")
    assert code == 1 and found == []
    assert "the lines before 7 were linted" in err


def test_an_error_in_the_first_statement_is_the_whole_result(tmp_path):
    source = "def f(:\n    pass\nimport torch\n"
    assert lint_before_syntax_error(source, "a.py", None, FileError("a.py", "x", 1)) is None


def _cpython_error(source: str) -> FileError:
    try:
        compile(source, "a.py", "exec")
    except SyntaxError as exc:
        return FileError("a.py", f"SyntaxError: {exc.msg}", exc.lineno or 0)
    raise AssertionError("the source parses")


def test_the_text_before_the_error_must_parse_on_its_own():
    # CPython names the line of a bracket never closed: what is above it is linted
    unclosed = EVALUATION.replace("print(test(torch.randn(3, 4)))", "values = [\n")
    partial = lint_before_syntax_error(unclosed, "a.py", None, _cpython_error(unclosed))
    assert partial is not None
    assert [(d.code, d.start.line) for d in partial[0]] == [("GL004", 9)] and partial[1] == 13
    # ... and of the last of two: the first is then in the text before, which does not parse
    two = "import torch\nvalues = [\n    1,\nx = (\ndef f():\n    pass\n"
    error = _cpython_error(two)
    assert error.line == 4
    assert lint_before_syntax_error(two, "a.py", None, error) is None


def test_lines_are_counted_as_python_counts_them():
    # a form feed is no line break to CPython: the cut is still at the broken statement,
    # and the statement just above it is linted
    source = EVALUATION.replace("import torch\n", "import torch\n# \x0c page one\n", 1)
    source += "pred = \n"
    error = _cpython_error(source)
    partial = lint_before_syntax_error(source, "a.py", None, error)
    assert partial is not None and partial[1] == error.line == 15
    assert [(d.code, d.start.line) for d in partial[0]] == [("GL004", 10)]


def test_a_fix_run_leaves_a_file_with_a_syntax_error_alone(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = EVALUATION + "pred = \n"
    (tmp_path / "a.py").write_text(text, encoding="utf-8")
    run(capsys, tmp_path, "--fix", "--unsafe-fixes", "a.py")
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == text


def test_the_cached_result_is_the_same(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(EVALUATION + "pred = \n", encoding="utf-8")
    argv = ["--isolated", "--cache-dir", str(tmp_path / "cache"), "-j1", "a.py"]
    first = cli.main(argv), capsys.readouterr()
    second = cli.main(argv), capsys.readouterr()
    assert first == second
    assert "GL004" in first[1].out
