"""`path:line:col: CODE [*] message`, one line per finding, as `ruff --output-format concise`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from gradlint.output.common import (
    ReportOptions,
    context_text,
    is_fixable,
    location_text,
    printable,
    report_order,
    sorted_errors,
    write_errors,
    write_fixed,
    write_summary,
)
from gradlint.results import FileResult


def write(results: Sequence[FileResult], stream: TextIO, options: ReportOptions) -> None:
    diagnostics = report_order(results, options.sort)
    errors = sorted_errors(results)
    write_errors(errors, options.error_stream or stream)
    for d in diagnostics:
        marker = "[*] " if is_fixable(d.fix, unsafe_fixes=options.unsafe_fixes) else ""
        stream.write(
            f"{printable(d.path)}:{location_text(d)}: {d.code} {marker}{d.message}"
            f"{context_text(d)}\n"
        )
        if options.show_fixes and d.fix is not None:
            stream.write(f"  help: {d.fix.title}\n")
    if options.show_fixes:
        write_fixed(stream, options.fixed)
    write_summary(stream, diagnostics, errors, options)
