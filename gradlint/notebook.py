"""Jupyter notebooks: read a `.ipynb`, lint its code cells as one program, map findings
back to cells, and write fixes into the JSON without touching anything else.

    read_notebook(text, path) -> Notebook          from gradlint.ipynb
    lint_notebook(notebook, path, config) -> NotebookLint
    fix_notebook(notebook, path, config, unsafe=) -> NotebookFix
    notebook_diff(old, new, display) -> str        a unified diff per changed cell

The code cells, in cell order, are one program: a `model.eval()` in cell 5 reaches the
forward in cell 9, as it does when the notebook runs top to bottom. Markdown and raw
cells (and cells of another language) are left out. Each code cell is linted as the
Python IPython runs (gradlint.ipynb: its IPython syntax masked line for line, its leading
indentation stripped); findings keep the cell's own rows and columns, and the lines a fix
writes in an indented cell get the indentation back (a fix that rewrites a line without
it is refused). A cell that still does not compile is reported with its number and left
out; the other cells are linted. A cell whose magic runs its body as another language is
not part of the program at all, and a line a fix adds above a cell magic (`import torch`
in the first cell) goes right below the magic line, or is refused when the body does not
run in the notebook's namespace (`%%timeit`).

Between two cells the program holds one marker comment line, fenced so that no line of
any cell can be mistaken for it, so a fixed program splits back into its cells exactly; a
fix that would cross a marker, or edit a masked line, is refused rather than guessed at,
and so is a split that changes a cell no fix touched.

Positions: rows and columns inside the cell (`cell` is 1-based and counts every cell,
markdown included, as ruff does), and the same point in the raw JSON text for the formats
that annotate files. Fixes rewrite only the JSON string tokens of the `source` lines that
changed, so outputs, metadata, execution counts, key order, indentation and the final
newline stay byte for byte.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from dataclasses import dataclass, field

from gradlint.config import Config
from gradlint.diagnostics import (
    CellLocation,
    Diagnostic,
    Edit,
    FileError,
    Fix,
    Position,
    Related,
)
from gradlint.edits import apply_edits, split_lines
from gradlint.ipynb import (
    CELL_MAGIC,
    CELL_MARKER_PREFIX,
    Cell,
    Notebook,
    NotebookSkipped,
    cell_python,
    compiles,
    dedent,
    is_notebook,
    mask_ipython,
    notebook_from_cells,
    read_notebook,
)
from gradlint.output.common import diff_text, printable
from gradlint.results import FileResult, SourceError

# Read and turned into Python by gradlint.ipynb; here for the fronts that lint notebooks.
__all__ = [
    "Cell",
    "Notebook",
    "NotebookSkipped",
    "compiles",
    "is_notebook",
    "mask_ipython",
    "notebook_from_cells",
    "read_notebook",
]

# Of the cell magics whose body IPython runs as Python (ipynb.PYTHON_CELL_MAGICS), the
# ones that run it in the kernel's own namespace, where a line a fix adds (`import torch`)
# still binds for the later cells: %%timeit runs it inside a function, %%python and the
# like in another process.
NAMESPACE_CELL_MAGICS = frozenset({"time", "capture", "prun", "debug"})

# The comment line placed between two cells of the program (never before the first, so a
# docstring in the first cell stays the module's and imports a fix adds land in it). Its
# fence of carets is made longer than any run of carets in the cells' own lines, so no
# cell line can be taken for a marker (a notebook may hold gradlint's own program text).
MARKER = CELL_MARKER_PREFIX + "{number} {fence}"
_FENCE = "^"
_MIN_FENCE = 3
_CARETS = re.compile(r"\^+")


def _engine_parses(text: str) -> bool:
    from gradlint.engine import parse  # here: reading a notebook needs no LibCST

    try:
        parse(text, "<cell>")
    except SourceError:
        return False
    return True


# ---------------------------------------------------------------------------
# The program: code cells in order, with the map back


@dataclass(frozen=True)
class Segment:
    number: int  # the cell
    original: str  # the cell's source as the notebook holds it
    masked: str  # as linted (dedented, IPython masked); same number of lines
    added_newline: bool  # a line break was added after the cell's last line
    indent: str = ""  # the leading indentation IPython strips from the cell (see dedent)

    @property
    def dedented(self) -> str:
        return dedent(self.original, self.indent)

    def shift(self, row: int) -> int:
        """How many columns of cell row `row` (1-based) the program leaves out: the
        cell's indentation on a line that has it."""
        if not self.indent:
            return 0
        lines = split_lines(self.original)
        has_it = 1 <= row <= len(lines) and lines[row - 1].startswith(self.indent)
        return len(self.indent) if has_it else 0

    def indented(self, line: str) -> str:
        """A line of the fixed program as the cell holds it: blank lines stay blank."""
        return self.indent + line if line.strip() else line

    def masks_rows(self, first: int, last: int) -> bool:
        """Is one of the cell rows `first`..`last` (1-based) linted as something else than
        it reads: an IPython line masked as `pass`, an exercise's blank as `...`?"""
        if self.masked == self.original:
            return False
        masked = split_lines(self.masked)
        dedented = split_lines(self.dedented)
        return any(
            i >= len(masked) or i >= len(dedented) or masked[i] != dedented[i]
            for i in range(first - 1, last)
        )

    def keeps_indent(self, row: int) -> bool:
        """Can a fix rewrite cell row `row` (0-based) and indent its replacement? Not a
        line IPython left as it was (a line of a string, less indented than the cell)."""
        line = split_lines(self.original)[row]
        return not self.indent or not line.strip() or line.startswith(self.indent)


