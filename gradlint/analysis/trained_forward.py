"""The forward of a module that is trained: what its trainer does with it, seen from
inside.

A pitfall of a training step often sits in a module's `forward()` while the backward
that exposes it is in the training loop: a `sigmoid` output scaled in place, a
checkpoint of the stem on the raw images. Inside `forward` no backward is in sight, so
a rule that waits for one stays silent. This fact says what the caller side does:

- **Trained** means: the `forward` method (in the class body itself) of a class of this
  file that subclasses a torch module (or a helper method of that class that the forward
  calls as `self.helper(...)` and whose result reaches what the forward returns),
  outside `no_grad` (not decorated with it, not
  switched off around its body), unless every call of the module in this file runs
  under `no_grad` (a frozen feature extractor). Its layers' and parameters' results record
  (`ValueAnalysis.trainable_layer`), and the value it returns is what the trainer
  differentiates: a tensor saved for backward that flows into the return value is
  needed by a later backward. What runs only in a branch the module takes outside
  training (`if not self.training:`, the `else` of `if self.training:`) is not part of
  a trained step.
- **Its inputs** are what its callers in this file pass: a module built from the class
  (`net = Net()`, `self.net = Net().to(d)`) and called (`net(x)`, `net.forward(x)`). An
  input is data without history when there is at least one such call and every one
  passes, at that position, a value the value analysis proves free of history (raw
  tensors, a batch of a data loader), or the parameter of another trained forward whose
  own callers do. Anything else (no caller in sight, a layer's output, a parameter of a
  plain function) is unknown, and a rule that needs data without history stays silent.
"""

from __future__ import annotations

import libcst as cst

from gradlint.analysis.arguments import shape_of, signature_of
from gradlint.analysis.differentiation import DifferentiationReach
from gradlint.analysis.grad_mode import GradMode, GradModeAnalysis
from gradlint.analysis.index import FileIndex, dotted_name
from gradlint.analysis.tensors import TensorFacts
from gradlint.analysis.values import ValueAnalysis, is_graph_free


