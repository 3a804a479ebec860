"""`gradlint lsp` end to end: a real pygls client talks to the server over stdio, opens
documents, receives diagnostics, asks for code actions and applies the edits it gets."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import threading
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.workspace.position_codec import PositionCodec

from gradlint.engine import rule_by_code
from gradlint.lsp import FIX_ALL_KIND, ClientPositions, minimal_edit, noqa_insertion

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIXTURES = REPO / "fixtures"

# The server with the real rules plus the stand-in GL901 (flags `x += y`, fix: `x = x + y`),
# so the plumbing is tested whatever rules exist.
SERVER_WITH_TEST_RULE = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
import gradlint.codes as codes
import gradlint.engine as engine
from test_flake8_plugin import AugAddRule
engine.ALL_RULES = [*engine.ALL_RULES, AugAddRule]
codes.REGISTERED = (*codes.REGISTERED, codes.RuleCode(AugAddRule.code))
from gradlint.lsp import main
sys.exit(main())
"""

TIMEOUT = 20


# --- a minimal editor: apply LSP edits the way a client does -----------------------


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]


def _offset(text: str, position: types.Position) -> int:
    """LSP position (UTF-16 columns) -> offset in the Python string."""
    starts = _line_starts(text)
    if position.line >= len(starts):
        return len(text)
    offset, units = starts[position.line], 0
    while units < position.character:
        units += 2 if ord(text[offset]) > 0xFFFF else 1
        offset += 1
    return offset


def apply_edit(text: str, uri: str, edit: types.WorkspaceEdit) -> str:
    if edit.document_changes:
        edits = [e for change in edit.document_changes for e in change.edits]
        assert all(change.text_document.uri == uri for change in edit.document_changes)
    else:
        assert set(edit.changes) == {uri}
        edits = edit.changes[uri]
    spans = sorted(
        ((_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in edits),
        reverse=True,
    )
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


class RecordingClient(LanguageClient):
    """A client that keeps the server's exit status and its `$/logTrace` messages."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.exit_status: int | None = None
        self.traces: list[str] = []
        self.initialize_result: types.InitializeResult | None = None

    async def server_exit(self, server) -> None:
        self.exit_status = server.returncode


class Editor:
    """One server process and the documents open in it."""

    def __init__(self, client: RecordingClient) -> None:
        self.client = client
        self.published: dict[str, asyncio.Queue] = {}
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}

    def _queue(self, uri: str) -> asyncio.Queue:
        return self.published.setdefault(uri, asyncio.Queue())

    async def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        params = await asyncio.wait_for(self._queue(uri).get(), TIMEOUT)
        return list(params.diagnostics)

    async def open(self, path: Path, text: str) -> tuple[str, list[types.Diagnostic]]:
        uri = path.as_uri()
        self.texts[uri], self.versions[uri] = text, 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=1, text=text
                )
            )
        )
        return uri, await self.diagnostics(uri)

    async def replace(self, uri: str, text: str) -> list[types.Diagnostic]:
        self.texts[uri] = text
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return await self.diagnostics(uri)

    def save(self, uri: str, path: Path, text: str) -> None:
        """Write the document's new text to disk and say it was saved, as an editor does."""
        path.write_text(text, encoding="utf-8")
        self.texts[uri] = text
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    def edit(self, uri: str, start: tuple[int, int], end: tuple[int, int], new_text: str) -> None:
        """Send one incremental change, as editors do on each keystroke, and apply it here
        the way LSP defines lines (broken at \\n, \\r\\n and \\r only)."""
        range_ = types.Range(start=types.Position(*start), end=types.Position(*end))
        text = self.texts[uri]
        self.texts[uri] = (
            text[: _offset(text, range_.start)] + new_text + text[_offset(text, range_.end) :]
        )
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=[
                    types.TextDocumentContentChangePartial(range=range_, text=new_text)
                ],
            )
        )

    async def actions(self, uri: str, range_: types.Range, only=None) -> list[types.CodeAction]:
        result = await asyncio.wait_for(
            self.client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=range_,
                    context=types.CodeActionContext(diagnostics=[], only=only),
                )
            ),
            TIMEOUT,
        )
        return list(result or [])

    async def apply(self, uri: str, action: types.CodeAction) -> list[types.Diagnostic]:
        """Apply the action's edit, tell the server, return the new diagnostics."""
        return await self.replace(uri, apply_edit(self.texts[uri], uri, action.edit))