class NotebookFixError(Exception):
    """The fixed program cannot be put back into the cells exactly; nothing is written."""


@dataclass
class Program:
    notebook: Notebook
    segments: list[Segment]
    errors: list[FileError] = field(default_factory=list)  # cells that do not parse

    def __post_init__(self) -> None:
        parts: list[str] = []
        self.line_map: list[tuple[int, int]] = []  # program line - 1 -> (cell, row)
        longest = max(
            (len(run) for s in self.segments for run in _CARETS.findall(s.masked)), default=0
        )
        self.fence = _FENCE * max(_MIN_FENCE, longest + 1)
        for index, segment in enumerate(self.segments):
            if index:
                parts.append(self.marker(segment.number) + "\n")
                self.line_map.append((0, 0))
            text = segment.masked + ("\n" if segment.added_newline else "")
            parts.append(text)
            rows = len(split_lines(text))
            self.line_map.extend((segment.number, row) for row in range(1, rows + 1))
        self.text = "".join(parts)
        self.cells = {cell.number: cell for cell in self.notebook.cells}

    @classmethod
    def build(cls, notebook: Notebook, path: str, skip: frozenset[int] = frozenset()) -> Program:
        segments: list[Segment] = []
        errors: list[FileError] = []
        for cell in notebook.cells:
            if not cell.is_code or cell.number in skip or not cell.source.strip():
                continue
            python = cell_python(cell.source)
            masked, chosen, problem = python.text, python.indent, python.problem
            if problem is not None:
                # Syntax newer than this Python (PEP 695 `type X = ...`, PEP 701
                # f-strings on 3.11) that a .py file gets linted with: the engine's
                # parser is the judge for both kinds of file.
                for candidate, candidate_indent in python.tried:
                    if _engine_parses(candidate):
                        masked, chosen, problem = candidate, candidate_indent, None
                        break
            if problem is not None:
                errors.append(_cell_error(notebook, cell, problem, path, chosen))
                continue
            if not masked.strip():
                # A cell magic that runs its body as another language (`%%bash`): no
                # Python to lint, and no place for a line a fix adds (`import torch`).
                continue
            added = not masked.endswith(("\n", "\r"))
            segments.append(Segment(cell.number, cell.source, masked, added, chosen))
        return cls(notebook, segments, errors)

    def marker(self, number: int) -> str:
        """The line before cell `number` in the program, line break excluded."""
        return MARKER.format(number=number, fence=self.fence)

    # -- positions

    def cell_at(self, line: int) -> tuple[int, int]:
        """(cell, row) of a program line; (0, 0) for a marker or a line past the end."""
        if 1 <= line <= len(self.line_map):
            return self.line_map[line - 1]
        return (0, 0)

    def segment(self, number: int) -> Segment:
        return next(s for s in self.segments if s.number == number)

    def _last_row(self, number: int) -> tuple[int, int]:
        lines = split_lines(self.segment(number).original) or [""]
        return len(lines), len(lines[-1].rstrip("\r\n"))

    def to_cell(self, diagnostic: Diagnostic) -> Diagnostic:
        """The finding in cell coordinates, with its raw-file points."""
        span = self._cell_span(diagnostic.start, diagnostic.end)
        if span is None:  # never expected: a finding on a marker line; put it in row 1
            at = (self.segments[0].number, 1)
            span = self._cell_span(diagnostic.start, diagnostic.end, at)
            assert span is not None
        start, end, location = span
        number = location.number
        row = start.line
        noqa_cell, noqa_row = self.cell_at(diagnostic.noqa_line)
        fix, edit_cells = self._fix_to_cells(diagnostic.fix)
        location = dataclasses.replace(location, edit_cells=edit_cells)
        # replace(): severity, confidence and whatever else a finding carries stay as
        # they are; only positions move into cell coordinates.
        return dataclasses.replace(
            diagnostic,
            start=start,
            end=end,
            fix=fix,
            noqa_line=noqa_row if noqa_cell == number else row,
            cell=location,
            related=tuple(self._related_to_cell(r, diagnostic.path) for r in diagnostic.related),
        )

    def _related_to_cell(self, related: Related, own_path: str) -> Related:
        """A related place in this notebook, moved into its cell's coordinates."""
        if related.path != own_path or related.cell is not None:
            # Another project file, or a place the caller search found in this
            # notebook's cells: already in its own coordinates.
            return related
        span = self._cell_span(related.start, related.end)
        if span is None:
            return related
        start, end, location = span
        return dataclasses.replace(related, start=start, end=end, cell=location)

    def _cell_span(
        self, start: Position, end: Position, at: tuple[int, int] | None = None
    ) -> tuple[Position, Position, CellLocation] | None:
        """A program span in cell coordinates, with its raw-file points: an end in a
        later cell (a range running to the start of the next line) is clamped to the end
        of the start's cell. None for a span starting on a marker line. `at`: the start's
        (cell, row), when it is not where the program puts it."""
        number, row = at or self.cell_at(start.line)
        if not number:
            return None
        segment = self.segment(number)
        in_cell = Position(row, start.column + segment.shift(row))
        end_cell, end_row = self.cell_at(end.line)
        if end_cell == number:
            cell_end = Position(end_row, end.column + segment.shift(end_row))
        else:
            cell_end = Position(*self._last_row(number))
        cell = self.cells[number]
        location = CellLocation(
            number,
            self.notebook.raw_position(cell, in_cell.line, in_cell.column),
            self.notebook.raw_position(cell, cell_end.line, cell_end.column),
        )
        return in_cell, cell_end, location

    def _fix_to_cells(self, fix: Fix | None) -> tuple[Fix | None, tuple[int, ...]]:
        if fix is None:
            return None, ()
        edits: list[Edit] = []
        cells: list[int] = []
        # Edits in a cell IPython dedents, in its rows and the program's columns: they
        # become one edit of the cell's rows (two edits of one row would overlap there).
        dedented: dict[int, list[Edit]] = {}
        for edit in fix.edits:
            first, start_row = self.cell_at(edit.start.line)
            last, end_row = self.cell_at(edit.end.line)
            if not first or first != last:
                return None, ()  # an edit across cells cannot be offered
            in_rows = Edit(
                Position(start_row, edit.start.column),
                Position(end_row, edit.end.column),
                edit.content,
            )
            if self.segment(first).indent:
                dedented.setdefault(first, []).append(in_rows)
                continue
            if self.segment(first).masks_rows(start_row, end_row):
                return None, ()  # it would write `pass` or `...` over the cell's own text
            edits.append(in_rows)
            cells.append(first)
        for number, group in dedented.items():
            in_cell = _indented_edit(self.segment(number), group)
            if in_cell is None:
                return None, ()
            edits.append(in_cell)
            cells.append(number)
        return Fix(fix.title, tuple(edits), fix.applicability), tuple(cells)

    # -- back from a fixed program

    def split(self, fixed: str) -> dict[int, str]:
        """cell -> its new source, for the cells the fixed program changes. Raises
        NotebookFixError when the program no longer splits at its markers into cells of
        which every one the fixes left alone is byte for byte what it was, or when a fix
        edited a masked line."""
        lines = split_lines(fixed)
        markers = {self.marker(s.number): s.number for s in self.segments[1:]}
        pieces: list[list[str]] = [[]]
        numbers = [self.segments[0].number] if self.segments else []
        for line in lines:
            number = markers.get(line.rstrip("\r\n"))
            if number is not None:
                pieces.append([])
                numbers.append(number)
                continue
            pieces[-1].append(line)
        if numbers != [s.number for s in self.segments]:
            raise NotebookFixError("a fix crossed the boundary between two cells")
        touched = self._touched_cells(lines)
        changed: dict[int, str] = {}
        for segment, piece in zip(self.segments, pieces, strict=True):
            text = "".join(piece)
            if text == segment.masked + ("\n" if segment.added_newline else ""):
                continue
            if segment.number not in touched:
                # A split that moved text between cells: refuse rather than write it.
                raise NotebookFixError(
                    f"the fixed program does not split back into cell {segment.number}"
                )
            if segment.added_newline and text.endswith("\n"):
                text = text[:-1]
            changed[segment.number] = _unmask(segment, text)
        return changed

    def _touched_cells(self, fixed_lines: list[str]) -> set[int]:
        """The cells whose lines the fixed program differs in, found by comparing the
        programs line by line: text inserted between two lines may belong to either."""
        touched: set[int] = set()
        old = split_lines(self.text)
        matcher = difflib.SequenceMatcher(None, old, fixed_lines, autojunk=False)
        for tag, i1, i2, _, _ in matcher.get_opcodes():
            if tag == "equal":
                continue
            # 1-based program lines: the replaced ones, or the two around an insertion.
            lines = range(i1 + 1, i2 + 1) if i2 > i1 else (i1, i1 + 1)
            touched.update(self.cell_at(line)[0] for line in lines)
        touched.discard(0)
        return touched


