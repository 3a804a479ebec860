"""Where a node is in the text, resolved for the one statement that holds it.

LibCST gives positions by generating the code of the whole tree while counting lines,
a walk about as slow as the parse itself, paid by every file with a finding. Instead
the positions of a unit, a statement of the module's body or of a function's or class's
indented body, are resolved on a module holding that statement alone, inside one
`if _:` per indented block around it with that block's indentation: the columns are
the file's, and the lines move by a constant. The line a unit starts on comes from
CPython's parser: the line of the statement's first token (for a decorated definition,
the `def` or `class` line less the decorators' lines), less the blank and comment lines
LibCST attaches to it.

When the two parsers do not agree on the statements (CPython rejects what LibCST
accepts, say newer syntax), `statement_units` is None and the caller resolves the whole
file as before.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import libcst as cst
from libcst.metadata import CodePosition, CodeRange

from gradlint.analysis.project import parse_quietly
from gradlint.edits import split_lines


class _Mismatch(Exception):
    pass


# Definitions whose indented body is read statement by statement, as the module's is.
_DEFINITIONS = (cst.FunctionDef, cst.ClassDef)
_AST_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# Compound statements whose first indented body is read statement by statement too, and
# what CPython calls each: a finding deep in a long loop resolves its own statement,
# not the loop (their `else`, `except` and `finally` blocks stay with the statement).
_COMPOUND_BODIES: dict[type, tuple[type, ...]] = {
    cst.If: (ast.If,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.Try: (ast.Try,),
}


@dataclass(frozen=True)
class Unit:
    """A statement of the module's body or of a definition's indented body: the piece
    whose positions are resolved together."""

    # the line it starts on, its leading blank and comment lines included
    start: int
    # the indented blocks around it, outermost first (empty at the top level)
    blocks: tuple[cst.IndentedBlock, ...]


def statement_units(module: cst.Module, source: str) -> dict[int, Unit] | None:
    """id of each statement of the module's body and, inside them, of every function's
    and class's indented body -> where it is; None when CPython's statements do not line
    up with LibCST's."""
    try:
        tree = parse_quietly(source)
        units: dict[int, Unit] = {}
        _pair(module.body, tree.body, (), units)
    except (SyntaxError, ValueError, RecursionError, MemoryError, _Mismatch):
        return None
    return units


def _pair(
    statements: Sequence[cst.BaseStatement],
    parsed: list[ast.stmt],
    blocks: tuple[cst.IndentedBlock, ...],
    units: dict[int, Unit],
) -> None:
    position = 0
    for statement in statements:
        if position >= len(parsed):
            raise _Mismatch
        twin = parsed[position]
        units[id(statement)] = Unit(_start_line(statement, twin), blocks)
        if type(statement) is cst.SimpleStatementLine:
            # `a = 1; b = 2` is one line to LibCST and two statements to CPython
            position += len(statement.body)
            continue
        position += 1
        body = getattr(statement, "body", None)
        if type(body) is not cst.IndentedBlock:
            continue
        if type(statement) in _DEFINITIONS:
            if not isinstance(twin, _AST_DEFINITIONS):
                raise _Mismatch
        else:
            twins = _COMPOUND_BODIES.get(type(statement))
            if twins is None:
                continue  # a match statement's cases: resolved with the statement
            if not isinstance(twin, twins):
                raise _Mismatch
        _pair(body.body, twin.body, (*blocks, body), units)  # type: ignore[attr-defined]
    if position != len(parsed):
        raise _Mismatch


def _start_line(statement: cst.BaseStatement, twin: ast.stmt) -> int:
    """The line `statement` starts on, its leading lines included. CPython gives the
    line of its first token, or of `def` / `class` for a decorated definition (a
    decorator's own line is that of its expression, which may follow the `@`): the
    decorators' lines are counted from their code."""
    above = len(getattr(statement, "leading_lines", ()))
    # exact types (neither class has a subclass): isinstance on LibCST's ABCs is slow
    # when it fails, and this is asked of every statement
    if type(statement) in _DEFINITIONS:
        definition = cast("cst.FunctionDef | cst.ClassDef", statement)
        if definition.decorators:
            code = cst.Module(body=[]).code_for_node
            # each decorator's code ends with its line break
            above += sum(len(split_lines(code(d))) for d in definition.decorators)
            above += len(definition.lines_after_decorators)
    return twin.lineno - above


class StatementPositions:
    """The positions of the nodes of one unit at a time, each unit resolved once."""

    def __init__(
        self,
        module: cst.Module,
        units: dict[int, Unit],
        resolve: Callable[[cst.Module], Mapping[cst.CSTNode, CodeRange]],
    ) -> None:
        self._module = module
        self._units = units
        self._last = module.body[-1] if module.body else None
        # `resolve` runs the provider (with the caller's stack depth and error handling)
        self._resolve = resolve
        self._resolved: dict[int, tuple[Mapping[cst.CSTNode, CodeRange], int]] = {}

    def unit_of(self, node: cst.CSTNode, parent_of: Callable[[cst.CSTNode], cst.CSTNode | None]):
        """The innermost unit holding `node` (None when there is none), going up by
        `parent_of` (the file index's `parent.get`)."""
        current: cst.CSTNode | None = node
        while current is not None:
            if id(current) in self._units:
                return current
            current = parent_of(current)
        return None

    def range_of(self, node: cst.CSTNode, unit: cst.CSTNode) -> CodeRange | None:
        """The range of `node` inside `unit`; None when it is not one of its nodes."""
        resolved = self._resolved.get(id(unit))
        if resolved is None:
            place = self._units[id(unit)]
            assert isinstance(unit, cst.BaseStatement)
            # Each block around it becomes an `if _:` with the same indentation, so its
            # lines have their columns; only the line numbers move.
            wrapped: cst.BaseStatement = unit
            for block in reversed(place.blocks):
                wrapped = cst.If(
                    test=cst.Name("_"), body=cst.IndentedBlock(body=[wrapped], indent=block.indent)
                )
            alone = self._module.with_changes(
                body=[wrapped],
                header=[],
                footer=[],
                # only the file's last statement may end without a newline
                has_trailing_newline=self._module.has_trailing_newline or unit is not self._last,
            )
            ranges = self._resolve(alone)
            resolved = self._resolved[id(unit)] = (ranges, place.start - 1 - len(place.blocks))
        ranges, shift = resolved
        found = ranges.get(node)
        if found is None or type(node) is cst.Module:
            return None
        if not shift:
            return found
        return CodeRange(
            CodePosition(found.start.line + shift, found.start.column),
            CodePosition(found.end.line + shift, found.end.column),
        )
