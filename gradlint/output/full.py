"""Each finding with its source lines, the range underlined, and the fix as a diff, in the
layout of `ruff --output-format full`:

    GL002 In-place update of leaf tensor `w` ...
     --> train.py:3:1
      |
    1 | import torch
    2 | w = torch.ones(3, requires_grad=True)
    3 | w += 1
      | ^^^^^^
      |
    help: Wrap the update in `with torch.no_grad():`
      |
    2 | w = torch.ones(3, requires_grad=True)
      - w += 1
    3 + with torch.no_grad():
    4 +     w += 1
      |
    note: This is an unsafe fix and may change runtime behavior
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import TextIO

from gradlint.codes import GROUP_WORDS
from gradlint.diagnostics import (
    Applicability,
    Confidence,
    Diagnostic,
    Fix,
    Impact,
    Related,
    Severity,
)
from gradlint.edits import InvalidEditError, OverlappingEditsError, apply_edits
from gradlint.fileio import DEFAULT_MAX_FILE_SIZE, SourceReadError, read_regular
from gradlint.output.common import (
    ReportOptions,
    cells_by_path,
    display_text,
    is_fixable,
    location_text,
    printable,
    report_order,
    sorted_errors,
    sources_by_path,
    text_width,
    write_errors,
    write_fixed,
    write_summary,
)
from gradlint.results import FileResult

CONTEXT_LINES = 2
# A multi-line range longer than this shows its first and last lines around an ellipsis.
MAX_RANGE_LINES = 6

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# What a finding's group and impact mean, for its note line.
_RUNS = {
    Impact.PER_BATCH: "on every batch (per-batch)",
    Impact.PER_EPOCH: "on every epoch (per-epoch)",
    Impact.ONCE: "once",
    Impact.TEST: "only in tests",
}

NOTES = {
    Applicability.UNSAFE: "This is an unsafe fix and may change runtime behavior",
    Applicability.DISPLAY_ONLY: (
        "This is a display-only fix: it may be incorrect, so it is never applied "
        "automatically; review it by hand"
    ),
}


def source_lines(source: str) -> list[str]:
    """Lines as the engine numbers them (LibCST breaks at \\r\\n, \\r and \\n only)."""
    if source.startswith("\ufeff"):
        source = source[1:]
    lines = _LINE_BREAK.split(source)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def write(results: Sequence[FileResult], stream: TextIO, options: ReportOptions) -> None:
    diagnostics = report_order(results, options.sort)
    errors = sorted_errors(results)
    write_errors(errors, options.error_stream or stream)
    sources = sources_by_path(results)
    cells = cells_by_path(results)
    lines_cache: dict[tuple[str, int], list[str]] = {}
    # Lines of the other files that related places point into, read once each.
    related_cache: dict[str, list[str] | None] = {}
    for diagnostic in diagnostics:
        # A notebook finding is shown in its cell, numbered as the cell's rows.
        number = diagnostic.cell.number if diagnostic.cell is not None else 0
        if number:
            source = cells.get(diagnostic.path, {}).get(number)
        else:
            source = sources.get(diagnostic.path)
        key = (diagnostic.path, number)
        if source is not None and key not in lines_cache:
            lines_cache[key] = source_lines(source)
        stream.write(
            render(diagnostic, source, lines_cache.get(key), options, related_cache) + "\n"
        )
    if options.show_fixes:
        write_fixed(stream, options.fixed)
    write_summary(stream, diagnostics, errors, options)


def render(
    diagnostic: Diagnostic,
    source: str | None,
    lines: list[str] | None,
    options: ReportOptions,
    line_cache: dict[str, list[str] | None] | None = None,
) -> str:
    marker = "[*] " if is_fixable(diagnostic.fix, unsafe_fixes=options.unsafe_fixes) else ""
    # An error reads as ruff's header; a warning or a hint says so, as a compiler's does.
    level = "" if diagnostic.severity is Severity.ERROR else f"{diagnostic.severity.value}: "
    out = [f"{level}{diagnostic.code} {marker}{diagnostic.message}"]
    where = f"{printable(diagnostic.path)}:{location_text(diagnostic)}"
    # One gutter for the finding and the places related to it, as compilers print them.
    min_width = max((len(str(r.end.line)) for r in diagnostic.related), default=0)
    width = 1
    if lines:
        rows, width = snippet(lines, diagnostic, min_width)
        out.append(f"{' ' * width}--> {where}")
        out.append(f"{' ' * (width + 1)}|")
        out.extend(rows)
    else:
        out.append(f" --> {where}")
    for related in diagnostic.related:
        out.extend(related_rows(related, diagnostic, lines, max(width, min_width), line_cache))
    if diagnostic.group is not None:
        runs = f"; runs {_RUNS[diagnostic.impact]}" if diagnostic.impact is not None else ""
        out.append(f"note: {diagnostic.group.value}: {GROUP_WORDS[diagnostic.group]}{runs}")
    if diagnostic.confidence is Confidence.LOW:
        out.append(
            f"note: low confidence: this finding rests on an assumption gradlint could not "
            f"check (`gradlint rule {diagnostic.code}` says which; `--min-confidence high` "
            "hides such findings)"
        )
    fix = diagnostic.fix
    if fix is not None:
        out.append(f"help: {fix.title}")
        # A fix with an edit in another cell (an import in the first) is not drawn.
        in_cell = diagnostic.cell is None or all(
            c == diagnostic.cell.number for c in diagnostic.cell.edit_cells
        )
        if source is not None and in_cell:
            out.extend(fix_diff(source, fix))
        note = NOTES.get(fix.applicability)
        if note:
            out.append(f"note: {note}")
    return "\n".join(out) + "\n"


def related_rows(
    related: Related,
    diagnostic: Diagnostic,
    lines: list[str] | None,
    width: int,
    line_cache: dict[str, list[str] | None] | None,
) -> list[str]:
    """A related place as rustc prints a secondary span: `:::` and the place, its first
    line, the span underlined with `-` and labelled."""
    blank = " " * width
    where = f"{printable(related.path)}:{location_text(related)}"
    rows = [f"{blank}::: {where}"]
    if related.path != diagnostic.path:
        # In another notebook: its file is JSON, whose lines are not the cell's.
        lines = _lines_of(related.path, line_cache) if related.cell is None else None
    elif related.cell is not None and (
        diagnostic.cell is None or related.cell.number != diagnostic.cell.number
    ):
        lines = None  # another cell of the notebook: named, not drawn
    if not lines or related.start.line > len(lines):
        rows.append(f"{blank} = {related.message}")
        return rows
    line, column = _clamp(lines, related.start.line, related.start.column)
    text = lines[line - 1]
    end = related.end.column if related.end.line == line else len(text)
    end = min(max(end, column), len(text))
    pad = text_width(text[:column])
    dashes = max(1, text_width(text[column:end]))
    rows.append(f"{blank} |")
    rows.append(f"{line:>{width}} | {display_text(text)}".rstrip())
    rows.append(f"{blank} | {' ' * pad}{'-' * dashes} {related.message}")
    return rows


def _lines_of(path: str, cache: dict[str, list[str] | None] | None) -> list[str] | None:
    if cache is not None and path in cache:
        return cache[path]
    try:
        # A related place's file, read as the project holds it: bounded, regular only.
        data = read_regular(path, DEFAULT_MAX_FILE_SIZE)
        found: list[str] | None = source_lines(data.decode("utf-8"))
    except (SourceReadError, UnicodeDecodeError, ValueError):
        found = None
    if cache is not None:
        cache[path] = found
    return found


def _clamp(lines: list[str], line: int, column: int) -> tuple[int, int]:
    if line > len(lines):
        return len(lines), len(lines[-1])
    line = max(line, 1)
    return line, min(max(column, 0), len(lines[line - 1]))


def snippet(lines: list[str], diagnostic: Diagnostic, min_width: int = 0) -> tuple[list[str], int]:
    """The source rows around the range with the range marked, and the gutter width
    (at least min_width, so that related places below line up with it)."""
    s_line, s_col = _clamp(lines, diagnostic.start.line, diagnostic.start.column)
    e_line, e_col = _clamp(lines, diagnostic.end.line, diagnostic.end.column)
    if (e_line, e_col) < (s_line, s_col):
        e_line, e_col = s_line, s_col
    # A range that ends at the start of a line ends, visibly, at the end of the one before.
    if e_line > s_line and e_col == 0:
        e_line -= 1
        e_col = len(lines[e_line - 1])
    first = max(1, s_line - CONTEXT_LINES)
    last = min(len(lines), e_line + CONTEXT_LINES)
    width = max(len(str(last)), min_width)
    blank = " " * width
    multiline = e_line > s_line

    shown = list(range(first, last + 1))
    if multiline and e_line - s_line + 1 > MAX_RANGE_LINES:
        keep = set(range(first, s_line + 2)) | set(range(e_line - 1, last + 1))
        shown = [n for n in shown if n in keep]

    rows: list[str] = []
    previous = None
    for number in shown:
        if previous is not None and number != previous + 1:
            rows.append("...")
        previous = number
        text = lines[number - 1]
        shown_text = display_text(text)
        if not multiline:
            rows.append(f"{number:>{width}} | {shown_text}".rstrip())
            if number == s_line:
                pad = text_width(text[:s_col])
                carets = max(1, text_width(text[s_col:e_col]))
                rows.append(f"{blank} | {' ' * pad}{'^' * carets}")
            continue
        if number == s_line:
            starts_line = text[:s_col].strip() == ""
            gutter = "/ " if starts_line else "  "
            rows.append(f"{number:>{width}} | {gutter}{shown_text}".rstrip())
            if not starts_line:
                rows.append(f"{blank} |  {'_' * (1 + text_width(text[:s_col]))}^")
        elif s_line < number <= e_line:
            rows.append(f"{number:>{width}} | | {shown_text}".rstrip())
            if number == e_line:
                last_char = max(e_col - 1, 0)
                rows.append(f"{blank} | |{'_' * (1 + text_width(text[:last_char]))}^")
        else:
            rows.append(f"{number:>{width}} |   {shown_text}".rstrip())
    if last > e_line:
        rows.append(f"{blank} |")
    return rows, width


def fix_diff(source: str, fix: Fix) -> list[str]:
    """The lines the fix changes, with one line of context, numbered in the fixed text (left
    aligned, and tabs kept, as ruff prints its diffs)."""
    try:
        fixed = apply_edits(source, fix.edits)
    except (InvalidEditError, OverlappingEditsError):
        return []
    old, new = source_lines(source), source_lines(fixed)
    groups = list(difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(1))
    if not groups:
        return []
    width = len(str(max(max(j2 for *_, j2 in group) for group in groups)))
    blank = " " * width
    rows = [f"{blank} |"]
    for index, group in enumerate(groups):
        if index:
            rows.append("...")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows.extend(f"{j + 1:<{width}} | {new[j]}".rstrip() for j in range(j1, j2))
                continue
            rows.extend(f"{blank} - {old[i]}".rstrip() for i in range(i1, i2))
            rows.extend(f"{j + 1:<{width}} + {new[j]}".rstrip() for j in range(j1, j2))
    rows.append(f"{blank} |")
    return rows
