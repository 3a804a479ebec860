"""`gradlint lsp`: a language server over stdio (pygls 2).

It publishes the engine's diagnostics when a document is opened, changed or saved, using
the configuration the CLI would use for that file (the closest pyproject.toml /
gradlint.toml). Changes are linted once the text has rested for DEBOUNCE_SECONDS, on a
worker thread; a result for a version the editor has since changed is dropped, and every
publication names its version. With `trace` on, each lint is reported by `$/logTrace`.
It offers code actions:

- the rule's fix for a diagnostic (quick fix), when it has one that can be applied;
- "Disable GLxxx for this line": adds `# noqa: GLxxx`, or extends the line's noqa list;
- `source.fixAll.gradlint`: every fix, unsafe ones included, since the user asks for it.

Hovering a diagnostic shows the rule's summary and a link to its documentation. Requests
about a document that is not open get empty results.

Notebooks (LSP 3.17 notebook synchronisation, as `ruff server` does it): the server
advertises `notebookDocumentSync` for Python cells, follows `notebookDocument/didOpen`,
`didChange` (cells added, removed, re-kinded and edited), `didSave` and `didClose`, lints
the code cells in order as one program (gradlint.notebook), and publishes each cell's
findings on that cell's URI. Quick fixes and "disable for this line" work in a cell; a
fix that edits another cell too (an import added to the first) is left to fix-all, whose
edit spans every cell it changes.

Positions: the engine counts columns in code points; LSP counts in the encoding agreed at
initialisation (UTF-16 unless the client offers another), so every column is converted
through pygls's position codec.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import functools
import itertools
import logging
import os
import re
import sys
import time
from bisect import bisect_right
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

from gradlint import __version__, suppressions
from gradlint.about import install_hint
from gradlint.analysis.project import affected_by
from gradlint.config import Config, ConfigError, load_settings
from gradlint.diagnostics import Applicability, Diagnostic, Fix, Position, Related, Severity
from gradlint.discovery import Walker
from gradlint.edits import LineIndex, is_applicable
from gradlint.engine import (
    DEFAULT_CONFIG,
    SourceError,
    lint_before_syntax_error,
    lint_source,
    rule_by_code,
)
from gradlint.fileio import DEFAULT_MAX_FILE_SIZE, SourceReadError, format_size, read_regular
from gradlint.fixes import fix_source
from gradlint.notebook import fixed_cell_sources, lint_notebook, notebook_from_cells

try:
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer
    from pygls.uris import to_fs_path
except ImportError:  # the `lsp` extra is not installed; main() says so
    types = None  # type: ignore[assignment]

FIX_ALL_KIND = "source.fixAll.gradlint"
SOURCE = "gradlint"

log = logging.getLogger(__name__)


# --- positions ---------------------------------------------------------------------


class ClientPositions:
    """Converts engine positions (1-based lines, code-point columns) and string offsets of
    one text into LSP positions (0-based lines, columns in the client's code units)."""

    def __init__(self, source: str, codec) -> None:
        self.index = LineIndex(source)
        self.codec = codec

    def position(self, position: Position):
        start = self.index.line_starts[position.line - 1]
        prefix = self.index.source[start : start + position.column]
        return types.Position(line=position.line - 1, character=self.codec.client_num_units(prefix))

    def range(self, start: Position, end: Position):
        return types.Range(start=self.position(start), end=self.position(end))

    def at_offset(self, offset: int):
        line = bisect_right(self.index.line_starts, offset)
        start = self.index.line_starts[line - 1]
        return self.position(Position(line, offset - start))


# --- what the server knows about one document version -----------------------------


@dataclass
class LintedDocument:
    uri: str
    version: int | None
    source: str
    path: str
    config: Config
    positions: ClientPositions
    # (engine diagnostic, the LSP diagnostic published for it)
    findings: list[tuple[Diagnostic, types.Diagnostic]] = field(default_factory=list)
    # the project files whose summaries these findings used (analysis.project)
    dependencies: dict[str, str] = field(default_factory=dict)
    _fixed_all: str | None = None

    def fixed_all(self) -> str:
        """The text after every fix, unsafe ones included (computed once per version)."""
        if self._fixed_all is None:
            try:
                self._fixed_all = fix_source(
                    self.source, self.path, self.config, unsafe=True
                ).source
            except SourceError:
                self._fixed_all = self.source
        return self._fixed_all


def document_path(uri: str) -> str:
    return to_fs_path(uri) or "-"


def short_uri(uri: str, limit: int = 100) -> str:
    """A URI as messages show it: a client may send one of any length."""
    return uri if len(uri) <= limit else f"{uri[: limit - 21]}...{uri[-18:]}"


def usable_path(uri: str, warn) -> str:
    """The document's file path, or "-" (a document with no file) when the path cannot
    name a file on this system (too long, or with a NUL). Its text is linted all the
    same, with the configuration of the server's folder."""
    path = document_path(uri)
    if path == "-":
        return path
    try:
        os.lstat(path)
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            return path  # not saved yet, or unreadable: the lint says what it needs
    except ValueError:
        pass
    else:
        return path
    warn(
        f"gradlint: {short_uri(uri)} cannot name a file on this system; "
        "linted without its folder's configuration"
    )
    return "-"


def config_for(path: str, warn) -> Config:
    """The configuration the CLI would use for `path`; the defaults (and a warning) when
    the configuration file is invalid or cannot be read, so the editor keeps working
    while it is fixed. Read afresh each time, so an edit to pyproject.toml applies at
    the next lint."""
    start = Path(path).parent if path != "-" else Path.cwd()
    try:
        return load_settings(start).config
    except ConfigError as exc:
        warn(f"gradlint: {exc}; using the default configuration")
    except OSError as exc:
        warn(
            f"gradlint: cannot read the configuration for {short_uri(str(start))}: "
            f"{exc.strerror or exc}; using the default configuration"
        )
    return DEFAULT_CONFIG


def to_lsp_diagnostic(
    diagnostic: Diagnostic,
    positions: ClientPositions,
    uri: str | None = None,
    cell_target: Callable[[int], tuple[str, ClientPositions]] | None = None,
) -> types.Diagnostic:
    related = [
        related_information(r, diagnostic.path, positions, uri, cell_target)
        for r in diagnostic.related
    ]
    return types.Diagnostic(
        range=positions.range(diagnostic.start, diagnostic.end),
        message=diagnostic.message,
        severity=_LSP_SEVERITY[diagnostic.severity],
        code=diagnostic.code,
        code_description=types.CodeDescription(href=diagnostic.url) if diagnostic.url else None,
        source=SOURCE,
        related_information=related or None,
        data=_consequence_data(diagnostic),
    )


# A hint is shown faintly (no squiggle in most editors): waste that runs once or in tests.
_LSP_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


def _consequence_data(diagnostic: Diagnostic) -> dict | None:
    """What the pitfall does and how often it runs, for a client that sorts or filters."""
    if diagnostic.group is None and diagnostic.impact is None:
        return None
    return {
        "group": diagnostic.group.value if diagnostic.group is not None else None,
        "impact": diagnostic.impact.value if diagnostic.impact is not None else None,
    }


def related_information(
    related: Related,
    own_path: str,
    positions: ClientPositions,
    uri: str | None,
    cell_target: Callable[[int], tuple[str, ClientPositions]] | None = None,
) -> types.DiagnosticRelatedInformation:
    """A related place, in the client's position encoding: in the open document through
    its own positions, in a notebook's cell through that cell's, in another project file
    through that file's text on disk (its code-point columns as they are when it cannot
    be read)."""
    target: ClientPositions | None
    start, end = related.start, related.end
    if related.cell is not None and cell_target is not None and related.path == own_path:
        target_uri, target = cell_target(related.cell.number)
    elif related.path == own_path and uri is not None:
        target_uri, target = uri, positions
    else:
        if related.cell is not None:
            # A cell of a notebook on disk: the place in its JSON text.
            start, end = related.cell.file_start, related.cell.file_end
        target_uri = Path(os.path.abspath(related.path)).as_uri()
        try:
            text = read_regular(related.path, DEFAULT_MAX_FILE_SIZE).decode("utf-8")
        except (SourceReadError, UnicodeDecodeError):
            text = None
        target = ClientPositions(text, positions.codec) if text is not None else None
    try:
        if target is None:
            raise IndexError
        span = target.range(start, end)
    except IndexError:  # unreadable, or changed on disk since it was summarised
        span = types.Range(
            start=types.Position(line=start.line - 1, character=start.column),
            end=types.Position(line=end.line - 1, character=end.column),
        )
    return types.DiagnosticRelatedInformation(
        location=types.Location(uri=target_uri, range=span), message=related.message
    )


def _too_large(path: str, size: int, warn) -> bool:
    """Is a document of `size` characters over the CLI's default --max-file-size? LibCST
    needs about 1 GB of memory per MB of dense code: one huge document must not take
    the server, and every other open document, down with it."""
    if size <= DEFAULT_MAX_FILE_SIZE:
        return False
    warn(f"gradlint: {path} is over the {format_size(DEFAULT_MAX_FILE_SIZE)} limit; not linted")
    return True


def lint_document(uri: str, version: int | None, source: str, codec, warn) -> LintedDocument:
    path = usable_path(uri, warn)
    config = config_for(path, warn)
    positions = ClientPositions(source, codec)
    linted = LintedDocument(uri, version, source, path, config, positions)
    if path != "-" and Walker(config).is_force_excluded(os.path.abspath(path), False):
        # Editors open every file (a virtualenv's, a generated one): apply `exclude` as
        # the CLI does for files named under --force-exclude.
        return linted
    if _too_large(path, len(source), warn):
        return linted
    try:
        diagnostics = lint_source(source, path, config, dependencies=linted.dependencies)
    except SourceError as exc:
        # Not parseable (often mid-edit): other tools report the syntax error. The
        # statements above the one being typed are the document's own text, so their
        # findings stand where they are; nothing at or below the error is claimed.
        partial = lint_before_syntax_error(
            source, path, config, exc.error, dependencies=linted.dependencies
        )
        if partial is None:
            return linted
        diagnostics = partial[0]
    linted.findings = [(d, to_lsp_diagnostic(d, positions, uri)) for d in diagnostics]
    return linted


# --- notebooks ---------------------------------------------------------------------


@dataclass
class LintedNotebook:
    """One version of an open notebook's lint: findings by cell URI, in cell coordinates."""

    uri: str
    version: int | None
    path: str
    config: Config
    cells: tuple[tuple[str, str, str, int | None], ...]  # (cell URI, kind, text, version)
    codec: object
    findings: dict[str, list[tuple[Diagnostic, types.Diagnostic]]] = field(default_factory=dict)
    dependencies: dict[str, str] = field(default_factory=dict)
    _fixed: dict[str, str] | None = None

    def notebook(self):
        return notebook_from_cells([(kind, text) for _, kind, text, _ in self.cells])

    def fixed_cells(self) -> dict[str, str]:
        """cell URI -> its text after every fix, unsafe ones included (once per version)."""
        if self._fixed is None:
            try:
                changed = fixed_cell_sources(self.notebook(), self.path, self.config)
            except SourceError:
                changed = {}
            self._fixed = {self.cells[number - 1][0]: text for number, text in changed.items()}
        return self._fixed

    def cell_view(self, cell_uri: str) -> LintedDocument | None:
        """The cell as a document of its own, with its findings; a fix that also edits
        another cell is not offered as this cell's quick fix."""
        for number, (uri, _kind, text, version) in enumerate(self.cells, start=1):
            if uri != cell_uri:
                continue
            view = LintedDocument(
                uri, version, text, self.path, self.config, ClientPositions(text, self.codec)
            )
            for diagnostic, published in self.findings.get(uri, []):
                cell = diagnostic.cell
                if cell is not None and any(c != number for c in cell.edit_cells):
                    diagnostic = dataclasses.replace(diagnostic, fix=None)
                view.findings.append((diagnostic, published))
            view._fixed_all = text  # fix-all spans cells: see notebook_code_actions
            return view
        return None


def cell_kind(kind, language: str) -> str:
    """gradlint.notebook's kind of an LSP cell: a code cell in another language is left
    out of the program, like markdown."""
    if kind == types.NotebookCellKind.Markup:
        return "markdown"
    return "code" if language.lower() in ("python", "ipython", "") else f"code:{language}"


def lint_notebook_document(uri: str, version: int | None, cells, codec, warn) -> LintedNotebook:
    path = usable_path(uri, warn)
    config = config_for(path, warn)
    linted = LintedNotebook(uri, version, path, config, cells, codec)
    if path != "-" and Walker(config).is_force_excluded(os.path.abspath(path), False):
        return linted
    if _too_large(path, sum(len(cell[2]) for cell in cells), warn):
        return linted
    try:
        result = lint_notebook(linted.notebook(), path, config, dependencies=linted.dependencies)
    except SourceError:
        return linted
    positions: dict[str, ClientPositions] = {}

    def cell_target(number: int) -> tuple[str, ClientPositions]:
        cell_uri, _kind, text, _version = cells[number - 1]
        if cell_uri not in positions:
            positions[cell_uri] = ClientPositions(text, codec)
        return cell_uri, positions[cell_uri]

    for diagnostic in result.diagnostics:
        assert diagnostic.cell is not None
        cell_uri, cell_positions = cell_target(diagnostic.cell.number)
        published = to_lsp_diagnostic(diagnostic, cell_positions, cell_uri, cell_target)
        linted.findings.setdefault(cell_uri, []).append((diagnostic, published))
    return linted


def notebook_code_actions(
    linted: LintedNotebook, cell_uri: str, request_range, only, versioned: bool
) -> list:
    view = linted.cell_view(cell_uri)
    if view is None:
        return []
    actions = code_actions(view, request_range, only, versioned)
    findings = [d for pairs in linted.findings.values() for d, _ in pairs]
    if _wants(only, FIX_ALL_KIND) and any(_fixable(d.fix) for d in findings):
        fixed = linted.fixed_cells()
        changes = []
        for uri, _kind, text, version in linted.cells:
            if uri in fixed and fixed[uri] != text:
                edit = minimal_edit(ClientPositions(text, linted.codec), text, fixed[uri])
                changes.append((uri, version, edit))
        if changes:
            if versioned:
                edit = types.WorkspaceEdit(
                    document_changes=[
                        types.TextDocumentEdit(
                            text_document=types.OptionalVersionedTextDocumentIdentifier(
                                uri=uri, version=version
                            ),
                            edits=[change],
                        )
                        for uri, version, change in changes
                    ]
                )
            else:
                edit = types.WorkspaceEdit(changes={uri: [change] for uri, _, change in changes})
            actions.append(
                types.CodeAction(
                    title="gradlint: fix all auto-fixable problems", kind=FIX_ALL_KIND, edit=edit
                )
            )
    return actions


# --- code actions ------------------------------------------------------------------


def text_edit(positions: ClientPositions, start: Position, end: Position, content: str):
    return types.TextEdit(range=positions.range(start, end), new_text=content)


def minimal_edit(positions: ClientPositions, old: str, new: str):
    """One edit that turns `old` into `new`, trimmed to the part that changed, so markers
    and the cursor outside it stay where they are."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    # A position between the \r and \n of a line break does not exist for the client:
    # widen the edit over the whole break instead.
    if 0 < prefix < len(old) and old[prefix - 1 : prefix + 1] == "\r\n":
        prefix -= 1
    end = len(old) - suffix
    if suffix and 0 < end < len(old) and old[end - 1 : end + 1] == "\r\n":
        suffix -= 1
    return types.TextEdit(
        range=types.Range(
            start=positions.at_offset(prefix), end=positions.at_offset(len(old) - suffix)
        ),
        new_text=new[prefix : len(new) - suffix],
    )


@functools.lru_cache(maxsize=4)
def noqa_insertion(source: str, line: int, code: str) -> tuple[Position, str] | None:
    """Where and what to insert so that `line` carries `# noqa: <code>` (see
    suppressions.noqa_insertion: a line inside a multi-line string or a backslash
    continuation gets it at the end of that statement's last line)."""
    return suppressions.noqa_insertion(source, line, [code])


def _overlaps(a, b) -> bool:
    def key(p):
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _wants(only, kind: str) -> bool:
    """Whether a request's `only` filter admits `kind` (kinds are dotted hierarchies)."""
    if not only:
        return True
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def _fixable(fix: Fix | None) -> TypeGuard[Fix]:
    # Unsafe fixes are offered too: the user picks each action.
    return is_applicable(fix, unsafe=True)


def workspace_edit(linted: LintedDocument, edits: list, versioned: bool):
    if versioned:
        document = types.OptionalVersionedTextDocumentIdentifier(
            uri=linted.uri, version=linted.version
        )
        return types.WorkspaceEdit(
            document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)]
        )
    return types.WorkspaceEdit(changes={linted.uri: edits})


