"""Train/eval mode carried across calls and loop iterations.

`train_mode` answers "is this model in eval mode here?" within one function. A training
loop that evaluates every epoch needs more: the switch is often inside the evaluation
helper (`evaluate(model, loader)` calls `model.eval()`), the training forward inside
another (`train_one_epoch(model, ...)`), and the mode that matters is the one the eval
leaves behind when the loop comes round again. This module summarises, per function and
per model path (a parameter, or `self.<attr>` in a method), what a call does to the
mode:

- whether it may return with the model in eval mode (an eval switch reaches one of its
  exits, not undone by `model.train()` or a restore such as `model.train(was)`);
- whether it switches the mode at all (then a call of it is a write of the mode);
- whether it runs a training forward of the model (one whose result is differentiated)
  in whatever mode its caller left (no switch of its own before that forward).

A function's mode writes are then its own switches plus the calls of this file's
functions that switch, and `eval_carried_round` asks whether an eval write later in a
loop reaches a training forward earlier in it on the next iteration.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.bindings import PYTHON_BINDINGS, BindingKind
from gradlint.analysis.caller_arguments import path_in_caller
from gradlint.analysis.differentiation import DifferentiationReach
from gradlint.analysis.forwards import ForwardAnalysis
from gradlint.analysis.grad_mode import GradModeAnalysis
from gradlint.analysis.index import FileIndex, dotted_name, module_path, path_root
from gradlint.analysis.optimizers import OptimizerHoldings
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.summary_facts import Mode, mode_switch
from gradlint.analysis.torch_api import MODULE_API, MODULE_MODE_METHODS, STATE_LOADING_METHOD
from gradlint.analysis.train_mode import MODEL_REBINDINGS, same_module_again, switch_arguments

# a name that may hold any of several modules: a parameter, a loop's element
_HANDED_ANY_MODULE = frozenset({BindingKind.PARAM, BindingKind.FOR, BindingKind.COMPREHENSION})


@dataclass(frozen=True)
class ModeWrite:
    anchor: cst.Call  # the switch itself, or the call of a function that switches
    mode: Mode
    # For a call of a function that may return with the model in eval mode: the eval
    # switch inside it (in this file), to show where it happens.
    inner: cst.Call | None = None


@dataclass(frozen=True)
class TrainingUse:
    anchor: cst.Call  # the forward, or the call of a function that trains the model
    inner: cst.Call | None = None  # the forward inside that function


@dataclass
class _Effect:
    leaves_eval: cst.Call | None = None
    switches: bool = False


def _mode_of_switch(call: cst.Call, path: str) -> Mode | None:
    """The mode `call` sets on `path`: `path.eval()`, `path.train(...)`, and for a path
    under `self`, `self.eval()` / `self.train()` (they recurse into every submodule)."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value not in MODULE_MODE_METHODS:
        return None
    receiver = module_path(func.value)
    if receiver is None:
        return None
    if receiver != path and not path.startswith((receiver + ".", receiver + "[")):
        return None
    return mode_switch(func.attr.value, switch_arguments(call))