def _indented_edit(segment: Segment, group: list[Edit]) -> Edit | None:
    """Edits of the program in a cell IPython dedents (rows of the cell, columns of the
    program) as one edit of the cell: the whole rows they touch, rewritten with the
    cell's indentation. None when a row is an IPython line or one without the cell's
    indentation (see _unmask), or the edits do not apply."""
    masked = split_lines(segment.masked)
    dedented = split_lines(segment.dedented)
    original = split_lines(segment.original)
    first = min(edit.start.line for edit in group)
    last = max(edit.end.line for edit in group)
    if last > len(masked) or any(
        masked[i] != dedented[i] or not segment.keeps_indent(i) for i in range(first - 1, last)
    ):
        return None
    rows = "".join(masked[first - 1 : last])
    moved = [
        Edit(
            Position(edit.start.line - first + 1, edit.start.column),
            Position(edit.end.line - first + 1, edit.end.column),
            edit.content,
        )
        for edit in group
    ]
    try:
        text = apply_edits(rows, moved)
    except ValueError:  # overlapping, or outside the rows
        return None
    # The last row's line break stays where it is, outside the edit.
    ending = masked[last - 1][len(masked[last - 1].rstrip("\r\n")) :]
    if ending and text.endswith(ending):
        text = text[: -len(ending)]
    content = "".join(segment.indented(line) for line in split_lines(text))
    end = Position(last, len(original[last - 1].rstrip("\r\n")))
    return Edit(Position(first, 0), end, content)


