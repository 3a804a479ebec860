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
from dataclasses import dataclass, field

import libcst as cst

from gradlint.analysis.arguments import passed_or_default
from gradlint.analysis.bindings import PYTHON_BINDINGS, BindingKind, ScopeBindings, all_params
from gradlint.analysis.callees import CalleeResolver
from gradlint.analysis.caller_arguments import CallerArguments, path_in_caller
from gradlint.analysis.differentiation import DifferentiationReach
from gradlint.analysis.grad_mode import GradMode, GradModeAnalysis
from gradlint.analysis.index import LEAVING_STATEMENTS, FileIndex, dotted_name
from gradlint.analysis.project import MethodCall
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.torch_api import MODULE_MODE_ATTRIBUTES
from gradlint.analysis.train_mode import ModeSwitch, TrainModeAnalysis

_NOT_A_LITERAL = object()
# How many functions a callable is followed through, handed from one to the next.
_MAX_HAND_OVERS = 4


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


@dataclass(frozen=True)
class CallerValue:
    """What one caller gives a parameter: the call (of this file, or one the caller
    search found in another file), the constant, and whether autograd records there."""

    site: cst.Call | MethodCall
    value: SiteValue
    recording: bool


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

    def __init__(
        self,
        index: FileIndex,
        bindings: ScopeBindings,
        callees: CalleeResolver,
        arguments: CallerArguments,
    ):
        self.index = index
        self.bindings = bindings
        self.callees = callees
        self.arguments = arguments
        self._flags: dict[cst.FunctionDef, set[str]] = {}
        self._tests: dict[cst.FunctionDef, bool] = {}
        self._sites: dict[cst.FunctionDef, list[cst.Call]] = {}
        self._lambda_paths: dict[cst.Lambda, list[tuple[cst.Call, ...]]] = {}

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

    def flag_alias(self, func: cst.FunctionDef, name: str) -> tuple[str, bool] | None:
        """(flag, negated) when `name` holds one of the function's flags throughout its
        body: the flag itself, or a local bound once to it or to its negation
        (`not_training = not training`, then `volatile=not_training`)."""
        flags = self.flags_of(func)
        if name in flags:
            return name, False
        records = self.bindings.records(func, PYTHON_BINDINGS).get(name, ())
        if len(records) != 1 or records[0].kind is not BindingKind.ASSIGN:
            return None
        value, negated = records[0].value, False
        if (
            type(value) is cst.UnaryOperation
            and type(value.operator) is cst.Not
            and records[0].whole
        ):
            value, negated = value.expression, True
        if type(value) is cst.Name and value.value in flags:
            return value.value, negated
        return None

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
                        self._flag_condition(func, test, expected, flags) is not None
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
        found = []
        for test, expected in self._tests_above(node, func):
            condition = self._flag_condition(func, test, expected, flags)
            if condition is not None:
                found.append(condition)
        return found

    def _flag_condition(
        self, func: cst.FunctionDef, test: cst.CSTNode, expected: bool, flags: set[str]
    ) -> Condition | None:
        """The condition on one of `flags` that a test coming out as `expected` is: a
        simple test of the flag, or of a local that stands for one (_aliased_test)."""
        if type(test) is cst.Name and test.value not in flags:
            aliased = self._aliased_test(func, test.value)
            if aliased is not None:
                # each atom must come out as given for the alias to: `train_feat =
                # do_train and opt is not None` is true only where `do_train` is
                atoms: list[tuple[cst.CSTNode, bool]] = []
                _atoms(aliased, expected, atoms)
                for atom, atom_expected in atoms:
                    condition = _simple(atom, atom_expected)
                    if condition is not None and condition.param in flags:
                        return condition
                return None
        condition = _simple(test, expected)
        if condition is None or condition.param not in flags:
            return None
        return condition

    def _aliased_test(self, func: cst.FunctionDef, name: str) -> cst.BaseExpression | None:
        """The test a local bound once, as a whole, to a simple test of a flag stands
        for (`train = (phase == "train_no_dev")`, then `if train:`), or to a conjunction
        or disjunction of tests (`train_feat = do_train and opt is not None`); None for
        any other name."""
        records = self.bindings.records(func, PYTHON_BINDINGS).get(name, ())
        if len(records) != 1 or records[0].kind is not BindingKind.ASSIGN or not records[0].whole:
            return None
        value = records[0].value
        if not isinstance(value, cst.BaseExpression):
            return None
        inner = value
        if type(value) is cst.UnaryOperation and type(value.operator) is cst.Not:
            inner = value.expression
        if type(inner) not in (cst.Name, cst.Comparison, cst.BooleanOperation):
            return None
        return value

    def _tests_above(self, node: cst.CSTNode, stop: cst.CSTNode) -> list[tuple[cst.CSTNode, bool]]:
        """The tests that must come out as given for `node` to run, inside `stop`."""
        tests: list[tuple[cst.CSTNode, bool]] = []
        child: cst.CSTNode = node
        for anc in self.index.ancestors(node):
            if anc is stop:
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
        return tests

    # -- in a loop over constants ------------------------------------------------------

    def flag_loops(self, node: cst.CSTNode) -> list[cst.For]:
        """The loops around `node`, in its scope, over a literal list of constants
        (`for phase in ["train", "val"]:`) whose variable nothing else binds: each
        iteration runs the body with the variable one known constant."""
        scope = self.index.scope_of(node)
        found = []
        for loop in self.index.enclosing_loops(node):
            if type(loop) is not cst.For:
                continue
            constants = loop_constants(loop)
            if constants is None:
                continue
            records = self.bindings.records(scope, PYTHON_BINDINGS)
            if len(records.get(constants[0], ())) == 1:
                found.append(loop)
        return found

    def failing_in_loop(self, node: cst.CSTNode, loop: cst.For, value: Constant) -> list[Condition]:
        """The conditions on the loop's variable that fail for `node` in the iteration
        where it is `value`; none for a node outside the loop's body."""
        constants = loop_constants(loop)
        if constants is None or not self.index.is_inside(node, loop.body):
            return []
        name = constants[0]
        found = []
        for test, expected in self._tests_above(node, loop):
            condition = _simple(test, expected)
            if condition is not None and condition.param == name:
                if evaluate(condition, value) is False:
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

    def caller_values(
        self,
        func: cst.FunctionDef,
        param: str,
        grad_mode: GradModeAnalysis,
        _passing: frozenset[cst.FunctionDef] = frozenset(),
    ) -> list[CallerValue]:
        """The constants `func`'s callers give `param` (analysis.caller_arguments): its
        calls in this file (call_sites, an omitted argument giving the default) and,
        for a module-level function or a method, those in the project's other files
        (their literal keyword arguments). A caller that passes a variable says nothing
        and is left out; so is every caller when the function rebinds `param` (its
        value there is not the caller's). A caller in this file that passes a flag of
        its own on (`process_batch(batch, do_train)` calling `step(do_train=do_train)`)
        gives what its own callers give it, at their sites."""
        if param not in self.flags_of(func):
            return []
        found: list[CallerValue] = []
        for argument in self.arguments.here(func, param, self.call_sites(func)):
            constant = constant_of(argument.value) if argument.value is not None else None
            if constant is None and not argument.default:
                found.extend(self._passed_on(argument.value, argument.site, grad_mode, _passing))
                constant = self._attribute_constant(argument.value, argument.site)
            if constant is not None:
                recording = grad_mode.mode_at(argument.site) is GradMode.RECORDING
                value = SiteValue(constant, argument.default)
                found.append(CallerValue(argument.site, value, recording))
        for call, text in self.arguments.literals_elsewhere(func, param):
            constant = constant_of(cst.parse_expression(text))
            if constant is not None:
                found.append(CallerValue(call, SiteValue(constant), call.recording))
        return found

    def passed_on(
        self, expr: cst.CSTNode | None, site: cst.Call, grad_mode: GradModeAnalysis
    ) -> list[CallerValue]:
        """What a caller's own flag, passed on unchanged at `site` as `expr`, gets from
        the caller's callers (_passed_on)."""
        return self._passed_on(expr, site, grad_mode, frozenset())

    def _passed_on(
        self,
        expr: cst.CSTNode | None,
        site: cst.Call,
        grad_mode: GradModeAnalysis,
        passing: frozenset[cst.FunctionDef],
    ) -> list[CallerValue]:
        """The values a caller's own flag parameter, passed on unchanged at `site`, gets
        from that caller's callers (at most three functions deep, none twice)."""
        caller = self.index.scope_of(site)
        if type(expr) is not cst.Name or type(caller) is not cst.FunctionDef:
            return []
        if caller in passing or len(passing) >= 3:
            return []
        # caller_values answers only for a flag of the caller's own
        recording = grad_mode.mode_at(site) is GradMode.RECORDING
        return [
            CallerValue(outer.site, outer.value, outer.recording and recording)
            for outer in self.caller_values(caller, expr.value, grad_mode, passing | {caller})
        ]

    def _attribute_constant(self, expr: cst.CSTNode | None, site: cst.Call) -> Constant | None:
        """The literal `self.flag` holds at a call in a method, when the object's class,
        its bases and its subclasses in this file bind that attribute only once, to that
        literal, and nothing outside them may bind it: jingweiz/pytorch-rl's evaluator
        sets `self.training = False` in `__init__` and passes `self.training` on."""
        name = dotted_name(expr) if type(expr) is cst.Attribute else None
        if name is None or not name.startswith("self.") or name.count(".") != 1:
            return None
        method = self.index.scope_of(site)
        cls = self.index.enclosing_class(method) if type(method) is cst.FunctionDef else None
        if cls is None:
            return None
        # `self` is an instance of the class or of a subclass: the methods that may run
        # on it are theirs and their bases'; a sibling's `self.training = True` binds
        # other objects
        running: list[cst.ClassDef] = []
        for kind in (cls, *self.callees.subclasses(cls)):
            running.extend(c for c in self.callees.lineage(kind) if c not in running)
        bindings = [b for c in running for b in self.bindings.own_attribute_bindings(c, name)]
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN:
            return None
        if self.bindings.bound_outside_classes(name):
            return None  # `agent.training = ...` may bind it on this very object
        if name.partition(".")[2] in MODULE_MODE_ATTRIBUTES and any(
            (self.index.qualified_name(base.value) or "").startswith("torch.")
            for c in running
            for base in c.bases
        ):
            return None  # a torch module's `train()` and `eval()` rebind `self.training`
        constant = constant_of(bindings[0].value)
        return constant if constant is not None and constant.is_literal else None

    def argument_at(
        self, site: cst.Call, func: cst.FunctionDef, param: str
    ) -> tuple[cst.BaseExpression, bool] | None:
        """(the expression `site`, a call of `func`, binds `param` to, whether it is the
        parameter's default); None when that cannot be told (analysis.arguments)."""
        method = self.index.enclosing_class(func) is not None
        return passed_or_default(site, func, param, method=method)

    def holds_at(self, condition: Condition, site: cst.Call, func: cst.FunctionDef) -> bool | None:
        value = self.value_at(site, func, condition.param)
        return evaluate(condition, value.constant) if value is not None else None

    def failing_at(self, node: cst.CSTNode, site: cst.Call) -> list[Condition]:
        """The conditions of `node` that fail at `site`, a call of its function: when
        there is one, `node` does not run in that call."""
        return self.failing_with(node, site, {})

    def site_loops(
        self, site: cst.Call, func: cst.FunctionDef
    ) -> list[tuple[str, str, list[tuple[cst.CSTNode, Constant]]]]:
        """(flag, loop variable, its constants) for each flag of `func` that `site`
        passes as the variable of a loop over constants around it, in the caller
        (`for phase in ["train", "val"]: run_epoch(model, phase)`): each iteration
        calls with the flag one known constant."""
        found: list[tuple[str, str, list[tuple[cst.CSTNode, Constant]]]] = []
        loops = self.flag_loops(site)
        if not loops:
            return found
        for param in sorted(self.flags_of(func)):
            passed = self.argument_at(site, func, param)
            if passed is None or passed[1] or type(passed[0]) is not cst.Name:
                continue
            for loop in loops:
                constants = loop_constants(loop)
                if constants is not None and constants[0] == passed[0].value:
                    found.append((param, constants[0], constants[1]))
                    break
        return found

    def failing_with(
        self, node: cst.CSTNode, site: cst.Call, values: dict[str, Constant]
    ) -> list[Condition]:
        """failing_at, with the flags in `values` known to be those constants at the
        site (one iteration of a loop around it: site_loops)."""
        func = self.index.scope_of(node)
        if type(func) is not cst.FunctionDef or site not in self.call_sites(func):
            return []  # another function's statement: the site says nothing of its flags
        found = []
        for condition in self.conditions(node):
            if condition.param in values:
                holds = evaluate(condition, values[condition.param])
            else:
                holds = self.holds_at(condition, site, func)
            if holds is False:
                found.append(condition)
        return found

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

    def call_sites(self, func: cst.FunctionDef | cst.Lambda) -> list[cst.Call]:
        """The calls of `func` in this file, when they are all in sight: the resolver's
        callers, or, for a closure its factory returns (`main_loop = get_main_loop(...)`
        then `main_loop(phase=...)`), the calls of the name the factory's result is
        bound to. For a lambda, the calls that run it (lambda_sites). Empty when some
        call may be out of sight."""
        if isinstance(func, cst.Lambda):
            return self.lambda_sites(func)
        found = self._sites.get(func)
        if found is None:
            # a name two functions share (cells that redefine it) says nothing sure
            found = [c for c in self.callees.callers_of(func) if self.callees.resolve(c) is func]
            if not found and self.callees.handed_on(func):
                found = self._closure_calls(func)
            self._sites[func] = found
        return found

    def lambda_sites(self, lam: cst.Lambda) -> list[cst.Call]:
        """The calls during which a lambda's body runs, when they are all in sight: the
        last call of each of its lambda_paths."""
        return list(dict.fromkeys(path[-1] for path in self.lambda_paths(lam)))

    def lambda_paths(self, lam: cst.Lambda) -> list[tuple[cst.Call, ...]]:
        """Each way a lambda comes to run, as the calls it passes through, the one that
        runs it last: the calls of the name it is bound to (`policy = lambda x:
        agent.act(x)`, or one element of `net, loss = lambda X: linreg(X, w, b),
        squared_loss`), and, where it (or that name) is handed to a function of this
        file, the handing call, then the calls of the parameter it binds there
        (`evaluate(env, policy)` whose body calls `policy(obs)`), followed on through
        further hand-overs. Handed to a function out of sight (`run_episodes(policy)`
        of another module), the handing call ends the path: the lambda runs during it,
        if at all. Empty when it may also run elsewhere (stored, returned, read by a
        nested function)."""
        found = self._lambda_paths.get(lam)
        if found is None:
            found = []
            if not self._runs_of(lam, found, (), 0):
                found = []
            self._lambda_paths[lam] = found
        return found

    def lambda_entries(self, lam: cst.Lambda, scope: cst.CSTNode) -> list[cst.Call]:
        """The calls in `scope` during which the lambda runs, when all of its runs are
        in sight: its calls there, and the calls there that hand it to a function that
        calls it (`run(env, policy)`): where the caller's model mode holds for it."""
        index = self.index
        calls = (call for path in self.lambda_paths(lam) for call in path)
        return [c for c in dict.fromkeys(calls) if index.scope_of(c) is scope]

    def _runs_of(
        self,
        value: cst.CSTNode,
        found: list[tuple[cst.Call, ...]],
        via: tuple[cst.Call, ...],
        depth: int,
    ) -> bool:
        """Adds to `found` the paths by which the callable `value` (a lambda, or a name
        or parameter holding one) runs, after the calls `via`; False when one of its
        uses is out of sight."""
        index = self.index
        parent = index.parent.get(value)
        if type(parent) is cst.Arg and parent.value is value:
            call = index.parent.get(parent)
            return type(call) is cst.Call and self._handed(call, value, found, via, depth)
        if type(value) is not cst.Lambda:
            return False
        # bound to a name: the binding whose value is the lambda itself
        scope = index.scope_of(value)
        records = self.bindings.records(scope, PYTHON_BINDINGS)
        for name, bound in records.items():
            if any(r.value is value for r in bound):
                return len(bound) == 1 and self._calls_of_name(scope, name, found, via, depth, 1)
        return False

    def _calls_of_name(
        self,
        scope: cst.CSTNode,
        name: str,
        found: list[tuple[cst.Call, ...]],
        via: tuple[cst.Call, ...],
        depth: int,
        targets: int,
    ) -> bool:
        """The runs of a name bound once in `scope` that holds a callable; False when it
        is read otherwise (returned, stored), or by a nested function. `targets`: how
        many times the name is written as a target in the body (1 for a local, 0 for a
        parameter)."""
        uses = self.bindings.uses(scope).get(name, [])
        root = scope.body if type(scope) in (cst.FunctionDef, cst.Lambda) else scope  # type: ignore[attr-defined]
        parents = self.index.parent
        mentions = 0
        for node in self.index.walk(root, into_functions=True):
            if type(node) is cst.Name and node.value == name:
                parent = parents.get(node)
                if (type(parent) is cst.Attribute and parent.attr is node) or (
                    type(parent) is cst.Arg and parent.keyword is node
                ):
                    continue  # `obj.policy`, `f(policy=...)`: not the name
                mentions += 1
        if mentions != len(uses) + targets:  # also read by a nested function, or shadowed
            return False
        for use in uses:
            call = parents.get(use)
            if type(call) is cst.Call and call.func is use:
                found.append((*via, call))
            elif not self._runs_of(use, found, via, depth):
                return False
        return True

    def _handed(
        self,
        call: cst.Call,
        value: cst.CSTNode,
        found: list[tuple[cst.Call, ...]],
        via: tuple[cst.Call, ...],
        depth: int,
    ) -> bool:
        """`value`, a callable, is an argument of `call`: the calls of the parameter it
        binds in the callee of this file, or the call itself when the callee is out of
        sight."""
        callee = self.callees.resolve(call)
        if callee is None:
            found.append((*via, call))
            return True
        if depth >= _MAX_HAND_OVERS:
            return False
        for param in all_params(callee.params):
            name = param.name.value
            bound = self.argument_at(call, callee, name)
            if bound is not None and bound[0] is value and not bound[1]:
                if name not in self.flags_of(callee):
                    return False  # rebound in the callee: not the caller's value throughout
                return self._calls_of_name(callee, name, found, (*via, call), depth + 1, 0)
        return False  # `f(*fns)`, `**kwargs`: out of sight

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


