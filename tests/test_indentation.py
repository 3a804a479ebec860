"""Files whose indentation CPython accepts and LibCST rejects are linted anyway, with
positions on the original lines and no fix (gradlint/indentation.py)."""

from __future__ import annotations

import libcst as cst
import pytest

from gradlint.edits import split_lines
from gradlint.engine import lint_source
from gradlint.indentation import normalise

# A form feed page break before a tab-indented body: CPython resets the column at the
# form feed, LibCST's tokenizer does not.
SOURCE = (
    "import torch\n"
    "w = torch.zeros(3, requires_grad=True)\n"
    "\x0cdef step():\n"
    "\x0c\tw.add_(1)\n"
    "\tif True:\n"
    "\t        w.add_(1)\n"
)


def test_the_case_is_real():
    compile(SOURCE, "t", "exec")
    with pytest.raises(cst.ParserSyntaxError):
        cst.parse_module(SOURCE)


def test_such_a_file_is_linted_with_original_positions_and_no_fix():
    found = lint_source(SOURCE, "t.py")
    assert [(d.code, d.start.line, d.start.column) for d in found] == [
        ("GL002", 4, 2),
        ("GL002", 6, 9),
    ]
    lines = split_lines(SOURCE)  # not str.splitlines: it breaks at form feeds
    for d in found:
        assert lines[d.start.line - 1][d.start.column :].startswith("w.add_")
        assert d.fix is None


def test_noqa_still_works_there():
    source = SOURCE.replace("\tw.add_(1)\n\tif", "\tw.add_(1)  # noqa: GL002\n\tif")
    assert [d.start.line for d in lint_source(source, "t.py")] == [6]


def test_a_real_syntax_error_is_still_one():
    from gradlint.engine import SourceError

    with pytest.raises(SourceError):
        lint_source(SOURCE + "def broken(:\n", "t.py")


def test_normalise_measures_as_cpython():
    assert normalise("x = 1\n") is None
    result = normalise("if a:\n\tb = 1\n")
    assert result is not None
    assert result.source == "if a:\n        b = 1\n"
    assert result.indents == [(0, 0), (1, 8)]
