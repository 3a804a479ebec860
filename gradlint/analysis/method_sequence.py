"""What a method runs through the methods of its own object, in the order it runs it.

Model classes split one training step across methods: BicycleGAN's
`optimize_parameters` runs `self.forward()`, which stores G's and E's outputs on the
object, then `self.update_G_and_E()`, which runs `self.backward_EG()` (a backward that
retains the graph), steps both optimizers, then runs `self.backward_G_alone()`, whose
backward goes through `self.mu2`, stored by `forward()`. No one function shows the
forward, the step and the backward; the caller's sequence does. The order of the calls
in the caller is the order of events, and what a method binds on `self` is what the
methods run after it read there, until one of them binds it again.

Read in straight-line order, as within one function: a place is its statement's in
the caller, then in each method called on the way; loops are read once; a call under an
`if` still runs its method (a rule asks whether one event runs whenever another does).
Only `self.name(...)` calls that resolve to a method of the same class in this file are
followed (FunctionSummaries resolves them), at most three calls deep, never into a
method already on the way.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.autograd_calls import DiffEvent
from gradlint.analysis.bindings import PYTHON_BINDINGS, ScopeBindings
from gradlint.analysis.differentiation import DifferentiationReach
from gradlint.analysis.index import FileIndex, dotted_name
from gradlint.analysis.summaries import FunctionSummaries

# How many `self.m()` calls deep a caller's sequence is followed.
_MAX_DEPTH = 3
# Within a statement: reads (and the calls that differentiate or step) come first, the
# methods the statement calls after their arguments, what it binds last.
_READ, _CALLED, _BOUND = 0.0, 0.5, 1.0

Place = tuple[float, ...]


@dataclass(frozen=True, eq=False)
class Run:
    """One run of a method in a caller's sequence."""

    method: cst.FunctionDef
    # The `self.name(...)` calls from the caller's body down to this run, outermost
    # first; () for the caller itself.
    path: tuple[cst.Call, ...]
    # Where each call of the path sits, outermost first: what places inside it begin with.
    prefix: Place


@dataclass(frozen=True, eq=False)
class _Access:
    place: Place
    run: Run
    node: cst.CSTNode  # the read (an Attribute), or the binding statement
    var: str  # `self.x`
    binds: bool