def _unmask(segment: Segment, fixed: str) -> str:
    """The fixed cell with its original lines back: lines the fix left alone are the
    original ones, lines it wrote get the cell's indentation; a fix that changed a masked
    line, or a line without the cell's indentation, is refused."""
    if segment.masked == segment.original:
        return fixed
    original = split_lines(segment.original)
    dedented = split_lines(segment.dedented)
    masked = split_lines(segment.masked)
    new = split_lines(fixed)
    # A cell magic must stay the cell's first line: lines a fix adds above it (an
    # `import torch` at the top of the program) go right below it, into the body that
    # IPython runs as Python.
    magic = _cell_magic_line(original)
    above_magic: list[str] = []
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, masked, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for i in range(i1, i2):
                out.append(original[i])
                if i == magic:
                    out.extend(above_magic)
            continue
        if any(dedented[i] != masked[i] for i in range(i1, i2)):
            raise NotebookFixError(f"a fix changed an IPython line in cell {segment.number}")
        if not all(segment.keeps_indent(i) for i in range(i1, i2)):
            raise NotebookFixError(
                f"a fix changed a line of cell {segment.number} that lacks the cell's indentation"
            )
        written = [segment.indented(line) for line in new[j1:j2]]
        if magic is not None and tag == "insert" and i1 <= magic:
            above_magic.extend(written)
            continue
        out.extend(written)
    if above_magic and magic is not None:
        match = CELL_MAGIC.match(original[magic])
        if (
            match is None
            or match.group("name") not in NAMESPACE_CELL_MAGICS
            or not original[magic].endswith(("\n", "\r"))
        ):
            raise NotebookFixError(
                f"a fix adds a line above the cell magic of cell {segment.number}, "
                "and its body does not run in the notebook's namespace"
            )
    return "".join(out)


