"""Where one module's gradients are handed to another module's parameters, and which
clears empty which module's gradients when they are.

Asynchronous training (A3C, Hogwild) backpropagates through a worker's *local* model and
steps an optimizer that holds a *shared* model's parameters. Between the two, each shared
parameter is given the local one's gradient:

    for local_param, shared_param in zip(local.parameters(), shared.parameters()):
        shared_param._grad = local_param.grad      # (or `.grad =`)

That is a *handoff*: from then on the shared `.grad` **is** the local gradient tensor
(or a copy of it, with `.clone()`), and the optimizer's step reads the local sum. What
backward adds into is the local model's `.grad`, so the question "are the gradients
cleared every iteration?" is about the local model, not about what the optimizer holds:

- `optimizer.zero_grad()` clears the parameters the optimizer holds (analysis/optimizers.py:
  the shared ones). Since torch 2.0 its default `set_to_none=True` sets the shared `.grad`
  to None and leaves the local tensor as it is, so the next backward adds to it: the
  local gradients sum over every update (measured on torch 2.13: 1, 2, 3 for a gradient
  of 1). The same holds for `shared.zero_grad()` and `shared_param.grad = None`;
- `optimizer.zero_grad(set_to_none=False)` (torch 1.x's default) zeroes the shared
  `.grad` in place, and the shared `.grad` is the local tensor: the local sum restarts;
- `local.zero_grad()`, an optimizer over the local parameters, `p.grad = None` for `p` of
  `local.parameters()` clear the local gradients directly.

A handoff guarded by `if shared_param.grad is not None: return` (the classic
`ensure_shared_grads`) is the same handoff on torch 2: the default `zero_grad()` has set
the shared `.grad` to None again by the next update, so the guard never returns
(measured: the local gradient still goes 1, 2, 3).

A handoff is recognised in a `for` over `zip(A.parameters(), B.parameters())` (in either
order, `named_parameters` too), with the target's `.grad` or `._grad` assigned the
other's `.grad`; and at a call of a helper of this file that makes one between the
modules it is passed (`ensure_shared_grads(model, shared_model)`), unless that helper
clears gradients itself.

Which modules a backward adds into are the modules whose recorded forwards its loss is
computed from (analysis/targets.py's `forwards_in`, and the forwards of the region whose
result reaches the backward, analysis/differentiation.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.arguments import library_argument
from gradlint.analysis.autograd_calls import AutogradCalls, DiffEvent
from gradlint.analysis.caller_arguments import path_in_caller
from gradlint.analysis.differentiation import DifferentiationReach
from gradlint.analysis.grad_clears import GradClear, grad_owners
from gradlint.analysis.grad_mode import GradMode, GradModeAnalysis
from gradlint.analysis.index import (
    FileIndex,
    bool_literal,
    dotted_name,
    loop_element_sources,
    target_names,
)
from gradlint.analysis.optimizers import OptimizerHoldings, parameter_owners
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.targets import LossTargets
from gradlint.analysis.torch_api import GRAD_STORAGE_ATTRIBUTES
from gradlint.analysis.values import ValueAnalysis


@dataclass(frozen=True)
class GradHandoff:
    """A statement that makes `target`'s parameters' gradients be `source`'s."""

    node: cst.CSTNode  # the `.grad` assignment, or the call of the helper that makes it
    source: str  # the module whose gradients are handed on, as the scope names it
    target: str  # the module whose parameters receive them
    # True: the target's `.grad` is the source's tensor itself (`p.grad`, `.data`,
    # `.detach()`); False: a copy (`.clone()`); None: unknown (`.to(device)`).
    shares: bool | None