class MethodSequences:
    def __init__(
        self,
        index: FileIndex,
        bindings: ScopeBindings,
        summaries: FunctionSummaries,
        reach: DifferentiationReach,
    ) -> None:
        self.index = index
        self.bindings = bindings
        self.summaries = summaries
        self.reach = reach
        self._runs: dict[cst.FunctionDef, list[Run]] = {}
        self._accesses: dict[cst.FunctionDef, list[_Access]] = {}
        self._self_called: set[str] | None = None

    def runs(self, caller: cst.FunctionDef) -> list[Run]:
        """The caller's run, then every run of its object's methods it makes, each
        after the runs it follows (outer before inner, earlier calls before later)."""
        found = self._runs.get(caller)
        if found is None:
            found = []
            if self.index.enclosing_class(caller) is not None:
                self._follow(Run(caller, (), ()), found)
            self._runs[caller] = found
        return found

    def called_on_self(self, method: cst.FunctionDef) -> bool:
        """Is a method of that name called as `self.name(...)` anywhere in the file? A
        method that is not runs in no sequence but its own."""
        if self._self_called is None:
            names = set()
            for call in self.index.calls:
                func = call.func
                if (
                    type(func) is cst.Attribute
                    and type(func.value) is cst.Name
                    and func.value.value == "self"
                ):
                    names.add(func.attr.value)
            self._self_called = names
        return method.name.value in self._self_called

    def callers_of(self, method: cst.FunctionDef) -> Iterator[tuple[cst.FunctionDef, Run]]:
        """(caller, run): each method of the same class whose sequence runs `method`
        from another method, with the run of it."""
        cls = self.index.enclosing_class(method)
        if cls is None:
            return
        for caller in self.index.functions:
            if caller is method or self.index.enclosing_class(caller) is not cls:
                continue
            for run in self.runs(caller):
                if run.method is method:
                    yield caller, run

    def place(self, run: Run, node: cst.CSTNode, *, binds: bool = False) -> Place:
        """Where `node` (in `run`'s method) happens in the caller's sequence; a binding
        statement, with `binds`, after what the statement reads and calls."""
        statement = self.index.statement_of(node)
        phase = _BOUND if binds else _READ
        return (*run.prefix, self.index.order[statement], phase, self.index.order[node])

    def chain(self, run: Run, node: cst.CSTNode) -> list[tuple[cst.FunctionDef, cst.CSTNode]]:
        """(method, node in it) from the caller down to `node`: the calls of the path,
        each in the method that makes it, then `node` in the run's method."""
        methods = [*self._methods_on(run), run.method]
        return list(zip(methods, (*run.path, node), strict=True))

    def reached_from(
        self,
        caller: cst.FunctionDef,
        run: Run,
        node: cst.BaseExpression,
        handed: tuple[Run, DiffEvent, list[cst.BaseExpression]] | None = None,
        names: set[str] | None = None,
    ) -> list[tuple[Run, DiffEvent]]:
        """The differentiations in the caller's sequence that the value of `node` (a
        call in `run`'s method) reaches: in its own method along def-use chains, and
        in the methods run after it through the attributes of `self` it is bound to,
        for as long as no other value is bound there, and in the method that called
        its own when it returns it. In the order they run. With `handed` (a run, the
        event at a call there of a helper that backpropagates what it is handed, and
        those arguments), that event counts as reached when the value reaches one of
        the arguments. With `names`, only those of the variables `node`'s statement
        binds hold the value (`q1, q2 = critic(s)`: what `q2` reaches)."""
        runs = self.runs(caller)
        stored: set[tuple[int, cst.CSTNode, str]] = set()
        returned: set[int] = set()  # the calls of methods whose returned value is followed
        found: dict[tuple[int, int], tuple[Place, Run, DiffEvent]] = {}

        def follow(at: Run, start: cst.BaseExpression, names: set[str] | None = None) -> None:
            bound: set[tuple[cst.CSTNode, str]] = set()
            for event in self.reach.differentiations_of(start, bound=bound, names=names):
                key = (id(at), id(event.call))
                found.setdefault(key, (self.place(at, event.call), at, event))
            for binding, var in bound:
                if var.startswith("self."):
                    stored.add((id(at), binding, var))
            uses: list[cst.CSTNode] | None = None
            if handed is not None and handed[0] is at:
                uses = [start, *self.reach.reads_reached(start, set(), names=names)]
                if any(self.index.is_inside(u, a) for u in uses for a in handed[2]):
                    event = handed[1]
                    key = (id(at), id(event.call))
                    found.setdefault(key, (self.place(at, event.call), at, event))
            # `return policy_loss, entropies`: the value is what the call of the method
            # evaluates to in the run that made it (`loss, ent = self.policy_loss(b)`)
            if at.path and id(at.path[-1]) not in returned:
                if uses is None:
                    uses = [start, *self.reach.reads_reached(start, set(), names=names)]
                returns = [
                    r for use in uses if type(r := self.index.statement_of(use)) is cst.Return
                ]
                if returns:
                    returned.add(id(at.path[-1]))
                    maker = next(
                        (
                            r
                            for r in runs
                            if len(r.path) == len(at.path) - 1
                            and all(a is b for a, b in zip(r.path, at.path, strict=False))
                        ),
                        None,
                    )
                    if maker is not None:
                        call = at.path[-1]
                        follow(maker, call, self._unpacked_names(call, returns, uses))

        if not any(r is run for r in runs):
            return []
        follow(run, node, names)
        start = self.place(run, node)
        holding: set[str] = set()
        for access in self._accesses_in(caller):
            if access.place <= start:
                continue
            if access.binds:
                if (id(access.run), access.node, access.var) in stored:
                    holding.add(access.var)
                else:
                    holding.discard(access.var)
            elif access.var in holding and self._reads_object_state(access):
                assert isinstance(access.node, cst.BaseExpression)
                follow(access.run, access.node)
        return [(r, e) for _, r, e in sorted(found.values(), key=lambda item: item[0])]

    def _unpacked_names(
        self, call: cst.Call, returns: list[cst.Return], uses: list[cst.CSTNode]
    ) -> set[str] | None:
        """The names of `a, b = self.m(...)` that receive the places of m's returned
        tuples that `uses` reach; None (all it binds) unless every return and the
        unpacking line up place for place."""
        statement = self.index.statement_of(call)
        if type(statement) is not cst.Assign or statement.value is not call:
            return None
        if len(statement.targets) != 1:
            return None
        target = statement.targets[0].target
        if type(target) not in (cst.Tuple, cst.List):
            return None
        assert isinstance(target, (cst.Tuple, cst.List))
        targets = target.elements
        names: set[str] = set()
        for ret in returns:
            value = ret.value
            if type(value) is not cst.Tuple or len(value.elements) != len(targets):
                return None
            for returned, bound in zip(value.elements, targets, strict=True):
                if type(returned) is cst.StarredElement or type(bound) is cst.StarredElement:
                    return None
                if any(self.index.is_inside(use, returned.value) for use in uses):
                    name = dotted_name(bound.value)
                    if name is None:
                        return None
                    names.add(name)
        return names

    # -- the sequence ----------------------------------------------------------------------

    def _follow(self, run: Run, out: list[Run]) -> None:
        out.append(run)
        if len(run.path) >= _MAX_DEPTH:
            return
        on_the_way = {id(m) for m in self._methods_on(run)} | {id(run.method)}
        cls = self.index.enclosing_class(run.method)
        for call, callee in self.summaries.of(run.method).calls:
            func = call.func
            if (
                type(func) is not cst.Attribute
                or type(func.value) is not cst.Name
                or func.value.value != "self"
                or id(callee) in on_the_way
                or self.index.enclosing_class(callee) is not cls
            ):
                continue
            statement = self.index.statement_of(call)
            prefix = (*run.prefix, self.index.order[statement], _CALLED, self.index.order[call])
            self._follow(Run(callee, (*run.path, call), prefix), out)

    def _methods_on(self, run: Run) -> list[cst.FunctionDef]:
        """The methods that make the calls of the run's path, outermost first."""
        methods = []
        for call in run.path:
            scope = self.index.scope_of(call)
            assert type(scope) is cst.FunctionDef
            methods.append(scope)
        return methods

    def _accesses_in(self, caller: cst.FunctionDef) -> list[_Access]:
        """Every read and binding of an attribute of `self` in the caller's sequence,
        in the order they run."""
        found = self._accesses.get(caller)
        if found is not None:
            return found
        found = []
        for run in self.runs(caller):
            method = run.method
            for record in self.bindings.of_scope(method):
                if record.name.startswith("self."):
                    place = self.place(run, record.node, binds=True)
                    found.append(_Access(place, run, record.node, record.name, True))
            for var, uses in self.bindings.uses(method).items():
                if var.startswith("self."):
                    for use in uses:
                        found.append(_Access(self.place(run, use), run, use, var, False))
        found.sort(key=lambda access: access.place)
        self._accesses[caller] = found
        return found

    def _reads_object_state(self, access: _Access) -> bool:
        """Does the read see what the object held when its method began: no binding of
        the attribute in that method can reach it?"""
        method = access.run.method
        bindings = self.bindings.nodes(method, PYTHON_BINDINGS).get(access.var, [])
        return not bindings or not self.index.reaching(bindings, access.node)
