"""Does a value reach a differentiation? The question behind "this forward's graph is
used" (GL004) and "this first derivative is differentiated again" (GL005), answered
once: along def-use chains (so a rebound name starts afresh), through containers a
value is appended to, and through loops over them; a graph cut on the way
(`.detach()`, `.item()`) ends the path.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from gradlint.analysis.autograd_calls import DiffEvent
from gradlint.analysis.bindings import assigned_names, bound_names
from gradlint.analysis.dataflow import Binding, DataFlow
from gradlint.analysis.grad_mode import callers_query
from gradlint.analysis.index import FileIndex, dotted_name
from gradlint.analysis.loops import LoopAnalysis
from gradlint.analysis.project import MethodCall, calls_differentiated
from gradlint.analysis.torch_api import STORING_METHODS
from gradlint.analysis.values import ValueAnalysis, is_graph_free

__all__ = ["STORING_METHODS", "DifferentiationReach"]

# what the text of a module with a function that differentiates has
_DIFFERENTIATING = ("grad(", "backward(")


class DifferentiationReach:
    def __init__(
        self, index: FileIndex, flow: DataFlow, loops: LoopAnalysis, values: ValueAnalysis
    ) -> None:
        self.index = index
        self.flow = flow
        self.loops = loops
        self.values = values
        self._differentiated_params: dict[cst.FunctionDef, frozenset[str]] = {}
        self._helper_events: dict[cst.CSTNode, list[DiffEvent]] = {}
        self._differentiated_elsewhere: dict[cst.FunctionDef, MethodCall | None] = {}
        # an imported name -> may a call of it differentiate (its module's text does)?
        self._differentiating_imports: dict[str, bool] = {}

    # -- what callers in the project's other files do with a result --------------------

    def differentiated_by_callers_elsewhere(self, func: cst.FunctionDef) -> MethodCall | None:
        """A call of `func`, a module-level function, in another file of the project whose
        scope differentiates what it returns (`loss = d_loss + 10 *
        gradient_penalty(D, real, fake)`, then `loss.backward()`, in train.py); None when
        no other file's call does, or the calls cannot be told."""
        summaries = self.loops.summaries
        project = summaries.project if summaries is not None else None
        if (
            summaries is None
            or project is None
            or not project.enabled
            or self.index.scope_of(func) is not self.index.module
        ):
            return None
        if func in self._differentiated_elsewhere:  # asked of each grad in the helper
            return self._differentiated_elsewhere[func]
        query = callers_query(summaries.callees, project, func)
        found = calls_differentiated(project, query) if query is not None else None
        call = found[0] if found else None
        self._differentiated_elsewhere[func] = call
        return call

    # -- helpers that differentiate what they are passed ------------------------------

    def differentiated_parameters(self, func: cst.FunctionDef) -> frozenset[str]:
        """The parameters of a function of this file whose value its body differentiates
        (a backward of them, `autograd.grad` of them), itself or through this file's
        helpers it passes them to: FROMP's `cac_grad(loss, lc)`, which a kernel of
        Jacobians calls once per class on `preds[:, c].sum()`."""
        found = self._differentiated_params.get(func)
        if found is not None:
            return found
        summaries = self.loops.summaries
        if summaries is None:
            return frozenset()
        self._differentiated_params[func] = frozenset()  # a recursion finds nothing
        region = self.loops.scope_facts(func)
        roots: set[str] = set()
        for event in region.events:
            if event.kind != "step":
                roots |= event.roots
        for event in self.helper_events(func):
            roots |= event.roots
        params = set(summaries.of(func).params)
        found = frozenset(params & region.closure(roots)) if roots else frozenset()
        self._differentiated_params[func] = found
        return found

    def helper_events(self, scope: cst.CSTNode) -> list[DiffEvent]:
        """The calls in the scope (its own body) of this file's functions that
        differentiate one of their parameters, each as a differentiation of the
        argument passed for it: a value that reaches that argument has its graph used."""
        found = self._helper_events.get(scope)
        if found is not None:
            return found
        found = self._helper_events[scope] = []
        body = scope.body if isinstance(scope, (cst.FunctionDef, cst.Lambda)) else scope
        summaries = self.loops.summaries
        if summaries is None:
            return found
        for node in self.index.of_types_in(body, cst.Call, into_functions=False):
            if type(node) is not cst.Call:
                continue
            arguments: list[cst.BaseExpression] = []
            for callee in summaries.callees.runs(node):
                if callee is scope:
                    continue
                summary = summaries.of(callee)
                for param in self.differentiated_parameters(callee):
                    argument = summary.forwarded_argument(node, param)
                    if argument is not None:
                        arguments.append(argument)
            if not arguments:
                arguments = self.differentiated_elsewhere(node)
            for argument in arguments:
                if is_graph_free(self.values.of_expr(argument)):
                    continue  # `y=category_id[0]`, topk's indices: no graph reaches it
                # the argument is what is differentiated, as a backward's receiver is;
                # nothing else in the call is
                found.append(DiffEvent(node, "backward", self.flow.operands(argument), argument))
        return found

    def differentiated_elsewhere(self, call: cst.Call) -> list[cst.BaseExpression]:
        """The arguments `call` hands a function of another project file for the
        parameters its body differentiates (ExternalFunction.differentiated_params): `u`
        of a PINN's `gradients(u, x)` from utils."""
        if not self._may_differentiate_elsewhere(call):
            return []
        summaries = self.loops.summaries
        assert summaries is not None
        external = summaries.resolve_external(call)
        if external is None:
            return []
        handed = (
            summaries.external_argument(call, external, param)
            for param in external.differentiated_params
        )
        return [argument for argument in handed if argument is not None]

    def _may_differentiate_elsewhere(self, call: cst.Call) -> bool:
        """Is the call one of a function another file of the project defines, in a module
        whose text differentiates (`gradients(u, x)` after `from utils.ops import
        gradients`)? Asked before its summary is looked for: most calls are not."""
        project = self.loops.summaries.project if self.loops.summaries is not None else None
        if project is None or not project.enabled:
            return False
        head = (dotted_name(call.func) or "").partition(".")[0]
        found = self._differentiating_imports.get(head)
        if found is None:
            origin = self.index.imported_from.get(head)
            found = self._differentiating_imports[head] = origin is not None and (
                project.module_text_has(origin[0], origin[1], _DIFFERENTIATING)
                or (
                    origin[2] is not None
                    and project.module_text_has(
                        f"{origin[0]}.{origin[2]}" if origin[0] else origin[2],
                        origin[1],
                        _DIFFERENTIATING,
                    )
                )
            )
        return found

    def result_is_differentiated(self, call: cst.Call) -> bool:
        """Does the call's result reach a differentiation in its function? Followed
        along def-use chains, so `loss = evaluate(...)` does not inherit the `backward()`
        of an earlier training `loss`."""
        return bool(self.differentiations_of(call, first=True))

    def differentiations_of(
        self,
        node: cst.BaseExpression,
        *,
        first: bool = False,
        bound: set[tuple[cst.CSTNode, str]] | None = None,
        names: set[str] | None = None,
    ) -> list[DiffEvent]:
        """The differentiations in the function of `node` (a call, an arithmetic
        operation) that its result reaches, in source order: what `result_is_differentiated`
        answers, with the events themselves for a rule that needs to know where (GL011:
        is it after an in-place change?). With `first`, stops at the first one found.
        With `bound`, also collects the (binding, variable) pairs the value is bound into
        on the way, whether or not the function differentiates: `self.mu2 = ...` is where
        a method hands it on to the methods of its object run after it. With `names`,
        only those of the variables its statement binds hold it (`loss, ent = f(x)`
        where f returns the value in its first place)."""
        index = self.index
        scope = index.scope_of(node)
        region = self.loops.scope_facts(scope)
        helpers = self.helper_events(scope)
        if not region.events and not helpers and bound is None:
            return []
        events = [
            e
            for e in (*region.events, *helpers)
            if e.call is not node and not index.is_inside(e.call, node)
        ]
        found: list[DiffEvent] = []
        cut: list[cst.CSTNode] = []
        if self._cut_within_statement(node):
            # `vgg(x).detach()`: no gradient can come back through it, unless a helper
            # is handed it first (`self.jacobian(net(x)).detach()`)
            return self._helpers_handed(node, helpers, found, first=first)

        def reached(expr: cst.CSTNode) -> None:
            for event in events:
                if any(e is event for e in found):
                    continue
                if event.root_expr is not None and index.is_inside(expr, event.root_expr):
                    found.append(event)
                elif event.kind == "grad" and index.is_inside(expr, event.call):
                    found.append(event)

        reached(node)
        if first and found:
            return found
        containers: set[str] = set()  # `losses.append(...)`: followed by name below
        for use in self.reads_reached(node, containers, bound=bound, names=names, cut=cut):
            reached(use)
            if first and found:
                return found
        # `jac = self.cac_jacobian(preds, lc).detach()`: the helper differentiates what
        # it is passed before its result is cut
        for use in cut:
            self._helpers_handed(use, helpers, found, first=first)
            if first and found:
                return found
        if containers:
            # a binding proven graph-free passes no history on (`state, reward, done, _ =
            # env.step(action)`: what the next forward sees says nothing of `action`)
            values = self.values

            def carries(binding: Binding) -> bool:
                return not is_graph_free(values.of_binding(binding.statement, binding.var))

            for event in events:
                if (
                    not any(e is event for e in found)
                    and region.closure(event.roots, keep=carries) & containers
                ):
                    found.append(event)
        return sorted(found, key=lambda e: index.order.get(e.call, 0))

    def reads_reached(
        self,
        node: cst.BaseExpression,
        containers: set[str],
        *,
        past_graph_free: bool = True,
        bound: set[tuple[cst.CSTNode, str]] | None = None,
        names: set[str] | None = None,
        cut: list[cst.CSTNode] | None = None,
    ) -> Iterator[cst.CSTNode]:
        """Every read in its function that the result of `node` reaches, through the
        names it is bound to and the values computed from them, past no `.item()` or
        `.detach()` in a statement; the containers it is stored in (`out.append(...)`)
        are added to `containers`, not followed. Without `past_graph_free`, a binding
        the value analysis proves graph-free (`acc` of `loss, acc = f(...)`, an argmax
        comparison) ends the way: no graph goes on through it. The (binding, variable)
        pairs passed are added to `bound` when it is given; with `names`, only those of
        the variables the statement binds are followed. The reads a cut stops are added
        to `cut` when it is given."""
        statement = self.index.statement_of(node)
        work = [(statement, var) for var in self.produced(node) if names is None or var in names]
        seen: set[tuple[cst.CSTNode, str]] = set()
        while work:
            binding, var = work.pop()
            if (binding, var) in seen or len(seen) > 500:
                continue
            seen.add((binding, var))
            if type(binding) is cst.Expr:
                containers.add(var)
                continue
            if bound is not None:
                bound.add((binding, var))
            if not past_graph_free and is_graph_free(self.values.of_binding(binding, var)):
                continue
            for use in self.values.uses_reached(binding, var):
                if self._cut_within_statement(use):
                    if cut is not None:
                        cut.append(use)
                    continue
                yield use
                work.extend(self.flows_into(use))

    def returns_reached(self, node: cst.BaseExpression) -> list[cst.Return]:
        """The `return` statements of its function whose value is computed from the
        result of `node` (past no `.detach()` or `.item()`), in source order: where the
        result goes back to the callers."""
        index = self.index
        found: list[cst.Return] = []
        for use in (node, *self.reads_reached(node, set())):
            statement = index.statement_of(use)
            if (
                type(statement) is cst.Return
                and statement.value is not None
                and index.is_inside(use, statement.value)
                and not self._cut_within_statement(use)
                and not any(r is statement for r in found)
            ):
                found.append(statement)
        return sorted(found, key=lambda r: index.order.get(r, 0))

    def cut_within_statement(self, node: cst.CSTNode) -> bool:
        """`.item()`, `.detach()` around the value in its statement: no graph goes on."""
        return self._cut_within_statement(node)

    def _helpers_handed(
        self,
        use: cst.CSTNode,
        helpers: list[DiffEvent],
        found: list[DiffEvent],
        *,
        first: bool,
    ) -> list[DiffEvent]:
        """Adds to `found` the helper differentiations handed `use` (a read whose value
        a cut in its statement stops) before any cut, and returns it."""
        for event in helpers:
            if any(e is event for e in found) or event.root_expr is None:
                continue
            if self.index.is_inside(use, event.root_expr) and not self.flow.cut_between(
                use, event.call
            ):
                found.append(event)
                if first:
                    break
        return found

    def _cut_within_statement(self, node: cst.CSTNode) -> bool:
        return self.flow.cut_between(node, self.index.statement_of(node))

    def flows_into(self, use: cst.CSTNode) -> list[tuple[cst.CSTNode, str]]:
        """(binding, variable) pairs that a read passes its value on to."""
        statement = self.index.statement_of(use)
        out: list[tuple[cst.CSTNode, str]] = []
        if type(statement) is cst.Assign and self.index.is_inside(use, statement.value):
            out.extend((statement, v) for v in assigned_names(statement))
        elif isinstance(statement, (cst.AugAssign, cst.AnnAssign)):
            value = statement.value
            if value is not None and self.index.is_inside(use, value):
                out.extend((statement, v) for v in assigned_names(statement))
            elif type(statement) is cst.AugAssign and self.index.is_inside(use, statement.target):
                # `y += 1`: the new y is computed from the old one (a tensor's is the
                # old one, changed in place)
                out.extend((statement, v) for v in assigned_names(statement))
        elif type(statement) is cst.Expr:
            value = statement.value
            if (
                type(value) is cst.Call
                and type(value.func) is cst.Attribute
                and value.func.attr.value in STORING_METHODS
            ):
                # `grads.append(g)`: the container now holds it
                receiver = dotted_name(value.func.value)
                if receiver and not self.index.is_inside(use, value.func):
                    out.append((statement, receiver))
        for anc in self.index.ancestors(use):
            if type(anc) is cst.For and self.index.is_inside(use, anc.iter):
                out.extend((anc, v) for v in bound_names(anc))
                break
            if anc is statement:
                break
        return out

    def produced(self, call: cst.BaseExpression) -> set[str]:
        """The variables the call's result is bound or stored into."""
        statement = self.index.statement_of(call)
        produced = set(assigned_names(statement))
        if type(statement) is cst.Expr:
            # `losses.append(crit(model(x), y))` then a backward of the list
            value = statement.value
            if type(value) is cst.Call and type(value.func) is cst.Attribute:
                receiver = dotted_name(value.func.value)
                if receiver:
                    produced.add(receiver)
        return produced
