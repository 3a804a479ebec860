"""The one engine behind every front: parse once, compute shared facts once, run every
selected rule in one batched visit, then apply `# noqa`.

    lint_source(source, path, config) -> list[Diagnostic]     (raises SourceError)
    lint_file(path, config) -> FileResult                      (never raises on bad input)
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import gc
from pathlib import Path

import libcst as cst

from gradlint.analysis.project import (
    PIECE_START,
    ProjectIndex,
    files_settled,
    imported_modules,
    parse_quietly,
    parsed_in_pieces,
    trees_in_pieces,
)
from gradlint.config import Config
from gradlint.context import FileContext
from gradlint.deep import at_default_depth, run_deep
from gradlint.diagnostics import Confidence, Diagnostic, FileError, Impact, Severity
from gradlint.edits import line_ending, split_lines, with_line_ending
from gradlint.fileio import decode_source
from gradlint.fix_builders import merge_adjacent_wraps
from gradlint.indentation import normalise
from gradlint.results import FileResult, SourceError
from gradlint.rules import ALL_RULES, META_RULES
from gradlint.rules.base import Rule
from gradlint.rules.gl100_unused_noqa import UnusedNoqa
from gradlint.suppressions import (
    FILE_NOQA_RE,
    NOQA_RE,
    UNUSED_NOQA_CODE,
    apply_noqa,
    is_suppressed,
    noqa_map,
    unused_noqa,
)

__all__ = [
    "ALL_RULES",
    "META_RULES",
    "NOQA_RE",
    "apply_noqa",
    "is_suppressed",
    "noqa_map",
    "DEFAULT_CONFIG",
    "FileContext",
    "FileResult",
    "SourceError",
    "lint_file",
    "lint_source",
    "rule_by_code",
]

DEFAULT_CONFIG = Config()


def rules_for(codes) -> list[type[Rule]]:
    return [rule for rule in ALL_RULES if rule.code in codes]


def rule_by_code(code: str) -> type[Rule] | None:
    for rule in [*ALL_RULES, *META_RULES]:
        if rule.code == code.upper() or rule.name == code:
            return rule
    return None


def parse(source: str, path: str, *, compiled: bool = False) -> cst.Module:
    """LibCST's tree of the source. `compiled`: CPython's parser has accepted this very
    text, so LibCST's check of each node it builds is skipped (_parse_compiled)."""
    try:
        return run_deep(_parse_compiled if compiled else cst.parse_module, source)
    except cst.ParserSyntaxError as exc:
        raise SourceError(_syntax_error(source, path, exc)) from None
    except RecursionError:
        raise SourceError(FileError(path, "cannot parse: nesting too deep")) from None


def _not_validated(self: cst.CSTNode) -> None:
    """What a node runs after its fields are set while _parse_compiled parses."""


def _parse_compiled(source: str) -> cst.Module:
    """cst.parse_module without LibCST's validation of every node built (`_validate`,
    run by each node's `__post_init__`: about a tenth of a parse, in Python, for every
    node). It checks what a node built by hand may get wrong (an empty name, a
    missing space between keywords); a node LibCST's parser builds from a text CPython
    accepts passes it, so the check can only repeat the syntax check. The switch is
    process-wide while the parse runs, on the deep thread under its lock: gradlint's
    own node building (fixes, `parse_expression` of a model's name) runs on the
    calling thread, which waits meanwhile (the language server lints on one worker
    thread). Another thread of a host process building nodes during a parse would skip
    the check too; every node built outside a parse is checked as before."""
    post_init = cst.CSTNode.__dict__["__post_init__"]
    cst.CSTNode.__post_init__ = _not_validated  # type: ignore[method-assign]
    try:
        return cst.parse_module(source)
    finally:
        cst.CSTNode.__post_init__ = post_init  # type: ignore[method-assign]


