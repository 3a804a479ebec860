"""How often a piece of code runs: on every batch, every epoch, once, or only in tests.

The same pitfall costs very different amounts in different places: a graph recorded
for nothing in a loop over a data loader is paid on every batch, the same forward in a
plot or a test once. The impact is read off the context the analysis already has:

- code under tests (a `tests/` or `test/` folder; a `test_*.py` / `*_test.py` /
  `conftest.py` file that holds test functions or imports pytest or unittest, since
  `test_net.py` is often an evaluation script; a pytest function `test_*`) is `test`;
- code in a hot loop (a `while` loop, one over data, batches, steps, frames, episodes
  or epochs by its names, or one that differentiates, through a helper too) is
  `per-batch`, except in the body of an epoch loop (one whose target or iterable names
  an epoch) that holds a hot loop beside it, or under a periodic test in the loop
  (`if step % interval == 0:`, the usual sampling and logging): then it is
  `per-epoch`, a cost paid now and then;
- a loop that is none of these (over a few classes, the images of one sample grid) runs
  as often as the code around it;
- code of a function outside its loops runs as often as the function is called: the
  most frequent of its calls in this file; with none there, of its calls in the
  project's other files (the project-wide caller search, gradlint.analysis.project:
  `evaluate(model, loader)` of utils.py called in train.py's loop over a data loader
  runs per batch), each read off the loops around it and the function that holds it
  by the same rules; with none visible either (a hook a framework calls, an entry point
  of a library, a function only tests call), by its name: `forward`, `*_step` and the
  unknown run per batch, `evaluate`/`validate`/`log` per epoch, `plot`/`save`/`main`
  once;
- a call of another file's helper whose forward sits in a hot loop of the helper (its
  summary says so: project.ForwardFact.in_loop) pays that forward per batch, as a
  helper of this file does;
- module-level code outside loops (a script's body, a notebook cell) runs `once`.

`on_one_sample` tells the other side of a forward's cost: an input given a leading batch
dimension of one (`state.unsqueeze(0)`, `x[None]`), or an environment's observation (what
`env.reset()` or `env.step(action)` hands back, followed through assignments, `self`
attributes and the parameters every caller in the file passes one to), an agent's
per-step action, saves a few KB whatever the frequency.

Nothing here decides whether a finding is reported; it decides how loudly
(gradlint.codes.default_severity) and in which order.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from gradlint.analysis.bindings import BindingKind, ScopeBindings
from gradlint.analysis.callees import CalleeResolver
from gradlint.analysis.grad_mode import callers_query
from gradlint.analysis.index import LOOPS, FileIndex, named_like_a_test_file
from gradlint.analysis.loops import LoopAnalysis
from gradlint.analysis.project import caller_contexts
from gradlint.analysis.summary_facts import hot_loop_header
from gradlint.analysis.torch_api import (
    ARRAY_FROM_LIST_BUILDERS,
    ENVIRONMENT_STEP_RESULTS,
    called_implicitly,
)
from gradlint.analysis.values import is_environment_reset, is_environment_step
from gradlint.diagnostics import Impact

if TYPE_CHECKING:
    from gradlint.analysis.caller_arguments import CallerArguments
    from gradlint.analysis.project import CallerContext, EnclosingLoop, ProjectIndex

_TEST_FOLDERS = frozenset({"tests", "test", "testing"})
_EPOCH = re.compile(r"epoch", re.IGNORECASE)
# Functions that nothing in the file calls, by what their name says they are for.
_ONCE_NAMES = re.compile(
    r"^(main|_?plot\w*|\w*_plot|visuali[sz]e\w*|show\w*|draw\w*|save\w*|export\w*|demo\w*|"
    r"__init__|setup\w*|build\w*|load\w*|summar\w*|report\w*|generate\w*|interpolat\w*|"
    r"infer\w*)$"
)
# What turns an observation into a tensor or array without computing from it.
OBSERVATION_TENSOR_BUILDERS = ARRAY_FROM_LIST_BUILDERS | {"from_numpy", "as_tensor"}
_EPOCH_NAMES = re.compile(r"^_?(eval\w*|valid\w*|\w*_eval\w*|\w*epoch\w*|log\w*|checkpoint\w*)$")


def is_test_path(path: str) -> bool:
    """A file in a tests folder, or one pytest would collect by its name (`test_*.py`,
    `*_test.py`, `conftest.py`; see ImpactAnalysis for the name alone)."""
    norm = path.replace("\\", "/")
    parts = norm.split("/")
    return _test_name(parts[-1]) or any(part in _TEST_FOLDERS for part in parts[:-1])


def _test_name(name: str) -> bool:
    return named_like_a_test_file(name)


def _in_test_folder(path: str) -> bool:
    return any(part in _TEST_FOLDERS for part in path.replace("\\", "/").split("/")[:-1])


def _is_test_file(path: str, has_tests: bool) -> bool:
    """Code under tests: a tests folder, or a file named like a test that holds tests or
    imports a test framework (`test_net.py` is often an evaluation script)."""
    path = os.path.normpath(path)
    return _in_test_folder(path) or (_test_name(os.path.basename(path)) and has_tests)


def _hot_header(text: str) -> bool:
    """Does a `for` loop's `target iter` say it walks data, batches, steps or epochs?"""
    return hot_loop_header(text)


