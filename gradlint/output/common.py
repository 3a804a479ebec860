"""What every output format shares: ordering, paths, fix availability and ruff's summary."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TextIO

from gradlint.diagnostics import (
    Applicability,
    Diagnostic,
    FileError,
    Fix,
    Position,
    Related,
    Severity,
)
from gradlint.edits import is_applicable
from gradlint.results import FileResult


@dataclass(frozen=True)
class ReportOptions:
    # Text formats: list each finding's fix title, and enumerate `fixed` (ruff's --show-fixes).
    show_fixes: bool = False
    # Whether --unsafe-fixes is on: decides which findings count as fixable (`[*]`).
    unsafe_fixes: bool = False
    # Diagnostics that --fix already applied, for "Found N errors (M fixed, K remaining)."
    fixed: Sequence[Diagnostic] = ()
    # Where text formats print files that could not be linted (None: the report stream).
    error_stream: TextIO | None = None
    # Paths in SARIF and GitHub annotations are made relative to this (default: cwd).
    root: str | None = None
    # The text formats' order: "file" (files in order, the loudest and most frequent
    # findings of each first) or "impact" (the same, across files).
    sort: str = "file"


def sorted_diagnostics(results: Sequence[FileResult]) -> list[Diagnostic]:
    """In file and position order: the machine formats' order."""
    return sorted((d for r in results for d in r.diagnostics), key=lambda d: d.sort_key)


def weight(diagnostic: Diagnostic) -> tuple[int, int]:
    """How much a finding matters, higher first: its severity (which already weighs its
    consequence group and impact), then how often its code runs."""
    impact = diagnostic.impact.rank if diagnostic.impact is not None else -1
    return diagnostic.severity.rank, impact


def report_order(results: Sequence[FileResult], sort: str = "file") -> list[Diagnostic]:
    """The text formats' order: within each file (or, with sort="impact", across all
    files) the findings that matter most first, positions breaking ties."""

    def key(d: Diagnostic) -> tuple:
        loud, often = weight(d)
        ranked = (-loud, -often, *d.sort_key)
        return ranked if sort == "impact" else (d.path, *ranked)

    return sorted((d for r in results for d in r.diagnostics), key=key)


def context_text(diagnostic: Diagnostic) -> str:
    """` [warning, waste, per-batch]`: the level, what the pitfall does, how often it
    runs, for the one-line formats; "" for a finding that carries neither group nor
    impact (GL100's, or one read back from ruff's JSON), whose line stays ruff's."""
    if diagnostic.group is None and diagnostic.impact is None:
        return ""
    parts = [diagnostic.severity.value]
    if diagnostic.group is not None:
        parts.append(diagnostic.group.value)
    if diagnostic.impact is not None:
        parts.append(diagnostic.impact.value)
    return f" [{', '.join(parts)}]"


def severity_counts(diagnostics: Sequence[Diagnostic], file_errors: int = 0) -> str:
    """`3 errors, 12 warnings, 5 hints`, the levels with none left out; a file that could
    not be linted counts as an error."""
    counts = {level: 0 for level in Severity}
    for d in diagnostics:
        counts[d.severity] += 1
    counts[Severity.ERROR] += file_errors
    parts = [
        plural(counts[level], level.value)
        for level in (Severity.ERROR, Severity.WARNING, Severity.HINT)
        if counts[level]
    ]
    return ", ".join(parts) or "0 errors"


def sorted_errors(results: Sequence[FileResult]) -> list[FileError]:
    errors = [r.error for r in results if r.error is not None]
    return sorted(errors, key=lambda e: (e.path, e.line, e.column))


def sources_by_path(results: Sequence[FileResult]) -> dict[str, str]:
    return {r.path: r.source for r in results if r.source is not None}


def cells_by_path(results: Sequence[FileResult]) -> dict[str, dict[int, str]]:
    """A notebook's code cells by number, for the results that carry them."""
    return {r.path: r.cells for r in results if r.cells is not None}