class Session:
    """A server process and a client, driven from an event loop in a background thread so
    that one server can serve several tests."""

    def __init__(self, command=None, *, document_changes: bool = False) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.editor = self.call(self._start(command, document_changes))

    def call(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(3 * TIMEOUT)

    def run(self, scenario):
        return self.call(scenario(self.editor))

    async def _start(self, command, document_changes: bool) -> Editor:
        client = RecordingClient("gradlint-tests", "0")
        editor = Editor(client)

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            editor._queue(params.uri).put_nowait(params)

        @client.feature(types.LOG_TRACE)
        def on_trace(params: types.LogTraceParams) -> None:
            client.traces.append(params.message)

        await client.start_io(*(command or [sys.executable, "-c", SERVER_WITH_TEST_RULE]), cwd=REPO)
        capabilities = types.ClientCapabilities(
            # As VS Code announces it: the server then advertises notebookDocumentSync.
            notebook_document=types.NotebookDocumentClientCapabilities(
                synchronization=types.NotebookDocumentSyncClientCapabilities()
            ),
            workspace=types.WorkspaceClientCapabilities(
                workspace_edit=types.WorkspaceEditClientCapabilities(
                    document_changes=document_changes
                )
            ),
        )
        client.initialize_result = await asyncio.wait_for(
            client.initialize_async(
                types.InitializeParams(
                    capabilities=capabilities,
                    process_id=os.getpid(),
                    trace=types.TraceValue.Messages,
                )
            ),
            TIMEOUT,
        )
        client.initialized(types.InitializedParams())
        return editor

    async def _stop(self) -> None:
        client = self.editor.client
        if client.exit_status is not None:  # a test has ended the server itself
            return
        try:
            await asyncio.wait_for(client.shutdown_async(None), TIMEOUT)
            client.exit(None)
        finally:
            await asyncio.wait_for(client.stop(), TIMEOUT)

    def close(self) -> None:
        try:
            self.call(self._stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(TIMEOUT)
            self.loop.close()


@pytest.fixture(scope="module")
def session():
    """One server (real rules plus the stand-in GL901) shared by the plumbing tests; it
    announces versioned document edits, the other sessions plain `changes`."""
    shared = Session(document_changes=True)
    yield shared
    shared.close()


def run_editor(scenario, *, command=None, document_changes: bool = False):
    """A fresh server for one scenario."""
    fresh = Session(command, document_changes=document_changes)
    try:
        return fresh.run(scenario)
    finally:
        fresh.close()


def whole(text: str) -> types.Range:
    return types.Range(
        start=types.Position(line=0, character=0),
        end=types.Position(line=len(_line_starts(text)), character=0),
    )


def by_title(actions, prefix: str) -> types.CodeAction:
    matches = [a for a in actions if a.title.startswith(prefix)]
    assert len(matches) == 1, [a.title for a in actions]
    return matches[0]


# --- the stand-in rule: plumbing ---------------------------------------------------


def test_diagnostic_quick_fix_and_disable_for_this_line(session, tmp_path):
    text = 's = "é😋"; w = 1; w += 1\n'

    async def scenario(editor: Editor):
        uri, diagnostics = await editor.open(tmp_path / "mod.py", text)
        assert len(diagnostics) == 1
        found = diagnostics[0]
        assert (found.code, found.source, found.message) == (
            "GL901",
            "gradlint",
            "augmented addition",
        )
        # The test rule keeps Rule's default severity, error.
        assert found.severity == types.DiagnosticSeverity.Error
        assert found.code_description.href == rule_url("GL901")
        # LSP columns count UTF-16 units: the emoji before `w += 1` is two of them.
        column = len('s = "é😋"; w = 1; '.encode("utf-16-le")) // 2
        assert column == len('s = "é😋"; w = 1; ') + 1
        assert (found.range.start.line, found.range.start.character) == (0, column)
        assert (found.range.end.line, found.range.end.character) == (0, column + len("w += 1"))

        actions = await editor.actions(uri, found.range)
        # An unfiltered request (Helix's menu, VS Code's lightbulb) gets fix-all as well.
        assert sorted(a.kind for a in actions) == ["quickfix", "quickfix", FIX_ALL_KIND]
        fix = by_title(actions, "Rewrite as a plain assignment (GL901)")
        disable = by_title(actions, "Disable GL901 for this line")
        assert fix.diagnostics[0].code == disable.diagnostics[0].code == "GL901"

        assert await editor.apply(uri, fix) == []
        assert editor.texts[uri] == 's = "é😋"; w = 1; w = w + 1\n'

        assert len(await editor.replace(uri, text)) == 1
        actions = await editor.actions(uri, found.range)
        assert await editor.apply(uri, by_title(actions, "Disable GL901")) == []
        assert editor.texts[uri] == 's = "é😋"; w = 1; w += 1  # noqa: GL901\n'

    session.run(scenario)


async def _disable_every_finding(editor: Editor, uri: str) -> list[types.Diagnostic]:
    for diagnostic in await editor.replace(uri, editor.texts[uri]):
        actions = await editor.actions(uri, diagnostic.range)
        action = by_title(actions, f"Disable {diagnostic.code}")
        editor.texts[uri] = apply_edit(editor.texts[uri], uri, action.edit)
    return await editor.replace(uri, editor.texts[uri])


def test_disable_keeps_an_existing_comment(session, tmp_path):
    async def scenario(editor: Editor):
        uri, _ = await editor.open(tmp_path / "mod.py", "x = 1\nx += 2  # counts twice\n")
        assert await _disable_every_finding(editor, uri) == []
        assert editor.texts[uri] == "x = 1\nx += 2  # counts twice  # noqa: GL901\n"

    session.run(scenario)


def test_disable_extends_an_existing_noqa_list(session, tmp_path):
    async def scenario(editor: Editor):
        uri, _ = await editor.open(tmp_path / "mod.py", "x = 1\nx += 1  # noqa: E501\n")
        remaining = await _disable_every_finding(editor, uri)
        assert editor.texts[uri] == "x = 1\nx += 1  # noqa: E501, GL901\n"
        assert remaining == []

    session.run(scenario)


def test_fix_all_applies_every_fix_and_only_filters_kinds(session, tmp_path):
    # CRLF line endings and a character outside the BMP before and between the fixes: the
    # fix-all edit's range must still land on the right characters.
    text = "a = b = len('😋')\r\na += 1\r\nif a:\r\n    b += a  # 😋\r\n"

    async def scenario(editor: Editor):
        uri, diagnostics = await editor.open(tmp_path / "mod.py", text)
        assert len(diagnostics) == 2
        actions = await editor.actions(uri, whole(text), only=[types.CodeActionKind.SourceFixAll])
        assert [a.kind for a in actions] == [FIX_ALL_KIND]
        assert await editor.apply(uri, actions[0]) == []
        assert editor.texts[uri] == (
            "a = b = len('😋')\r\na = a + 1\r\nif a:\r\n    b = b + a  # 😋\r\n"
        )
        # Nothing left to fix: no fix-all action, no quick fixes.
        assert await editor.actions(uri, whole(text)) == []

    session.run(scenario)


def test_hover_carries_the_rule_summary(session, tmp_path):
    text = "x = 1\nx += 1\n"

    async def scenario(editor: Editor):
        uri, diagnostics = await editor.open(tmp_path / "mod.py", text)
        hover = await editor.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=1, character=2),
            )
        )
        assert "GL901" in hover.contents.value
        assert "a stand-in rule for testing the fronts' plumbing" in hover.contents.value
        assert hover.range == diagnostics[0].range
        nothing = await editor.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=0, character=0),
            )
        )
        assert nothing is None

    session.run(scenario)