def code_actions(linted: LintedDocument, request_range, only, versioned: bool) -> list:
    actions = []
    positions = linted.positions
    if _wants(only, types.CodeActionKind.QuickFix):
        for diagnostic, published in linted.findings:
            if not _overlaps(published.range, request_range):
                continue
            if _fixable(diagnostic.fix):
                edits = [
                    text_edit(positions, e.start, e.end, e.content) for e in diagnostic.fix.edits
                ]
                actions.append(
                    types.CodeAction(
                        title=f"{diagnostic.fix.title} ({diagnostic.code})",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[published],
                        edit=workspace_edit(linted, edits, versioned),
                        is_preferred=diagnostic.fix.applicability is Applicability.SAFE,
                    )
                )
            insertion = noqa_insertion(linted.source, diagnostic.noqa_line, diagnostic.code)
            if insertion is not None:
                where, text = insertion
                actions.append(
                    types.CodeAction(
                        title=f"Disable {diagnostic.code} for this line",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[published],
                        edit=workspace_edit(
                            linted, [text_edit(positions, where, where, text)], versioned
                        ),
                    )
                )
    if _wants(only, FIX_ALL_KIND) and any(_fixable(d.fix) for d, _ in linted.findings):
        fixed = linted.fixed_all()
        if fixed != linted.source:
            actions.append(
                types.CodeAction(
                    title="gradlint: fix all auto-fixable problems",
                    kind=FIX_ALL_KIND,
                    edit=workspace_edit(
                        linted, [minimal_edit(positions, linted.source, fixed)], versioned
                    ),
                )
            )
    return actions


