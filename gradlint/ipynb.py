"""The `.ipynb` format as Python: a notebook's cells read from its JSON, and each code
cell as the Python that IPython runs. Below the analysis, which reads a notebook beside a
linted file (a caller of its functions, an importer of its module) through the same
functions that gradlint.notebook lints one with.

    read_notebook(text, path) -> Notebook          raises SourceError / NotebookSkipped
    cell_python(source) -> CellPython              the cell without its IPython syntax
    notebook_python(text) -> NotebookPython | None  the code cells as one module

IPython syntax is masked line by line so the rest of the cell is still analysed: a line
magic or shell escape (`%time`, `!pip`, `x = !ls`), a help query (`obj?`, `?obj`) becomes
`pass` (or `x = ...`) at the same indentation; a cell magic (`%%bash`) masks its whole
cell unless it runs the body as Python (`%%time`, `%%capture`, ...), when only the magic
line is masked. As in IPython, only the start of a logical line can be an escape, and a
help query is a statement whose code ends in `?`: a `?` ending a comment or a string, and
a `%` opening a line inside brackets or a string, are Python. Masking is only tried on a
cell that does not compile as it stands, so a `%` or `?` inside valid Python (a string,
a modulo) is never touched. Before masking, a cell that starts indented loses that
indentation on every line that has it, as IPython strips it. A course's exercise cell
that still does not compile for its blanks (`trans_ix = <YOUR CODE>`, `int(<YOUR CODE:
the greedy action>)`) has each blank masked as `...`, padded to its width, so the code
around the blanks is still analysed as the student is writing it.

The JSON is read with the standard library; a scan over its tokens finds where each
cell's source lines lie in the raw text. It skips a string from quote to quote, so a
megabyte of base64 image output costs time in proportion and no memory of its own.
"""

from __future__ import annotations

import ast
import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field

from gradlint.diagnostics import CellLocation, FileError, Position
from gradlint.edits import split_lines
from gradlint.results import SourceError

NOTEBOOK_SUFFIX = ".ipynb"
# How the comment line between two cells of a notebook's program begins (notebook.MARKER):
# the analysis reads cell boundaries from it.
CELL_MARKER_PREFIX = "# gradlint: cell "

# Cell magics whose body IPython runs as Python: only their first line is masked.
PYTHON_CELL_MAGICS = frozenset(
    {"time", "timeit", "capture", "prun", "debug", "pypy", "python", "python3", "ipython"}
)
PYTHON_LANGUAGES = frozenset({"python", "python3", "python2", "ipython", "ipython3"})

_COMPILE_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
# An exercise's blank left for the student, as course notebooks write it.
_BLANK = re.compile(r"<\s*your[ _]+code\b[^<>\n]*>|<\s*\.\.\.\s*>", re.IGNORECASE)


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


CELL_MAGIC = re.compile(r"^\s*%%(?P<name>\w+)")
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
        magic = CELL_MAGIC.match(lines[first])
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


@dataclass(frozen=True)
class CellPython:
    """A code cell as the Python IPython runs: `text` is the first of `tried` that
    compiles (the cell as it stands, without its leading indentation, with IPython syntax
    masked), else the last of them, with `problem` its SyntaxError. `indent` is what
    `text` leaves out of each line of the cell that starts with it."""

    text: str
    indent: str
    problem: SyntaxError | None
    tried: tuple[tuple[str, str], ...]  # (text, indent), in the order tried


def cell_python(source: str) -> CellPython:
    indent = leading_indent(source)
    dedented = dedent(source, indent)
    tried = [(source, "")] + ([(dedented, indent)] if indent else [])
    for text, text_indent in tried:
        problem = compiles(text)
        if problem is None:
            return CellPython(text, text_indent, None, tuple(tried))
    masked = mask_ipython(dedented)
    tried.append((masked, indent))
    problem = compiles(masked)
    if problem is not None and _BLANK.search(masked):
        blanks = mask_blanks(masked)
        if compiles(blanks) is None:
            tried.append((blanks, indent))
            return CellPython(blanks, indent, None, tuple(tried))
    return CellPython(masked, indent, problem, tuple(tried))


def mask_blanks(source: str) -> str:
    """The exercise's blanks (`<YOUR CODE>`) as `...`, each padded with spaces to its
    width, so every other position in the cell stays where it was."""
    return _BLANK.sub(lambda m: "..." + " " * (len(m.group(0)) - 3), source)


@dataclass(frozen=True)
class NotebookPython:
    """A notebook's Python code cells, each as IPython runs it, one after another as one
    module (cells that do not compile left out): what another file's analysis reads of
    a notebook (its imports, its calls), with the way back to the cells."""

    text: str
    notebook: Notebook
    # Per line of `text`: (index of its cell in notebook.cells, row in the cell, columns
    # the text leaves out of that row).
    rows: tuple[tuple[int, int, int], ...]
    # A code cell left out, or an exercise's blank (`<YOUR CODE>`) read as `...`: code
    # the notebook will hold that no reading of it sees (another call, another use).
    incomplete: bool = False

    def span(
        self, line: int, column: int, end_line: int, end_column: int
    ) -> tuple[Position, Position, CellLocation]:
        """A span of `text` in cell coordinates (an end in a later cell is clamped to
        the start's row), with its cell and raw-file points."""
        index, row, shift = self.rows[line - 1]
        start = Position(row, column + shift)
        end_index, end_row, end_shift = self.rows[min(end_line, len(self.rows)) - 1]
        end = Position(end_row, end_column + end_shift) if end_index == index else start
        cell = self.notebook.cells[index]
        location = CellLocation(
            cell.number,
            self.notebook.raw_position(cell, start.line, start.column),
            self.notebook.raw_position(cell, end.line, end.column),
        )
        return start, end, location


def notebook_python(text: str) -> NotebookPython | None:
    """The notebook as NotebookPython; None for text that is not a notebook, or one
    whose kernel is not Python."""
    try:
        notebook = read_notebook(text, "<notebook>")
    except (SourceError, NotebookSkipped):
        return None
    parts: list[str] = []
    rows: list[tuple[int, int, int]] = []
    incomplete = False
    for index, cell in enumerate(notebook.cells):
        if not cell.is_code:
            continue
        python = cell_python(cell.source)
        if python.problem is not None or _BLANK.search(cell.source):
            incomplete = True
        if python.problem is not None or not python.text.strip():
            continue
        parts.append(python.text if python.text.endswith(("\n", "\r")) else python.text + "\n")
        original = split_lines(cell.source)
        for row, line in enumerate(original, start=1):
            shift = len(python.indent) if python.indent and line.startswith(python.indent) else 0
            rows.append((index, row, shift))
    return NotebookPython("".join(parts), notebook, tuple(rows), incomplete)
