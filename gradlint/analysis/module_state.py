"""State a module keeps on itself from one forward call to the next.

A stateful recurrent model stores its hidden state on `self` inside `forward`:
`out, self.hidden = self.rnn(x, self.hidden)`. Each call then starts from the state the
last call left, with that call's autograd graph. Called once per iteration of a
training loop that backpropagates every iteration, the second backward runs into the
first iteration's graph, already freed. The state is carried by an attribute, not a
loop variable, so the loop's own carried names do not show it; this module reads it off
the class and the loop: which attributes a forward carries, and whether a loop resets
or detaches them between its calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from gradlint.analysis.callees import CalleeResolver
from gradlint.analysis.index import FileIndex, dotted_name, forward_method
from gradlint.analysis.tensors import TensorFacts, built_module_call
from gradlint.analysis.torch_api import (
    DETACHING_ATTRIBUTES,
    DETACHING_METHODS,
    PYTHON_VALUE_BUILTINS,
)

if TYPE_CHECKING:
    from gradlint.analysis.project import ProjectIndex


@dataclass(frozen=True)
class CarriedAttribute:
    """`self.<attribute>` (`self.hidden`, or `self.recurrent.weight` of a submodule),
    stored by `statement` of the forward (or by the submodule that statement runs) from
    a value computed from what the attribute held when the call began."""

    attribute: str
    statement: cst.CSTNode
    # where a submodule of another project file stores it: (path, line)
    elsewhere: tuple[str, int] | None = None


class ModuleState:
    def __init__(
        self,
        index: FileIndex,
        callees: CalleeResolver,
        tensors: TensorFacts,
        project: ProjectIndex | None,
    ) -> None:
        self.index = index
        self.callees = callees
        self.tensors = tensors
        self.project = project
        self._carried: dict[cst.FunctionDef, list[CarriedAttribute]] = {}

    def carried_attributes(self, forward: cst.FunctionDef) -> list[CarriedAttribute]:
        """The attributes the forward stores from a computation on their own previous
        value, without detaching it and without resetting them first on every call;
        also those a submodule it runs carries (`self.recurrent(x)`, whose class,
        of this file or another project file, keeps `self.weight`)."""
        found = self._carried.get(forward)
        if found is None:
            self._carried[forward] = []  # a forward that runs itself
            found = self._carried[forward] = self._collect(forward) + self._of_submodules(forward)
        return found

    def _of_submodules(self, forward: cst.FunctionDef) -> list[CarriedAttribute]:
        found: list[CarriedAttribute] = []
        index = self.index
        for call in index.of_types_in(forward.body, cst.Call, into_functions=False):
            name = dotted_name(call.func)
            if name is None or not name.startswith("self.") or name.count(".") != 1:
                continue
            statement = index.statement_of(call)
            for built in self.tensors.module_constructors(call.func, call):
                built = built_module_call(built)
                if type(built) is not cst.Call or type(built.func) is not cst.Name:
                    continue
                local = [c for c in index.classes if c.name.value == built.func.value]
                inner = forward_method(local[0]) if len(local) == 1 else None
                if inner is not None:
                    found.extend(
                        CarriedAttribute(f"{name}.{c.attribute[5:]}", statement, c.elsewhere)
                        for c in self.carried_attributes(inner)
                    )
                    continue
                origin = index.imported_from.get(built.func.value)
                if origin is None or origin[2] is None or self.project is None:
                    continue
                carried = self.project.carried_state(origin[0], origin[1], origin[2])
                if carried is not None:
                    path, attributes = carried
                    found.extend(
                        CarriedAttribute(f"{name}.{attribute}", statement, (path, line))
                        for attribute, line in attributes
                    )
        return found

    def _collect(self, forward: cst.FunctionDef) -> list[CarriedAttribute]:
        index = self.index
        assigns = index.of_types_in(forward.body, cst.Assign, into_functions=False)
        found: list[CarriedAttribute] = []
        stored = {
            name
            for assign in assigns
            for name in _stored_names(assign)
            if name.startswith("self.") and name.count(".") == 1
        }
        for attribute in sorted(stored):
            if self._reset_on_entry(forward, attribute):
                continue
            # the names holding what the attribute held, and whether an operation
            # that records has run on the way
            tainted = {attribute: False}
            carrying: cst.Assign | None = None
            for assign in assigns:
                reads = _reads(assign.value) & tainted.keys()
                if not reads:
                    continue
                targets = _stored_names(assign)
                if _detaches(assign.value):
                    for target in targets:
                        tainted.pop(target, None)
                    continue
                computed = self._computes(assign.value) or any(tainted[r] for r in reads)
                tainted.update(dict.fromkeys(targets, computed))
                if attribute in targets and computed and carrying is None:
                    carrying = assign
            # the state reaches what the forward returns (an RNN's output), so the next
            # backward walks into the last call's graph; running statistics that only
            # sit on the module leak instead, which is not this finding
            if carrying is not None and any(
                ret.value is not None and _reads(ret.value) & tainted.keys()
                for ret in index.of_types_in(forward.body, cst.Return, into_functions=False)
            ):
                found.append(CarriedAttribute(attribute, carrying))
        return found

    def _reset_on_entry(self, forward: cst.FunctionDef, attribute: str) -> bool:
        """Does the forward, in its own top-level statements, store the attribute from
        something that does not read it before any statement reads it (`self.hidden =
        self.init_hidden(x.size(0))` first thing)?"""
        body = forward.body
        if type(body) is not cst.IndentedBlock:
            return False
        cls = self.index.enclosing_class(forward)
        storing = self._storing_methods(cls, attribute) if cls is not None else set()
        for statement in body.body:
            if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1:
                small = statement.body[0]
                if type(small) is cst.Assign and attribute in _stored_names(small):
                    return attribute not in _reads(small.value)
                # `self.init_hidden(x.size(0))`, a method that stores it afresh
                call = small.value if type(small) is cst.Expr else None
                if (
                    type(call) is cst.Call
                    and type(call.func) is cst.Attribute
                    and dotted_name(call.func.value) == "self"
                    and call.func.attr.value in storing
                ):
                    return True
            if attribute in _reads(statement):
                return False
        return False

    def _computes(self, value: cst.BaseExpression) -> bool:
        """Does the value run an operation that records (a call that is no Python
        builtin of plain values), rather than keep a count (`self.calls + 1`) or a
        copy?"""
        for node in self.index.walk(value):
            if type(node) is cst.Call:
                qualified = self.index.qualified_name(node.func) or ""
                if qualified not in PYTHON_VALUE_BUILTINS:
                    return True
        return False

    # -- the loop's side -----------------------------------------------------------------

    def cleared_in(
        self, body: cst.CSTNode, model: str, forward: cst.FunctionDef, attribute: str
    ) -> bool:
        """Does the loop body reset or detach `model`'s attribute between two calls: an
        assignment to it (`model.hidden = model.init_hidden()`), an in-place detach of
        it, or a call of a method of the model's class that stores it
        (`model.reset_state()`, `model.detach_hidden()`)?"""
        name = attribute.split(".", 1)[1]
        held = f"{model}.{name}"
        cls = self.index.enclosing_class(forward)
        methods = self._storing_methods(cls, attribute) if cls is not None else set()
        for node in self.index.of_types_in(
            body, cst.Assign, cst.Del, cst.Call, into_functions=False
        ):
            if type(node) is cst.Assign:
                if held in _stored_names(node):
                    return True
                continue
            if type(node) is cst.Del:
                if dotted_name(node.target) == held:
                    return True  # `del model.hidden`: the next call starts afresh
                continue
            # `repackage(model)`: a function handed the model may reset it out of sight
            if any(dotted_name(arg.value) == model for arg in node.args):
                return True
            func = node.func
            if type(func) is not cst.Attribute:
                continue
            receiver = dotted_name(func.value)
            if func.attr.value in DETACHING_METHODS and receiver is not None:
                if receiver == held or receiver.startswith(held + "["):
                    return True
            if receiver == model and func.attr.value in methods:
                return True
        return False

    def _storing_methods(self, cls: cst.ClassDef, attribute: str) -> set[str]:
        """The methods of the class (and of its bases in this file) that store the
        attribute afresh, the forward aside: from something that does not read it
        (`init_hidden`), or that detaches what it reads (`detach_hidden`)."""
        found: set[str] = set()
        for owner in self.callees.lineage(cls):
            if type(owner) is not cst.ClassDef:
                continue
            for statement in owner.body.body:
                if type(statement) is not cst.FunctionDef or statement.name.value == "forward":
                    continue
                for assign in self.index.of_types_in(statement.body, cst.Assign):
                    if attribute in _stored_names(assign) and (
                        attribute not in _reads(assign.value) or _detaches(assign.value)
                    ):
                        found.add(statement.name.value)
        return found


def _stored_names(assign: cst.Assign) -> list[str]:
    """The dotted names an assignment stores to, tuple targets unpacked."""
    names: list[str] = []
    pending: list[cst.CSTNode] = [t.target for t in assign.targets]
    while pending:
        target = pending.pop()
        if type(target) is cst.Tuple or type(target) is cst.List:
            pending.extend(e.value for e in target.elements)
            continue
        name = dotted_name(target)
        if name is not None:
            names.append(name)
    return names


def _reads(node: cst.CSTNode) -> set[str]:
    """The dotted names an expression (or statement) reads, `self.hidden` of
    `self.hidden[0]` included."""
    found: set[str] = set()
    for sub in _walk(node):
        if type(sub) is cst.Name or type(sub) is cst.Attribute:
            name = dotted_name(sub)
            if name is not None:
                found.add(name)
    return found


def _detaches(value: cst.BaseExpression) -> bool:
    """Does the value cut the graph somewhere (`.detach()`, `.data`): the state it
    keeps starts afresh, as a `repackage_hidden` does?"""
    for node in _walk(value):
        if type(node) is cst.Attribute and (
            node.attr.value in DETACHING_METHODS or node.attr.value in DETACHING_ATTRIBUTES
        ):
            return True
    return False


def _walk(node: cst.CSTNode):
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        pending.extend(current.children)
