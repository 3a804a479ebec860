"""What an operation saves for backward, from the table measured on torch itself
(`gradlint/data/saved_tensors.json`, written by `python -m runtime_check saved-tensors
--write`, checked against the installed torch by tests/test_saved_tensors.py).

Whether an operand is saved depends on which operands require grad: `w * x` saves `x`
for `w`'s gradient and `w` for `x`'s. So each operand gets the set of statuses it may
have here (a tensor that requires grad, one that does not, a Python number), read from
the abstract values, and an operand (or the output) counts as saved only when the
table saves it for *every* combination of those statuses. A combination the table
lacks (autograd records nothing, or the call is not one torch accepts) proves nothing,
so anything unknown keeps the answer at "not proven".
"""

from __future__ import annotations

import ast
import itertools
import json
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources

import libcst as cst

from gradlint.analysis.autograd_calls import AutogradCalls, DiffEvent
from gradlint.analysis.bindings import BindingKind
from gradlint.analysis.differentiation import DifferentiationReach
from gradlint.analysis.forwards import ForwardAnalysis
from gradlint.analysis.grad_mode import GradMode, GradModeAnalysis
from gradlint.analysis.index import FileIndex, dotted_name, own_method
from gradlint.analysis.last_activation import LastActivation, LastActivations, merged
from gradlint.analysis.loops import LoopAnalysis
from gradlint.analysis.method_sequence import MethodSequences, Run
from gradlint.analysis.optimizers import OptimizerHoldings, ParameterStep
from gradlint.analysis.tensors import TensorFacts
from gradlint.analysis.torch_api import SINGLE_OP_LAYERS
from gradlint.analysis.values import Kind, ValueAnalysis

GRAD, TENSOR, NUMBER = "grad", "tensor", "number"
_ANY = frozenset({GRAD, TENSOR, NUMBER})
_A_TENSOR = frozenset({GRAD, TENSOR})
_CARRIES_GRAPH = frozenset({Kind.LEAF, Kind.GRAPH})

_OPERATORS: dict[type, str] = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Divide: "/",
    cst.Power: "**",
    cst.MatrixMultiply: "@",
}

Cases = dict[tuple[str, ...], tuple[frozenset[int], bool]]


@dataclass(frozen=True)
class Table:
    torch: str
    ops: dict[str, Cases]

    def arity(self, key: str) -> int:
        """The most operands a case of `key` has (`F.linear` has cases with and
        without a bias); the positional arguments past it are options."""
        return max(len(case) for case in self.ops[key])


@cache
def table() -> Table:
    text = resources.files("gradlint").joinpath("data/saved_tensors.json").read_text("utf-8")
    data = json.loads(text)
    ops: dict[str, Cases] = {}
    for key, cases in data["ops"].items():
        ops[key] = {
            tuple(case["operands"]): (frozenset(case["saves"]), bool(case["output"]))
            for case in cases
        }
    return Table(data["torch"], ops)


@dataclass(frozen=True)
class Saved:
    """What one recorded operation is proven to save."""

    operation: cst.BaseExpression
    key: str
    operands: tuple[cst.BaseExpression, ...]  # the operands proven saved
    output: bool  # its result is proven saved