def loop_constants(loop: cst.For) -> tuple[str, list[tuple[cst.CSTNode, Constant]]] | None:
    """(the loop's variable, (element, constant) for each value it takes) when the loop
    runs over a literal of constants: a list or tuple (`for phase in ["train", "val"]:`),
    a dict's keys (`for phase in {"train": a, "val": b}:`, `.keys()`), or its items with
    the key unpacked first (`for phase, loader in {"train": a, "val": b}.items():`)."""
    if loop.asynchronous is not None:
        return None
    target: cst.BaseExpression = loop.target
    iterable = loop.iter
    method = None
    if (
        type(iterable) is cst.Call
        and type(iterable.func) is cst.Attribute
        and type(iterable.func.value) is cst.Dict
        and not iterable.args
    ):
        method, iterable = iterable.func.attr.value, iterable.func.value
    if method == "items":
        if type(target) is not cst.Tuple or len(target.elements) != 2:
            return None
        target = target.elements[0].value
    elif method not in (None, "keys"):
        return None
    if type(target) is cst.Tuple and method is None:
        return _constant_place(target, iterable)
    if type(target) is not cst.Name:
        return None
    elements = (
        _constant_keys(iterable) if type(iterable) is cst.Dict else _constant_elements(iterable)
    )
    return (target.value, elements) if elements else None