def _cell_magic_line(lines: list[str]) -> int | None:
    """The index of the cell's `%%magic` line, if it has one."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and CELL_MAGIC.match(lines[first]):
        return first
    return None


def _cell_error(
    notebook: Notebook, cell: Cell, problem: SyntaxError, path: str, indent: str = ""
) -> FileError:
    """The cell's syntax error, at its row and column in the cell (`indent`: what the
    text that was compiled left out of the lines that start with it)."""
    row = problem.lineno or 1
    column = max((problem.offset or 1) - 1, 0)
    line = split_lines(cell.source)[row - 1] if row <= len(split_lines(cell.source)) else ""
    if indent and line.startswith(indent):
        column += len(indent)
    column = min(column, len(line.rstrip("\r\n")))
    raw = notebook.raw_position(cell, row, column) if notebook.text else Position(0, 0)
    return FileError(
        path,
        f"SyntaxError: {problem.msg}; the other cells were linted",
        row,
        column,
        cell=cell.number,
        file_line=raw.line,
    )


# ---------------------------------------------------------------------------
# Lint and fix


@dataclass
class NotebookLint:
    diagnostics: list[Diagnostic]
    error: FileError | None
    program: Program


def _lintable_program(
    notebook: Notebook,
    path: str,
    config: Config | None,
    noqa: bool = True,
    dependencies: dict[str, str] | None = None,
):
    """The program and its findings. A cell LibCST rejects though CPython compiled it
    is left out like one that does not compile, and the rest linted again."""
    # Imported where a notebook is linted: reading one (a cached result's cells) needs
    # neither the rules nor LibCST.
    from gradlint.engine import lint_source

    skip: set[int] = set()
    rejected: list[FileError] = []
    while True:
        program = Program.build(notebook, path, frozenset(skip))
        try:
            found = (
                lint_source(program.text, path, config, noqa=noqa, dependencies=dependencies)
                if program.segments
                else []
            )
        except SourceError as exc:
            number, row = program.cell_at(exc.error.line)
            if not number or number in skip:
                raise
            skip.add(number)
            cell = program.cells[number]
            column = exc.error.column + program.segment(number).shift(row)
            raw = notebook.raw_position(cell, row, column) if notebook.text else None
            rejected.append(
                FileError(
                    path,
                    f"{exc.error.message}; the other cells were linted",
                    row,
                    column,
                    cell=number,
                    file_line=raw.line if raw else 0,
                )
            )
            continue
        program.errors.extend(rejected)
        return program, found


def first_error(program: Program, path: str) -> FileError | None:
    """One error line for the notebook: the first cell that does not parse, naming the
    others."""
    errors = sorted(program.errors, key=lambda e: e.cell)
    if not errors:
        return None
    first = errors[0]
    if len(errors) == 1:
        return first
    others = ", ".join(str(e.cell) for e in errors[1:])
    message = first.message.replace(
        "; the other cells were linted",
        f"; cells {others} do not parse either; the other cells were linted",
    )
    return FileError(path, message, first.line, first.column, first.cell, first.file_line)


def lint_notebook(
    notebook: Notebook,
    path: str,
    config: Config | None = None,
    *,
    noqa: bool = True,
    dependencies: dict[str, str] | None = None,
) -> NotebookLint:
    """The notebook's findings in cell coordinates. `dependencies` collects the project
    files whose summaries they used, as for lint_source (the cache's invalidation)."""
    program, found = _lintable_program(notebook, path, config, noqa, dependencies)
    diagnostics = [program.to_cell(d) for d in found]
    diagnostics.sort(key=lambda d: d.sort_key)
    return NotebookLint(diagnostics, first_error(program, path), program)


@dataclass
class NotebookFix:
    text: str  # the new raw JSON (the input when nothing changed)
    notebook: Notebook
    fixed: list[Diagnostic]
    remaining: list[Diagnostic]
    error: FileError | None
    rejected: list[Diagnostic] = field(default_factory=list)
    converged: bool = True
    refused: str | None = None  # why the fixes could not be written back, if so


def fix_notebook(
    notebook: Notebook, path: str, config: Config | None, *, unsafe: bool
) -> NotebookFix:
    program, found = _lintable_program(notebook, path, config)
    error = first_error(program, path)
    text = notebook.text or ""
    if not program.segments:
        return NotebookFix(text, notebook, [], [], error)
    from gradlint.fixes import fix_source

    outcome = fix_source(program.text, path, config or Config(), unsafe=unsafe)
    remaining_in_old = [program.to_cell(d) for d in found]
    fixed = [_tolerant(program, d) for d in outcome.fixed]
    rejected = [_tolerant(program, d) for d in outcome.rejected]
    if outcome.source == program.text:
        return NotebookFix(text, notebook, [], remaining_in_old, error, rejected, outcome.converged)
    try:
        changed = program.split(outcome.source)
        new_text = rewrite_sources(notebook, changed)
    except NotebookFixError as exc:
        return NotebookFix(
            text, notebook, [], remaining_in_old, error, rejected, outcome.converged, str(exc)
        )
    new_notebook = read_notebook(new_text, path)
    after = lint_notebook(new_notebook, path, config)
    return NotebookFix(
        new_text, new_notebook, fixed, after.diagnostics, after.error, rejected, outcome.converged
    )


def _tolerant(program: Program, diagnostic: Diagnostic) -> Diagnostic:
    """A diagnostic of a later fix pass mapped with the first pass's program: its cell is
    right, its row may be off by the lines earlier fixes added; good for counting."""
    try:
        return program.to_cell(diagnostic)
    except (KeyError, StopIteration, IndexError):
        return diagnostic


# ---------------------------------------------------------------------------
# Writing sources back into the JSON


def source_lines(text: str) -> list[str]:
    """nbformat's list form: each line with its line break, the last without one unless
    the source ends with one."""
    return split_lines(text)


def rewrite_sources(notebook: Notebook, changed: dict[int, str]) -> str:
    """The raw JSON with the `source` of each changed cell replaced, editing only the
    string tokens of the lines that changed (and, when the number of lines changes, the
    separators between them, written as the array already writes them)."""
    text = notebook.text
    if text is None:
        raise NotebookFixError("no notebook text to write the fixes into")
    ensure_ascii = text.isascii() and "\\u" in text
    replacements: list[tuple[int, int, str]] = []
    cells = {cell.number: cell for cell in notebook.cells}
    for number, source in changed.items():
        cell = cells[number]
        if cell.span is None or cell.pieces is None:
            raise NotebookFixError(f"cannot locate the source of cell {number} in the file")
        if not cell.is_list:
            start, end = cell.span
            replacements.append((start, end, json.dumps(source, ensure_ascii=ensure_ascii)))
            continue
        replacements.extend(_list_edits(text, cell, source_lines(source), ensure_ascii))
    out: list[str] = []
    cursor = 0
    for start, end, content in sorted(replacements):
        out.append(text[cursor:start])
        out.append(content)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def _list_edits(
    text: str, cell: Cell, new: list[str], ensure_ascii: bool
) -> list[tuple[int, int, str]]:
    assert cell.pieces is not None and cell.span is not None
    old = [piece.text for piece in cell.pieces]

    def encode(line: str) -> str:
        return json.dumps(line, ensure_ascii=ensure_ascii)

    if len(old) == len(new):
        return [
            (piece.start, piece.end, encode(line))
            for piece, line in zip(cell.pieces, new, strict=True)
            if piece.text != line
        ]
    opened, closed = cell.span  # `[` ... `]` inclusive
    pieces = cell.pieces
    if pieces:
        lead = text[opened + 1 : pieces[0].start]
        tail = text[pieces[-1].end : closed - 1]
        separator = text[pieces[0].end : pieces[1].start] if len(pieces) > 1 else "," + lead
    else:
        line_start = text.rfind("\n", 0, opened) + 1
        head = text[line_start:opened]
        indent = head[: len(head) - len(head.lstrip(" \t"))]
        lead, tail = "\n" + indent + " ", "\n" + indent
        separator = "," + lead
    if not new:
        return [(opened, closed, "[]")]
    # Lines the fix left alone keep their own tokens, byte for byte.
    tokens: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            tokens.extend(text[p.start : p.end] for p in pieces[i1:i2])
        else:
            tokens.extend(encode(line) for line in new[j1:j2])
    return [(opened, closed, "[" + lead + separator.join(tokens) + tail + "]")]


# ---------------------------------------------------------------------------
# --diff


def notebook_diff(old: Notebook, changed: Notebook, display: str) -> str:
    """A unified diff per changed cell, headed `a/path:cell N` as ruff heads them."""
    name = printable(display)
    out: list[str] = []
    new_cells = {cell.number: cell for cell in changed.cells}
    for cell in old.cells:
        other = new_cells.get(cell.number)
        if other is None or other.source == cell.source:
            continue
        lines = difflib.unified_diff(
            split_lines(cell.source),
            split_lines(other.source),
            fromfile=f"a/{name}:cell {cell.number}",
            tofile=f"b/{name}:cell {cell.number}",
        )
        out.append(diff_text(lines, "cell"))
    return "".join(out)


def cell_sources(notebook: Notebook) -> dict[int, str]:
    """cell -> source, for the full format's snippets."""
    return {cell.number: cell.source for cell in notebook.cells if cell.is_code}


def program_source(text: str, path: str) -> str:
    """The notebook as one Python program (IPython lines masked, cells that do not parse
    left out): what runtime_check executes for a notebook fixture, cells in order."""
    return Program.build(read_notebook(text, path), path).text


def lint_notebook_file(path: str, config: Config | None = None) -> FileResult:
    """engine.lint_file for a notebook: never raises on bad input."""
    name = str(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return FileResult(name, error=FileError(name, f"cannot read: {exc.strerror or exc}"))
    try:
        document = read_notebook(data.decode("utf-8-sig"), name)
    except UnicodeDecodeError as exc:
        return FileResult(name, error=FileError(name, f"not valid utf-8: {exc.reason}"))
    except SourceError as exc:
        return FileResult(name, error=exc.error)
    except NotebookSkipped:
        return FileResult(name)
    try:
        linted = lint_notebook(document, name, config)
    except SourceError as exc:
        return FileResult(name, error=exc.error)
    return FileResult(name, linted.diagnostics, linted.error, cells=cell_sources(document))


def fixed_cell_sources(
    notebook: Notebook, path: str, config: Config | None, *, unsafe: bool = True
) -> dict[int, str]:
    """cell -> its source after every fix, for the cells that change: the editor's
    fix-all, which has cells and no JSON to rewrite."""
    program, _ = _lintable_program(notebook, path, config)
    if not program.segments:
        return {}
    from gradlint.fixes import fix_source

    outcome = fix_source(program.text, path, config or Config(), unsafe=unsafe)
    if outcome.source == program.text:
        return {}
    try:
        return program.split(outcome.source)
    except NotebookFixError:
        return {}