class SavedForBackward:
    def __init__(
        self,
        index: FileIndex,
        values: ValueAnalysis,
        tensors: TensorFacts,
        grad_mode: GradModeAnalysis,
        forwards: ForwardAnalysis,
    ) -> None:
        self.index = index
        self.values = values
        self.tensors = tensors
        self.grad_mode = grad_mode
        self.forwards = forwards
        self._memo: dict[cst.CSTNode, Saved | None] = {}
        # class name -> its `ast`, for analysis.last_activation
        self._classes: dict[str, ast.ClassDef | None] = {}

    def operation(self, expr: cst.CSTNode) -> tuple[str, list[cst.BaseExpression]] | None:
        """(table key, operand expressions) when `expr` is an operation of the table:
        an operator, a torch function, or a tensor method (receiver first)."""
        ops = table().ops
        if type(expr) is cst.BinaryOperation:
            key = _OPERATORS.get(type(expr.operator))
            return (key, [expr.left, expr.right]) if key else None
        if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
            return "-x", [expr.expression]
        if type(expr) is cst.Subscript:
            return "[]", [expr.value]
        if type(expr) is not cst.Call:
            return None
        if any(a.star for a in expr.args) or any(
            a.keyword is not None and a.keyword.value in ("out", "inplace") for a in expr.args
        ):
            return None
        positional = [a.value for a in expr.args if a.keyword is None]
        qualified = self.index.qualified_name(expr.func) or ""
        if qualified in ops and self._imported(expr.func, expr):
            return qualified, positional[: table().arity(qualified)]
        func = expr.func
        # `self.relu(x)` with `self.relu = nn.ReLU()`: the layer's function, not a
        # tensor method of `self`
        layer = self._activation_layer(expr)
        if layer is not None:
            key = layer.function
            if key not in ops or len(positional) != 1:
                return None
            # behind a layer with parameters the activation's input has history
            # whatever the call is given: the call's own output stands for it; a
            # frozen module's parameters give it none
            if layer.after_parameters and not self.forwards.is_frozen(
                dotted_name(func) or "", expr, whole=True
            ):
                return key, [expr]
            return key, positional
        if type(func) is cst.Attribute:
            key = f"Tensor.{func.attr.value}"
            if key in ops and not qualified.startswith("torch."):
                return key, [func.value, *positional[: table().arity(key) - 1]]
        return None

    def _activation_layer(self, call: cst.Call) -> LastActivation | None:
        """The activation a call of a module runs last on what it returns, the same in
        every binding of the module: `self.act(x)` with `self.act = nn.Sigmoid()`,
        `self.body(x)` with `self.body = nn.Sequential(nn.Linear(4, 4),
        nn.ReLU(inplace=True))`, or an instance of a module class of this file or of
        another of the project whose forward returns such a layer's result (LinkNet's
        decoder blocks ending in a conv-bn-relu unit: analysis.last_activation)."""
        if dotted_name(call.func) is None:
            return None
        built = self.tensors.module_constructors(call.func, call)
        if not built:
            return None
        return merged(self._last_activations.of_module(self._as_ast(value)) for value in built)

    @cached_property
    def _last_activations(self) -> LastActivations:
        return LastActivations(
            self.index.imports.qualify,
            self._class_named,
            self._imported_last_activation,
            self._imported_holds_parameters,
        )

    def _as_ast(self, node: cst.CSTNode) -> ast.expr:
        """A module construction of this file as analysis.last_activation reads it."""
        try:
            return ast.parse(self.index.module.code_for_node(node).strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return ast.Constant(None)  # builds nothing it can read

    def _class_named(self, name: str) -> ast.ClassDef | None:
        """The class of this file a plain name builds (not one an import binds), from
        its source alone, as another file's summary reads it."""
        if name in self.index.imported_from:
            return None
        if name not in self._classes:
            own = [c for c in self.index.classes if c.name.value == name]
            cls = None
            if len(own) == 1:
                source = textwrap.dedent(self.index.module.code_for_node(own[0]))
                try:
                    tree = ast.parse(source)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    tree = None
                if tree is not None and tree.body and isinstance(tree.body[0], ast.ClassDef):
                    cls = tree.body[0]
            self._classes[name] = cls
        return self._classes[name]

    def _imported_last_activation(self, written: str) -> LastActivation | None:
        project = self.forwards.summaries.project
        if project is None or not project.enabled:
            return None
        # the import's module, or the first of the star imports that defines it
        answers = (
            project.last_activation(module, level, name)
            for module, level, name in self._imported_class_origins(written)
        )
        return next((last for last in answers if last is not None), None)

    def _imported_holds_parameters(self, written: str) -> bool:
        project = self.forwards.summaries.project
        return (
            project is not None
            and project.enabled
            and any(
                project.builds_parameters(module, level, name)
                for module, level, name in self._imported_class_origins(written)
            )
        )

    def _imported_class_origins(self, written: str) -> list[tuple[str, int, str]]:
        """Where a class this file builds by an imported name may be defined: (module,
        level, name there) of the import that binds it (`linknetUp` after `from
        ptsemseg.models.utils import linknetUp`, `blocks.Up` after `import blocks`), else
        of each `from module import *`, which may bring it in."""
        found = self.index.imports.target(written)
        if found is not None:
            return [found]
        if "." in written or written in self.index.imported_from:
            return []
        return [(module, level, written) for module, level in self.index.star_imports]

    def _imported(self, func: cst.CSTNode, use: cst.CSTNode) -> bool:
        name = dotted_name(func)
        return name is not None and self.values.bound_only_by_imports(name.split(".")[0], use)

    def saved(self, expr: cst.CSTNode) -> Saved | None:
        """What `expr`, an operation autograd records here, is proven to save; None when
        it saves nothing provably (or is not recorded, or not in the table)."""
        if expr in self._memo:
            return self._memo[expr]
        result = self._saved(expr)
        self._memo[expr] = result
        return result

    def _saved(self, expr: cst.CSTNode) -> Saved | None:
        found = self.operation(expr)
        if found is None or not isinstance(expr, cst.BaseExpression):
            return None
        key, operands = found
        cases = table().ops[key]
        if self.grad_mode.mode_at(expr) is not GradMode.RECORDING:
            return None
        receiver = key.startswith("Tensor.")
        statuses = [
            # a module's activation behind its own layers with parameters: its input
            # has history (operation hands the call itself for it)
            frozenset({GRAD})
            if operand is expr
            else self.statuses(operand, expr, receiver=receiver and i == 0)
            for i, operand in enumerate(operands)
        ]
        saves: frozenset[int] | None = None
        output = True
        for combination in itertools.product(*(sorted(s) for s in statuses)):
            if GRAD not in combination:
                return None  # nothing requires grad: autograd may record nothing here
            case = cases.get(combination)
            if case is None:
                # torch rejects the call (`F.linear(x, w)` with a number for x): where
                # the program goes on past it, the operands were not these
                continue
            saves = case[0] if saves is None else saves & case[0]
            output = output and case[1]
        if saves is None or (not saves and not output):
            return None
        return Saved(expr, key, tuple(operands[i] for i in sorted(saves)), output)

    def statuses(
        self, expr: cst.BaseExpression, use: cst.CSTNode, *, receiver: bool = False
    ) -> frozenset[str]:
        """What `expr` may be at `use`: a tensor that requires grad, one that does not,
        a Python number. Empty when it may be something else (None, a module)."""
        if self.tensors.leaf_requiring_grad(expr, use) is not None:
            return frozenset({GRAD})
        value = self.values.of_expr(expr, use)
        out: set[str] = set()
        for kind in value:
            if kind is Kind.PYTHON:
                out.add(NUMBER)
            elif kind is Kind.TENSOR:
                name = dotted_name(expr)
                # In-place changes are not bindings: `x.copy_(y)` may give x history.
                if name is not None and self.values.mutated_in_place(name, use):
                    out |= _A_TENSOR
                else:
                    out.add(TENSOR)
            elif kind in (Kind.LEAF, Kind.GRAPH):
                out.add(GRAD)
            elif kind is Kind.UNKNOWN:
                # A method is called on it, so it is a tensor (or not an operation at all)
                out |= _A_TENSOR if receiver else _ANY
            else:
                return frozenset()
        return frozenset(out)


# -- parameters saved by a forward, then stepped ------------------------------------------


@dataclass(frozen=True)
class SteppedAfterSaving:
    """A differentiation through a module's forward whose parameters an optimizer
    step changed in place between the forward and the differentiation."""

    forward: cst.Call  # `qf(obs, pi(obs))`: it saved the module's parameters
    model: str  # the module, as the scope names it
    step: ParameterStep  # the step that changes them in place
    event: DiffEvent  # the backward that needs them, and raises
    # The method that runs the forward, the step and the backward in that order when
    # they sit in different methods of its object; None when one function shows it all.
    caller: cst.FunctionDef | None = None

    @property
    def changed(self) -> str:
        """The module whose parameters the step changes, as the forward's scope names
        it: the model, or the part of it the optimizer holds (`critic.Q1`)."""
        parts = sorted(m for m in self.step.modules if m.startswith(self.model + "."))
        return parts[0] if parts and self.model not in self.step.modules else self.model


class ParametersSteppedAfterSaving:
    """Which backward or autograd.grad goes through a forward of a module whose
    parameters an optimizer steps after the forward saved them.

    A module's forward saves its parameters for backward (`F.linear` keeps its weight
    for the input's gradient, from the second layer of a network on, and from the first
    when the input requires grad). `opt.step()` then changes them in place, so a graph
    recorded before the step cannot be differentiated after it: the SAC / DDPG / GAN
    crash of `policy_loss = -qf(obs, pi(obs)).mean()` built before `q_opt.step()` and
    backpropagated after it.

    Reported only in straight-line order: the forward records (outside `no_grad`, its
    module not frozen), the differentiation reaches its result along def-use chains with
    no graph cut (`.detach()`), the step runs between them whenever the differentiation
    does (no `if`, loop or `try` around the step alone), a backward before the step gives
    it gradients to apply (a step without gradients changes nothing), and no
    differentiation in between frees the graph first. A single torch layer
    (`nn.Linear(...)`) applied to inputs without history saves its inputs, not its
    weight, so it is left out unless an input is proven to carry a graph. The
    differentiation may be a call of this file's helper that backpropagates what it is
    handed (`update(actor_opt, actor_loss)`), as the step may.

    One function may show it all, or a method's sequence of its object's methods
    (analysis.method_sequence): BicycleGAN's `optimize_parameters` runs `self.forward()`,
    which stores `self.mu2 = self.netE(self.fake_B_random)`, then a method that
    backpropagates a first loss with `retain_graph=True`, steps G and E, and runs the
    method whose backward goes through `self.mu2`. The same conditions hold along the
    sequence; the forward is then in another run than the backward."""

    def __init__(
        self,
        index: FileIndex,
        autograd: AutogradCalls,
        loops: LoopAnalysis,
        values: ValueAnalysis,
        tensors: TensorFacts,
        grad_mode: GradModeAnalysis,
        forwards: ForwardAnalysis,
        reach: DifferentiationReach,
        holdings: OptimizerHoldings,
        sequences: MethodSequences,
    ) -> None:
        self.index = index
        self.autograd = autograd
        self.loops = loops
        self.values = values
        self.tensors = tensors
        self.grad_mode = grad_mode
        self.forwards = forwards
        self.reach = reach
        self.holdings = holdings
        self.sequences = sequences
        self._class_steps: dict[cst.ClassDef, bool] = {}

    def before(self, event: DiffEvent) -> SteppedAfterSaving | None:
        """The first forward, in source order, whose saved parameters a step changes
        before `event` differentiates through it, in the event's function or else in
        the sequence of a method of its object that runs it; None when none is proven."""
        if event.kind == "step":
            return None
        return self._in_function(event) or self._across_methods(event)

    def before_helper(self, call: cst.Call) -> SteppedAfterSaving | None:
        """The same, for `call` a call of a function of this file or of the project's
        other files that backpropagates what it is handed (`update(p_opt, policy_loss)`,
        a backward then a step): the backward is at the call, of the arguments it hands
        on."""
        scope = self.index.scope_of(call)
        if not self.holdings.steps_in(scope) and not (
            type(scope) is cst.FunctionDef and self._class_steps_parameters(scope)
        ):
            return None  # nothing steps known parameters here: most calls end here
        # the backward that raises need not free the graph (`retain_graph=retain_graph`)
        handed = self.loops.backpropagated_arguments(call, freeing=False)
        if not handed:
            return None
        event = DiffEvent(call, "backward", set(), handed[0] if len(handed) == 1 else None)
        return self._in_function(event, handed) or self._across_methods(event, handed)

    def _in_function(
        self, event: DiffEvent, handed: list[cst.BaseExpression] | None = None
    ) -> SteppedAfterSaving | None:
        index = self.index
        scope = index.scope_of(event.call)
        at = index.order[event.call]
        events = self.loops.scope_facts(scope).events
        steps = [
            step
            for step in self.holdings.steps_in(scope)
            if index.order[step.call] < at
            and not index.in_exclusive_branches(step.call, event.call)
            and self.holdings.runs_unconditionally(step.call, event.call, scope)
            and (step.differentiates_first or self._differentiated_before(step.call, events))
        ]
        if not steps:
            return None
        for node in index.walk(scope.body if type(scope) is cst.FunctionDef else scope):
            if type(node) is not cst.Call or index.order[node] >= at:
                continue
            found = self._stepped_forward(node, event, steps, handed)
            if found is not None:
                return found
        return None

    def _stepped_forward(
        self,
        call: cst.Call,
        event: DiffEvent,
        steps: list[ParameterStep],
        handed: list[cst.BaseExpression] | None = None,
    ) -> SteppedAfterSaving | None:
        """`call` as a forward whose saved parameters one of `steps` (those that run
        before `event`) changes after it, when `event` differentiates through it (or,
        with `handed`, a helper backpropagates those arguments of the event's call)."""
        index = self.index
        called = _forward_target(call)
        if called is None:
            return None
        after = [
            step
            for step in steps
            if index.order[step.call] > index.order[call]
            and not index.in_exclusive_branches(step.call, call)
            and any(_runs_parameters_of(called, m) for m in step.modules)
        ]
        if not after:
            return None
        model = self.forwards.model_forward(call)
        if model is None or not self._saves_parameters(call, model):
            return None
        reached = self.reach.differentiations_of(call)
        uses = [call, *self.reach.reads_reached(call, set())]
        if handed is None:
            if not any(e.call is event.call for e in reached):
                return None
        elif not _reaches(uses, handed, index):
            return None

        def part_reaches(names: set[str]) -> bool:
            if handed is None:
                return any(
                    e.call is event.call for e in self.reach.differentiations_of(call, names=names)
                )
            return _reaches(
                [call, *self.reach.reads_reached(call, set(), names=names)], handed, index
            )

        if not self._through_stepped_parts(call, called, after, part_reaches):
            return None
        start, stop = index.order[call], index.order[event.call]
        if any(
            start < index.order[e.call] < stop and self.autograd.retains_graph(e) is False
            for e in reached
        ) or any(
            start < index.order[helper] < stop
            and _reaches(uses, self.loops.backpropagated_arguments(helper), index)
            for helper in index.of_types_in(index.scope_of(call), cst.Call, into_functions=False)
            if helper is not event.call
        ):
            return None  # a backward in between frees the graph: the next one raises anyway
        return SteppedAfterSaving(call, model, after[0], event)

    # -- across the methods of one object -------------------------------------------------

    def _across_methods(
        self, event: DiffEvent, handed: list[cst.BaseExpression] | None = None
    ) -> SteppedAfterSaving | None:
        method = self.index.scope_of(event.call)
        if type(method) is not cst.FunctionDef or not self._class_steps_parameters(method):
            return None
        # its own sequence: the forward in a method it calls (`loss = self.actor_loss(b)`)
        own = self.sequences.runs(method)
        if len(own) > 1:
            found = self._in_sequence(method, own[0], event, handed)
            if found is not None:
                return found
        if not self.sequences.called_on_self(method):
            return None
        for caller, run in self.sequences.callers_of(method):
            found = self._in_sequence(caller, run, event, handed)
            if found is not None:
                return found
        return None

    def _class_steps_parameters(self, method: cst.FunctionDef) -> bool:
        """Does a method of the class of `method` step an optimizer holding known
        modules? Most classes do not, and need no sequence."""
        cls = self.index.enclosing_class(method)
        if cls is None:
            return False
        known = self._class_steps.get(cls)
        if known is None:
            known = any(
                self.index.enclosing_class(f) is cls and self.holdings.steps_in(f)
                for f in self.index.functions
            )
            self._class_steps[cls] = known
        return known

    def _in_sequence(
        self,
        caller: cst.FunctionDef,
        backward_run: Run,
        event: DiffEvent,
        handed: list[cst.BaseExpression] | None = None,
    ) -> SteppedAfterSaving | None:
        """The optimizer form along `caller`'s sequence, for `event` in `backward_run`
        (with `handed`, a helper's backward of those arguments of its call), with the
        forward in another run."""
        index, sequences = self.index, self.sequences
        runs = sequences.runs(caller)
        at = sequences.place(backward_run, event.call)
        backward_chain = sequences.chain(backward_run, event.call)
        inlined = {id(run.path[-1]) for run in runs if run.path}
        differentiated: list[tuple[tuple[float, ...], list]] | None = None
        steps: list[tuple[tuple[float, ...], Run, ParameterStep]] = []
        for run in runs:
            for step in self.holdings.steps_in(run.method):
                if step.call is not step.step and id(step.call) in inlined:
                    continue  # a method of the object: its own run holds the step
                place = sequences.place(run, step.call)
                chain = sequences.chain(run, step.call)
                if place >= at or not self._runs_whenever(chain, backward_chain):
                    continue
                if differentiated is None:
                    differentiated = [
                        (sequences.place(r, e.call), sequences.chain(r, e.call))
                        for r in runs
                        for e in self.loops.scope_facts(r.method).events
                        if e.kind != "step"
                    ]
                if step.differentiates_first or any(
                    earlier < place and not _exclusive(before, chain, index)
                    for earlier, before in differentiated
                ):
                    steps.append((place, run, step))
        if not steps:
            return None
        stepped = {m for _, _, step in steps for m in step.modules}
        candidates = []
        for run in runs:
            if run is backward_run:
                continue  # one function: `_in_function` answers
            for node in index.walk(run.method.body):
                if type(node) is not cst.Call:
                    continue
                called = _forward_target(node)
                if called is not None and any(_runs_parameters_of(called, m) for m in stepped):
                    place = sequences.place(run, node)
                    if place < at:
                        candidates.append((place, run, node, called))
        candidates.sort(key=lambda item: item[0])
        for place, run, call, called in candidates:
            chain = sequences.chain(run, call)
            after = [
                step
                for step_place, step_run, step in steps
                if step_place > place
                and any(_runs_parameters_of(called, m) for m in step.modules)
                and not _exclusive(chain, sequences.chain(step_run, step.call), index)
            ]
            if not after:
                continue
            model = self.forwards.model_forward(call)
            if model is None or not self._saves_parameters(call, model):
                continue
            if any(self.grad_mode.mode_at(node) is GradMode.NOT_RECORDING for _, node in chain):
                continue  # a method run under `no_grad` records nothing
            handed_at = (backward_run, event, handed) if handed else None
            reached = sequences.reached_from(caller, run, call, handed_at)
            if not any(r is backward_run and e.call is event.call for r, e in reached):
                continue

            def part_reaches(
                names: set[str],
                call: cst.Call = call,
                run: Run = run,
                handed_at: tuple[Run, DiffEvent, list[cst.BaseExpression]] | None = handed_at,
            ) -> bool:
                return any(
                    r is backward_run and e.call is event.call
                    for r, e in sequences.reached_from(caller, run, call, handed_at, names)
                )

            if not self._through_stepped_parts(call, called, after, part_reaches):
                continue
            if any(
                place < sequences.place(r, e.call) < at and self.autograd.retains_graph(e) is False
                for r, e in reached
            ):
                continue  # a backward in between frees the graph: the next one raises anyway
            return SteppedAfterSaving(call, model, after[0], event, caller)
        return None

    def _through_stepped_parts(
        self,
        call: cst.Call,
        called: str,
        steps: list[ParameterStep],
        part_reaches: Callable[[set[str]], bool],
    ) -> bool:
        """When the steps change only parts of the model `call` runs (`critic.Q1` of
        `q1, q2 = critic(s)`), which of its outputs a part computes is out of sight: the
        differentiation must reach each value the forward's statement binds (the policy
        loss of `torch.min(q1, q2)`; a loss of `out_b` alone may not go through a
        stepped `head_a`). A step of the whole model needs no more."""
        if any(_steps_whole(called, m) for s in steps for m in s.modules):
            return True
        names = self.reach.produced(call)
        if len(names) < 2:
            # one name may hold the tuple and be indexed (`out[1]`), or the forward's
            # one output may not go through the part at all
            return False
        if not all(part_reaches({name}) for name in names):
            return False
        parts = {m for s in steps for m in s.modules if m.startswith(called + ".")}
        return all(self._part_saved_by_forward(call, called, part) for part in parts)

    def _part_saved_by_forward(self, call: cst.Call, called: str, part: str) -> bool:
        """Does a forward of `called` save the weights of its part `part`? When the
        model's class is in this file: its `forward` must read the part (an auxiliary
        head run by another method is not run), and a single torch layer applied to the
        forward's own inputs saves them, not its weight. A class out of sight runs its
        parts."""
        attribute = part[len(called) + 1 :].partition(".")[0]
        qualified = self.tensors.module_class(cst.parse_expression(called), call) or ""
        name = qualified.rpartition(".")[2]
        cls = next((c for c in self.index.classes if c.name.value == name), None)
        if cls is None or name not in self.tensors.local_module_classes():
            return True
        forward = own_method(cls, "forward")
        if forward is None:
            return True
        held = f"self.{attribute}"
        reads = [
            node
            for node in self.index.walk(forward.body)
            if type(node) is cst.Attribute and dotted_name(node) == held
        ]
        if not reads:
            return False
        built = self.tensors.module_constructors(cst.parse_expression(held), forward)
        layers = {self.tensors.module_class(value, value) for value in built}
        if not layers or not all(
            layer is not None
            and layer.startswith("torch.nn.")
            and layer.rpartition(".")[2] in SINGLE_OP_LAYERS
            for layer in layers
        ):
            return True
        # one torch layer: it saves its weight only for an input with history, which
        # the forward's own inputs, never rebound in it, are taken not to carry
        kinds: dict[str, set[BindingKind]] = {}
        for binding in self.values.bindings.of_scope(forward):
            kinds.setdefault(binding.name, set()).add(binding.kind)
        receiver = forward.params.params[0].name.value if forward.params.params else ""
        inputs = {name for name, bound in kinds.items() if bound == {BindingKind.PARAM}} - {
            receiver
        }
        return not all(
            type(parent := self.index.parent.get(read)) is cst.Call
            and parent.func is read
            and parent.args
            and type(parent.args[0].value) is cst.Name
            and parent.args[0].value.value in inputs
            for read in reads
        )

    def _runs_whenever(
        self,
        chain: list[tuple[cst.FunctionDef, cst.CSTNode]],
        other: list[tuple[cst.FunctionDef, cst.CSTNode]],
    ) -> bool:
        """Does the end of `chain` run whenever the end of `other` does: where the two
        part, nothing conditional holds the one side alone, and below that the side's
        calls run whenever their methods do?"""
        parted = _parting(chain, other)
        if parted is None:
            return False
        method, node = chain[parted]
        if self.index.in_exclusive_branches(node, other[parted][1]):
            return False
        holdings = self.holdings
        return holdings.runs_unconditionally(node, other[parted][1], method) and all(
            holdings.runs_unconditionally(n, m, m) for m, n in chain[parted + 1 :]
        )

    def _saves_parameters(self, call: cst.Call, model: str) -> bool:
        """Is the forward recorded, and proven to save some of the module's parameters?"""
        if self.grad_mode.mode_at(call) is not GradMode.RECORDING:
            return False
        if self.forwards.is_frozen(model, call):
            return False
        qualified = self.tensors.module_class(cst.parse_expression(model), call) or ""
        if qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[-1] in SINGLE_OP_LAYERS:
            # `nn.Linear` on inputs without history saves the input, not the weight
            return any(
                (value := self.values.of_expr(arg.value, call)) and value <= _CARRIES_GRAPH
                for arg in call.args
            )
        return True

    def _differentiated_before(self, node: cst.CSTNode, events: list[DiffEvent]) -> bool:
        """Does a backward or autograd.grad run before `node` (so a step there has
        gradients to apply)?"""
        index = self.index
        return any(
            e.kind != "step"
            and index.order[e.call] < index.order[node]
            and not index.in_exclusive_branches(e.call, node)
            for e in events
        )


def _reaches(
    uses: list[cst.CSTNode], arguments: list[cst.BaseExpression], index: FileIndex
) -> bool:
    """Is one of `uses` (a value and the reads it reaches) inside one of `arguments`?"""
    return any(index.is_inside(use, argument) for use in uses for argument in arguments)


def _forward_target(call: cst.Call) -> str | None:
    """The dotted name a call runs the forward of, if it is one: `qf` for `qf(x)` and
    `qf.forward(x)`."""
    func = call.func
    target = func.value if type(func) is cst.Attribute and func.attr.value == "forward" else func
    return dotted_name(target)


def _steps_whole(called: str, stepped: str) -> bool:
    """Does an optimizer built from `stepped`'s parameters hold every parameter a
    forward of `called` runs: the module itself, or a submodule of it (`qf.head(x)`
    after `Adam(qf...)`)?"""
    return called == stepped or called.startswith(stepped + ".")


def _runs_parameters_of(called: str, stepped: str) -> bool:
    """Does a forward of `called` run parameters an optimizer built from `stepped`'s
    holds: all of them (_steps_whole), or those of a part (`q1, q2 = critic(s)` runs
    `critic.Q1`, which `Adam(critic.Q1.parameters())` steps: a model's forward runs its
    parts, which _through_stepped_parts then asks to be shown)?"""
    return _steps_whole(called, stepped) or stepped.startswith(called + ".")


def _parting(
    chain: list[tuple[cst.FunctionDef, cst.CSTNode]],
    other: list[tuple[cst.FunctionDef, cst.CSTNode]],
) -> int | None:
    """Where two chains of one sequence part: the first level whose nodes differ (both
    in the same method, since the calls above it are the same); None if none does."""
    for i, ((_, a), (_, b)) in enumerate(zip(chain, other, strict=False)):
        if a is not b:
            return i
    return None


def _exclusive(
    chain: list[tuple[cst.FunctionDef, cst.CSTNode]],
    other: list[tuple[cst.FunctionDef, cst.CSTNode]],
    index: FileIndex,
) -> bool:
    """Do two places of one sequence sit in different branches where they part?"""
    parted = _parting(chain, other)
    return parted is not None and index.in_exclusive_branches(chain[parted][1], other[parted][1])