def _constant_keys(literal: cst.Dict) -> list[tuple[cst.CSTNode, Constant]]:
    """(key, constant) for a dict literal whose every key is a constant; [] otherwise."""
    found: list[tuple[cst.CSTNode, Constant]] = []
    for element in literal.elements:
        if type(element) is not cst.DictElement:
            return []
        constant = constant_of(element.key)
        if constant is None:
            return []
        found.append((element.key, constant))
    return found


def _constant_place(
    target: cst.Tuple, iterable: cst.BaseExpression
) -> tuple[str, list[tuple[cst.CSTNode, Constant]]] | None:
    """For a loop unpacking a literal of tuples (`for train, loader in [(True, a),
    (False, b)]:`), the first name of the target whose place holds a constant in every
    tuple, with those constants."""
    if type(iterable) is not cst.List and type(iterable) is not cst.Tuple:
        return None
    size = len(target.elements)
    rows: list[list[cst.BaseExpression]] = []
    for element in iterable.elements:
        written = element.value if type(element) is cst.Element else None
        if type(written) is not cst.Tuple or len(written.elements) != size:
            return None
        if any(type(e) is not cst.Element for e in written.elements):
            return None
        rows.append([e.value for e in written.elements])
    for place, name in enumerate(target.elements):
        if type(name) is not cst.Element or type(name.value) is not cst.Name:
            continue
        found: list[tuple[cst.CSTNode, Constant]] = []
        for row in rows:
            constant = constant_of(row[place])
            if constant is None:
                break
            found.append((row[place], constant))
        else:
            if found:
                return name.value.value, found
    return None