class ModeFlow:
    def __init__(
        self,
        index: FileIndex,
        summaries: FunctionSummaries,
        differentiation: DifferentiationReach,
        grad_mode: GradModeAnalysis,
        optimizers: OptimizerHoldings,
        forwards: ForwardAnalysis,
    ) -> None:
        self.index = index
        self.forwards = forwards
        self.optimizers = optimizers
        self.summaries = summaries
        self.differentiation = differentiation
        self.grad_mode = grad_mode
        self._globals: dict[cst.FunctionDef, set[str]] = {}
        self._effects: dict[tuple[cst.FunctionDef, str], _Effect] = {}
        self._in_progress: set[tuple[cst.FunctionDef, str]] = set()
        self._own_calls: dict[cst.CSTNode, list[cst.Call]] = {}
        self._listing: set[cst.FunctionDef] = set()
        self._trains: dict[tuple[cst.FunctionDef, str], cst.Call | None] = {}

    # -- what a scope does ------------------------------------------------------------

    def calls_in(self, scope: cst.CSTNode) -> list[cst.Call]:
        """The calls in the scope's own body (nested functions excluded), source order."""
        found = self._own_calls.get(scope)
        if found is None:
            body = scope.body if type(scope) is cst.FunctionDef else scope
            found = [n for n in self.index.walk(body) if type(n) is cst.Call]
            self._own_calls[scope] = found
        return found

    def writes(self, scope: cst.CSTNode, path: str) -> list[ModeWrite]:
        """Every place in the scope that sets the mode of `path`: its switches and the
        calls of this file's functions that switch it (in source order)."""
        found: list[ModeWrite] = []
        for call in self.calls_in(scope):
            mode = _mode_of_switch(call, path)
            if mode is not None:
                found.append(ModeWrite(call, mode))
                continue
            if self._external_eval(call, path):
                found.append(ModeWrite(call, Mode.EVAL))
                continue
            effect = self._callee_effect(call, path)
            if effect is None or not effect.switches:
                continue
            if effect.leaves_eval is not None:
                found.append(ModeWrite(call, Mode.EVAL, effect.leaves_eval))
            else:
                found.append(ModeWrite(call, Mode.SET))
        return found

    def training_uses(self, scope: cst.CSTNode, path: str) -> list[TrainingUse]:
        """The forwards of `path` in the scope whose result is differentiated, and the
        calls of this file's functions that run one in their caller's mode."""
        found: list[TrainingUse] = []
        for call in self.calls_in(scope):
            if self._is_training_forward(call, path):
                found.append(TrainingUse(call))
                continue
            callee = self._callee_for(call, path)
            if callee is not None:
                trained = self.trains_in_callers_mode(*callee)
                if (
                    trained is None
                    and self.grad_mode.may_record(call)
                    and self.differentiation.result_is_differentiated(call)
                ):
                    # `loss = self.compute_loss(x)`, then `loss.backward()`: the forward
                    # the helper returns the result of is trained here
                    trained = self._returns_forward_in_callers_mode(*callee)
                if trained is not None:
                    found.append(TrainingUse(call, trained))
        return found

    def _returns_forward_in_callers_mode(self, func: cst.FunctionDef, path: str) -> cst.Call | None:
        """A forward of `path` in `func`, recording and with no switch of `func`'s own
        reaching it, whose result `func` returns (past no `.detach()`): what a caller
        that differentiates the call's result trains, in the mode the caller left."""
        anchors: list[cst.CSTNode] = [w.anchor for w in self.writes(func, path)]
        for call in self.calls_in(func):
            if (
                self._runs_forward_of(call, path)
                and self.grad_mode.may_record(call)
                and not (anchors and self.index.reaching(anchors, call))
                and self.differentiation.returns_reached(call)
            ):
                return call
        return None

    def eval_paths(self, scope: cst.CSTNode) -> set[str]:
        """The model paths the scope may put in eval mode, itself or through a call:
        the only candidates for a training forward run in eval mode (asking which
        forwards are differentiated costs far more, so it is asked of these alone)."""
        found: set[str] = set()
        for call in self.calls_in(scope):
            func = call.func
            if type(func) is cst.Attribute and func.attr.value in MODULE_MODE_METHODS:
                receiver = module_path(func.value)
                if receiver is not None and _mode_of_switch(call, receiver) is Mode.EVAL:
                    found.add(receiver)
                continue
            callee = self.summaries.resolve(call)
            if callee is None:
                found.update(self._external_eval_paths(call))
                continue
            for path, param in self._paths_into(call, callee):
                if self.effect(callee, param).leaves_eval is not None:
                    found.add(path)
        return found

    def _external_eval_paths(self, call: cst.Call) -> set[str]:
        """The arguments a call of an imported project function (`from utils import
        evaluate`) returns in eval mode."""
        return set(self._external_eval_switches(call))

    def _external_eval(self, call: cst.Call, path: str) -> bool:
        return path in self._external_eval_paths(call)

    def external_eval_switch(
        self, call: cst.Call, path: str
    ) -> tuple[str, int, int, int, int] | None:
        """Where the imported project function `call` runs puts the module it is handed
        at `path` in eval mode, for a finding to show that switch in the helper's file:
        (path, line, column, end line, end column); None when it is no such call."""
        where = self._external_eval_switches(call).get(path)
        if where is None or len(where) != 5:
            return None
        file, line, column, end_line, end_column = where
        return file, line, column, end_line, end_column

    def _external_eval_switches(self, call: cst.Call) -> dict[str, list]:
        """For a call of an imported project function, each argument's path in the
        caller that the function returns in eval mode, with where it switches it
        (ExternalFunction.eval_param_switches; empty where that is not recorded)."""
        if self.summaries.resolve(call) is not None:
            return {}
        external = self.summaries.resolve_external(call, returning_eval_model=True)
        if external is None or not external.eval_params:
            return {}
        found: dict[str, list] = {}
        for param in external.eval_params:
            argument = self.summaries.external_argument(call, external, param)
            name = module_path(argument) if argument is not None else None
            if name is not None:
                found.setdefault(name, external.eval_param_switches.get(param, []))
        return found

    def eval_carried_round(
        self, write: ModeWrite, use: TrainingUse, writes: list[ModeWrite]
    ) -> bool:
        """Does the eval `write`, which runs after `use` in a loop around both, leave the
        model in eval mode when the loop comes back to `use`? Not when the iteration sets
        the mode itself before `use` on every path (a train or restore write, or an
        `eval()` of its own, on purpose: `if finetune: model.train() / elif freeze:
        model.eval() / else: raise`), or a train or restore write runs after `write` on
        every path from it to the end of the iteration."""
        index = self.index
        order = index.order
        at, used = write.anchor, use.anchor
        if order[at] < order[used]:
            return self._periodic_eval_before(write, use, writes)
        if at is not used and index.is_inside(used, at):
            return False
        for loop in index.enclosing_loops(used):
            if not index.is_inside(at, loop):
                continue
            own = [
                other.anchor
                for other in writes
                if other is not write
                and index.is_inside(other.anchor, loop)
                and order[other.anchor] < order[used]
            ]
            if own and index.settled_before(used, own, loop):
                return False
            for other in writes:
                if other.mode is Mode.EVAL or not index.is_inside(other.anchor, loop):
                    continue
                if order[other.anchor] < order[used] and index.dominates(other.anchor, used):
                    return False
                if order[other.anchor] > order[at]:
                    block = index.block_of(other.anchor)
                    if block is not None and index.is_inside(at, block):
                        return False
                    if _in_finally_of(index, other.anchor, at):
                        return False
                    guards = self._guards(other.anchor, loop, only_ifs=True)
                    if guards is not None and guards <= (self._guards(at, loop) or set()):
                        # `if args.train_text_encoder: enc.eval()` ... `if
                        # args.train_text_encoder: enc.train()`: the same flag runs both
                        return False
            return True
        return False

    def _guards(
        self, node: cst.CSTNode, loop: cst.CSTNode, *, only_ifs: bool = False
    ) -> set[tuple[str, bool]] | None:
        """The `if` tests (as written, and which branch) that `node` is under, inside
        `loop`: a flag the iteration does not change runs two statements under the same
        tests together. With `only_ifs`, None when something else may skip it (a nested
        loop, a `try`)."""
        index = self.index
        found: set[tuple[str, bool]] = set()
        inner: cst.CSTNode = node
        for anc in index.ancestors(node):
            if anc is loop:
                break
            if type(anc) is cst.If and inner is not anc.test:
                found.add((index.module.code_for_node(anc.test), inner is anc.body))
            elif only_ifs and isinstance(anc, (cst.For, cst.While, cst.Try, cst.ExceptHandler)):
                return None
            inner = anc
        return found

    def trained_after_evaluation(
        self,
        write: ModeWrite,
        use: TrainingUse,
        writes: list[ModeWrite],
        scope: cst.CSTNode,
        path: str,
    ) -> cst.Call | None:
        """The evaluation forward of the model between an eval `write` and a later
        training `use` outside any loop that holds the write (`model.eval()`, a test,
        then more epochs: a notebook's cells run in order), when only eval writes reach
        the use; None otherwise. An evaluation helper that leaves the model in eval mode
        is its own evaluation. An `eval()` with no evaluation after it, right before
        training, may freeze batch norm on purpose."""
        index = self.index
        order = index.order
        at, used = write.anchor, use.anchor
        if not self._eval_reaches_training(write, use, writes):
            return None
        if self._rebuilt_between(at, used, scope, path):
            return None
        if not self._trained_by_an_optimizer(use, scope, path):
            return None
        if write.inner is not None:
            return at  # `evaluate(model, loader)`, which leaves it in eval mode
        for call in self.calls_in(scope):
            if not order[at] < order[call] < order[used]:
                continue
            if self._runs_forward_of(call, path) and not self._is_training_forward(call, path):
                return call
        return None

    def eval_on_resume(
        self,
        write: ModeWrite,
        use: TrainingUse,
        writes: list[ModeWrite],
        scope: cst.CSTNode,
        path: str,
    ) -> bool:
        """Is the eval `write` part of resuming from a checkpoint, before training that
        no loop around it holds (`if is_load: net.load_state_dict(ckpt[...]);
        net.eval()`, then the epochs)? Training from the checkpoint then runs in eval
        mode, where a fresh start, which skips the branch, trains in training mode: the
        same loop trains two ways, and no `eval()` meant to freeze batch norm is tied to
        a resume."""
        index = self.index
        order = index.order
        at, used = write.anchor, use.anchor
        if write.mode is not Mode.EVAL or write.inner is not None:
            return False
        if not self._eval_reaches_training(write, use, writes):
            return False
        if index.dominates(at, used):
            return False  # every way to the training passes it: no fresh start skips it
        block = index.block_of(at)
        if block is None:
            return False
        # a resume restores the model's weights and where training was: the state of an
        # optimizer that holds it, or a counter read off the checkpoint (`start =
        # state["epoch"]`); weights loaded alone may be a pretrained start, frozen on
        # purpose
        loads = [
            call
            for call in index.of_types_in(block, cst.Call)
            if order[call] < order[at]
            and type(call.func) is cst.Attribute
            and call.func.attr.value == STATE_LOADING_METHOD
        ]
        if not any(module_path(c.func.value) == path for c in loads):
            return False
        restores_optimizer = any(
            path in self.optimizers.held_modules(c.func.value, c) for c in loads
        )
        restores_counter = any(
            order[node] < order[at]
            and len(node.targets) == 1
            and type(node.targets[0].target) is cst.Name
            and type(node.value) is cst.Subscript
            and type(node.value.value) is cst.Name
            for node in index.of_types_in(block, cst.Assign)
        )
        if not (restores_optimizer or restores_counter):
            return False
        if self._train_switched_out_of_sight():
            return False
        return self._trained_by_an_optimizer(use, scope, path)

    def _eval_reaches_training(
        self, write: ModeWrite, use: TrainingUse, writes: list[ModeWrite]
    ) -> bool:
        """Does the eval `write` run before the training `use`, outside any loop that
        holds the use (a loop round is eval_carried_round's question), and do only eval
        writes reach the use, this one among them?"""
        index = self.index
        at, used = write.anchor, use.anchor
        if index.order[at] >= index.order[used]:
            return False
        if any(index.is_inside(at, loop) for loop in index.enclosing_loops(used)):
            return False
        reaching = index.reaching([w.anchor for w in writes], used)
        return at in reaching and not any(
            w.anchor in reaching and w.mode is not Mode.EVAL for w in writes
        )

    def _train_switched_out_of_sight(self) -> bool:
        """Does the file switch some module to training mode in a way the mode writes do
        not name (`for net in (G, D): net.train()`, `def set_train(*nets)`,
        `model.to(device).train()`)? Then the resume's `eval()` may be undone there."""
        for call in self.index.calls:
            func = call.func
            if type(func) is not cst.Attribute or func.attr.value != "train":
                continue
            receiver = func.value
            if type(receiver) is not cst.Name and dotted_name(receiver) is None:
                return True
            if type(receiver) is cst.Name:
                scope = self.index.scope_of(call)
                if any(
                    record.kind in _HANDED_ANY_MODULE
                    for record in self.summaries.bindings.records(scope, PYTHON_BINDINGS).get(
                        receiver.value, ()
                    )
                ):
                    return True
        return False

    def _trained_by_an_optimizer(self, use: TrainingUse, scope: cst.CSTNode, path: str) -> bool:
        """Does an optimizer that holds the model step around the training forward (not
        an attack or a test differentiating through a model kept in eval mode)?"""
        index = self.index
        loops = list(index.enclosing_loops(use.anchor))
        return any(
            path in step.modules
            and (step.call is use.anchor or any(index.is_inside(step.call, loop) for loop in loops))
            for step in self.optimizers.steps_in(scope)
        )

    def _rebuilt_between(
        self, at: cst.CSTNode, used: cst.CSTNode, scope: cst.CSTNode, path: str
    ) -> bool:
        """Is the variable the model's path starts from bound anew between the eval
        switch and the training forward, on every way from one to the other (`model =
        FCNet().to(device)` in a notebook's next cell)? A new module is in training
        mode; `model = model.to(device)` is the same module, in its mode."""
        root = path_root(path)
        order = self.index.order
        rebinds = [
            node
            for node in self.summaries.bindings.nodes(scope, MODEL_REBINDINGS).get(root, [])
            if order[at] < order.get(node, -1) < order[used] and not same_module_again(node, root)
        ]
        return bool(rebinds) and at not in self.index.reaching([at, *rebinds], used)

    def _periodic_eval_before(
        self, write: ModeWrite, use: TrainingUse, writes: list[ModeWrite]
    ) -> bool:
        """An evaluation that runs on some iterations only (`if epoch % n == 0:
        validate(model)`) before the training forward, in a loop around both that no
        train write enters: from its first run on, every training step runs in eval
        mode. An `eval()` that runs on every iteration before the forward is on purpose
        (frozen batch norm while fine-tuning)."""
        index = self.index
        at, used = write.anchor, use.anchor
        if index.dominates(at, used):
            return False
        for loop in index.enclosing_loops(used):
            if not index.is_inside(at, loop):
                continue
            return not any(
                other.mode is not Mode.EVAL and index.is_inside(other.anchor, loop)
                for other in writes
            )
        return False

    # -- what a function does, summarised --------------------------------------------

    def effect(self, func: cst.FunctionDef, path: str) -> _Effect:
        """What a call of `func` does to the mode of its `path` (`trains` is left for
        `trains_in_callers_mode`, which costs more and is asked of fewer calls)."""
        key = (func, path)
        found = self._effects.get(key)
        if found is not None:
            return found
        if key in self._in_progress:
            return _Effect()  # recursion: assume nothing
        self._in_progress.add(key)
        try:
            writes = self.writes(func, path)
            found = _Effect(switches=bool(writes))
            if writes:
                found.leaves_eval = self._eval_at_exit(func, writes, path)
        finally:
            self._in_progress.discard(key)
        self._effects[key] = found
        return found

    def trains_in_callers_mode(self, func: cst.FunctionDef, path: str) -> cst.Call | None:
        """The training forward of `path` that `func` runs with no switch of its own
        reaching it (so in whatever mode its caller left), if any."""
        key = (func, path)
        if key in self._trains:
            return self._trains[key]
        if key in self._in_progress:
            return None
        self._in_progress.add(key)
        found = None
        try:
            anchors: list[cst.CSTNode] = [w.anchor for w in self.writes(func, path)]
            for use in self.training_uses(func, path):
                if not anchors or not self.index.reaching(anchors, use.anchor):
                    found = use.inner or use.anchor
                    break
        finally:
            self._in_progress.discard(key)
        self._trains[key] = found
        return found

    def _eval_at_exit(
        self, func: cst.FunctionDef, writes: list[ModeWrite], path: str
    ) -> cst.Call | None:
        """The eval switch that may still hold when the function returns: one that
        reaches a `return`, or the end of the body when it can fall off it. A restore
        (`if training: model.train()`) stands at its `if`, which every path runs."""
        index = self.index
        stands = {w.anchor: self._restore_at(w, path, writes) or w.anchor for w in writes}
        anchors: list[cst.CSTNode] = [stands[w.anchor] for w in writes]
        by_anchor: dict[cst.CSTNode, ModeWrite] = {stands[w.anchor]: w for w in writes}
        for node in index.walk(func.body):
            if type(node) is cst.Return:
                if self._finally_resets(node, func, writes):
                    continue
                # `return evaluate(model, x)`: a write in the return itself runs last
                inside = [a for a in anchors if index.is_inside(a, node)]
                for anchor in inside[-1:] or index.reaching(anchors, node):
                    write = by_anchor[anchor]
                    if write.mode is Mode.EVAL:
                        return write.inner or write.anchor
        body = func.body
        last = body.body[-1] if isinstance(body, cst.IndentedBlock) and body.body else None
        if type(last) is cst.SimpleStatementLine and any(
            isinstance(s, (cst.Return, cst.Raise)) for s in last.body
        ):
            return None
        # Falling off the end: the last write every path runs (directly in the body, or
        # under a `with`), and any later ones that may run.
        tail: list[ModeWrite] = []
        for write in writes:
            if self._unconditional(stands[write.anchor], func):
                tail = [write]
            else:
                tail.append(write)
        order = index.order
        for write in reversed(tail):
            if write.mode is not Mode.EVAL:
                continue
            at = stands[write.anchor]
            # `if log: model.eval(); ...; model.train()`: a later switch in a block that
            # holds the eval undoes it on every path out of that block
            if any(
                other.mode is not Mode.EVAL
                and order[stands[other.anchor]] > order[at]
                and (block := index.block_of(stands[other.anchor])) is not None
                and index.is_inside(at, block)
                for other in tail
            ):
                continue
            return write.inner or write.anchor
        return None

    def _restore_at(self, write: ModeWrite, path: str, writes: list[ModeWrite]) -> cst.If | None:
        """The `if` of a restore: `training = model.training` read before the
        evaluation (before every eval write of the function), then `if training:
        model.train()`. It puts back the mode the function found, as
        `model.train(training)` does: where the flag is false the model came in eval
        mode, and the caller's own switch still holds. None when `write` is no such
        switch."""
        if write.mode is not Mode.TRAIN or write.inner is not None:
            return None
        guard = next((a for a in self.index.ancestors(write.anchor) if type(a) is cst.If), None)
        if (
            guard is None
            or type(guard.test) is not cst.Name
            or not isinstance(guard.body, cst.IndentedBlock)
            or len(guard.body.body) != 1
            or not self.index.is_inside(write.anchor, guard.body)
            or self.index.block_of(write.anchor) is not guard.body
        ):
            return None
        flag = guard.test.value
        bindings = self.forwards.values.bindings_of(flag, guard.test)
        if not bindings or not all(
            type(b) is cst.Assign
            and len(b.targets) == 1
            and type(b.value) is cst.Attribute
            and b.value.attr.value == "training"
            and module_path(b.value.value) == path
            for b in bindings
        ):
            return None
        order = self.index.order
        evals = [order[w.anchor] for w in writes if w.mode is Mode.EVAL]
        if evals and any(order[b] > min(evals) for b in bindings):
            return None  # read after the switch: the flag is the eval mode, not the found one
        return guard

    def _finally_resets(
        self, node: cst.Return, func: cst.FunctionDef, writes: list[ModeWrite]
    ) -> bool:
        """Does a `finally` the return runs through switch the model last, to train
        mode or back to what it was?"""
        for anc in self.index.ancestors(node):
            if anc is func:
                return False
            if type(anc) is cst.Try and anc.finalbody is not None:
                if not self.index.is_inside(node, anc.body):
                    continue
                last = [w for w in writes if self.index.is_inside(w.anchor, anc.finalbody)]
                if last:
                    return last[-1].mode is not Mode.EVAL
        return False

    def _unconditional(self, node: cst.CSTNode, func: cst.FunctionDef) -> bool:
        """Does every run of the function that returns normally pass `node`? Blocks
        of `with`, the body of a `try` and its `finally` always run."""
        inner: cst.CSTNode = node
        for anc in self.index.ancestors(node):
            if anc is func:
                return True
            if type(anc) is cst.Try:
                if inner is not anc.body and inner is not anc.finalbody:
                    return False
            elif isinstance(anc, cst.BaseCompoundStatement) and type(anc) is not cst.With:
                return False
            inner = anc
        return False

    def _callee_effect(self, call: cst.Call, path: str) -> _Effect | None:
        callee = self._callee_for(call, path)
        return self.effect(*callee) if callee is not None else None

    def _callee_for(self, call: cst.Call, path: str) -> tuple[cst.FunctionDef, str] | None:
        """(the function of this file a call runs, the name `path` has inside it)."""
        callee = self.summaries.resolve(call)
        if callee is None:
            return None
        for own_path, param in self._paths_into(call, callee):
            if own_path == path:
                return callee, param
        return None

    def _paths_into(self, call: cst.Call, callee: cst.FunctionDef):
        """(path in the caller, the same object's path in the callee) for what a call
        hands over (caller_arguments.path_in_caller): arguments bound to parameters, and
        `self.<attr>` into a method called through `self.`, or through an object of the
        class that the caller names (`trainer.validation()` switches `trainer.model`)."""
        method = self.index.enclosing_class(callee) is not None
        for param in self.summaries.of(callee).params:
            if param in ("self", "cls"):
                continue
            name = path_in_caller(call, callee, param, method=method)
            if name is not None:
                yield name, param
        if method and type(call.func) is cst.Attribute:
            for path in self._self_paths(callee):
                passed = path_in_caller(call, callee, path, method=method)
                if passed is not None:
                    yield passed, path
        # a model of the module's own, read by both (`model = Net()`, then `evaluate()`
        # whose body runs `model.eval()`): the same object on each side
        for name in self._module_globals(callee):
            if not self.summaries.bindings.binds(self.index.scope_of(call), name) or (
                self.index.scope_of(call) is self.index.module
            ):
                yield name, name

    def _module_globals(self, func: cst.FunctionDef) -> set[str]:
        """The names of module-level variables a module-level function switches or runs
        the forward of, without binding them itself (`def evaluate(): model.eval()`)."""
        index = self.index
        if index.scope_of(func) is not index.module:
            return set()
        found = self._globals.get(func)
        if found is None:
            found = set()
            bindings = self.summaries.bindings
            for call in self.calls_in(func):
                target = _forward_target(call)
                callee = call.func
                if type(callee) is cst.Attribute and callee.attr.value in MODULE_MODE_METHODS:
                    target = module_path(callee.value)
                if (
                    target is not None
                    and "." not in target
                    and not bindings.binds(func, target)
                    and bindings.binds(index.module, target)
                ):
                    found.add(target)
            self._globals[func] = found
        return found

    def _self_paths(self, method: cst.FunctionDef) -> set[str]:
        """The `self.<attr>` paths a method switches or runs a forward of."""
        found: set[str] = set()
        for call in self.calls_in(method):
            func = call.func
            target = None
            if type(func) is cst.Attribute and (
                func.attr.value in MODULE_MODE_METHODS or func.attr.value == "forward"
            ):
                target = module_path(func.value)
            elif type(func) is cst.Attribute:
                target = module_path(func)
            if target is not None and target.startswith("self.") and target.count(".") == 1:
                found.add(target)
            elif target == "self":
                continue
            callee = self.summaries.resolve(call)
            if (
                callee is not None
                and callee is not method
                and type(func) is cst.Attribute
                and module_path(func.value) == "self"
                and callee not in self._listing
            ):
                self._listing.add(callee)
                try:
                    found |= self._self_paths(callee)
                finally:
                    self._listing.discard(callee)
        return found

    def _runs_forward_of(self, call: cst.Call, path: str) -> bool:
        """Does `call` run the forward of `path`: `model(x)`, `model.forward(x)`, or a
        method or submodule of the model (`model.log_prob(x)`, `model.encoder(x)`, in the
        mode `model.eval()` left it in) that runs its layers, as the forwards say (not
        `model.init_hidden(bsz)` or `model.reset()`)?"""
        target = _forward_target(call)
        return target == path or (
            target is not None
            and type(call.func) is cst.Attribute
            and target.rsplit(".", 1)[0] == path
            and self.forwards.forward_target(call, {path}) == path
        )

    def _is_training_forward(self, call: cst.Call, path: str) -> bool:
        if not self._runs_forward_of(call, path):
            return False
        if not self.grad_mode.may_record(call):
            return False
        if not self.differentiation.result_is_differentiated(call):
            return False
        # an adversarial patch or a style-transfer image optimised through a model kept
        # in eval mode on purpose: the model is not what the loop trains
        return not self._trains_only_tensors(call)

    def _trains_only_tensors(self, call: cst.Call) -> bool:
        scope = self.index.scope_of(call)
        for around in (scope, *self.index.outer_scopes(scope)):
            # the innermost scope that steps (an LBFGS closure's forward: its caller)
            only = self.optimizers.steps_only_tensors(around)
            if only is not None:
                return only
        return False


def _in_finally_of(index: FileIndex, node: cst.CSTNode, other: cst.CSTNode) -> bool:
    """Is `node` in the `finally` of a `try` whose body holds `other` (so it runs on
    every way out of `other`'s block)?"""
    for anc in index.ancestors(node):
        if type(anc) is cst.Finally:
            statement = index.parent.get(anc)
            if type(statement) is cst.Try and index.is_inside(other, statement.body):
                return True
    return False


def _forward_target(call: cst.Call) -> str | None:
    """The model a call runs the forward of: `model(x)`, `model.forward(x)`."""
    func = call.func
    if type(func) is cst.Attribute:
        if func.attr.value == "forward":
            return module_path(func.value)
        if func.attr.value in MODULE_API:
            return None  # `model.eval()`, `model.parameters()`: not a forward
    return module_path(func)