def test_configuration_of_the_document_applies_and_is_reread_on_save(session, tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[tool.gradlint]\nignore = ["GL901"]\nextend-exclude = ["generated"]\n', encoding="utf-8"
    )
    text = "x = 1\nx += 1\n"

    async def scenario(editor: Editor):
        uri, diagnostics = await editor.open(tmp_path / "pkg" / "mod.py", text)
        assert diagnostics == []
        pyproject.write_text('[tool.gradlint]\nextend-exclude = ["generated"]\n', encoding="utf-8")
        editor.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert [d.code for d in await editor.diagnostics(uri)] == ["GL901"]
        # Excluded files get nothing, as `gradlint check --force-exclude` gives them.
        _, diagnostics = await editor.open(tmp_path / "generated" / "mod.py", text)
        assert diagnostics == []

    session.run(scenario)


def test_a_half_typed_statement_keeps_the_findings_above_it_and_claims_none_below(
    session, tmp_path
):
    async def scenario(editor: Editor):
        uri, diagnostics = await editor.open(tmp_path / "mod.py", "x = 1\nx += 1\n")
        assert len(diagnostics) == 1
        # the statements above the one being typed are linted as they stand
        kept = await editor.replace(uri, "x = 1\nx += 1\nif (\n")
        assert _found(kept) == _found(diagnostics)
        # an error in the first statement leaves nothing above it: no findings at all
        assert await editor.replace(uri, "if (\nx = 1\nx += 1\n") == []

    session.run(scenario)


