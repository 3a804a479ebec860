"""What an operation saves for backward, from the table measured on torch itself
(`gradlint/data/saved_tensors.json`, written by `python -m runtime_check saved-tensors
--write`, checked against the installed torch by tests/test_saved_tensors.py).

Whether an operand is saved depends on which operands require grad: `w * x` saves `x`
for `w`'s gradient and `w` for `x`'s. So each operand gets the set of statuses it may
have here (a tensor that requires grad, one that does not, a Python number), read from
the abstract values, and an operand (or the output) counts as saved only when the
table saves it for *every* combination of those statuses. A combination the table
lacks (autograd records nothing, or the call is not one torch accepts) proves nothing,
so anything unknown keeps the answer at "not proven".
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

import libcst as cst

from gradlint.analysis.grad_mode import GradMode, GradModeAnalysis
from gradlint.analysis.index import FileIndex, dotted_name
from gradlint.analysis.tensors import TensorFacts
from gradlint.analysis.values import Kind, ValueAnalysis

GRAD, TENSOR, NUMBER = "grad", "tensor", "number"
_ANY = frozenset({GRAD, TENSOR, NUMBER})
_A_TENSOR = frozenset({GRAD, TENSOR})

_OPERATORS: dict[type, str] = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Divide: "/",
    cst.Power: "**",
    cst.MatrixMultiply: "@",
}

Cases = dict[tuple[str, ...], tuple[frozenset[int], bool]]


@dataclass(frozen=True)
class Table:
    torch: str
    ops: dict[str, Cases]

    def arity(self, key: str) -> int:
        """The most operands a case of `key` has (`F.linear` has cases with and
        without a bias); the positional arguments past it are options."""
        return max(len(case) for case in self.ops[key])


@cache
def table() -> Table:
    text = resources.files("gradlint").joinpath("data/saved_tensors.json").read_text("utf-8")
    data = json.loads(text)
    ops: dict[str, Cases] = {}
    for key, cases in data["ops"].items():
        ops[key] = {
            tuple(case["operands"]): (frozenset(case["saves"]), bool(case["output"]))
            for case in cases
        }
    return Table(data["torch"], ops)


@dataclass(frozen=True)
class Saved:
    """What one recorded operation is proven to save."""

    operation: cst.BaseExpression
    key: str
    operands: tuple[cst.BaseExpression, ...]  # the operands proven saved
    output: bool  # its result is proven saved


class SavedForBackward:
    def __init__(
        self,
        index: FileIndex,
        values: ValueAnalysis,
        tensors: TensorFacts,
        grad_mode: GradModeAnalysis,
    ) -> None:
        self.index = index
        self.values = values
        self.tensors = tensors
        self.grad_mode = grad_mode
        self._memo: dict[cst.CSTNode, Saved | None] = {}

    def operation(self, expr: cst.CSTNode) -> tuple[str, list[cst.BaseExpression]] | None:
        """(table key, operand expressions) when `expr` is an operation of the table:
        an operator, a torch function, or a tensor method (receiver first)."""
        ops = table().ops
        if type(expr) is cst.BinaryOperation:
            key = _OPERATORS.get(type(expr.operator))
            return (key, [expr.left, expr.right]) if key else None
        if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
            return "-x", [expr.expression]
        if type(expr) is cst.Subscript:
            return "[]", [expr.value]
        if type(expr) is not cst.Call:
            return None
        if any(a.star for a in expr.args) or any(
            a.keyword is not None and a.keyword.value in ("out", "inplace") for a in expr.args
        ):
            return None
        positional = [a.value for a in expr.args if a.keyword is None]
        qualified = self.index.qualified_name(expr.func) or ""
        if qualified in ops and self._imported(expr.func, expr):
            return qualified, positional[: table().arity(qualified)]
        func = expr.func
        if type(func) is cst.Attribute:
            key = f"Tensor.{func.attr.value}"
            if key in ops and not qualified.startswith("torch."):
                return key, [func.value, *positional[: table().arity(key) - 1]]
        return None

    def _imported(self, func: cst.CSTNode, use: cst.CSTNode) -> bool:
        name = dotted_name(func)
        return name is not None and self.values.bound_only_by_imports(name.split(".")[0], use)

    def saved(self, expr: cst.CSTNode) -> Saved | None:
        """What `expr`, an operation autograd records here, is proven to save; None when
        it saves nothing provably (or is not recorded, or not in the table)."""
        if expr in self._memo:
            return self._memo[expr]
        result = self._saved(expr)
        self._memo[expr] = result
        return result

    def _saved(self, expr: cst.CSTNode) -> Saved | None:
        found = self.operation(expr)
        if found is None or not isinstance(expr, cst.BaseExpression):
            return None
        key, operands = found
        cases = table().ops[key]
        if self.grad_mode.mode_at(expr) is not GradMode.RECORDING:
            return None
        receiver = key.startswith("Tensor.")
        statuses = [
            self.statuses(operand, expr, receiver=receiver and i == 0)
            for i, operand in enumerate(operands)
        ]
        saves: frozenset[int] | None = None
        output = True
        for combination in itertools.product(*(sorted(s) for s in statuses)):
            if GRAD not in combination:
                return None  # nothing requires grad: autograd may record nothing here
            case = cases.get(combination)
            if case is None:
                # torch rejects the call (`F.linear(x, w)` with a number for x): where
                # the program goes on past it, the operands were not these
                continue
            saves = case[0] if saves is None else saves & case[0]
            output = output and case[1]
        if saves is None or (not saves and not output):
            return None
        return Saved(expr, key, tuple(operands[i] for i in sorted(saves)), output)

    def statuses(
        self, expr: cst.BaseExpression, use: cst.CSTNode, *, receiver: bool = False
    ) -> frozenset[str]:
        """What `expr` may be at `use`: a tensor that requires grad, one that does not,
        a Python number. Empty when it may be something else (None, a module)."""
        if self.tensors.leaf_requiring_grad(expr, use) is not None:
            return frozenset({GRAD})
        value = self.values.of_expr(expr, use)
        out: set[str] = set()
        for kind in value:
            if kind is Kind.PYTHON:
                out.add(NUMBER)
            elif kind is Kind.TENSOR:
                name = dotted_name(expr)
                # In-place changes are not bindings: `x.copy_(y)` may give x history.
                if name is not None and self.values.mutated_in_place(name, use):
                    out |= _A_TENSOR
                else:
                    out.add(TENSOR)
            elif kind in (Kind.LEAF, Kind.GRAPH):
                out.add(GRAD)
            elif kind is Kind.UNKNOWN:
                # A method is called on it, so it is a tensor (or not an operation at all)
                out |= _A_TENSOR if receiver else _ANY
            else:
                return frozenset()
        return frozenset(out)
