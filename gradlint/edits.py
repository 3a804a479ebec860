"""Text edits onto source: the primitives every fix and every front shares.

    apply_edits(source, edits) -> str                  (raises OverlappingEditsError)

Positions are the engine's: 1-based lines and 0-based columns in code points, with lines
broken where LibCST breaks them (`\\r\\n`, `\\r` or `\\n`, not at form feeds or U+2028 as
`str.splitlines` would), so a column on a CRLF or non-ASCII line lands on the same
character LibCST pointed at.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import TypeGuard

from gradlint.diagnostics import Applicability, Edit, Fix, Position

_NEWLINE_RE = re.compile(r"\r\n|\r|\n")
_BOM = "\ufeff"


def split_lines(source: str) -> list[str]:
    """Lines with their endings, broken where LibCST breaks them: at `\r\n`, `\r` or
    `\n` only (`str.splitlines` also breaks at form feeds, U+2028 and others)."""
    lines = []
    start = 0
    for match in _NEWLINE_RE.finditer(source):
        lines.append(source[start : match.end()])
        start = match.end()
    if start < len(source):
        lines.append(source[start:])
    return lines


def line_ending(source: str) -> str:
    """The file's line break: its first one (`\n` for a file without any)."""
    match = _NEWLINE_RE.search(source)
    return match.group() if match else "\n"


def with_line_ending(fix: Fix, newline: str) -> Fix:
    """The fix with every line break it inserts written as `newline`: a builder writes
    `\n`, and a CRLF file must not come out with mixed endings. The same object when
    nothing changes."""
    edits = tuple(Edit(e.start, e.end, _NEWLINE_RE.sub(newline, e.content)) for e in fix.edits)
    if edits == fix.edits:
        return fix
    return Fix(fix.title, edits, fix.applicability)


class InvalidEditError(ValueError):
    """An edit points outside the source (a line or column that does not exist)."""


class OverlappingEditsError(ValueError):
    """Two edits touch the same text, so the order they apply in would change the result."""

    def __init__(self, first: Edit, second: Edit) -> None:
        super().__init__(f"edits overlap: {_describe(first)} and {_describe(second)}")
        self.first = first
        self.second = second


def _describe(edit: Edit) -> str:
    return (
        f"{edit.start.line}:{edit.start.column}-{edit.end.line}:{edit.end.column}"
        f" -> {edit.content!r}"
    )


class LineIndex:
    """Converts engine positions to string offsets for one source text."""

    def __init__(self, source: str) -> None:
        self.source = source
        # LibCST reports columns after a leading byte-order mark, as if it were not there.
        first = 1 if source.startswith(_BOM) else 0
        self.line_starts = [first] + [m.end() for m in _NEWLINE_RE.finditer(source)]
        # Where each line's text ends (before its line break).
        self.line_ends = [
            self._content_end(start, nxt)
            for start, nxt in zip(
                self.line_starts, [*self.line_starts[1:], len(source)], strict=True
            )
        ]

    def _content_end(self, start: int, next_start: int) -> int:
        end = next_start
        text = self.source
        if end > start and text[end - 1] == "\n":
            end -= 1
        if end > start and text[end - 1] == "\r":
            end -= 1
        return end

    def offset(self, position: Position) -> int:
        line = position.line
        if not 1 <= line <= len(self.line_starts):
            raise InvalidEditError(
                f"line {line} is outside the source ({len(self.line_starts)} lines)"
            )
        start = self.line_starts[line - 1]
        width = self.line_ends[line - 1] - start
        if not 0 <= position.column <= width:
            raise InvalidEditError(
                f"column {position.column} is outside line {line} ({width} characters)"
            )
        return start + position.column

    def span(self, edit: Edit) -> tuple[int, int]:
        start, end = self.offset(edit.start), self.offset(edit.end)
        if end < start:
            raise InvalidEditError(f"edit ends before it starts: {_describe(edit)}")
        return start, end


def conflict(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Edits conflict when their ranges share text, or both start at one point (then the
    result would depend on which goes first: two inserts, or an insert and a replace)."""
    return (a[0] < b[1] and b[0] < a[1]) or a[0] == b[0]


def touch(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Across different fixes we are stricter, as ruff is: edits that merely touch can glue
    two tokens together (`a` + `b` -> `ab`), so a fix touching a taken one waits a pass."""
    return a[0] <= b[1] and b[0] <= a[1]


def splice(source: str, spans: Sequence[tuple[int, int, str]]) -> str:
    out: list[str] = []
    cursor = 0
    for start, end, content in sorted(spans, key=lambda s: (s[0], s[1])):
        out.append(source[cursor:start])
        out.append(content)
        cursor = end
    out.append(source[cursor:])
    return "".join(out)


def apply_edits(source: str, edits: Iterable[Edit]) -> str:
    """Apply edits given in positions of `source` (in any order) and return the new text.

    Raises OverlappingEditsError when two edits overlap or start at the same point, and
    InvalidEditError when an edit points outside the source.
    """
    index = LineIndex(source)
    located = sorted(((*index.span(edit), edit) for edit in edits), key=lambda s: (s[0], s[1]))
    for (s1, e1, first), (s2, e2, second) in pairwise(located):
        if conflict((s1, e1), (s2, e2)):
            raise OverlappingEditsError(first, second)
    return splice(source, [(s, e, edit.content) for s, e, edit in located])


def is_applicable(fix: Fix | None, *, unsafe: bool) -> TypeGuard[Fix]:
    if fix is None or not fix.edits:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def parses(source: str) -> bool:
    # Imported here: the report formats need this module's edits, and a run whose files
    # all come from the cache never loads LibCST.
    import libcst as cst

    try:
        cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError):
        return False
    return True