def hover_text(diagnostic: Diagnostic) -> str:
    rule = rule_by_code(diagnostic.code)
    parts = [f"**{diagnostic.code}** `{diagnostic.name}`: {diagnostic.message}"]
    if rule is not None:
        parts.append(rule.summary())
    if (
        diagnostic.fix is not None
        and diagnostic.fix.applicability is not Applicability.DISPLAY_ONLY
    ):
        parts.append(f"Fix ({diagnostic.fix.applicability.value}): {diagnostic.fix.title}")
    if diagnostic.url:
        parts.append(f"[Documentation]({diagnostic.url})")
    return "\n\n".join(parts)


# --- the editor's text ------------------------------------------------------------

# LSP lines end at \n, \r\n or \r, and nowhere else.
LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class OpenDocument:
    """One version of an open document's text, as the editor has it. `generation` is new
    for each change and each save, so a lint result can tell whether it is still the
    latest (a save keeps the text but may follow an edit to the configuration)."""

    uri: str
    version: int | None
    text: str
    generation: int
    # A notebook: its cells in order, (cell URI, kind, text, version); text is then "".
    cells: tuple[tuple[str, str, str, int | None], ...] | None = None


def text_offset(text: str, position, codec) -> int:
    """The string offset of an LSP position. A line past the end means the end of the
    text, a character past the end of its line the end of the line, as LSP specifies."""
    line, offset = 0, 0
    if position.line > 0:
        for match in LINE_BREAK_RE.finditer(text):
            line += 1
            if line == position.line:
                offset = match.end()
                break
        else:
            return len(text)
    found = LINE_BREAK_RE.search(text, offset)
    line_end = found.start() if found else len(text)
    units = 0
    while offset < line_end and units < position.character:
        units += codec.client_num_units(text[offset])
        offset += 1
    return offset


