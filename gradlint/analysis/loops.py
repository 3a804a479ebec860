"""Loop-carried variables: what one iteration reads that the previous one wrote.

A variable is *carried* by a loop when the body reads it before it is definitely assigned
in that iteration, and assigns it somewhere in the body. Definite assignment follows
Python's control flow: both branches of an `if`, not the body of a nested loop, and a
branch that ends in `continue`/`break`/`return`/`raise` does not constrain what follows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import libcst as cst

from gradlint.analysis.autograd_calls import AutogradCalls, DiffEvent
from gradlint.analysis.bindings import BindingKind, ScopeBindings, all_params
from gradlint.analysis.dataflow import Binding, DataFlow
from gradlint.analysis.index import (
    COMPREHENSIONS,
    FileIndex,
    dotted_name,
    loop_element_sources,
    target_names,
)
from gradlint.analysis.project import ExternalFunction
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.summary_facts import NO_VALUE, ReturnedNames, backpropagated_places

LoopNode = cst.For | cst.While
# The region the facts describe: a `for`/`while` loop, or a whole scope (scope_facts).
RegionT = TypeVar("RegionT", bound=cst.CSTNode)


@dataclass
class LoopFacts(Generic[RegionT]):
    loop: RegionT
    carried: set[str] = field(default_factory=set)
    bindings: list[Binding] = field(default_factory=list)
    events: list[DiffEvent] = field(default_factory=list)

    def bindings_of(self, var: str) -> list[Binding]:
        return [b for b in self.bindings if b.var == var]

    @property
    def differentiates(self) -> bool:
        return bool(self.events)

    @property
    def unrolled(self) -> bool:
        """Every differentiation here keeps its graph (`create_graph=True`, a
        differentiable optimizer step): the loop unrolls a computation that is
        differentiated as a whole later (MAML's inner loop, a Jacobian trace), so
        carrying and keeping history is the algorithm."""
        return bool(self.events) and all(event.keeps_graph for event in self.events)

    def differentiated_with_respect_to(self, var: str) -> bool:
        """Is some `autograd.grad` here taken with respect to `var`, or to what `var` is
        built from (functional fast weights)?"""
        wrt: set[str] = set()
        for event in self.events:
            wrt |= event.wrt
        if not wrt:
            return False
        return var in wrt or var in self.closure(wrt)

    @property
    def roots(self) -> set[str]:
        out: set[str] = set()
        for event in self.events:
            out |= event.roots
        return out

    def closure(self, variables: set[str], keep=None) -> set[str]:
        """Every variable the given ones are computed from inside this region; `keep`
        (a predicate on bindings) limits which bindings are followed."""
        seen = set(variables)
        frontier = list(variables)
        by_var: dict[str, list[Binding]] = {}
        for binding in self.bindings:
            if keep is None or keep(binding):
                by_var.setdefault(binding.var, []).append(binding)
        while frontier:
            var = frontier.pop()
            for binding in by_var.get(var, ()):
                for dep in binding.deps:
                    if dep not in seen:
                        seen.add(dep)
                        frontier.append(dep)
            # `out.loss` of `out = model(x)` holds what that binding computed: an
            # attribute is computed from the nearest object it belongs to that is bound
            # here (a root names only its operand, DataFlow.operands).
            head = var
            while "." in head:
                head = head.rsplit(".", 1)[0]
                if head in by_var:
                    if head not in seen:
                        seen.add(head)
                        frontier.append(head)
                    break
        return seen


K = BindingKind
# The bindings a loop's flow follows, and the kind its Binding records them as.
_FLOW_KINDS = {
    K.ASSIGN: "assign",
    K.UNPACKED: "assign",
    K.ANNOTATED: "assign",
    K.WALRUS: "assign",
    K.AUGMENTED: "augassign",
    K.FOR: "for",
    K.STORE: "store",
    K.WITH: "with",
}


class _Terminated:
    """Definite-assignment state after a statement that never falls through."""


TERMINATED = _Terminated()


class LoopAnalysis:
    def __init__(
        self,
        index: FileIndex,
        flow: DataFlow,
        autograd: AutogradCalls,
        summaries: FunctionSummaries | None = None,
        *,
        bindings: ScopeBindings,
        flag_runs: Callable[[cst.FunctionDef], Callable[[cst.CSTNode, cst.Call], bool] | None]
        | None = None,
    ) -> None:
        self.index = index
        self.bindings = bindings
        self.flow = flow
        self.autograd = autograd
        self.summaries = summaries
        # for a function that tests a flag it is handed: may a statement of it run in
        # one call of it, given the flags the call passes (analysis.path_conditions)?
        # Asked lazily: those read the grad mode
        self._flag_runs = flag_runs
        self._backpropagates: dict[int, bool] = {}  # by id: LibCST hashes in Python
        self._asking_helpers: set[cst.FunctionDef] = set()
        self._backward_params: dict[tuple[cst.FunctionDef, bool], list[str]] = {}
        self._backpropagating: list[cst.Call] | None = None
        self._backpropagating_ids: set[int] = set()
        self._backpropagating_names: set[str] = set()
        self._imported: list[tuple[cst.Call, ExternalFunction]] | None = None
        self._returned_places: dict[cst.FunctionDef, tuple[int, list[int]]] = {}
        self._cache: dict[cst.CSTNode, LoopFacts[LoopNode]] = {}
        self._scope_cache: dict[cst.CSTNode, LoopFacts[cst.CSTNode]] = {}
        self._state_cache: dict[cst.CSTNode, LoopFacts[LoopNode]] = {}
        # what each bound value reads (graph-aware) and whether computing it may build graph
        self._value_reads: dict[cst.CSTNode, tuple[set[str], bool]] = {}

    def facts(self, loop: LoopNode) -> LoopFacts[LoopNode]:
        cached = self._cache.get(loop)
        if cached is None:
            cached = self._compute(loop)
            self._cache[loop] = cached
        return cached

    def entries(self, loop: cst.CSTNode, names: list[str]):
        """(statement, label) for where each carried name last enters the loop: the
        related place GL001 and GL015 both show."""
        index = self.index
        scope_bindings = self.scope_facts(index.scope_of(loop)).bindings
        start = index.order[loop]
        for name in names:
            before = [
                b for b in scope_bindings if b.var == name and index.order[b.statement] < start
            ]
            if before:
                yield before[-1].statement, f"`{name}` enters the loop from here"

    def scope_facts(self, scope: cst.CSTNode) -> LoopFacts[cst.CSTNode]:
        """Bindings and differentiation events of a whole function (or module) body,
        for rules that follow values through a scope rather than around a loop."""
        cached = self._scope_cache.get(scope)
        if cached is None:
            body = scope.body if isinstance(scope, (cst.FunctionDef, cst.Lambda)) else scope
            cached = LoopFacts(scope)
            cached.bindings = self.flow_bindings(body)
            cached.events = self.autograd.events_in(body)
            self._scope_cache[scope] = cached
        return cached

    def differentiated_around(self, node: cst.CSTNode) -> bool:
        """Is something differentiated around `node` (a call of a helper): after it in
        its scope (a backward, `autograd.grad`, an optimizer step) or in a loop around
        it? What the helper hands back may then be walked by that differentiation: a
        model's unrolled computation, a meta-learner's adapted weights."""
        index = self.index
        start = index.order.get(node, -1)
        # a differentiation that ran before the call, outside any loop around it (a
        # training loop above an epoch's sampling), cannot walk what the call returns
        if any(
            index.order.get(event.call, start) >= start
            for event in self.scope_facts(index.scope_of(node)).events
        ):
            return True
        return any(self.facts(outer).differentiates for outer in index.enclosing_loops(node))

    def differentiating_loops(self) -> list[LoopFacts[LoopNode]]:
        """Facts of every `for`/`while` loop in the file whose body differentiates
        (backward, autograd.grad or an optimizer step), in source order."""
        found = []
        for node in self.index.loops:
            facts = self.facts(node)
            if facts.differentiates:
                found.append(facts)
        return found

    def state_facts(self, loop: LoopNode) -> LoopFacts[LoopNode]:
        """The loop's facts with its bindings and carried variables filled in even when
        it does not differentiate (`facts` leaves them empty then): for rules about what
        a loop without backward carries from one iteration to the next."""
        facts = self.facts(loop)
        if facts.differentiates:
            return facts
        cached = self._state_cache.get(loop)
        if cached is None:
            cached = LoopFacts(loop)
            self._carry(cached, loop)
            self._state_cache[loop] = cached
        return cached

    def _compute(self, loop: LoopNode) -> LoopFacts[LoopNode]:
        facts = LoopFacts(loop)
        facts.events = self.autograd.events_in(loop.body) + self.helper_backwards(loop.body)
        if not facts.events:
            return facts  # nothing rules ask about a loop that does not differentiate
        self._carry(facts, loop)
        return facts

    def _carry(self, facts: LoopFacts[LoopNode], loop: LoopNode) -> None:
        """Fill in the loop's bindings and what it carries across iterations."""
        facts.bindings = self.flow_bindings(loop.body)
        exposed: set[str] = set()
        start = set(target_names(loop.target)) if type(loop) is cst.For else set()
        if type(loop) is cst.While:
            exposed |= self.flow.reads(loop.test, graph_only=False)
        self._block(loop.body, start, exposed)
        assigned = {b.var for b in facts.bindings if b.kind in ("assign", "augassign")}
        facts.carried = exposed & assigned

    # -- differentiation inside helpers ------------------------------------------------

    def helper_backwards(self, region: cst.CSTNode) -> list[DiffEvent]:
        """Calls of this file's functions and methods (`self.update(loss)`,
        `model.train_step(x, h)`) whose body backpropagates a value computed from one of
        the arguments: a backward at the call site, of what those arguments read."""
        if self.summaries is None:
            return []
        found: list[DiffEvent] = []
        for node in self._calls_of_backpropagating_names():
            if not self.index.is_inside(node, region) or not self._backpropagates_at(node):
                continue
            roots: set[str] = set()
            for argument in self.backpropagated_arguments(node):
                roots |= self.flow.operands(argument)
            helper = self.summaries.function_run_by(node)
            if helper is not None:
                roots |= self._kept_results(node, *self._backpropagated_returns(helper))
            if roots:
                found.append(DiffEvent(node, "backward", roots, None))
        for node, external in self._imported_steps():
            if not self.index.is_inside(node, region):
                continue
            roots = set()
            for param in external.backpropagated_params:
                passed = self.summaries.external_argument(node, external, param)
                if passed is not None:
                    roots |= self.flow.operands(passed)
            roots |= self._kept_results(
                node, external.backpropagated_return_size, external.backpropagated_returns
            )
            if roots:
                found.append(DiffEvent(node, "backward", roots, None))
        return found

    def _backpropagates_at(self, call: cst.Call) -> bool:
        """May the helper `call` runs differentiate in this call? Not when every
        differentiation in its body sits on a branch the call's flags rule out
        (`self.sample_goals(strategy="future")`, whose backward runs only for
        `strategy == "self_attention"`)."""
        if self._flag_runs is None or self.summaries is None:
            return True
        found = self._backpropagates.get(id(call))
        if found is not None:
            return found
        helper = self.summaries.function_run_by(call)
        if helper is None or helper in self._asking_helpers:
            return True  # a helper that calls itself: as without flags
        runs_at = self._flag_runs(helper)
        if runs_at is None:
            self._backpropagates[id(call)] = True
            return True  # it tests no flag: whatever it differentiates runs
        self._asking_helpers.add(helper)
        try:
            places = [event.call for event in self.scope_facts(helper).events]
            places += [event.call for event in self.helper_backwards(helper.body)]
        finally:
            self._asking_helpers.discard(helper)
        found = not places or any(runs_at(place, call) for place in places)
        self._backpropagates[id(call)] = found
        return found

    def _imported_steps(self) -> list[tuple[cst.Call, ExternalFunction]]:
        """The calls in this file of another file's function or method (`agent.update(s,
        t)`, `agent` an instance of a class imported from the project) that
        backpropagates an argument or hands back what it backpropagated: a training
        step kept in another file, which the caller's loop trains through."""
        if self._imported is None:
            self._imported = []
            summaries = self.summaries
            project = summaries.project if summaries is not None else None
            if summaries is None or project is None or not project.enabled:
                return self._imported
            # the names this file imports from project modules whose text calls a
            # backward: only their functions, or methods of their classes, can be steps
            stepping_modules: set[tuple[str, int]] = set()
            stepping: set[str] = set()
            for local, (module, level, _name) in self.index.imported_from.items():
                if project.module_text_has(module, level, (".backward(",)):
                    stepping_modules.add((module, level))
                    stepping.add(local)
            # `from helpers import *`: any name this file leaves unbound may be a step
            stepping_stars = [
                (module, level)
                for module, level in self.index.star_imports
                if project.module_text_has(module, level, (".backward(",))
            ]
            stepping_modules.update(stepping_stars)
            for call in self.index.calls:
                if not self.index.enclosing_loops(call):
                    continue  # a step trains the loop it is called in
                head = (dotted_name(call.func) or "").partition(".")[0]
                external = None
                if stepping_modules and (
                    head in stepping
                    or (
                        stepping_stars
                        and type(call.func) is cst.Name
                        and head not in self.index.imported_from
                    )
                ):
                    external = summaries.resolve_external(call)
                elif type(call.func) is cst.Attribute and head not in self.index.imported_from:
                    if stepping_modules:
                        found = summaries.imported_method_of_instance(call, stepping_modules)
                        external = found[1] if found is not None else None
                    if external is None:
                        external = self._handed_in_step(call)
                if external is not None and (
                    external.backpropagated_params or external.backpropagated_returns
                ):
                    self._imported.append((call, external))
        return self._imported

    def _handed_in_step(self, call: cst.Call) -> ExternalFunction | None:
        """`agent.fit_batch()` on an agent the trainer is handed (a parameter, or
        `self.agent = agent` in its `__init__`), whose class it cannot tell: one of the
        methods the call may run, when every one of them backpropagates the same
        parameters and the same places of what it returns."""
        if self.summaries is None:
            return None
        if not call.args and type(self.index.parent.get(call)) is not cst.Assign:
            return None  # hands it nothing and keeps nothing it returns: no root either way
        definitions = self.summaries.methods_of_handed_in(call, _one_step)
        return definitions[0] if definitions else None

    def _backpropagated_returns(self, helper: cst.FunctionDef) -> tuple[int, list[int]]:
        """summary_facts.backpropagated_places of this file's function: which places of
        what it returns hold a value its own body backpropagates."""
        found = self._returned_places.get(helper)
        if found is None:
            self._returned_places[helper] = (0, [])  # a helper that calls itself
            differentiated: set[str] = set()
            for event in self.scope_facts(helper).events:
                if event.kind == "backward" and type(event.root_expr) is cst.Name:
                    differentiated.add(event.root_expr.value)
            returns = [
                _returned_names(r.value)
                for r in self.index.of_types_in(helper.body, cst.Return)
                if self.index.scope_of(r) is helper
            ]
            found = self._returned_places[helper] = backpropagated_places(returns, differentiated)
        return found

    def _kept_results(self, call: cst.Call, size: int, places: list[int]) -> set[str]:
        """The names the call's result is bound to at those places of what it returns
        (`loss = agent.update(s, t)`, `loss, td = ...`), or, used where it is made
        (`total += agent.update(s, t)`), what the call reads: what then carries the
        graph the call backpropagated."""
        if not places:
            return set()
        if size:
            unpacked = self.index.unpacked_into(call)
            if unpacked is None or len(unpacked) != size:
                return set()
            return {n.value for n in (unpacked[i] for i in places) if type(n) is cst.Name}
        parent = self.index.parent.get(call)
        if type(parent) is cst.Assign:
            # `loss = train_loss = train()`: every name the statement binds holds it
            return {t.target.value for t in parent.targets if type(t.target) is cst.Name}
        return self.flow.operands(call)

    def backpropagated_arguments(
        self, call: cst.Call, *, freeing: bool = True
    ) -> list[cst.BaseExpression]:
        """The arguments of `call`, a call of this file's function or method, whose
        values its body backpropagates (freeing the graph; without `freeing`, also a
        backward that may keep it, `loss.backward(retain_graph=retain_graph)`):
        `policy_loss` of `update(p_opt, policy_loss)`. Empty for any other call."""
        if self.summaries is None:
            return []
        if self._backpropagating is None:
            self._calls_of_backpropagating_names()
        if id(call) not in self._backpropagating_ids:
            if freeing:
                return []  # another file's summary does not say whether the graph is kept
            # another file's function: `update_params(optim, loss)` from the project's utils
            external = self.summaries.resolve_external(call)
            if external is None:
                return []
            handed = (
                self.summaries.external_argument(call, external, param)
                for param in external.backpropagated_params
            )
            return [argument for argument in handed if argument is not None]
        helper = self.summaries.function_run_by(call)
        if helper is None:
            return []
        summary = self.summaries.of(helper)
        found = []
        for param in self._params_backpropagated(helper, freeing=freeing):
            argument = summary.forwarded_argument(call, param)
            if argument is not None:
                found.append(argument)
        return found

    def _calls_of_backpropagating_names(self) -> list[cst.Call]:
        """The calls in this file of a name one of its functions has whose body calls a
        backward, itself or through such a call (`_train(...)` building the loss that
        `_update_networks(loss)` backpropagates): the only calls that may backpropagate
        through a helper."""
        if self._backpropagating is None:
            names: set[str] = set()
            for call in self.index.calls:
                func = call.func
                if type(func) is cst.Attribute and "backward" in func.attr.value:
                    scope = self.index.scope_of(call)
                    if type(scope) is cst.FunctionDef:
                        names.add(scope.name.value)
            self._backpropagating = []
            while names:
                # each round adds the functions that call one found in the last round
                added: set[str] = set()
                for call in self.index.calls:
                    called = _called_name(call)
                    if called is None or called not in names:
                        continue
                    self._backpropagating.append(call)
                    scope = self.index.scope_of(call)
                    if type(scope) is cst.FunctionDef:
                        added.add(scope.name.value)
                names = added - self._backpropagating_names
                self._backpropagating_names |= names
            self._backpropagating_ids = {id(c) for c in self._backpropagating}
        return self._backpropagating

    def _params_backpropagated(self, helper: cst.FunctionDef, *, freeing: bool = True) -> list[str]:
        """The parameters whose values reach a backward in the helper's own body that
        frees its graph (without `freeing`: any backward)."""
        key = (helper, freeing)
        found = self._backward_params.get(key)
        if found is None:
            self._backward_params[key] = []  # a helper that calls itself
            facts = self.scope_facts(helper)
            roots: set[str] = set()
            for event in facts.events:
                if event.kind == "backward" and not event.keeps_graph:
                    if not freeing or self.autograd.retains_graph(event) is False:
                        roots |= event.roots
            for event in self.helper_backwards(helper.body):
                roots |= event.roots  # handed on to a helper that backpropagates it
            reached = facts.closure(roots) if roots else set()
            params = [p.name.value for p in all_params(helper.params)]
            found = [p for p in params if p in reached and p not in ("self", "cls")]
            self._backward_params[key] = found
        return found

    # -- bindings -----------------------------------------------------------------------

    def flow_bindings(self, region: cst.CSTNode) -> list[Binding]:
        """Every binding in region (nested defs excluded), read off the scope's one
        table, each with what its value reads (graph-aware) and whether computing it may
        build graph. A store (`losses.append(loss)`) counts: the container now holds
        what it is given, so a backward of `torch.stack(losses)` reaches it (though a
        store neither carries nor resets the container)."""
        out: list[Binding] = []
        for binding in self.bindings.in_region(region):
            kind = _FLOW_KINDS.get(binding.kind)
            if kind is None:
                continue
            node = binding.node
            # An assignment's names all depend on its whole value, unpacked or not.
            value = binding.value if kind != "assign" else node.value  # type: ignore[attr-defined]
            deps, tensor_op = self._reads_of(value)
            if kind == "for":
                tensor_op = False
            elif kind == "with":
                tensor_op = True
            elif kind == "store":
                spread = self._stores_through_iteration(node, binding.name)
                if spread is not None:
                    containers, iterable = spread
                    deps = deps | self._reads_of(iterable)[0]
                    for container in containers:
                        out.append(
                            Binding(
                                container, node, value, deps | {container}, tensor_op, kind=kind
                            )
                        )
                    continue
            out.append(
                Binding(
                    binding.name,
                    node,
                    value,
                    deps | {binding.name} if kind in ("augassign", "store") else set(deps),
                    tensor_op,
                    augmented=kind == "augassign",
                    kind=kind,
                )
            )
        return out

    def _stores_through_iteration(
        self, store: cst.CSTNode, receiver: str
    ) -> tuple[list[str], cst.BaseExpression] | None:
        """`for buf in (xs, ys): buf.append(v)` and `[arr.append(el) for arr, el in
        zip((policies, values), (policy, value))]`: the receiver is, in turn, each
        container of a literal tuple or list the loop walks, so the store goes into each
        of them. Returns those containers and the iterable (what the stored elements may
        come from); None when the receiver is no such loop target."""
        index = self.index
        child = store
        for anc in index.ancestors(store):
            # exact types (no subclasses): isinstance on LibCST's ABCs is slow when it fails
            kind = type(anc)
            if kind in (cst.FunctionDef, cst.Lambda, cst.ClassDef):
                return None
            clauses: list[tuple[cst.BaseAssignTargetExpression, cst.BaseExpression]] = []
            if kind is cst.For and not index.is_inside(child, anc.iter):
                clauses.append((anc.target, anc.iter))
            elif kind in COMPREHENSIONS:
                clause: cst.CompFor | None = anc.for_in
                while clause is not None:
                    clauses.append((clause.target, clause.iter))
                    clause = clause.inner_for_in
            for target, iterable in clauses:
                if receiver not in target_names(target):
                    continue
                walked = _walked_literal(target, iterable, receiver)
                if walked is None:
                    return None
                names = [dotted_name(e.value) for e in walked.elements]
                containers = [n for n in names if n is not None]
                return (containers, iterable) if containers else None
            child = anc
        return None

    def _reads_of(self, value: cst.CSTNode | None) -> tuple[set[str], bool]:
        if value is None:
            return set(), False
        found = self._value_reads.get(value)
        if found is None:
            found = self._value_reads[value] = (
                self.flow.reads(value),
                self.flow.has_tensor_op(value),
            )
        return found

    # -- definite assignment ---------------------------------------------------------

    def _reads(self, node: cst.CSTNode | None) -> set[str]:
        return self.flow.reads(node, graph_only=False)

    def _block(self, block: cst.CSTNode, assigned, exposed: set[str]):
        """Walk a block's statements; returns the definitely-assigned set after it."""
        body: Sequence[cst.CSTNode] | None = (
            block.body if isinstance(block, (cst.IndentedBlock, cst.Module)) else None
        )
        if body is None:  # SimpleStatementSuite: `for x in y: a = b`
            body = [block]
        for stmt in body:
            if assigned is TERMINATED:
                break
            assigned = self._statement(stmt, assigned, exposed)
        return assigned

    def _note(self, reads: set[str], assigned: set[str], exposed: set[str]) -> None:
        for var in reads:
            if var not in assigned and not any(var.startswith(a + ".") for a in assigned):
                exposed.add(var)

    def _statement(self, stmt: cst.CSTNode, assigned, exposed: set[str]):
        if type(stmt) is cst.SimpleStatementLine or type(stmt) is cst.SimpleStatementSuite:
            assigned = set(assigned)
            for small in stmt.body:
                assigned = self._small(small, assigned, exposed)
                if assigned is TERMINATED:
                    return TERMINATED
            return assigned
        if type(stmt) is cst.If:
            self._note(self._reads(stmt.test), assigned, exposed)
            after_body = self._block(stmt.body, set(assigned), exposed)
            if stmt.orelse is None:
                after_else = set(assigned)
            elif type(stmt.orelse) is cst.If:
                after_else = self._statement(stmt.orelse, set(assigned), exposed)
            else:
                after_else = self._block(stmt.orelse.body, set(assigned), exposed)
            return _meet(after_body, after_else)
        if type(stmt) is cst.For:
            self._note(self._reads(stmt.iter), assigned, exposed)
            inner = set(assigned) | set(target_names(stmt.target))
            self._block(stmt.body, inner, exposed)
            if stmt.orelse is not None:
                self._block(stmt.orelse.body, set(assigned), exposed)
            return assigned
        if type(stmt) is cst.While:
            self._note(self._reads(stmt.test), assigned, exposed)
            self._block(stmt.body, set(assigned), exposed)
            if stmt.orelse is not None:
                self._block(stmt.orelse.body, set(assigned), exposed)
            return assigned
        if type(stmt) is cst.With:
            assigned = set(assigned)
            for item in stmt.items:
                self._note(self._reads(item.item), assigned, exposed)
                if item.asname is not None:
                    assigned |= set(target_names(item.asname.name))
            return self._block(stmt.body, assigned, exposed)
        if type(stmt) is cst.Try:
            after = self._block(stmt.body, set(assigned), exposed)
            for handler in stmt.handlers:
                self._block(handler.body, set(assigned), exposed)
            if stmt.orelse is not None and after is not TERMINATED:
                after = self._block(stmt.orelse.body, after, exposed)
            if stmt.finalbody is not None:
                base = set(assigned) if after is TERMINATED else after
                self._block(stmt.finalbody.body, base, exposed)
            return after if after is not TERMINATED else set(assigned)
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return set(assigned) | {stmt.name.value}
        # match statements and anything newer: read everything, assign nothing definite
        self._note(self._reads(stmt), assigned, exposed)
        return assigned

    def _small(self, small: cst.CSTNode, assigned: set[str], exposed: set[str]):
        if type(small) is cst.Assign:
            self._note(self._reads(small.value), assigned, exposed)
            for target in small.targets:
                self._note(_target_base_reads(self, target.target), assigned, exposed)
                assigned |= set(target_names(target.target))
            return assigned
        if type(small) is cst.AnnAssign:
            if small.value is not None:
                self._note(self._reads(small.value), assigned, exposed)
                assigned |= set(target_names(small.target))
            return assigned
        if type(small) is cst.AugAssign:
            self._note(self._reads(small.value) | self._reads(small.target), assigned, exposed)
            assigned |= set(target_names(small.target))
            return assigned
        if type(small) in (cst.Continue, cst.Break):
            return TERMINATED
        if type(small) in (cst.Return, cst.Raise):
            self._note(self._reads(small), assigned, exposed)
            return TERMINATED
        self._note(self._reads(small), assigned, exposed)
        return assigned


def _walked_literal(
    target: cst.BaseAssignTargetExpression, iterable: cst.BaseExpression, name: str
) -> cst.Tuple | cst.List | None:
    """The literal tuple or list whose elements `name` takes in turn: the iterable itself
    (`for buf in (xs, ys)`), or the argument of `zip(...)` at the name's place in the
    target (`for arr, el in zip((xs, ys), (x, y))`)."""
    names = target_names(target)
    if names.count(name) != 1:
        return None
    source = loop_element_sources(target, iterable)[names.index(name)]
    return source if type(source) is cst.Tuple or type(source) is cst.List else None


def _called_name(call: cst.Call) -> str | None:
    """The name a call calls (`f(x)`, `obj.f(x)`: f), as the helper search matches it."""
    func = call.func
    if type(func) is cst.Attribute:
        return func.attr.value
    return func.value if type(func) is cst.Name else None


def _target_base_reads(analysis: LoopAnalysis, target: cst.CSTNode) -> set[str]:
    """`h[0] = x` and `obj.attr[i] = x` read the container they write into."""
    if type(target) is cst.Subscript:
        return analysis._reads(target)
    if type(target) is cst.Tuple or type(target) is cst.List:
        out: set[str] = set()
        for element in target.elements:
            out |= _target_base_reads(analysis, element.value)
        return out
    if type(target) is cst.Attribute and dotted_name(target) is None:
        return analysis._reads(target.value)
    return set()


def _meet(a, b):
    if a is TERMINATED:
        return b
    if b is TERMINATED:
        return a
    return a & b


def _constant(value: cst.BaseExpression) -> bool:
    """A literal that carries no graph: `None`, `0`, `-1.0`, `"skip"`, `False`."""
    if type(value) is cst.UnaryOperation:
        value = value.expression
    if type(value) is cst.Name:
        return value.value in ("None", "True", "False")
    return type(value) in (cst.Integer, cst.Float, cst.SimpleString)


def _returned_names(value: cst.BaseExpression | None) -> ReturnedNames | str:
    """What a return hands back, as summary_facts.backpropagated_places reads it."""
    if value is None or _constant(value):
        return NO_VALUE
    if type(value) is cst.Tuple:
        elements = value.elements
        if any(type(e) is not cst.Element for e in elements):
            return None
        if all(_constant(e.value) for e in elements):
            return NO_VALUE  # `return 0, 0` while a replay buffer fills
        return tuple(e.value.value if type(e.value) is cst.Name else None for e in elements)
    return value.value if type(value) is cst.Name else None


def _one_step(definitions: list[ExternalFunction]) -> bool:
    """Do the methods a call may run all backpropagate the same parameters and the same
    places of what they return, something at least?"""
    shapes = {
        (
            tuple(d.backpropagated_params),
            d.backpropagated_return_size,
            tuple(d.backpropagated_returns),
        )
        for d in definitions
    }
    first = definitions[0]
    return len(shapes) == 1 and bool(first.backpropagated_params or first.backpropagated_returns)
