"""The targets of regression losses, and the network forwards they are computed from.

A loss of (input, target) pulls the input towards the target; the target stands still.
When the target is itself a network's output (a TD target `r + gamma * Q(s')`, a
teacher's logits, a reference network's features), gradient must not flow into it:
the question "which recorded forwards does this target come from?" is answered here
once, along def-use chains (a rebinding starts afresh, a binding under `no_grad` holds no
history), into the return values of this file's helpers (with their parameters mapped to
the caller's arguments), and stopping at every graph cut (`.detach()`, `.item()`,
`argmax`, the indices of `max(1)`, a fresh tensor made from the output's shape).

The loss shapes: a torch.nn.functional regression loss (`F.mse_loss(q, target)`), a
loss module of the same kinds (`nn.MSELoss()`), and the hand-written squared or absolute
difference (`(q - target).pow(2)`, `(q - target) ** 2`), whose right operand is taken
as the target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import libcst as cst

from gradlint.analysis.arguments import library_argument
from gradlint.analysis.caller_arguments import path_in_caller
from gradlint.analysis.dataflow import DataFlow
from gradlint.analysis.differentiation import DifferentiationReach
from gradlint.analysis.forwards import ForwardAnalysis
from gradlint.analysis.grad_mode import GradMode, GradModeAnalysis
from gradlint.analysis.index import ELEMENT_COMPREHENSIONS, FileIndex, dotted_name, target_names
from gradlint.analysis.optimizers import parameter_owners
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.tensors import TensorFacts, all_params
from gradlint.analysis.torch_api import (
    AUTOGRAD_GRAD,
    FRESH_TENSOR_METHODS,
    INTEGER_INPUT_FUNCTIONS,
    LOSS_REDUCTION_FUNCTIONS,
    LOSS_REDUCTION_METHODS,
    MODULE_COPYING_FUNCTIONS,
    MODULE_MODE_METHODS,
    MODULE_WRAPPING_METHODS,
    OPTIMIZER_CLASSES,
    OPTIMIZER_STEP_METHODS,
    REDUCTIONS_WITH_INDICES,
    REGRESSION_LOSSES,
    SHAPE_ONLY_ARGUMENT_METHODS,
    SQUARING_FUNCTIONS,
    SQUARING_METHODS,
    SYMMETRIC_REGRESSION_LOSS_MODULES,
    SYMMETRIC_REGRESSION_LOSSES,
    is_regression_loss,
)
from gradlint.analysis.values import ValueAnalysis, is_graph_free

_FUNCTIONAL = "torch.nn.functional."
# How deep into helpers' return values a target is followed.
_HELPER_DEPTH = 3
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


@dataclass(frozen=True)
class LossSite:
    """A loss of (prediction, target): the loss call or squared difference itself."""

    node: cst.BaseExpression
    prediction: cst.BaseExpression
    target: cst.BaseExpression
    # the loss is the same whichever operand is the target (`mse_loss`, `(a - b) ** 2`):
    # the written order is no evidence of the roles (see LossTargets.oriented)
    symmetric: bool = False


@dataclass(frozen=True)
class TargetForward:
    """A forward of a module with parameters that a target is computed from, recorded
    by autograd and never detached on the way."""

    call: cst.Call
    # the model as the loss's function names it (a helper's parameter mapped back)
    model: str
    # the model as named where the forward runs
    local_model: str
    # the way to the target adds or subtracts other values: `r + gamma * Q(s')`
    combined: bool
    # the helper calls through which the target reaches it, outermost first
    via: tuple[cst.Call, ...] = ()
    # for a loss written in a helper of this file (`def kd_loss(student, teacher)`),
    # the call of that helper whose argument the forward computes
    loss_call: cst.Call | None = None


@dataclass(frozen=True)
class _Frame:
    """A helper entered through `call`: its parameters are the call's arguments."""

    call: cst.Call
    function: cst.FunctionDef
    outer: _Frame | None