def _constant_elements(iterable: cst.BaseExpression) -> list[tuple[cst.CSTNode, Constant]]:
    """(element, constant) for a literal list or tuple of constants; [] otherwise."""
    if type(iterable) is not cst.List and type(iterable) is not cst.Tuple:
        return []
    found: list[tuple[cst.CSTNode, Constant]] = []
    for element in iterable.elements:
        constant = constant_of(element.value) if type(element) is cst.Element else None
        if constant is None:
            return []
        found.append((element.value, constant))
    return found


def _singleton(value: object) -> bool:
    """True, False or None (`1 in (True,)` holds, so membership will not do)."""
    return value is True or value is False or value is None


def _exits(body: cst.BaseSuite) -> bool:
    """Does the block end by leaving (`return`, `raise`, `continue`, `break`)?"""
    if type(body) is cst.IndentedBlock:
        if not body.body:
            return False
        last = body.body[-1]
        return type(last) is cst.SimpleStatementLine and isinstance(
            last.body[-1], LEAVING_STATEMENTS
        )
    if type(body) is cst.SimpleStatementSuite:
        return isinstance(body.body[-1], LEAVING_STATEMENTS)
    return False


@dataclass(frozen=True)
class FlagPath:
    """One way through a forward's function, fixed by its flags, on which the
    forward's graph is never used: a call of the function, or one iteration of a loop
    over constants around the forward."""

    site: cst.CSTNode  # the call, or the loop's element
    call: cst.Call | None  # the call (None for a loop's element): what a fix can wrap
    label: str  # what to say at the site: "called here with train=False, outside no_grad"
    # The model's mode at the forward on that path: the eval switch that holds there;
    # else `trained`, a train switch of the function holds (False: no switch of the
    # function runs, so the caller's mode does).
    switch: ModeSwitch | None
    trained: bool
    # the conditions of a node that fail on this path (it does not run when any does)
    failing: Callable[[cst.CSTNode], list[Condition]] = field(compare=False, repr=False)