def _found(diagnostics) -> list[tuple[str, int, int, int, int]]:
    return [
        (
            d.code,
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
        )
        for d in diagnostics
    ]


def test_incremental_edits_after_form_feed_and_line_separator(session, tmp_path):
    # str.splitlines breaks lines at all of these; LSP (and Python) only at \n, \r\n, \r.
    # A server that splits like splitlines applies the edits below lines too low.
    text = (
        "import os  # \x0c form feed\n"
        "s = '\u2028'  # a line separator in a string\n"
        "t = 1  # \x85 \x0b \x1c \u2029\n"
        "x = 1\n"
    )

    async def scenario(editor: Editor):
        uri, diagnostics = await editor.open(tmp_path / "mod.py", text)
        assert diagnostics == []
        editor.edit(uri, (4, 0), (4, 0), "x += 1\n")
        assert _found(await editor.diagnostics(uri)) == [("GL901", 4, 0, 4, 6)]
        editor.edit(uri, (4, 5), (4, 6), "22")
        assert _found(await editor.diagnostics(uri)) == [("GL901", 4, 0, 4, 7)]
        # Across the line with U+2028, then inside the line with the form feed.
        editor.edit(uri, (1, 0), (2, 0), "")
        assert _found(await editor.diagnostics(uri)) == [("GL901", 3, 0, 3, 7)]
        editor.edit(uri, (0, 15), (0, 19), "page")
        assert editor.texts[uri] == (
            "import os  # \x0c page feed\nt = 1  # \x85 \x0b \x1c \u2029\nx = 1\nx += 22\n"
        )
        assert _found(await editor.diagnostics(uri)) == [("GL901", 3, 0, 3, 7)]
        # The server's copy is the editor's: its fix-all edit, made from its own text,
        # turns the editor's text into exactly the fixed text.
        actions = await editor.actions(uri, whole(editor.texts[uri]), only=[FIX_ALL_KIND])
        assert await editor.apply(uri, actions[0]) == []
        assert editor.texts[uri].endswith("\nx = 1\nx = x + 22\n")

    session.run(scenario)


