"""`# noqa` comments: reading them, placing them, and finding the ones that suppress nothing.

A comment governs the physical lines of its token group, as flake8 reads it
(`FileProcessor._noqa_line_mapping`): the lines from one NEWLINE/NL token to the next. That
is one line, except where a multi-line string or a backslash continuation joins several,
and those are exactly the lines at whose end no comment can be written: a finding that
starts inside such a group is silenced by a comment at the group's last line.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gradlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Position
from gradlint.edits import LineIndex, split_lines

# flake8's noqa grammar: a bare noqa comment, or one listing codes (`GL001,GL002`,
# `GL001 GL002`). The word noqa may be in any case; the codes are compared as written, as
# flake8 compares them, so a lower-case `gl002` in the list matches nothing.
NOQA_RE = re.compile(
    r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
FILE_NOQA_RE = re.compile(r"^\s*#\s*gradlint:\s*noqa\s*$", re.IGNORECASE | re.MULTILINE)

UNUSED_NOQA_CODE = "GL100"
_LONE_CR = re.compile(r"\r(?!\n)")


@dataclass(frozen=True)
class NoqaComment:
    line: int
    first_line: int  # the first line it governs (its token group's)
    column: int  # where the comment token starts
    end_column: int  # where it ends
    text: str  # the whole comment token
    match_start: int  # the noqa directive's span within `text`
    match_end: int
    codes: tuple[str, ...] | None  # as written; None: a bare noqa
    codes_end: int = 0  # where the code list ends within `text`

    @property
    def lines(self) -> range:
        return range(self.first_line, self.line + 1)


def _tokens(source: str) -> list[tokenize.TokenInfo] | None:
    try:
        return list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None


def _groups(tokens: Sequence[tokenize.TokenInfo]) -> dict[int, tuple[int, int]]:
    """line -> (first, last) line of its token group, as flake8 groups them."""
    groups: dict[int, tuple[int, int]] = {}
    low, high = None, -1
    for tok in tokens:
        if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT):
            continue
        low = tok.start[0] if low is None else min(low, tok.start[0])
        high = max(high, tok.end[0])
        if tok.type in (tokenize.NL, tokenize.NEWLINE):
            for line in range(low, high + 1):
                groups[line] = (low, high)
            low, high = None, -1
    return groups


@dataclass
class _Scan:
    comments: list[NoqaComment]
    groups: dict[int, tuple[int, int]]
    # line -> the comment token on it (noqa or not): where a directive is added
    any_comment: dict[int, tokenize.TokenInfo]


def _scan(source: str) -> _Scan | None:
    tokens = _tokens(source)
    if tokens is None:
        return None
    groups = _groups(tokens)
    comments: list[NoqaComment] = []
    any_comment: dict[int, tokenize.TokenInfo] = {}
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        line = tok.start[0]
        any_comment[line] = tok
        match = NOQA_RE.search(tok.string)
        if not match:
            continue
        raw = match.group("codes")
        codes = None if raw is None else tuple(c for c in re.split(r"[,\s]+", raw) if c)
        comments.append(
            NoqaComment(
                line=line,
                first_line=groups.get(line, (line, line))[0],
                column=tok.start[1],
                end_column=tok.end[1],
                text=tok.string,
                match_start=match.start(),
                match_end=match.end(),
                codes=codes,
                codes_end=match.end("codes") if raw is not None else match.end(),
            )
        )
    return _Scan(comments, groups, any_comment)


def noqa_comments(source: str) -> list[NoqaComment]:
    # A directive's text is in the source: without a match anywhere there is none, and
    # the file need not be tokenized (in pure Python, a third of a parse).
    if NOQA_RE.search(source) is None:
        return []
    scan = _scan(source)
    return scan.comments if scan is not None else []


def noqa_map(source: str) -> dict[int, frozenset[str] | None]:
    """line -> codes suppressed there (None: all). Reads real comments via tokenize, so a
    `# noqa` inside a string does not count."""
    result: dict[int, frozenset[str] | None] = {}
    for comment in noqa_comments(source):
        for line in comment.lines:
            if comment.codes is None or (line in result and result[line] is None):
                result[line] = None
            else:
                # Case-sensitive, as flake8 reads them: every front then agrees on `gl002`.
                result[line] = frozenset(comment.codes) | (result.get(line) or frozenset())
    return result


def is_suppressed(diagnostic: Diagnostic, noqa: dict[int, frozenset[str] | None]) -> bool:
    if diagnostic.noqa_line not in noqa:
        return False
    codes = noqa[diagnostic.noqa_line]
    # flake8 matches listed codes by prefix: GL00 silences GL001..GL009.
    return codes is None or any(diagnostic.code.startswith(c) for c in codes)


def apply_noqa(diagnostics: list[Diagnostic], source: str) -> list[Diagnostic]:
    if not diagnostics:
        return diagnostics
    noqa = noqa_map(source)
    return [d for d in diagnostics if not is_suppressed(d, noqa)]


# --- placing directives ----------------------------------------------------------------


def _insertion(
    source: str, scan: _Scan, index: LineIndex, line: int, codes: Sequence[str]
) -> tuple[Position, str] | None:
    """Where and what to insert so that `line` is silenced for `codes`. None when it is
    already, or when no comment can be placed (the text does not tokenize)."""
    target = scan.groups.get(line, (line, line))[1]
    comment = scan.any_comment.get(target)
    if comment is not None:
        match = NOQA_RE.search(comment.string)
        if match is not None:
            written = match.group("codes")
            if written is None:
                return None  # a bare noqa already silences every code on the line
            present = set(re.split(r"[,\s]+", written))
            missing = [c for c in codes if not any(c.startswith(p) for p in present if p)]
            if not missing:
                return None
            column = comment.start[1] + match.end("codes")
            return Position(target, column), "".join(f", {c}" for c in missing)
        return Position(target, comment.end[1]), f"  # noqa: {', '.join(codes)}"
    start, end = index.line_starts[target - 1], index.line_ends[target - 1]
    content = source[start:end].rstrip(" \t\f")
    if content.endswith("\\"):
        return None  # cannot happen at a group's last line; never write after one anyway
    return Position(target, len(content)), f"  # noqa: {', '.join(codes)}"


def noqa_insertion(source: str, line: int, codes: Sequence[str]) -> tuple[Position, str] | None:
    """The insertion that silences `codes` on `line` (see _insertion)."""
    scan = _scan(source)
    if scan is None:
        return None
    return _insertion(source, scan, LineIndex(source), line, codes)


class CannotAddNoqa(Exception):
    """The directives cannot be placed without risk to the code: the file is unchanged."""


def add_noqa(source: str, diagnostics: Iterable[Diagnostic]) -> tuple[str, int]:
    """The source with a `# noqa: CODES` directive silencing each diagnostic (merged into
    an existing directive, after an existing comment), and how many were added or
    extended. Findings that start inside a multi-line string or a backslash continuation
    get theirs at the end of the statement's line there, where Python accepts a comment.
    Raises CannotAddNoqa rather than change anything but comments."""
    diagnostics = list(diagnostics)
    if not diagnostics:
        return source, 0
    if _LONE_CR.search(source):
        # tokenize (which reads comments) and LibCST (which numbers the findings) count
        # lines differently there: a directive could land where it silences nothing.
        raise CannotAddNoqa("its lines end with a lone carriage return (\\r)")
    scan = _scan(source)
    if scan is None:
        raise CannotAddNoqa("it does not tokenize")
    wanted: dict[int, list[str]] = {}
    for diagnostic in diagnostics:
        line = diagnostic.noqa_line or diagnostic.start.line
        target = scan.groups.get(line, (line, line))[1]
        codes = wanted.setdefault(target, [])
        if diagnostic.code not in codes:
            codes.append(diagnostic.code)
    index = LineIndex(source)
    edits: list[tuple[int, str]] = []
    for target, codes in wanted.items():
        insertion = _insertion(source, scan, index, target, sorted(codes))
        if insertion is None:
            continue
        where, text = insertion
        edits.append((index.offset(where), text))
    new = source
    for offset, text in sorted(edits, reverse=True):
        new = new[:offset] + text + new[offset:]
    if not only_comments_added(source, new):
        raise CannotAddNoqa("the directives would change more than comments (please report this)")
    return new, len(edits)


def _code_tokens(source: str) -> list[tuple[int, str]] | None:
    tokens = _tokens(source)
    if tokens is None:
        return None
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)
    return [(t.type, t.string) for t in tokens if t.type not in skip]


def only_comments_added(old: str, new: str) -> bool:
    """Whether `new` is `old` with comments only: the same code tokens, strings included.
    add_noqa's guarantee, checked rather than assumed (a file whose line breaks tokenize
    and the editor count differently, a lone carriage return, must never get a directive
    inside a string)."""
    before = _code_tokens(old)
    return before is not None and before == _code_tokens(new)


# --- unused directives -----------------------------------------------------------------


def unused_noqa(
    source: str,
    path: str,
    diagnostics: Sequence[Diagnostic],
    enabled: Iterable[str],
    known: Iterable[str],
    rule,
) -> list[Diagnostic]:
    """A GL100 diagnostic for each noqa directive listing gradlint codes that silence
    none of `diagnostics` (every finding before suppression).

    Only what the run can judge is judged: a bare `# noqa` and codes of other tools may
    silence findings gradlint never sees, and a code whose rules are not all enabled here
    (or that names no rule of this version) might silence one in another run. GL100's
    own code is never judged."""
    enabled = frozenset(enabled)
    known = [c for c in known if c != UNUSED_NOQA_CODE]
    found: list[Diagnostic] = []
    lines = split_lines(source)
    for comment in noqa_comments(source):
        if comment.codes is None:
            continue
        unused: list[str] = []
        for code in comment.codes:
            covered = [c for c in known if c.startswith(code)]
            if (
                not code.startswith("GL")
                or UNUSED_NOQA_CODE.startswith(code)
                or not covered
                or not all(c in enabled for c in covered)
            ):
                continue
            if not any(
                d.code.startswith(code) and d.noqa_line in comment.lines for d in diagnostics
            ):
                unused.append(code)
        if unused:
            line_text = lines[comment.line - 1] if comment.line <= len(lines) else ""
            found.append(_unused_diagnostic(comment, unused, path, rule, line_text))
    return found


def _unused_diagnostic(
    comment: NoqaComment, unused: list[str], path: str, rule, line_text: str
) -> Diagnostic:
    kept = [c for c in comment.codes or () if c not in unused]
    start = Position(comment.line, comment.column + comment.match_start)
    end = Position(comment.line, comment.column + comment.match_end)
    if kept:
        # Only the list changes: codes E501, GL001 become E501.
        assert comment.codes is not None  # kept codes come from the list
        codes_start = comment.text.index(comment.codes[0], comment.match_start)
        edit = Edit(
            Position(comment.line, comment.column + codes_start),
            Position(comment.line, comment.column + comment.codes_end),
            ", ".join(kept),
        )
    elif comment.match_start == 0 and not comment.text[comment.match_end :].strip():
        # The whole comment goes, with the blanks before it.
        edit = Edit(
            _blanks_before(comment, line_text), Position(comment.line, comment.end_column), ""
        )
    else:
        # Other text in the comment (a reason before the directive, words after it) stays.
        head = comment.text[: comment.match_start].rstrip()
        tail = comment.text[comment.match_end :]
        rest = (head + ("  " + tail.strip() if tail.strip() else "")) if head else tail.strip()
        if not rest.startswith("#"):
            rest = "# " + rest
        edit = Edit(
            Position(comment.line, comment.column),
            Position(comment.line, comment.end_column),
            rest,
        )
    return Diagnostic(
        code=rule.code,
        name=rule.name,
        message=rule.message.format(codes=", ".join(unused)),
        path=path,
        start=start,
        end=end,
        fix=Fix(rule.fix_title, (edit,), Applicability.SAFE),
        noqa_line=comment.line,
        url=rule.url(),
        severity=rule.severity,
    )


def _blanks_before(comment: NoqaComment, line_text: str) -> Position:
    """Where the blanks before the comment start, so removing it leaves no trailing ones."""
    column = comment.column
    while column > 0 and line_text[column - 1] in " \t":
        column -= 1
    return Position(comment.line, column)
