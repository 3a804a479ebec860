"""Where a region of code differentiates: `x.backward()`, `torch.autograd.grad(...)`,
`torch.autograd.backward(...)`, `manual_backward(loss)`, and optimizer steps.

A differentiation event has *roots*: the variables the differentiated value is computed
from, its operands (graph-aware, DataFlow.operands): `(loss / self.config.steps).backward()`
differentiates `loss` and `self.config.steps`, not `self` or `self.config`. An optimizer
step has no visible root.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from gradlint.analysis.arguments import library_argument
from gradlint.analysis.dataflow import DataFlow, method_name
from gradlint.analysis.index import FileIndex, bool_literal, dotted_name
from gradlint.analysis.summary_facts import differentiation_kind
from gradlint.analysis.torch_api import (
    AUTOGRAD_BACKWARD,
    AUTOGRAD_GRAD,
    BACKWARD_WRAPPER_RECEIVERS,
)


@dataclass
class DiffEvent:
    call: cst.Call
    kind: str  # "backward" | "grad" | "step"
    roots: set[str] = field(default_factory=set)
    # The expression that is differentiated (None for a step).
    root_expr: cst.CSTNode | None = None
    # Variables differentiated *with respect to* (`inputs=` of autograd.grad).
    wrt: set[str] = field(default_factory=set)
    # The event keeps the graph it differentiates, to be differentiated again:
    # `autograd.grad(..., create_graph=True)` or a differentiable optimizer's
    # `diffopt.step(loss)` (higher, learn2learn). A loop of only such events is an
    # unrolled computation whose history is the point, not a training loop.
    keeps_graph: bool = False


def _not_false(arg: cst.Arg | None) -> bool:
    """A flag given and not literally False (`create_graph=not first_order` may hold)."""
    if arg is None:
        return False
    value = arg.value
    return not (type(value) is cst.Name and value.value in ("False", "None"))


# Where `retain_graph` and `create_graph` sit among the positional arguments of
# torch.autograd.grad and torch.autograd.backward.
_RETAIN_CREATE_POSITIONS = {"grad": (3, 4), "backward": (2, 3)}


def _step_operands(call: cst.Call) -> tuple[str | None, list[str | None]]:
    """(the receiver's dotted name, the arguments'), as summary_facts reads a `.step`."""
    receiver = dotted_name(call.func.value) if type(call.func) is cst.Attribute else None
    return receiver, [dotted_name(arg.value) for arg in call.args]


class AutogradCalls:
    def __init__(self, index: FileIndex, flow: DataFlow) -> None:
        self.index = index
        self.flow = flow
        # id of a call -> (the call, its event): the summaries, loops and several rules
        # ask about the same calls (13,500 questions about 2,500 calls on the RL tree).
        # Keyed by id, as LibCST's __hash__ runs in Python; the entry holds the call.
        self._events: dict[int, tuple[cst.Call, DiffEvent | None]] = {}

    def is_autograd_grad(self, call: cst.Call) -> bool:
        return self.index.qualified_name(call.func) in AUTOGRAD_GRAD

    def event(self, call: cst.Call) -> DiffEvent | None:
        """The differentiation or optimizer step the call is, if it is one. The same
        event object for every question about a call: read it, do not change it."""
        known = self._events.get(id(call))
        if known is not None and known[0] is call:
            return known[1]
        found = self._event(call)
        self._events[id(call)] = (call, found)
        return found

    def _event(self, call: cst.Call) -> DiffEvent | None:
        qualified = self.index.qualified_name(call.func)
        method = method_name(call)
        kind = differentiation_kind(qualified, method, _step_operands, call)
        if kind is None:
            return None
        if kind == "grad":
            outputs = library_argument(call, "outputs", 0)
            expr: cst.BaseExpression | None = outputs.value if outputs else None
            inputs = library_argument(call, "inputs", 1)
            return DiffEvent(
                call,
                "grad",
                self.flow.operands(expr),
                expr,
                wrt=self.flow.operands(inputs.value) if inputs else set(),
                keeps_graph=_not_false(library_argument(call, "create_graph", 5)),
            )
        if qualified in AUTOGRAD_BACKWARD:
            tensors = library_argument(call, "tensors", 0)
            expr = tensors.value if tensors else None
            return DiffEvent(call, "backward", self.flow.operands(expr), expr)
        if kind == "backward" and method == "backward" and self._users_own_backward(call):
            return None
        # A method name means `call.func` is an Attribute; the type test tells mypy.
        if kind == "backward" and type(call.func) is cst.Attribute:
            receiver = call.func.value
            roots = self.flow.operands(receiver)
            expr = receiver
            if call.args and call.args[0].keyword is None:
                # `y.backward(grad_y)` passes a gradient, but `accelerator.backward(loss)`
                # and `self.manual_backward(loss)` pass what is differentiated. Both
                # count as roots; the argument is the expression when the receiver is
                # a plain object rather than a computed tensor.
                roots |= self.flow.operands(call.args[0].value)
                if (
                    method == "manual_backward"
                    or isinstance(receiver, (cst.Name, cst.Attribute))
                    and not self._looks_like_tensor_receiver(receiver)
                ):
                    expr = call.args[0].value
            return DiffEvent(call, "backward", roots, expr)
        if kind != "step":
            return None
        if self._is_differentiable_step(call):
            loss = call.args[0].value
            return DiffEvent(call, "step", self.flow.operands(loss), loss, keeps_graph=True)
        return DiffEvent(call, "step")

    def _users_own_backward(self, call: cst.Call) -> bool:
        """A `backward` of the code's own, not autograd's: its result is used (torch's
        hands back None: `current_grad = layer.backward(current_grad)` in a course's
        hand-written backpropagation), or it is called on an instance of a plain class of
        this file that defines one (`my_fit = my_composition(layers)`, `my_fit.backward()`)."""
        if type(self.index.parent.get(call)) is not cst.Expr:
            return True
        receiver = call.func.value if type(call.func) is cst.Attribute else None
        if type(receiver) is not cst.Name:
            return False
        classes = self._plain_classes_with_backward()
        if not classes:
            return False
        built = [
            node.value
            for node in self.index.of_types(cst.Assign)
            if any(
                type(t.target) is cst.Name and t.target.value == receiver.value
                for t in node.targets
            )
        ]
        return bool(built) and all(
            type(value) is cst.Call and type(value.func) is cst.Name and value.func.value in classes
            for value in built
        )

    def _plain_classes_with_backward(self) -> set[str]:
        """This file's classes that define `backward` and derive from nothing of torch's
        (no `nn.Module`, no `autograd.Function`): numpy layers written by hand."""
        found = set()
        for cls in self.index.classes:
            defines = any(
                type(stmt) is cst.FunctionDef and stmt.name.value == "backward"
                for stmt in cls.body.body
            )
            if not defines:
                continue
            bases = [self.index.qualified_name(base.value) or "" for base in cls.bases]
            if all(
                base in ("", "object") or not base.startswith("torch") for base in bases
            ) and not any(base.rsplit(".", 1)[-1] in ("Module", "Function") for base in bases):
                found.add(cls.name.value)
        return found

    def retains_graph(self, event: DiffEvent) -> bool | None:
        """Does this differentiation keep the graph it walks (`retain_graph=True`, or
        `create_graph=True`, which retain_graph defaults to)? False when it frees it (the
        default), None when a flag is not a literal. A method's flags are read by keyword
        only: `accelerator.backward(loss)` passes the loss first."""
        call = event.call
        positions: tuple[int | None, int | None] = (None, None)
        qualified = self.index.qualified_name(call.func)
        if qualified in AUTOGRAD_GRAD or qualified in AUTOGRAD_BACKWARD:
            positions = _RETAIN_CREATE_POSITIONS[event.kind]
        for name, position in zip(("retain_graph", "create_graph"), positions, strict=True):
            arg = library_argument(call, name, position)
            if arg is None:
                continue
            value = arg.value
            if bool_literal(value) is True:
                return True
            if not (type(value) is cst.Name and value.value in ("False", "None")):
                return None
        return False

    def step_parts(
        self, call: cst.Call
    ) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None]:
        """(the optimizer, the closure) of an optimizer step: `opt.step(closure)` steps
        `opt`; AMP's `scaler.step(opt)` steps the optimizer it is given."""
        if type(call.func) is not cst.Attribute:
            return None, None
        receiver = call.func.value
        if "opt" in (dotted_name(receiver) or "").rsplit(".", 1)[-1].lower():
            closure = library_argument(call, "closure", 0)  # Optimizer.step(closure)
            return receiver, closure.value if closure is not None else None
        # GradScaler.step(optimizer, *args, **kwargs) hands the rest to the optimizer
        optimizer = library_argument(call, "optimizer", 0)
        closure = library_argument(call, "closure", 1)
        return (
            optimizer.value if optimizer is not None else None,
            closure.value if closure is not None else None,
        )

    def _is_differentiable_step(self, call: cst.Call) -> bool:
        """`diffopt.step(loss)`: a differentiable optimizer is handed the loss, where a
        torch optimizer takes nothing, a closure, or (AMP's scaler) the optimizer."""
        if not call.args or call.args[0].keyword is not None:
            return False
        arg = call.args[0].value
        if type(arg) is cst.Lambda:
            return False
        name = dotted_name(arg)
        if name is not None:
            if "opt" in name.lower() or "closure" in name.lower():
                return False
            if any(f.name.value == name for f in self.index.functions):
                return False  # a closure defined in this file
        return True

    @staticmethod
    def _looks_like_tensor_receiver(receiver: cst.CSTNode) -> bool:
        name = (dotted_name(receiver) or "").rsplit(".", 1)[-1].lower()
        return name not in BACKWARD_WRAPPER_RECEIVERS

    def events_in(self, region: cst.CSTNode) -> list[DiffEvent]:
        events = []
        for node in self.index.of_types_in(region, cst.Call, into_functions=False):
            if type(node) is cst.Call:
                found = self.event(node)
                if found is not None:
                    events.append(found)
        return events