def test_quick_edits_are_debounced_and_only_the_latest_version_is_published(session, tmp_path):
    text = "".join(f"v{i} = {i}\n" for i in range(1000))
    edits = 100

    async def scenario(editor: Editor):
        uri, diagnostics = await editor.open(tmp_path / "big.py", text)
        assert diagnostics == []
        linted_before = sum(uri in message for message in editor.client.traces)
        for i in range(edits - 1):
            editor.edit(uri, (1000 + i, 0), (1000 + i, 0), f"w{i} = {i}\n")
        editor.edit(uri, (1000 + edits - 1, 0), (1000 + edits - 1, 0), "x = 1; x += 1\n")
        final = editor.versions[uri]
        published = []
        while not published or published[-1].version != final:
            published.append(await asyncio.wait_for(editor._queue(uri).get(), TIMEOUT))
        assert _found(published[-1].diagnostics) == [("GL901", 1099, 7, 1099, 13)]
        # Every publication names its version; superseded versions were dropped.
        versions = [p.version for p in published]
        assert versions == sorted(versions) and len(published) <= 3, versions
        # The server traces each lint (`$/logTrace`, asked for at initialisation).
        assert linted_before == 1, editor.client.traces
        lints = sum(uri in message for message in editor.client.traces) - linted_before
        assert 1 <= lints <= 5, lints

    session.run(scenario)


def test_requests_on_a_document_never_opened_get_empty_results(session, tmp_path):
    # A file on disk, and one that does not exist: neither was opened.
    (tmp_path / "on_disk.py").write_text("x = 1\nx += 1\n", encoding="utf-8")

    async def scenario(editor: Editor):
        for name in ("on_disk.py", "missing.py"):
            document = types.TextDocumentIdentifier(uri=(tmp_path / name).as_uri())
            point = types.Position(line=1, character=2)
            hover = await asyncio.wait_for(
                editor.client.text_document_hover_async(
                    types.HoverParams(text_document=document, position=point)
                ),
                TIMEOUT,
            )
            assert hover is None
            actions = await asyncio.wait_for(
                editor.client.text_document_code_action_async(
                    types.CodeActionParams(
                        text_document=document,
                        range=types.Range(start=point, end=point),
                        context=types.CodeActionContext(diagnostics=[]),
                    )
                ),
                TIMEOUT,
            )
            assert not actions
        # The server is still there.
        _, diagnostics = await editor.open(tmp_path / "opened.py", "x = 1\nx += 1\n")
        assert len(diagnostics) == 1

    session.run(scenario)


@pytest.mark.parametrize(("shut_down", "status"), [(True, 0), (False, 1)])
def test_exit_status_is_0_after_shutdown_and_1_without(shut_down, status):
    async def scenario(editor: Editor):
        client = editor.client
        if shut_down:
            await asyncio.wait_for(client.shutdown_async(None), TIMEOUT)
        client.exit(None)
        await asyncio.wait_for(client.stop(), TIMEOUT)
        return client.exit_status

    assert run_editor(scenario, command=[sys.executable, "-m", "gradlint", "lsp"]) == status


