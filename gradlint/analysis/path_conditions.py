"""Path conditions for simple flags, and the values callers give them.

Training code often runs one function for both phases and picks the phase with a flag:
`if train: model.train() else: model.eval()`, the backward under `if train:`, one call
with `train=True` and one with `train=False`. Within the function both switches reach the
forward and the backward may run, so nothing can be said there; at a call site that passes
a constant the flag is known, and with it which of those statements run.

A *condition* is a simple test of one of the function's own parameters that a statement is
under: `if p:`, `if not p:`, `if p == CONST` / `!=` / `is` / `is not`, the `elif` / `else`
polarity of such a test, the conjuncts of `and` (the `or` ones on the `else` side), and an
earlier `if p: return` (or `raise`, `continue`, `break`) in an enclosing block. CONST is a
literal or a dotted constant (`LoopPhase.TRAIN`). A parameter the function rebinds anywhere
is no flag (its value at the test is not the caller's). Any other test adds no condition:
the statement may run.

A call site gives a parameter a *value*: the argument (keyword or positional) or, when it
is omitted, the default; only literals and dotted constants are values, anything else
(`args.train`) is unknown. A condition then holds, fails or is unknown at the call site.
Unknown never counts as failing: rules stay silent where a flag cannot be read.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.autograd_calls import DiffEvent
from gradlint.analysis.bindings import PYTHON_BINDINGS, ScopeBindings, all_params
from gradlint.analysis.callees import CalleeResolver
from gradlint.analysis.differentiation import DifferentiationReach
from gradlint.analysis.grad_mode import GradMode, GradModeAnalysis
from gradlint.analysis.index import FileIndex, dotted_name
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.train_mode import ModeSwitch, TrainModeAnalysis

_NOT_A_LITERAL = object()
# Statements that end a block's run: an `if p: return` before a statement guards it.
_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


@dataclass(frozen=True)
class Constant:
    """A value a flag can be compared with: a literal (`False`, `"train"`, `0`) or a
    dotted constant (`LoopPhase.TRAIN`, `TRAIN`)."""

    text: str
    literal: object = _NOT_A_LITERAL

    @property
    def is_literal(self) -> bool:
        return self.literal is not _NOT_A_LITERAL


@dataclass(frozen=True)
class Condition:
    """`param` tested by `op` ("truth", "==", "is") against `constant`; the statement
    runs only when the test comes out as `expected`."""

    param: str
    op: str
    constant: Constant | None
    expected: bool


@dataclass(frozen=True)
class SiteValue:
    """What one call site gives a parameter: the constant, and whether it is the
    parameter's default (the argument was omitted)."""

    constant: Constant
    default: bool = False

    def describe(self, param: str) -> str:
        text = f"{param}={self.constant.text}"
        return f"{text} (its default)" if self.default else text


def constant_of(expr: cst.CSTNode | None) -> Constant | None:
    """The constant an expression is, or None when it is not one (`args.train`)."""
    if expr is None:
        return None
    kind = type(expr)
    if kind is cst.Name:
        name = expr.value  # type: ignore[attr-defined]
        if name in ("True", "False", "None"):
            return Constant(name, {"True": True, "False": False, "None": None}[name])
        if name.isupper():
            return Constant(name)  # a module constant, `TRAIN`
        return None
    if kind in (cst.Integer, cst.Float, cst.SimpleString, cst.UnaryOperation):
        code = cst.Module([]).code_for_node(expr)
        try:
            value = ast.literal_eval(code)
        except (ValueError, SyntaxError):
            return None
        return Constant(code, value)
    if kind is cst.Attribute:
        name = dotted_name(expr)
        if name is None:
            return None
        owner, _, member = name.rpartition(".")
        # `LoopPhase.TRAIN`, `Mode.train`: a member of a class; `args.train`,
        # `self.training` are variables
        if owner.rpartition(".")[2][:1].isupper():
            return Constant(name)
        return None
    return None


