"""Which variables an expression reads, which a statement binds, and whether a value can
carry an autograd graph.

Variables are dotted names: `h`, `self.hidden`. Reads are *graph-aware*: a value that
passes through `.detach()`, `.item()`, `float(...)`, a comparison or `.shape` carries no
graph, so what it was computed from does not count as a dependency. Which operations cut the
graph is `torch_api`'s vocabulary; this module applies it to expressions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from gradlint.analysis.index import FileIndex, dotted_name, target_names
from gradlint.analysis.torch_api import (
    ARITHMETIC_BUILTINS,
    GRAPH_CUTTING_ATTRIBUTES,
    GRAPH_CUTTING_FUNCTIONS,
    GRAPH_CUTTING_METHODS,
    NUMERIC_MODULES,
    SHAPE_ONLY_ARGUMENT_METHODS,
)

# `a == b`-style comparisons are elementwise on tensors; `is` and `in` give a bool.
ELEMENTWISE_COMPARISONS = (
    cst.Equal,
    cst.NotEqual,
    cst.LessThan,
    cst.LessThanEqual,
    cst.GreaterThan,
    cst.GreaterThanEqual,
)
COMPARISON_OPS = (
    *ELEMENTWISE_COMPARISONS,
    cst.Is,
    cst.IsNot,
    cst.In,
    cst.NotIn,
)


def method_name(call: cst.Call) -> str | None:
    return call.func.attr.value if type(call.func) is cst.Attribute else None


class DataFlow:
    """Reads and bindings, graph-aware, with names resolved through the file's imports."""

    def __init__(self, index: FileIndex, grad_mode=None) -> None:
        self.index = index
        self._grad_mode = grad_mode
        self._no_grad_functions: set[str] | None = None

    def no_grad_functions(self) -> set[str]:
        """Names of this module's functions decorated with `@torch.no_grad()` or
        `@torch.inference_mode()`: what they return carries no graph."""
        if self._no_grad_functions is None:
            from gradlint.analysis.grad_mode import GradMode

            found: set[str] = set()
            if self._grad_mode is not None:
                for func in self.index.functions:
                    for decorator in func.decorators:
                        if self._grad_mode.context_effect(decorator.decorator) is (
                            GradMode.NOT_RECORDING
                        ):
                            found.add(func.name.value)
            self._no_grad_functions = found
        return self._no_grad_functions

    # -- reads ------------------------------------------------------------------------

    def is_graph_cut(self, node: cst.CSTNode) -> bool:
        """Does this expression produce a value with no autograd history?"""
        if type(node) is cst.Call:
            method = method_name(node)
            if method in GRAPH_CUTTING_METHODS:
                return True
            qualified = self.index.qualified_name(node.func) or ""
            if (
                qualified in self.no_grad_functions()
                or qualified.startswith("self.")
                and (qualified[5:] in self.no_grad_functions())
            ):
                return True
            if qualified in GRAPH_CUTTING_FUNCTIONS or qualified.startswith(NUMERIC_MODULES):
                return True
            return False
        if type(node) is cst.Attribute:
            return node.attr.value in GRAPH_CUTTING_ATTRIBUTES
        if type(node) is cst.Comparison:
            return all(isinstance(t.operator, COMPARISON_OPS) for t in node.comparisons)
        if (
            type(node) is cst.ListComp
            or type(node) is cst.GeneratorExp
            or type(node) is cst.SetComp
        ):
            # `tuple(h.detach() for h in hidden)`: every element is cut.
            return self.is_graph_cut(node.elt)
        if (type(node) is cst.Tuple or type(node) is cst.List) and node.elements:
            return all(self.is_graph_cut(e.value) for e in node.elements)
        if type(node) is cst.Name and node.value == "None":
            return True
        if type(node) is cst.SubscriptElement:
            # an index of `x[idx]`: the gradient goes to x, never to the index (a walk
            # up from a value used as one is cut here)
            return True
        return False

    def cut_between(self, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
        """A graph cut (is_graph_cut) around `node` inside `outer`: `x.detach()`,
        `x.item()`, `x.shape` of a read of `x`."""
        for anc in self.index.ancestors(node):
            if anc is outer:
                return False
            if self.is_graph_cut(anc):
                return True
        return False

    def reads(self, expr: cst.CSTNode | None, *, graph_only: bool = True) -> set[str]:
        """Dotted variables read by expr. With graph_only, reads hidden behind a
        graph-cutting operation are left out."""
        return self._reads(expr, graph_only=graph_only, whole=False)

    def operands(self, expr: cst.CSTNode | None) -> set[str]:
        """The variables expr's value is computed from (graph-aware): each name it reads
        as an operand, whole, and the receiver of a method call, not the objects those
        are attributes of. `(loss / self.config.steps)` is computed from `loss` and
        `self.config.steps`, not from `self` or `self.config`; `self.h.pow(2)` from
        `self.h`. Whether `out.loss` holds what `out = model(x)` computed is a question
        about bindings (LoopFacts.closure), not about the expression."""
        return self._reads(expr, graph_only=True, whole=True)

    def _reads(self, expr: cst.CSTNode | None, *, graph_only: bool, whole: bool) -> set[str]:
        if expr is None:
            return set()
        result: set[str] = set()
        bound_locally: set[str] = set()
        stack: list[cst.CSTNode] = [expr]
        while stack:
            node = stack.pop()
            if graph_only and self.is_graph_cut(node):
                continue
            if (
                graph_only
                and type(node) is cst.Call
                and type(node.func) is cst.Attribute
                and node.func.attr.value in SHAPE_ONLY_ARGUMENT_METHODS
            ):
                # `x.expand_as(other)`: only the shape or type of `other` is read
                stack.append(node.func.value)
                continue
            if whole and type(node) is cst.Call and type(node.func) is cst.Attribute:
                # `self.h.pow(2)`: the receiver is an operand, and so is what is called
                # when it is an attribute (`self.model(x)`); the name is looked up on it.
                callee = dotted_name(node.func)
                if callee is not None and not (graph_only and self._cut_inside(node.func)):
                    result.add(callee)
                stack.append(node.func.value)
                stack.extend(node.args)
                continue
            if type(node) is cst.Name or type(node) is cst.Attribute:
                name = dotted_name(node)
                if name is not None and whole:
                    result.add(name)
                    continue
                if name is not None:
                    if graph_only and self._cut_inside(node):
                        continue  # `loss.data.cpu`: what `.data` hands on has no history
                    # `self.h.pow(2)` reads `self`, `self.h` (and the method's name).
                    parts = name.split(".")
                    for i in range(1, len(parts) + 1):
                        result.add(".".join(parts[:i]))
                    continue
                if type(node) is cst.Attribute:
                    # `f(x).config.size` reads what f(x) reads; `size` is no variable
                    stack.append(node.value)
                    continue
            if type(node) is cst.FunctionDef or type(node) is cst.ClassDef:
                continue
            if type(node) is cst.Lambda:
                bound_locally.update(p.name.value for p in node.params.params)
            if type(node) is cst.CompFor:
                bound_locally.update(target_names(node.target))
            if type(node) is cst.Arg and node.keyword is not None:
                stack.append(node.value)
                continue
            if graph_only and type(node) is cst.Subscript:
                # `x[perm]`: gradient flows to x, never to the (integer) index.
                stack.append(node.value)
                continue
            stack.extend(self.index.kids(node))
        return result - bound_locally

    def _cut_inside(self, node: cst.CSTNode) -> bool:
        """Is a receiver inside the dotted name a graph cut (`loss.data` of
        `loss.data.cpu`)?"""
        inner = node.value if type(node) is cst.Attribute else None
        while type(inner) is cst.Attribute:
            if self.is_graph_cut(inner):
                return True
            inner = inner.value
        return False

    def has_tensor_op(self, expr: cst.CSTNode | None) -> bool:
        """Does expr contain an operation that may build graph: a call that is not a
        graph cut, or a matrix product? Python arithmetic on numbers does not."""
        if expr is None:
            return False
        stack: list[cst.CSTNode] = [expr]
        while stack:
            node = stack.pop()
            if self.is_graph_cut(node):
                continue
            if type(node) is cst.Call:
                func = node.func
                if not (
                    type(func) is cst.Name
                    and func.value in ARITHMETIC_BUILTINS
                    and self.index.qualified_name(func) == func.value
                ):
                    return True
                # `max(min(1, k_t), 0)` computes with its arguments as `+` does: a
                # tensor operation only where they hold one
                stack.extend(a.value for a in node.args)
                continue
            if type(node) is cst.BinaryOperation and type(node.operator) is cst.MatrixMultiply:
                return True
            if type(node) is cst.Lambda or type(node) is cst.FunctionDef:
                continue
            if type(node) is cst.Subscript:
                stack.append(node.value)
                continue
            stack.extend(self.index.kids(node))
        return False


@dataclass
class Binding:
    """One binding of a variable: `var = value` (or an augmented/for/with binding)."""

    var: str
    statement: cst.CSTNode
    value: cst.CSTNode | None
    deps: set[str] = field(default_factory=set)
    tensor_op: bool = False
    augmented: bool = False
    kind: str = "assign"  # assign | augassign | for | with | other
