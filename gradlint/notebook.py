"""Jupyter notebooks: read a `.ipynb`, lint its code cells as one program, map findings
back to cells, and write fixes into the JSON without touching anything else.

    read_notebook(text, path) -> Notebook          raises SourceError / NotebookSkipped
    lint_notebook(notebook, path, config) -> NotebookLint
    fix_notebook(notebook, path, config, unsafe=) -> NotebookFix
    notebook_diff(old, new, display) -> str        a unified diff per changed cell

The code cells, in cell order, are one program: a `model.eval()` in cell 5 reaches the
forward in cell 9, as it does when the notebook runs top to bottom. Markdown and raw
cells (and cells of another language) are left out. IPython syntax is masked line by line
so the rest of the cell is still analysed: a line magic or shell escape (`%time`, `!pip`,
`x = !ls`), a help query (`obj?`, `?obj`) becomes `pass` (or `x = ...`) at the same
indentation; a cell magic (`%%bash`) masks its whole cell unless it runs the body as
Python (`%%time`, `%%capture`, ...), when only the magic line is masked. As in IPython,
only the start of a logical line can be an escape, and a help query is a statement whose
code ends in `?`: a `?` ending a comment or a string, and a `%` opening a line inside
brackets or a string, are Python. Masking is only tried on a cell that does not compile
as it stands, so a `%` or `?` inside valid Python (a string, a modulo) is never touched.
Before masking, a cell that starts indented loses that indentation on every line that
has it, as IPython strips it: findings keep the cell's own columns, and the lines a fix
writes get the indentation back (a fix that rewrites a line without it is refused). A cell that still does not compile is reported
with its number and left out; the other cells are linted. A cell whose magic runs its
body as another language is not part of the program at all, and a line a fix adds above
a cell magic (`import torch` in the first cell) goes right below the magic line, or is
refused when the body does not run in the notebook's namespace (`%%timeit`).

Between two cells the program holds one marker comment line, fenced so that no line of
any cell can be mistaken for it, so a fixed program splits back into its cells exactly; a
fix that would cross a marker, or edit a masked line, is refused rather than guessed at,
and so is a split that changes a cell no fix touched.

Positions: rows and columns inside the cell (`cell` is 1-based and counts every cell,
markdown included, as ruff does), and the same point in the raw JSON text for the formats
that annotate files. Fixes rewrite only the JSON string tokens of the `source` lines that
changed, so outputs, metadata, execution counts, key order, indentation and the final
newline stay byte for byte.

The JSON is read with the standard library; a scan over its tokens finds where each
cell's source lines lie in the raw text. It skips a string from quote to quote, so a
megabyte of base64 image output costs time in proportion and no memory of its own.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import json
import re
from bisect import bisect_right
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
from gradlint.edits import split_lines
from gradlint.output.common import diff_text, printable
from gradlint.results import FileResult, SourceError

NOTEBOOK_SUFFIX = ".ipynb"

# Cell magics whose body IPython runs as Python: only their first line is masked.
PYTHON_CELL_MAGICS = frozenset(
    {"time", "timeit", "capture", "prun", "debug", "pypy", "python", "python3", "ipython"}
)
# Of those, the ones that run the body in the kernel's own namespace, where a line a fix
# adds (`import torch`) still binds for the later cells: %%timeit runs it inside a
# function, %%python and the like in another process.
NAMESPACE_CELL_MAGICS = frozenset({"time", "capture", "prun", "debug"})
PYTHON_LANGUAGES = frozenset({"python", "python3", "python2", "ipython", "ipython3"})

# The comment line placed between two cells of the program (never before the first, so a
# docstring in the first cell stays the module's and imports a fix adds land in it). Its
# fence of carets is made longer than any run of carets in the cells' own lines, so no
# cell line can be taken for a marker (a notebook may hold gradlint's own program text).
MARKER = "# gradlint: cell {number} {fence}"
_FENCE = "^"
_MIN_FENCE = 3
_CARETS = re.compile(r"\^+")

_COMPILE_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT


def is_notebook(path: str) -> bool:
    return path.lower().endswith(NOTEBOOK_SUFFIX)


class NotebookSkipped(Exception):
    """A notebook that is deliberately not linted (a kernel in another language)."""


# ---------------------------------------------------------------------------
# Reading the JSON, with the raw positions of each cell's source


@dataclass(frozen=True)
class Piece:
    """One JSON string of a cell's source (a line, or the whole source when it is one
    string): its decoded text and the span of its token, quotes included."""

    text: str
    start: int
    end: int


@dataclass
class Cell:
    number: int  # 1-based among all cells
    kind: str  # "code", "markdown", "raw" (or whatever the file says)
    source: str
    # Where the source lies in the raw text: the pieces, and the span of the `source`
    # value (the array's brackets, or the one string). None without a raw text (an editor).
    pieces: list[Piece] | None = None
    span: tuple[int, int] | None = None
    is_list: bool = True

    @property
    def is_code(self) -> bool:
        return self.kind == "code"


@dataclass
class Notebook:
    cells: list[Cell]
    text: str | None = None  # the raw JSON, when read from a file
    _line_starts: list[int] | None = field(default=None, repr=False)

    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            text = self.text or ""
            self._line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        return self._line_starts

    def raw_position(self, cell: Cell, row: int, column: int) -> Position:
        """The point of the raw file that holds (row, column) of the cell's source; the
        start of the source value when the cell has no recorded pieces."""
        offset = self._raw_offset(cell, row, column)
        starts = self.line_starts()
        line = bisect_right(starts, offset)
        return Position(line, offset - starts[line - 1])

    def _raw_offset(self, cell: Cell, row: int, column: int) -> int:
        if not cell.pieces:
            return cell.span[0] if cell.span else 0
        # The decoded offset of the point, then the piece holding it.
        lines = split_lines(cell.source)
        row = max(1, min(row, len(lines) or 1))
        target = sum(len(line) for line in lines[: row - 1]) + column
        consumed = 0
        for piece in cell.pieces:
            if target < consumed + len(piece.text) or piece is cell.pieces[-1]:
                return _raw_index(self.text or "", piece, max(0, target - consumed))
            consumed += len(piece.text)
        return cell.pieces[0].start


_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}|\\.|.", re.DOTALL)


def _raw_index(text: str, piece: Piece, index: int) -> int:
    """The raw offset of decoded character `index` of a string token."""
    position = piece.start + 1
    for _ in range(index):
        match = _ESCAPE.match(text, position, piece.end - 1)
        if match is None:
            break
        position = match.end()
    return position


# Whitespace, and a bare literal (number, true, false, null): runs of one character class,
# which the regular expression engine matches without keeping state per character.
_SPACE = re.compile(r"[ \t\r\n]*")
_BARE = re.compile(r'[^\s{}\[\],:"]+')
_PUNCTUATION = frozenset("{}[],:")


def _string_end(text: str, start: int) -> int:
    """The offset just past the string token opening at `start`, -1 if it never closes.
    A scan from quote to quote that counts the backslashes before each: linear in time,
    constant in memory, where a regular expression over the token's characters kept
    state for every one of them (a 20 MB image output cost 2.9 GB)."""
    position = start + 1
    while True:
        quote = text.find('"', position)
        if quote < 0:
            return -1
        backslash = quote
        while backslash > position and text[backslash - 1] == "\\":
            backslash -= 1
        if (quote - backslash) % 2 == 0:
            return quote + 1
        position = quote + 1


def _skip_space(text: str, position: int) -> int:
    match = _SPACE.match(text, position)
    return match.end() if match else position  # it always matches: `*` allows none


def _tokens(text: str):
    """(kind, start, end) of each JSON token: kind is "string", the punctuation character
    itself, or "bare"; ("error", offset, offset) where no token can start."""
    position = _skip_space(text, 0)
    length = len(text)
    while position < length:
        char = text[position]
        if char == '"':
            end = _string_end(text, position)
            if end < 0:
                yield "error", position, position
                return
            yield "string", position, end
        elif char in _PUNCTUATION:
            end = position + 1
            yield char, position, end
        else:
            match = _BARE.match(text, position)
            if match is None:
                yield "error", position, position
                return
            end = match.end()
            yield "bare", position, end
        position = _skip_space(text, end)


def _source_positions(text: str) -> dict[int, tuple[tuple[int, int], bool, list[Piece]]] | None:
    """cell index (0-based) -> (span of its `source` value, whether it is a list, the
    pieces), read from the token stream. None when the scan loses its way (it never
    should on text json.loads accepted)."""
    found: dict[int, tuple[tuple[int, int], bool, list[Piece]]] = {}
    # Each frame: [is_object, key or index, expecting a key]
    stack: list[list] = []
    source_open: tuple[int, int] | None = None  # (cell index, offset of `[`)
    for kind, start, end in _tokens(text):
        if kind == "error":
            return None
        is_string = kind == "string"  # sliced only where read: outputs can be megabytes
        punct = kind if kind in _PUNCTUATION else None
        depth = len(stack)
        top = stack[-1] if stack else None
        if punct is not None:
            if punct in "{[":
                _value_starts(top)
                if (
                    punct == "["
                    and depth == 3
                    and top is not None
                    and _in_cell(stack)
                    and top[1] == "source"
                ):
                    source_open = (stack[1][1], start)
                    found[stack[1][1]] = ((start, -1), True, [])
                stack.append([punct == "{", -1 if punct == "[" else None, punct == "{"])
            elif punct in "}]":
                if not stack:
                    return None
                stack.pop()
                if punct == "]" and depth == 4 and source_open is not None and _in_cell(stack):
                    index, opened = source_open
                    _, is_list, pieces = found[index]
                    found[index] = ((opened, end), is_list, pieces)
                    source_open = None
            elif punct == ":":
                if top is not None:
                    top[2] = False
            elif punct == "," and top is not None and top[0]:
                top[2] = True
            continue
        if is_string and top is not None and top[0] and top[2]:
            # A key: decoded only where it can matter.
            top[1] = json.loads(text[start:end]) if depth <= 3 else ""
            continue
        _value_starts(top)
        if not is_string:
            continue
        if depth == 3 and top is not None and _in_cell(stack) and top[1] == "source":
            piece = Piece(json.loads(text[start:end]), start, end)
            found[stack[1][1]] = ((start, end), False, [piece])
        elif (
            depth == 4
            and source_open is not None
            and _in_cell(stack[:3])
            and stack[2][1] == "source"
        ):
            found[stack[1][1]][2].append(Piece(json.loads(text[start:end]), start, end))
    if stack:
        return None
    return found


def _value_starts(frame: list | None) -> None:
    if frame is not None and not frame[0]:
        frame[1] += 1


def _in_cell(stack: list[list]) -> bool:
    """Inside cells[i] of the top-level object."""
    return (
        len(stack) >= 3
        and stack[0][0]
        and stack[0][1] == "cells"
        and not stack[1][0]
        and stack[2][0]
    )


def _language(document: dict) -> str | None:
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        return None
    for section, key in (("kernelspec", "language"), ("language_info", "name")):
        value = metadata.get(section)
        if isinstance(value, dict) and isinstance(value.get(key), str):
            return value[key]
    return None


def _cell_language(cell: dict) -> str | None:
    """VS Code records a code cell's own language (`%%sql` cells, `csharp` in a
    polyglot notebook) in metadata.vscode.languageId."""
    metadata = cell.get("metadata")
    if isinstance(metadata, dict):
        vscode = metadata.get("vscode")
        if isinstance(vscode, dict) and isinstance(vscode.get("languageId"), str):
            return vscode["languageId"]
    return None


def read_notebook(text: str, path: str) -> Notebook:
    """The cells of a notebook's JSON text. Raises SourceError with a one-line reason for
    text that is not an nbformat 4 notebook, NotebookSkipped for one whose kernel is not
    Python."""
    if not text.strip():
        return Notebook([], text)  # an empty file: nothing to lint, as ruff treats it
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(
            FileError(
                path, f"not a valid notebook: invalid JSON: {exc.msg}", exc.lineno, exc.colno - 1
            )
        ) from None
    except RecursionError:
        raise SourceError(FileError(path, "not a valid notebook: JSON nested too deeply")) from None
    if not isinstance(document, dict):
        kind = type(document).__name__.replace("dict", "object")
        raise SourceError(
            FileError(path, f"not a Jupyter notebook: the JSON is a {kind}, not an object")
        )
    nbformat = document.get("nbformat")
    if "worksheets" in document or (isinstance(nbformat, int) and nbformat < 4):
        raise SourceError(
            FileError(
                path,
                f"nbformat {nbformat} notebook: gradlint reads nbformat 4; convert it with "
                "`jupyter nbconvert --to notebook --nbformat 4`",
            )
        )
    raw_cells = document.get("cells")
    if not isinstance(raw_cells, list):
        raise SourceError(FileError(path, 'not a Jupyter notebook: no "cells" list'))
    language = _language(document)
    if language is not None and language.lower() not in PYTHON_LANGUAGES:
        raise NotebookSkipped(f"the notebook's kernel language is {language!r}, not Python")
    cells: list[Cell] = []
    for index, raw in enumerate(raw_cells):
        number = index + 1
        if not isinstance(raw, dict):
            raise SourceError(FileError(path, f"cell {number} is not a JSON object"))
        kind = str(raw.get("cell_type"))
        source = raw.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source_text = "".join(source)
        elif isinstance(source, str):
            source_text = source
        else:
            raise SourceError(
                FileError(path, f"cell {number}: source must be a string or a list of strings")
            )
        cell_language = _cell_language(raw)
        if kind == "code" and cell_language is not None:
            if cell_language.lower() not in PYTHON_LANGUAGES:
                kind = f"code:{cell_language}"  # not Python: left out like markdown
        cells.append(Cell(number, str(kind), source_text, is_list=isinstance(source, list)))
    positions = _source_positions(text)
    if positions is not None:
        for index, cell in enumerate(cells):
            span, is_list, pieces = positions.get(index, (None, cell.is_list, None))
            if pieces is not None and "".join(p.text for p in pieces) == cell.source:
                cell.span, cell.pieces = span, pieces
    return Notebook(cells, text)


def notebook_from_cells(cells: list[tuple[str, str]]) -> Notebook:
    """A notebook from (kind, source) pairs, as an editor holds it: no raw text."""
    return Notebook([Cell(i + 1, kind, text) for i, (kind, text) in enumerate(cells)])


# ---------------------------------------------------------------------------
# IPython syntax


_CELL_MAGIC = re.compile(r"^\s*%%(?P<name>\w+)")
_ASSIGNED_MAGIC = re.compile(r"^(?P<target>\s*[\w.]+(?:\s*,\s*[\w.]+)*\s*=\s*)[%!]")
_ESCAPES = ("%", "!", "?")  # a line magic, a shell escape, a help query `?obj`
# A string's opening: its prefix (r, b, f, u and their pairs), then one or three quotes.
_STRING_OPEN = re.compile(r"""(?i:rb|br|fr|rf|[rbfu])?('''|\"\"\"|'|")""")
_STRING_STARTS = frozenset("'\"rRbBfFuU")
_OPENING = frozenset("([{")
_CLOSING = frozenset(")]}")


def compiles(text: str) -> SyntaxError | None:
    try:
        compile(text, "<cell>", "exec", _COMPILE_FLAGS, dont_inherit=True)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError) as exc:
        return SyntaxError(str(exc))
    return None


def _engine_parses(text: str) -> bool:
    from gradlint.engine import parse  # here: reading a notebook needs no LibCST

    try:
        parse(text, "<cell>")
    except SourceError:
        return False
    return True


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


_LEADING_INDENT = re.compile(r"[ \t]+")


def leading_indent(source: str) -> str:
    """The indentation IPython strips from a cell: that of its first line that is not
    blank (IPython drops blank leading lines first)."""
    for line in split_lines(source):
        if line.strip():
            match = _LEADING_INDENT.match(line)
            return match.group() if match else ""
    return ""


def dedent(source: str, indent: str) -> str:
    """The cell as IPython runs it: `indent` removed from every line that starts with it,
    other lines (blank ones, lines of a string) as they are."""
    if not indent:
        return source
    size = len(indent)
    return "".join(line[size:] if line.startswith(indent) else line for line in split_lines(source))


@dataclass
class _Scan:
    """Where a Python scan of a cell stands at a line break: inside which string, how
    deep in brackets, after a backslash continuation."""

    quote: str | None = None  # the closing quote of the string left open
    depth: int = 0
    backslash: bool = False

    @property
    def at_statement(self) -> bool:
        """The next line starts a logical line (a statement, or a clause header)."""
        return self.quote is None and self.depth == 0 and not self.backslash

    def line(self, body: str) -> str:
        """Scan one line (without its break); the last character of its code outside
        strings and comments ("" when none), with the state carried to the next line."""
        last = ""
        self.backslash = False
        position, length = 0, len(body)
        while position < length:
            if self.quote is not None:
                end = body.find(self.quote, position)
                escape = body.find("\\", position)
                if 0 <= escape < (end if end >= 0 else length):
                    if escape == length - 1:  # the string runs on past the line break
                        return '"'
                    position = escape + 2
                    continue
                if end < 0:
                    if len(self.quote) == 1:
                        self.quote = None  # an unclosed one-line string ends with its line
                    return '"'
                position = end + len(self.quote)
                self.quote, last = None, '"'
                continue
            char = body[position]
            if char == "#":
                break
            opening = _STRING_OPEN.match(body, position) if char in _STRING_STARTS else None
            if opening is not None:
                self.quote = opening.group(1)
                position = opening.end()
                continue
            if char == "\\" and position == length - 1:
                self.backslash = True
                break
            if char in _OPENING:
                self.depth += 1
            elif char in _CLOSING:
                self.depth = max(0, self.depth - 1)
            if not char.isspace():
                last = char
            position += 1
        return last


def mask_ipython(source: str) -> str:
    """The cell with IPython syntax replaced, line for line, by Python that means nothing
    to the rules (see the module docstring). Lines keep their count and endings.

    IPython looks for its syntax where a logical line starts, as Python's tokenizer finds
    them: a `%`, `!` or `?` opening a line inside brackets or a string, or a `?` ending a
    comment or a string, is Python it runs as written. So the cell is scanned as Python,
    and only a logical line that starts with an escape, assigns one, or whose code
    (outside strings and comments) ends in `?` is masked, all its lines with it."""
    lines = split_lines(source)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None:
        magic = _CELL_MAGIC.match(lines[first])
        if magic is not None:
            if magic.group("name") not in PYTHON_CELL_MAGICS:
                return "".join(_ending(line) or "" for line in lines)
            lines[first] = _ending(lines[first])
    out: list[str] = []
    scan = _Scan()
    index = 0
    while index < len(lines):
        line = lines[index]
        body = line.rstrip("\r\n")
        stripped = body.strip()
        indent = body[: len(body) - len(body.lstrip())]
        if not scan.at_statement or not stripped or stripped.startswith("#"):
            scan.line(body)
            out.append(line)
            index += 1
            continue
        assigned = _ASSIGNED_MAGIC.match(body)
        if assigned is not None or stripped.startswith(_ESCAPES):
            # The escape runs to the end of the line and its backslash continuations,
            # whatever quotes or brackets it holds: it is not Python.
            head = f"{assigned.group('target')}..." if assigned else f"{indent}pass"
            out.append(head + _ending(line))
            index += 1
            while body.endswith("\\") and index < len(lines):
                body = lines[index].rstrip("\r\n")
                out.append(_ending(lines[index]))
                index += 1
            continue
        # A logical line of Python: its lines, then whether its code ends in `?`.
        logical = [line]
        last = scan.line(body)
        while not scan.at_statement and index + len(logical) < len(lines):
            following = lines[index + len(logical)]
            logical.append(following)
            last = scan.line(following.rstrip("\r\n")) or last
        if last == "?":
            out.append(f"{indent}pass{_ending(line)}")
            out.extend(_ending(rest) for rest in logical[1:])
        else:
            out.extend(logical)
        index += len(logical)
    return "".join(out)


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
            # What IPython runs, tried in turn while it does not compile: the cell as it
            # stands, without its leading indentation, with IPython syntax masked.
            indent = leading_indent(cell.source)
            dedented = dedent(cell.source, indent)
            masked, chosen = cell.source, ""
            problem = compiles(masked)
            if problem is not None and indent:
                masked, chosen = dedented, indent
                problem = compiles(masked)
            if problem is not None:
                masked, chosen = mask_ipython(dedented), indent
                problem = compiles(masked)
            if problem is not None:
                # Syntax newer than this Python (PEP 695 `type X = ...`, PEP 701
                # f-strings on 3.11) that a .py file gets linted with: the engine's
                # parser is the judge for both kinds of file.
                tried = ((cell.source, ""), (dedented, indent), (masked, indent))
                for candidate, candidate_indent in dict.fromkeys(tried):
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
        if related.path != own_path:
            return related  # another project file: already in its own coordinates
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
        for edit in fix.edits:
            first, start_row = self.cell_at(edit.start.line)
            last, end_row = self.cell_at(edit.end.line)
            if not first or first != last:
                return None, ()  # an edit across cells cannot be offered
            segment = self.segment(first)
            if segment.indent:
                in_cell = _indented_edit(segment, start_row, end_row, edit)
                if in_cell is None:
                    return None, ()
                edits.append(in_cell)
            else:
                edits.append(
                    Edit(
                        Position(start_row, edit.start.column),
                        Position(end_row, edit.end.column),
                        edit.content,
                    )
                )
            cells.append(first)
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


def _indented_edit(segment: Segment, start_row: int, end_row: int, edit: Edit) -> Edit | None:
    """A program edit in a cell IPython dedents, as an edit of the cell: the whole rows
    it touches, rewritten with the cell's indentation. None when a row is an IPython
    line or one without the cell's indentation (see _unmask)."""
    masked = split_lines(segment.masked)
    dedented = split_lines(segment.dedented)
    original = split_lines(segment.original)
    rows = range(start_row - 1, end_row)
    if end_row > len(masked) or any(
        masked[i] != dedented[i] or not segment.keeps_indent(i) for i in rows
    ):
        return None
    last = masked[end_row - 1]
    text = (
        masked[start_row - 1][: edit.start.column]
        + edit.content
        + last[edit.end.column :].rstrip("\r\n")
    )
    content = "".join(segment.indented(line) for line in split_lines(text))
    end = Position(end_row, len(original[end_row - 1].rstrip("\r\n")))
    return Edit(Position(start_row, 0), end, content)


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
        match = _CELL_MAGIC.match(original[magic])
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
    if first is not None and _CELL_MAGIC.match(lines[first]):
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