def _atoms(test: cst.BaseExpression, expected: bool, out: list[tuple[cst.CSTNode, bool]]):
    """The tests that must come out as given for `test` to come out as `expected`."""
    kind = type(test)
    if kind is cst.UnaryOperation and type(test.operator) is cst.Not:  # type: ignore[attr-defined]
        _atoms(test.expression, not expected, out)  # type: ignore[attr-defined]
    elif kind is cst.BooleanOperation:
        operator = type(test.operator)  # type: ignore[attr-defined]
        if (operator is cst.And and expected) or (operator is cst.Or and not expected):
            _atoms(test.left, expected, out)  # type: ignore[attr-defined]
            _atoms(test.right, expected, out)  # type: ignore[attr-defined]
    else:
        out.append((test, expected))


def _simple(test: cst.CSTNode, expected: bool) -> Condition | None:
    """The condition one test is, when it is a simple test of a name."""
    if type(test) is cst.Name:
        if constant_of(test) is not None:
            return None
        return Condition(test.value, "truth", None, expected)
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    operator = type(target.operator)
    if operator in (cst.Equal, cst.NotEqual):
        op, positive = "==", operator is cst.Equal
    elif operator in (cst.Is, cst.IsNot):
        op, positive = "is", operator is cst.Is
    else:
        return None
    left, right = test.left, target.comparator
    if type(left) is not cst.Name or constant_of(left) is not None:
        left, right = right, left  # `LoopPhase.TRAIN == phase`
    if type(left) is not cst.Name or constant_of(left) is not None:
        return None
    constant = constant_of(right)
    if constant is None:
        return None
    return Condition(left.value, op, constant, expected if positive else not expected)


def evaluate(condition: Condition, value: Constant) -> bool | None:
    """Does the condition hold when its parameter is `value`? None when that cannot be
    told (a dotted constant's truth, constants of two different classes)."""
    if condition.op == "truth":
        if not value.is_literal:
            return None  # an IntEnum member may be falsy
        outcome = bool(value.literal)
    else:
        constant = condition.constant
        assert constant is not None
        if constant.is_literal and value.is_literal:
            if condition.op == "is":
                if not (_singleton(constant.literal) and _singleton(value.literal)):
                    return None  # `is` on other literals is not guaranteed
                outcome = value.literal is constant.literal
            else:
                outcome = value.literal == constant.literal
        elif not constant.is_literal and not value.is_literal:
            if constant.text == value.text:
                outcome = True
            elif (
                "." in constant.text
                and constant.text.rpartition(".")[0] == value.text.rpartition(".")[0]
            ):
                outcome = False  # two members of one enum
            else:
                return None
        else:
            return None
    return outcome == condition.expected