class LossTargets:
    def __init__(
        self,
        index: FileIndex,
        flow: DataFlow,
        values: ValueAnalysis,
        tensors: TensorFacts,
        forwards: ForwardAnalysis,
        grad_mode: GradModeAnalysis,
        summaries: FunctionSummaries,
        reach: DifferentiationReach,
    ) -> None:
        self.index = index
        self.flow = flow
        self.values = values
        self.tensors = tensors
        self.forwards = forwards
        self.grad_mode = grad_mode
        self.summaries = summaries
        self.reach = reach
        self._sites: list[LossSite] | None = None
        self._optimized: set[str] | None = None
        self._stepped: set[str] | None = None
        # the call of the loss's helper whose arguments a walk is following, if any
        self._lifted_through: cst.Call | None = None
        self._trained_calls: dict[cst.FunctionDef, list[cst.Call]] = {}

    # -- the losses --------------------------------------------------------------------

    def sites(self) -> list[LossSite]:
        """Every regression loss of the file, in source order."""
        if self._sites is None:
            found: list[LossSite] = []
            for node in self.index.nodes:
                kind = type(node)
                if kind is cst.Call:
                    site = self._loss_call(cast(cst.Call, node))
                elif kind is cst.BinaryOperation:
                    site = self._squared_difference(cast(cst.BinaryOperation, node))
                else:
                    continue
                if site is not None:
                    found.append(site)
            self._sites = found
        return self._sites

    def _loss_call(self, call: cst.Call) -> LossSite | None:
        func = call.func
        qualified = self.index.qualified_name(func) or ""
        if qualified.startswith(_FUNCTIONAL):
            loss = qualified[len(_FUNCTIONAL) :]
            if loss not in REGRESSION_LOSSES:
                return None
            symmetric = loss in SYMMETRIC_REGRESSION_LOSSES
        else:
            if type(func) is cst.Call:
                # `nn.MSELoss()(q, target)`
                built = self.index.qualified_name(func.func) or ""
            else:
                built = self.tensors.module_class(func, self._binding_site(func, call)) or ""
            if not _is_loss_module(built):
                return None
            symmetric = built.rsplit(".", 1)[-1] in SYMMETRIC_REGRESSION_LOSS_MODULES
        prediction = library_argument(call, "input", 0)
        target = library_argument(call, "target", 1)
        if prediction is None or target is None:
            return None
        return LossSite(call, prediction.value, target.value, symmetric)

    def _binding_site(self, func: cst.BaseExpression, call: cst.Call) -> cst.CSTNode:
        """Where the loss module a call names is built: the call's own scope, or, for a
        global read in a function (`criterion = nn.MSELoss()` at the top of the file),
        the module-level binding."""
        if type(func) is cst.Name:
            bindings = self.values.bindings_of(func.value, call)
            if bindings and all(self.index.scope_of(b) is self.index.module for b in bindings):
                return bindings[0]
        return call

    def _squared_difference(self, node: cst.BinaryOperation) -> LossSite | None:
        if type(node.operator) is not cst.Subtract:
            return None
        squared = self._squaring_of(node)
        if squared is None:
            return self._squared_bound_difference(node)
        if not self._reduced(squared):
            return None
        return LossSite(node, node.left, node.right, symmetric=True)

    def _squared_bound_difference(self, node: cst.BinaryOperation) -> LossSite | None:
        """A difference bound to a name that a loss then squares: the TD error of an
        actor-critic (`delta = reward + gamma * critic(s2) * (1 - done) - critic(s)`,
        then `critic_loss = delta ** 2` or `delta.pow(2).mean()`). The squared name is
        a loss when it is reduced, as an inline difference must be, or bound as it is
        (`critic_loss = delta ** 2`), which no density term is (`-0.5 * d ** 2 / var`)."""
        statement = self.index.parent.get(node)
        if (
            type(statement) is not cst.Assign
            or len(statement.targets) != 1
            or type(statement.targets[0].target) is not cst.Name
        ):
            return None
        name = cast(cst.Name, statement.targets[0].target).value
        for use in self.values.uses_reached(statement, name):
            squared = self._squaring_of(use)
            if squared is None:
                continue
            if self._reduced(squared) or type(self.index.parent.get(squared)) is cst.Assign:
                return LossSite(node, node.left, node.right, symmetric=True)
        return None

    def _squaring_of(self, difference: cst.CSTNode) -> cst.CSTNode | None:
        """The expression that squares (or takes the size of) the difference: `d ** 2`,
        `d.pow(2)`, `d.abs()`, `torch.square(d)`."""
        parent = self.index.parent.get(difference)
        if type(parent) is cst.BinaryOperation:
            if type(parent.operator) is cst.Power and parent.left is difference:
                return parent
            return None
        if type(parent) is cst.Attribute:
            call = self.index.parent.get(parent)
            if (
                parent.attr.value in SQUARING_METHODS
                and type(call) is cst.Call
                and call.func is parent
            ):
                return call
            return None
        if type(parent) is cst.Arg:
            call = self.index.parent.get(parent)
            if (
                type(call) is cst.Call
                and call.args[0] is parent
                and (self.index.qualified_name(call.func) or "") in SQUARING_FUNCTIONS
            ):
                return call
        return None

    def _reduced(self, squared: cst.CSTNode) -> bool:
        """Is the squared difference averaged or summed into a loss, maybe weighted on
        the way (`(w * (q - t) ** 2).mean()`), rather than a term of a density or a
        distance (`-0.5 * (z - mu) ** 2 / var`)?"""
        parent_of = self.index.parent
        node = squared
        parent = parent_of.get(node)
        while type(parent) is cst.BinaryOperation and isinstance(
            parent.operator, (cst.Multiply, cst.Divide)
        ):
            node, parent = parent, parent_of.get(parent)
        if type(parent) is cst.Attribute:
            call = parent_of.get(parent)
            return (
                parent.value is node
                and parent.attr.value in LOSS_REDUCTION_METHODS
                and type(call) is cst.Call
                and call.func is parent
            )
        if type(parent) is cst.Arg:
            call = parent_of.get(parent)
            return (
                type(call) is cst.Call
                and call.args[0] is parent
                and (self.index.qualified_name(call.func) or "") in LOSS_REDUCTION_FUNCTIONS
            )
        return False

    def oriented(self, site: LossSite) -> LossSite:
        """The site with its operands in the roles they play. A symmetric loss written
        target first (`F.mse_loss(target, q)`, `(target - q) ** 2`) computes the same
        thing: there, the operand that bootstraps (a network's output joined to other
        values, `r + gamma * Q'(s')`) is the target, and a network's plain output on the
        other side (`Q(s, a)`) is the prediction, whichever order the call writes."""
        if not site.symmetric:
            return site
        written_target = self.forwards_in(site.target, site.node)
        if not written_target:
            return site
        written_prediction = self.forwards_in(site.prediction, site.node)
        swapped = LossSite(site.node, site.target, site.prediction, site.symmetric)
        if not any(f.combined for f in written_target) and any(
            f.combined for f in written_prediction
        ):
            return swapped
        # `loss(q_target, q_pred)` with `q_pred` from the network an optimizer steps and
        # `q_target` from one none does (a target network): the stepped one is trained
        stepped = self.stepped_models()
        if all(f.local_model in stepped for f in written_target) and any(
            f.local_model not in stepped for f in written_prediction
        ):
            return swapped
        return site

    def stepped_models(self) -> set[str]:
        """The models an optimizer of this file holds (`Adam(net.parameters())`), and
        those whose own optimizer is stepped (`self.critic.optimizer.step()`, the
        network's class building `self.optimizer = Adam(self.parameters())`), as
        written."""
        if self._stepped is None:
            found = set(self.optimized_models())
            calls_on: dict[str, set[str]] = {}  # `self.critic.optimizer`: {"step", "zero_grad"}
            for call in self.index.calls:
                func = call.func
                if type(func) is not cst.Attribute or func.attr.value not in OPTIMIZER_STEP_METHODS:
                    continue
                holder = func.value
                if type(holder) is not cst.Attribute:
                    continue
                owner = dotted_name(holder.value)
                if owner is None:
                    continue
                calls_on.setdefault(dotted_name(holder) or "", set()).add(func.attr.value)
                if func.attr.value == "step" and any(
                    self._optimizer_of_self(value)
                    for value in self.tensors.module_constructors(holder, call)
                ):
                    found.add(owner)
            # built in another file: a holder that is cleared and stepped is an optimizer
            # (a learning-rate scheduler has no `zero_grad`), and its owner's
            found.update(
                holder.rsplit(".", 1)[0]
                for holder, called in calls_on.items()
                if called == OPTIMIZER_STEP_METHODS
            )
            self._stepped = found
        return self._stepped

    def _optimizer_of_self(self, value: cst.CSTNode) -> bool:
        if type(value) is not cst.Call:
            return False
        qualified = self.index.qualified_name(value.func) or ""
        last = qualified.rsplit(".", 1)[-1]
        if last not in OPTIMIZER_CLASSES and not (
            qualified.startswith("torch.optim.") and last[:1].isupper()
        ):
            return False
        return "self" in parameter_owners(self.index, value)

    def is_trained(self, site: LossSite) -> bool:
        """Does the loss reach a differentiation in its function, or leave the function
        (returned, or stored on the object) for a caller to differentiate?"""
        node = site.node
        if self.reach.differentiations_of(node, first=True):
            return True
        index = self.index
        if any(type(a) is cst.Return for a in index.ancestors(node)):
            return True
        work = [(index.statement_of(node), var) for var in self.reach.produced(node)]
        seen: set[tuple[cst.CSTNode, str]] = set()
        while work:
            binding, var = work.pop()
            if (binding, var) in seen or len(seen) > 200:
                continue
            seen.add((binding, var))
            if var.startswith("self."):
                return True  # kept on the object: another method may differentiate it
            for use in self.values.uses_reached(binding, var):
                statement = index.statement_of(use)
                if type(statement) is cst.Return:
                    return True
                targets: list[cst.BaseExpression] = []
                if isinstance(statement, cst.Assign):
                    targets = [t.target for t in statement.targets]
                elif isinstance(statement, (cst.AugAssign, cst.AnnAssign)):
                    targets = [statement.target]
                for target in targets:
                    work.extend((statement, v) for v in target_names(target))
        return False

    # -- the forwards a target comes from ---------------------------------------------

    def forwards_in(self, expr: cst.BaseExpression, use: cst.CSTNode) -> list[TargetForward]:
        """The recorded, undetached forwards of modules with parameters that `expr`
        (read at `use`) is computed from. In a helper of this file, a parameter is what
        the helper's trained calls hand it (_lift)."""
        if is_graph_free(self.values.of_expr(expr, use)):
            return []
        found: list[TargetForward] = []
        self._walk(expr, False, None, set(), found)
        return found

    def is_differential_residual(self, site: LossSite) -> bool:
        """Is either operand computed from a derivative taken by `autograd.grad` (or a
        helper of this file that takes one): `mse(u_t, nu * u_xx - u * u_x)` of a PINN,
        a gradient penalty? Then the loss is one equation whose every term is meant to
        be differentiated, not a prediction regressed onto a target."""
        for operand in (site.prediction, site.target):
            derivatives: list[cst.Call] = []
            self._walk(operand, False, None, set(), [], derivatives)
            if derivatives:
                return True
        return False

    def _is_derivative(self, call: cst.Call) -> bool:
        if self.index.qualified_name(call.func) in AUTOGRAD_GRAD:
            return True
        helper = self.summaries.resolve(call)
        return helper is not None and self.summaries.of(helper).differentiates

    def direct_models(self, forwards: list[TargetForward]) -> set[str]:
        """The models of these forwards (of a prediction) run on inputs that no recorded
        forward produced: `Q(s)`, not `D(G(z))` or `vgg(transformer(x))`."""
        models: set[str] = set()
        for forward in forwards:
            if not forward.via and not any(
                self.forwards_in(arg.value, forward.call) for arg in forward.call.args
            ):
                models.add(forward.model)
        return models

    def _walk(
        self,
        expr: cst.CSTNode,
        combined: bool,
        frame: _Frame | None,
        seen: set[tuple[cst.CSTNode, str]],
        found: list[TargetForward],
        derivatives: list[cst.Call] | None = None,
    ) -> None:
        stack: list[tuple[cst.CSTNode, bool]] = [(expr, combined)]
        while stack:
            node, joined = stack.pop()
            if self._cuts(node):
                continue
            kind = type(node)
            if kind in _SCOPES:
                continue
            if kind is cst.BinaryOperation:
                assert isinstance(node, cst.BinaryOperation)
                joined = joined or isinstance(node.operator, (cst.Add, cst.Subtract))
                stack.append((node.left, joined))
                stack.append((node.right, joined))
                continue
            if kind is cst.Call:
                assert isinstance(node, cst.Call)
                if derivatives is not None and self._is_derivative(node):
                    derivatives.append(node)
                self._call(node, joined, frame, seen, found, derivatives)
                func = node.func
                if type(func) is cst.Attribute:
                    if func.attr.value in SHAPE_ONLY_ARGUMENT_METHODS:
                        stack.append((func.value, joined))
                        continue
                    stack.append((func.value, joined))
                for arg in node.args:
                    stack.append((arg.value, joined))
                continue
            if kind is cst.Name or kind is cst.Attribute:
                name = dotted_name(node)
                if name is not None:
                    self._name(name, node, joined, frame, seen, found, derivatives)
                    continue
                assert isinstance(node, cst.Attribute)
                stack.append((node.value, joined))
                continue
            if kind is cst.Subscript:
                assert isinstance(node, cst.Subscript)
                stack.append((node.value, joined))  # the index carries no gradient
                continue
            if kind in ELEMENT_COMPREHENSIONS:
                # the value is the elements: the iterables reach them only through the
                # clauses' names (read at the element), the conditions not at all
                stack.append((node.elt, joined))  # type: ignore[attr-defined]
                continue
            if kind is cst.DictComp:
                assert isinstance(node, cst.DictComp)
                stack.append((node.value, joined))
                continue
            stack.extend((child, joined) for child in self.index.kids(node))

    def _cuts(self, node: cst.CSTNode) -> bool:
        """Does the expression hand back no history of what it is computed from?"""
        if self.flow.is_graph_cut(node):
            return True
        if type(node) is cst.Call:
            if type(node.func) is cst.Attribute:
                return node.func.attr.value in FRESH_TENSOR_METHODS
            return (self.index.qualified_name(node.func) or "") in INTEGER_INPUT_FUNCTIONS
        if type(node) is cst.Subscript:
            # `q.max(1)[1]`, `torch.max(q, 1)[1]`: the indices
            value = node.value
            if type(value) is cst.Call and len(node.slice) == 1:
                index = node.slice[0].slice
                func = value.func
                method = (
                    func.attr.value
                    if type(func) is cst.Attribute
                    else (self.index.qualified_name(func) or "").rsplit(".", 1)[-1]
                )
                return (
                    method in REDUCTIONS_WITH_INDICES
                    and type(index) is cst.Index
                    and type(index.value) is cst.Integer
                    and index.value.value == "1"
                )
        if type(node) is cst.Attribute:
            return node.attr.value == "indices"
        return False

    def _call(
        self,
        call: cst.Call,
        joined: bool,
        frame: _Frame | None,
        seen: set[tuple[cst.CSTNode, str]],
        found: list[TargetForward],
        derivatives: list[cst.Call] | None = None,
    ) -> None:
        model = self.forward_model(call)
        if model is not None:
            if (
                self.grad_mode.mode_at(call) is GradMode.RECORDING
                and not self.forwards.is_frozen(model, call)
                and not (frame is None and self._frozen_by_every_caller(model, call))
            ):
                found.append(
                    TargetForward(
                        call,
                        _outer_name(model, frame, self),
                        model,
                        joined,
                        _via(frame),
                        self._lifted_through,
                    )
                )
            return
        depth = 0
        outer = frame
        while outer is not None:
            depth += 1
            outer = outer.outer
        if depth >= _HELPER_DEPTH:
            return
        helper = self.summaries.function_run_by(call)
        if helper is None:
            self._imported_target(call, frame, found)
            return
        if self.forwards.differentiates(helper):
            return
        inner = _Frame(call, helper, frame)
        for ret, value in self.index.value_returns(helper):
            if self.grad_mode.mode_at(ret) is GradMode.RECORDING:
                self._walk(value, joined, inner, seen, found, derivatives)

    def _imported_target(
        self, call: cst.Call, frame: _Frame | None, found: list[TargetForward]
    ) -> None:
        """`target = td_target(q_net, r, s2)`, a helper of another project file that
        returns the forward of a network it is handed added to other values
        (ExternalFunction.bootstrapped_params): that network's forward, run by the
        call with autograd recording."""
        if self.summaries.project is None or self.grad_mode.mode_at(call) is not GradMode.RECORDING:
            return
        external = self.summaries.resolve_external(call)
        if external is None or external.no_grad or external.sets_grad_mode:
            return
        for param in external.bootstrapped_params:
            passed = self.summaries.external_argument(call, external, param)
            model = dotted_name(passed) if passed is not None else None
            if passed is None or model is None or not self.forwards.has_parameters(passed, call):
                continue
            if not self.forwards.is_frozen(model, call):
                found.append(
                    TargetForward(call, _outer_name(model, frame, self), model, True, _via(frame))
                )

    def _name(
        self,
        name: str,
        use: cst.CSTNode,
        joined: bool,
        frame: _Frame | None,
        seen: set[tuple[cst.CSTNode, str]],
        found: list[TargetForward],
        derivatives: list[cst.Call] | None = None,
    ) -> None:
        bindings = self.values.reaching_bindings(name, use)
        while not bindings and "." in name and not name.startswith(("self.", "cls.")):
            # `features.relu2_2` of `features = vgg(x)`: a field of what the name holds
            name = name.rsplit(".", 1)[0]
            bindings = self.values.reaching_bindings(name, use)
        for binding in bindings:
            key = (binding, name)
            if key in seen:
                continue
            seen.add(key)
            if type(binding) is cst.Param:
                function = self.index.scope_of(binding)
                if frame is not None and function is frame.function:
                    argument = self.summaries.of(frame.function).forwarded_argument(
                        frame.call, name
                    )
                    if argument is not None:
                        self._walk(argument, joined, frame.outer, seen, found, derivatives)
                elif frame is None and self._lifted_through is None:
                    self._lift(function, name, joined, seen, found, derivatives)
                continue
            if self.grad_mode.mode_at(binding) is not GradMode.RECORDING:
                continue  # computed under no_grad: no history
            if self._unpacked_indices(binding, name):
                continue
            value = self.values.bound_expression(binding, name)
            if value is None:
                # `for r, q in zip(rewards, next_q)`: an element of what is walked
                value = self.values.element_source(binding, name)
            if value is not None:
                self._walk(value, joined, frame, seen, found, derivatives)
        for stored, at in self.values.item_stores(name, use):
            key = (at, name)
            if key not in seen and self.grad_mode.mode_at(at) is GradMode.RECORDING:
                seen.add(key)
                # `q_target[i, a] = r + gamma * q_next.max(1)[0]`: joined to what was there
                self._walk(stored, True, frame, seen, found, derivatives)

    def _lift(
        self,
        function: cst.CSTNode,
        name: str,
        joined: bool,
        seen: set[tuple[cst.CSTNode, str]],
        found: list[TargetForward],
        derivatives: list[cst.Call] | None,
    ) -> None:
        """A loss written in a helper of this file (`def kd_loss(student, teacher, T):
        ... F.kl_div(p, F.softmax(teacher / T))`), its operand a parameter: what each call
        of the helper whose loss a backward differentiates hands that parameter, one
        level up (`kd_loss(student(x), teacher(x), 4.0)`)."""
        if type(function) is not cst.FunctionDef:
            return
        summary = self.summaries.of(function)
        for call in self._trained_calls_of(function):
            argument = summary.forwarded_argument(call, name)
            if argument is None:
                continue
            self._lifted_through = call
            try:
                self._walk(argument, joined, None, seen, found, derivatives)
            finally:
                self._lifted_through = None

    def _frozen_by_every_caller(self, model: str, call: cst.Call) -> bool:
        """`net(real)` in `def perceptual_loss(net, fake, real)`: a module the loss's
        helper is handed, frozen in what each of its trained calls hands it
        (`perceptual_loss(vgg, fake, hr)` after `vgg.requires_grad_(False)`)."""
        function = self.index.scope_of(call)
        root = model.partition(".")[0]
        if type(function) is not cst.FunctionDef or root not in {
            p.name.value for p in all_params(function.params)
        }:
            return False
        calls = self._trained_calls_of(function)
        if not calls:
            return False
        method = self.index.enclosing_class(function) is not None
        for caller in calls:
            passed = path_in_caller(caller, function, model, method=method)
            if passed is None or not self.forwards.is_frozen(passed, caller):
                return False
        return True

    def _trained_calls_of(self, function: cst.FunctionDef) -> list[cst.Call]:
        """The calls of this file that run `function` (by its name, or through a
        parameter every caller hands it to) with autograd recording, and whose result a
        backward differentiates."""
        found = self._trained_calls.get(function)
        if found is None:
            found = self._trained_calls[function] = [
                call
                for call in self.index.calls
                if (
                    self.summaries.function_run_by(call) is function
                    # `criterion(out, t, y)`, the loss handed in as a parameter
                    or self.summaries.function_handed_in(call) is function
                )
                and self.grad_mode.mode_at(call) is GradMode.RECORDING
                and self.reach.differentiations_of(call, first=True)
            ]
        return found

    def _unpacked_indices(self, binding: cst.CSTNode, name: str) -> bool:
        """`_, best = q.max(-1)`: the indices of a reduction, without history."""
        if type(binding) is not cst.Assign or type(binding.value) is not cst.Call:
            return False
        func = binding.value.func
        method = (
            func.attr.value
            if type(func) is cst.Attribute
            else (self.index.qualified_name(func) or "").rsplit(".", 1)[-1]
        )
        if method not in REDUCTIONS_WITH_INDICES:
            return False
        for target in binding.targets:
            pair = target.target
            if type(pair) is cst.Tuple and len(pair.elements) == 2:
                if dotted_name(pair.elements[1].value) == name:
                    return True
        return False

    # -- the models ----------------------------------------------------------------------

    def forward_model(self, call: cst.Call) -> str | None:
        """The model with parameters whose forward `call` runs, as written: the
        forward analysis's answer, or a copy of such a model (`target =
        copy.deepcopy(net)`), whose parameters require grad as the original's do."""
        model = self.forwards.model_forward(call)
        if model is not None:
            return model
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "forward":
            func = func.value
        name = dotted_name(func)
        if name is None:
            return None
        constructors = self.tensors.module_constructors(func, call)
        for value in constructors:
            if (
                type(value) is cst.Call
                and (self.index.qualified_name(value.func) or "") in MODULE_COPYING_FUNCTIONS
                and value.args
                and self.forwards.has_parameters(value.args[0].value, value)
            ):
                return name
        if constructors and all(self._switched_network(value) for value in constructors):
            return name
        return None

    def _switched_network(self, value: cst.CSTNode) -> bool:
        """`Vgg16().eval()`, `Teacher(cfg).train(False)`: an instance of a class out of
        sight, put in a training mode as it is built, which only an nn.Module has; a
        network that someone builds to run, so one with parameters."""
        switched = False
        while (
            type(value) is cst.Call
            and type(value.func) is cst.Attribute
            and value.func.attr.value in MODULE_WRAPPING_METHODS
        ):
            switched = switched or value.func.attr.value in MODULE_MODE_METHODS
            value = value.func.value
        if not switched or type(value) is not cst.Call:
            return False
        qualified = self.index.qualified_name(value.func) or ""
        last = qualified.rsplit(".", 1)[-1]
        return last[:1].isupper() and not qualified.startswith("torch.")

    def optimized_models(self) -> set[str]:
        """The models whose `.parameters()` this file hands to an optimizer, as written."""
        if self._optimized is None:
            found: set[str] = set()
            for call in self.index.calls:
                qualified = self.index.qualified_name(call.func) or ""
                last = qualified.rsplit(".", 1)[-1]
                if last not in OPTIMIZER_CLASSES and not (
                    qualified.startswith("torch.optim.") and last[:1].isupper()
                ):
                    continue
                found |= parameter_owners(self.index, call)
                handed = library_argument(call, "params", 0)
                if handed is not None and type(handed.value) is cst.Name:
                    # `params = list(student.parameters()) + list(teacher.parameters())`,
                    # then `SGD(params)`
                    name = handed.value.value
                    for binding in self.values.bindings_of(name, call):
                        bound = self.values.bound_expression(binding, name)
                        if bound is not None:
                            found |= parameter_owners(self.index, bound)
            self._optimized = found
        return self._optimized


def _is_loss_module(qualified: str) -> bool:
    return not qualified.startswith(_FUNCTIONAL) and is_regression_loss(qualified)


def _via(frame: _Frame | None) -> tuple[cst.Call, ...]:
    calls: list[cst.Call] = []
    while frame is not None:
        calls.append(frame.call)
        frame = frame.outer
    return tuple(reversed(calls))


def _outer_name(model: str, frame: _Frame | None, targets: LossTargets) -> str:
    """The model as the outermost caller names it: a helper's parameter is the
    argument its call passes; `self.x` in a method of another object's class is
    `obj.x` for `obj.method(...)`."""
    while frame is not None:
        head, _, rest = model.partition(".")
        params = {p.name.value for p in all_params(frame.function.params)}
        if head in params and head not in ("self", "cls"):
            method = targets.index.enclosing_class(frame.function) is not None
            passed = path_in_caller(frame.call, frame.function, model, method=method)
            if passed is None:
                return model
            model = passed
        elif head == "self":
            func = frame.call.func
            receiver = dotted_name(func.value) if type(func) is cst.Attribute else None
            if receiver is not None and receiver != "self":
                model = f"{receiver}.{rest}" if rest else receiver
        frame = frame.outer
    return model