@pytest.mark.parametrize(
    ("source", "line", "expected"),
    [
        ("x += 1\n", 1, "x += 1  # noqa: GL002\n"),
        ("x += 1   \n", 1, "x += 1  # noqa: GL002   \n"),
        ("x += 1  # noqa:E501\n", 1, "x += 1  # noqa:E501, GL002\n"),
        ("x += 1  # see issue 3\n", 1, "x += 1  # see issue 3  # noqa: GL002\n"),
        ("f(x,\n  y)\n", 1, "f(x,  # noqa: GL002\n  y)\n"),
        ("x = '#'; x += 1\n", 1, "x = '#'; x += 1  # noqa: GL002\n"),
        # Where the line ends inside a string or a continuation, the comment goes at the
        # end of the statement's last line, which governs the lines before it.
        ('x = f("""a\nb""")\n', 1, 'x = f("""a\nb""")  # noqa: GL002\n'),
        ("x = 1 + \\\n    2\n", 1, "x = 1 + \\\n    2  # noqa: GL002\n"),
    ],
)
def test_noqa_insertion(source, line, expected):
    where, text = noqa_insertion(source, line, "GL002")
    lines = source.splitlines(keepends=True)
    target = lines[where.line - 1]
    lines[where.line - 1] = target[: where.column] + text + target[where.column :]
    assert "".join(lines) == expected


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("x += 1  # noqa\n", 1),  # a bare noqa already covers every code
    ],
)
def test_noqa_insertion_declines_where_a_comment_cannot_go(source, line):
    assert noqa_insertion(source, line, "GL002") is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\r\nb\r\n", "a\r\nc\r\n"),
        ("x\r\n", "x\r\ny\r\n"),
        ("x\r\ny\r\n", "x\r\n"),
        ("x\r\ny", "x\ry"),  # the old break must not be split between \r and \n
        ("x\ry", "x\r\ny"),
        ("é😋 = 1\n", "é😋 = 2\n"),
        ("", "a"),
        ("a", ""),
    ],
)
def test_minimal_edit_turns_old_into_new(old, new):
    edit = minimal_edit(ClientPositions(old, PositionCodec()), old, new)
    assert (
        apply_edit(old, "file:///m.py", types.WorkspaceEdit(changes={"file:///m.py": [edit]}))
        == new
    )
    for position in (edit.range.start, edit.range.end):
        # Never a column between the \r and \n of one line break.
        line_text = re.split(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)", old)[position.line] if old else ""
        assert position.character <= len(line_text.rstrip("\r\n").encode("utf-16-le")) // 2


def rule_url(code: str) -> str:
    from gradlint.about import rule_url as url

    return url(code)


# --- the real rules, through `python -m gradlint lsp` ------------------------------


def test_real_gl002_through_the_cli_entry_point(tmp_path):
    text = "import torch\nw = torch.ones(3, requires_grad=True)\nw += 1\n"

    async def scenario(editor: Editor):
        uri, diagnostics = await editor.open(tmp_path / "mod.py", text)
        assert [(d.code, d.range.start.line) for d in diagnostics] == [("GL002", 2)]
        actions = await editor.actions(uri, diagnostics[0].range)
        assert await editor.apply(uri, by_title(actions, "Disable GL002")) == []
        assert editor.texts[uri].endswith("w += 1  # noqa: GL002\n")
        fixes = [a for a in actions if not a.title.startswith("Disable")]
        if fixes:
            await editor.replace(uri, text)
            assert await editor.apply(uri, fixes[0]) == []

    run_editor(scenario, command=[sys.executable, "-m", "gradlint", "lsp"])


def _fixture_pairs() -> list[tuple[Path, Path]]:
    pairs = []
    for fixed in sorted(FIXTURES.glob("GL*/bad_*.fixed.py")):
        bad = fixed.with_name(fixed.name.replace(".fixed.py", ".py"))
        if bad.exists() and rule_by_code(fixed.parent.name) is not None:
            pairs.append((bad, fixed))
    return pairs


@pytest.mark.skipif(not _fixture_pairs(), reason="no rule fixes with .fixed.py fixtures yet")
def test_fixture_quick_fixes_produce_the_fixed_files(tmp_path):
    from gradlint.codes import is_preview

    pairs = _fixture_pairs()
    # A preview rule runs where the project's configuration turns preview on.
    (tmp_path / "pyproject.toml").write_text("[tool.gradlint]\npreview = true\n", "utf-8")

    async def scenario(editor: Editor):
        for bad, fixed in pairs:
            expected = fixed.read_text(encoding="utf-8")
            text = bad.read_text(encoding="utf-8")
            where = bad
            if is_preview(bad.parent.name):
                where = tmp_path / bad.parent.name / bad.name
                where.parent.mkdir(exist_ok=True)
                where.write_text(text, encoding="utf-8")
            # One quick fix at a time, as a user would click them.
            uri, _ = await editor.open(where, text)
            for _ in range(50):
                actions = await editor.actions(
                    uri, whole(editor.texts[uri]), [types.CodeActionKind.QuickFix]
                )
                fixes = [a for a in actions if not a.title.startswith("Disable")]
                if not fixes:
                    break
                await editor.apply(uri, fixes[0])
            assert editor.texts[uri] == expected, f"quick fixes on {bad.name}"
            # Fix-all is fixes.fix_source, which the fixture fix test already holds to the
            # .fixed.py files; its plumbing is tested above with the stand-in rule.

    run_editor(scenario, command=[sys.executable, "-m", "gradlint", "lsp"])