class PathConditions:
    """The conditions statements are under inside their functions, and what they come
    to at the functions' call sites."""

    def __init__(self, index: FileIndex, bindings: ScopeBindings, callees: CalleeResolver):
        self.index = index
        self.bindings = bindings
        self.callees = callees
        self._flags: dict[cst.FunctionDef, set[str]] = {}
        self._tests: dict[cst.FunctionDef, bool] = {}
        self._sites: dict[cst.FunctionDef, list[cst.Call]] = {}

    # -- inside the function ---------------------------------------------------------

    def flags_of(self, func: cst.FunctionDef) -> set[str]:
        """The parameters of `func` that keep the caller's value throughout the body."""
        found = self._flags.get(func)
        if found is None:
            records = self.bindings.records(func, PYTHON_BINDINGS)
            found = {
                p.name.value
                for p in all_params(func.params)
                if len(records.get(p.name.value, ())) == 1
            }
            self._flags[func] = found
        return found

    def tests_a_flag(self, func: cst.FunctionDef) -> bool:
        """Does the function's body test one of its flags at all? Most do not, and then
        no statement of it is under a condition."""
        found = self._tests.get(func)
        if found is None:
            flags = self.flags_of(func)
            found = False
            for node in self.index.walk(func.body):
                if type(node) is cst.If or type(node) is cst.IfExp:
                    tests: list[tuple[cst.CSTNode, bool]] = []
                    _atoms(node.test, True, tests)
                    _atoms(node.test, False, tests)
                    if any(
                        (c := _simple(test, expected)) is not None and c.param in flags
                        for test, expected in tests
                    ):
                        found = True
                        break
            self._tests[func] = found
        return found

    def conditions(self, node: cst.CSTNode) -> list[Condition]:
        """The simple flag conditions `node` runs under inside its function."""
        func = self.index.scope_of(node)
        if type(func) is not cst.FunctionDef:
            return []
        flags = self.flags_of(func)
        if not flags:
            return []
        tests: list[tuple[cst.CSTNode, bool]] = []
        child: cst.CSTNode = node
        for anc in self.index.ancestors(node):
            if anc is func:
                break
            kind = type(anc)
            if kind is cst.If or kind is cst.IfExp:
                if child is anc.body:
                    _atoms(anc.test, True, tests)
                elif child is anc.orelse:
                    _atoms(anc.test, False, tests)
            elif kind is cst.IndentedBlock:
                for stmt in anc.body:
                    if stmt is child:
                        break
                    if type(stmt) is cst.If and stmt.orelse is None and _exits(stmt.body):
                        _atoms(stmt.test, False, tests)  # `if not train: return acc`
            child = anc
        found = []
        for test, expected in tests:
            condition = _simple(test, expected)
            if condition is not None and condition.param in flags:
                found.append(condition)
        return found

    # -- at a call site --------------------------------------------------------------

    def value_at(self, site: cst.Call, func: cst.FunctionDef, param: str) -> SiteValue | None:
        """The constant `site`, a call of `func`, gives `param`; None when unknown."""
        found = self.argument_at(site, func, param)
        if found is None:
            return None
        argument, default = found
        constant = constant_of(argument)
        return SiteValue(constant, default) if constant is not None else None

    def argument_at(
        self, site: cst.Call, func: cst.FunctionDef, param: str
    ) -> tuple[cst.BaseExpression, bool] | None:
        """(the expression `site`, a call of `func`, binds `param` to, whether it is the
        parameter's default); None when that cannot be told."""
        declared = next((p for p in all_params(func.params) if p.name.value == param), None)
        if declared is None:
            return None
        positional = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
        if positional and positional[0] in ("self", "cls") and type(site.func) is cst.Attribute:
            positional = positional[1:]
        index = 0
        for arg in site.args:
            if arg.star:
                return None  # `f(*args)`, `f(**options)`: which is which is out of sight
            if arg.keyword is not None:
                if arg.keyword.value == param:
                    return arg.value, False
                continue
            if index < len(positional) and positional[index] == param:
                return arg.value, False
            index += 1
        return (declared.default, True) if declared.default is not None else None

    def holds_at(self, condition: Condition, site: cst.Call, func: cst.FunctionDef) -> bool | None:
        value = self.value_at(site, func, condition.param)
        return evaluate(condition, value.constant) if value is not None else None

    def failing_at(self, node: cst.CSTNode, site: cst.Call) -> list[Condition]:
        """The conditions of `node` that fail at `site`, a call of its function: when
        there is one, `node` does not run in that call."""
        func = self.index.scope_of(node)
        if type(func) is not cst.FunctionDef or site not in self.call_sites(func):
            return []  # another function's statement: the site says nothing of its flags
        return [c for c in self.conditions(node) if self.holds_at(c, site, func) is False]

    def runs_at(self, node: cst.CSTNode, site: cst.Call) -> bool:
        """May `node` run in the call `site`? False only when a condition fails."""
        return not self.failing_at(node, site)

    def describe(self, conditions: list[Condition], site: cst.Call, func: cst.FunctionDef) -> str:
        """`train=False`, `phase=LoopPhase.TEST`: what the site gives the flags that
        decide."""
        seen: list[str] = []
        for condition in conditions:
            if condition.param in seen:
                continue
            seen.append(condition.param)
        parts = []
        for param in seen:
            value = self.value_at(site, func, param)
            if value is not None:
                parts.append(value.describe(param))
        return ", ".join(parts)

    # -- the call sites --------------------------------------------------------------

    def call_sites(self, func: cst.FunctionDef) -> list[cst.Call]:
        """The calls of `func` in this file, when they are all in sight: the resolver's
        callers, or, for a closure its factory returns (`main_loop = get_main_loop(...)`
        then `main_loop(phase=...)`), the calls of the name the factory's result is
        bound to. Empty when some call may be out of sight."""
        found = self._sites.get(func)
        if found is None:
            # a name two functions share (cells that redefine it) says nothing sure
            found = [c for c in self.callees.callers_of(func) if self.callees.resolve(c) is func]
            if not found and self.callees.handed_on(func):
                found = self._closure_calls(func)
            self._sites[func] = found
        return found

    def _closure_calls(self, func: cst.FunctionDef) -> list[cst.Call]:
        index = self.index
        factory = index.scope_of(func)
        if type(factory) is not cst.FunctionDef or index.enclosing_class(factory) is not None:
            return []
        name = func.name.value
        # the closure leaves its factory only by being returned, and always is
        returns = [n for n in index.walk(factory.body) if type(n) is cst.Return]
        if not returns or not all(
            type(r.value) is cst.Name and r.value.value == name for r in returns
        ):
            return []
        uses = self.bindings.uses(factory).get(name, [])
        if len(uses) != len(returns):
            return []
        calls: list[cst.Call] = []
        for made in self.callees.callers_of(factory):
            statement = index.parent.get(made)
            if (
                type(statement) is not cst.Assign
                or statement.value is not made
                or len(statement.targets) != 1
                or type(statement.targets[0].target) is not cst.Name
            ):
                return []
            bound = statement.targets[0].target.value
            scope = index.scope_of(made)
            if len(self.bindings.records(scope, PYTHON_BINDINGS).get(bound, ())) != 1:
                return []
            for use in self.bindings.uses(scope).get(bound, []):
                call = index.parent.get(use)
                if type(call) is not cst.Call or call.func is not use:
                    return []  # handed on again: more calls out of sight
                calls.append(call)
        return calls