class GradSharing:
    def __init__(
        self,
        index: FileIndex,
        autograd: AutogradCalls,
        values: ValueAnalysis,
        grad_mode: GradModeAnalysis,
        summaries: FunctionSummaries,
        optimizers: OptimizerHoldings,
        loss_targets: LossTargets,
        reach: DifferentiationReach,
    ) -> None:
        self.index = index
        self.autograd = autograd
        self.values = values
        self.grad_mode = grad_mode
        self.summaries = summaries
        self.optimizers = optimizers
        self.loss_targets = loss_targets
        self.reach = reach
        self._helpers: dict[cst.FunctionDef, list[GradHandoff]] = {}

    # -- the handoffs ------------------------------------------------------------------

    def handoffs_at(self, node: cst.CSTNode) -> list[GradHandoff]:
        """The handoffs this node makes: an assignment of a `.grad`, or a call of a helper
        of this file that makes them (with the helper's names read as the call's)."""
        if type(node) is cst.Assign:
            found = self._assigned(node)
            return [found] if found is not None else []
        if type(node) is cst.Call:
            return self._through_helper(node)
        return []

    def is_handoff(self, node: cst.CSTNode) -> bool:
        """Is this node a `.grad` assignment that hands one module's gradient to
        another's parameter (wherever it is, a helper's body too)?"""
        return type(node) is cst.Assign and self._assigned(node) is not None

    def _assigned(self, node: cst.Assign) -> GradHandoff | None:
        if len(node.targets) != 1:
            return None
        target = node.targets[0].target
        if type(target) is not cst.Attribute or target.attr.value not in GRAD_STORAGE_ATTRIBUTES:
            return None
        receiving = dotted_name(target.value)
        value, shares = self._unwrapped(node.value)
        if receiving is None or value is None:
            return None
        giving = dotted_name(value.value)
        if giving is None:
            return None
        pair = self._zipped_modules(receiving, giving, node)
        if pair is None:
            return None
        receiver_module, giver_module = pair
        if receiver_module == giver_module:
            return None
        return GradHandoff(node, giver_module, receiver_module, shares)

    @staticmethod
    def _unwrapped(value: cst.CSTNode) -> tuple[cst.Attribute | None, bool | None]:
        """The `p.grad` an assigned value is made from, and whether the value is that
        tensor itself (`.data`, `.detach()` share its storage; `.clone()` copies it;
        another method, `.to(device)`, may do either)."""
        shares: bool | None = True
        while True:
            if type(value) is cst.Attribute:
                if value.attr.value in GRAD_STORAGE_ATTRIBUTES:
                    return value, shares
                if value.attr.value != "data":
                    return None, None
                value = value.value
            elif type(value) is cst.Call and type(value.func) is cst.Attribute:
                method = value.func.attr.value
                if method == "clone":
                    shares = False
                elif method != "detach" and shares is True:
                    shares = None
                value = value.func.value
            else:
                return None, None

    def _zipped_modules(
        self, receiving: str, giving: str, at: cst.CSTNode
    ) -> tuple[str, str] | None:
        """(receiving module, giving module) when both names are targets of one `for`
        over a zip of two modules' parameters around `at`."""
        scope = self.index.scope_of(at)
        for loop in self.index.enclosing_loops(at):
            if type(loop) is not cst.For or self.index.scope_of(loop) is not scope:
                continue
            modules: dict[str, str] = {}
            sources = loop_element_sources(loop.target, loop.iter)
            for name, source in zip(target_names(loop.target), sources, strict=True):
                module = self._parameters_of(source, loop) if source is not None else None
                if module is not None:
                    modules[name] = module
            if receiving in modules and giving in modules:
                return modules[receiving], modules[giving]
        return None

    def _parameters_of(self, expr: cst.CSTNode, use: cst.CSTNode) -> str | None:
        """The one module whose parameters `expr` iterates: `m.parameters()`, or a name
        bound (every time) to `list(m.parameters())`."""
        owners = parameter_owners(self.index, expr)
        if not owners and type(expr) is cst.Name:
            for bound in self.values.reaching_expressions(expr.value, use):
                if bound is None:
                    return None
                owners |= parameter_owners(self.index, bound)
        return next(iter(owners)) if len(owners) == 1 else None

    def _through_helper(self, call: cst.Call) -> list[GradHandoff]:
        callee = self.summaries.resolve(call)
        if callee is None:
            return []
        inner = self._helper_handoffs(callee)
        if not inner:
            return []
        summary = self.summaries.of(callee)
        params = set(summary.params)
        out = []
        for handoff in inner:
            source = self._as_caller(handoff.source, call, callee, params)
            target = self._as_caller(handoff.target, call, callee, params)
            if source is not None and target is not None and source != target:
                out.append(GradHandoff(call, source, target, handoff.shares))
        return out

    def _helper_handoffs(self, callee: cst.FunctionDef) -> list[GradHandoff]:
        """The handoffs a helper's body makes, in its own names; none when the helper
        also clears gradients (then it manages them, and we do not guess how)."""
        found = self._helpers.get(callee)
        if found is None:
            found = []
            for node in self.index.walk(callee.body):
                if type(node) is cst.Assign:
                    handoff = self._assigned(node)
                    if handoff is not None:
                        found.append(handoff)
            if found:
                summary = self.summaries.of(callee)
                if any(not self.is_handoff(c.node) for c in summary.clears) or any(
                    self.summaries.of(f).clears_grads for _, f in summary.calls
                ):
                    found = []
            self._helpers[callee] = found
        return found

    def _as_caller(
        self, name: str, call: cst.Call, callee: cst.FunctionDef, params: set[str]
    ) -> str | None:
        head, dot, rest = name.partition(".")
        if head in ("self", "cls"):
            receiver = call.func.value if type(call.func) is cst.Attribute else None
            return name if receiver is not None and dotted_name(receiver) == head else None
        if head not in params:
            return name  # a global module, the same name at the call
        method = self.index.enclosing_class(callee) is not None
        return path_in_caller(call, callee, name, method=method)

    # -- what a backward adds into -----------------------------------------------------

    def accumulated_modules(self, event: DiffEvent, region: cst.CSTNode) -> set[str]:
        """The modules whose parameters a backward adds into, as its scope names them:
        those whose recorded forwards its loss is computed from, directly or through
        containers, helpers and methods of the object whose forward they run."""
        found: set[str] = set()
        loss = event.root_expr
        if isinstance(loss, cst.BaseExpression):
            found |= {f.model for f in self.loss_targets.forwards_in(loss, event.call)}
        scope = self.index.scope_of(event.call)
        for node in self.index.walk(region):
            if type(node) is not cst.Call or self.index.scope_of(node) is not scope:
                continue
            model = self.loss_targets.forward_model(node)
            if model is None or model in found:
                continue
            if self.grad_mode.mode_at(node) is not GradMode.RECORDING:
                continue
            if any(e is event for e in self.reach.differentiations_of(node)):
                found.add(model)
        return found

    # -- which clears reach a module ---------------------------------------------------

    def fed_optimizers(
        self, steps: list[cst.Call], handoffs: list[GradHandoff]
    ) -> dict[str, set[str]]:
        """The optimizers that the region's `steps` step on handed-on gradients, each with
        the modules it is taken to hold: those its construction names, or, when that is
        out of sight (an optimizer handed in), the targets of the handoffs before its
        step, which are what those handoffs are made for."""
        order = self.index.order
        fed: dict[str, set[str]] = {}
        for step in steps:
            optimizer, _ = self.autograd.step_parts(step)
            name = dotted_name(optimizer) if optimizer is not None else None
            if optimizer is None or name is None:
                continue
            held = set(self.optimizers.held_modules(optimizer, step))
            if not held:
                held = {h.target for h in handoffs if order[h.node] < order[step]}
            if held & {h.target for h in handoffs}:
                fed.setdefault(name, set()).update(held)
        return fed

    def clear_reaches(
        self,
        clear: GradClear,
        handoff: GradHandoff,
        handoffs: list[GradHandoff],
        fed: dict[str, set[str]],
    ) -> bool:
        """May `clear` empty the gradients `handoff` hands on (its source's)? `handoffs`
        are all the region's, `fed` its optimizers stepped on handed-on gradients
        (`fed_optimizers`). Unknown clears are taken to reach: only a clear proven to
        clear other parameters, or to drop the target's reference rather than zero the
        shared tensor, does not."""
        if any(clear.node is h.node for h in handoffs) or self.is_handoff(clear.node):
            return False
        cleared = self._cleared_modules(clear, fed, handoffs)
        if cleared is None:
            return True
        if any(_holds(module, handoff.source) for module in cleared):
            return True
        if any(_holds(module, handoff.target) for module in cleared):
            # The target's `.grad` is the source's tensor: zeroing it in place zeroes
            # the source's; setting it to None only drops the reference.
            return handoff.shares is not False and self._in_place(clear) is not False
        return False

    def _cleared_modules(
        self, clear: GradClear, fed: dict[str, set[str]], handoffs: list[GradHandoff]
    ) -> set[str] | None:
        """The modules (dotted names) whose parameters' gradients `clear` clears; None
        when that cannot be told."""
        receiver = clear.receiver
        if receiver is not None:
            if receiver in fed:
                return fed[receiver]
            node = clear.node
            if type(node) is cst.Attribute:
                held = self.optimizers.held_modules(node.value, node)
                if held:
                    return set(held)
            if any(_holds(receiver, h.source) or _holds(receiver, h.target) for h in handoffs):
                return {receiver}  # `local.zero_grad()`, `shared.zero_grad()`
            return None  # another object: an optimizer built out of sight, a model
        owners = grad_owners(clear.node, self.index)
        if len(owners) != 1:
            return None
        owner = next(iter(owners))
        return self._module_of_parameter(owner, clear.node)

    def _module_of_parameter(self, name: str, at: cst.CSTNode) -> set[str] | None:
        """`m` when `name` is a target of a `for` around `at` over `m.parameters()` (or
        over a zip of modules' parameters)."""
        found = self.index.loop_element_binding(name, at)
        if found is None:
            return None
        loop, source = found
        if source is None or self.index.scope_of(loop) is not self.index.scope_of(at):
            return None
        module = self._parameters_of(source, loop)
        return {module} if module is not None else None

    def _in_place(self, clear: GradClear) -> bool | None:
        """Does the clear zero the gradient tensor in place (True), or drop it (False)?"""
        node = clear.node
        if clear.receiver is not None:
            call = self.index.parent.get(node)
            if type(call) is not cst.Call or call.func is not node:
                return None  # `callbacks=[opt.zero_grad]`: called out of sight
            if any(arg.star for arg in call.args):
                return None  # `zero_grad(**kwargs)`
            argument = library_argument(call, "set_to_none", 0)
            flag = argument.value if argument is not None else None
            if flag is None:
                return False  # set_to_none=True, the default since torch 2.0
            literal = bool_literal(flag)
            return None if literal is None else not literal
        if type(node) is cst.Call or type(node) is cst.AugAssign:
            return True  # `p.grad.zero_()`, `p.grad *= 0`
        if type(node) in (cst.Assign, cst.AnnAssign, cst.Del):
            return False  # `p.grad = None`: a new tensor next time
        return None


def _holds(module: str, part: str) -> bool:
    """Is `part` the module `module`, or one of its submodules (`self` holds `self.net`)?"""
    return part == module or part.startswith(module + ".")