@dataclass(frozen=True)
class _Way:
    """A candidate way through a forward's function, before its differentiations and
    mode are asked: what FlagPath reports, and what decides it."""

    site: cst.CSTNode  # where to say so: the call, the loop's element, a wrapper's call
    call: cst.Call | None  # the call of the function the flags are read at (None: a loop)
    failing: Callable[[cst.CSTNode], list[Condition]]
    describe: Callable[[list[Condition]], str]
    values: dict[str, Constant] | None  # flags the way fixes beyond the call's own
    wrap: cst.Call | None  # the call a fix wraps; None when no one call runs the way


class FlagPaths:
    """A forward's fate on each way through its function that flags fix (a call that
    passes them, an iteration of a loop over constants): which mode switches and which
    differentiations of its result run there."""

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
        """The ways through the forward's function, with autograd recording, on which
        the forward runs but no differentiation of its result does: the calls of the
        function in sight (not under `no_grad` there) and the iterations of a loop over
        constants around it. Each with the mode of `model` that holds there. Empty
        when a flag that decides is unknown."""
        candidates = self._call_candidates(forward) + self._loop_candidates(forward)
        if not candidates or self.grad_mode.mode_at(forward) is not GradMode.RECORDING:
            return []
        events = self.reach.differentiations_of(forward)
        if not events:
            return []  # nothing a flag could skip: the plain question decides
        switches = self._switches(self.index.scope_of(forward), model)
        found: list[FlagPath] = []
        for way in candidates:
            if self._gradless_on_path(forward, way.failing):
                continue
            skipped: list[Condition] = []
            for event in events:
                kept = way.failing(event.call)
                if not kept:
                    break
                skipped.extend(kept)
            else:
                mode = self._mode_on_path(
                    switches, model, forward, way.failing, way.call, way.values
                )
                if mode is None:
                    continue  # train or eval, depending on the way through the function
                switch, trained, unrun = mode
                label = f"{way.describe(skipped + unrun)}, outside no_grad"
                found.append(FlagPath(way.site, way.wrap, label, switch, trained, way.failing))
        return found

    def _gradless_on_path(
        self, forward: cst.Call, failing: Callable[[cst.CSTNode], list[Condition]]
    ) -> bool:
        """Is the forward, on this path, inside a `with` whose manager the flag picks
        and picks one that stops recording (`with (torch.enable_grad() if is_train else
        torch.no_grad()):`, SimCLR's linear evaluation)?"""
        scope = self.index.scope_of(forward)
        for anc in self.index.ancestors(forward):
            if anc is scope:
                break
            if type(anc) is not cst.With:
                continue
            for item in anc.items:
                entered = self.grad_mode.entered(item.item)
                chosen = entered
                while type(chosen) is cst.IfExp:
                    chosen = chosen.orelse if failing(chosen.body) else chosen.body
                if chosen is not entered and (
                    self.grad_mode.context_effect(chosen) is GradMode.NOT_RECORDING
                ):
                    return True
        return False

    def runs_on(self, path: FlagPath) -> Callable[[cst.CSTNode], bool]:
        """May a node run on the path?"""
        failing = path.failing
        return lambda node: not failing(node)

    def _call_candidates(self, forward: cst.Call) -> list[_Way]:
        """The ways through the forward's function its recording calls in this file take,
        where the forward may run: one per call, per iteration of a loop over constants
        around the call, or per call of a wrapper that hands the call its own flag."""
        conditions = self.conditions
        func = self.index.scope_of(forward)
        # cheapest first: most functions test no flag, or have no call in sight
        if type(func) is not cst.FunctionDef or not conditions.tests_a_flag(func):
            return []
        found: list[_Way] = []
        for site in conditions.call_sites(func):
            if (
                self.grad_mode.mode_at(site) is not GradMode.RECORDING
                or not conditions.runs_at(forward, site)
                # what the call returns may carry the graph to a backward of the caller's
                or self.reach.result_is_differentiated(site)
            ):
                continue

            looped = conditions.site_loops(site, func)
            if looped:
                # one way through the function per iteration of the caller's loop
                param, variable, elements = looped[0]
                for _, value in elements:
                    values = {param: value}
                    if conditions.failing_with(forward, site, values):
                        continue

                    def failing_in(node, site=site, values=values):
                        return conditions.failing_with(node, site, values)

                    def describe_in(found, param=param, variable=variable, value=value):
                        return f"called here with {param}={value.text} (`{variable}` of the loop)"

                    # one iteration of a loop around the call: the call also runs the
                    # others, which may train, so there is no call to wrap
                    found.append(_Way(site, site, failing_in, describe_in, values, None))
                continue

            passed_on = self._flags_passed_on(func, site)
            if passed_on:
                # the caller hands its own flag on (`process(b, do_train)` calling
                # `run(b, do_train=do_train)`): one way per call of the caller that
                # gives it a constant, the call to wrap being that one
                for outer, param, given in passed_on:
                    values = {param: given.constant}
                    if conditions.failing_with(forward, site, values) or (
                        self.reach.result_is_differentiated(outer)
                    ):
                        continue

                    def failing_on(node, site=site, values=values):
                        return conditions.failing_with(node, site, values)

                    def describe_on(found, param=param, given=given, site=site):
                        caller = self.index.scope_of(site)
                        through = caller.name.value if type(caller) is cst.FunctionDef else ""
                        return f"called here with {given.describe(param)}, passed on by `{through}`"

                    found.append(_Way(outer, site, failing_on, describe_on, values, outer))
                continue

            def failing(node, site=site):
                return conditions.failing_at(node, site)

            def describe(found, site=site, func=func):
                return f"called here with {conditions.describe(found, site, func)}"

            found.append(_Way(site, site, failing, describe, None, site))
        return found

    def _flags_passed_on(
        self, func: cst.FunctionDef, site: cst.Call
    ) -> list[tuple[cst.Call, str, SiteValue]]:
        """(a call of the caller in this file, the flag, what that call gives it) for each
        flag of `func` that `site` passes as a flag of the caller's own, when that call
        records (analysis.path_conditions' caller_values follows the flag there)."""
        conditions = self.conditions
        found: list[tuple[cst.Call, str, SiteValue]] = []
        for param in sorted(conditions.flags_of(func)):
            passed = conditions.argument_at(site, func, param)
            if passed is None or passed[1] or type(passed[0]) is not cst.Name:
                continue
            for outer in conditions.passed_on(passed[0], site, self.grad_mode):
                if type(outer.site) is cst.Call and outer.recording:
                    found.append((outer.site, param, outer.value))
        return found

    def _loop_candidates(self, forward: cst.Call) -> list[_Way]:
        """A way for each iteration of a loop over constants around the forward in which
        the forward may run (no call of the function fixes it, so there is none to
        wrap)."""
        conditions = self.conditions
        found: list[_Way] = []
        for loop in conditions.flag_loops(forward):
            constants = loop_constants(loop)
            assert constants is not None
            name, elements = constants
            for element, value in elements:

                def failing(node, loop=loop, value=value):
                    return conditions.failing_in_loop(node, loop, value)

                if failing(forward):
                    continue

                def describe(found, name=name, value=value):
                    return f"the loop runs with {name}={value.text} here"

                found.append(_Way(element, None, failing, describe, None, None))
        return found

    def _switches(self, scope: cst.CSTNode, model: str) -> list[ModeSwitch]:
        return [
            s
            for s in self.train_mode.switches()
            if s.model == model and self.index.scope_of(s.anchor) is scope
        ]

    def _mode_on_path(
        self,
        switches: list[ModeSwitch],
        model: str,
        use: cst.CSTNode,
        failing: Callable[[cst.CSTNode], list[Condition]],
        site: cst.Call | None,
        values: dict[str, Constant] | None = None,
    ) -> tuple[ModeSwitch | None, bool, list[Condition]] | None:
        """(the eval switch that holds at `use` on the path, whether a train switch
        holds there instead, the conditions that kept the other switches from
        running); None when the switches that run and reach it disagree. With no switch
        of the function's own on the way, the caller's: the argument the call `site`
        passes for `model` in eval mode there. `values`: the flags the path gives."""
        skipped: list[Condition] = []
        running: list[ModeSwitch] = []
        for switch in switches:
            kept = failing(switch.call)
            if kept:
                skipped.extend(kept)
            else:
                running.append(switch)
        reaching = self.index.reaching([s.anchor for s in running], use) if running else []
        chosen = [s for s in running if s.anchor in reaching]
        if not chosen:
            caller = self._callers_switch(model, use, site) if site is not None else None
            return caller, False, skipped
        # `model.train(training)`: the mode the call's flag picks
        evals = [self._to_eval(s, site, values) for s in chosen]
        if any(e is None for e in evals):
            return None
        if all(
            e and (s.within is None or self.index.is_inside(use, s.within.body))
            for s, e in zip(chosen, evals, strict=True)
        ):
            return chosen[-1], False, skipped
        if not any(evals):
            return None, True, skipped
        return None

    def _to_eval(
        self, switch: ModeSwitch, site: cst.Call | None, values: dict[str, Constant] | None
    ) -> bool | None:
        """Does the switch put the model in eval mode on the way through its function
        that `site` takes (`values`: the flags one iteration of a loop around the site
        gives it)? None when its flag is not known there."""
        if switch.flag is None:
            return switch.to_eval
        if values is not None and switch.flag in values:
            literal = values[switch.flag].literal
            return not literal if literal is True or literal is False else None
        func = self.index.scope_of(switch.anchor)
        if site is None or type(func) is not cst.FunctionDef:
            return None
        method = self.index.enclosing_class(func) is not None
        return switch.to_eval_at(site, func, method=method)

    def _callers_switch(self, model: str, use: cst.CSTNode, site: cst.Call) -> ModeSwitch | None:
        """The eval switch of the argument `site` passes for the parameter `model`."""
        func = self.index.scope_of(use)
        if type(func) is not cst.FunctionDef or model not in self.conditions.flags_of(func):
            return None  # not a parameter, or one the function rebinds
        method = self.index.enclosing_class(func) is not None
        passed = path_in_caller(site, func, model, method=method)
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
            method = self.index.enclosing_class(func) is not None
            for param in summary.forwarded_params:
                if path_in_caller(call, func, param, method=method) in models:
                    for forward in summary.forwards[param]:
                        yield forward, param