def apply_change(text: str, change, codec) -> str:
    """The text after one `didChange` content change.

    pygls's own documents split lines with str.splitlines, which also breaks at \\f,
    \\v, \\x1c-\\x1e, \\x85, U+2028 and U+2029: after any of them, every incremental edit
    landed lines away from where the editor made it. Lines are counted here as LSP counts
    them."""
    if not isinstance(change, types.TextDocumentContentChangePartial):
        return change.text
    start = text_offset(text, change.range.start, codec)
    end = text_offset(text, change.range.end, codec)
    return text[:start] + change.text + text[max(start, end) :]


def protocol_class():
    """pygls's protocol, except that text documents are left to gradlint: pygls applies
    incremental edits by str.splitlines lines (see apply_change), and in doing so even
    clamps the positions of the notification gradlint then receives."""
    from pygls.exceptions import JsonRpcInvalidRequest
    from pygls.protocol import LanguageServerProtocol
    from pygls.protocol.language_server import lsp_method

    class GradlintProtocol(LanguageServerProtocol):
        def handle_message(self, message):
            # LSP 3.17: after `shutdown`, requests error with InvalidRequest (pygls drops
            # them, and the client waits forever); notifications other than `exit` are
            # dropped.
            method = getattr(message, "method", None)
            if self._shutdown and method not in (None, types.EXIT) and hasattr(message, "id"):
                error = JsonRpcInvalidRequest(
                    f"the server is shut down: {method} refused, only `exit` is accepted"
                )
                self._send_response(message.id, None, error.to_response_error())
                return
            super().handle_message(message)

        def _user_handler(self, method: str, params):
            if (handler := self.fm.features.get(method)) is not None:
                yield handler, (params,), None

        @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
        def lsp_text_document__did_open(self, params):
            yield from self._user_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

        @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
        def lsp_text_document__did_change(self, params):
            yield from self._user_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

        @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
        def lsp_text_document__did_close(self, params):
            yield from self._user_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)

        # Notebook cells too: their text is kept and edited by gradlint (apply_change).
        @lsp_method(types.NOTEBOOK_DOCUMENT_DID_OPEN)
        def lsp_notebook_document__did_open(self, params):
            yield from self._user_handler(types.NOTEBOOK_DOCUMENT_DID_OPEN, params)

        @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
        def lsp_notebook_document__did_change(self, params):
            yield from self._user_handler(types.NOTEBOOK_DOCUMENT_DID_CHANGE, params)

        @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
        def lsp_notebook_document__did_close(self, params):
            yield from self._user_handler(types.NOTEBOOK_DOCUMENT_DID_CLOSE, params)

    return GradlintProtocol