def _epoch_header(text: str) -> bool:
    return _EPOCH.search(text) is not None


@dataclass(frozen=True)
class CostSource:
    """Where a finding's cost is paid, when not simply where the reported node runs.

    `calls`: the calls that pay it, when only some calls of the reported code do (the
    evaluating call of a function that trains or evaluates by a flag): the impact is the
    most frequent of theirs. `paid_at`: the node whose loops inside its own function
    decide first (the forward inside a helper the reported call runs); the reported node
    when None. `in_hidden_loop`: paid in a hot loop out of this file's sight (the forward
    in a loop of another file's helper that the reported call runs): per batch, whatever
    the call. Made by the constructors below, each named for the shape it describes."""

    calls: tuple[cst.CSTNode, ...] = ()
    paid_at: cst.CSTNode | None = None
    in_hidden_loop: bool = False

    @classmethod
    def paid_by(cls, calls: Iterable[cst.CSTNode]) -> CostSource:
        """Only `calls` pay the reported node's cost (a flag path's evaluating call)."""
        return cls(calls=tuple(calls))

    @classmethod
    def in_helper(cls, call: cst.CSTNode, forward: cst.CSTNode) -> CostSource:
        """`call` runs a helper of this file whose `forward` pays the cost: per batch
        when a loop of the helper holds it, else as often as `call` runs."""
        return cls(calls=(call,), paid_at=forward)

    @classmethod
    def per_run_of(cls, loop: cst.CSTNode) -> CostSource:
        """The cost builds up over the whole of `loop` and is paid once per run of it (a
        graph as long as the loop's count): as often as the loop starts, not as often as
        its body runs."""
        return cls(calls=(loop,), paid_at=loop)

    @classmethod
    def in_loop_elsewhere(cls) -> CostSource:
        """The reported call runs another file's helper whose forward sits in a hot loop
        of the helper (its summary says so: project.ForwardFact.in_loop)."""
        return cls(in_hidden_loop=True)