class TrainedForwards:
    def __init__(
        self,
        index: FileIndex,
        values: ValueAnalysis,
        tensors: TensorFacts,
        grad_mode: GradModeAnalysis,
        differentiation: DifferentiationReach,
    ) -> None:
        self.index = index
        self.values = values
        self.tensors = tensors
        self.grad_mode = grad_mode
        self.differentiation = differentiation
        self._forwards: dict[cst.CSTNode, cst.FunctionDef | None] = {}
        self._calls: dict[str, list[cst.Call]] | None = None
        self._inputs: dict[tuple[cst.FunctionDef, str], bool] = {}

    def forward_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The trained forward whose own body holds `node` (not a function nested in it),
        when `node` runs in a trained step (not in a branch taken only outside
        training); else None."""
        scope = self.index.scope_of(node)
        if scope not in self._forwards:
            self._forwards[scope] = self._trained(scope)
        forward = self._forwards[scope]
        if forward is None or self.index.runs_only_in_mode(node, training=False):
            return None
        return forward

    def returns_reached(self, operation: cst.BaseExpression) -> list[cst.Return]:
        """The `return` statements of the trained forward of `operation` whose value is
        computed from its result (past no `.detach()` or `.item()`), in source order: the
        trainer's backward goes through them."""
        forward = self.forward_of(operation)
        if forward is None:
            return []
        return [
            returned
            for returned in self.differentiation.returns_reached(operation)
            if self.index.scope_of(returned) is forward and self.forward_of(returned) is forward
        ]

    def callers_passing_data(self, name: str, use: cst.CSTNode) -> list[cst.Call]:
        """When `name` at `use` is a parameter of a trained forward, never rebound in it,
        to which every call of the module in this file passes data without history: those
        calls (at least one). Else nothing: its input is unknown."""
        forward = self.forward_of(use)
        if forward is None or not self._parameter_without_history(forward, name, set()):
            return []
        return self._callers(forward)

    def _callers(self, forward: cst.FunctionDef) -> list[cst.Call]:
        """The calls that run a trained forward: of the module, for `forward` itself;
        `self.helper(...)` in the class's trained forward, for a helper."""
        cls = self.index.enclosing_class(forward)
        if cls is None:
            return []
        name = forward.name.value
        if name == "forward":
            return list(self._module_calls().get(cls.name.value, []))
        return [
            call
            for call in self.index.of_types_in(cls, cst.Call)
            if dotted_name(call.func) == f"self.{name}"
            and (caller := self.forward_of(call)) is not None
            and caller.name.value == "forward"
        ]

    # -- the pieces ---------------------------------------------------------------------

    def _trained(self, scope: cst.CSTNode) -> cst.FunctionDef | None:
        if type(scope) is not cst.FunctionDef:
            return None
        cls = self.index.enclosing_class(scope)
        if cls is None or cls.name.value not in self.tensors.local_module_classes():
            return None  # also a `forward` nested in a method
        body = scope.body.body
        if not body or self.grad_mode.mode_at(body[0]) is not GradMode.RECORDING:
            return None  # `@torch.no_grad()`: nothing it computes is trained
        calls = self._module_calls().get(cls.name.value, [])
        if calls and all(self.grad_mode.mode_at(call) is GradMode.NOT_RECORDING for call in calls):
            return None  # a feature extractor this file runs only under `no_grad`
        if scope.name.value != "forward" and not self._helper_of_forward(scope, cls):
            return None
        return scope

    def _helper_of_forward(self, method: cst.FunctionDef, cls: cst.ClassDef) -> bool:
        """Is `method` a helper of its class's trained forward: called there as
        `self.method(...)`, and what it returns reaches what the forward returns (the
        trainer's backward then goes through the helper's result too)?"""
        name = method.name.value
        for node in cls.body.body:
            if type(node) is not cst.FunctionDef or node.name.value != "forward":
                continue
            for call in self.index.of_types_in(node, cst.Call, into_functions=False):
                if dotted_name(call.func) == f"self.{name}" and self.returns_reached(call):
                    return True
        return False

    def _parameter_without_history(
        self, forward: cst.FunctionDef, name: str, seen: set[cst.FunctionDef]
    ) -> bool:
        key = (forward, name)
        if key in self._inputs:
            return self._inputs[key]
        self._inputs[key] = False  # a cycle of forwards proves nothing
        answer = forward not in seen and self._passed_without_history(forward, name, seen)
        self._inputs[key] = answer
        return answer

    def _passed_without_history(
        self, forward: cst.FunctionDef, name: str, seen: set[cst.FunctionDef]
    ) -> bool:
        if len(self.values.bindings_of(name, forward.body.body[0])) != 1:
            return False  # rebound in the forward
        signature = signature_of(forward, method=True)
        calls = self._callers(forward)
        if not calls:
            return False
        for call in calls:
            # `net(x)` binds `self` as a method call does (through `__call__`), and so
            # does `self.helper(x)`
            bound = signature.bind(shape_of(call), name, receiver_passed=True)
            if bound is None or bound.index is None:
                return False  # out of sight, or the default
            arg = call.args[bound.index].value
            if self._data_without_history(arg, call):
                continue
            # the input of an enclosing trained forward, passed on as it is
            outer = self.forward_of(call)
            if (
                outer is None
                or type(arg) is not cst.Name
                or not self._parameter_without_history(outer, arg.value, seen | {forward})
            ):
                return False
        return True

    def _data_without_history(self, arg: cst.BaseExpression, call: cst.Call) -> bool:
        values = self.values
        if not is_graph_free(values.of_expr(arg, call)):
            return False
        reads = self.differentiation.flow.reads(arg)
        return not any(values.mutated_in_place(n, call) for n in reads)

    def _module_calls(self) -> dict[str, list[cst.Call]]:
        """The calls of modules built from this file's module classes, by class."""
        if self._calls is None:
            classes = self.tensors.local_module_classes()
            calls: dict[str, list[cst.Call]] = {}
            for call in self.index.calls:
                func = call.func
                if type(func) is cst.Attribute and func.attr.value == "forward":
                    func = func.value
                if type(func) is cst.Call:
                    called = self.index.qualified_name(func.func) or ""  # `Net()(x)`
                elif isinstance(func, (cst.Name, cst.Attribute)):
                    called = self.tensors.module_class(func, call) or ""
                else:
                    continue
                if called in classes:
                    calls.setdefault(called, []).append(call)
            self._calls = calls
        return self._calls
