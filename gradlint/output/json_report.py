"""A JSON list in the shape of `ruff check --output-format json`, so tools that read ruff's
findings (editor plugins, reviewdog, CI annotators) read gradlint's unchanged.

Keys and their meaning follow ruff: 1-based `row` and `column` (code points; in a notebook,
inside the cell that `cell` numbers, counting every cell from 1), `end_location`
just past the range, `filename` absolute, fix `applicability` one of "safe", "unsafe",
"displayonly", and a file that could not be linted as an object with `"code": null`, as
ruff reported syntax errors from 0.5 until it named them `invalid-syntax`.

gradlint adds keys of its own, which readers of ruff's format ignore: `related`, the other
places that explain a finding (`message`, `filename`, `location`, `end_location`, in the
same terms as the finding's own), and `confidence` ("high", or "low" for a finding that
rests on an assumption; null for a file error). `severity` is the finding's ("error",
"warning" or "hint": by default from its group and impact, as configured), where ruff
always writes "error". `group` is what the pitfall does ("crash", "wrong", "leak",
"waste"; null for GL100 and file errors), `impact` how often the flagged code runs
("per-batch", "per-epoch", "once", "test"; null for file errors).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TextIO

from gradlint.diagnostics import Applicability, Diagnostic, FileError, Fix, Position, Related
from gradlint.output.common import ReportOptions, printable, sorted_diagnostics, sorted_errors
from gradlint.results import FileResult

APPLICABILITY = {
    Applicability.SAFE: "safe",
    Applicability.UNSAFE: "unsafe",
    Applicability.DISPLAY_ONLY: "displayonly",
}


def location(position: Position) -> dict:
    return {"column": position.column + 1, "row": position.line}


def filename(path: str) -> str:
    return path if path == "-" else printable(os.path.abspath(path))


def fix_object(fix: Fix | None) -> dict | None:
    if fix is None:
        return None
    return {
        "applicability": APPLICABILITY[fix.applicability],
        "edits": [
            {
                "content": edit.content,
                "end_location": location(edit.end),
                "location": location(edit.start),
            }
            for edit in sorted(fix.edits, key=lambda e: (e.start, e.end))
        ],
        "message": fix.title,
    }


def related_object(related: Related) -> dict:
    found: dict = {
        "end_location": location(related.end),
        "filename": filename(related.path),
        "location": location(related.start),
        "message": related.message,
    }
    if related.cell is not None:
        found["cell"] = related.cell.number  # rows are then inside that cell, as for findings
    return found


def diagnostic_object(diagnostic: Diagnostic) -> dict:
    return {
        # ruff's notebook fields: the 1-based cell, with rows counted inside it.
        "cell": diagnostic.cell.number if diagnostic.cell is not None else None,
        "code": diagnostic.code,
        "end_location": location(diagnostic.end),
        "filename": filename(diagnostic.path),
        "fix": fix_object(diagnostic.fix),
        "location": location(diagnostic.start),
        "message": diagnostic.message,
        "name": diagnostic.name,
        "noqa_row": diagnostic.noqa_line or diagnostic.start.line,
        "related": [related_object(r) for r in diagnostic.related],
        "severity": diagnostic.severity.value,
        "confidence": diagnostic.confidence.value,
        "group": diagnostic.group.value if diagnostic.group is not None else None,
        "impact": diagnostic.impact.value if diagnostic.impact is not None else None,
        "url": diagnostic.url or None,
    }


def error_object(error: FileError) -> dict:
    position = (
        {"column": error.column + 1, "row": error.line} if error.line else {"column": 1, "row": 1}
    )
    message = error.message
    if message.startswith("syntax error: "):
        # Consumers of ruff's JSON recognise a code-less object as a syntax error by this
        # prefix (nvim-lint, trunk).
        message = "SyntaxError: " + message[len("syntax error: ") :]
    return {
        "cell": error.cell or None,
        "code": None,
        "end_location": dict(position),
        "filename": filename(error.path),
        "fix": None,
        "location": position,
        "message": message,
        "name": None,
        "noqa_row": None,
        "related": [],
        "severity": "error",
        "confidence": None,
        "group": None,
        "impact": None,
        "url": None,
    }


def report_objects(results: Sequence[FileResult]) -> list[dict]:
    objects = [diagnostic_object(d) for d in sorted_diagnostics(results)]
    objects.extend(error_object(e) for e in sorted_errors(results))
    objects.sort(
        key=lambda o: (o["filename"], o["cell"] or 0, o["location"]["row"], o["location"]["column"])
    )
    return objects


def write(results: Sequence[FileResult], stream: TextIO, options: ReportOptions) -> None:
    # ensure_ascii: escapes keep the output writable to any console encoding, and every
    # JSON reader decodes them.
    json.dump(report_objects(results), stream, indent=2, sort_keys=True, ensure_ascii=True)
    stream.write("\n")