# --- the client's messages, framed --------------------------------------------------

# A message longer than this is refused: pygls would allocate its Content-Length at once,
# and an absurd one (a typo, a hostile client) ended the server with a MemoryError.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
MAX_HEADER_LINE = 8192
CONTENT_LENGTH_RE = re.compile(rb"content-length:[ \t]*(\d+)[ \t]*\r?\n\Z", re.IGNORECASE)


class CheckedInput:
    """stdin as pygls reads it (`readline` for headers, `read(n)` for a body), handing it
    only well-framed messages. A message with no length, an empty one, or one longer
    than MAX_MESSAGE_BYTES is reported in one line and skipped: reading resumes at the
    next line that ends with a Content-Length header (a JSON body holds no raw line
    break inside a string, so such a line starts the next message)."""

    def __init__(self, raw, report: Callable[[str], None]) -> None:
        self.raw = raw
        self.report = report
        self.pending: list[bytes] = []  # the next message: its two header lines, its body
        self.resync_header: bytes | None = None
        self.declared = ""  # the last Content-Length, as the client wrote it

    def readline(self, *_size) -> bytes:
        if not self.pending:
            self._next_message()
        return self.pending.pop(0) if self.pending else b""

    def read(self, *_size) -> bytes:
        return self.pending.pop(0) if self.pending else b""

    def _next_message(self) -> None:
        while True:
            length = self._read_headers()
            if length is None:
                return  # the end of the input
            if 0 < length <= MAX_MESSAGE_BYTES:
                body = self.raw.read(length)
                if len(body) == length:
                    self.pending = [b"Content-Length: %d\r\n" % length, b"\r\n", body]
                return  # a body cut short is the end of the input
            if length == 0:
                self.report("gradlint: a message with no usable Content-Length was skipped")
            else:
                self.report(
                    f"gradlint: a message of {short_uri(self.declared, 40)} bytes was refused "
                    f"(the limit is {MAX_MESSAGE_BYTES // (1024 * 1024)} MiB) and skipped"
                )
            if not self._resynchronise():
                return

    def _read_headers(self) -> int | None:
        """The Content-Length of the next message, 0 when it has none; None at the end."""
        length, seen = 0, False
        line, self.resync_header = self.resync_header, None
        while True:
            if line is None:
                line = self.raw.readline(MAX_HEADER_LINE)
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                if seen:
                    return length
            elif not line.endswith(b"\n"):
                return 0  # longer than any header: not one
            else:
                seen = True
                found = CONTENT_LENGTH_RE.match(line)
                if found is not None:
                    digits = found.group(1).lstrip(b"0") or b"0"
                    self.declared = digits.decode("ascii")
                    # More digits than any memory holds: refused, without int() on them.
                    length = int(digits) if len(digits) <= 18 else MAX_MESSAGE_BYTES + 1
            line = None

    def _resynchronise(self) -> bool:
        """Skip to the next line that ends with a Content-Length header; False at the
        end of the input."""
        tail = b""
        while True:
            chunk = self.raw.readline(64 * 1024)
            if not chunk:
                return False
            window = (tail + chunk)[-128:]
            if chunk.endswith(b"\n"):
                found = CONTENT_LENGTH_RE.search(window)
                if found is not None:
                    self.resync_header = found.group(0)
                    return True
                tail = b""
            else:
                tail = window


