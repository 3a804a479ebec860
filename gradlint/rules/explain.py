"""Labelled places that explain a finding (`Rule.report(..., related=...)`), for the
shapes more than one rule points at."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gradlint.analysis.bindings import assigned_names
from gradlint.diagnostics import Position, Related

if TYPE_CHECKING:
    from gradlint.analysis.facts import FileFacts
    from gradlint.analysis.project import MethodCall
    from gradlint.analysis.result_uses import NumberUses
    from gradlint.context import FileContext


def leaf_origins(facts: FileFacts, leaf: str, use: cst.CSTNode) -> list[tuple[cst.CSTNode, str]]:
    """Where the leaf tensor `leaf` read at `use` comes from: a loop over parameters, the
    module that holds it, or the statement that makes it."""
    return [_origin(binding, leaf) for binding in facts.tensors.origins(leaf, use)]


def _origin(binding: cst.CSTNode, leaf: str) -> tuple[cst.CSTNode, str]:
    """Where the leaf comes from, labelled: a loop over parameters, the module that holds
    it, or the statement that makes it."""
    if type(binding) is cst.For:
        return binding.iter, f"`{leaf}` is each of these, which require grad"
    owner = leaf.split(".")[0]
    if owner != leaf and leaf not in assigned_names(binding):
        return binding, f"`{owner}` is built here; `{leaf}` is one of its parameters"
    return binding, f"`{leaf}` is made here, requiring grad"


def loop_header(context: FileContext, loop: cst.For | cst.While, label: str) -> Related:
    """The loop's header (`for x in batches`, `while t < n`), not its whole body."""
    start, _ = context.position_of(loop)
    head = loop.iter if isinstance(loop, cst.For) else loop.test
    _, end = context.position_of(head)
    return Related(label, context.path, start, end)


def at_call_elsewhere(label: str, call: MethodCall) -> Related:
    """A related place at a call the project's caller search found in another file (in
    a notebook, in its cell)."""
    return Related(
        label,
        call.path,
        Position(call.line, call.column),
        Position(call.end_line, call.end_column),
        call.cell,
    )


def elsewhere(label: str, where: tuple[str, int, int, int, int]) -> Related:
    """A related place in another file of the project, as a summary records it: (path,
    line, column, end line, end column)."""
    path, line, column, end_line, end_column = where
    return Related(label, path, Position(line, column), Position(end_line, end_column))


def number_reads(
    context: FileContext, uses: NumberUses, beyond: cst.CSTNode | None = None
) -> list[tuple[cst.CSTNode, str]]:
    """The first two places, in source order, where a result ends as numbers (outside
    `beyond`, the reported statement, when given): why its graph is never used."""
    nodes = [
        node for node in uses.numbers if beyond is None or not context.index.is_inside(node, beyond)
    ]
    nodes.sort(key=lambda node: context.position_of(node)[0])
    return [(node, "only read as a number here") for node in nodes[:2]]


def numbers_elsewhere(uses: NumberUses, count: int) -> list[Related]:
    """The calls in other files that a function hands the result back to, where it is
    only read as numbers."""
    return [
        at_call_elsewhere("returned here, where it is only read as numbers", caller)
        for caller in uses.elsewhere[:count]
    ]
