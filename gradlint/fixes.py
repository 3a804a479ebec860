"""Applying fixes: text edits onto source, and `--fix` as a loop of lint, apply, re-lint.

    apply_edits(source, edits) -> str                  (raises OverlappingEditsError)
    fix_source(source, path, config, *, unsafe) -> FixOutcome

Positions are the engine's: 1-based lines and 0-based columns in code points, with lines
broken where LibCST breaks them (`\\r\\n`, `\\r` or `\\n`, not at form feeds or U+2028 as
`str.splitlines` would), so a column on a CRLF or non-ASCII line lands on the same
character LibCST pointed at.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import libcst as cst

from gradlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Position

# Enough for fixes that uncover further fixes, small enough that a pair of fixes undoing
# each other stops quickly.
MAX_PASSES = 10

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


def _conflict(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Edits conflict when their ranges share text, or both start at one point (then the
    result would depend on which goes first: two inserts, or an insert and a replace)."""
    return (a[0] < b[1] and b[0] < a[1]) or a[0] == b[0]


def _touch(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Across different fixes we are stricter, as ruff is: edits that merely touch can glue
    two tokens together (`a` + `b` -> `ab`), so a fix touching a taken one waits a pass."""
    return a[0] <= b[1] and b[0] <= a[1]


def _splice(source: str, spans: Sequence[tuple[int, int, str]]) -> str:
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
        if _conflict((s1, e1), (s2, e2)):
            raise OverlappingEditsError(first, second)
    return _splice(source, [(s, e, edit.content) for s, e, edit in located])


@dataclass
class FixOutcome:
    source: str
    # Diagnostics whose fix was applied, in the pass that applied them (their positions
    # refer to the text as it was in that pass).
    fixed: list[Diagnostic]
    # What the final text still gets (fixable or not).
    remaining: list[Diagnostic]
    # Fixes dropped because the text they produced did not parse: a rule bug to report.
    rejected: list[Diagnostic] = field(default_factory=list)
    # False when fixes were still being applied after MAX_PASSES (or cycled back to a text
    # already seen): two fixes that undo each other.
    converged: bool = True


def is_applicable(fix: Fix | None, *, unsafe: bool) -> bool:
    if fix is None or not fix.edits:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def parses(source: str) -> bool:
    try:
        cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError):
        return False
    return True


@dataclass
class _Candidate:
    diagnostic: Diagnostic
    # (start, end, content) of the edits this fix adds, shared edits already removed.
    spans: list[tuple[int, int, str]]


def _select_fixes(
    source: str, diagnostics: Sequence[Diagnostic], *, unsafe: bool
) -> list[_Candidate]:
    """The fixes of one pass: in source order, each one that does not touch a fix already
    taken. An edit identical to one already taken (two fixes adding the same import) is
    shared, not a conflict."""
    index = LineIndex(source)
    located: list[tuple[tuple[int, int], Diagnostic, list[tuple[int, int, str]]]] = []
    for diagnostic in diagnostics:
        if not is_applicable(diagnostic.fix, unsafe=unsafe):
            continue
        try:
            spans = [(*index.span(e), e.content) for e in diagnostic.fix.edits]
        except InvalidEditError:
            continue  # a rule bug; never let it corrupt the file
        ordered = sorted(spans, key=lambda s: (s[0], s[1]))
        if any(_conflict(a[:2], b[:2]) for a, b in pairwise(ordered)):
            continue
        located.append(((ordered[0][0], ordered[-1][1]), diagnostic, ordered))
    located.sort(key=lambda item: item[0])

    taken_spans: list[tuple[int, int, str]] = []
    chosen: list[_Candidate] = []
    for _, diagnostic, spans in located:
        new_spans = [s for s in spans if s not in taken_spans]
        if any(_touch(s[:2], t[:2]) for s in new_spans for t in taken_spans):
            continue
        taken_spans.extend(new_spans)
        chosen.append(_Candidate(diagnostic, new_spans))
    return chosen


def _apply_pass(
    source: str, candidates: list[_Candidate]
) -> tuple[str, list[Diagnostic], list[Diagnostic]]:
    """Apply the pass's fixes together; if the result does not parse, keep them one at a
    time, each only if the text still parses with it."""
    all_spans = [s for c in candidates for s in c.spans]
    new_source = _splice(source, all_spans)
    if parses(new_source):
        return new_source, [c.diagnostic for c in candidates], []
    kept: list[_Candidate] = []
    rejected: list[Diagnostic] = []
    for candidate in candidates:
        trial = _splice(source, [s for c in kept + [candidate] for s in c.spans])
        if parses(trial):
            kept.append(candidate)
        else:
            rejected.append(candidate.diagnostic)
    return (
        _splice(source, [s for c in kept for s in c.spans]),
        [c.diagnostic for c in kept],
        rejected,
    )


def fix_source(source: str, path: str, config, *, unsafe: bool) -> FixOutcome:
    """Lint, apply every applicable fix that does not clash, re-lint, and repeat until
    nothing changes (at most MAX_PASSES passes). The returned text always parses when the
    input did. Raises engine.SourceError when the input itself cannot be linted."""
    from gradlint.engine import lint_source

    current = source
    seen = {source}
    fixed: list[Diagnostic] = []
    rejected: list[Diagnostic] = []
    rejected_keys: set[tuple] = set()
    diagnostics = lint_source(current, path, config)
    for _ in range(MAX_PASSES):
        # A fix that broke the parse once would break it again: do not retry it.
        pending = [d for d in diagnostics if _key(d) not in rejected_keys]
        candidates = _select_fixes(current, pending, unsafe=unsafe)
        if not candidates:
            return FixOutcome(current, fixed, diagnostics, rejected)
        new_source, applied, dropped = _apply_pass(current, candidates)
        rejected.extend(dropped)
        rejected_keys.update(_key(d) for d in dropped)
        if not applied or new_source == current:
            if dropped:
                continue
            return FixOutcome(current, fixed, diagnostics, rejected)
        fixed.extend(applied)
        current = new_source
        diagnostics = lint_source(current, path, config)
        if current in seen:
            return FixOutcome(current, fixed, diagnostics, rejected, converged=False)
        seen.add(current)
    pending = [d for d in diagnostics if _key(d) not in rejected_keys]
    converged = not _select_fixes(current, pending, unsafe=unsafe)
    return FixOutcome(current, fixed, diagnostics, rejected, converged=converged)


def _key(diagnostic: Diagnostic) -> tuple:
    """Identifies a diagnostic and its fix independently of the pass it came from."""
    fix = diagnostic.fix
    return (diagnostic.code, diagnostic.start, diagnostic.end, fix.edits if fix else None)
