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
    """How loudly a finding is reported. The default follows its consequence group and
    impact (gradlint.codes.default_severity): a crash or a silently wrong result is an
    error, memory that grows with the run or waste on a hot path a warning, waste that
    runs once or only in tests a hint. `[tool.gradlint] severity` overrides it."""

    ERROR = "error"
    WARNING = "warning"
    HINT = "hint"

    @property
    def rank(self) -> int:
        """Higher is louder: `--fail-on` and the summary compare levels by it."""
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.HINT: 0, Severity.WARNING: 1, Severity.ERROR: 2}


class Group(str, enum.Enum):
    """What a finding's pitfall does when it runs, as Clippy groups its lints by
    consequence: `--select crash` picks findings by it."""

    CRASH = "crash"  # raises at run time
    WRONG = "wrong"  # trains silently wrong
    LEAK = "leak"  # memory grows with the run
    WASTE = "waste"  # a bounded cost per call


class Impact(str, enum.Enum):
    """How often the flagged code runs, read off its context (gradlint.analysis.impact):
    on every batch, on every epoch, once, or only under tests."""

    PER_BATCH = "per-batch"
    PER_EPOCH = "per-epoch"
    ONCE = "once"
    TEST = "test"

    @property
    def rank(self) -> int:
        """Higher runs more often: `--min-impact` and `--sort impact` compare by it."""
        return _IMPACT_RANK[self]


_IMPACT_RANK = {Impact.TEST: 0, Impact.ONCE: 1, Impact.PER_EPOCH: 2, Impact.PER_BATCH: 3}


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
class CellLocation:
    """Where a finding in a Jupyter notebook lies. The Diagnostic's start, end and
    noqa_line are then rows and columns inside cell `number`, and each fix edit is inside
    the cell `edit_cells` names for it; `file_start` and `file_end` are the same points in
    the raw .ipynb text, for the formats that point at files (SARIF, GitHub annotations)."""

    number: int  # 1-based, every cell counted (markdown and raw too), as ruff counts
    file_start: Position
    file_end: Position
    # The cell of each of the fix's edits, in Fix.edits order: a fix may add an import to
    # the first code cell while the finding is in the ninth.
    edit_cells: tuple[int, ...] = ()


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
    # In a notebook: the cell it is in (start and end are then inside that cell).
    cell: CellLocation | None = None


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
    # Set for a finding in a notebook (see CellLocation); None in a Python file.
    cell: CellLocation | None = None
    # What the pitfall does (None for the meta rules, which judge comments) and how often
    # the flagged code runs (None where no context was read).
    group: Group | None = None
    impact: Impact | None = None

    @property
    def sort_key(self) -> tuple:
        cell = self.cell.number if self.cell is not None else 0
        return (self.path, cell, self.start.line, self.start.column, self.code)


@dataclass(frozen=True)
class FileError:
    """A file gradlint could not lint: unreadable, not UTF-8, or not valid Python."""

    path: str
    message: str
    line: int = 0
    column: int = 0  # 0-based
    # A notebook cell that does not parse: its number (line and column are then inside
    # it) and the line of the raw .ipynb text that holds that row (SARIF, GitHub).
    cell: int = 0
    file_line: int = 0

    def __str__(self) -> str:
        if self.cell:
            return f"{self.path}:cell {self.cell}:{self.line}:{self.column + 1}: {self.message}"
        if self.line:
            return f"{self.path}:{self.line}:{self.column + 1}: {self.message}"
        return f"{self.path}: {self.message}"