def location_text(diagnostic: Diagnostic | Related) -> str:
    """`row:col`, or in a notebook `cell N:row:col` (ruff's layout), both 1-based; for a
    finding or a place related to it."""
    where = f"{diagnostic.start.line}:{diagnostic.start.column + 1}"
    if diagnostic.cell is not None:
        return f"cell {diagnostic.cell.number}:{where}"
    return where


def file_region(diagnostic: Diagnostic | Related) -> tuple[Position, Position]:
    """Start and end in the file itself: for a notebook finding, the points of the raw
    .ipynb text that hold it, so an annotation lands on the right line of the JSON."""
    if diagnostic.cell is not None:
        return diagnostic.cell.file_start, diagnostic.cell.file_end
    return diagnostic.start, diagnostic.end


def is_fixable(fix: Fix | None, *, unsafe_fixes: bool) -> bool:
    """Whether `--fix` (with `--unsafe-fixes` when that is on) would apply this fix."""
    return is_applicable(fix, unsafe=unsafe_fixes)


def is_hidden_unsafe(fix: Fix | None, *, unsafe_fixes: bool) -> bool:
    """An unsafe fix that `--unsafe-fixes` would enable."""
    return (
        not unsafe_fixes
        and fix is not None
        and bool(fix.edits)
        and fix.applicability is Applicability.UNSAFE
    )


def plural(count: int, word: str, plural_form: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural_form or word + 's'}"


def write_summary(
    stream: TextIO,
    diagnostics: Sequence[Diagnostic],
    errors: Sequence[FileError],
    options: ReportOptions,
) -> None:
    """ruff's closing lines, counted per level: `Found 3 errors, 12 warnings, 5 hints.` /
    `All checks passed!`, then what --fix can do."""
    remaining = len(diagnostics) + len(errors)
    fixed = len(options.fixed)
    if fixed:
        counted = severity_counts([*diagnostics, *options.fixed], len(errors))
        stream.write(f"Found {counted} ({fixed} fixed, {remaining} remaining).\n")
    elif remaining:
        stream.write(f"Found {severity_counts(diagnostics, len(errors))}.\n")
    else:
        stream.write("All checks passed!\n")
    fixable = sum(is_fixable(d.fix, unsafe_fixes=options.unsafe_fixes) for d in diagnostics)
    hidden = sum(is_hidden_unsafe(d.fix, unsafe_fixes=options.unsafe_fixes) for d in diagnostics)
    unsafe_hint = (
        f"{plural(hidden, 'unsafe fix', 'unsafe fixes')} available with `--fix --unsafe-fixes`"
    )
    if fixable and hidden:
        stream.write(f"[*] {fixable} fixable with `--fix` ({unsafe_hint}).\n")
    elif fixable:
        stream.write(f"[*] {fixable} fixable with `--fix`.\n")
    elif hidden:
        stream.write(f"{unsafe_hint}.\n")


def write_fixed(stream: TextIO, fixed: Sequence[Diagnostic]) -> None:
    """ruff's --show-fixes enumeration of what --fix applied, per file and code."""
    if not fixed:
        return
    stream.write(f"\nFixed {severity_counts(fixed)}:\n")
    by_path: dict[str, dict[tuple[str, str], int]] = {}
    for diagnostic in fixed:
        counts = by_path.setdefault(diagnostic.path, {})
        key = (diagnostic.code, diagnostic.name)
        counts[key] = counts.get(key, 0) + 1
    for path in sorted(by_path):
        stream.write(f"- {printable(path)}:\n")
        for (code, name), count in sorted(by_path[path].items()):
            stream.write(f"    {count} \u00d7 {code} ({name})\n")
    stream.write("\n")


