"""What a region of code (a loop's body, a function's) does to `.grad` on one pass, and
whether each of those things runs on every pass: the facts gradient accumulation rests on.

`backward()` adds into `.grad`; a step applies what is there; a clear starts the next sum
from zero (analysis.grad_clears says which nodes are clears). Accumulating over `k`
micro-batches means: backward on every pass, step and clear together on one pass in `k`.
So what matters about each site is not only where it is but whether a pass can skip it
(an `if`, a `continue` before it, a nested loop that may run zero times) and, for a step
that is skipped, whether the test that skips it counts micro-batches.

A site inside a helper of this file the region calls is reported at the call (its
*anchor*), with whether it runs on every call of the helper. Helpers are followed
through FunctionSummaries.resolve, as GL007 does, a few calls deep.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.autograd_calls import AutogradCalls
from gradlint.analysis.bindings import PYTHON_BINDINGS, BindingKind, ScopeBindings
from gradlint.analysis.grad_clears import GradClearing
from gradlint.analysis.index import FileIndex, dotted_name
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.torch_api import (
    ACCUMULATING_CONTEXTS,
    ACCUMULATION_WORDS,
    GRAD_ATTRIBUTE,
)

# Helpers are followed this deep (a loop calling `self.train_step()` that calls
# `self._backward()`), as GL007 follows them.
_HELPER_DEPTH = 3


@dataclass(frozen=True)
class GradSite:
    # "backward" (adds into `.grad`), "step" (an optimizer step), "clear", or "read"
    # (`.grad` read or applied by hand: the micro-batch's gradient is used on its own)
    kind: str
    # The node in the region's own scope: the site, or the call of the helper holding it.
    anchor: cst.CSTNode
    node: cst.CSTNode
    # Inside a helper: runs on every call of it (always True for a site in the region).
    always: bool = True
    # A step's optimizer (`opt` of `opt.step()`, of `scaler.step(opt)`); a clear's
    # receiver (`model` of `model.zero_grad()`; None for `p.grad = None`).
    owner: str | None = None
    # A step handed a closure (LBFGS): it re-evaluates, and clears, by itself.
    closure: bool = False


class GradAccumulation:
    def __init__(
        self,
        index: FileIndex,
        autograd: AutogradCalls,
        clearing: GradClearing,
        summaries: FunctionSummaries,
    ) -> None:
        self.index = index
        self.autograd = autograd
        self.clearing = clearing
        self.summaries = summaries
        self._sites: dict[cst.CSTNode, list[GradSite]] = {}
        self._jumps: dict[cst.CSTNode, list[cst.CSTNode]] = {}
        self._helpers: dict[cst.FunctionDef, list[GradSite]] = {}

    # -- the sites ------------------------------------------------------------------------

    def sites(self, region: cst.CSTNode) -> list[GradSite]:
        """Every backward, step, clear and `.grad` read of one pass through `region`
        (nested functions excluded), in source order, helpers of this file included."""
        found = self._sites.get(region)
        if found is None:
            found = self._collect(region, frozenset(), 0)
            self._sites[region] = found
        return found

    def _collect(self, region: cst.CSTNode, seen: frozenset, depth: int) -> list[GradSite]:
        index = self.index
        out: list[GradSite] = []
        clears: list[cst.CSTNode] = []
        for node in index.walk(region):
            kind = type(node)
            clear = self.clearing.clear_at(node)
            if clear is not None:
                clears.append(clear.node)
                out.append(GradSite("clear", node, node, owner=clear.receiver))
                continue
            if self.clearing.update_at(node) is not None:
                out.append(GradSite("read", node, node))
                continue
            if kind is cst.Attribute and node.attr.value == GRAD_ATTRIBUTE:
                if not any(index.is_inside(node, c) for c in clears) and self._reads(node):
                    out.append(GradSite("read", node, node))
                continue
            if kind is cst.For and self._clears_only(node):
                # `for p in model.parameters(): p.grad = None` clears the model once
                out.append(GradSite("clear", node, node))
                continue
            if kind is not cst.Call:
                continue
            event = self.autograd.event(node)
            if event is not None:
                if event.kind == "backward":
                    out.append(GradSite("backward", node, node))
                elif event.kind == "step" and not event.keeps_graph:
                    optimizer, closure = self.autograd.step_parts(node)
                    name = dotted_name(optimizer)
                    out.append(GradSite("step", node, node, owner=name, closure=bool(closure)))
                continue
            callee = self.summaries.resolve(node)
            if callee is None or callee in seen or depth >= _HELPER_DEPTH:
                continue
            for site in self._helper(callee, seen, depth):
                out.append(
                    GradSite(site.kind, node, site.node, site.always, site.owner, site.closure)
                )
        return out

    def _helper(self, callee: cst.FunctionDef, seen: frozenset, depth: int) -> list[GradSite]:
        """What one call of a helper does, each site marked with whether it runs on every
        call; computed once per helper."""
        found = self._helpers.get(callee)
        if found is None:
            found = [
                GradSite(
                    site.kind,
                    site.anchor,
                    site.node,
                    site.always and self.runs_every_pass(site.anchor, callee.body),
                    site.owner,
                    site.closure,
                )
                for site in self._collect(callee.body, seen | {callee}, depth + 1)
            ]
            self._helpers[callee] = found
        return found

    def _clears_only(self, loop: cst.For) -> bool:
        """Does every simple statement of this loop clear a gradient (a guard such as
        `if p.grad is not None:` around them allowed)?"""
        found = False
        for node in self.index.walk(loop.body):
            if type(node) is cst.SimpleStatementLine:
                for small in node.body:
                    if type(small) is cst.Continue or type(small) is cst.Pass:
                        continue
                    if not any(self.clearing.clear_at(n) for n in self.index.walk(small)):
                        return False
                    found = True
            elif type(node) in (cst.For, cst.While, cst.Try, cst.With, cst.FunctionDef):
                return False
        return found

    def _reads(self, grad: cst.Attribute) -> bool:
        """Does this `.grad` read a gradient's values? Not `torch.autograd.grad(...)` (a
        function, which returns gradients and leaves `.grad` alone), nor `p.grad is not
        None` (a guard)."""
        parent = self.index.parent.get(grad)
        if type(parent) is cst.Call and parent.func is grad:
            return False
        if type(parent) is cst.ComparisonTarget:
            parent = self.index.parent.get(parent)
        if type(parent) is not cst.Comparison:
            return True
        return not all(isinstance(t.operator, (cst.Is, cst.IsNot)) for t in parent.comparisons)

    # -- on every pass? -----------------------------------------------------------------

    def runs_every_pass(self, node: cst.CSTNode, region: cst.CSTNode) -> bool:
        """Does `node` run on every pass through `region` (a loop's or function's body)?
        Not under an `if` arm, a nested loop (which may run zero times), an `except` or
        `else` of a `try`, a conditional expression, nor after a `continue`, `break` or
        `return` of this pass."""
        child = node
        for anc in self.index.ancestors(node):
            if anc is region:
                break
            kind = type(anc)
            if kind is cst.If and child is not anc.test:
                return False
            if kind is cst.For or kind is cst.While:
                if child is anc.body or child is anc.orelse:
                    return False
            if kind is cst.Try and child is not anc.body and child is not anc.finalbody:
                return False
            if kind is cst.IfExp or kind is cst.BooleanOperation:
                return False
            child = anc
        return not self.jumps_before(node, region)

    def jumps_before(self, node: cst.CSTNode, region: cst.CSTNode) -> list[cst.CSTNode]:
        """The `continue`/`break` of the region's own loop and the `return`s that come
        before `node` in the region: each may end the pass before `node` runs."""
        jumps = self._jumps.get(region)
        if jumps is None:
            jumps = self._jumps[region] = self._find_jumps(region)
        at = self.index.order[node]
        return [j for j in jumps if self.index.order[j] < at]

    def _find_jumps(self, region: cst.CSTNode) -> list[cst.CSTNode]:
        index = self.index
        found: list[cst.CSTNode] = []
        for node in index.walk(region):
            if type(node) is cst.Return:
                found.append(node)
            elif type(node) in (cst.Continue, cst.Break):
                # one of a loop nested in the region ends that loop's pass, not ours
                inner = next(index.enclosing_loops(node), None)
                if inner is None or not index.is_inside(inner, region):
                    found.append(node)
        return found

    def guards(self, node: cst.CSTNode, region: cst.CSTNode) -> list[cst.If]:
        """The `if`s of the region that decide whether `node` runs on a pass: those whose
        arm holds it, and those whose arm holds a jump before it."""
        found = []
        for anc in self.index.ancestors(node):
            if anc is region:
                break
            if type(anc) is cst.If and not self.index.is_inside(node, anc.test):
                found.append(anc)
        for jump in self.jumps_before(node, region):
            for anc in self.index.ancestors(jump):
                if anc is region:
                    break
                if type(anc) is cst.If:
                    found.append(anc)
        return found

    # -- what the tests and contexts say ------------------------------------------------

    def counts_micro_batches(self, test: cst.BaseExpression) -> bool:
        """Does an `if` test wait for a window of passes: a modulo (`(i + 1) % k == 0`,
        `step % args.update_freq`), or a name that says so (`accumulation_steps`,
        `self.accum_done`)?"""
        for node in self.index.walk(test):
            if type(node) is cst.BinaryOperation and type(node.operator) is cst.Modulo:
                return True
            if type(node) is cst.Name:
                lowered = node.value.lower()
                if any(word in lowered for word in ACCUMULATION_WORDS):
                    return True
        return False

    def framework_accumulates(self, node: cst.CSTNode) -> bool:
        """Is `node` inside `with accelerator.accumulate(model):`, where the prepared
        optimizer's `step()` and `zero_grad()` act only on the pass that ends a window?"""
        for anc in self.index.ancestors(node):
            if type(anc) is cst.With:
                for item in anc.items:
                    call = item.item
                    if (
                        type(call) is cst.Call
                        and type(call.func) is cst.Attribute
                        and call.func.attr.value in ACCUMULATING_CONTEXTS
                    ):
                        return True
        return False


def runs_once(loop: cst.CSTNode, bindings: ScopeBindings) -> bool:
    """A `for` loop over `range(1)`, or over `range(N)` with N a module-level constant
    bound once to 1 and not rebound where the loop is: its body runs one time."""
    iterable = loop.iter if type(loop) is cst.For else None
    if (
        type(iterable) is not cst.Call
        or dotted_name(iterable.func) != "range"
        or len(iterable.args) != 1
    ):
        return False
    count: cst.CSTNode | None = iterable.args[0].value
    if type(count) is cst.Name:
        index = bindings.index
        scope = index.scope_of(loop)
        if scope is not index.module and count.value in bindings.records(scope, PYTHON_BINDINGS):
            return False
        found = bindings.records(index.module, PYTHON_BINDINGS).get(count.value, [])
        if len(found) != 1 or found[0].kind is not BindingKind.ASSIGN:
            return False
        count = found[0].value
    return type(count) is cst.Integer and count.evaluated_value == 1
