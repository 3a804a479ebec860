"""Values gathered across a loop's iterations: `total += x`, `total = total + x`,
`xs.append(x)`, `history["loss"].append(x)`, `meter.update(x)` when the tracker's method
keeps what it is given. GL006 asks it of loops that backpropagate, GL015 of loops that
never do; both need the same two facts: what a statement adds to which accumulator, and
whether the accumulator outlives the iteration."""

from __future__ import annotations

import libcst as cst

from gradlint.analysis.bindings import PYTHON_BINDINGS, BindingKind
from gradlint.analysis.index import FileIndex, dotted_name
from gradlint.analysis.loops import LoopFacts, LoopNode
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.torch_api import ACCUMULATING_METHODS
from gradlint.analysis.values import ValueAnalysis


class Accumulators:
    def __init__(
        self, index: FileIndex, summaries: FunctionSummaries, values: ValueAnalysis
    ) -> None:
        self.index = index
        self.summaries = summaries
        self.values = values

    def accumulation(self, node: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
        """(accumulator, accumulated value) for `acc += v`, `acc = acc + v`,
        `acc.append(v)`, `acc[k] += v`, `acc[k].append(v)`, and a tracker's method that
        keeps its argument (`meter.update(loss)`)."""
        if type(node) is cst.AugAssign and type(node.operator) is cst.AddAssign:
            target: cst.CSTNode = node.target
            if type(target) is cst.Subscript:
                target = target.value
            name = dotted_name(target)
            return (name, node.value) if name else None
        if type(node) is cst.Assign and len(node.targets) == 1:
            name = dotted_name(node.targets[0].target)
            value = node.value
            if name and type(value) is cst.BinaryOperation and type(value.operator) is cst.Add:
                if dotted_name(value.left) == name:
                    return name, value.right
                if dotted_name(value.right) == name:
                    return name, value.left
            return None
        if type(node) is cst.Call and type(node.func) is cst.Name:
            # `criteria(out, y)`: a module whose forward keeps a running total of what it
            # computes from its arguments (`self.cum_loss += l`); what it keeps is the
            # value the call hands back
            if self.summaries.accumulated_argument(node) is not None:
                return node.func.value, node
            return None
        if type(node) is cst.Call and type(node.func) is cst.Attribute:
            if (
                node.func.attr.value in ACCUMULATING_METHODS
                and node.args
                and not self.summaries.runs_a_method_of_the_project(node)
            ):
                receiver = node.func.value
                if type(receiver) is cst.Subscript:
                    receiver = receiver.value  # history["loss"].append(loss)
                name = dotted_name(receiver)
                parent = self.index.parent.get(node)
                if name and type(parent) is cst.Expr:
                    return name, node.args[-1].value
            # `meter.update(loss)` where the tracker's method keeps what it is given
            kept = self.summaries.accumulated_argument(node)
            if kept is not None:
                return dotted_name(node.func.value) or "", kept
        return None

    def reads_of(self, accumulator: str, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The reads of the container `node` adds to, other than the additions: those
        the bindings of its name that reach `node` reach (a name rebound to
        `torch.cat(values).detach()` and returned is another value)."""
        return [
            use
            for binding in self.values.reaching_bindings(accumulator, node)
            for use in self.values.uses_reached(binding, accumulator)
            if not self._adds_to(use, accumulator)
        ]

    def _adds_to(self, read: cst.CSTNode, accumulator: str) -> bool:
        """Is the read the receiver of a call that adds to the accumulator
        (`values.append(v)`)?"""
        attribute = self.index.parent.get(read)
        call = self.index.parent.get(attribute) if type(attribute) is cst.Attribute else None
        if type(call) is not cst.Call or call.func is not attribute:
            return False
        found = self.accumulation(call)
        return found is not None and found[0] == accumulator

    def carried(self, accumulator: str, node: cst.CSTNode, loop: LoopFacts[LoopNode]) -> bool:
        """Does the accumulator outlive the iteration? Not when a plain assignment in
        the loop body re-creates it before this statement on every path."""
        index = self.index
        statement = index.statement_of(node)
        for binding in loop.bindings_of(accumulator):
            if binding.augmented or binding.statement is statement:
                continue
            if index.order[binding.statement] < index.order[statement] and index.dominates(
                binding.statement, statement
            ):
                return False
        return True

    def bounded_by_outer_reset(self, accumulator: str, loop: LoopFacts[LoopNode]) -> bool:
        """Is the loop a counted one (`for _ in range(n_critic):`) inside a loop that
        re-creates the accumulator before it on every iteration (`loss_d_sum = 0.0`,
        then the discriminator's repeated steps)? It then holds at most that count of
        values, whatever the run's length: a within-step sum, not a history. The loop
        around may be the caller's: a step function (`total_loss = None`, then `for i in
        range(accumulation_steps):`) whose every call in the file is inside a loop is
        re-entered, and its local re-created, once per outer step. Not when the loop
        that re-creates it runs another around the counted one: the values of all its
        iterations are kept."""
        inner = loop.loop
        if type(inner) is not cst.For or type(inner.iter) is not cst.Call:
            return False
        if self.index.qualified_name(inner.iter.func) != "range":
            return False
        outer = list(self.index.enclosing_loops(inner))
        scope = self.index.scope_of(inner)
        if not outer and not self._called_in_loops_only(scope, accumulator):
            return False
        records = self.summaries.bindings.records(scope, PYTHON_BINDINGS).get(accumulator, ())
        for record in records:
            if record.kind is not BindingKind.ASSIGN or not record.whole:
                continue
            if self.index.order[record.node] > self.index.order[inner]:
                continue
            if not self.index.dominates(record.node, inner):
                continue
            # re-created by the loop right around the counted one: a loop between them
            # that does not re-create it (`for episode in ...:` inside the epoch that
            # does) keeps that count of values on each of its iterations, a history
            if not outer or self.index.is_inside(record.node, outer[0].body):
                return True
        return False

    def _called_in_loops_only(self, scope: cst.CSTNode, accumulator: str) -> bool:
        """Is `scope` a function whose accumulator is its own local, called only from
        inside loops (every call of it this file makes, and no other use of its name)?"""
        if type(scope) is not cst.FunctionDef or "." in accumulator:
            return False
        callees = self.summaries.callees
        if callees.handed_on(scope):
            return False
        callers = callees.callers_of(scope)
        return bool(callers) and all(
            next(iter(self.index.enclosing_loops(call)), None) is not None for call in callers
        )