class ImpactAnalysis:
    def __init__(
        self,
        index: FileIndex,
        path: str,
        callees: CalleeResolver,
        loops: LoopAnalysis | None = None,
        project: ProjectIndex | None = None,
        *,
        bindings: ScopeBindings | None = None,
        arguments: CallerArguments | None = None,
    ) -> None:
        self.index = index
        self.bindings = bindings if bindings is not None else ScopeBindings(index)
        # what the callers of a function pass, for the parameters that hold observations
        self.arguments = arguments
        self.callees = callees
        self.loops = loops
        self.project = project
        self._path = path
        self.in_tests = False
        if path not in ("", "-"):
            # `test_net.py`, `pmnist_test.py`: scripts named like tests are tests only when
            # they hold test functions or import a test framework
            self.in_tests = _in_test_folder(os.path.normpath(path)) or (
                _test_name(os.path.basename(path)) and self._has_tests()
            )
        self._entry: dict[cst.CSTNode, Impact] = {}
        # per function or class: what holds an environment's observation there
        self._observed: dict[cst.CSTNode, _Observed] = {}
        self._trains_here: bool | None = None

    def _has_tests(self) -> bool:
        if os.path.basename(self._path) == "conftest.py":
            return True
        if any(f.name.value.startswith("test") for f in self.index.functions):
            return True
        return any(
            target.split(".")[0] in ("pytest", "unittest") for target in self.index.aliases.values()
        )

    def of(self, node: cst.CSTNode, cost: CostSource | None = None) -> Impact:
        """How often `node` pays its cost: as often as it runs, unless `cost` says the
        cost comes from elsewhere (CostSource)."""
        if cost is not None and cost.in_hidden_loop:
            # a hot loop out of this file's sight: per batch, but in tests
            return Impact.TEST if self._in_a_test(node) else Impact.PER_BATCH
        if cost is not None and cost.calls:
            paid = cost.paid_at if cost.paid_at is not None else node
            if self._in_a_test(paid):
                return Impact.TEST
            # a per-batch loop around the paying node inside its own function still
            # runs per batch; otherwise the most frequent of the calls that pay
            scope = self.index.scope_of(paid)
            hot = next((loop for loop in self.index.enclosing_loops(paid) if self._hot(loop)), None)
            if hot is not None and self.index.is_inside(hot, scope):
                return self._in_loop(hot, paid)
            return max((self._impact(call, set()) for call in cost.calls), key=lambda i: i.rank)
        if self.in_tests:
            return Impact.TEST
        return self._impact(node, set())

    def in_one_pass(self, node: cst.CSTNode, cost: CostSource | None = None) -> bool:
        """Is the cost paid on each batch of one pass over data that runs once beside a
        training: a `for` loop over data that does not differentiate, with no hot loop
        around it, in code that runs once (a script's test loop after training, a
        `test()` called once), in a file that trains? The pass costs what one pass over
        the test set costs, once in a run whose training costs many; the same loop per
        epoch (a validation every epoch), a `while` loop (a camera's frames, an agent's
        episodes: a stream as long as the run), or a pass that is the whole run (an
        inference script, `--test` of a detector) does not."""
        if cost is not None and cost.in_hidden_loop:
            return False
        if self.loops is None or not self._file_trains():
            return False
        paid = cost.paid_at if cost is not None and cost.paid_at is not None else node
        hot = next((loop for loop in self.index.enclosing_loops(paid) if self._hot(loop)), None)
        if type(hot) is not cst.For:
            return False
        if self.loops.facts(hot).differentiates:
            return False
        if any(self._hot(outer) for outer in self.index.enclosing_loops(hot)):
            return False
        return self.of(hot) in (Impact.ONCE, Impact.TEST)

    def _file_trains(self) -> bool:
        if self._trains_here is None:
            loops = self.loops
            self._trains_here = loops is not None and any(
                loops.facts(loop).differentiates for loop in self.index.loops
            )
        return self._trains_here

    def _in_a_test(self, node: cst.CSTNode) -> bool:
        """In a test file, or in a test function of another file."""
        if self.in_tests:
            return True
        return self._pytest_function(self.index.scope_of(node))

    def _pytest_function(self, scope: cst.CSTNode) -> bool:
        """A test function: named like one, and in a file pytest collects by its name or
        called by no other file of the project (a `def test_model(model, path)` in
        `utils.py` that `main.py` calls is a helper, as often as its callers run)."""
        if type(scope) is not cst.FunctionDef or not self.index.is_pytest_function(scope):
            return False
        if self._path in ("", "-") or named_like_a_test_file(self._path):
            return True
        return self._called_elsewhere(scope) is None

    def _impact(self, node: cst.CSTNode, visiting: set[cst.CSTNode]) -> Impact:
        scope = self.index.scope_of(node)
        if self._pytest_function(scope):
            return Impact.TEST
        hot = next((loop for loop in self.index.enclosing_loops(node) if self._hot(loop)), None)
        if hot is not None:
            return self._in_loop(hot, node)
        if scope is self.index.module:
            return Impact.ONCE
        if type(scope) is not cst.FunctionDef:
            return Impact.PER_BATCH  # a lambda runs wherever it is handed to
        return self._entry_of(scope, visiting)

    def _hot(self, loop: cst.For | cst.While) -> bool:
        """Does the loop run per batch: a `while` loop, one that differentiates (itself or
        through a helper of this file), or one whose names say it walks data or steps?"""
        if not isinstance(loop, cst.For):
            return True
        if _hot_header(_text(loop.target) + " " + _text(loop.iter)):
            return True  # the names first: reading them costs less than the loop's facts
        return self.loops is not None and self.loops.facts(loop).differentiates

    def _in_loop(self, loop: cst.For | cst.While, node: cst.CSTNode) -> Impact:
        """Per batch, unless `node` sits in an epoch loop's own body beside the loop that
        runs the batches (a full-batch loop over epochs runs one step per epoch: per
        batch too), or under a periodic test."""
        for ancestor in self.index.ancestors(node):
            if ancestor is loop:
                break
            if type(ancestor) is cst.If and not self.index.is_inside(node, ancestor.test):
                if any(_is_modulo(n) for n in self.index.walk(ancestor.test)):
                    if not self._trains(ancestor):
                        return Impact.PER_EPOCH
        if type(loop) is cst.For and _epoch_header(_text(loop.target) + " " + _text(loop.iter)):
            # the batch loop beside `node` (a small loop around it is no batch loop)
            inner = [n for n in self.index.walk(loop.body) if type(n) in LOOPS and self._hot(n)]
            if inner and not any(self.index.is_inside(node, other) for other in inner):
                return Impact.PER_EPOCH
        return Impact.PER_BATCH

    def _trains(self, branch: cst.If) -> bool:
        """Does the branch differentiate? `if i % opt.d_every == 0:` around a model's
        update step is the training itself (d_every is often 1), not a periodic sample."""
        return self.loops is not None and bool(self.loops.autograd.events_in(branch.body))

    def _entry_of(self, func: cst.FunctionDef, visiting: set[cst.CSTNode]) -> Impact:
        """How often the function's body runs: as often as its most frequent call."""
        found = self._entry.get(func)
        if found is not None:
            return found
        if func in visiting:
            return Impact.ONCE  # recursion adds no caller of its own
        visiting.add(func)
        calls = self.callees.callers_of(func)
        impacts = [self._impact(call, visiting) for call in calls]
        elsewhere = None if calls else self._called_elsewhere(func)
        if elsewhere is not None:
            impacts.append(elsewhere)
        if (not calls and elsewhere is None) or self.callees.handed_on(func):
            impacts.append(_by_name(func.name.value))
        visiting.discard(func)
        found = max(impacts, key=lambda impact: impact.rank)
        self._entry[func] = found
        return found

    def _called_elsewhere(self, func: cst.FunctionDef) -> Impact | None:
        """How often the project's other files call `func` (a module-level function or a
        method), the most frequent of their calls; None when none is seen outside tests
        or the calls cannot be told. The search is the one GL004/GL012 ask of the same
        function (gradlint.analysis.grad_mode), so it is read, not made, a second time."""
        project = self.project
        if project is None or not project.enabled:
            return None
        if called_implicitly(func.name.value):
            return None  # `model(x)` runs forward: the calls by name are not all of them
        query = callers_query(self.callees, project, func)
        if query is None:
            return None
        contexts = caller_contexts(project, query)
        if not contexts:
            return None
        # a function only tests call is a library's entry point: its name says more
        found = [impact for impact in map(_caller_impact, contexts) if impact is not Impact.TEST]
        return max(found, key=lambda impact: impact.rank) if found else None

    def on_one_sample(self, node: cst.CSTNode) -> bool:
        """Is the flagged statement's input one sample given a batch dimension of one:
        `.unsqueeze(0)` or `[None]` in the statement itself or in the assignment, in the
        same function, of a name it reads?"""
        statement = self.index.statement_of(node)
        if _adds_batch_of_one(self.index, statement):
            return True
        names = {n.value for n in self.index.walk(statement) if type(n) is cst.Name}
        scope = self.index.scope_of(statement)
        body = scope.body if type(scope) is cst.FunctionDef else scope
        for other in self.index.walk(body):
            if type(other) is cst.Assign and other is not statement:
                targets = {t.target.value for t in other.targets if type(t.target) is cst.Name}
                if targets & names and _adds_batch_of_one(self.index, other.value):
                    return True
        return self._acts_on_an_observation(statement, scope)

    def _acts_on_an_observation(self, statement: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """Does the statement hand a call one step's observation of an environment (what
        `env.reset()` returns, or the first of what `env.step(action)` hands back), made
        a tensor or not? That is an agent choosing its action, or valuing its state, on
        each step: one observation (a vectorised environment's few), a few KB, however
        long the run. Followed through this function's assignments, `self` attributes
        its class sets from an environment, and a parameter every call in this file
        passes an observation to (`select_action(state)` called with the state of
        `state = env.reset()`)."""
        seen = self._observations(scope)
        return any(
            _is_observation(arg.value, seen)
            for call in self.index.of_types_in(statement, cst.Call)
            for arg in call.args
        )

    def _observations(self, scope: cst.CSTNode) -> _Observed:
        found = self._observed.get(scope)
        if found is not None:
            return found
        self._observed[scope] = _Observed(frozenset(), frozenset())  # a recursive call sees none
        cls = self.index.enclosing_class(scope) if type(scope) is cst.FunctionDef else None
        attributes = self._observed_attributes(cls) if cls is not None else frozenset()
        given = self._observation_parameters(scope) if type(scope) is cst.FunctionDef else set()
        names = self._observation_names(scope, given, attributes)
        found = _Observed(frozenset(names), attributes)
        self._observed[scope] = found
        return found

    def _observed_attributes(self, cls: cst.ClassDef) -> frozenset[str]:
        """The `self.x` a class's methods set to an environment's observation
        (`self.obs = self.env.reset()`, `self.obs = new_obs`)."""
        found = self._observed.get(cls)
        if found is not None:
            return found.names
        attributes: set[str] = set()
        for method in self.index.of_types_in(cls.body, cst.FunctionDef):
            local = _Observed(
                frozenset(self._observation_names(method, set(), frozenset())), frozenset()
            )
            for record in self.bindings.of_scope(method):
                name = record.name
                if (
                    record.kind is BindingKind.ASSIGN
                    and name.startswith("self.")
                    and name.count(".") == 1
                ):
                    if is_environment_reset(record.value) or _is_observation(record.value, local):
                        attributes.add(name[len("self.") :])
        result = frozenset(attributes)
        self._observed[cls] = _Observed(result, frozenset())
        return result

    def _observation_names(
        self, scope: cst.CSTNode, given: set[str], attributes: frozenset[str]
    ) -> set[str]:
        """The names of `scope` that hold an observation, grown from `given` (parameters
        passed one) through the scope's bindings until nothing is added: `obs =
        env.reset()`, `obs, reward, done, info = env.step(action)`, `state = next_state`,
        `s = torch.FloatTensor(state)`."""
        found = set(given)
        records = [
            r
            for r in self.bindings.of_scope(scope)
            if r.kind in (BindingKind.ASSIGN, BindingKind.UNPACKED) and "." not in r.name
        ]
        # how many names each unpacking binds: an environment step gives at least three
        width: dict[int, int] = {}
        for record in records:
            if record.kind is BindingKind.UNPACKED:
                width[id(record.node)] = width.get(id(record.node), 0) + 1
        changed = True
        while changed:
            changed = False
            seen = _Observed(frozenset(found), attributes)
            for record in records:
                if record.name in found or record.value is None:
                    continue
                value = record.value
                if record.kind is BindingKind.ASSIGN:
                    holds = is_environment_reset(value) or _is_observation(value, seen)
                else:
                    count = width[id(record.node)]
                    holds = record.position == 0 and (
                        (is_environment_step(value) and count >= ENVIRONMENT_STEP_RESULTS)
                        or (is_environment_reset(value) and count == 2)
                    )
                if holds:
                    found.add(record.name)
                    changed = True
        return found

    def _observation_parameters(self, func: cst.FunctionDef) -> set[str]:
        """The parameters of `func` every call of it in this file passes an
        observation to (a function handed on as a callback has callers out of sight)."""
        if self.arguments is None or self.callees.handed_on(func):
            return set()
        found = set()
        for param in func.params.params:
            name = param.name.value
            if name in ("self", "cls"):
                continue
            passed = self.arguments.here(func, name)
            if passed and all(
                at.passed is not None
                and _is_observation(at.passed, self._observations(self.index.scope_of(at.site)))
                for at in passed
            ):
                found.add(name)
        return found


@dataclass(frozen=True)
class _Observed:
    """What holds an environment's observation in one scope: its names, and the `self`
    attributes its class sets to one."""

    names: frozenset[str]
    attributes: frozenset[str]


def _self_attribute(node: cst.CSTNode) -> bool:
    return (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == "self"
    )


def _is_observation(expr: cst.CSTNode | None, seen: _Observed) -> bool:
    """Is `expr` an observation of `seen`, or one made a tensor or moved about
    (`torch.FloatTensor(state).to(device)`, `obs[None]`, `torch.tensor([obs])`)?"""
    if isinstance(expr, cst.Name):
        return expr.value in seen.names
    if isinstance(expr, cst.Attribute):
        return _self_attribute(expr) and expr.attr.value in seen.attributes
    if isinstance(expr, cst.Subscript):
        return _is_observation(expr.value, seen)
    if isinstance(expr, cst.List) and len(expr.elements) == 1:
        element = expr.elements[0]
        return isinstance(element, cst.Element) and _is_observation(element.value, seen)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and _is_observation(func.value, seen):
            return True  # `state.to(device)`, `obs.float()`, `s.unsqueeze(0)`
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
        if name in OBSERVATION_TENSOR_BUILDERS:
            first = next((arg.value for arg in expr.args if arg.keyword is None), None)
            return _is_observation(first, seen)
    return False


def _caller_impact(context: CallerContext) -> Impact:
    """How often a call in another file runs: the rules ImpactAnalysis applies in the
    linted file, read off what the caller search saw around the call (the function that
    holds it is judged by its name: its own callers are not followed)."""
    if _is_test_file(context.call.path, context.file_has_tests) or context.test_function:
        return Impact.TEST
    hot = next((loop for loop in context.loops if _hot_loop(loop)), None)
    if hot is not None:
        if hot.periodic:
            return Impact.PER_EPOCH
        if hot.header is not None and _epoch_header(hot.header):
            if any(_hot_loop(other) for other in hot.beside):
                return Impact.PER_EPOCH
        return Impact.PER_BATCH
    if context.function is None:
        return Impact.ONCE
    return _by_name(context.function)


def _hot_loop(loop: EnclosingLoop) -> bool:
    return hot_loop_header(loop.header) or loop.differentiates


def _is_modulo(node: cst.CSTNode) -> bool:
    return type(node) is cst.BinaryOperation and type(node.operator) is cst.Modulo


def _adds_batch_of_one(index: FileIndex, root: cst.CSTNode) -> bool:
    """A batch of one sample made somewhere under root: `x.unsqueeze(0)`,
    `torch.unsqueeze(x, 0)`, `np.expand_dims(x, 0)`, `x[None]`, `x[np.newaxis]`,
    `x.reshape(1, -1)` / `x.view(1, ...)`, or a list of one observation made a tensor
    or array (`torch.tensor([obs])`, `np.array([s_t])`)."""
    for node in index.walk(root):
        if type(node) is cst.Call:
            if _batch_of_one_call(node):
                return True
        elif type(node) is cst.Subscript and node.slice:
            first = node.slice[0].slice
            if type(first) is cst.Index:
                value = first.value
                if type(value) is cst.Name and value.value == "None":
                    return True
                if type(value) is cst.Attribute and value.attr.value == "newaxis":
                    return True
    return False


def _batch_of_one_call(call: cst.Call) -> bool:
    func = call.func
    name = func.attr.value if type(func) is cst.Attribute else getattr(func, "value", None)
    args = [a.value for a in call.args if a.keyword is None]
    if name == "unsqueeze" or name == "expand_dims":
        # the method takes the dimension first; torch.unsqueeze / np.expand_dims second
        dims = [
            a.value
            for a in call.args
            if a.keyword is not None and a.keyword.value in ("dim", "axis")
        ]
        dims += args[-1:] if (len(args) == 1 and name == "unsqueeze") or len(args) == 2 else []
        return any(type(d) is cst.Integer and d.value == "0" for d in dims)
    if name in ("reshape", "view") and len(args) >= 2:
        return type(args[0]) is cst.Integer and args[0].value == "1"
    if (
        name in ARRAY_FROM_LIST_BUILDERS
        and args
        and type(args[0]) is cst.List
        and len(args[0].elements) == 1
    ):
        # `torch.tensor([obs])`: one observation in a list of one
        element = args[0].elements[0]
        return type(element) is cst.Element and isinstance(
            element.value, (cst.Name, cst.Attribute, cst.Subscript)
        )
    return False


def _by_name(name: str) -> Impact:
    if _ONCE_NAMES.match(name):
        return Impact.ONCE
    if _EPOCH_NAMES.match(name):
        return Impact.PER_EPOCH
    return Impact.PER_BATCH


def _text(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)
