"""What a loop carries *with its autograd history* from one iteration to the next.

A carried variable (loops.py) keeps the previous iteration's graph when the statements
that rebind it build the new value from the old one through tensor operations and no
path detaches it. Whether that graph reaches something trainable is a second question:
`x = x + torch.randn(3)` carries nothing autograd records, `out, h = rnn(x, h)` with a
module that holds parameters carries a graph of the module's activations, one more step
of it every iteration.

The answers here are shared by the rule about loops that backpropagate every iteration
(GL001 reads the same shape of evidence) and the rule about loops that never do (GL015).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.dataflow import DataFlow, target_names
from gradlint.analysis.forwards import ForwardAnalysis
from gradlint.analysis.grad_mode import GradMode, GradModeAnalysis
from gradlint.analysis.index import FileIndex, dotted_name
from gradlint.analysis.loops import LoopAnalysis, LoopFacts, LoopNode
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.torch_api import (
    DETACHING_INPLACE_METHODS,
    DETACHING_METHODS,
    PARAMETER_HOLDING_METHODS,
)
from gradlint.analysis.values import Kind, ValueAnalysis, may_carry_graph

# Helpers named for what they do to a recurrent state (`repackage_hidden(h)`).
DETACHING_HELPER_WORDS = ("repackage", "detach")
_TRAINABLE = frozenset({Kind.LEAF, Kind.GRAPH})


@dataclass(frozen=True)
class Trainable:
    """What makes a carried value's graph reach parameters: `call` runs a forward of a
    model with parameters (or a function of this file computing from them), or `name` is
    a tensor that requires grad; `seen` is False when the callee is out of sight and
    only the recurrent shape (`y, h = f(x, h)`) suggests it computes with weights."""

    node: cst.CSTNode
    what: str
    seen: bool


class CarriedGraph:
    def __init__(
        self,
        index: FileIndex,
        flow: DataFlow,
        loops: LoopAnalysis,
        values: ValueAnalysis,
        forwards: ForwardAnalysis,
        grad_mode: GradModeAnalysis,
        summaries: FunctionSummaries,
    ) -> None:
        self.index = index
        self.flow = flow
        self.loops = loops
        self.values = values
        self.forwards = forwards
        self.grad_mode = grad_mode
        self.summaries = summaries

    # -- the statements that carry a graph -------------------------------------------

    def called_names(self, loop: LoopFacts[LoopNode]) -> set[str]:
        """Names used as a callee (`m(x)`, `m.parameters()`) are models or functions
        fetched anew, not tensor state."""
        called: set[str] = set()
        for node in self.index.walk(loop.loop.body):
            if type(node) is cst.Call:
                func = node.func
                name = dotted_name(func)
                if name:
                    called.add(name)
                if type(func) is cst.Attribute and func.attr.value in PARAMETER_HOLDING_METHODS:
                    owner = dotted_name(func.value)
                    if owner:
                        called.add(owner)
        return called

    def may_carry_graph(self, var: str, loop: LoopFacts[LoopNode]) -> bool:
        """Can some binding of `var` in the loop hold a tensor with history?"""
        return any(
            may_carry_graph(self.values.of_binding(binding.statement, var))
            for binding in loop.bindings_of(var)
            if binding.kind in ("assign", "augassign")
        )

    def carrying_statements(self, var: str, loop: LoopFacts[LoopNode]) -> list[cst.CSTNode]:
        """The statements that rebind `var` to a value built from its previous value
        through tensor operations; empty when any path detaches it, re-creates it, or
        advances it under no_grad."""
        carrying = []
        for binding in loop.bindings_of(var):
            if binding.kind not in ("assign", "augassign"):
                continue
            if self.grad_mode.mode_at(binding.statement) is not GradMode.RECORDING:
                return []  # advanced under no_grad: no graph to carry
            if self.detaches(binding.value):
                return []
            sources = loop.closure(binding.deps)
            if var not in sources:
                return []  # re-created from scratch on this path
            if binding.tensor_op or any(
                b.tensor_op for b in loop.bindings if b.var in sources and b.var != var
            ):
                carrying.append(binding.statement)
        if self.detached_in_place(var, loop):
            return []
        return carrying

    def detaches(self, value: cst.CSTNode | None) -> bool:
        """`repackage_hidden(h)` or any helper named for detaching, or one of this
        module's functions whose body detaches."""
        if type(value) is not cst.Call:
            return False
        name = self.index.qualified_name(value.func) or ""
        last = name.rsplit(".", 1)[-1].lower()
        if any(word in last for word in DETACHING_HELPER_WORDS):
            return True
        callee = self.summaries.resolve(value)
        if callee is not None:
            return self._body_detaches(callee)
        # `obj.reset_state(h)`: any function of this file by that name that detaches
        candidates = self.summaries.callees.named(name.rsplit(".", 1)[-1])
        return bool(candidates) and all(self._body_detaches(f) for f in candidates)

    def _body_detaches(self, func: cst.FunctionDef) -> bool:
        for node in self.index.walk(func.body):
            if type(node) is cst.Attribute and node.attr.value in DETACHING_METHODS:
                return True
        return False

    def detached_in_place(self, var: str, loop: LoopFacts[LoopNode]) -> bool:
        for node in self.index.walk(loop.loop.body):
            if (
                type(node) is cst.Call
                and type(node.func) is cst.Attribute
                and node.func.attr.value in DETACHING_INPLACE_METHODS
                and dotted_name(node.func.value) == var
            ):
                return True
        return False

    # -- does the carried graph reach parameters? -------------------------------------

    def trainable_source(
        self, statement: cst.CSTNode, var: str, loop: LoopFacts[LoopNode]
    ) -> Trainable | None:
        """What, in computing the new value of `var` at `statement`, makes its graph
        reach parameters: a forward of a model with parameters, a function of this file
        that computes from them, a tensor that requires grad; else, weaker, a call out
        of sight handed the carried value whose result rebinds it (`y, h = f(x, h)`).
        None when nothing trainable is in sight (a random walk, arithmetic on data)."""
        binding = next(
            (b for b in loop.bindings if b.statement is statement and b.var == var), None
        )
        if binding is None or binding.value is None:
            return None
        inputs = loop.closure(binding.deps)
        expressions: list[cst.CSTNode] = [binding.value]
        expressions += [
            b.value
            for b in loop.bindings
            if b.var in inputs and b.var != var and b.value is not None and b.kind != "for"
        ]
        driven = self._loop_driven(loop)
        unseen: Trainable | None = None
        for expr in expressions:
            for node in self.index.walk(expr):
                if type(node) is cst.Call:
                    if self._callee_root(node) in driven:
                        continue  # `for layer in layers: x = layer(x)`: a forward, once
                    model = self.forwards.model_forward(node)
                    if model is not None:
                        return Trainable(node, f"a forward of `{model}`", True)
                    helper = self.forwards.parameter_function(node)
                    if helper is not None:
                        return Trainable(node, f"`{helper}`, computed from parameters", True)
                    if unseen is None and self._recurrent_call_out_of_sight(node, var):
                        name = dotted_name(node.func) or "the call"
                        unseen = Trainable(node, f"`{name}`", False)
                elif type(node) is cst.Name and node.value not in inputs:
                    if self.values.of_expr(node, statement) & {Kind.LEAF}:
                        return Trainable(node, f"`{node.value}`, which requires grad", True)
        return unseen

    def _loop_driven(self, loop: LoopFacts[LoopNode]) -> set[str]:
        """The loop target and what the body computes from it."""
        if type(loop.loop) is not cst.For:
            return set()
        targets = set(target_names(loop.loop.target))
        driven = set(targets)
        for binding in loop.bindings:
            if binding.deps & targets and not binding.tensor_op:
                driven.add(binding.var)
        return driven

    @staticmethod
    def _callee_root(call: cst.Call) -> str | None:
        name = dotted_name(call.func)
        return name.split(".")[0] if name else None

    def _recurrent_call_out_of_sight(self, call: cst.Call, var: str) -> bool:
        """`out, h = decoder(inp, h)` where `decoder` is neither torch nor this file's or
        the project's function: a call handed the carried value whose result rebinds it."""
        qualified = self.index.qualified_name(call.func) or ""
        if qualified.startswith("torch.") or hasattr(builtins, qualified):
            return False
        if self.summaries.resolve(call) is not None:
            return False
        if self.summaries.resolve_external(call) is not None:
            return False
        if type(call.func) is cst.Attribute and call.func.attr.value in PARAMETER_HOLDING_METHODS:
            return False
        return any(var in self.flow.reads(arg.value) for arg in call.args)

    # -- where the carried graph goes after the loop ------------------------------------

    def reaches_differentiation(self, var: str, loop: LoopFacts[LoopNode]) -> bool:
        """Is what the loop carries differentiated in its function: a backward, an
        `autograd.grad` or a step of a value computed from it, in the scope or in a loop
        around this one?"""
        index = self.index
        scope = index.scope_of(loop.loop)
        scope_facts = self.loops.scope_facts(scope)
        for event in scope_facts.events:
            if var in scope_facts.closure(event.roots):
                return True
        for outer in index.enclosing_loops(loop.loop):
            if index.scope_of(outer) is not scope:
                break
            facts = self.loops.facts(outer)
            for event in facts.events:
                if var in scope_facts.closure(event.roots) or var in facts.closure(event.roots):
                    return True
        return False

    def leaves_scope(self, var: str, loop: LoopFacts[LoopNode]) -> bool:
        """Does a value built from what the loop carries leave its function: returned,
        yielded, or stored on an object (`self.h = h`)?"""
        index = self.index
        scope = index.scope_of(loop.loop)
        if type(scope) is not cst.FunctionDef:
            return False
        scope_facts = self.loops.scope_facts(scope)
        for binding in scope_facts.bindings:
            if "." in binding.var and var in scope_facts.closure(binding.deps):
                return True
        for node in index.walk(scope.body):
            if type(node) in (cst.Return, cst.Yield) and node.value is not None:
                if var in scope_facts.closure(self.flow.reads(node.value)):
                    return True
        return False