# --- the server --------------------------------------------------------------------

# How long the text must rest after a change before it is linted: typing sends a change
# per keystroke, and only the last one's findings are worth computing.
DEBOUNCE_SECONDS = 0.1


class Server:
    """The documents, their lints and the scheduling between them.

    Everything here runs on pygls's event loop thread except the lints (and the code
    actions built from them), which run one at a time on a worker thread, so the loop
    keeps reading edits while a lint works. A change postpones its document's lint by
    DEBOUNCE_SECONDS; a result whose document changed meanwhile is dropped, so every
    publication carries the latest version's findings and names that version."""

    def __init__(self, server) -> None:
        self.server = server
        self.documents: dict[str, OpenDocument] = {}
        # uri -> (generation, lint)
        self.linted: dict[str, tuple[int, LintedDocument | LintedNotebook]] = {}
        self.in_flight: dict[str, tuple[int, asyncio.Future]] = {}
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.tasks: set[asyncio.Task] = set()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradlint-lint")
        self.generations = itertools.count()
        # Notebooks: cell URI -> notebook URI; cell URI -> (text, version, language);
        # notebook URI -> its cells in order, (cell URI, kind).
        self.cell_owner: dict[str, str] = {}
        self.cell_texts: dict[str, tuple[str, int | None, str]] = {}
        self.notebook_cells: dict[str, list[tuple[str, object]]] = {}
        self.warned: set[str] = set()
        self.shut_down = False
        # pygls's event loop, once the client initialised (messages from other threads).
        self.loop: asyncio.AbstractEventLoop | None = None

    # -- messages to the client

    def warn_once(self, message: str) -> None:
        if message in self.warned:
            return
        self.warned.add(message)
        self.server.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        )

    def trace(self, message: str) -> None:
        """`$/logTrace`, which the client asks for with `trace` at initialisation or with
        `$/setTrace`; silent otherwise."""
        if self.server.protocol.trace not in (None, types.TraceValue.Off):
            self.server.log_trace(types.LogTraceParams(message=message))

    # -- the documents

    def put(self, uri: str, version: int | None, text: str) -> OpenDocument:
        document = OpenDocument(uri, version, text, next(self.generations))
        self.documents[uri] = document
        return document

    def open(self, item) -> None:
        self.put(item.uri, item.version, item.text)
        self.schedule(item.uri, 0)

    def change(self, params) -> None:
        uri = params.text_document.uri
        document = self.documents.get(uri)
        if document is None:
            log.warning("change to %s, which is not open: ignored", uri)
            return
        codec = self.server.workspace.position_codec
        text = document.text
        for change in params.content_changes:
            text = apply_change(text, change, codec)
        self.put(uri, params.text_document.version, text)
        self.schedule(uri, DEBOUNCE_SECONDS)

    def save(self, uri: str) -> None:
        document = self.documents.get(uri)
        if document is not None:
            # Saving may follow a change to the configuration: lint afresh.
            self.put(uri, document.version, document.text)
            self.schedule(uri, 0)
        # Open documents that import the saved file were linted with its old summary,
        # and those whose callers were looked for may have a new one.
        saved = document_path(uri)
        for other, (_generation, linted) in list(self.linted.items()):
            if other == uri:
                continue
            if affected_by(linted.dependencies, saved):
                dependent = self.documents.get(other)
                if dependent is not None:
                    if dependent.cells is not None:
                        self.put_notebook(other, dependent.version)
                    else:
                        self.put(other, dependent.version, dependent.text)
                    self.schedule(other, 0)

    # -- notebooks

    def put_notebook(self, uri: str, version: int | None) -> OpenDocument:
        cells = []
        for cell_uri, kind in self.notebook_cells.get(uri, []):
            text, cell_version, language = self.cell_texts.get(cell_uri, ("", None, "python"))
            cells.append((cell_uri, cell_kind(kind, language), text, cell_version))
        document = OpenDocument(uri, version, "", next(self.generations), tuple(cells))
        self.documents[uri] = document
        return document

    def _open_cells(self, notebook_uri: str, items) -> None:
        for item in items or ():
            self.cell_texts[item.uri] = (item.text, item.version, item.language_id)
            self.cell_owner[item.uri] = notebook_uri

    def _close_cells(self, uris) -> None:
        for uri in uris:
            self.cell_texts.pop(uri, None)
            self.cell_owner.pop(uri, None)
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    def open_notebook(self, params) -> None:
        notebook = params.notebook_document
        self.notebook_cells[notebook.uri] = [(c.document, c.kind) for c in notebook.cells]
        self._open_cells(notebook.uri, params.cell_text_documents)
        self.put_notebook(notebook.uri, notebook.version)
        self.schedule(notebook.uri, 0)

    def change_notebook(self, params) -> None:
        uri = params.notebook_document.uri
        cells = self.notebook_cells.get(uri)
        if cells is None:
            log.warning("change to notebook %s, which is not open: ignored", uri)
            return
        change = params.change.cells
        if change is not None:
            if change.structure is not None:
                array = change.structure.array
                new = [(c.document, c.kind) for c in array.cells or ()]
                cells[array.start : array.start + array.delete_count] = new
                self._open_cells(uri, change.structure.did_open)
                self._close_cells(c.uri for c in change.structure.did_close or ())
            for cell in change.data or ():
                cells[:] = [(u, cell.kind if u == cell.document else k) for u, k in cells]
            codec = self.server.workspace.position_codec
            for content in change.text_content or ():
                cell_uri = content.document.uri
                text, _version, language = self.cell_texts.get(cell_uri, ("", None, "python"))
                for edit in content.changes:
                    text = apply_change(text, edit, codec)
                self.cell_texts[cell_uri] = (text, content.document.version, language)
        self.put_notebook(uri, params.notebook_document.version)
        self.schedule(uri, DEBOUNCE_SECONDS)

    def save_notebook(self, uri: str) -> None:
        document = self.documents.get(uri)
        if document is not None and document.cells is not None:
            self.put_notebook(uri, document.version)
            self.schedule(uri, 0)

    def close_notebook(self, uri: str) -> None:
        cells = self.notebook_cells.pop(uri, [])
        self.documents.pop(uri, None)
        self.linted.pop(uri, None)
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self._close_cells(cell_uri for cell_uri, _ in cells)

    def close(self, uri: str) -> None:
        self.documents.pop(uri, None)
        self.linted.pop(uri, None)
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )

    # -- linting

    def is_latest(self, uri: str, generation: int) -> bool:
        document = self.documents.get(uri)
        return document is not None and document.generation == generation

    async def latest(self, uri: str) -> LintedDocument | LintedNotebook | None:
        """The lint of the document's latest text: kept from before, being computed, or
        computed now. None when the document is not open, when its lint failed, or when it
        keeps changing while it is linted."""
        for _ in range(3):
            document = self.documents.get(uri)
            if document is None:
                return None
            kept = self.linted.get(uri)
            if kept is not None and kept[0] == document.generation:
                return kept[1]
            running = self.in_flight.get(uri)
            if running is None or running[0] != document.generation:
                running = (document.generation, asyncio.ensure_future(self._lint(document)))
                self.in_flight[uri] = running
            # Shielded: a request given up on must not drop a lint others wait for.
            linted = await asyncio.shield(running[1])
            if self.is_latest(uri, document.generation):
                return linted  # None when the lint failed: it was reported once
        return None

    async def _lint(self, document: OpenDocument):
        warnings: list[str] = []
        started = time.perf_counter()
        try:
            loop = asyncio.get_running_loop()
            codec = self.server.workspace.position_codec
            linted: LintedDocument | LintedNotebook | None
            if document.cells is not None:
                linted = await loop.run_in_executor(
                    self.worker,
                    lint_notebook_document,
                    document.uri,
                    document.version,
                    document.cells,
                    codec,
                    warnings.append,
                )
            else:
                linted = await loop.run_in_executor(
                    self.worker,
                    lint_document,
                    document.uri,
                    document.version,
                    document.text,
                    codec,
                    warnings.append,
                )
        except Exception as exc:  # a rule bug must not take the editor's server down
            log.exception("gradlint failed on %s", document.uri)
            self.warn_once(
                f"gradlint: internal error on {short_uri(document.uri)}: "
                f"{type(exc).__name__}: {short_uri(str(exc), 300)}"
            )
            linted = None
        finally:
            running = self.in_flight.get(document.uri)
            if running is not None and running[0] == document.generation:
                del self.in_flight[document.uri]
        for warning in warnings:
            self.warn_once(warning)
        latest = self.is_latest(document.uri, document.generation)
        self.trace(
            f"gradlint: linted {document.uri} (version {document.version}) in "
            f"{(time.perf_counter() - started) * 1000:.0f} ms"
            + ("" if latest else "; superseded, dropped")
        )
        if linted is not None and latest:
            self.linted[document.uri] = (document.generation, linted)
        return linted

    def schedule(self, uri: str, delay: float) -> None:
        """Lint and publish `uri` after `delay`, instead of any lint scheduled before."""
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        self.timers[uri] = loop.call_later(delay, self._start_publishing, uri)

    def _start_publishing(self, uri: str) -> None:
        self.timers.pop(uri, None)
        task = asyncio.ensure_future(self._publish(uri))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _publish(self, uri: str) -> None:
        document = self.documents.get(uri)
        if document is None:
            return
        linted = await self.latest(uri)
        # A newer change has its own publication coming.
        if linted is None or not self.is_latest(uri, document.generation):
            return
        if isinstance(linted, LintedNotebook):
            # Every cell, so a cell whose findings went away is cleared.
            for cell_uri, _kind, _text, version in linted.cells:
                self.server.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(
                        uri=cell_uri,
                        version=version,
                        diagnostics=[p for _, p in linted.findings.get(cell_uri, [])],
                    )
                )
            return
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri,
                version=linted.version,
                diagnostics=[published for _, published in linted.findings],
            )
        )

    # -- requests

    async def _linted_for(self, uri: str):
        """The lint a request about `uri` reads: the document's, or for a notebook cell
        that cell's view of its notebook's lint."""
        owner = self.cell_owner.get(uri)
        if owner is None:
            linted = await self.latest(uri)
            return linted if isinstance(linted, LintedDocument) else None, None
        notebook = await self.latest(owner)
        if not isinstance(notebook, LintedNotebook):
            return None, None
        return notebook.cell_view(uri), notebook

    async def code_actions(self, params):
        linted, notebook = await self._linted_for(params.text_document.uri)
        if linted is None:
            return None
        capabilities = self.server.client_capabilities.workspace
        versioned = bool(
            capabilities
            and capabilities.workspace_edit
            and capabilities.workspace_edit.document_changes
        )
        # Fix-all may lint several times over: off the loop, like a lint.
        loop = asyncio.get_running_loop()
        if notebook is not None:
            actions = await loop.run_in_executor(
                self.worker,
                notebook_code_actions,
                notebook,
                params.text_document.uri,
                params.range,
                params.context.only,
                versioned,
            )
        else:
            actions = await loop.run_in_executor(
                self.worker, code_actions, linted, params.range, params.context.only, versioned
            )
        return actions or None

    async def hover(self, params):
        linted, _notebook = await self._linted_for(params.text_document.uri)
        if linted is None:
            return None
        point = types.Range(start=params.position, end=params.position)
        found = [(d, p) for d, p in linted.findings if _overlaps(p.range, point)]
        if not found:
            return None
        return types.Hover(
            contents=types.MarkupContent(
                kind=types.MarkupKind.Markdown,
                value="\n\n---\n\n".join(hover_text(d) for d, _ in found),
            ),
            range=found[0][1].range,
        )

    def shutdown(self) -> None:
        self.shut_down = True
        for timer in self.timers.values():
            timer.cancel()
        self.timers.clear()
        self.worker.shutdown(wait=False, cancel_futures=True)


