"""Output formats: one module per format, all fed the same FileResults.

write_report(fmt, results, stream, *, show_fixes=False, ...)
write_statistics(results, stream)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from gradlint.diagnostics import Diagnostic
from gradlint.output import concise, full, github, json_report, sarif
from gradlint.output.common import (
    ReportOptions,
    is_fixable,
    sorted_diagnostics,
    sorted_errors,
    write_summary,
)
from gradlint.results import FileResult

FORMATS = ("concise", "full", "json", "github", "sarif")

_WRITERS = {
    "concise": concise.write,
    "full": full.write,
    "json": json_report.write,
    "github": github.write,
    "sarif": sarif.write,
}

__all__ = ["FORMATS", "ReportOptions", "statistics", "write_report", "write_statistics"]


def write_report(
    fmt: str,
    results: list[FileResult],
    stream: TextIO,
    *,
    show_fixes: bool = False,
    unsafe_fixes: bool = False,
    fixed: Sequence[Diagnostic] = (),
    error_stream: TextIO | None = None,
    root: str | None = None,
    sort: str = "file",
) -> None:
    """Write `results` to `stream` in format `fmt` (one of FORMATS).

    show_fixes: text formats add each finding's fix title and list what `fixed` holds.
    unsafe_fixes: whether `--unsafe-fixes` is on, which decides the `[*]` fixable markers.
    fixed: diagnostics that `--fix` applied, for "Found N errors (M fixed, K remaining)."
    error_stream: where concise/full print files that could not be linted (default: stream).
    root: SARIF URIs and GitHub annotation paths are relative to it (default: cwd).
    sort: the text formats' order, "file" or "impact" (ReportOptions.sort).
    """
    try:
        writer = _WRITERS[fmt]
    except KeyError:
        raise ValueError(
            f"unknown output format {fmt!r}; choose from {', '.join(FORMATS)}"
        ) from None
    options = ReportOptions(
        show_fixes=show_fixes,
        unsafe_fixes=unsafe_fixes,
        fixed=tuple(fixed),
        error_stream=error_stream,
        root=root,
        sort=sort,
    )
    writer(results, stream, options)


def statistics(results: Sequence[FileResult], *, unsafe_fixes: bool = False) -> list[dict]:
    """Per code: name, count, how many are fixable; most frequent first, as ruff orders them.
    Files that could not be linted count under code "" and name "file-error"."""
    rows: dict[str, dict] = {}
    for d in sorted_diagnostics(results):
        row = rows.setdefault(
            d.code, {"code": d.code, "name": d.name, "count": 0, "fixable_count": 0}
        )
        row["count"] += 1
        row["fixable_count"] += is_fixable(d.fix, unsafe_fixes=unsafe_fixes)
    errors = sorted_errors(results)
    if errors:
        rows[""] = {"code": "", "name": "file-error", "count": len(errors), "fixable_count": 0}
    ordered = sorted(rows.values(), key=lambda r: (-r["count"], r["code"]))
    for row in ordered:
        row["fixable"] = row["fixable_count"] > 0
    return ordered


def write_statistics(
    results: Sequence[FileResult],
    stream: TextIO,
    *,
    fmt: str = "concise",
    unsafe_fixes: bool = False,
) -> None:
    """`ruff --statistics`: one row per code (count, code, [*] when fixable, name), then the
    summary. With fmt="json", ruff's JSON statistics (code, name, count, fixable,
    fixable_count)."""
    rows = statistics(results, unsafe_fixes=unsafe_fixes)
    if fmt == "json":
        keys = ("code", "name", "count", "fixable", "fixable_count")
        json.dump([{k: row[k] for k in keys} for row in rows], stream, indent=2)
        stream.write("\n")
        return
    count_width = max((len(str(r["count"])) for r in rows), default=1)
    code_width = max((len(r["code"]) for r in rows), default=0)
    for row in rows:
        marker = "[*]" if row["fixable"] else "[ ]"
        partly = (
            f" ({row['fixable_count']} of {row['count']} fixable)"
            if 0 < row["fixable_count"] < row["count"]
            else ""
        )
        stream.write(
            f"{row['count']:>{count_width}}\t{row['code']:<{code_width}}\t{marker} {row['name']}{partly}\n"
        )
    write_summary(
        stream,
        sorted_diagnostics(results),
        sorted_errors(results),
        ReportOptions(unsafe_fixes=unsafe_fixes),
    )