def error_line(error: FileError) -> str:
    """`path:line:col: error: message`; a file with no position (unreadable) points at 1:1 so
    problem matchers that expect `path:line:col:` still pick it up."""
    line = error.line or 1
    column = error.column + 1 if error.line else 1
    cell = f"cell {error.cell}:" if error.cell else ""
    return f"{printable(error.path)}:{cell}{line}:{column}: error: {printable(error.message)}"


def write_errors(errors: Sequence[FileError], stream: TextIO) -> None:
    for error in errors:
        stream.write(error_line(error) + "\n")


# --- paths -------------------------------------------------------------------------------


def printable(text: str) -> str:
    """`text` with what UTF-8 cannot encode shown as backslash escapes.

    A file name that is not valid UTF-8 reaches gradlint as os.fsdecode makes it, each bad
    byte a lone surrogate (b'bad\\xff.py' -> 'bad\\udcff.py'), which no strict encoder
    writes: a report naming that file would fail mid-way. Every format writes names
    through this, so they read `bad\\xff.py` and the report always comes out."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that is no escaped byte (a Windows name)
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def uri_quote(path: str) -> str:
    """A relative POSIX path percent-encoded for a URI, bytes a name could not decode
    included (`bad%FF.py`): the URI names the very file, as Path.as_uri does."""
    from urllib.parse import quote  # only SARIF and GitHub links need it; it loads ipaddress

    try:
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = path.encode("utf-8", "surrogatepass")
    return quote(raw, safe="/")


def relative_path(path: str, root: str | None) -> str | None:
    """`path` relative to root as a POSIX path, or None when it lies outside root."""
    base = Path(root or os.getcwd()).resolve()
    absolute = Path(path)
    if not absolute.is_absolute():
        absolute = Path(os.getcwd()) / absolute
    absolute = Path(os.path.normpath(absolute))
    try:
        relative = absolute.relative_to(base)
    except ValueError:
        try:
            relative = absolute.resolve().relative_to(base)
        except (ValueError, OSError):
            return None
    return PurePosixPath(*relative.parts).as_posix()


def display_path(path: str, root: str | None) -> str:
    """A path for annotations: relative to root when inside it, else absolute."""
    if path == "-":
        return path
    relative = relative_path(path, root)
    return printable(relative if relative is not None else os.path.abspath(path))


def artifact_location(path: str, root: str | None) -> dict:
    """A SARIF artifactLocation: a percent-encoded URI relative to %SRCROOT% when the file is
    under root; otherwise an absolute file URI with no base id (a base would misresolve it)."""
    relative = relative_path(path, root) if path != "-" else None
    if relative is not None:
        return {"uri": uri_quote(relative), "uriBaseId": "%SRCROOT%"}
    if path == "-":
        return {"uri": "stdin"}
    return {"uri": Path(os.path.abspath(path)).as_uri()}


# --- terminal widths ---------------------------------------------------------------------

TAB_WIDTH = 4


def char_width(char: str) -> int:
    if char == "\t":
        return TAB_WIDTH
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return 2
    return 1


def text_width(text: str) -> int:
    return sum(char_width(c) for c in text)


def display_text(text: str) -> str:
    """A source line as the terminal should show it: tabs as spaces, as ruff does, so that
    carets computed with text_width line up."""
    return text.replace("\t", " " * TAB_WIDTH)


def diff_text(lines: Iterable[str], unit: str) -> str:
    """difflib's unified diff lines as one text in which every line ends with `\\n`, as
    a terminal and `patch` need: a line without a break gets diff's `\\ No newline at
    end of <unit>` note, and one that ends with a lone `\\r` (a file with old Mac line
    endings) is ended too, else the next line (and the closing "Would fix" line) is
    drawn over it."""
    out: list[str] = []
    for line in lines:
        out.append(line)
        if line.endswith("\r"):
            out.append("\n")
        elif not line.endswith("\n"):
            out.append(f"\n\\ No newline at end of {unit}\n")
    return "".join(out)