def create_server():
    server = LanguageServer(
        SOURCE,
        __version__,
        protocol_cls=protocol_class(),
        # Python cells of any notebook type (jupyter-notebook in VS Code and JupyterLab).
        notebook_document_sync=types.NotebookDocumentSyncOptions(
            notebook_selector=[
                types.NotebookDocumentFilterWithCells(
                    notebook="*", cells=[types.NotebookCellLanguage(language="python")]
                )
            ],
            save=True,
        ),
    )
    state = Server(server)
    server.gradlint = state

    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        # pygls reads `trace` only from $/setTrace; the initial value comes from here.
        if params.trace is not None:
            server.protocol.trace = params.trace
        state.loop = asyncio.get_running_loop()

    @server.feature(types.SHUTDOWN)
    def shutdown(params) -> None:
        state.shutdown()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        state.open(params.text_document)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        state.change(params)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        state.save(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        state.close(params.text_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def did_open_notebook(params: types.DidOpenNotebookDocumentParams) -> None:
        state.open_notebook(params)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def did_change_notebook(params: types.DidChangeNotebookDocumentParams) -> None:
        state.change_notebook(params)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def did_save_notebook(params: types.DidSaveNotebookDocumentParams) -> None:
        state.save_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def did_close_notebook(params: types.DidCloseNotebookDocumentParams) -> None:
        state.close_notebook(params.notebook_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    async def code_action(params: types.CodeActionParams):
        return await state.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(params: types.HoverParams):
        return await state.hover(params)

    return server


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="gradlint lsp", description="gradlint's language server, over stdio."
    )
    # Several editors' generic clients pass --stdio; stdio is the only transport anyway.
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (default)")
    # The CLI passes what follows `gradlint lsp`; called bare, there is nothing to parse.
    parser.parse_args([] if argv is None else argv)
    if types is None:
        print(
            f"gradlint: the language server needs pygls; install it with `{install_hint('lsp')}`",
            file=sys.stderr,
        )
        return 2
    server = create_server()
    state = server.gradlint

    def report(message: str) -> None:
        log.warning("%s", message)
        if state.loop is not None:  # initialised: the client shows it too
            state.loop.call_soon_threadsafe(state.warn_once, message)

    server.start_io(stdin=CheckedInput(sys.stdin.buffer, report))
    # `exit` ends the process with 0 after `shutdown` and 1 without (LSP 3.17), and so
    # does the client going away; pygls swallows the status, so it is decided here.
    return 0 if server.gradlint.shut_down else 1
