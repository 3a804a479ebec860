"""Which modules' parameters an optimizer holds, and which statements step it.

An optimizer's `step()` changes every parameter it holds in place (`p.add_(...)`,
`p.addcdiv_(...)`), which bumps each one's version counter like any in-place change
(see analysis/inplace.py). A graph recorded before the step that saved one of those
parameters can then no longer be backpropagated (GL011).

What an optimizer holds is read from how it is built, as written: the parameters given
first (or as `params=`) name the modules whose `.parameters()` / `.named_parameters()`
they come from: `Adam(qf.parameters())`, `Adam(list(a.parameters()) + list(b.parameters()))`,
`Adam(itertools.chain(a.parameters(), b.parameters()))`, param groups
`[{"params": a.parameters()}, ...]`, `filter(lambda p: p.requires_grad, m.parameters())`.
Any callable counts as the constructor (`optimizer_class(self.qf1.parameters(), lr=lr)`,
the class handed in by a caller), since the name is known to be an optimizer by its
`step()`. A module counts as held only when its parameters are seen given; a parameter
list built elsewhere holds nothing provable, and where several bindings build the
optimizer, only the modules every one of them holds count.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.arguments import library_argument
from gradlint.analysis.autograd_calls import AutogradCalls
from gradlint.analysis.index import FileIndex, dotted_name
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.tensors import TensorFacts
from gradlint.analysis.torch_api import PARAMETER_ITERATORS
from gradlint.analysis.values import LEAF, ValueAnalysis

# Statements whose body may run no time at all, or only partly.
_CONDITIONAL = (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.Match, cst.IfExp)


def parameter_owners(index: FileIndex, expr: cst.CSTNode) -> set[str]:
    """The modules (dotted names as written) whose `.parameters()` (or `named_parameters`,
    ...) `expr` asks for: what an optimizer built from it holds."""
    found: set[str] = set()
    for node in index.walk(expr):
        if (
            type(node) is cst.Call
            and type(node.func) is cst.Attribute
            and node.func.attr.value in PARAMETER_ITERATORS
        ):
            owner = dotted_name(node.func.value)
            if owner is not None:
                found.add(owner)
    return found


@dataclass(frozen=True)
class ParameterStep:
    """A statement of a scope that steps an optimizer holding known modules."""

    call: cst.Call  # in the scope: the `step()` itself, or the call of a helper that steps
    step: cst.Call  # the `step()` call (in the helper, for a helper's step)
    optimizer: str  # as the scope names it
    modules: frozenset[str]  # the modules whose parameters it changes, as the scope names them
    # A backward or autograd.grad runs before the step in the helper that steps, so the
    # step has gradients to apply (for a step in the scope itself: False, the scope's
    # own differentiations tell).
    differentiates_first: bool = False


def optimized_modules(index: FileIndex, value: cst.CSTNode) -> frozenset[str]:
    """The modules (dotted names as written) whose parameters the optimizer `value`
    builds is given (`Adam(policy.parameters(), lr)`, `SGD(params=net.parameters())`)."""
    if type(value) is not cst.Call:
        return frozenset()
    params = library_argument(value, "params", 0)
    if params is None or params.star:
        return frozenset()
    return frozenset(parameter_owners(index, params.value))


class OptimizerHoldings:
    def __init__(
        self,
        index: FileIndex,
        autograd: AutogradCalls,
        values: ValueAnalysis,
        tensors: TensorFacts,
        summaries: FunctionSummaries,
    ) -> None:
        self.index = index
        self.autograd = autograd
        self.values = values
        self.tensors = tensors
        self.summaries = summaries
        self._steps: dict[cst.CSTNode, list[ParameterStep]] = {}

    def held_modules(self, optimizer: cst.CSTNode, use: cst.CSTNode) -> frozenset[str]:
        """The modules (dotted names as the scope of `use` spells them) whose parameters
        every binding of the optimizer `optimizer` names at `use` is built from."""
        name = dotted_name(optimizer)
        if name is None:
            return frozenset()
        values: list[cst.CSTNode]
        if "." in name:
            values = list(self.tensors.module_constructors(optimizer, use))
        else:
            values = []
            for binding in self.values.bindings_of(name, use):
                bound = self.values.bound_expression(binding, name)
                if bound is None:
                    return frozenset()  # a parameter, a loop target: built out of sight
                values.append(bound)
        held: frozenset[str] | None = None
        for value in values:
            modules = optimized_modules(self.index, value)
            held = modules if held is None else held & modules
        return held or frozenset()

    def steps_only_tensors(self, scope: cst.CSTNode) -> bool | None:
        """Does every optimizer the scope steps in its own body hold only tensors made
        to require grad here (`SGD([patch])` of an adversarial patch, `LBFGS([input_img])`
        of style transfer, a GAN inversion's latent)? What such a loop trains is those
        tensors, not the model whose forward it differentiates. None when the scope
        steps no optimizer."""
        body = scope.body if type(scope) is cst.FunctionDef else scope
        stepped = False
        for event in self.autograd.events_in(body):
            if event.kind != "step" or event.keeps_graph:
                continue
            optimizer, _ = self.autograd.step_parts(event.call)
            if optimizer is None or not self._holds_only_tensors(optimizer, event.call):
                return False
            stepped = True
        return True if stepped else None

    def _holds_only_tensors(self, optimizer: cst.CSTNode, use: cst.CSTNode) -> bool:
        if type(optimizer) is not cst.Name:
            return False
        bindings = self.values.bindings_of(optimizer.value, use)
        if not bindings:
            return False
        for binding in bindings:
            built = self.values.bound_expression(binding, optimizer.value)
            if type(built) is not cst.Call:
                return False
            params = library_argument(built, "params", 0)
            if params is None or params.star or type(params.value) not in (cst.List, cst.Tuple):
                return False
            for element in params.value.elements:  # type: ignore[attr-defined]
                if type(element) is not cst.Element or type(element.value) is not cst.Name:
                    return False
                if self.values.of_expr(element.value, built) != LEAF:
                    return False
        return True

    def steps_in(self, scope: cst.CSTNode) -> list[ParameterStep]:
        """The optimizer steps of a scope (its own, and those of this file's helpers it
        calls, one level down) whose optimizer holds known modules, in source order."""
        found = self._steps.get(scope)
        if found is not None:
            return found
        found = []
        body = scope.body if type(scope) is cst.FunctionDef else scope
        for node in self.index.walk(body):
            if type(node) is not cst.Call:
                continue
            event = self.autograd.event(node)
            if event is not None:
                if event.kind == "step" and not event.keeps_graph:
                    step = self._step(node, node, {})
                    if step is not None:
                        found.append(step)
                continue
            found.extend(self._helper_steps(node))
        self._steps[scope] = found
        return found

    def _step(
        self, call: cst.Call, step: cst.Call, passed: dict[str, cst.BaseExpression]
    ) -> ParameterStep | None:
        optimizer, _ = self.autograd.step_parts(step)
        name = dotted_name(optimizer) if optimizer is not None else None
        if optimizer is None or name is None:
            return None
        argument = passed.get(name)
        if argument is not None:
            # a helper's parameter: the optimizer the caller passes
            optimizer, name = argument, dotted_name(argument)
            if name is None:
                return None
            modules = self.held_modules(optimizer, call)
        else:
            modules = self.held_modules(optimizer, step)
        if not modules:
            return None
        return ParameterStep(call, step, name, modules)

    def _helper_steps(self, call: cst.Call) -> list[ParameterStep]:
        """`self.update_critic(loss)`, `update(opt, loss)`: the steps of a function of
        this file that the call runs, with the names it uses read as the caller's (a
        method's `self.x` through `self.`, a parameter as the argument passed)."""
        func = call.func
        if type(func) is cst.Attribute and dotted_name(func.value) != "self":
            return []  # another object's method: its `self.x` is not ours
        callee = self.summaries.resolve(call)
        if callee is None:
            return self._external_steps(call)
        summary = self.summaries.of(callee)
        steps = [
            node
            for node in summary.updates
            if type(node) is cst.Call
            and (event := self.autograd.event(node)) is not None
            and event.kind == "step"
        ]
        if not steps:
            return []
        passed: dict[str, cst.BaseExpression] = {}
        for param in summary.params:
            argument = summary.forwarded_argument(call, param)
            if argument is not None:
                passed[param] = argument
        order = self.index.order
        found = []
        for step in steps:
            if not self.runs_unconditionally(step, callee, callee):
                continue  # `if it % 2: opt.step()` in the helper
            made = self._step(call, step, passed)
            if made is None:
                continue
            first = any(order[b] < order[step] for b in summary.backwards)
            found.append(ParameterStep(made.call, step, made.optimizer, made.modules, first))
        return found

    def _external_steps(self, call: cst.Call) -> list[ParameterStep]:
        """`update_params(self.q1_optim, q1_loss)` of the project's other file: the
        optimizers its summary says it steps, read as the arguments passed."""
        external = self.summaries.resolve_external(call)
        if external is None or not external.stepped_params:
            return []
        found = []
        for param, first in external.stepped_params.items():
            argument = self.summaries.external_argument(call, external, param)
            name = dotted_name(argument) if argument is not None else None
            if argument is None or name is None:
                continue
            modules = self.held_modules(argument, call)
            if modules:
                found.append(ParameterStep(call, call, name, modules, first))
        return found

    def runs_unconditionally(
        self, node: cst.CSTNode, around: cst.CSTNode, scope: cst.CSTNode
    ) -> bool:
        """Does `node` run whenever `around` (a node of `scope` containing it, or the
        scope itself) runs to its end: no `if`, loop, `try` or `match` between them that
        `around` is not inside of too?"""
        for ancestor in self.index.ancestors(node):
            if ancestor is scope or self.index.is_inside(around, ancestor):
                return True
            if isinstance(ancestor, _CONDITIONAL):
                return False
        return True
