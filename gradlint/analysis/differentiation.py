"""Does a value reach a differentiation? The question behind "this forward's graph is
used" (GL004) and "this first derivative is differentiated again" (GL005), answered
once: along def-use chains (so a rebound name starts afresh), through containers a
value is appended to, and through loops over them; a graph cut on the way
(`.detach()`, `.item()`) ends the path.
"""

from __future__ import annotations

import libcst as cst

from gradlint.analysis.dataflow import STORING_METHODS, DataFlow, target_names
from gradlint.analysis.index import FileIndex, dotted_name
from gradlint.analysis.loops import LoopAnalysis
from gradlint.analysis.values import ValueAnalysis

__all__ = ["STORING_METHODS", "DifferentiationReach"]


class DifferentiationReach:
    def __init__(
        self, index: FileIndex, flow: DataFlow, loops: LoopAnalysis, values: ValueAnalysis
    ) -> None:
        self.index = index
        self.flow = flow
        self.loops = loops
        self.values = values

    def result_is_differentiated(self, call: cst.Call) -> bool:
        """Does the call's result reach a differentiation in its function? Followed
        along def-use chains, so `loss = evaluate(...)` does not inherit the `backward()`
        of an earlier training `loss`."""
        index = self.index
        region = self.loops.scope_facts(index.scope_of(call))
        if not region.events:
            return False
        if self._cut_within_statement(call):
            return False  # `vgg(x).detach()`: no gradient can come back through it
        events = [
            e for e in region.events if e.call is not call and not index.is_inside(e.call, call)
        ]
        for event in events:
            if event.root_expr is not None and index.is_inside(call, event.root_expr):
                return True
            if event.kind == "grad" and index.is_inside(call, event.call):
                return True
        statement = index.statement_of(call)
        work = [(statement, var) for var in self.produced(call)]
        seen: set[tuple[cst.CSTNode, str]] = set()
        containers: set[str] = set()
        while work:
            binding, var = work.pop()
            if (binding, var) in seen or len(seen) > 500:
                continue
            seen.add((binding, var))
            if isinstance(binding, cst.Expr):
                containers.add(var)  # `losses.append(...)`: followed by name below
                continue
            for use in self.values.uses_reached(binding, var):
                if self._cut_within_statement(use):
                    continue
                for event in events:
                    if event.root_expr is not None and index.is_inside(use, event.root_expr):
                        return True
                    if event.kind == "grad" and index.is_inside(use, event.call):
                        return True
                work.extend(self._flows_into(use))
        roots: set[str] = set()
        for event in events:
            roots |= event.roots
        return bool(containers and region.closure(roots) & containers)

    def _cut_within_statement(self, node: cst.CSTNode) -> bool:
        statement = self.index.statement_of(node)
        for anc in self.index.ancestors(node):
            if anc is statement:
                return False
            if self.flow.is_graph_cut(anc):
                return True
        return False

    def _flows_into(self, use: cst.CSTNode) -> list[tuple[cst.CSTNode, str]]:
        """(binding, variable) pairs that a read passes its value on to."""
        statement = self.index.statement_of(use)
        out: list[tuple[cst.CSTNode, str]] = []
        if isinstance(statement, cst.Assign) and self.index.is_inside(use, statement.value):
            for target in statement.targets:
                out.extend((statement, v) for v in target_names(target.target))
        elif isinstance(statement, (cst.AugAssign, cst.AnnAssign)):
            value = statement.value
            if value is not None and self.index.is_inside(use, value):
                out.extend((statement, v) for v in target_names(statement.target))
        elif isinstance(statement, cst.Expr):
            value = statement.value
            if (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in STORING_METHODS
            ):
                # `grads.append(g)`: the container now holds it
                receiver = dotted_name(value.func.value)
                if receiver and not self.index.is_inside(use, value.func):
                    out.append((statement, receiver))
        for anc in self.index.ancestors(use):
            if isinstance(anc, cst.For) and self.index.is_inside(use, anc.iter):
                out.extend((anc, v) for v in target_names(anc.target))
                break
            if anc is statement:
                break
        return out

    def produced(self, call: cst.Call) -> set[str]:
        """The variables the call's result is bound or stored into."""
        statement = self.index.statement_of(call)
        produced: set[str] = set()
        if isinstance(statement, cst.Assign):
            for target in statement.targets:
                produced |= set(target_names(target.target))
        elif isinstance(statement, (cst.AnnAssign, cst.AugAssign)):
            produced |= set(target_names(statement.target))
        elif isinstance(statement, cst.Expr):
            # `losses.append(crit(model(x), y))` then a backward of the list
            value = statement.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
                receiver = dotted_name(value.func.value)
                if receiver:
                    produced.add(receiver)
        return produced
