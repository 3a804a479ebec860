"""GitHub Actions workflow commands: each finding becomes an error or warning annotation
(its severity) on the pull request's diff.

    ::error title=gradlint (GL002),file=train.py,line=3,col=1,endLine=3,endColumn=7::GL002 message

Values are escaped as the Actions toolkit does: `%`, CR and LF everywhere, and also `:` and
`,` inside properties, where they would end a value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from gradlint.diagnostics import Diagnostic, FileError, Severity
from gradlint.output.common import (
    ReportOptions,
    context_text,
    display_path,
    file_region,
    location_text,
    sorted_diagnostics,
    sorted_errors,
)
from gradlint.results import FileResult


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


# GitHub's workflow commands have no hint level; a notice is its quietest annotation.
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.HINT: "notice"}


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(properties: dict[str, object], message: str, level: str = "error") -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::{level} {props}::{escape_data(message)}"


def diagnostic_command(diagnostic: Diagnostic, root: str | None) -> str:
    start, end = file_region(diagnostic)
    message = f"{diagnostic.code} {diagnostic.message}{context_text(diagnostic)}"
    if diagnostic.cell is not None:
        message += f" ({location_text(diagnostic)})"
    if diagnostic.fix is not None:
        message += f"\n  help: {diagnostic.fix.title}"
    return command(
        {
            "title": f"gradlint ({diagnostic.code})",
            "file": display_path(diagnostic.path, root),
            # A notebook finding points at the line of the .ipynb JSON that holds it.
            "line": start.line,
            "col": start.column + 1,
            "endLine": end.line,
            "endColumn": end.column + 1,
        },
        message,
        LEVELS[diagnostic.severity],
    )


def error_command(error: FileError, root: str | None) -> str:
    properties: dict[str, object] = {"title": "gradlint", "file": display_path(error.path, root)}
    if error.cell:
        properties.update(line=error.file_line or 1)
        return command(properties, f"error: cell {error.cell}:{error.line}: {error.message}")
    if error.line:
        properties.update(line=error.line, col=error.column + 1)
    return command(properties, f"error: {error.message}")


def write(results: Sequence[FileResult], stream: TextIO, options: ReportOptions) -> None:
    for error in sorted_errors(results):
        stream.write(error_command(error, options.root) + "\n")
    for diagnostic in sorted_diagnostics(results):
        stream.write(diagnostic_command(diagnostic, options.root) + "\n")