def _syntax_error(source: str, path: str, exc: cst.ParserSyntaxError) -> FileError:
    """CPython words syntax errors for people ("'(' was never closed"); LibCST's parser
    lists expected tokens. Prefer CPython's text and position when it also rejects."""
    try:
        compile(source, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as cpython:
        if cpython.lineno:
            return FileError(
                path,
                f"SyntaxError: {cpython.msg}",
                cpython.lineno,
                max((cpython.offset or 1) - 1, 0),
            )
    except (ValueError, RecursionError, MemoryError):
        pass
    reason = str(exc.message).strip().splitlines()[0] if exc.message else "invalid syntax"
    return FileError(path, f"SyntaxError: {reason}", exc.editor_line, max(exc.editor_column, 0))


def might_match(source: str, rules: list[type[Rule]]) -> bool:
    """A cheap text test: a file with none of the tokens a rule needs cannot match it."""
    return any(rule.may_match(source) for rule in rules)


def _may_run(rule: type[Rule], source: str) -> bool:
    """Is the rule worth running on a file parsed for some rule? Not when the file lacks
    its tokens, unless they may come from an imported helper (the rule asks that itself,
    once it has the file's imports)."""
    if rule.may_match(source):
        return True
    if rule.models_may_be_imported and rule.has_trigger_tokens(source):
        return True
    return rule.triggers_may_be_imported and rule.needs_tokens_only(source)


def _may_match_through_imports(
    source: str, path: str, rules: list[type[Rule]], dependencies: dict[str, str] | None
) -> bool:
    """Could a rule whose tokens may be in an imported helper match after all? Only a
    file with that rule's second condition is asked; a "no" depends on the text of the
    modules it imports, which go into the dependencies."""
    wanting = [r for r in rules if r.triggers_may_be_imported and r.needs_tokens_only(source)]
    # rules whose model may be a class of an imported project module
    modelled = [
        r
        for r in rules
        if r.models_may_be_imported and r.has_trigger_tokens(source) and r.also_needs_tokens
    ]
    if not wanting and not modelled:
        return False
    project = ProjectIndex(path)
    if not project.enabled:
        return False
    modules = imported_modules(source)
    found = any(project.imports_text_with(modules, rule.trigger_tokens) for rule in wanting) or any(
        project.imports_text_with(modules, rule.also_needs_tokens) for rule in modelled
    )
    if dependencies is not None:
        dependencies.update(project.dependencies)
    return found


def _compiles(source: str) -> bool:
    try:
        compile(source, "<gradlint>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _rejection(source: str, *, whole: bool = False) -> BaseException | None:
    """What CPython's parser raises on the source, or None when it parses. The tree of a
    whole file is kept for the analyses that read it (positions, imports, the caller
    search), so that CPython parses each file once."""
    try:
        if whole:
            parse_quietly(source, "<gradlint>")
        else:
            compile(source, "<gradlint>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return exc
    return None


def _rejection_in_pieces(source: str) -> BaseException | None:
    """What _rejection says, in bounded memory: the skip path only needs "does it
    parse", so a large text is parsed in top-level pieces, one at a time
    (project.trees_in_pieces). When every piece parses the whole does; otherwise the
    whole text decides, as before."""
    if not parsed_in_pieces(source) or "barry_as_FLUFL" in source:
        return _rejection(source, whole=True)
    try:
        for _tree in trees_in_pieces(source):
            pass
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _rejection(source)
    return None


def _beyond_limits(path: str, rejected: BaseException) -> FileError | None:
    """The file's error when CPython gave up for depth or size rather than for syntax:
    more than 200 nested brackets, an expression nested deeper than its recursion limit
    (a sum of 100,000 terms is 100,000 levels), a parser stack overflow. LibCST would
    spend minutes or gigabytes on such a text before accepting or refusing it, and Python
    cannot run it. Other syntax errors are left to LibCST, which knows newer syntax
    than the running interpreter and words the error itself."""
    if isinstance(rejected, SyntaxError):
        if "too many nested parentheses" not in str(rejected.msg):
            return None
        return FileError(
            path,
            f"SyntaxError: {rejected.msg}",
            rejected.lineno or 0,
            max((rejected.offset or 1) - 1, 0),
        )
    if isinstance(rejected, RecursionError):
        return FileError(path, f"cannot parse: nested too deeply for Python ({rejected})")
    if isinstance(rejected, MemoryError):
        return FileError(path, f"cannot parse: {rejected or 'out of memory'}")
    return None


def _cpython_check(source: str, path: str) -> bool:
    """Does CPython parse the source? Raises SourceError when it gives up for depth or
    size. Run before LibCST sees the text, at the recursion limit Python runs the code
    with (gradlint.deep raises it only around its own calls)."""
    with at_default_depth():
        rejected = _rejection_in_pieces(source)
    if rejected is None:
        return True
    error = _beyond_limits(path, rejected)
    if error is not None:
        raise SourceError(error)
    return False


def lint_source(
    source: str,
    path: str = "-",
    config: Config | None = None,
    *,
    noqa: bool = True,
    dependencies: dict[str, str] | None = None,
) -> list[Diagnostic]:
    """Lint one file's text. Raises SourceError when the text is not lintable Python.
    With noqa=False, `# noqa` comments are left to the caller (flake8 applies its own,
    which is how its --disable-noqa works)."""
    # The file's trees are freed when _lint_source returns, before the collector may
    # run again (see _collector_paused).
    with _collector_paused(), files_settled():
        return _lint_source(source, path, config, noqa=noqa, dependencies=dependencies)


def _lint_source(
    source: str,
    path: str = "-",
    config: Config | None = None,
    *,
    noqa: bool = True,
    dependencies: dict[str, str] | None = None,
) -> list[Diagnostic]:
    """Lint one file's text. Raises SourceError when the text is not lintable Python.
    With noqa=False, `# noqa` comments are left to the caller (flake8 applies its own,
    which is how its --disable-noqa works)."""
    config = config or DEFAULT_CONFIG
    enabled = config.enabled_codes(path)
    if FILE_NOQA_RE.search(source):
        return []
    found, context = _lint(source, path, config, enabled, dependencies)
    if not noqa:
        return _in_file_line_ending(found, source)
    if UNUSED_NOQA_CODE in enabled:
        # Judged against every finding before suppression: that is what a comment silences.
        autograd = [rule.code for rule in ALL_RULES]
        unused = unused_noqa(source, path, found, enabled, autograd, UnusedNoqa)
        found = sorted(found + unused, key=lambda d: d.sort_key)
    kept = apply_noqa(found, source)
    merged = merge_adjacent_wraps(context, kept) if context is not None else kept
    return _in_file_line_ending(merged, source)


@contextlib.contextmanager
def _collector_paused():
    """No cyclic-garbage collection while a file is linted. Its trees and facts are
    alive until the lint ends and then freed by reference counting (a lint makes next
    to no cyclic garbage), so a collection meanwhile would only walk objects still in
    use: the young generation is then the whole tree, and each collection took about
    as long as a file's analysis. The collector runs again once they are freed, and
    finds whatever cyclic garbage the file left; the caller's setting comes back."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _in_file_line_ending(found: list[Diagnostic], source: str) -> list[Diagnostic]:
    """Builders write `\n`; a CRLF file's fixes insert CRLF (after the wraps are merged,
    which finds each fix by identity)."""
    newline = line_ending(source)
    if newline == "\n":
        return found
    return [
        dataclasses.replace(d, fix=with_line_ending(d.fix, newline)) if d.fix else d for d in found
    ]


def _lint(
    source: str,
    path: str,
    config: Config,
    enabled: frozenset[str],
    dependencies: dict[str, str] | None,
) -> tuple[list[Diagnostic], FileContext | None]:
    """The autograd rules' findings, sorted, before `# noqa` is applied, and the file's
    context (None when no rule needed the file parsed)."""
    rules = rules_for(enabled)
    if not rules:
        return [], None
    # CPython's parser first: an order of magnitude cheaper than LibCST's, and bounded
    # where LibCST is not (see _beyond_limits).
    parses = _cpython_check(source, path)
    if not might_match(source, rules) and not _may_match_through_imports(
        source, path, rules, dependencies
    ):
        # No rule can match, but a syntax error is still a result: only a file CPython
        # rejects is handed to LibCST, so the error reported is the same as without
        # the skip.
        if parses:
            return [], None
        parse(source, path)
        return [], None
    normalised = None
    try:
        module = parse(source, path, compiled=parses)
    except SourceError:
        # Indentation that CPython accepts and LibCST rejects: lint a copy measured as
        # CPython measures it (gradlint.indentation), offering no fix.
        normalised = normalise(source) if _compiles(source) else None
        if normalised is None:
            raise
        module = parse(normalised.source, path)
    context = FileContext(path, normalised.source if normalised else source, module)
    try:
        run_rules(context, [rule(context) for rule in rules if _may_run(rule, source)])
    except RecursionError:
        raise SourceError(FileError(path, "cannot analyse: nesting too deep")) from None
    if dependencies is not None and "project" in context.__dict__:
        dependencies.update(context.project.dependencies)
    found = _judged(context.diagnostics, config)
    if normalised is not None:
        found = [normalised.diagnostic(d) for d in found]
    return sorted(found, key=lambda d: d.sort_key), context


def _judged(diagnostics: list[Diagnostic], config: Config) -> list[Diagnostic]:
    """The findings the configuration keeps (their consequence group selected, their
    confidence and impact as asked), each at its configured severity."""
    if config.min_confidence == Confidence.HIGH.value:
        diagnostics = [d for d in diagnostics if d.confidence is Confidence.HIGH]
    if config.min_impact != Impact.TEST.value:
        floor = Impact(config.min_impact).rank
        diagnostics = [d for d in diagnostics if d.impact is None or d.impact.rank >= floor]
    if config.selects_groups:
        diagnostics = [
            d
            for d in diagnostics
            if config.keeps(d.code, d.group.value if d.group else None, d.path)
        ]
    if not config.severity:
        return diagnostics
    return [
        dataclasses.replace(
            d,
            severity=Severity(
                config.severity_for(d.code, d.severity.value, d.group.value if d.group else None)
            ),
        )
        for d in diagnostics
    ]


def run_rules(context: FileContext, rules: list[Rule]) -> None:
    """One batched pass: each node, in source order, goes to every rule's
    `visit_<NodeType>`; then every rule's `leave_Module` runs with the whole file seen.
    The walk is the index's (iterative, trivia skipped), so the shared facts and the
    rules pay for one traversal between them."""
    handlers: dict[str, list] = {}
    for rule in rules:
        for name, method in rule.visit_methods():
            handlers.setdefault(name, []).append(method)
    if handlers:
        # only the nodes of the types some rule visits, in source order
        index = context.index
        by_type = {
            kind: handlers[kind.__name__]
            for kind in index.node_types()
            if kind.__name__ in handlers
        }
        for node in index.of_types(*by_type):
            for method in by_type[type(node)]:
                method(node)
    for rule in rules:
        leave = getattr(rule, "leave_Module", None)
        if leave is not None:
            leave(context.module)


def lint_before_syntax_error(
    source: str,
    path: str,
    config: Config | None,
    error: FileError,
    *,
    dependencies: dict[str, str] | None = None,
) -> tuple[list[Diagnostic], int] | None:
    """(the findings, the line where the unlinted rest starts) of the file's top-level
    statements before the one its syntax error is in: a file being edited (an
    assignment half typed at the end, a line from an older Python) still has findings
    in what parses. None when the error is in the first statement, or the text before
    it does not parse either (an unclosed bracket further up)."""
    if error.line <= 1:
        return None
    # lines as CPython counts them (not str.splitlines, which also breaks at a form feed)
    error_at = sum(len(line) for line in split_lines(source)[: error.line - 1])
    cut = 0
    for match in PIECE_START.finditer(source):
        if match.start() + 1 > error_at:
            break
        cut = match.start() + 1
    prefix = source[:cut]
    if not prefix.strip():
        return None
    try:
        found = lint_source(prefix, path, config, dependencies=dependencies)
    except SourceError:
        return None
    return found, len(split_lines(prefix)) + 1


def lint_file(path: str | Path, config: Config | None = None) -> FileResult:
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return FileResult(name, error=FileError(name, f"cannot read: {exc.strerror or exc}"))
    try:
        source = decode_source(data, name)
        return FileResult(name, lint_source(source, name, config), source=source)
    except SourceError as exc:
        return FileResult(name, error=exc.error)
