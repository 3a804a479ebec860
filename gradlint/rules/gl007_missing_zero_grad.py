from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from gradlint.analysis.bindings import bound_names
from gradlint.analysis.dataflow import Binding
from gradlint.analysis.grad_clears import GradClear
from gradlint.analysis.grad_sharing import GradHandoff
from gradlint.analysis.index import dotted_name
from gradlint.analysis.loops import LoopNode
from gradlint.analysis.torch_api import (
    OPTIMIZER_CLASSES,
    PARAMETER_REGISTERING_METHODS,
    SELF_RETURNING_MODULE_METHODS,
)
from gradlint.diagnostics import Applicability, Edit, Fix, Position, Related
from gradlint.edits import split_lines
from gradlint.fix_builders import own_line, render
from gradlint.rules.base import Rule
from gradlint.rules.explain import loop_header

if TYPE_CHECKING:
    from gradlint.context import FileContext

# Helpers of this file are followed this deep (a loop calling `self.train_step()` that
# calls `self._backward()`).
_HELPER_DEPTH = 3


# Where a fix is placed: the flagged loop, or the helper function that holds the step.
_Region = cst.For | cst.While | cst.FunctionDef


@dataclass(frozen=True)
class _Step:
    node: cst.CSTNode  # the step call or the manual update
    optimizer: str | None = None  # `opt` of `opt.step()`, `scaler.step(opt)`
    updated: str | None = None  # `p` of `p -= lr * p.grad`


@dataclass
class _Sites:
    """What a loop's iteration does to `.grad`, its helpers' bodies included."""

    backwards: list[cst.Call] = field(default_factory=list)
    steps: list[_Step] = field(default_factory=list)
    clears: list[GradClear] = field(default_factory=list)
    # `shared_param._grad = local_param.grad`: the steps read another module's gradients
    handoffs: list[GradHandoff] = field(default_factory=list)


