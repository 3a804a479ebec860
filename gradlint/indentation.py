"""Files whose indentation CPython accepts and LibCST does not.

CPython's tokenizer resets the column at a form feed and moves a tab to the next
multiple of 8; LibCST's parser disagrees on some mixes (GNU-style `^L` page breaks
between functions, a form feed before a tab-indented block). Such a file is still
linted: a copy with each line's leading whitespace rewritten as CPython measures it is
analysed, and the findings' columns are mapped back onto the original lines. No fix is
offered on such a file, since its edits would be computed on the copy.
"""

from __future__ import annotations

import dataclasses
import re

from gradlint.diagnostics import Diagnostic, Position

_LEADING = re.compile(r"[ \t\x0c]*")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")


def _cpython_width(indent: str) -> int:
    column = 0
    for char in indent:
        if char == "\x0c":
            column = 0
        elif char == "\t":
            column = (column // 8 + 1) * 8
        else:
            column += 1
    return column


@dataclasses.dataclass
class Normalised:
    source: str
    # per line (1-based index - 1): (original indent length, normalised indent length)
    indents: list[tuple[int, int]]

    def position(self, position: Position) -> Position:
        line = position.line
        if not 1 <= line <= len(self.indents):
            return position
        original, normalised = self.indents[line - 1]
        column = position.column
        if column >= normalised:
            column = column - normalised + original
        else:
            column = min(column, original)
        return Position(line, column)

    def diagnostic(self, diagnostic: Diagnostic) -> Diagnostic:
        return dataclasses.replace(
            diagnostic,
            start=self.position(diagnostic.start),
            end=self.position(diagnostic.end),
            fix=None,
            related=tuple(
                dataclasses.replace(r, start=self.position(r.start), end=self.position(r.end))
                if r.path == diagnostic.path
                else r
                for r in diagnostic.related
            ),
        )


def normalise(source: str) -> Normalised | None:
    """The source with every line's leading whitespace as spaces, as CPython counts it;
    None when that changes nothing (the file's problem is something else)."""
    out: list[str] = []
    indents: list[tuple[int, int]] = []
    changed = False
    for match in _LINE.finditer(source):
        line = match.group()
        if not line:
            break
        indent = _LEADING.match(line).group()  # type: ignore[union-attr]
        width = _cpython_width(indent)
        if indent != " " * width:
            changed = True
        out.append(" " * width + line[len(indent) :])
        indents.append((len(indent), width))
    return Normalised("".join(out), indents) if changed else None