def _singleton(value: object) -> bool:
    """True, False or None (`1 in (True,)` holds, so membership will not do)."""
    return value is True or value is False or value is None


def _exits(body: cst.BaseSuite) -> bool:
    """Does the block end by leaving (`return`, `raise`, `continue`, `break`)?"""
    if type(body) is cst.IndentedBlock:
        if not body.body:
            return False
        last = body.body[-1]
        return type(last) is cst.SimpleStatementLine and isinstance(last.body[-1], _EXITS)
    if type(body) is cst.SimpleStatementSuite:
        return isinstance(body.body[-1], _EXITS)
    return False


@dataclass(frozen=True)
class FlagPath:
    """One call of a function on whose path a forward's graph is never used."""

    site: cst.Call
    flags: str  # `train=False`: what the site gives the flags that decide
    # The model's mode at the forward on that path: the eval switch that holds there;
    # else `trained`, a train switch of the function holds (False: no switch of the
    # function runs, so the caller's mode does).
    switch: ModeSwitch | None
    trained: bool


class FlagPaths:
    """A forward's fate in each call of its function, read through the flags the call
    gives: which mode switches and which differentiations of its result run there."""

    def __init__(
        self,
        conditions: PathConditions,
        grad_mode: GradModeAnalysis,
        train_mode: TrainModeAnalysis,
        reach: DifferentiationReach,
        summaries: FunctionSummaries,
    ) -> None:
        self.summaries = summaries
        self.conditions = conditions
        self.index = conditions.index
        self.grad_mode = grad_mode
        self.train_mode = train_mode
        self.reach = reach

    def unused_paths(self, forward: cst.Call, model: str) -> list[FlagPath]:
        """The recording calls of the forward's function (not under `no_grad` there) in
        which the forward runs but no differentiation of its result does, with the
        eval switch of `model` that holds on that path (None when no switch of it in
        the function runs there). Empty when any flag that decides is unknown."""
        func = self.index.scope_of(forward)
        # cheapest first: most functions have no flag, or no call in sight
        if type(func) is not cst.FunctionDef or not self.conditions.tests_a_flag(func):
            return []
        sites = [
            site
            for site in self.conditions.call_sites(func)
            if self.grad_mode.mode_at(site) is GradMode.RECORDING
            and self.conditions.runs_at(forward, site)
            # what the call returns may carry the graph to a backward of the caller's
            and not self.reach.result_is_differentiated(site)
        ]
        if not sites or self.grad_mode.mode_at(forward) is not GradMode.RECORDING:
            return []
        events = self.reach.differentiations_of(forward)
        if not events:
            return []  # nothing a flag could skip: the plain question decides
        switches = self._switches(func, model)
        found: list[FlagPath] = []
        for site in sites:
            failing = self._all_fail(events, site)
            if failing is None:
                continue
            mode = self._mode_on_path(switches, model, forward, site)
            if mode is None:
                continue  # train or eval, depending on the way through the function
            switch, trained, skipped = mode
            flags = self.conditions.describe(failing + skipped, site, func)
            found.append(FlagPath(site, flags, switch, trained))
        return found

    def runs_on(self, path: FlagPath) -> Callable[[cst.CSTNode], bool]:
        """May a node run on the path (in that call of its function)?"""
        conditions, site = self.conditions, path.site
        return lambda node: conditions.runs_at(node, site)

    def _all_fail(self, events: list[DiffEvent], site: cst.Call) -> list[Condition] | None:
        """The failing conditions that keep every event from running at `site`; None
        when one may run."""
        failing: list[Condition] = []
        for event in events:
            found = self.conditions.failing_at(event.call, site)
            if not found:
                return None
            failing.extend(found)
        return failing

    def _switches(self, func: cst.FunctionDef, model: str) -> list[ModeSwitch]:
        return [
            s
            for s in self.train_mode.switches()
            if s.model == model and self.index.scope_of(s.anchor) is func
        ]

    def _mode_on_path(
        self, switches: list[ModeSwitch], model: str, use: cst.CSTNode, site: cst.Call
    ) -> tuple[ModeSwitch | None, bool, list[Condition]] | None:
        """(the eval switch that holds at `use` in the call `site`, whether a train
        switch holds there instead, the conditions that kept the other switches from
        running); None when the switches that run and reach it disagree. With no switch
        of the function's own on the way, the caller's: the argument `site` passes for
        `model` in eval mode there."""
        skipped: list[Condition] = []
        running: list[ModeSwitch] = []
        for switch in switches:
            failing = self.conditions.failing_at(switch.anchor, site)
            if failing:
                skipped.extend(failing)
            else:
                running.append(switch)
        reaching = self.index.reaching([s.anchor for s in running], use) if running else []
        chosen = [s for s in running if s.anchor in reaching]
        if not chosen:
            return self._callers_switch(model, use, site), False, skipped
        if all(
            s.to_eval and (s.within is None or self.index.is_inside(use, s.within.body))
            for s in chosen
        ):
            return chosen[-1], False, skipped
        if not any(s.to_eval for s in chosen):
            return None, True, skipped
        return None

    def _callers_switch(self, model: str, use: cst.CSTNode, site: cst.Call) -> ModeSwitch | None:
        """The eval switch of the argument `site` passes for the parameter `model`."""
        func = self.index.scope_of(use)
        if type(func) is not cst.FunctionDef or model not in self.conditions.flags_of(func):
            return None  # not a parameter, or one the function rebinds
        found = self.conditions.argument_at(site, func, model)
        passed = dotted_name(found[0]) if found is not None and not found[1] else None
        return self.train_mode.eval_switch_at(passed, site) if passed is not None else None

    def forwards_of_arguments(self, scope: cst.CSTNode, models: set[str]):
        """(forward, parameter) for each forward of a parameter inside this file's
        functions that `scope` calls with one of `models` for it: where a model the
        caller switched to eval mode is run, judged per call by `unused_paths`."""
        summaries = self.summaries
        body = scope.body if type(scope) is cst.FunctionDef else scope
        for call in self.index.walk(body):
            if type(call) is not cst.Call:
                continue
            func = summaries.resolve(call)
            if func is None:
                continue
            summary = summaries.of(func)
            for param in summary.forwarded_params:
                if dotted_name(summary.forwarded_argument(call, param)) in models:
                    for forward in summary.forwards[param]:
                        yield forward, param