def test_saving_a_helper_relints_the_open_documents_that_import_it(session, tmp_path):
    helper = tmp_path / "utils.py"
    helper.write_text(
        "def evaluate(model, x):\n    out = model(x)\n    return out.argmax(-1).tolist()\n",
        encoding="utf-8",
    )
    caller = (
        "from utils import evaluate\n\n\n"
        "def main(model, x):\n    model.eval()\n    return evaluate(model, x)\n"
    )

    async def scenario(editor: Editor):
        uri, diagnostics = await editor.open(tmp_path / "train.py", caller)
        assert [(d.code, d.range.start.line) for d in diagnostics] == [("GL004", 5)]
        guarded = "import torch\n\n\n@torch.no_grad()\n" + helper.read_text(encoding="utf-8")
        helper_uri, _ = await editor.open(helper, helper.read_text(encoding="utf-8"))
        editor.save(helper_uri, helper, guarded)
        assert await editor.diagnostics(uri) == []

    session.run(scenario)


def test_saving_a_caller_relints_the_open_method_it_calls(session, tmp_path):
    # The method's finding depends on how the project calls it: an eval switch before
    # every call. Saving a caller that no longer switches first changes the finding.
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    model = (
        "from torch import nn\n\n\nclass GAN:\n    def __init__(self):\n"
        "        self.G = nn.Linear(2, 2)\n\n    def evaluate(self):\n        self.G.eval()\n\n"
        "    def sample(self, z):\n        return self.G(z).data.cpu()\n"
    )
    (tmp_path / "gan.py").write_text(model, encoding="utf-8")
    main = tmp_path / "main.py"
    main.write_text(
        "from gan import GAN\n\nm = GAN()\nm.evaluate()\nm.sample(1)\n", encoding="utf-8"
    )

    async def scenario(editor: Editor):
        uri, diagnostics = await editor.open(tmp_path / "gan.py", model)
        assert [(d.code, d.range.start.line) for d in diagnostics] == [("GL004", 11)]
        unswitched = "from gan import GAN\n\nm = GAN()\nm.sample(1)\n"
        main_uri, _ = await editor.open(main, main.read_text(encoding="utf-8"))
        editor.save(main_uri, main, unswitched)
        # no longer proven eval: GL004 clears; the forward that `.data` throws away is
        # still recorded in whatever mode, which GL012 reports
        after = await editor.diagnostics(uri)
        assert [(d.code, d.range.start.line) for d in after] == [("GL012", 11)]

    session.run(scenario)


# --- notebooks (LSP 3.17 notebook synchronisation) ---------------------------------


def _cell(uri: str, text: str, version: int = 1) -> types.TextDocumentItem:
    return types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)


