"""State a module keeps on itself from one forward call to the next.

A stateful recurrent model stores its hidden state on `self` inside `forward`:
`out, self.hidden = self.rnn(x, self.hidden)`. Each call then starts from the state the
last call left, with that call's autograd graph. Called once per iteration of a
training loop that backpropagates every iteration, the second backward runs into the
first iteration's graph, already freed. The state is carried by an attribute, not a
loop variable, so the loop's own carried names do not show it; this module reads it off
the class and the loop: which attributes a forward carries, and whether a loop resets
or detaches them between its calls.

A registered buffer written in place inside `forward` (`self.stored_mean[:] = ... + mean *
m`) is carried the same way, by the module: the write records, and its node keeps the
buffer's previous history, so the buffer holds every call's graph
(buffers_written_with_graph)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from gradlint.analysis.bindings import all_params
from gradlint.analysis.callees import CalleeResolver
from gradlint.analysis.grad_mode import GradMode, GradModeAnalysis
from gradlint.analysis.index import (
    FileIndex,
    dotted_name,
    forward_method,
    own_method,
    registered_name,
    target_names,
)
from gradlint.analysis.tensors import TensorFacts, built_module_call
from gradlint.analysis.torch_api import (
    DETACHING_ATTRIBUTES,
    DETACHING_INPLACE_METHODS,
    DETACHING_METHODS,
    PYTHON_VALUE_BUILTINS,
    is_inplace_method,
)
from gradlint.analysis.values import may_carry_graph

if TYPE_CHECKING:
    from gradlint.analysis.dataflow import DataFlow
    from gradlint.analysis.project import ProjectIndex
    from gradlint.analysis.values import ValueAnalysis


@dataclass(frozen=True)
class CarriedAttribute:
    """`self.<attribute>` (`self.hidden`, or `self.recurrent.weight` of a submodule),
    stored by `statement` of the forward (or by the submodule that statement runs) from
    a value computed from what the attribute held when the call began."""

    attribute: str
    statement: cst.CSTNode
    # where a submodule of another project file stores it: (path, line)
    elsewhere: tuple[str, int] | None = None


# How many bindings back buffers_written_with_graph follows a local name to an input.
_INPUT_DEPTH = 6


@dataclass(frozen=True)
class BufferWrite:
    """`statement` of a module's `forward` writes, in place, a value with the call's
    autograd history into `attribute`, a tensor the instance keeps (`self.stored_mean[:] =
    ... + mean * m`, `self.buf.copy_(x)`)."""

    attribute: str
    statement: cst.CSTNode


class ModuleState:
    def __init__(
        self,
        index: FileIndex,
        callees: CalleeResolver,
        tensors: TensorFacts,
        grad_mode: GradModeAnalysis,
        detaching_call: Callable[[cst.Call], bool],
        project: ProjectIndex | None,
        values: ValueAnalysis | None = None,
        flow: DataFlow | None = None,
    ) -> None:
        self.index = index
        self.callees = callees
        self.tensors = tensors
        self.grad_mode = grad_mode
        # `repackage_hidden(h)`: carried_graph's reading of a detaching helper
        self.detaching_call = detaching_call
        self.project = project
        # what a name holds and which bindings reach a use (buffers_written_with_graph)
        self.values = values
        # the one reading of what cuts the graph (DataFlow.is_graph_cut)
        self.flow = flow
        self._carried: dict[cst.FunctionDef, list[CarriedAttribute]] = {}
        self._resetting: dict[str, set[str]] = {}

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
        stores = [
            (node, targets, value)
            for node in index.of_types_in(
                forward.body, cst.Assign, cst.AnnAssign, cst.AugAssign, into_functions=False
            )
            if (parts := _store_parts(node)) is not None
            for targets, value in (parts,)
        ]
        found: list[CarriedAttribute] = []
        stored = {
            name
            for _, targets, _ in stores
            for name in targets
            if name.startswith("self.") and name.count(".") == 1
        }
        for attribute in sorted(stored):
            if self._reset_on_entry(forward, attribute):
                continue
            # the names holding what the attribute held, and whether an operation
            # that records has run on the way
            tainted = {attribute: False}
            carrying: cst.CSTNode | None = None
            for node, targets, value in stores:
                reads = self._reads(value) & tainted.keys()
                if not reads:
                    continue
                if self._cuts(value):
                    for target in targets:
                        tainted.pop(target, None)
                    continue
                computed = self._computes(value) or any(tainted[r] for r in reads)
                tainted.update(dict.fromkeys(targets, computed))
                if (
                    attribute in targets
                    and computed
                    and carrying is None
                    and self.grad_mode.mode_at(node) is GradMode.RECORDING
                    and not index.runs_only_in_mode(node, training=False)
                ):
                    carrying = node
            # the state reaches what the forward returns (an RNN's output), so the next
            # backward walks into the last call's graph; running statistics that only
            # sit on the module leak instead, which is not this finding
            if carrying is not None and any(
                ret.value is not None and self._reads(ret.value) & tainted.keys()
                for ret in index.of_types_in(forward.body, cst.Return, into_functions=False)
            ):
                found.append(CarriedAttribute(attribute, carrying))
        return found

    def _reads(self, node: cst.CSTNode) -> set[str]:
        """The dotted names an expression (or statement) reads, `self.hidden` of
        `self.hidden[0]` included."""
        return {
            name
            for sub in self.index.walk(node, into_functions=True)
            if (type(sub) is cst.Name or type(sub) is cst.Attribute)
            and (name := dotted_name(sub)) is not None
        }

    def _cuts(self, value: cst.BaseExpression) -> bool:
        """Is what the value holds cut from the graph: `h.detach()`, `h.data`,
        `repackage_hidden(h)` (a helper named for detaching, or one of this file whose
        body detaches), or a tuple (`tuple(h.detach() for h in hidden)`) each of whose
        elements is? An input detached inside a call (`self.rnn(x.detach(), self.h)`)
        cuts nothing of the state."""
        if type(value) is cst.Call:
            func = value.func
            if type(func) is cst.Attribute and func.attr.value in DETACHING_METHODS:
                return True
            if (
                type(func) is cst.Name
                and func.value in ("tuple", "list")
                and len(value.args) == 1
                and value.args[0].star == ""
            ):
                return self._cuts(value.args[0].value)
            return self.detaching_call(value)
        if type(value) is cst.Attribute:
            return value.attr.value in DETACHING_ATTRIBUTES
        if type(value) is cst.Tuple or type(value) is cst.List:
            return bool(value.elements) and all(
                self._cuts(element.value) for element in value.elements
            )
        if type(value) is cst.GeneratorExp or type(value) is cst.ListComp:
            return self._cuts(value.elt)
        return False

    def _reset_on_entry(self, forward: cst.FunctionDef, attribute: str) -> bool:
        """Does the forward, in its own top-level statements, store the attribute from
        something that does not read it before any statement reads it (`self.hidden =
        self.init_hidden(x.size(0))` first thing)?"""
        body = forward.body
        if type(body) is not cst.IndentedBlock:
            return False
        storing = self._resetting_methods(attribute)
        for statement in body.body:
            if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1:
                small = statement.body[0]
                parts = _store_parts(small)
                if parts is not None and attribute in parts[0]:
                    return attribute not in self._reads(parts[1])
                # `self.init_hidden(x.size(0))`, a method that stores it afresh
                call = small.value if type(small) is cst.Expr else None
                if (
                    type(call) is cst.Call
                    and type(call.func) is cst.Attribute
                    and dotted_name(call.func.value) == "self"
                    and call.func.attr.value in storing
                ):
                    return True
            if attribute in self._reads(statement):
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

    # -- tensors the instance keeps, written in place -------------------------------------

    def buffers_written_with_graph(self, cls: cst.ClassDef) -> list[BufferWrite]:
        """The in-place writes, in the class's own `forward`, into a buffer the instance
        registers of a value computed from the forward's inputs (_graph_flows_in), while
        autograd records. Each write chains the buffer's history (CopySlices,
        AddBackward) onto the one the last call left, whatever it overwrites: the buffer
        keeps every training call's graph alive. A write through `.data`, of a detached
        value or under `no_grad` records nothing."""
        forward = own_method(cls, "forward")
        if forward is None or self.values is None or self.flow is None:
            return []
        buffers = self._kept_tensors(cls)
        if not buffers:
            return []
        params = frozenset(p.name.value for p in all_params(forward.params)) - {"self"}
        found: list[BufferWrite] = []
        for node in self.index.of_types_in(
            forward.body, cst.Assign, cst.AugAssign, cst.Expr, into_functions=False
        ):
            written = _inplace_write(node)
            if written is None:
                continue
            attribute, value = written
            if attribute not in buffers or self.grad_mode.mode_at(node) is not GradMode.RECORDING:
                continue
            if self._graph_flows_in(value, node, params, set()):
                found.append(BufferWrite(attribute, node))
        return found

    def _kept_tensors(self, cls: cst.ClassDef) -> set[str]:
        """`self.<name>` of each buffer the class registers by a written-out name."""
        return {
            f"self.{name}"
            for node in self.index.of_types_in(cls, cst.Call)
            if (name := registered_name(node, "register_buffer")) is not None
        }

    def _graph_flows_in(
        self,
        value: cst.CSTNode,
        at: cst.CSTNode,
        params: frozenset[str],
        seen: set[tuple[str, cst.CSTNode]],
        depth: int = _INPUT_DEPTH,
    ) -> bool:
        """Does the value compute, through no graph cut (DataFlow.is_graph_cut: `.data`,
        `.detach()`, `.item()`, `.shape`, ...), from an input of the forward (a parameter
        other than `self`), directly or through the local names it reads (followed back
        through their bindings)? What only attributes of `self` give it (a count, a
        momentum, the buffer itself) is not seen to record."""
        values, flow = self.values, self.flow
        if values is None or flow is None:
            return False
        parent = self.index.parent
        for node in self.index.walk(value):
            if type(node) is not cst.Name or node.value == "self":
                continue
            above = parent.get(node)
            if type(above) is cst.Attribute and above.attr is node:
                continue  # the `mean` of `x.mean`: an attribute, not a read of a name
            if flow.cut_between(node, at):  # `at` holds `value`: its own cut counts too
                continue
            if node.value in params:
                return True
            if depth == 0 or not may_carry_graph(values.of_expr(node, at)):
                continue
            for binding in values.reaching_bindings(node.value, at):
                if (node.value, binding) in seen or self.index.scope_of(
                    binding
                ) is self.index.module:
                    continue
                seen.add((node.value, binding))
                bound = values.bound_expression(binding, node.value)
                if bound is not None and self._graph_flows_in(
                    bound, binding, params, seen, depth - 1
                ):
                    return True
        return False

    # -- the loop's side -----------------------------------------------------------------

    def cleared_in(self, body: cst.CSTNode, model: str, attribute: str) -> bool:
        """Does the loop body reset or detach `model`'s attribute between two calls: an
        assignment to it (`model.hidden = model.init_hidden()`), `del model.hidden`, an
        in-place detach of it or of each of its tensors, a call of a method that
        stores it afresh or detached (`model.reset_state()`, `model.core.reset()`,
        `m.reset()` over `model.modules()`), or a function of the project handed the
        model?"""
        held = f"{model}.{attribute.split('.', 1)[1]}"
        methods = self._resetting_methods("self." + attribute.rsplit(".", 1)[1])
        index = self.index
        for node in index.of_types_in(
            body, cst.Assign, cst.AnnAssign, cst.Del, cst.Call, into_functions=False
        ):
            if type(node) is cst.Del:
                if dotted_name(node.target) == held:
                    return True  # `del model.hidden`: the next call starts afresh
                continue
            if type(node) is not cst.Call:
                parts = _store_parts(node)
                if parts is not None and held in parts[0]:
                    return True
                continue
            if any(dotted_name(arg.value) == model for arg in node.args) and (
                self.callees.resolve(node) is not None
                or (
                    self.project is not None
                    and self.project.enabled
                    and type(node.func) is cst.Name
                    and node.func.value in index.imported_from
                )
            ):
                return True  # `repackage(model)`: a helper of the project may reset it
            func = node.func
            if type(func) is not cst.Attribute:
                continue
            receiver = dotted_name(func.value) or ""
            if func.attr.value in DETACHING_INPLACE_METHODS and (
                receiver == held
                or receiver.startswith(held + "[")
                or self._walks(receiver, held, node)
            ):
                return True
            if func.attr.value in methods:
                return True
        return False

    def _walks(self, name: str, held: str, node: cst.CSTNode) -> bool:
        """Is `name` an element of a loop around `node` over `held` (`for h in
        model.hidden: h.detach_()`)?"""
        source = self.index.loop_element_source(name, node)
        return source is not None and dotted_name(source) == held

    def _resetting_methods(self, attribute: str) -> set[str]:
        """The names of the methods of this file's classes, the forwards aside, that
        store `self.<attribute>` afresh (from something that does not read it:
        `init_hidden`) or detached (`detach_hidden`), or that call such a method on
        `self` (`reset()` calling `self.init_hidden()`). Asked by name: which class a
        receiver is, a submodule's or a subclass's, is not always in sight."""
        found = self._resetting.get(attribute)
        if found is not None:
            return found
        methods = [
            f
            for f in self.index.functions
            if self.index.enclosing_class(f) is not None and f.name.value != "forward"
        ]
        found = set()
        for method in methods:
            for node in self.index.of_types_in(
                method.body, cst.Assign, cst.AnnAssign, cst.Del, into_functions=False
            ):
                if type(node) is cst.Del:
                    if dotted_name(node.target) == attribute:
                        found.add(method.name.value)
                    continue
                parts = _store_parts(node)
                if parts is not None and attribute in parts[0]:
                    if attribute not in self._reads(parts[1]) or self._cuts(parts[1]):
                        found.add(method.name.value)
        for method in methods:
            for call in self.index.of_types_in(method.body, cst.Call, into_functions=False):
                func = call.func
                if (
                    type(func) is cst.Attribute
                    and dotted_name(func.value) == "self"
                    and func.attr.value in found
                ):
                    found = found | {method.name.value}
        self._resetting[attribute] = found
        return found


def _store_parts(node: cst.CSTNode) -> tuple[list[str], cst.BaseExpression] | None:
    """(the dotted names stored, the value read) of an assignment, an annotated one
    with a value, or an augmented one (`self.h += x` reads `self.h` too)."""
    if type(node) is cst.Assign:
        return [name for target in node.targets for name in target_names(target.target)], node.value
    if type(node) is cst.AnnAssign and node.value is not None:
        return target_names(node.target), node.value
    if type(node) is cst.AugAssign:
        name = dotted_name(node.target)
        if name is None:
            return None
        return [name], cst.BinaryOperation(node.target, cst.Add(), node.value)
    return None


def _inplace_write(node: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """(`self.<name>`, the value written) of an in-place write into an attribute of
    `self`: `self.buf[i] = v`, `self.buf += v`, `self.buf[i] += v`, `self.buf.copy_(v)`,
    `self.buf.mul_(m).add_(v)`. A write through `.data` (`self.buf.data[i] = v`) is not
    one: it bypasses autograd."""
    if type(node) is cst.Assign:
        if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Subscript:
            return None
        base = _written_base(node.targets[0].target)
        return (base, node.value) if base is not None else None
    if type(node) is cst.AugAssign:
        base = _written_base(node.target)
        return (base, node.value) if base is not None else None
    if type(node) is cst.Expr and type(node.value) is cst.Call:
        call: cst.BaseExpression = node.value
        while type(call) is cst.Call and type(call.func) is cst.Attribute:
            method = call.func.attr.value
            if not is_inplace_method(method):
                return None
            receiver = call.func.value
            if type(receiver) is not cst.Call:
                base = _written_base(receiver)
                # the whole chain: each of its operands is written in
                return (base, node.value) if base is not None else None
            call = receiver
    return None


def _written_base(target: cst.BaseExpression) -> str | None:
    """`self.buf` of `self.buf`, `self.buf[i]`, `self.buf[i][:]`; None through `.data`
    or for anything that is not an attribute of `self`."""
    while type(target) is cst.Subscript:
        target = target.value
    name = dotted_name(target)
    if name is None or not name.startswith("self.") or name.count(".") != 1:
        return None
    return name
