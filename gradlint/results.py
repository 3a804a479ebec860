"""What linting one file produces, shared by the engine and every front (no front
imports the engine for its types)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gradlint.diagnostics import Diagnostic, FileError


class SourceError(Exception):
    """The source cannot be linted (not valid Python, too deeply nested, ...)."""

    def __init__(self, error: FileError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: FileError | None = None
    source: str | None = None
    # The project files whose summaries the result depends on: path -> summary digest
    # (see analysis.project). A cached result is stale when one of them changes.
    dependencies: dict[str, str] = field(default_factory=dict)
    # A notebook's code cells (cell number -> source), for the full format's snippets.
    cells: dict[int, str] | None = None
