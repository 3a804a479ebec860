"""Which statements change a tensor in place, and which tensor they change.

An in-place change bumps the tensor's version counter, shared with every view of it:
`x += y` on a tensor, `x[i] = v` and `x[i] += v` (setitem writes into x), a
trailing-underscore method (`x.mul_(2)`, `x[0].zero_()`, `x.view(-1).add_(1)`),
`torch.relu_(x)` and `nn.init.zeros_(w)`, `F.relu(x, inplace=True)`, and `out=x`.
`x @= y` is not one (torch has no in-place matmul: it rebinds x), and neither is a
change through `.data` (it has a version counter of its own) or through advanced
indexing (`x[mask].add_(1)` changes a copy).

An optimizer's `step()` is one too, of every parameter it holds: which those are, and
which steps a function runs, is analysis/optimizers.py; the graphs that saved them
before the step are in analysis/saved.py (`ParametersSteppedAfterSaving`).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.index import FileIndex, bool_literal, dotted_name
from gradlint.analysis.torch_api import (
    DETACHING_ATTRIBUTES,
    GRAD_ATTRIBUTE,
    INPLACE_FUNCTION_MODULES,
    INPLACE_KEYWORD,
    MAYBE_COPYING_VIEWS,
    TRANSPOSE_ATTRIBUTES,
    VIEW_METHODS,
    is_inplace_method,
)

# `.data` and `.grad` are other tensors than the variable they hang off.
_DETACHED_HOLDERS = DETACHING_ATTRIBUTES | {GRAD_ATTRIBUTE}
# Augmented assignments that a tensor implements in place (`__iadd__`, ...).
INPLACE_OPERATORS = (
    cst.AddAssign,
    cst.SubtractAssign,
    cst.MultiplyAssign,
    cst.DivideAssign,
    cst.PowerAssign,
    cst.FloorDivideAssign,
    cst.ModuloAssign,
)


@dataclass(frozen=True)
class InplaceChange:
    statement: cst.CSTNode  # the statement that makes the change (what is reported)
    target: cst.BaseExpression  # what is written: `x`, `x[0]`, `x.view(-1)`
    how: str  # a short description for messages: `+=`, `x[...] =`, `.mul_()`

    @property
    def base(self) -> str | None:
        """The variable whose tensor is changed (see `changed_base`)."""
        return changed_base(
            self.target,
            setitem=type(self.target) is cst.Subscript and type(self.statement) is not cst.Expr,
        )


def changes_in(statement: cst.CSTNode, index: FileIndex) -> list[InplaceChange]:
    """The in-place changes a small statement makes at its top level (an expression
    statement's call, an assignment's subscript targets, an augmented assignment)."""
    out: list[InplaceChange] = []
    if type(statement) is cst.AugAssign:
        if type(statement.target) is cst.Subscript:
            out.append(InplaceChange(statement, statement.target, "x[...] op="))
        elif isinstance(statement.operator, INPLACE_OPERATORS):
            op = cst.Module([]).code_for_node(statement.operator).strip()
            out.append(InplaceChange(statement, statement.target, op))
    elif type(statement) is cst.Assign:
        for assigned in statement.targets:
            if type(assigned.target) is cst.Subscript:
                out.append(InplaceChange(statement, assigned.target, "x[...] ="))
    elif type(statement) is cst.Expr and type(statement.value) is cst.Call:
        found = call_change(statement.value, index)
        if found is not None:
            out.append(InplaceChange(statement, found[0], found[1]))
    return out


def call_change(call: cst.Call, index: FileIndex) -> tuple[cst.BaseExpression, str] | None:
    """(the tensor written, how) when the call changes a tensor in place."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "out":
            return arg.value, "out="
    qualified = index.qualified_name(call.func) or ""
    module, _, last = qualified.rpartition(".")
    positional = [a for a in call.args if a.keyword is None]
    first = positional[0].value if positional and not positional[0].star else None
    if module == "torch.nn.functional":
        for arg in call.args:
            if (
                arg.keyword is not None
                and arg.keyword.value == INPLACE_KEYWORD
                and bool_literal(arg.value) is True
            ):
                return (first, f"{last}(inplace=True)") if first is not None else None
        return None
    if module in INPLACE_FUNCTION_MODULES:
        # `torch.relu_(x)`, `nn.init.zeros_(w)`, `from torch.nn.init import zeros_`
        if last.endswith("_") and not last.startswith("_") and first is not None:
            return first, f"{last}()"
        return None
    func = call.func
    if type(func) is cst.Attribute:
        method = func.attr.value
        if is_inplace_method(method):
            return func.value, f".{method}()"
    return None


def changed_base(target: cst.BaseExpression, *, setitem: bool = False) -> str | None:
    """The variable whose storage (and version counter) an in-place write into
    `target` changes: `x` for `x`, `x[0]`, `x[:, 1:]`, `x.view(-1)`, `x.t()[0]`; None
    when the way there may copy (`x[mask].add_(1)`, `x.float()`, `x.data`). With
    `setitem`, the outermost subscript is an assignment into it (`x[mask] = 0` writes
    into x whatever the index)."""
    expr: cst.CSTNode = target
    outermost = setitem
    while True:
        if type(expr) is cst.Subscript:
            if not outermost and not _basic_index(expr):
                return None  # `x[idx].add_(1)` changes a copy made by advanced indexing
            expr = expr.value
        elif (
            type(expr) is cst.Call
            and type(expr.func) is cst.Attribute
            and expr.func.attr.value in VIEW_METHODS
            and expr.func.attr.value not in MAYBE_COPYING_VIEWS
        ):
            expr = expr.func.value
        elif type(expr) is cst.Attribute and expr.attr.value in TRANSPOSE_ATTRIBUTES:
            expr = expr.value
        else:
            name = dotted_name(expr)
            if name is None or name.rsplit(".", 1)[-1] in _DETACHED_HOLDERS:
                return None
            return name
        outermost = False


def _basic_index(expr: cst.Subscript) -> bool:
    """Integers and slices only: a view, never a copy."""
    for element in expr.slice:
        index = element.slice
        if type(index) is not cst.Index:
            continue  # a slice
        value = index.value
        if type(value) is cst.UnaryOperation and type(value.operator) is cst.Minus:
            value = value.expression
        if not isinstance(value, (cst.Integer, cst.Ellipsis)):
            return False
    return True