class MissingZeroGrad(Rule):
    """
    ## What it does
    Flags the optimizer step (or manual update `p -= lr * p.grad`) of a loop that calls
    `backward()` and steps every iteration but never clears the gradients: no
    `optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None` or `p.grad.zero_()` in
    the loop, in a helper of this file it calls, or in the closure handed to `step`
    (`optimizer.zero_grad` written without its call clears nothing).

    Also flags the backward of a loop that hands one module's gradients to the parameters
    the optimizer steps (A3C's `shared_param._grad = local_param.grad`, directly or in a
    helper such as `ensure_shared_grads(model, shared_model)`) when nothing in the loop
    clears the *source* module's gradients: an optimizer's `zero_grad()` clears the
    parameters it holds, the shared ones, not the local model the backward adds into.

    ## Why is this bad?
    `backward()` does not replace `.grad`, it adds to it. Without a clear, `.grad` after
    the second backward is g1 + g2, after the k-th the sum of all k gradients, and every
    step applies that whole sum again: the effective learning rate grows with the step
    count and old batches keep pushing the weights. Nothing raises; the loss just trains
    badly or diverges (SGD on a linear regression stalls at 4.2 where the same loop with
    `zero_grad()` reaches 0.0). A new optimizer object each iteration does not help: the
    gradients live on the parameters, not in the optimizer.

    In the A3C shape, since torch 2.0 `optimizer.zero_grad()` (default
    `set_to_none=True`) sets the shared `.grad` to None and leaves the local tensor it
    was, so the next backward adds to it: the local gradient goes g1, g1 + g2, g1 + g2 +
    g3 over the updates (measured on torch 2.13), and every step applies the sum. The
    classic `ensure_shared_grads` that returns when the shared `.grad` is not None does
    not help: the default `zero_grad()` has set it to None again by the next update.

    Not flagged: gradient accumulation that steps and clears every k iterations (inside
    an `if`), a clear after the step or in a helper, an LBFGS-style `closure` that
    clears, a model whose `forward` clears its own gradients first (`self.zero_grad()`,
    in this file or another of the project), a model (and its optimizer) created anew each iteration, `torch.autograd.grad`
    (which returns gradients instead of accumulating them), differentiable optimizers,
    and loops whose backward, step or clear happens out of sight (another file's helper,
    a framework hook). A clear in an enclosing loop does not count: it runs once for
    many iterations of the inner loop. In the A3C shape: `local.zero_grad()` in the
    loop, an optimizer's `zero_grad(set_to_none=False)` when the shared `.grad` is the
    local tensor (it zeroes that tensor in place, torch 1.x's behaviour), a clear whose
    target cannot be told, and a local model made anew every update.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    ```

    Gradient accumulation over `k` micro-batches steps and clears together:
    `if (i + 1) % k == 0: optimizer.step(); optimizer.zero_grad()`.

    A worker that hands its local gradients to a shared model clears the local model:
    `local.zero_grad()` before the backward (or the optimizer's
    `zero_grad(set_to_none=False)`, when the shared `.grad` is the local tensor itself).

    ## Fix safety
    The fix inserts `optimizer.zero_grad()` just before the backward that feeds the
    flagged step (before the inner loop, when that backward sums micro-batches). It is
    offered only when the step's optimizer is a name bound outside the loop, and it is
    unsafe: it cannot know the gradients are not cleared out of sight (a callback, a
    helper in another file); if the accumulation across iterations was meant, it is lost;
    the default `set_to_none=True` leaves `.grad` None until the backward, so code that
    reads `.grad` before it in the iteration breaks; and it clears only that optimizer's
    parameters, so other tensors that receive gradient still accumulate. In the A3C
    shape it inserts `local.zero_grad()` (the module the gradients are handed from)
    before the backward instead, with the same caveats.

    ## References
    - [`torch.optim.Optimizer.zero_grad`](https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html)
    - [`torch.Tensor.backward` (gradients are accumulated in leaves)](https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html)
    - [PyTorch tutorial: zeroing gradients](https://pytorch.org/tutorials/recipes/recipes/zeroing_out_gradients.html)
    """

    code = "GL007"
    name = "missing-zero-grad"
    message = "`{step}` applies gradients that this loop never clears: each `backward()` adds to `.grad`, so every step applies the sum of all the iterations' gradients so far. {advice}"
    handoff_message = "`{backward}` adds into `{source}`'s gradients and this loop never clears them: they are handed to `{target}`'s parameters{cleared}, so each backward adds to the old sum and every step applies all the updates' gradients so far. Call `{source}.zero_grad()` every iteration, before the backward"
    fix_title = "Clear the gradients before the backward"
    _fix_title_for = "Insert `{optimizer}.zero_grad()` before the backward"

    trigger_tokens = ("backward",)

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._helper_cache: dict[cst.FunctionDef, _Sites] = {}
        self._reported_backwards: set[cst.CSTNode] = set()

    def leave_Module(self, original_node: cst.Module) -> None:
        index = self.facts.index
        loops = self._loops_that_backpropagate()
        # Innermost loops first: a step is reported (and fixed) for the innermost loop
        # that steps without a clear, so the clear goes where the iterations repeat.
        depth = {loop: sum(1 for _ in index.enclosing_loops(loop)) for loop in loops}
        for loop in sorted(loops, key=lambda node: (-depth[node], index.order[node])):
            self._check_loop(loop)

    def _loops_that_backpropagate(self) -> set[LoopNode]:
        """The loops around a backward, or around a call of a function of this file that
        (through its own calls) runs one: the only loops that can accumulate. Found from
        the calls alone, so a file's other loops are never walked."""
        facts = self.facts
        index = facts.index
        carriers: list[cst.Call] = []
        reaching: set[cst.CSTNode] = set()  # functions that run a backward
        for call in index.calls:
            event = facts.autograd.event(call)
            if event is not None and event.kind == "backward":
                carriers.append(call)
                reaching.add(index.scope_of(call))
        if not carriers:
            return set()
        resolved = [
            (call, callee)
            for call in index.calls
            if (callee := facts.summaries.resolve(call)) is not None
        ]
        changed = True
        while changed:
            changed = False
            for call, callee in resolved:
                scope = index.scope_of(call)
                if callee in reaching and scope not in reaching:
                    reaching.add(scope)
                    changed = True
        carriers += [call for call, callee in resolved if callee in reaching]
        loops: set[LoopNode] = set()
        for call in carriers:
            loops.update(index.enclosing_loops(call))
        return loops

    # -- what one iteration does --------------------------------------------------------

    def _sites(self, loop: LoopNode) -> _Sites:
        sites = _Sites()
        self._collect(loop.body, sites, set(), 0)
        return sites

    def _helper_sites(self, callee: cst.FunctionDef, seen: set, depth: int) -> _Sites:
        """What one call of a helper does, computed once per helper."""
        cache = self._helper_cache
        found = cache.get(callee)
        if found is None:
            found = _Sites()
            self._collect(callee.body, found, seen | {callee}, depth + 1)
            cache[callee] = found
        return found

    def _collect(self, region: cst.CSTNode, sites: _Sites, seen: set, depth: int) -> None:
        facts = self.facts
        autograd = facts.autograd
        clearing = facts.grad_clears
        sharing = facts.grad_sharing
        for node in facts.index.walk(region):
            if type(node) is cst.Assign or type(node) is cst.Call:
                handoffs = sharing.handoffs_at(node) if depth == 0 else []
                if handoffs:
                    # The stepped `.grad` is replaced, not summed: what accumulates is
                    # the source's (`_check_handoffs`, which also speaks for a loop that
                    # clears nothing: the optimizer's `zero_grad()` would not mend it).
                    sites.handoffs += handoffs
                    sites.clears.append(GradClear(node))
                    if type(node) is cst.Assign:
                        continue
            clear = clearing.clear_at(node)
            if clear is not None:
                sites.clears.append(clear)
                continue
            updated = clearing.update_at(node)
            if updated is not None:
                sites.steps.append(_Step(node, updated=updated))
                continue
            if type(node) is not cst.Call:
                continue
            event = autograd.event(node)
            if event is not None:
                if event.kind == "backward":
                    sites.backwards.append(node)
                elif event.kind == "step" and not event.keeps_graph:
                    self._add_step(node, sites)
                continue
            callee = facts.summaries.resolve(node)
            if callee is None or callee in seen or depth >= _HELPER_DEPTH:
                continue
            if facts.summaries.of(callee).clears_grads:
                sites.clears.append(GradClear(node))
            else:
                helper = self._helper_sites(callee, seen, depth)
                sites.backwards += helper.backwards
                sites.steps += helper.steps
                sites.clears += helper.clears

    def _add_step(self, call: cst.Call, sites: _Sites) -> None:
        optimizer, closure = self.facts.autograd.step_parts(call)
        if closure is not None and self._closure_clears(closure, call):
            # LBFGS-style: the closure clears, re-evaluates and backpropagates.
            sites.clears.append(GradClear(call))
        sites.steps.append(_Step(call, optimizer=dotted_name(optimizer)))

    def _closure_clears(self, closure: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """Does the closure handed to `step` clear? One we cannot read is taken to."""
        facts = self.facts
        if type(closure) is cst.Lambda:
            return any(facts.grad_clears.clear_at(n) is not None for n in facts.index.walk(closure))
        if type(closure) is cst.Name:
            func = facts.summaries.function_named(closure.value, at)
            if func is not None:
                return facts.summaries.of(func).clears_grads
        return True

    # -- the check ----------------------------------------------------------------------

    def _check_loop(self, loop: LoopNode) -> None:
        sites = self._sites(loop)
        if not sites.backwards or not sites.steps:
            return
        stepped = {step.optimizer for step in sites.steps if step.optimizer}
        uncleared = [
            step
            for step in sites.steps
            if not any(self._covers(clear, step, stepped) for clear in sites.clears)
            and not self._created_each_iteration(step, loop)
        ]
        if self.facts.frameworks.is_foreign(loop):
            return
        if uncleared:
            clearing_forwards = self._clearing_forwards(loop)
            uncleared = [
                step
                for step in uncleared
                if not any(self._covers(clear, step, stepped) for clear in clearing_forwards)
            ]
        for step in uncleared:
            self._report(step, sites, loop)
        if sites.handoffs:
            self._check_handoffs(loop, sites)

    def _clearing_forwards(self, loop: LoopNode) -> list[GradClear]:
        """The model calls of the loop whose forward clears the model's own gradients
        first (`self.zero_grad()` in `forward`): asked only of a loop that would be
        reported, since it means resolving each call's class."""
        facts = self.facts
        return [
            GradClear(call, dotted_name(call.func))
            for call in facts.index.of_types_in(loop.body, cst.Call, into_functions=False)
            if facts.autograd.event(call) is None and facts.forwards.clears_own_grads(call)
        ]

    def _check_handoffs(self, loop: LoopNode, sites: _Sites) -> None:
        """A loop that hands one module's gradients to the parameters an optimizer steps
        (A3C's `shared_param._grad = local_param.grad`): every backward adds into the
        source module's `.grad`, so the source's gradients need a clear of their own."""
        facts = self.facts
        index = facts.index
        sharing = facts.grad_sharing
        scope = index.scope_of(loop)
        steps = [s.node for s in sites.steps if type(s.node) is cst.Call]
        fed = sharing.fed_optimizers(steps, sites.handoffs)
        backwards = sorted(
            (b for b in sites.backwards if index.scope_of(b) is scope),
            key=index.order.__getitem__,
        )
        bindings = facts.loops.flow_bindings(loop.body)
        for handoff in sites.handoffs:
            if not any(handoff.target in held for held in fed.values()):
                continue  # no step here reads what it hands on
            clears = [c for c in sites.clears if not sharing.is_handoff(c.node)]
            clears = [c for c in clears if all(c.node is not h.node for h in sites.handoffs)]
            backward = next(
                (
                    b
                    for b in backwards
                    if b not in self._reported_backwards
                    and (event := facts.autograd.event(b)) is not None
                    # where nothing is cleared at all, any backward of the loop sums
                    and (
                        not clears
                        or handoff.source in sharing.accumulated_modules(event, loop.body)
                    )
                ),
                None,
            )
            if backward is None:
                continue
            if any(
                sharing.clear_reaches(clear, handoff, sites.handoffs, fed)
                and not index.in_exclusive_branches(clear.node, backward)
                for clear in clears
            ):
                continue
            if self._created(handoff.source, backward, loop, bindings, 0):
                continue  # a fresh local model every iteration starts from `.grad` None
            self._reported_backwards.add(backward)
            self._report_handoff(backward, handoff, sites, loop, fed)

    def _covers(self, clear: GradClear, step: _Step, stepped: set[str]) -> bool:
        """May this clear run in the iteration that runs this step, and clear what the
        step applies? A clear of a model, of parameters or by a helper may clear any
        step's gradients (we cannot see whose); a clear of one of the stepped optimizers
        clears that optimizer's only. A clear in the other arm of an `if` never runs
        with the step (`if amp: scaler.step(opt) else: opt.zero_grad(); ...`)."""
        if clear.receiver is not None:
            if (
                clear.receiver in stepped
                and step.optimizer is not None
                and clear.receiver != step.optimizer
            ):
                return False
            if step.updated is not None and not self._may_hold(clear.receiver, step):
                return False
        return not self.facts.index.in_exclusive_branches(clear.node, step.node)

    def _may_hold(self, owner: str, step: _Step) -> bool:
        """Can `owner.zero_grad()` reach the tensor a manual update changes? Not when that
        tensor is made in this function (a torch factory, `.clone()`, `.detach()`: an
        adversarial perturbation, a fitted input) and nothing built from it, or holding
        it, is `owner`: `model.zero_grad()` never clears `delta.grad`."""
        name = step.updated
        if name is None or "." in name:
            return True
        scope = self.facts.index.scope_of(step.node)
        bindings = [b for b in self.facts.loops.scope_facts(scope).bindings if b.var == name]
        if not bindings or not all(
            b.kind == "assign" and self.facts.tensors.fresh_tensor(b.value) for b in bindings
        ):
            return True
        flow = self.facts.flow
        base = owner.split(".")[0]
        for binding in self.facts.loops.scope_facts(scope).bindings:
            if binding.var.split(".")[0] == base and name in flow.reads(
                binding.value, graph_only=False
            ):
                return True  # `opt = SGD([delta])`, `model = Fit(delta)`
            if "." in binding.var and type(binding.value) is cst.Name:
                if binding.value.value == name:
                    return True  # `self.delta = delta`: registered somewhere
        for node in self.facts.index.walk(scope):
            if type(node) is cst.Call and type(node.func) is cst.Attribute:
                if node.func.attr.value in PARAMETER_REGISTERING_METHODS:
                    return True
        return False

    def _report(self, step: _Step, sites: _Sites, loop: LoopNode) -> None:
        statement = self.facts.index.statement_of(step.node)
        if step.optimizer:
            advice = f"Call `{step.optimizer}.zero_grad()` every iteration, before the backward"
        elif step.updated:
            advice = f"Clear `{step.updated}.grad` every iteration (`{step.updated}.grad = None` after the update)"
        else:
            advice = "Call the optimizer's `zero_grad()` every iteration, before the backward"
        backwards = sorted(
            (b for b in sites.backwards if self.facts.index.is_inside(b, loop.body)),
            key=self.facts.index.order.__getitem__,
        )
        related: list[tuple[cst.CSTNode, str] | Related] = [
            loop_header(self.context, loop, "this loop never clears the gradients"),
        ]
        related += [(b, "adds to `.grad` here, every iteration") for b in backwards[:1]]
        self.report(
            statement,
            self.message.format(step=_short(statement), advice=advice),
            fix=self._fix(step, sites, loop),
            related=related,
        )

    def _report_handoff(
        self,
        backward: cst.Call,
        handoff: GradHandoff,
        sites: _Sites,
        loop: LoopNode,
        fed: dict[str, set[str]],
    ) -> None:
        index = self.facts.index
        statement = index.statement_of(backward)
        # The clear of the optimizer that steps the handed-on gradients, if any: the one
        # the author took for the clear of these gradients.
        clears = [
            c
            for c in sites.clears
            if c.receiver is not None and handoff.target in fed.get(c.receiver, ())
        ]
        if clears:
            cleared = (
                f", whose `{clears[0].receiver}.zero_grad()` only sets their `.grad` to None"
                f" (the default since torch 2.0) and leaves the tensor `{handoff.source}`"
                " adds into"
            )
        else:
            cleared = " and nothing here clears them"
        related: list[tuple[cst.CSTNode, str] | Related] = [
            loop_header(self.context, loop, "this loop never clears the source's gradients"),
            (
                index.statement_of(handoff.node),
                f"hands `{handoff.source}`'s gradients to `{handoff.target}`'s parameters",
            ),
        ]
        related += [(c.node, "sets the stepped parameters' `.grad` to None") for c in clears[:1]]
        self.report(
            statement,
            self.handoff_message.format(
                backward=_short(statement),
                source=handoff.source,
                target=handoff.target,
                cleared=cleared,
            ),
            fix=self._handoff_fix(backward, handoff.source, loop),
            related=related,
        )

    def _handoff_fix(self, backward: cst.Call, source: str, loop: LoopNode) -> Fix | None:
        """Insert `source.zero_grad()` before the backward: the local gradients start
        from None again, and the handoff then hands the new tensors on."""
        anchor = self._anchor(backward, loop)
        if anchor is None or not self._defined_at(source, anchor, loop):
            return None
        return self._insertion(anchor, f"{source}.zero_grad()", source)

    # -- parameters made anew each iteration ------------------------------------------

    def _created_each_iteration(self, step: _Step, loop: LoopNode) -> bool:
        """Are the stepped parameters new in every iteration (a fresh model, a fresh
        leaf)? Then each starts with `.grad` None and nothing accumulates. A fresh
        optimizer over the old parameters is not enough."""
        bindings = self.facts.loops.flow_bindings(loop.body)
        if step.updated is not None:
            return self._created(step.updated, step.node, loop, bindings, 0)
        if step.optimizer is None:
            return False
        binding = self._last_binding(step.optimizer, step.node, bindings)
        if binding is None:
            return False
        value = binding.value
        if binding.kind == "for":
            return self._all_created(value, binding.statement, loop, bindings, 0)
        if type(value) is cst.Call:
            if not self._is_optimizer_class(value.func):
                return True  # `model, opt = build(cfg)`: a factory we cannot see into
            params = next((a for a in value.args if a.keyword is None), None)
            for arg in value.args:
                if arg.keyword is not None and arg.keyword.value == "params":
                    params = arg
            if params is None:
                return False
            return self._all_created(params.value, binding.statement, loop, bindings, 0)
        return self._all_created(value, binding.statement, loop, bindings, 0)

    def _is_optimizer_class(self, func: cst.BaseExpression) -> bool:
        qualified = self.facts.qualified_name(func) or ""
        last = qualified.rsplit(".", 1)[-1]
        return (qualified.startswith("torch.optim.") and last[:1].isupper()) or (
            last in OPTIMIZER_CLASSES
        )

    def _last_binding(
        self, name: str, before: cst.CSTNode, bindings: list[Binding]
    ) -> Binding | None:
        order = self.facts.index.order
        found = None
        for binding in bindings:
            if binding.var == name and order[binding.statement] < order[before]:
                found = binding
        return found

    def _all_created(
        self,
        expr: cst.CSTNode | None,
        before: cst.CSTNode,
        loop: LoopNode,
        bindings: list[Binding],
        depth: int,
    ) -> bool:
        """Is every variable `expr` is built from (a model, a parameter list) created
        in the loop before `before`? Builtins and imports do not count; an expression
        that names no variable at all builds its tensors right there."""
        if expr is None:
            return False
        aliases = self.facts.index.aliases
        roots = {
            name.split(".")[0]
            for name in self.facts.flow.reads(expr, graph_only=False)
            if name.split(".")[0] not in aliases and name.split(".")[0] != "torch"
        }
        known = {root for root in roots if self._bound_somewhere(root, loop)}
        return all(self._created(root, before, loop, bindings, depth + 1) for root in known)

    def _bound_somewhere(self, name: str, loop: LoopNode) -> bool:
        index = self.facts.index
        scope = index.scope_of(loop)
        if name in ("self", "cls"):
            return True
        for region in (scope, index.module):
            facts = self.facts.loops.scope_facts(region)
            if any(b.var == name for b in facts.bindings):
                return True
            if type(region) is cst.FunctionDef:
                params = region.params
                every = (*params.posonly_params, *params.params, *params.kwonly_params)
                if any(p.name.value == name for p in every):
                    return True
        return False

    def _created(
        self,
        name: str,
        before: cst.CSTNode,
        loop: LoopNode,
        bindings: list[Binding],
        depth: int,
    ) -> bool:
        """Is `name` (or the object it is an attribute of) made anew in this loop's
        iteration before `before`: constructed, or the loop's own target?"""
        if depth > 4:
            return False
        if type(loop) is cst.For and name.split(".")[0] in bound_names(loop):
            return True  # `for model in models:` a different object every iteration
        parts = name.split(".")
        for end in range(len(parts), 0, -1):
            prefix = ".".join(parts[:end])
            binding = self._last_binding(prefix, before, bindings)
            if binding is None:
                continue
            value = binding.value
            if binding.kind == "for":
                return self._all_created(value, binding.statement, loop, bindings, depth)
            if binding.kind not in ("assign",):
                return False
            if type(value) is cst.Call:
                func = value.func
                if type(func) is cst.Attribute and func.attr.value in SELF_RETURNING_MODULE_METHODS:
                    receiver = dotted_name(func.value)
                    if receiver is None:
                        return True
                    return self._created(receiver, binding.statement, loop, bindings, depth + 1)
                return (
                    True  # `Net()`, `copy.deepcopy(base)`, `torch.zeros(..., requires_grad=True)`
                )
            return self._all_created(value, binding.statement, loop, bindings, depth)
        return False

    # -- the fix ------------------------------------------------------------------------

    def _fix(self, step: _Step, sites: _Sites, loop: LoopNode) -> Fix | None:
        """Insert `opt.zero_grad()` before the first backward that feeds this step."""
        name = step.optimizer
        if name is None:
            return None
        index = self.facts.index
        scope = index.scope_of(step.node)
        # The step's own region: the loop, or the helper of this file that holds the step
        # (its body runs once per iteration, and the optimizer is its name there).
        region: LoopNode | cst.FunctionDef = loop
        if index.scope_of(loop) is not scope:
            if type(scope) is not cst.FunctionDef:
                return None
            region = scope
        backward = self._feeding_backward(step, sites, region, scope)
        if backward is None:
            return None
        anchor = self._anchor(backward, region)
        if anchor is None:
            return None
        if self._conditional_step(step.node, anchor, region):
            # `if (i + 1) % k == 0: opt.step()` accumulates on purpose, `if finite:
            # opt.step()` skips a bad batch: which one is meant is not ours to guess,
            # and clearing before every backward would undo an accumulation.
            return None
        if not self._defined_at(name, anchor, region):
            return None
        return self._insertion(anchor, f"{name}.zero_grad()", name)

    def _insertion(self, anchor: cst.CSTNode, code: str, name: str) -> Fix:
        """Insert the statement `code` on a line of its own before `anchor`."""
        start, _ = self.context.position_of(anchor)
        lines = split_lines(self.context.source)
        text = lines[start.line - 1]
        indent = text[: len(text) - len(text.lstrip(" \t"))]
        newline = "\r\n" if text.endswith("\r\n") else "\r" if text.endswith("\r") else "\n"
        return Fix(
            self._fix_title_for.format(optimizer=name),
            (Edit(Position(start.line, 0), Position(start.line, 0), f"{indent}{code}{newline}"),),
            Applicability.UNSAFE,
        )

    def _conditional_step(self, step: cst.CSTNode, anchor: cst.CSTNode, region: _Region) -> bool:
        """Is the step under an `if` (inside the region) that does not hold the backward?"""
        index = self.facts.index
        for anc in index.ancestors(step):
            if anc is region:
                return False
            if type(anc) is cst.If and not index.is_inside(anchor, anc):
                return True
        return False

    def _defined_at(self, name: str, anchor: cst.CSTNode, loop: _Region) -> bool:
        """Does the optimizer's name hold the stepped optimizer where the clear goes: bound
        outside the loop, or rebound in it (a new optimizer each iteration) before the
        insertion point on every path?"""
        base = name.split(".")[0]
        if base in ("self", "cls"):
            return True
        if type(loop) is cst.For and base in bound_names(loop):
            return False
        index = self.facts.index
        inside = [
            b for b in self.facts.loops.flow_bindings(loop.body) if b.var.split(".")[0] == base
        ]
        if not inside:
            return True
        before = [b for b in inside if index.order[b.statement] < index.order[anchor]]
        if len(before) != len(inside) or not before:
            return False  # rebound after the insertion point, or only on some paths
        return index.dominates(before[-1].statement, anchor) and before[-1].kind == "assign"

    def _feeding_backward(
        self, step: _Step, sites: _Sites, loop: _Region, scope: cst.CSTNode
    ) -> cst.Call | None:
        """The first backward after the previous step of the loop (any optimizer's), or
        when the step comes first, the first one after the loop's last step: together
        they make the gradient this step applies."""
        index = self.facts.index
        order = index.order

        def here(node: cst.CSTNode) -> bool:
            return index.is_inside(node, loop.body) and index.scope_of(node) is scope

        backwards = sorted((b for b in sites.backwards if here(b)), key=order.__getitem__)
        steps = sorted((s.node for s in sites.steps if here(s.node)), key=order.__getitem__)
        at = order[step.node]
        previous = [order[s] for s in steps if order[s] < at]
        if previous:
            window = [b for b in backwards if previous[-1] < order[b] < at]
        else:
            window = [b for b in backwards if order[b] < at]
        if not window:
            last = order[steps[-1]] if steps else at
            window = [b for b in backwards if order[b] > last]
        return window[0] if window else None

    def _anchor(self, backward: cst.Call, loop: _Region) -> cst.CSTNode | None:
        """The line to insert before: the backward's own line, or the outermost loop
        inside the region around it (a backward per micro-batch sums into one step)."""
        index = self.facts.index
        statement: cst.CSTNode = index.statement_of(backward)
        for inner in index.enclosing_loops(statement):
            if inner is loop:
                break
            statement = inner
        if isinstance(statement, cst.BaseSmallStatement):
            return own_line(self.context, statement)
        if isinstance(index.parent.get(statement), cst.IndentedBlock):
            return statement
        return None


def _short(node: cst.CSTNode) -> str:
    text = render(node).strip()
    return text if len(text) <= 40 else text[:37] + "..."