def test_notebook_cells_get_diagnostics_quick_fixes_and_fix_all(tmp_path):
    notebook_uri = (tmp_path / "train.ipynb").as_uri()
    cell = [f"vscode-notebook-cell:{tmp_path / 'train.ipynb'}#c{i}" for i in range(4)]
    texts = {
        cell[0]: "from torch import nn\nm = nn.Linear(2, 2)\nmodel = nn.Linear(2, 2)\n",
        cell[1]: "# Markdown: m.weight.zero_()",
        cell[2]: "%time\nmodel.eval()\nm.weight.zero_()",
        cell[3]: "print(1)\nout = model(m.weight)\n",
    }
    kinds = [2, 1, 2, 2]

    async def scenario(editor: Editor):
        client = editor.client
        assert client.initialize_result is not None
        sync = client.initialize_result.capabilities.notebook_document_sync
        assert sync is not None and sync.notebook_selector[0].cells[0].language == "python"
        client.notebook_document_did_open(
            types.DidOpenNotebookDocumentParams(
                notebook_document=types.NotebookDocument(
                    uri=notebook_uri,
                    notebook_type="jupyter-notebook",
                    version=1,
                    cells=[
                        types.NotebookCell(kind=types.NotebookCellKind(k), document=u)
                        for k, u in zip(kinds, cell, strict=True)
                    ],
                ),
                cell_text_documents=[
                    _cell(u, texts[u]) for u, k in zip(cell, kinds, strict=True) if k == 2
                ],
            )
        )
        published = {}
        for _ in range(3):  # one publication per code cell
            params = await asyncio.wait_for(
                asyncio.wait_for(_any_publication(editor, [cell[0], cell[2], cell[3]]), TIMEOUT),
                TIMEOUT,
            )
            published[params.uri] = list(params.diagnostics)
        assert published[cell[0]] == []
        # model.eval() in cell 3 reaches the forward in cell 4.
        assert [(d.code, d.range.start.line) for d in published[cell[3]]] == [("GL004", 1)]
        # %time is masked, so the row of the in-place update in cell 3 is its own.
        (inplace,) = published[cell[2]]
        assert (inplace.code, inplace.range.start.line, inplace.range.start.character) == (
            "GL002",
            2,
            0,
        )

        actions = await editor.actions(cell[2], inplace.range)
        titles = sorted(a.title for a in actions)
        assert "Disable GL002 for this line" in titles
        # The GL002 fix also adds `import torch` to cell 1: offered by fix-all, across cells.
        fix_all = by_title(actions, "gradlint: fix all")
        changed = set(fix_all.edit.changes)
        assert changed == {cell[0], cell[2], cell[3]}
        new_texts = {
            u: apply_edit(texts[u], u, types.WorkspaceEdit(changes={u: fix_all.edit.changes[u]}))
            for u in changed
        }
        assert new_texts[cell[0]].startswith("import torch\n")
        assert "with torch.no_grad():\n    m.weight.zero_()" in new_texts[cell[2]]
        assert new_texts[cell[2]].startswith("%time\n")

        # The editor applies it: cell text changes go through notebookDocument/didChange.
        client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                notebook_document=types.VersionedNotebookDocumentIdentifier(
                    uri=notebook_uri, version=2
                ),
                change=types.NotebookDocumentChangeEvent(
                    cells=types.NotebookDocumentCellChanges(
                        text_content=[
                            types.NotebookDocumentCellContentChanges(
                                document=types.VersionedTextDocumentIdentifier(uri=u, version=2),
                                changes=[
                                    types.TextDocumentContentChangeWholeDocument(text=new_texts[u])
                                ],
                            )
                            for u in sorted(changed)
                        ]
                    )
                ),
            )
        )
        after = {}
        for _ in range(3):
            params = await _any_publication(editor, [cell[0], cell[2], cell[3]])
            after[params.uri] = list(params.diagnostics)
        assert all(not diagnostics for diagnostics in after.values()), after

        # A cell removed from the notebook is cleared; closing clears the rest.
        client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                notebook_document=types.VersionedNotebookDocumentIdentifier(
                    uri=notebook_uri, version=3
                ),
                change=types.NotebookDocumentChangeEvent(
                    cells=types.NotebookDocumentCellChanges(
                        structure=types.NotebookDocumentCellChangeStructure(
                            array=types.NotebookCellArrayChange(start=3, delete_count=1),
                            did_close=[types.TextDocumentIdentifier(uri=cell[3])],
                        )
                    )
                ),
            )
        )
        assert await editor.diagnostics(cell[3]) == []
        client.notebook_document_did_close(
            types.DidCloseNotebookDocumentParams(
                notebook_document=types.NotebookDocumentIdentifier(uri=notebook_uri),
                cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in cell[:3]],
            )
        )

    run_editor(scenario)


async def _any_publication(editor: Editor, uris: list[str]):
    """The next publication for any of `uris`."""
    while True:
        for uri in uris:
            queue = editor._queue(uri)
            if not queue.empty():
                return queue.get_nowait()
        await asyncio.sleep(0.02)
