"""The data every front consumes: diagnostics, fixes and the text edits they carry.

Positions are 1-based lines and 0-based columns counted in Unicode code points, as LibCST
reports them. Each front converts: ruff-style JSON and SARIF use 1-based columns, flake8
adds 1 itself, LSP wants UTF-16 offsets.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Applicability(str, enum.Enum):
    """How safe it is to apply a fix without a human looking at it."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


class Severity(str, enum.Enum):
    """What a finding costs: an error raises or silently breaks training; a warning wastes
    memory or compute. Each rule has a default, overridable in `[tool.gradlint] severity`."""

    ERROR = "error"
    WARNING = "warning"


class Confidence(str, enum.Enum):
    """HIGH: the analysis saw everything the finding claims. LOW: it rests on an
    assumption the analysis could not check (a value it cannot see through, a name-based
    guess); each rule's documentation says which. `--min-confidence high` drops them."""

    HIGH = "high"
    LOW = "low"


@dataclass(frozen=True, order=True)
class Position:
    line: int  # 1-based
    column: int  # 0-based, code points


@dataclass(frozen=True)
class Edit:
    """Replace the text between start and end (end exclusive) with content."""

    start: Position
    end: Position
    content: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    applicability: Applicability = Applicability.UNSAFE


@dataclass(frozen=True)
class Related:
    """Another place that explains a finding (where the state is carried, where the
    gradient is differentiated again, where the model was put in eval mode), with a short
    label saying what happens there. `path` is the file it is in: the finding's own file,
    or another project file the analysis read (the project-wide pass)."""

    message: str
    path: str
    start: Position
    end: Position


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    message: str
    path: str
    start: Position
    end: Position
    fix: Fix | None = None
    # The line whose noqa comment suppresses this diagnostic (the first line of the node).
    noqa_line: int = 0
    url: str = ""
    # The other places that explain the finding, in the order the rule gives them.
    related: tuple[Related, ...] = ()
    severity: Severity = Severity.ERROR
    confidence: Confidence = Confidence.HIGH
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.start.line, self.start.column, self.code)


@dataclass(frozen=True)
class FileError:
    """A file gradlint could not lint: unreadable, not UTF-8, or not valid Python."""

    path: str
    message: str
    line: int = 0
    column: int = 0  # 0-based

    def __str__(self) -> str:
        if self.line:
            return f"{self.path}:{self.line}:{self.column + 1}: {self.message}"
        return f"{self.path}: {self.message}"
