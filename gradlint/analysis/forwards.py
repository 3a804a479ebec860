"""Does a forward pass need autograd? The question behind "evaluation without no_grad"
(and every rule about inference that records a graph): a forward whose graph is used
must keep recording, whatever mode the module is in.

A forward's graph is used when:
- its result flows into `backward()` / `autograd.grad` in the same function;
- one of its inputs requires grad (`x.requires_grad_()`, `requires_grad=True`): input
  gradients are the point (PINN residuals, saliency, adversarial examples);
- its result is handed, together with one of its inputs, to another call: the shape of a
  derivative operator (`operator(inputs, outputs)`, `jacobian(y, x)`), which gradlint
  cannot see into;
- the module's own `forward` differentiates (an unrolled inner optimisation, an energy
  model solved by gradient descent), so it cannot run without grad.

That a function differentiates says nothing of its other forwards: a MAML evaluation
adapts on the support set with `autograd.grad` (which needs grad) and then runs the query
forward only to read an accuracy. Each forward is judged by its own result: it is
inference when that result, and all that is computed from it, ends as numbers, so no
differentiated value depends on it (see `inference_forwards`).
"""

from __future__ import annotations

from collections.abc import Callable, Set
from typing import TypeVar, cast

import libcst as cst

from gradlint.analysis.arguments import argument_of, library_argument, shape_of, signature_of
from gradlint.analysis.autograd_calls import AutogradCalls
from gradlint.analysis.bindings import BindingKind, all_params, bound_names
from gradlint.analysis.caller_arguments import ArgumentHere, CallerArguments, path_in_caller
from gradlint.analysis.dataflow import DataFlow
from gradlint.analysis.differentiation import DifferentiationReach
from gradlint.analysis.grad_mode import GradMode, GradModeAnalysis
from gradlint.analysis.imports import CST_IMPORTS
from gradlint.analysis.index import (
    FileIndex,
    bool_literal,
    dotted_name,
    element_key_length,
    forward_method,
    literal_entry,
    module_path,
    own_method,
    path_root,
    positional_arguments,
)
from gradlint.analysis.loops import LoopAnalysis
from gradlint.analysis.optimizers import optimized_modules
from gradlint.analysis.project import (
    forward_clears_own_grads_of_source,
    freezes_of_class_source,
)
from gradlint.analysis.result_uses import ResultUses
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.summary_facts import Holder, output_kept, storing_holder
from gradlint.analysis.tensors import (
    TensorFacts,
    built_module_call,
    is_false,
    requires_grad_switch,
)
from gradlint.analysis.torch_api import (
    CONTAINER_FILLING_METHODS,
    CONTAINER_MODULES,
    DEEP_COPYING_FUNCTIONS,
    DETACHING_ATTRIBUTES,
    DETACHING_METHODS,
    GRAD_MODE_SETTER,
    GRADLESS_LIBRARY_METHODS,
    LAYERLESS_VALUE_MODULES,
    MODEL_ZOO_NAMESPACES,
    MODEL_ZOO_NON_MODELS,
    MODULE_MODE_METHODS,
    MODULE_PRESERVING_FUNCTIONS,
    MODULE_RUNNING_FUNCTIONS,
    MODULE_WRAPPING_METHODS,
    NAMED_SUBMODULE_ITERATORS,
    NO_AFFINE_FLAGS,
    NOT_FORWARD_METHODS,
    OPTIMIZER_NAMESPACES,
    PARAMETER_EVIDENCE_METHODS,
    PARAMETER_ITERATORS,
    PARAMETRIC_LAYERS,
    PARTIAL,
    REQUIRES_GRAD_METHOD,
    SAME_VALUE_STEPS,
    SUBMODULE_ITERATORS,
    TENSOR_MAKING_FUNCTIONS,
    TENSOR_ONLY_METHODS,
    TRAINED_MODEL_LOADERS,
    VIEW_METHODS,
    WRAPPER_MODULES,
    builds_model_with_weights,
    called_implicitly,
    computes_a_tensor,
    is_model_zoo,
    is_torch_container,
    torch_base_gives_weights,
    torch_base_holds_no_parameters,
)
from gradlint.analysis.values import Kind, ValueAnalysis, is_graph_free

_TENSORS = frozenset({Kind.TENSOR, Kind.LEAF, Kind.GRAPH})
# What a value passes through unchanged, or with its history, into the expression that
# holds it (a method call on it is a cst.Call whose func holds it).
_SHOWN_WHOLE = (
    cst.Arg,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.SubscriptElement,
    cst.Index,
    cst.BinaryOperation,
    cst.UnaryOperation,
    cst.Tuple,
    cst.List,
    cst.Element,
)
_T = TypeVar("_T")


# `.detach()` and `.data`: how code drops a graph it knows is there
_DETACHING = DETACHING_METHODS | DETACHING_ATTRIBUTES


# The builder of a mapping from names to layers that `nn.Sequential` takes
# (`nn.Sequential(OrderedDict([("fc", layer), ...]))`).
_NAMED_ELEMENT_BUILDERS = frozenset({"collections.OrderedDict"})
# How many callers up a parameter's instance is followed to where it is built
# (`calculate_fid(paths)` builds it, `_statistics(files, model)` hands it on, and
# `get_activations(files, model)` runs it).
_CALLER_HOPS = 3


def _switches_weights_off(call: cst.Call) -> bool:
    """Does the call build a parametric torch.nn layer without its weights
    (`affine=False`, `elementwise_affine=False`)?"""
    return any(
        arg.keyword.value in NO_AFFINE_FLAGS and bool_literal(arg.value) is False
        for arg in call.args
        if arg.keyword is not None
    )


def _named_values(value: cst.CSTNode) -> list[cst.CSTNode]:
    """The values a mapping is built with: a dict display's, or the second item of each
    pair a mapping builder is handed (`OrderedDict([("conv", nn.Conv2d(1, 8, 3))])`);
    the builder's argument itself when its pairs cannot be read."""
    if type(value) is cst.Dict:
        return [e.value for e in value.elements if type(e) is cst.DictElement]
    if type(value) is not cst.Call:
        return [value]
    found: list[cst.CSTNode] = []
    for argument in value.args:
        if argument.keyword is not None:
            found.append(argument.value)  # `dict(fc=nn.Linear(4, 2))`
            continue
        pairs = argument.value
        if type(pairs) is cst.Dict:
            found += _named_values(pairs)
        elif isinstance(pairs, (cst.List, cst.Tuple)) and all(
            isinstance(e.value, (cst.Tuple, cst.List)) and len(e.value.elements) == 2
            for e in pairs.elements
        ):
            found += [e.value.elements[1].value for e in pairs.elements]  # type: ignore[attr-defined]
        else:
            found.append(pairs)
    return found


class ForwardAnalysis:
    def __init__(
        self,
        index: FileIndex,
        flow: DataFlow,
        autograd: AutogradCalls,
        loops: LoopAnalysis,
        values: ValueAnalysis,
        tensors: TensorFacts,
        grad_mode: GradModeAnalysis,
        summaries: FunctionSummaries,
        reach: DifferentiationReach,
        result_uses: ResultUses,
        caller_arguments: CallerArguments,
    ) -> None:
        self.index = index
        self.caller_arguments = caller_arguments
        self.flow = flow
        self.autograd = autograd
        self.loops = loops
        self.values = values
        self.tensors = tensors
        self.grad_mode = grad_mode
        self._asking_callers: set[cst.FunctionDef] = set()  # guards mutual recursion
        # class -> {attribute: its own `__init__` parameter a base keeps there}
        self._base_kept: dict[cst.ClassDef, dict[str, cst.BaseExpression]] = {}
        self._constructions_known: dict[tuple[cst.FunctionDef, str], bool] = {}
        # method -> (its module-level class, the class's own `__init__`), or None
        self._own_inits: dict[cst.FunctionDef, tuple[cst.ClassDef, cst.FunctionDef] | None] = {}
        self._unwrapping: set[cst.Call] = set()  # module-preserving calls being read
        self._aliasing: set[cst.Assign] = set()  # `model = net` bindings being read
        self._asking_factories: set[cst.FunctionDef] = set()
        self.summaries = summaries
        self.reach = reach
        self.result_uses = result_uses
        self._differentiating_classes: set[str] | None = None
        # of those, the ones whose forward differentiates only in training mode
        self._differentiating_only_in_training: set[str] = set()
        self._forward_methods: set[str] | None = None
        self._parameter_owners: dict[str, list[cst.Call]] | None = None
        self._self_calls: dict[str, list[cst.Call]] | None = None
        self._frozen: list[tuple[str, cst.CSTNode, bool]] | None = None
        # receiver path -> the calls that fill it (`net.add_module(...)`), read once
        self._container_fillings: dict[str, list[cst.Call]] | None = None
        # (id(scope), name) -> has_parameters: the scope is the file's module or one of
        # its functions (index.scope_of), alive with the index, and LibCST's node hash
        # is a Python call (asked of every forward GL012 looks at)
        self._has_parameters: dict[tuple[int, str], bool] = {}
        self._parameterless: set[str] | None = None
        self._grad_mode_methods: dict[tuple[str, str | None], bool] = {}
        self._parameter_functions: dict[cst.FunctionDef | cst.Lambda, bool] = {}
        # id(call) -> _imported_forward_method, with the call kept alive
        self._imported_forwards: dict[int, tuple[cst.Call, bool]] = {}
        self._differentiates: dict[cst.FunctionDef, bool] = {}
        self._scope_differentiation: dict[tuple[cst.CSTNode, str], bool] = {}
        self._state_differentiation: dict[tuple[cst.CSTNode, str], bool] = {}

    # -- the queries -------------------------------------------------------------------

    def output_is_kept(self, call: cst.Call) -> bool:
        """Does the output outlive its statement (assigned, returned, yielded, stored)?
        `self.assertEqual(model(x), ref)` or a bare `model(x)` drops it at once, except
        as a notebook cell's last line: IPython keeps what it shows (`loss_fn(model(x),
        y)`, `model(x)[:3]`, not `print(model(x))`) in `Out[n]`, with its graph."""
        index = self.index
        statement = index.statement_of(call)
        if type(statement) is not cst.Expr:
            return True
        if output_kept(self._holders(call, statement)):
            return True
        return statement in index.cell_results() and self._shown_with_its_graph(call, statement)

    def _shown_with_its_graph(self, call: cst.Call, statement: cst.Expr) -> bool:
        """Does the value a cell shows hold the forward's output: the output itself, or
        what indexing, arithmetic, its own methods, a torch function or a torch loss
        make of it (`loss_fn(model(x), y)`), never past a call that may hand back
        anything (`print(model(x))`, a helper), nor a value without history?"""
        index = self.index
        node: cst.CSTNode = call
        for anc in index.ancestors(call):
            if anc is statement:
                break
            kind = type(anc)
            if kind is cst.Call and node is not anc.func:
                func = anc.func
                if not (
                    computes_a_tensor(index.qualified_name(func))
                    or self.values.torch_loss_instance(func, anc)
                ):
                    return False
            elif kind not in _SHOWN_WHOLE:
                return False
            node = anc
        return not is_graph_free(self.values.of_expr(statement.value, statement))

    def run_for_nothing(self, call: cst.Call, model: str) -> bool:
        """A forward that is a statement of its own (a warm-up `model(x)`) is run for
        its effect, and its output is dropped at once; but it recorded its graph while it
        ran: every activation saved for a backward is held until the output goes, a peak
        that the same forward under `no_grad` never reaches. That is paid for nothing
        unless the forward's function differentiates something: a loss module or a hook
        inside the model may carry the graph into that backward (style transfer's bare
        `model(img)`, then `loss.backward()` over the losses its modules stored). An
        output handed to a call and dropped (`self.assertEqual(model(x), ref)`) is read
        by that call: a test of the forward itself, as it runs (output_is_kept).
        A helper that differentiates counts only when it is handed what could hold the
        dropped graph (see _may_hold_graph_of): a notebook that trains `model` in a later
        cell says nothing of a bare `node_trans(src)` in an earlier one."""
        statement = self.index.statement_of(call)
        if type(statement) is not cst.Expr or statement.value is not call:
            return False
        return not self._scope_differentiates(self.index.scope_of(call), path_root(model))

    def _scope_differentiates(self, scope: cst.CSTNode, model: str) -> bool:
        """Does the function (or the module's own code, or a lambda) differentiate,
        itself or through a helper of this file or of the project that it hands the
        model, or something that may hold what the model's forward stored?"""
        if type(scope) is cst.FunctionDef:
            if self.differentiates(scope):
                return True
        key = (scope, model)
        found = self._scope_differentiation.get(key)
        if found is None:
            found = False
            body = scope.body if isinstance(scope, (cst.FunctionDef, cst.Lambda)) else scope
            for node in self.index.walk(body):
                if type(node) is not cst.Call:
                    continue
                if self.autograd.event(node) is not None:
                    found = True
                    break
                local = self.summaries.resolve(node)
                if local is not None:
                    helper_differentiates = self.differentiates(local)
                else:
                    external = self.summaries.resolve_external(node)
                    helper_differentiates = external is not None and external.differentiates
                if helper_differentiates and self._may_hold_graph_of(node, model):
                    found = True
                    break
            self._scope_differentiation[key] = found
        return found

    def _may_hold_graph_of(self, call: cst.Call, model: str) -> bool:
        """Could what `call` is handed (its arguments, the object of a method call) hold
        the graph a forward of `model` left behind, in a loss module or a hook's store?
        It could when it names the model, a parameter (unknown contents: `fit(losses)`),
        or a name bound from an expression naming the model (`losses =
        attach_losses(model)`)."""
        index = self.index
        handed: list[cst.CSTNode] = [arg.value for arg in call.args]
        if type(call.func) is cst.Attribute:
            handed.append(call.func.value)
        names = {
            node.value
            for expression in handed
            for node in index.walk(expression)
            if type(node) is cst.Name
        }
        if model in names:
            return True
        for name in names:
            for binding in self.values.bindings_of(name, call):
                if type(binding) is cst.Param:
                    return True
                if type(binding) not in (cst.Assign, cst.AnnAssign, cst.AugAssign):
                    continue
                value = getattr(binding, "value", None)
                if value is not None and any(
                    type(node) is cst.Name and node.value == model for node in index.walk(value)
                ):
                    return True
        return False

    def _holders(self, call: cst.Call, statement: cst.CSTNode):
        """The nodes around `call` up to its expression statement, as summary_facts
        reads them (Holder)."""
        node: cst.CSTNode = call
        for anc in self.index.ancestors(call):
            if anc is statement:
                yield Holder.EXPRESSION_STATEMENT
                return
            if isinstance(anc, (cst.Yield, cst.Await)):
                yield Holder.HANDED_ON
            elif type(anc) is cst.Call and type(anc.func) is cst.Attribute and node is not anc.func:
                yield storing_holder(anc.func.attr.value)
            else:
                yield Holder.OTHER
            node = anc

    def inference_arguments(self, call: cst.Call) -> list[cst.BaseExpression]:
        """The arguments of a helper call that the helper runs a forward of, with
        autograd recording and the output kept, in a helper that never differentiates:
        the helper is inference, so the caller's grad mode decides its cost. Helpers of
        this file and of the project's other files (see analysis.project)."""
        summaries = self.summaries
        found: list[cst.BaseExpression] = []
        # `self.evaluation(net, ...)` in a base class runs a subclass's override too
        locals_run = summaries.callees.runs(call)
        if any(self.differentiates(local) for local in locals_run):
            # the call must keep recording (a MAML evaluation): inference_forwards'
            return []
        for local in locals_run:
            summary = summaries.of(local)
            for param in summary.forwarded_params:
                argument = summary.forwarded_argument(call, param)
                if (
                    argument is not None
                    and all(argument is not a for a in found)
                    and any(
                        self.grad_mode.mode_at(forward).value == "recording"
                        and self.output_is_kept(forward)
                        for forward in summary.forwards[param]
                    )
                ):
                    found.append(argument)
        if locals_run:
            return found
        external = summaries.resolve_external_or_method(call)
        if external is None or external.differentiates or external.no_grad:
            return []
        for param, facts in external.forwards.items():
            if not any(f.recording and f.kept for f in facts):
                continue
            argument = summaries.external_argument(call, external, param)
            if argument is not None:
                found.append(argument)
        return found

    def external_inference_of(self, call: cst.Call, models: list[str]) -> bool:
        """Is `call` a call of another file's function that runs, with autograd recording
        and its output kept, a forward of one of `models` it is handed, and hands back a
        tensor (not numbers it made itself, not a model it put in eval mode): a loss
        helper the training code differentiates, called here for its value?"""
        if self.summaries.callees.runs(call):
            return False
        external = self.summaries.resolve_external_or_method(call)
        # a forward the summary calls recording is outside every grad-mode block of
        # the helper's own (greedy_decode's encoder, before its `with no_grad:` decoder)
        if (
            external is None
            or external.differentiates
            or external.no_grad
            or external.returns_python
            or external.number_params
            or external.returns_eval_model
        ):
            return False
        for param, facts in external.forwards.items():
            if param in external.eval_params or not any(f.recording and f.kept for f in facts):
                continue
            argument = self.summaries.external_argument(call, external, param)
            if argument is not None and module_path(argument) in models:
                return True
        return False

    def helper_forwards(self, call: cst.Call, model: str) -> list[cst.Call]:
        """The forwards of `model` that a helper of this file runs when `call` hands the
        model to it (`evaluate(model, loader)` runs `net(x)` inside), the one in the
        most frequent loop of the helper first; [] when `call` is no such helper call.
        Only this file's helpers: another file's forwards are out of sight."""
        found = [forward for _, forward in self._forwards_of_handed(call, model)]
        # a forward inside a loop of the helper first: where the cost is paid per batch
        found.sort(key=lambda forward: -len(list(self.index.enclosing_loops(forward))))
        return found

    def helper_inference_forwards(self, call: cst.Call, model: str) -> list[tuple[str, cst.Call]]:
        """(parameter, forward) for each forward of `model` inside this file's helper that
        `call` hands the model to, which records with its output kept: the forwards that
        make the helper an inference of what its caller passes (inference_arguments),
        where the graph is built. The parameter is the model's name inside the helper."""
        return [
            (param, forward)
            for param, forward in self._forwards_of_handed(call, model)
            if self.grad_mode.mode_at(forward) is GradMode.RECORDING
            and self.output_is_kept(forward)
        ]

    def _forwards_of_handed(self, call: cst.Call, model: str):
        """(the helper's parameter, a forward of it) for each helper of this file that
        `call` runs and hands `model` to."""
        for local in self.summaries.callees.runs(call):
            summary = self.summaries.of(local)
            method = self.index.enclosing_class(local) is not None
            for param in summary.forwarded_params:
                if path_in_caller(call, local, param, method=method) == model:
                    for forward in summary.forwards.get(param, ()):
                        yield param, forward
            for held, forwards in summary.receiver_forwards.items():
                if path_in_caller(call, local, held, method=method) == model:
                    for forward in forwards:
                        yield held, forward

    def inference_receivers(self, call: cst.Call) -> list[str]:
        """The paths, as the caller names them, of the receiver's attributes whose
        forward a method of this file runs with autograd recording and its output kept,
        in a method that never differentiates: `agent.sample(state)` runs the forward of
        `agent.network`, so the caller's grad mode decides its cost (inference_arguments
        for what a call hands over)."""
        found: list[str] = []
        for local in self.summaries.callees.runs(call):
            if self.index.enclosing_class(local) is None or self.differentiates(local):
                continue
            for held, forwards in self.summaries.of(local).receiver_forwards.items():
                path = path_in_caller(call, local, held, method=True)
                if (
                    path is not None
                    and path not in found
                    and any(
                        self.grad_mode.mode_at(forward) is GradMode.RECORDING
                        and self.output_is_kept(forward)
                        for forward in forwards
                    )
                ):
                    found.append(path)
        return found

    def external_forward_in_loop(self, call: cst.Call, model: str) -> bool:
        """Does the other file's helper that `call` runs (`evaluate(model, loader)` of
        utils.py) run a recording forward of `model` in a hot loop of its own (its
        summary's ForwardFact.in_loop)? Then it pays per batch, whatever its call."""
        external = self.summaries.resolve_external(call)
        if external is None:
            return False
        for param, facts in external.forwards.items():
            argument = self.summaries.external_argument(call, external, param)
            if argument is None or dotted_name(argument) != model:
                continue
            if any(f.recording and f.in_loop for f in facts):
                return True
        return False

    def inference_forwards(self, call: cst.Call) -> list[tuple[cst.BaseExpression, cst.Call]]:
        """(argument, forward) for a call of this file's helper that differentiates (a
        MAML evaluation that adapts with `autograd.grad`, then predicts the query set):
        the forwards of the argument inside the helper whose own result the helper only
        reads as numbers (`.item()`, an argmax), while autograd records. Nothing the
        helper differentiates, returns or stores depends on them, so the graph they
        record is thrown away whatever the helper's other forwards need. They are
        judged at the forward, not at the call: the call itself must keep recording.
        A helper that does not differentiate is `inference_arguments`'."""
        summaries = self.summaries
        found: list[tuple[cst.BaseExpression, cst.Call]] = []
        # `self.evaluation(net, ...)` in a base class runs a subclass's override too
        for local in summaries.callees.runs(call):
            if not self.differentiates(local):
                continue
            summary = summaries.of(local)
            for param in summary.forwarded_params:
                argument = summary.forwarded_argument(call, param)
                if argument is None:
                    continue
                for forward in summary.forwards[param]:
                    if self.forward_is_inference(forward, param):
                        found.append((argument, forward))
        return found

    def forward_is_inference(self, forward: cst.Call, model: str) -> bool:
        """Does this forward, in a function that differentiates something else, build a
        graph that only numbers are read from? Its result must end as numbers on every
        path: one that escapes (returned to a caller that may differentiate it, stored,
        passed to a function out of sight) or reaches a differentiation keeps the
        forward recording."""
        if self.grad_mode.mode_at(forward) is not GradMode.RECORDING:
            return False
        if self.result_uses.numbers_only(forward) is None:
            return False
        return not self.graph_is_used(forward, model, ends_as_numbers=True)

    def graph_is_used(
        self,
        call: cst.Call,
        model: str,
        *,
        ends_as_numbers: bool = False,
        in_eval_mode: bool = False,
    ) -> bool:
        """Is the forward's graph used: its result differentiated, an input that requires
        grad (saliency, an adversarial example), its output handed on with its input, a
        model whose own forward differentiates, ... `ends_as_numbers`: the result is
        known to end as numbers on every path (result_uses.numbers_only), so no gradient
        can reach an input through it (a PINN's plot on collocation points made to
        require grad), and the input says nothing. `in_eval_mode`: the model is known to
        be in eval mode, where a forward that differentiates only under `if
        self.training:` does not."""
        scope = self.index.scope_of(call)
        return (
            self.is_differentiated(call, scope)
            or (not ends_as_numbers and self._input_requires_grad(call, scope))
            or self._passed_with_its_input(call)
            or self._forward_differentiates(model, call, in_eval_mode)
            or self._returned_by_a_differentiating_function(call, scope)
            or self._returned_to_a_differentiation(call, scope)
            or self._state_differentiated(model, scope)
        )

    def _returned_to_a_differentiation(self, call: cst.Call, scope: cst.CSTNode) -> bool:
        """The function returns what the forward computes, and a caller of this file
        differentiates the result of its call (`def features(x): backbone.eval();
        return backbone(x)`, then `loss = head(features(x)).sum(); loss.backward()`):
        the graph is used there, in whatever mode the model ran."""
        if type(scope) is not cst.FunctionDef or not self._reaches_a_return(call, scope):
            return False
        return any(
            self.reach.result_is_differentiated(caller)
            for caller in self.summaries.callees.callers_of(scope)
        )

    def _state_differentiated(self, model: str, scope: cst.CSTNode) -> bool:
        """Does the function differentiate a value it reads off the model's attributes
        (`loss = net.loss; loss.backward()`)? A detector whose training forward computes
        its losses and keeps them on itself uses the forward's graph through them,
        whatever becomes of what the forward returns (longcw/yolo2-pytorch)."""
        key = (scope, model)
        found = self._state_differentiation.get(key)
        if found is None:
            found = self._state_differentiation[key] = self._compute_state_differentiated(
                model, scope
            )
        return found

    def _compute_state_differentiated(self, model: str, scope: cst.CSTNode) -> bool:
        body = scope.body if isinstance(scope, (cst.FunctionDef, cst.Lambda)) else scope
        for node in self.index.walk(body):
            if type(node) is not cst.Call:
                continue
            event = self.autograd.event(node)
            if event is None or event.kind == "step" or event.root_expr is None:
                continue
            if self._reads_attribute_of(event.root_expr, model):
                return True
            for name in event.roots:
                for binding in self.values.bindings_of(path_root(name), node):
                    value = getattr(binding, "value", None)
                    if type(binding) is cst.Assign and value is not None:
                        if self._reads_attribute_of(value, model):
                            return True
        return False

    def _reads_attribute_of(self, expression: cst.CSTNode, model: str) -> bool:
        """`net.loss` (not a call of a method: `net.criterion(out, y)`) in expression."""
        index = self.index
        prefix = model + "."
        for node in index.walk(expression):
            if type(node) is not cst.Attribute:
                continue
            name = dotted_name(node)
            if name is None or not name.startswith(prefix) or name.count(".") != prefix.count("."):
                continue
            parent = index.parent.get(node)
            if type(parent) is cst.Call and parent.func is node:
                continue
            return True
        return False

    def _returned_by_a_differentiating_function(self, call: cst.Call, scope: cst.CSTNode) -> bool:
        """A function that differentiates (itself or through this file's helpers) and
        returns what the forward computes: MAML's adaptation then the query logits,
        which the caller's meta-loss differentiates through the adapted weights."""
        if type(scope) is not cst.FunctionDef or not self.differentiates(scope):
            return False
        if not self._reaches_a_return(call, scope):
            return False
        # every caller in sight only makes numbers of it (result_uses follows a value a
        # function of this file returns into its callers): nothing differentiates it
        return self.result_uses.numbers_only(call) is None

    def returns_its_result(self, call: cst.Call) -> bool:
        """Does the forward's result reach a `return` of its function with its graph:
        what the function's caller does with it decides whether the graph is used."""
        scope = self.index.scope_of(call)
        return type(scope) is cst.FunctionDef and self._reaches_a_return(call, scope)

    def _reaches_a_return(self, call: cst.Call, scope: cst.FunctionDef) -> bool:
        """Does the result, with its graph (past no `.item()` or `.detach()`), reach a
        `return` or `yield` of its function, through names, containers appended to and
        the values computed from it?"""
        index = self.index
        statement = index.statement_of(call)
        if self.reach.cut_within_statement(call):
            return False
        if isinstance(statement, cst.Return) or any(
            type(anc) is cst.Yield for anc in index.ancestors(call)
        ):
            return True
        returned = {
            name
            for node in index.walk(scope.body)
            if type(node) in (cst.Return, cst.Yield) and node.value is not None
            for name in self.flow.reads(node.value)
        }
        if not returned:
            return False
        # `loss, acc = fast_adapt(...)`: an accuracy carries no graph on to the return
        containers: set[str] = set()
        for use in self.reach.reads_reached(call, containers, past_graph_free=False):
            if isinstance(index.statement_of(use), cst.Return) or any(
                type(anc) is cst.Yield for anc in index.ancestors(use)
            ):
                return True
        # stored in a container (`out.append(net(x))`): returned with it
        return bool(containers & returned)

    def graph_used_beyond_its_result(
        self, call: cst.Call, model: str, *, in_eval_mode: bool = False
    ) -> bool:
        """`graph_is_used` but for a differentiation its result reaches: an input that
        requires grad, the output handed on with its input, a model whose own forward
        differentiates. What a flag path (analysis.path_conditions) cannot rule out."""
        return (
            self._input_requires_grad(call, self.index.scope_of(call))
            or self._passed_with_its_input(call)
            or self._forward_differentiates(model, call, in_eval_mode)
        )

    # -- result differentiated ---------------------------------------------------------

    def is_differentiated(self, call: cst.Call, scope: cst.CSTNode) -> bool:
        return self.reach.result_is_differentiated(call)

    # -- inputs that require grad ------------------------------------------------------

    def _input_requires_grad(self, call: cst.Call, scope: cst.CSTNode) -> bool:
        for arg in call.args:
            if self._parameter_container(arg):
                continue  # `rnn(X, state, params)`: the weights, not an input to explain
            if Kind.LEAF in self.values.of_expr(arg.value, call):
                return True
            name = dotted_name(arg.value)
            if name is not None and self._made_to_require_grad(name, call):
                return True
        return False

    def _made_to_require_grad(self, name: str, use: cst.CSTNode) -> bool:
        """`name.requires_grad_()` or `name.requires_grad = True` in the function (or,
        for `self.x`, anywhere in the class)."""
        region: cst.CSTNode = self.index.scope_of(use)
        if name.startswith("self."):
            for anc in self.index.ancestors(use):
                if type(anc) is cst.ClassDef:
                    region = anc
                    break
        for node in self.index.of_types_in(region, cst.Call, cst.Assign):
            if (
                type(node) is cst.Call
                and type(node.func) is cst.Attribute
                and node.func.attr.value == REQUIRES_GRAD_METHOD
                and dotted_name(node.func.value) == name
                and not (node.args and is_false(node.args[0].value))
            ):
                return True
            if (
                type(node) is cst.Assign
                and any(dotted_name(t.target) == f"{name}.requires_grad" for t in node.targets)
                and bool_literal(node.value) is True
            ):
                return True
        return False

    # -- derivative operators ----------------------------------------------------------

    def _passed_with_its_input(self, call: cst.Call) -> bool:
        """`y = net(x)` then `op(x, y)`: a call given both the output and an input, to a
        callee that may differentiate one by the other. A recurrent state that is both
        input and output (`out, h = rnn(x, h)`) does not count; nor does a callee that
        is known not to differentiate (a torch function, a loss module, a function of
        this file that does not)."""
        outputs = self.reach.produced(call)
        inputs = {dotted_name(a.value) for a in call.args} - {None} - outputs
        outputs -= inputs
        if not inputs or not outputs:
            return False
        statement = self.index.statement_of(call)
        # The reads the output's binding reaches: a later `action = to_np(action)` is
        # another value under the same name.
        reached: set[cst.CSTNode] | None = None
        if isinstance(statement, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            reached = {u for name in outputs for u in self.values.uses_reached(statement, name)}
        scope = self.index.scope_of(call)
        body = scope.body if isinstance(scope, (cst.FunctionDef, cst.Lambda)) else scope
        after = self.index.order[call]
        for node in self.index.walk(body):
            if type(node) is not cst.Call or self.index.order[node] <= after:
                continue
            values = [a.value for a in node.args]
            names = {dotted_name(v) for v in values}
            if not names & inputs:
                continue
            if reached is not None:
                carries_output = any(v in reached for v in values)
            else:
                carries_output = bool(names & outputs)
            if carries_output and self._may_differentiate(node):
                return True
        return False

    def _may_differentiate(self, call: cst.Call) -> bool:
        qualified = self.index.qualified_name(call.func) or ""
        if qualified.startswith("torch.") or qualified in ("print", "len", "zip", "isinstance"):
            return False
        callee = self.values.of_expr(call.func, call)
        if callee and callee <= {Kind.MODULE, Kind.OBJECT, Kind.PYTHON}:
            return False  # `criterion(recon, x)` with a loss module
        function = self.summaries.resolve(call)
        if function is not None:
            return self.summaries.of(function).differentiates
        return True

    # -- what a module's methods compute ---------------------------------------------

    def forward_methods(self) -> set[str]:
        """Names of methods of this file's nn.Module classes, other than `forward`,
        that compute with the module's layers (`self(x)`, `self.encoder(x)`): calling
        one (`model.encode(x)`, `agent.get_action(s)`) is a forward pass."""
        if self._forward_methods is None:
            found: set[str] = set()
            modules = self.tensors.local_module_classes()
            for cls in self.index.classes:
                # a class of no torch base whose own `train`/`eval` switches its
                # attributes (`def train(self, training): self.actor.train(training)`)
                # is a module by use: those attributes are its layers
                switched = set() if cls.name.value in modules else _mode_switched(cls)
                if cls.name.value not in modules and not switched:
                    continue
                layers = (
                    {
                        attr
                        for attr, kind in self.tensors._class_attributes(cls).items()
                        if kind == "module"
                    }
                    | self._module_attributes(cls)
                    | switched
                )
                for stmt in cls.body.body:
                    if type(stmt) is not cst.FunctionDef or stmt.name.value in NOT_FORWARD_METHODS:
                        continue
                    if self._computes_with(stmt, layers):
                        found.add(stmt.name.value)
            self._forward_methods = found
        return self._forward_methods

    def forward_target(self, call: cst.Call, modules: Set[str] = frozenset()) -> str | None:
        """The model path `call` runs a forward of: `model(x)`, `model.forward(x)`, a
        method of this file's modules that computes with their layers (`forward_methods`),
        or, on a value whose uses show it is a module (one of `modules`: the paths a
        scope puts in eval or train mode) and whose class is out of sight (built by a
        factory such as `hydra.utils.instantiate(cfg.agent)`, handed in, another
        file's), a method of its own given an input that every class of the project
        defining it runs its layers in, with autograd recording: `agent.act(obs)`
        (ProjectIndex.method_runs_layers), or one given a tensor whose output is kept
        (method_forward). Not the nn.Module API (`model.state_dict()`),
        not a method the project does not define (a library's `model.generate(ids)`
        may run under its own `no_grad`), nor one that makes a tensor without layers
        (`model.get_z_random(n, nz)`) or runs them under `no_grad` (`model.test(z)`)."""
        func = call.func
        if self.index.qualified_name(func) in MODULE_RUNNING_FUNCTIONS:
            # `nn.parallel.data_parallel(netG, inputs, gpus)`, `odeint(func, y0, t)`
            handed = positional_arguments(call)
            return module_path(handed[0]) if handed else None
        if type(func) is cst.Subscript:
            # `net.heads[1](x)` after `net.eval()`: a layer kept in a module's container
            # is in that module's mode
            return _owning_module(module_path(func), modules)
        if type(func) is cst.Name and modules:
            # `for layer in net.features: x = layer(x)` after `net.eval()`: its layers
            # are in its mode (a container's elements only in that chain, which says
            # they are layers: `for f in self.param_list: f()` walks bound methods)
            walked = self._submodules_walked(
                func.value, call, containers=self._chains_its_input(call)
            )
            owners = {_owning_module(module_path(owner), modules) for _, owner in walked or ()}
            if len(owners) == 1 and (owner := owners.pop()) in modules:
                return owner
        if type(func) is not cst.Attribute:
            return module_path(func)
        method = func.attr.value
        if method == "forward" or method in self.forward_methods():
            # `vae.encoder.forward(xs)` after `vae.eval()`: a submodule of a module put
            # in a mode is in that mode, and its forward is the module's
            return _owning_module(module_path(func.value), modules)
        attribute = module_path(func)  # `model.fc(x)`: the forward of the attribute
        if attribute in modules:
            return attribute
        receiver = module_path(func.value)
        if receiver in modules and call.args and self._own_forward_method(func, call):
            return receiver
        if (
            receiver in modules
            and attribute is not None
            and receiver != "self"
            and self.tensors.module_constructors(func, call)
            and self.has_parameters(func, call)
        ):
            # `model.encoder(src)` after `model.eval()`, the class's `self.encoder =
            # Encoder(...)`: a submodule is in the mode of the module that holds it
            return receiver
        return self.method_forward(call, modules) or attribute

    def _holds_functions(self, container: cst.BaseExpression, use: cst.CSTNode) -> bool:
        """Does the container hold a lambda or a function of this file, as written where
        it is filled?"""
        functions = {f.name.value for f in self.index.functions}
        return any(
            type(element) is cst.Lambda
            or (type(element) is cst.Name and element.value in functions)
            for element in self.tensors.elements_built(container, use)
        )

    def _chains_its_input(self, call: cst.Call) -> bool:
        """`x = layer(x)`: the call's one argument is the name its result rebinds."""
        statement = self.index.statement_of(call)
        if type(statement) is not cst.Assign or statement.value is not call:
            return False
        targets = statement.targets
        args = call.args
        return (
            len(targets) == 1
            and type(targets[0].target) is cst.Name
            and len(args) == 1
            and not args[0].keyword
            and not args[0].star
            and type(args[0].value) is cst.Name
            and args[0].value.value == targets[0].target.value
        )

    def _own_forward_method(self, func: cst.Attribute, call: cst.Call) -> bool:
        method = func.attr.value
        if method in NOT_FORWARD_METHODS or method in MODULE_MODE_METHODS or method[:2] == "__":
            return False
        receiver = module_path(func.value)
        assert receiver is not None
        if not self._class_out_of_sight(func.value, receiver, call):
            return False  # forward_methods, or torch's own API, has answered
        if self._switches_grad_mode(method, None):
            return False
        project = self.summaries.project
        return project is not None and project.method_runs_layers(method)

    def _module_attributes(self, cls: cst.ClassDef) -> set[str]:
        found: set[str] = set()
        for node in self.index.of_types_in(cls, cst.Assign):
            if type(node) is cst.Assign and len(node.targets) == 1:
                name = dotted_name(node.targets[0].target)
                if name and name.startswith("self.") and name.count(".") == 1:
                    if type(node.value) is cst.Call:
                        qualified = self.index.qualified_name(node.value.func) or ""
                        if self.tensors._is_module_constructor(qualified):
                            found.add(name[5:])
        return found

    def _computes_with(self, method: cst.FunctionDef, layers: set[str]) -> bool:
        """Does the method run the module's layers, without differentiating (itself, in
        a function it calls, or in the module's own forward)? MAML's
        `evaluation_forward_prop` adapts with autograd.grad even in eval mode."""
        if self.differentiates(method):
            # itself, or through a helper of this file or of the project's others (a
            # PINN's `u_x = gradients(u, x)`, which a prediction needs recorded)
            return False
        computes = False
        cls = self.index.enclosing_class(method)
        for node in self.index.walk(method.body):
            if type(node) is not cst.Call:
                continue
            callee = dotted_name(node.func)
            if callee in ("self", "self.forward"):
                if cls is not None and cls.name.value in self.differentiating_classes():
                    return False
                computes = True
            elif callee and callee.startswith("self.") and callee[5:] in layers:
                computes = True
        return computes

    def parameterless_classes(self) -> set[str]:
        """This file's nn.Module classes that hold no parameters and no layers and call
        none in forward (DropPath, a scaling wrapper), and its subclasses of those that
        add none (`class Sigmoid(ActivationFunction)`): on inputs without history they
        record nothing."""
        if self._parameterless is not None:
            return self._parameterless
        found: set[str] = set()
        modules = self.tensors.local_module_classes()
        candidates = [
            cls
            for cls in self.index.classes
            if cls.name.value in modules and len(cls.bases) == 1 and self._holds_no_layers(cls)
        ]
        grown = True
        while grown:  # a subclass is known once its base is, in whatever order they come
            grown = False
            for cls in candidates:
                base = cls.bases[0].value
                if cls.name.value not in found and (
                    self._torch_base_gives_none(cls, self.index.qualified_name(base) or "")
                    or (type(base) is cst.Name and base.value in found)
                ):
                    found.add(cls.name.value)
                    grown = True
        self._parameterless = found
        return found

    def _torch_base_gives_none(self, cls: cst.ClassDef, base: str) -> bool:
        """Does the class hold no weights through its torch base `base` (qualified):
        `nn.Module`, a loss or an activation; a parametric layer its `__init__` builds
        without them (`super().__init__(n, affine=False)`); a container its `__init__`
        fills with layers that have none (`super().__init__(nn.Flatten(), nn.ReLU())`)?
        The same decision the project's summaries make (torch_base_gives_weights)."""
        if torch_base_holds_no_parameters(base):
            return True
        if not base.startswith("torch.nn."):
            return False
        init = own_method(cls, "__init__")
        handed: list[str] | None = None
        weights_off = False
        call = self._super_init_call(init) if init is not None else None
        if call is not None:
            init_call, skipped = call
            handed = [
                built if (built := self._torch_class_built(value)).startswith("torch.nn.") else ""
                for value in positional_arguments(init_call)[skipped:]
            ]
            if any(arg.star == "*" for arg in init_call.args):
                handed.append("")  # `super().__init__(*layers)`: layers out of sight
            weights_off = _switches_weights_off(init_call)
        return not torch_base_gives_weights(
            base, own_init=init is not None, handed=handed, weights_off=weights_off
        )

    def _torch_class_built(self, value: cst.BaseExpression) -> str:
        """The qualified name of what a call builds (`nn.ReLU()`), "" for no call."""
        return self.index.qualified_name(value.func) or "" if type(value) is cst.Call else ""

    def _super_init_call(self, init: cst.FunctionDef) -> tuple[cst.Call, int] | None:
        """(the call, how many leading arguments are not the base's) of the base
        class's `__init__` that `init` makes: `super().__init__(...)`, `super(Cls,
        self).__init__(...)`, or `nn.Sequential.__init__(self, ...)`."""
        for call in self.index.of_types_in(init, cst.Call):
            func = call.func
            if type(func) is not cst.Attribute or func.attr.value != "__init__":
                continue
            owner = func.value
            if type(owner) is cst.Call and dotted_name(owner.func) == "super":
                return call, 0
            if type(owner) in (cst.Name, cst.Attribute):
                return call, 1
        return None

    def _holds_no_layers(self, cls: cst.ClassDef) -> bool:
        attributes = self.tensors._class_attributes(cls)
        if any(kind in ("leaf", "module") for kind in attributes.values()):
            return False
        if self._module_attributes(cls):
            return False
        # a call of `self.<name>` may run a layer kept out of sight; the class's own
        # methods (`self.sigmoid(z)` of a hand-written regression) hold none
        own = {
            f"self.{statement.name.value}"
            for statement in cls.body.body
            if type(statement) is cst.FunctionDef
        }
        return not any(
            type(node) is cst.Call
            and (dotted_name(node.func) or "").startswith("self.")
            and (dotted_name(node.func) or "") not in own | {"self.training"}
            for node in self.index.of_types_in(cls, cst.Call)
        )

    def records_nothing(self, call: cst.Call, model: str) -> bool:
        """A parameterless module (a class of this file, or a torch layer built without
        weights: `nn.BatchNorm1d(2, affine=False)`) applied to inputs without history."""
        expr = cst.parse_expression(model)
        classes = self.parameterless_classes()
        cls = self.tensors.module_class(expr, call) if classes else None
        if cls is None or cls.rsplit(".", 1)[-1] not in classes:
            constructors = [
                built_module_call(c) for c in self.tensors.module_constructors(expr, call)
            ]
            if not constructors or any(
                type(value) is not cst.Call
                or not (self.index.qualified_name(value.func) or "").startswith("torch.nn.")
                or self._built_with_parameters(value) is not False
                for value in constructors
            ):
                return False  # only a torch layer known to be built without weights
        return all(
            self.values.of_expr(arg.value, call) <= {Kind.TENSOR, Kind.PYTHON, Kind.NONE}
            for arg in call.args
        )

    # -- forwards of models that hold parameters -------------------------------------

    def model_forward(self, call: cst.Call) -> str | None:
        """The dotted name of the model with parameters whose forward `call` runs:
        `model(x)`, `model.forward(x)`, `self(x)` in a module class, or a method of this
        file's modules that computes with their layers (`agent.act(s)`). None when the
        callee is not known to be a module that holds parameters (a loss module, a
        parameterless layer, a plain function, something out of sight). A solver that
        runs the module it is handed (`odeint(func, y0, t)`) runs that module's forward."""
        func = call.func
        target: cst.CSTNode = func
        if self.index.qualified_name(func) in MODULE_RUNNING_FUNCTIONS:
            handed = positional_arguments(call)
            if not handed:
                return None
            name = module_path(handed[0])
            return name if name is not None and self.has_parameters(handed[0], call) else None
        if type(func) is cst.Attribute and (
            func.attr.value == "forward"
            or func.attr.value in self.forward_methods()
            or self._imported_forward_method(call)
            or self._parameter_forward_method(func, call)
            or self._held_model_method(func, call)
        ):
            target = func.value
        name = module_path(target)
        if name is None:
            name = self._element_with_parameters(target, call)
            if name is None:
                return None
        elif name == "self":
            if not self._self_has_parameters(call):
                return None
        elif not self._holds_weights(target, call):
            return None
        method = func.attr.value if type(func) is cst.Attribute else "forward"
        if self._switches_grad_mode(method, self._model_class(target, name, call)):
            return None  # `@torch.no_grad()` on forward or on `act`: nothing records
        return name

    def _element_with_parameters(self, target: cst.CSTNode, use: cst.CSTNode) -> str | None:
        """`self.actors[i](s)`, `nets[k](x)`, `self.critics[0](s, a)`: an element, picked
        by any key, of a container every element of which is a module that holds
        parameters (`self.actors = [Actor(n, m) for _ in
        range(k)]`, a list or ModuleList written out, a deep copy of one). Named as
        written; None otherwise."""
        if type(target) is not cst.Subscript or dotted_name(target.value) is None:
            return None
        elements = self.tensors.elements_built(target.value, use)
        if not elements:
            return None
        for element in elements:
            if dotted_name(element) is not None:
                if not self.has_parameters(element, use):
                    return None
            elif self._built_with_parameters(element) is not True:
                return None
        return self.index.module.code_for_node(target)

    def _parameter_forward_method(self, func: cst.Attribute, call: cst.Call) -> bool:
        """`model.sample_image(n)` in `def test_model(model, ...)`, whose callers in other
        files pass a module with weights (`wgan = WGAN(...)`, then
        `utils.test_model(wgan, ...)`): a method every class of the project that defines
        it runs its object's layers in, on a parameter known to be such a module."""
        if type(func.value) is not cst.Name or not call.args:
            return False
        scope = self.index.scope_of(call)
        if type(scope) is not cst.FunctionDef:
            return False
        name = func.value.value
        if name not in self.summaries.of(scope).params:
            return False
        # the callers first: a project search for the method's definitions costs more
        return self._passed_by_callers(name, call) and self._own_forward_method(func, call)

    def _held_model_method(self, func: cst.Attribute, call: cst.Call) -> bool:
        """`self.model.decoder(z)` in a helper of an object handed a model it asks the
        parameters of (`self.model = model`, `next(self.model.parameters())`): a method
        (or submodule) outside nn.Module's API of a receiver known to hold parameters,
        whose class is out of sight, given a tensor, runs that model's layers. Not a
        method that a library or a class of the project runs under its own grad mode."""
        method = func.attr.value
        if method in NOT_FORWARD_METHODS or method in GRADLESS_LIBRARY_METHODS:
            return False
        name = module_path(func.value)
        if name is None or name == "self":
            return False
        # cheapest first: whether the receiver holds weights is asked once per scope
        if not self._class_out_of_sight(func.value, name, call):
            return False
        if not self.has_parameters(func.value, call) or not self._given_a_tensor(call):
            return False
        if self.project_method_sets_grad_mode(method):
            return False
        # a method some class of this file or the project defines is a forward only
        # where every definition runs its layers (`model._prepare_inputs(x, 2)` of an RNN
        # only reshapes); an attribute no class defines as a method is a submodule
        callees = self.summaries.callees
        if any(method in callees.method_names(cls) for cls in self.index.classes):
            return method in self.forward_methods()
        project = self.summaries.project
        if project is not None and any(
            not d.placeholder for d in project.methods_named(method) or ()
        ):
            return project.method_runs_layers(method)
        return not self._parameterless_submodule(method)

    def _parameterless_submodule(self, attribute: str) -> bool:
        """Is `model.<attribute>` a torch.nn layer without parameters wherever the
        project's classes store one (`self.up = nn.Upsample(...)`, `self.drop =
        nn.Dropout(p)`)? Called on a model whose class cannot be told, it runs no layer
        with weights, and on inputs without history it records nothing."""
        project = self.summaries.project
        return project is not None and project.attribute_parameterless(attribute)

    def _imported_forward_method(self, call: cst.Call) -> bool:
        """`obj.method(...)` that runs the layers of `obj`, an instance of a module class
        of the project's other files (summaries.runs_imported_layers), asked once per
        call: the method's name must not be one of nn.Module's own."""
        func = call.func
        assert type(func) is cst.Attribute
        if func.attr.value in NOT_FORWARD_METHODS:
            return False
        known = self._imported_forwards.get(id(call))
        if known is not None:
            return known[1]
        found = self.summaries.runs_imported_layers(call)
        self._imported_forwards[id(call)] = (call, found)
        return found

    def method_forward(self, call: cst.Call, modules: Set[str]) -> str | None:
        """The module of `modules` (names known by their use to be modules: put in eval
        mode) whose forward a call of one of its methods runs, when its class is out of
        sight: `state = self.model.encode(src)`. A method outside nn.Module's API, given
        a tensor, whose output is kept; not one that a library runs under `no_grad`
        itself. A module class of this file says for itself which of its methods are
        forwards (forward_methods). An object with an `eval()` of its own may hold
        networks without being one (`model.get_z_random(n, nz)`, `model.test(z)` of a
        GAN's wrapper, `model.load_weights(path)`): an input not known to be a tensor,
        or an output dropped, says nothing of a forward."""
        func = call.func
        if type(func) is not cst.Attribute:
            return None
        method = func.attr.value
        if method in NOT_FORWARD_METHODS or method in GRADLESS_LIBRARY_METHODS:
            return None
        name = module_path(func.value)
        if name is None or name not in modules:
            return None
        if not self._given_a_tensor(call):
            return None
        if not self._class_out_of_sight(func.value, name, call):
            return None
        if not self.output_is_kept(call) or self.project_method_sets_grad_mode(method):
            return None
        if self._parameterless_submodule(method):
            return None
        return name

    def project_method_sets_grad_mode(self, method: str) -> bool:
        """Does a method of that name of a class of the project set its own grad mode
        (a GAN wrapper's `test` under `with torch.no_grad():`)? A call of the name on an object
        whose class cannot be told may run it. Classes of this file are asked as a
        forward of a known class is (_switches_grad_mode)."""
        if self._switches_grad_mode(method, None):
            return True
        project = self.summaries.project
        if project is None or not project.enabled:
            return False
        return any(function.sets_grad_mode for function in project.methods_named(method) or ())

    def _given_a_tensor(self, call: cst.Call) -> bool:
        """Is one of the call's arguments, by position or by keyword
        (`model.incremental_forward(test_inputs=x, c=c)`), a tensor?"""
        return any(not arg.star and self._is_tensor(arg.value, call) for arg in call.args)

    def _is_tensor(self, expr: cst.BaseExpression, use: cst.CSTNode) -> bool:
        """Is the value a tensor: known to be one, or made by a method only tensors
        have, there or where the name is bound (`src = img.unsqueeze(0).to(device)`)?"""
        if self.values.of_expr(expr, use) & _TENSORS:
            return True
        exprs: list[cst.BaseExpression] = [expr]
        if type(expr) is cst.Name:
            exprs += [e for e in self.values.reaching_expressions(expr.value, use) if e is not None]
        return any(self._made_as_a_tensor(e) for e in exprs)

    def _made_as_a_tensor(self, expr: cst.BaseExpression) -> bool:
        """Made by a method only tensors have (`img.unsqueeze(0)`), or by torch's tensor
        builders through methods that keep a tensor one (`torch.LongTensor(ids).view(1,
        -1)`, `Variable(x).cuda()`), whatever the builder was given."""
        while type(expr) is cst.Call:
            if (self.index.qualified_name(expr.func) or "") in TENSOR_MAKING_FUNCTIONS:
                return True
            if type(expr.func) is not cst.Attribute:
                return False
            method = expr.func.attr.value
            if method in TENSOR_ONLY_METHODS:
                return True
            if method not in SAME_VALUE_STEPS and method not in VIEW_METHODS:
                return False
            expr = expr.func.value
        return False

    def forward_of(self, call: cst.Call) -> cst.FunctionDef | None:
        """The `forward` method of this file's module class that `model(x)` (or
        `model.forward(x)`, `self.net(x)`) runs, when the model is built visibly from
        one class of this file; else None."""
        func = call.func
        target: cst.CSTNode = func
        if type(func) is cst.Attribute and func.attr.value == "forward":
            target = func.value
        name = dotted_name(target)
        if name is None or name == "self":
            return None
        owner = (
            self._model_class(target, name, call)
            or self._class_handed_in(name, call)
            or self._class_kept_from_the_constructor(target, name, call)
        )
        for cls in self.index.classes:
            if cls.name.value != owner:
                continue
            # a subclass that keeps its base's forward runs the base's
            for looked_up in self.summaries.callees.lineage(cls):
                if type(looked_up) is cst.ClassDef:
                    forward = forward_method(looked_up)
                    if forward is not None:
                        return forward
        return None

    def clears_own_grads(self, call: cst.Call) -> bool:
        """Does `model(x)` run a forward that clears the model's own gradients first
        (`self.zero_grad()` at the top of `forward`), the model built from a class of
        this file or of another project file (ModuleSummary.grad_clearing_forwards)?
        Then each call starts the model's `.grad`s from zero, as an optimizer's
        `zero_grad()` would."""
        forward = self.forward_of(call)
        if forward is not None:
            return forward_clears_own_grads_of_source(self.index.module.code_for_node(forward))
        func = call.func
        target: cst.CSTNode = func
        if type(func) is cst.Attribute and func.attr.value == "forward":
            target = func.value
        name = dotted_name(target)
        project = self.summaries.project
        if name is None or name == "self" or project is None or not project.enabled:
            return False
        built = self._constructions(name, target, call)
        if not built:
            return False
        for value in built:
            if type(value) is not cst.Call or type(value.func) is not cst.Name:
                return False
            cls = value.func.value
            origin = self.index.imported_from.get(cls)
            if origin is not None:
                module, level, there = origin
                if there is None or not project.forward_clears_grads(module, level, there):
                    return False
            elif not any(
                # `from model import *`: the class the star import brings in
                project.forward_clears_grads(module, level, cls)
                for module, level in self.index.star_imports
            ):
                return False
        return True

    def _constructions(self, name: str, expr: cst.CSTNode, use: cst.CSTNode) -> list[cst.CSTNode]:
        """What builds the model `expr` (spelled `name`) holds at `use`: each value bound
        to it, seen through the device, dtype and mode calls it is wrapped in
        (`Net().to(device)`). A rebinding that moves what was built (`model =
        model.to(device)`, `self.rnd = self.rnd.to(device)`) builds nothing."""
        values = self.tensors.module_constructors(expr, self._binding_site(name, use))
        return [b for v in values if dotted_name(b := built_module_call(v)) != name]

    def _class_handed_in(self, name: str, use: cst.CSTNode) -> str | None:
        """The one class every call of this file of the function around `use` builds
        the model it hands the parameter `name` from (`train(CharRNN(10), batches)`,
        or `model = CharRNN(10)` then `train(model, batches)`)."""
        func = self.index.scope_of(use)
        if type(func) is not cst.FunctionDef or all(
            p.name.value != name for p in all_params(func.params)
        ):
            return None
        return self._one_class_passed(self.caller_arguments.here(func, name))

    def _class_kept_from_the_constructor(
        self, target: cst.CSTNode, name: str, use: cst.CSTNode
    ) -> str | None:
        """For `self.model`, bound only in `__init__` to its own `model` parameter: the
        one class every construction of the class in this file builds the model it
        hands from (`Trainer(StatefulNet())`), as _class_handed_in reads a function's
        callers."""
        constructors = self.tensors.module_constructors(target, self._binding_site(name, use))
        kept = self._kept_constructor_parameter(name, constructors, use)
        if kept is None:
            return None
        cls, init, param = kept
        sites = self.index.constructions(cls)
        if not sites:
            return None
        arguments = self.summaries.caller_arguments.here(init, param, sites, constructed=True)
        return self._one_class_passed(arguments)

    def _one_class_passed(self, arguments) -> str | None:
        """The one class the model each of these arguments passes is built from."""
        classes: set[str | None] = set()
        for argument in arguments:
            if argument.passed is None:
                return None
            value = built_module_call(argument.passed)
            if type(value) is cst.Call:
                classes.add(self.index.qualified_name(value.func))
            else:
                classes.add(self.tensors.module_class(value, argument.site))
        return classes.pop() if len(classes) == 1 else None

    def _model_class(self, target: cst.CSTNode, name: str, use: cst.CSTNode) -> str | None:
        """The class of the model called, as far as this file shows it: the enclosing
        class for `self`, else the class it is built from."""
        if name == "self":
            for anc in self.index.ancestors(use):
                if type(anc) is cst.ClassDef:
                    return anc.name.value
            return None
        return self.tensors.module_class(target, self._binding_site(name, use))

    def _class_out_of_sight(self, target: cst.CSTNode, name: str, use: cst.CSTNode) -> bool:
        """Is the class of the module at `target` out of sight: not built visibly from a
        class of this file (whose forward_methods say which of its methods are
        forwards) nor from one of torch's (whose methods besides `forward` are its API)?
        Only then can a method of it be a forward that just its uses show."""
        owner = self._model_class(target, name, use)
        if owner is None:
            return True
        return not owner.startswith("torch.") and all(
            c.name.value != owner for c in self.index.classes
        )

    def _binding_site(self, name: str, use: cst.CSTNode) -> cst.CSTNode:
        """Where to look up how `name` is built: the use itself, or, for a name read
        inside a function and bound around it, its binding there: a global's
        module-level one, a closure's in the enclosing function (`model = Net()`, then
        `def get_time(): model(x)` nested in the same test)."""
        if "." in name:
            return use
        bindings = self.values.bindings_of(name, use)
        if bindings and self.index.scope_of(bindings[0]) is not self.index.scope_of(use):
            return bindings[0]
        return use

    def _switches_grad_mode(self, method: str, owner: str | None) -> bool:
        """Does the method, in the model's class (in every module class of this file
        that has one, when the class is out of sight), set its own grad mode (a
        grad-mode decorator, a `with torch.no_grad():` block, a `set_grad_enabled`
        call)? Then the caller's mode says nothing about what it records."""
        if owner is not None and owner.startswith("torch."):
            return False
        key = (method, owner.rsplit(".", 1)[-1] if owner is not None else None)
        found = self._grad_mode_methods.get(key)
        if found is None:
            found = self._grad_mode_methods[key] = self._compute_switches(*key)
        return found

    def _compute_switches(self, method: str, owner: str | None) -> bool:
        modules = self.tensors.local_module_classes()
        grad_mode = self.grad_mode
        for func in grad_mode.callees.named(method):
            cls = self.index.enclosing_class(func)
            if cls is None or cls.name.value not in modules:
                continue
            if owner is not None and cls.name.value != owner:
                continue
            for decorator in func.decorators:
                expr = decorator.decorator
                if grad_mode.api_of(expr.func if type(expr) is cst.Call else expr):
                    return True
            for node in self.index.walk(func.body):
                if type(node) is cst.With and any(
                    grad_mode.context_effect(item.item) is not None for item in node.items
                ):
                    return True
                if type(node) is cst.Call and grad_mode.api_of(node.func) == GRAD_MODE_SETTER:
                    return True
        return False

    def parameter_function(self, call: cst.Call) -> str | None:
        """The name of this file's function that `call` runs when what it returns is
        computed from parameters (a density with learnable mean and scale evaluated on a
        grid, a helper that returns a model's output), with autograd recording in it and
        no differentiation inside."""
        func = self._function_run(call)
        if func is None:
            return None
        if func not in self._parameter_functions:
            self._parameter_functions[func] = False  # asked again on a cycle of calls
            self._parameter_functions[func] = self._computes_from_parameters(func)
        if not self._parameter_functions[func]:
            return None
        if type(func) is cst.FunctionDef and not called_implicitly(func.name.value):
            return func.name.value
        return dotted_name(call.func)  # `detector(x)` runs `__call__`; a lambda's name

    def _function_run(self, call: cst.Call) -> cst.FunctionDef | cst.Lambda | None:
        """This file's function or lambda `call` runs: resolved by name, handed in as a
        parameter every caller fills alike, or bound once to a name in its scope."""
        summaries = self.summaries
        return summaries.resolve(call) or summaries.passed_in(call) or summaries.bound_lambda(call)

    def parameter_function_forwards(self, call: cst.Call) -> list[cst.Call]:
        """The forwards of models inside this file's function that `call` runs whose
        output it returns (`return self.model.decoder(z).cpu()`): where the graph a
        parameter_function hands back is built."""
        func = self._function_run(call)
        if func is None or self.parameter_function(call) is None:
            return []
        returns: list[tuple[cst.CSTNode, cst.BaseExpression]]
        if isinstance(func, cst.Lambda):
            returns = [(func.body, func.body)]  # one expression, run where it is called
        else:
            returns = list(self.index.value_returns(func))
        return [
            node
            for ret, value in returns
            if self.grad_mode.mode_at(ret) is GradMode.RECORDING
            for node in dict.fromkeys(
                [
                    *self.index.walk(value),
                    # `logits = self.net(obs)`, then `return Categorical(logits=logits)`
                    *self._distribution_forwards(value, ret),
                ]
            )
            if type(node) is cst.Call and self.model_forward(node) is not None
        ]

    def handed_parameters(self, call: cst.Call) -> str | None:
        """The name of a callable that `call` hands a tensor requiring grad or an
        iterable of parameters, known by how it is built or by its use
        (analysis.parameter_roles): `rnn(X, state, params)` with `params` clipped and
        stepped by the training code. What it returns may be computed from them, so it
        may carry their graph; whether it does is for the caller to show by the
        result's uses (a tensor method read off it). A callable out of sight (a
        function's parameter, a name bound to an imported function) counts as it is; a
        function of this file must read the parameter it is handed, record, not
        differentiate, and return something not proven free of history. Not a class."""
        func = call.func
        if type(func) is not cst.Name:
            return None
        if any(type(b) is cst.ClassDef for b in self.values.bindings_of(func.value, call)):
            return None
        handed = [arg.value for arg in call.args if not arg.star and self._holds_parameters(arg)]
        if not handed:
            return None
        callee = self.summaries.resolve(call)
        if callee is None:
            return func.value
        if self.differentiates(callee):
            return None
        if self.grad_mode.function_mode(callee) is not GradMode.RECORDING:
            return None
        signature = signature_of(callee, method=self.index.enclosing_class(callee) is not None)
        reads = self.summaries.bindings.uses(callee)
        if not any(
            argument_of(call, signature, param) in handed and param in reads
            for param in (*signature.positional, *signature.keyword_only)
        ):
            return None
        returns = self.index.value_returns(callee)
        if not returns or all(is_graph_free(self.values.of_expr(v, ret)) for ret, v in returns):
            return None
        return func.value

    def _holds_parameters(self, arg: cst.Arg) -> bool:
        """A tensor that requires grad, or an iterable of parameters."""
        value = arg.value
        if type(value) is cst.Name and self.tensors.leaf_requiring_grad(value, value) is not None:
            return True
        return self._parameter_container(arg)

    def _parameter_container(self, arg: cst.Arg) -> bool:
        """An iterable of parameters (`params`, `[W_xh, W_hh, b_h]`), known by how it is
        built or by its use: a hand-written model's weights, never an input whose
        gradient is asked for (that is one tensor)."""
        value = arg.value
        if type(value) in (cst.List, cst.Tuple):
            return self.tensors.built_as_parameters(value, value)
        if type(value) is not cst.Name or arg.star:
            return False
        if self.tensors.built_as_parameters(value, value):
            return True
        roles = self.tensors.roles
        return roles is not None and roles.holds_parameters(value.value, value)

    def _computes_from_parameters(self, func: cst.FunctionDef | cst.Lambda) -> bool:
        returns: list[tuple[cst.CSTNode, cst.BaseExpression]]
        if isinstance(func, cst.Lambda):
            # one expression, run where it is called
            if self.grad_mode.lambda_mode(func) is not GradMode.RECORDING:
                return False
            if self._reads_a_leaf_it_closes_over(func):
                return True
            returns = [(func.body, func.body)]
        else:
            if self.differentiates(func):
                return False
            if self.grad_mode.function_mode(func) is not GradMode.RECORDING:
                return False
            returns = list(self.index.value_returns(func))
        for ret, value in returns:
            if self.grad_mode.mode_at(ret) is not GradMode.RECORDING:
                continue
            if self.values.of_expr(value, ret) & {Kind.GRAPH, Kind.LEAF}:
                return True
            if self._distribution_of_a_forward(value, ret):
                return True
            for node in self.index.walk(value):
                if type(node) is cst.Call and (
                    self.model_forward(node) is not None
                    or self.handed_parameters(node) is not None
                    or self.parameter_function(node) is not None
                ):
                    # a model's forward, `net(X, w, b)` of a hand-written one, or another
                    # function of this file that returns such a value
                    return True
            if any(self._global_leaf(name, ret) for name in self.flow.reads(value)):
                return True
        return False

    def _distribution_of_a_forward(self, expr: cst.BaseExpression, use: cst.CSTNode) -> bool:
        """Is `expr` a torch.distributions object built from a tensor with history or from
        a model's output (`logits = self.net(obs)`, then `return Categorical(logits=logits)`)?
        Its `log_prob`, `rsample` and `entropy` compute from that output with its graph;
        only its `sample()` runs without grad."""
        return any(
            self.values.of_expr(arg.value, built) & {Kind.GRAPH, Kind.LEAF}
            for built in self.values.distributions_built(expr, use)
            for arg in built.args
        ) or bool(self._distribution_forwards(expr, use))

    def _distribution_forwards(self, expr: cst.BaseExpression, use: cst.CSTNode) -> list[cst.Call]:
        """The forwards, recording and of a model not frozen, whose output the
        torch.distributions object `expr` is built from, as written or through a name
        bound to it (`logits = self.net(obs)`)."""
        found: list[cst.Call] = []
        for built in self.values.distributions_built(expr, use):
            for arg in built.args:
                sources: list[cst.BaseExpression] = [arg.value]
                if type(arg.value) is cst.Name:
                    sources += [
                        e for e in self.values.reaching_expressions(arg.value.value, built) if e
                    ]
                for source in sources:
                    for node in self.index.walk(source):
                        if type(node) is not cst.Call or node in found:
                            continue
                        model = self.model_forward(node)
                        if (
                            model is not None
                            and self.grad_mode.mode_at(node) is GradMode.RECORDING
                            and not self.is_frozen(model, node)
                        ):
                            found.append(node)
        return found

    def _reads_a_leaf_it_closes_over(self, lam: cst.Lambda) -> bool:
        """Does the lambda's body read, on a path that keeps the graph, a variable of the
        enclosing scope that holds a tensor requiring grad where the lambda is made
        (`w = torch.zeros(3, requires_grad=True)`, then `net = lambda X: X @ w`)?"""
        own = {p.name.value for p in all_params(lam.params)}
        read = self.flow.reads(lam.body)
        for node in self.index.walk(lam.body):
            if type(node) is cst.Name and node.value in read and node.value not in own:
                if Kind.LEAF in self.values.of_expr(node, lam):
                    return True
        return False

    def _global_leaf(self, name: str, use: cst.CSTNode) -> bool:
        """A module-level tensor the function reads that the module's own code makes
        require grad (`W.requires_grad_(True)` in a notebook cell) or builds requiring
        it (`requires_grad=True`): d2l's weights of a hand-written net."""
        if "." in name or self.index.scope_of(use) is self.index.module:
            return False
        bindings = self.values.bindings_of(name, use)
        if not bindings or any(self.index.scope_of(b) is not self.index.module for b in bindings):
            return False  # bound in the function itself, or not a global of this file
        if self._made_to_require_grad(name, self.index.module):
            return True
        # or built as one: `W = torch.normal(0, 0.01, size=(784, 10), requires_grad=True)`
        built = self.values.reaching_expressions(name, use)
        return bool(built) and all(
            v is not None and Kind.LEAF in self.values.of_expr(v, v) for v in built
        )

    def _self_has_parameters(self, use: cst.CSTNode) -> bool:
        """`self(x)` / `self.forward(x)` in a class of this file: a module class that is
        not parameterless, or a hand-written model, a plain class that keeps tensors
        requiring grad in `self` (`self.weights = torch.zeros(n, 1, requires_grad=True)`,
        a course's logistic regression)."""
        for anc in self.index.ancestors(use):
            if type(anc) is cst.ClassDef:
                name = anc.name.value
                if name in self.tensors.local_module_classes():
                    return name not in self.parameterless_classes()
                return self.tensors.holds_leaf_attributes(anc)
        return False

    def has_parameters(self, expr: cst.CSTNode, use: cst.CSTNode) -> bool:
        """Is `expr` (a dotted name) a module that holds parameters? Known from how it
        is built (a torch.nn layer that has weights, a container of such layers, this
        file's module class that is not parameterless), or, for a model built out of
        sight (an imported class, a factory), from its `.parameters()` being asked for
        (handed to an optimizer, counted)."""
        name = module_path(expr)
        if name is None:
            return False
        scope = self.index.scope_of(use)
        key = (id(scope), name)
        found = self._has_parameters.get(key)
        if found is None:
            found = self._compute_has_parameters(expr, name, use)
            self._has_parameters[key] = found
        return found

    def _compute_has_parameters(self, expr: cst.CSTNode, name: str, use: cst.CSTNode) -> bool:
        if name == "self":
            # a module handing itself to a helper (`return eval_np(self, obs)`): its class
            # says whether it holds parameters, as it does for `self(x)`
            return self._self_has_parameters(use)
        tensors = self.tensors
        constructors = tensors.module_constructors(expr, self._binding_site(name, use))
        verdicts = {self._built_with_parameters(value) for value in constructors}
        if True in verdicts and self._walked_layers(name, use):
            # `for layer in self.hidden: x = layer(x)`: the loop runs every layer, the
            # ones with weights among them
            return True
        if False in verdicts:
            return False  # some binding makes it a parameterless module, or not a module
        if True in verdicts:
            return True
        return (
            self._filled_with_parameters(name)
            or self._loaded_and_run(expr, constructors, use)
            or self._submodule_of_a_model(name, use)
            or self._parameters_asked_for(name, use)
            or self._passed_by_callers(name, use)
            or self._handed_by_a_fixture(name, use)
            or self._handed_to_the_constructor(name, constructors, use)
            or self._kept_by_a_base_class(name, use, constructors)
            or self._unpacked_from_a_factory(name, use)
            or self._aliases_a_model(name, use)
            or self._results_detached(name, use)
            or self._imported_instance(name, use)
        )

    def _handed_by_a_fixture(self, name: str, use: cst.CSTNode) -> bool:
        """`def test_forward(tiny_model): tiny_model(x)`: a parameter of a pytest test
        that pytest fills with what this file's fixture of that name returns or yields,
        when every such value is a module that holds parameters not frozen there
        (`@pytest.fixture def tiny_model(): return LSANODE(...)`), or, without one in
        the file, what the nearest conftest.py's function of that name builds. Pytest
        is the test's only caller, and the fixture is the argument it passes."""
        if "." in name:
            return False
        scope = self.index.scope_of(use)
        if type(scope) is not cst.FunctionDef or not self.index.is_pytest_function(scope):
            return False
        if name not in {p.name.value for p in all_params(scope.params)} or any(
            type(b) is not cst.Param for b in self.values.bindings_of(name, use)
        ):
            return False  # not handed by pytest, or rebound in the test
        if self.index.fixture_overridden(scope, name):
            return False  # parametrized, or a fixture of the test's class: not the file's
        values = self.index.fixture_values(name)
        if not values:
            # none in the file: a conftest.py's, the nearest above the test
            project = self.summaries.project
            return project is not None and project.conftest_fixture_builds_parameters(name)
        return all(
            self._built_with_parameters(value) is True
            if type(built_module_call(value)) is cst.Call
            else (
                (returned := module_path(value)) is not None
                and self.has_parameters(value, statement)
                and not self.is_frozen(returned, statement, scoped=True)
            )
            for statement, value in values
        )

    def _imported_instance(self, name: str, use: cst.CSTNode) -> bool:
        """`model` after `from models import model`: an instance another file of the
        project builds once at its top level from a class with weights, a script's
        model that an evaluation script imports."""
        origin = self.index.imported_from.get(name)
        project = self.summaries.project
        if origin is None or project is None or not project.enabled:
            return False
        module, level, imported = origin
        if imported is None or not self.values.bound_only_by_imports(name, use):
            return False
        return project.instance_holds_parameters(module, level, imported)

    def _aliases_a_model(self, name: str, use: cst.CSTNode) -> bool:
        """`model = net` (a PINN notebook's alias, `net = ff(15)` in the cell before), or
        `enc = encoder.cuda()` (the module moved, which hands back itself): a name every
        binding of which that reaches `use` is another name for a module that holds
        parameters."""
        bindings = self._single_assignments(name, use)
        if bindings is None:
            return False
        for binding in bindings:
            value = built_module_call(binding.value)
            if type(value) is not cst.Name or value.value == name or binding in self._aliasing:
                return False
            self._aliasing.add(binding)
            try:
                if not self.has_parameters(value, binding):
                    return False
            finally:
                self._aliasing.discard(binding)
        return True

    def _single_assignments(self, name: str, use: cst.CSTNode) -> list[cst.Assign] | None:
        """The bindings of a plain name that reach `use`, when there are some and every
        one is an assignment with a single target; None otherwise."""
        if "." in name:
            return None
        bindings = self.values.bindings_of(name, use)
        if not bindings or not all(type(b) is cst.Assign and len(b.targets) == 1 for b in bindings):
            return None
        return cast(list[cst.Assign], bindings)

    def _loaded_and_run(
        self, expr: cst.CSTNode, constructors: list[cst.CSTNode], use: cst.CSTNode
    ) -> bool:
        """`net = torch.load(path)`, then `net(x)`: what a checkpoint loader hands back
        and the code calls is a whole pickled model, and a saved model holds weights.
        Only a call of it says so, in the scope or in a function of this file the scope
        hands it to (`evaluate(net, loader)`, which calls its `model`): a loaded tensor
        or state dict is never called."""
        if not constructors:
            return False
        for value in constructors:
            built = built_module_call(value)
            if type(built) is not cst.Call:
                return False
            qualified = self.index.qualified_name(built.func) or ""
            if not qualified.startswith(TRAINED_MODEL_LOADERS):
                return False
        name = dotted_name(expr)
        scope = self.index.scope_of(use)
        calls = self.index.of_types_in(scope, cst.Call, into_functions=False)
        if any(dotted_name(call.func) == name for call in calls):
            return True
        return name is not None and any(
            any(dotted_name(arg.value) == name for arg in call.args)
            and self._runs_what_it_is_handed(call, name)
            for call in calls
        )

    def _runs_what_it_is_handed(self, call: cst.Call, name: str) -> bool:
        """Does the function of this file `call` runs call the parameter the call binds
        to `name` (`evaluate(net, loader)` with `def evaluate(model, loader): ...
        model(x)`)?"""
        helper = self.summaries.resolve(call)
        if helper is None:
            return False
        method = self.index.enclosing_class(helper) is not None
        return any(
            path_in_caller(call, helper, param, method=method) == name
            for param in self.summaries.of(helper).forwarded_params
        )

    def _submodule_of_a_model(self, name: str, use: cst.CSTNode) -> bool:
        """`for layer in net.children(): x = layer(x)` (or `for _, m in
        net.named_modules()`): every binding of `name` that reaches `use` is a loop over
        the submodules of a model that holds parameters, which its layers then run."""
        owners = self._submodules_walked(name, use)
        return owners is not None and all(
            self.has_parameters(owner, loop) for loop, owner in owners
        )

    def _submodules_walked(
        self, name: str, use: cst.CSTNode, *, containers: bool = False
    ) -> list[tuple[cst.For, cst.BaseExpression]] | None:
        """(loop, module) for each binding of `name` that reaches `use`, when every one
        is a loop over the submodules of a module (`for layer in net.children()`, `for
        _, m in net.named_modules()`; with `containers`, also `for layer in
        net.features`, a container's layers); None otherwise."""
        if "." in name:
            return None
        bindings = self.values.bindings_of(name, use)
        if not bindings:
            return None
        found: list[tuple[cst.For, cst.BaseExpression]] = []
        for loop in bindings:
            if type(loop) is not cst.For:
                return None
            if containers and type(loop.iter) is cst.Attribute and type(loop.target) is cst.Name:
                if self._holds_functions(loop.iter, loop):
                    return None  # `self.pre = [lambda t: t * 2, ...]`: no layers
                found.append((loop, loop.iter))
                continue
            if type(loop.iter) is not cst.Call:
                return None
            method = loop.iter.func
            if type(method) is not cst.Attribute:
                return None
            target = loop.target
            if method.attr.value in NAMED_SUBMODULE_ITERATORS:
                if not (
                    type(target) is cst.Tuple
                    and len(target.elements) == 2
                    and type(target.elements[1].value) is cst.Name
                    and target.elements[1].value.value == name
                ):
                    return None
            elif method.attr.value not in SUBMODULE_ITERATORS:
                return None
            if module_path(method.value) is None:
                return None
            found.append((loop, method.value))
        return found

    def _walked_layers(self, name: str, use: cst.CSTNode) -> bool:
        """Is every binding of `name` that reaches `use` a `for` loop's target (a
        container's layers walked one by one)?"""
        if "." in name:
            return False
        bindings = self.values.bindings_of(name, use)
        return bool(bindings) and all(type(b) is cst.For for b in bindings)

    def _unpacked_from_a_factory(self, name: str, use: cst.CSTNode) -> bool:
        """`G, D = build_models()`, `model, optimizer = setup(cfg)`: a name unpacked from
        a call of this file's function each of whose returns is a tuple with, at that
        place, a module that holds parameters (built there, or a name bound to one)."""
        bindings = self._single_assignments(name, use)
        if bindings is None:
            return False
        for binding in bindings:
            if type(binding.value) is not cst.Call:
                return False
            target = binding.targets[0].target
            if not isinstance(target, (cst.Tuple, cst.List)):
                return False
            places = [e.value.value if type(e.value) is cst.Name else None for e in target.elements]
            if name not in places or any(type(e) is cst.StarredElement for e in target.elements):
                return False
            if not self._factory_returns_parameters_at(
                binding.value, places.index(name), len(places)
            ):
                return False
        return True

    def _factory_returns_parameters_at(self, call: cst.Call, place: int, size: int) -> bool:
        def at_place(returns: list[tuple[cst.Return, cst.BaseExpression]]) -> bool:
            return bool(returns) and all(
                isinstance(value, (cst.Tuple, cst.List))
                and len(value.elements) == size
                and type(value.elements[place]) is not cst.StarredElement
                and self._returned_with_parameters(value.elements[place].value, statement)
                for statement, value in returns
            )

        return self._ask_factory(call, at_place) is True

    def _ask_factory(
        self, call: cst.Call, question: Callable[[list[tuple[cst.Return, cst.BaseExpression]]], _T]
    ) -> _T | None:
        """`question` of the returns of the function of this file that `call` runs; None
        when it runs none, or when that function is being asked already (a factory that
        calls itself, or two that call each other)."""
        callee = self.summaries.resolve(call)
        if callee is None or callee in self._asking_factories:
            return None
        self._asking_factories.add(callee)
        try:
            return question(self.index.value_returns(callee))
        finally:
            self._asking_factories.discard(callee)

    def _passed_by_callers(self, name: str, use: cst.CSTNode) -> bool:
        """A parameter of the enclosing function that the function's callers in this
        file fill with a module that holds parameters (`generate(decoder, ...)` called
        with `decoder = CharRNN()`), and never with anything known not to be one. A
        module-level function that no call in this file runs is asked of its callers in
        the project's other files instead (`generate_image(aG, z)` in train.py, after
        `Adam(aG.parameters())`): each of them must pass such a module. An element of
        the parameter by a constant key (`models["G"]`) is the same element of what each
        caller in this file passes (`models = {"G": G}`), and so is an attribute of it
        (`agent.policy.net`, of the `Agent()` each caller in this file passes)."""
        head = path_root(name)
        element = name[len(head) :]
        if head in ("self", "cls"):
            return False
        scope = self.index.scope_of(use)
        if type(scope) is not cst.FunctionDef or scope in self._asking_callers:
            return False
        summary = self.summaries.of(scope)
        if head not in summary.params or any(
            type(b) is not cst.Param for b in self.values.bindings_of(head, use)
        ):
            return False  # rebound in the function: the callers' value is not all it is
        own = self._class_and_own_init(scope) if not element else None
        if own is not None and own[1] is scope:
            # `self.target = copy.deepcopy(q)` in `__init__`: what the class's
            # constructions hand its parameter, as a kept `self.q = q` is asked
            return self._constructions_hand_models(own[0], scope, head)
        self._asking_callers.add(scope)
        try:
            arguments = self.summaries.caller_arguments.here(scope, head)
            if element and not arguments and self.index.scope_of(scope) is self.index.module:
                return element[0] == "[" and self.summaries.caller_arguments.models_elsewhere(
                    scope, head, containers=True
                )
            if element:
                return self._elements_hold_parameters(arguments, element)
            verdicts = self._hold_parameters(arguments)
            if not verdicts and self.index.scope_of(scope) is self.index.module:
                # asked of its callers in the project's other files instead: the search
                # GL012's result uses and the impact ask of the function, made once
                return self.summaries.caller_arguments.models_elsewhere(scope, head)
        finally:
            self._asking_callers.discard(scope)
        return verdicts == {True}

    def _elements_hold_parameters(self, arguments: list[ArgumentHere], element: str) -> bool:
        """Does every call site pass a name whose `element` (`["G"]`, `.policy.net`, as
        module_path spells it) is a module that holds parameters there?"""
        if not arguments:
            return False
        for argument in arguments:
            passed = module_path(argument.passed) if argument.passed is not None else None
            if passed is not None:
                expr: cst.CSTNode = cst.parse_expression(passed + element)
            else:
                # `sample(z, {"G": G, "D": D})`: the entry of a container written out at
                # the call
                entry = literal_entry(argument.passed, element) if argument.passed else None
                if entry is None:
                    return False
                value, rest = entry
                expr = value
                if rest:
                    path = module_path(value)
                    if path is None:
                        return False
                    expr = cst.parse_expression(path + rest)
            if not self._holds_weights(expr, argument.site):
                return False
        return True

    def _holds_weights(self, expr: cst.CSTNode, use: cst.CSTNode) -> bool:
        """has_parameters, or for a subscript (`self.critics[0]`, `models["G"]`) a
        container every element of which holds parameters, whichever key picks one."""
        if self.has_parameters(expr, use):
            return True
        return type(expr) is cst.Subscript and self._element_with_parameters(expr, use) is not None

    def _handed_to_the_constructor(
        self, name: str, constructors: list[cst.CSTNode], use: cst.CSTNode
    ) -> bool:
        """`self.policy`, bound only in `__init__`, to its own `policy` parameter, where
        every construction of the class fills that parameter with a module that holds
        parameters: `Agent(Net())` in this file, or, when the file builds none, the
        constructions the caller search finds in the project's other files (`Agent(net)`
        after `Adam(net.parameters())` in train.py), or else the constructor itself
        training it (`self.opt = Adam(policy.parameters())`). A wrapper handed its model
        (an agent, a predictor, an evaluator) runs that model's forward."""
        kept = self._kept_constructor_parameter(name, constructors, use)
        if kept is None:
            return False
        cls, init, param = kept
        if self.index.constructions(cls):
            return self._constructions_hand_models(*kept)  # the ones in sight decide
        # none in this file: `self.opt = Adam(policy.parameters())` beside
        # `self.policy = policy` shows that the constructor trains what it keeps
        return self._constructions_hand_models(*kept) or self._trained_by_the_constructor(
            init, param
        )

    def _trained_by_the_constructor(self, init: cst.FunctionDef, param: str) -> bool:
        """Does a statement of the constructor's own body, which always runs, hand the
        parameters of `param` to a torch optimizer (`self.opt =
        Adam(policy.parameters())`)? Not one under an `if` (a policy that may be a plain
        function gets none), and not a freeze (`for p in teacher.parameters():
        p.requires_grad = False` hands them to no optimizer)."""
        for statement in init.body.body:
            if type(statement) is not cst.SimpleStatementLine:
                continue
            for call in self.index.of_types_in(statement, cst.Call):
                qualified = self.index.qualified_name(call.func) or ""
                if qualified.startswith(OPTIMIZER_NAMESPACES) and param in optimized_modules(
                    self.index, call
                ):
                    return True
        return False

    def _kept_constructor_parameter(
        self, name: str, constructors: list[cst.CSTNode], use: cst.CSTNode
    ) -> tuple[cst.ClassDef, cst.FunctionDef, str] | None:
        """(class, its `__init__`, the parameter) when `self.<attribute>` (`name`) is bound
        only in the class's own `__init__`, to that parameter (`self.policy = policy`),
        `constructors` being what binds it."""
        found = self._own_attribute(name, use) if constructors else None
        if found is None:
            return None
        _, cls, init = found
        handed = {v.value for v in constructors if type(v) is cst.Name}
        if len(handed) != 1 or len(constructors) != len(
            [v for v in constructors if self.index.is_inside(v, init)]
        ):
            return None
        param = handed.pop()
        if any(type(b) is not cst.Param for b in self.values.bindings_of(param, constructors[0])):
            return None  # not the parameter, or rebound before it is kept
        return cls, init, param

    def _own_attribute(
        self, name: str, use: cst.CSTNode
    ) -> tuple[str, cst.ClassDef, cst.FunctionDef] | None:
        """(attribute, class, its own `__init__`) for `self.<attribute>` read in a method
        of a module-level class that defines `__init__`; None otherwise."""
        method = self._attribute_of_self(name, use)
        if method is None:
            return None
        attribute, function = method
        found = self._class_and_own_init(function)
        return (attribute, *found) if found is not None else None

    def _attribute_of_self(self, name: str, use: cst.CSTNode) -> tuple[str, cst.FunctionDef] | None:
        """(attribute, the function read in) for `self.<attribute>` (one attribute deep)
        read in a function; None otherwise."""
        head, _, attribute = name.partition(".")
        if head != "self" or not attribute or "." in attribute:
            return None
        function = self.index.scope_of(use)
        return (attribute, function) if type(function) is cst.FunctionDef else None

    def _class_and_own_init(
        self, function: cst.FunctionDef
    ) -> tuple[cst.ClassDef, cst.FunctionDef] | None:
        """(the module-level class a method is defined in, that class's own `__init__`);
        None for a function of no such class, or of one without its own `__init__`."""
        if function not in self._own_inits:  # asked of every `self.x` of a method
            cls = self.index.enclosing_class(function)
            init = None
            if cls is not None and self.index.scope_of(cls) is self.index.module:
                init = own_method(cls, "__init__")
            self._own_inits[function] = (cls, init) if cls is not None and init else None
        return self._own_inits[function]

    def _constructions_hand_models(
        self, cls: cst.ClassDef, init: cst.FunctionDef, param: str
    ) -> bool:
        """Does every construction of the class, in this file or else in the project's
        other files (one at least), fill its `__init__`'s `param` with a module that
        holds parameters? Asked once per parameter: every `self.<attribute>` of the
        class's methods that holds it asks the same."""
        key = (init, param)
        known = self._constructions_known.get(key)
        if known is not None:
            return known
        if init in self._asking_callers:
            return False
        self._asking_callers.add(init)
        try:
            sites = self.index.constructions(cls)
            if not sites:
                found = self.summaries.caller_arguments.models_constructed_elsewhere(
                    cls, init, param
                )
            else:
                arguments = self.summaries.caller_arguments.here(
                    init, param, sites, constructed=True
                )
                found = self._hold_parameters(arguments) == {True}
        finally:
            self._asking_callers.discard(init)
        self._constructions_known[key] = found
        return found

    def _kept_by_a_base_class(
        self, name: str, use: cst.CSTNode, constructors: list[cst.CSTNode]
    ) -> bool:
        """`self.model`, kept by the `__init__` of a base class another file of the
        project writes (`self.model = model` in base.py's `Trainer`), handed it by this
        class's `super().__init__(model)` from a parameter of its own `__init__` that
        every construction fills with a module holding parameters (or a module built at
        that call, `super().__init__(Net())`): an agent or a trainer that inherits where
        its model is stored. A class without its own `__init__` is handed it by its
        constructions (`Algo(Net(), lr)`); a base that builds the model itself
        (`self.model = Net()` in base.py) holds one for every subclass. Neither where
        the classes of this file assign the attribute themselves (`constructors`): the
        base's model may be replaced."""
        method = self._attribute_of_self(name, use)
        if method is None:
            return False
        attribute, function = method
        cls = self.index.enclosing_class(function)
        if cls is None or self.index.scope_of(cls) is not self.index.module:
            return False
        base = self.summaries.callees.imported_base(cls) if not constructors else None
        project = self.summaries.project
        if base is not None and project is not None and project.enabled:
            if project.attribute_holds_parameters(*base, attribute):
                return True
        found = self._own_attribute(name, use)
        if found is None:
            return base is not None and self._handed_at_constructions(cls, attribute)
        attribute, cls, init = found
        kept = self._base_kept.get(cls)
        if kept is None:
            kept = self._base_kept[cls] = self._kept_by_bases(cls, init)
        passed = kept.get(attribute)
        if type(passed) is cst.Call:
            # `super().__init__(Net())`: the module is built right there
            return self._built_with_parameters(passed) is True
        return type(passed) is cst.Name and self._constructions_hand_models(cls, init, passed.value)

    def _handed_at_constructions(self, cls: cst.ClassDef, attribute: str) -> bool:
        """Does every construction of `cls` in this file (one at least), a class
        without its own `__init__`, hand its imported base's `__init__` a module that
        holds parameters for the parameter that base keeps in `self.<attribute>`?"""
        sites = self.index.constructions(cls)
        if not sites:
            return False
        for site in sites:
            handed = [
                passed
                for base in cls.bases
                for kept, passed in self.summaries.kept_by_an_imported_base(
                    base.value, site
                ).items()
                if kept == attribute
            ]
            if not handed or self._hold_parameters([ArgumentHere(site, handed[0])]) != {True}:
                return False
        return True

    def _kept_by_bases(
        self, cls: cst.ClassDef, init: cst.FunctionDef
    ) -> dict[str, cst.BaseExpression]:
        """{attribute: what the class's own `__init__` hands, by its
        `super().__init__(...)`, to an imported base that keeps it there: one of its own
        parameters, or a module built at the call}: read once per class, as every
        `self.<attribute>` of its methods asks."""
        own = {p.name.value for p in all_params(init.params)}
        found: dict[str, cst.BaseExpression] = {}
        for call in self.index.of_types_in(init, cst.Call):
            func = call.func
            if not (
                type(func) is cst.Attribute
                and func.attr.value == "__init__"
                and type(func.value) is cst.Call
                and dotted_name(func.value.func) == "super"
            ):
                continue
            for base in cls.bases:
                for attribute, passed in self.summaries.kept_by_an_imported_base(
                    base.value, call
                ).items():
                    built = built_module_call(passed)
                    if (type(passed) is cst.Name and passed.value in own) or type(
                        built
                    ) is cst.Call:
                        found.setdefault(attribute, cast(cst.BaseExpression, built))
        return found

    def _hold_parameters(self, arguments: list[ArgumentHere]) -> set[bool]:
        """For each call site's argument: is it a module that holds parameters, built
        there (`Agent(Net())`) or a name bound to one? False where the call passes none,
        or something else."""
        verdicts = set()
        for argument in arguments:
            passed = argument.passed
            if passed is not None and type(passed) is cst.Call:
                # `classifier.cuda()` hands on the module it is called on
                moved = built_module_call(passed)
                if type(moved) is not cst.Call and dotted_name(moved) is not None:
                    verdicts.add(self.has_parameters(moved, argument.site))
                else:
                    verdicts.add(self._built_with_parameters(passed) is True)
            elif passed is not None and dotted_name(passed) is not None:
                verdicts.add(self.has_parameters(passed, argument.site))
            else:
                verdicts.add(False)
        return verdicts

    def _built_with_parameters(self, value: cst.CSTNode) -> bool | None:
        """True: builds a module with parameters; False: builds something that is not
        one (a parameterless torch layer, a loss, None, a literal); None: cannot say."""
        value = built_module_call(value)
        if type(value) is not cst.Call:
            if isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)):
                return None
            return False
        if self._picked_from_a_model_zoo(value.func):
            return True
        if type(value.func) is cst.Subscript:
            return self._registry_builds(value.func)
        partial = self._partial_class(value)
        if partial is not None:
            value = cst.Call(func=partial)  # `build()` of `build = partial(WaveNet, ...)`
        qualified = self.index.qualified_name(value.func) or ""
        last = qualified.rsplit(".", 1)[-1]
        if qualified in MODULE_PRESERVING_FUNCTIONS:
            # `torch.compile(Net())`, `spectral_norm(nn.Linear(4, 2))`: the module given
            wrapped = positional_arguments(value)
            if not wrapped:
                return None
            if type(built_module_call(wrapped[0])) is cst.Call:
                return self._built_with_parameters(wrapped[0])
            if value in self._unwrapping:
                return None  # `model = torch.compile(model)`: asked again of this binding
            self._unwrapping.add(value)
            try:
                return True if self.has_parameters(wrapped[0], value) else None
            finally:
                self._unwrapping.discard(value)
        if qualified in _NAMED_ELEMENT_BUILDERS:
            # `nn.Sequential(OrderedDict([("fc", nn.Linear(4, 2)), ...]))`, and its
            # elements where a loop over the Sequential reads them: the layers named
            return self._any_with_parameters(_named_values(value))
        if qualified.startswith("torch.nn."):
            if last in WRAPPER_MODULES:
                wrapped = positional_arguments(value)
                return self._built_with_parameters(wrapped[0]) if wrapped else None
            if last in CONTAINER_MODULES:
                return self._container_elements_hold(value)
            if _switches_weights_off(value):
                return False  # `nn.BatchNorm1d(2, affine=False)`: statistics, no weights
            return last in PARAMETRIC_LAYERS
        if qualified.startswith(MODEL_ZOO_NAMESPACES):
            return not last.startswith(MODEL_ZOO_NON_MODELS)
        if builds_model_with_weights(qualified):
            return True
        if self._fills_a_container_class(value, qualified):
            # `FlowSequential(Sigmoid())` of `class FlowSequential(nn.Sequential)`
            return self._container_elements_hold(value)
        if last in self.tensors.local_module_classes() and "." not in qualified:
            return last not in self.parameterless_classes()
        if self.summaries.builds_imported_module(value):
            return True
        if self.summaries.built_by_an_imported_factory(value):
            return True
        if value not in self._unwrapping:
            # `Scorer(net)` of another file's class keeping it (`self.model = model`):
            # the instance holds the weights it was handed, and its methods run them
            self._unwrapping.add(value)
            try:
                if any(
                    self._hands_parameters(kept, value)
                    for kept in self.summaries.kept_by_an_imported_class(value)
                ):
                    return True
            finally:
                self._unwrapping.discard(value)
        return self._factory_builds_parameters(value)

    def _container_elements_hold(self, value: cst.Call) -> bool | None:
        """What a torch.nn container built by `value` holds, from the layers the call
        hands it (`nn.Sequential(nn.Linear(4, 2), nn.ReLU())`, `nn.ModuleList([...])`,
        `nn.ModuleDict({...})`): None for an empty one, filled later
        (_filled_with_parameters)."""
        elements = [a.value for a in value.args if not a.keyword]
        flattened: list[cst.CSTNode] = []
        for element in elements:
            if isinstance(element, (cst.List, cst.Tuple)):
                flattened.extend(e.value for e in element.elements)
            elif isinstance(element, (cst.ListComp, cst.GeneratorExp)):
                flattened.append(element.elt)
            elif type(element) is cst.Dict:
                flattened.extend(_named_values(element))  # `nn.ModuleDict({...})`
            else:
                flattened.append(element)
        if not flattened:
            return None
        return self._any_with_parameters(flattened)

    def _fills_a_container_class(self, value: cst.Call, qualified: str) -> bool:
        """Does `value` build a class, of this file or imported from the project, that
        derives from a torch.nn container and leaves its construction to the
        container's `__init__` (`class FlowSequential(nn.Sequential)` with only a
        `forward`)? Then the instance holds what the call hands it."""
        if "." not in qualified:
            for cls in self.index.classes:
                if cls.name.value == qualified and self.index.scope_of(cls) is self.index.module:
                    return self.summaries.callees.method_of(cls, "__init__") is None and any(
                        is_torch_container(self.index.qualified_name(base.value) or "")
                        for base in cls.bases
                    )
        return self.summaries.builds_imported_container(value)

    def _picked_from_a_model_zoo(self, func: cst.BaseExpression) -> bool:
        """A builder a model zoo's namespace hands by its name, called at once: the
        ImageNet example's `models.__dict__[args.arch](pretrained=True)`, or
        `getattr(torchvision.models, arch)()`. Every model there has weights."""
        if type(func) is cst.Subscript:
            namespace = func.value
            if not (type(namespace) is cst.Attribute and namespace.attr.value == "__dict__"):
                return False
            namespace = namespace.value
        elif (
            type(func) is cst.Call
            and self.index.qualified_name(func.func) == "getattr"
            and len(func.args) == 2
            and all(a.keyword is None and not a.star for a in func.args)
        ):
            namespace = func.args[0].value
        else:
            return False
        qualified = self.index.qualified_name(namespace)
        if qualified is None or not is_model_zoo(qualified):
            return False
        root = path_root(dotted_name(namespace) or "")
        return self.values.bound_only_by_imports(root, func)  # not rebound to another

    def _registry_builds(self, picked: cst.Subscript) -> bool | None:
        """What `MODELS[name]()` builds, of a registry bound once to a literal of classes
        (`MODELS = {"mlp": MLP, "cnn": CNN}`): True when every class there builds a module
        with weights, False when none does, None when they differ or cannot be told."""
        registry = picked.value
        if type(registry) is not cst.Name:
            return None
        if self._imported_registry(registry.value, picked):
            return True
        bindings = self.values.bindings_of(registry.value, picked)
        if len(bindings) != 1 or type(bindings[0]) is not cst.Assign:
            return None
        table = bindings[0].value
        if type(table) is cst.Dict:
            entries = [e.value for e in table.elements if type(e) is cst.DictElement]
        elif type(table) in (cst.List, cst.Tuple):
            entries = [e.value for e in table.elements if type(e) is cst.Element]  # type: ignore[attr-defined]
        else:
            return None
        if (
            not entries
            or len(entries) != len(table.elements)  # type: ignore[attr-defined]
            or not all(type(e) in (cst.Name, cst.Attribute) for e in entries)
        ):
            return None
        verdicts = {self._built_with_parameters(cst.Call(func=entry)) for entry in entries}
        return verdicts.pop() if len(verdicts) == 1 else None

    def _imported_registry(self, name: str, use: cst.CSTNode) -> bool:
        """`MODELS` after `from models import MODELS`: a registry another file of the
        project writes out of its classes with weights (ModuleSummary.weighted_registries)."""
        origin = self.index.imported_from.get(name)
        project = self.summaries.project
        if origin is None or origin[2] is None or project is None or not project.enabled:
            return False
        if not self.values.bound_only_by_imports(name, use) or self._registry_changed(name):
            return False
        return project.registry_builds_parameters(origin[0], origin[1], origin[2])

    def _registry_changed(self, name: str) -> bool:
        """Does this file read the registry `name` other than to pick an element from it
        (`MODELS["scale"] = Scale`, `MODELS.update(...)`, `M = MODELS`)?"""
        parent = self.index.parent
        for node in self.index.of_types(cst.Name):
            if node.value != name:
                continue
            above = parent.get(node)
            if type(self.index.statement_of(node)) in CST_IMPORTS:
                continue  # the import that brings it in
            if type(above) is cst.Subscript and above.value is node:
                target = parent.get(above)
                if type(target) not in (cst.AssignTarget, cst.AugAssign, cst.Del):
                    continue
            return True
        return False

    def _hands_parameters(self, argument: cst.BaseExpression, site: cst.CSTNode) -> bool:
        """Is what a call hands over a module with parameters: built there
        (`Scorer(nn.Linear(4, 2))`) or a name of one?"""
        if type(argument) is cst.Call:
            return self._built_with_parameters(argument) is True
        return dotted_name(argument) is not None and self.has_parameters(argument, site)

    def _any_with_parameters(self, elements: list[cst.CSTNode]) -> bool | None:
        """A container of these: True when one of them builds weights, False when none
        can, else None."""
        inner = {self._built_with_parameters(e) for e in elements}
        return True if True in inner else (None if None in inner else False)

    def _partial_class(self, call: cst.Call) -> cst.BaseExpression | None:
        """What a call of a name bound once to `functools.partial(Model, ...)` builds:
        `Model` (`build_compact_model = partial(WaveNet, layers=4)`, then
        `model = build_compact_model()`); None for any other call."""
        if type(call.func) is not cst.Name:
            return None
        bindings = self.values.bindings_of(call.func.value, call)
        if len(bindings) != 1 or type(bindings[0]) is not cst.Assign:
            return None
        bound = bindings[0].value
        if type(bound) is not cst.Call or self.index.qualified_name(bound.func) != PARTIAL:
            return None
        positional = positional_arguments(bound)
        return positional[0] if positional else None

    def _filled_with_parameters(self, name: str) -> bool:
        """A container filled after it is built with a layer that has weights:
        `network = nn.Sequential()` then `network.add_module('layer1', nn.Linear(4, 3))`
        (a course's way to stack layers), `self.layers.append(nn.Linear(d, d))`."""
        if self._container_fillings is None:  # asked of every name whose weights are asked
            self._container_fillings = _calls_by_receiver(
                self.index.calls, CONTAINER_FILLING_METHODS, dotted_name
            )
        for call in self._container_fillings.get(name, ()):
            for arg in call.args:
                added = arg.value
                elements = (
                    [e.value for e in added.elements]
                    if isinstance(added, (cst.List, cst.Tuple))
                    else [added]
                )
                if any(self._built_with_parameters(e) is True for e in elements):
                    return True
        return False

    def _factory_builds_parameters(self, call: cst.Call) -> bool | None:
        """A call of this file's function whose every return hands back a module with
        parameters (`def densenet_cifar(): return DenseNet(...)`, `def load_model(path):
        model = Net(); model.load_state_dict(...); return model`)."""
        verdicts = self._ask_factory(
            call,
            lambda returns: {
                self._returned_with_parameters(value, statement) for statement, value in returns
            },
        )
        return True if verdicts == {True} else None

    def _returned_with_parameters(self, value: cst.CSTNode, statement: cst.Return) -> bool | None:
        """What a factory's `return` hands back: a module built there (`return
        Net()`), or a name bound to one in the factory (`model = Net(); ...; return
        model.to(device)`)."""
        verdict = self._built_with_parameters(value)
        if verdict is None and isinstance(built_module_call(value), (cst.Name, cst.Attribute)):
            return True if self.has_parameters(built_module_call(value), statement) else None
        return verdict

    def _parameters_asked_for(self, name: str, use: cst.CSTNode) -> bool:
        """`name.parameters()` / `.named_parameters()` on the same variable, or its
        gradients cleared with `name.zero_grad()` (something called like a model and
        whose gradients are cleared is a module with parameters; an optimizer is never
        called): for `self.x`, in the class, its bases or its subclasses of this file
        (CalleeResolver.family), else where the same bindings of the name reach."""
        if self._parameter_owners is None:
            self._parameter_owners = _calls_by_receiver(
                self.index.calls, PARAMETER_EVIDENCE_METHODS, module_path
            )
        calls = self._parameter_owners.get(name)
        if not calls:
            return False
        if name.startswith("self."):
            cls = self.index.class_around(use)
            return cls is not None and any(
                self.index.is_inside(c, related)
                for related in self.summaries.callees.family(cls)
                for c in calls
            )
        head = path_root(name)
        bindings = set(self.values.bindings_of(head, use))
        return any(set(self.values.bindings_of(head, c)) == bindings for c in calls)

    def _results_detached(self, name: str, use: cst.CSTNode) -> bool:
        """A result of calling `name` is detached where it is read (`q_v =
        self.dqn_model(states)`, then `q_v.data.cpu().numpy()`; `net(x).detach()`): the
        code drops a graph it knows the call builds, so what is called computes with
        weights that require grad. For a model an object is handed and keeps in `self`
        (an agent's network) whose class is out of sight; the calls that show it are
        those of the same class. Not a function's parameter: it may be any callable, one
        that differentiates inside and detaches what it returns (a Langevin sampler, a
        score function); its callers say what it is (_passed_by_callers)."""
        if not name.startswith("self."):
            return False
        cls = self.index.class_around(use)
        if cls is None:
            return False
        # handed in: every binding of the attribute is a parameter of its method
        # (`self.model = model`); one built here (`self.BCEobj = FocalLoss(BCEobj)`, a
        # loss whose output is detached for a log line) says what it is by its building
        # (the class's own: another class's `self.model = model` is another object's)
        bindings = self.values.bindings.own_attribute_bindings(cls, "self." + name.split(".")[1])
        if not bindings or not all(
            type(b.value) is cst.Name
            and any(type(p) is cst.Param for p in self.values.bindings_of(b.value.value, b.node))
            for b in bindings
        ):
            return False
        if self._self_calls is None:
            calls: dict[str, list[cst.Call]] = {}
            for call in self.index.calls:
                callee = module_path(call.func)
                if callee is not None and callee.startswith("self."):
                    calls.setdefault(callee, []).append(call)
            self._self_calls = calls
        return any(
            self.index.is_inside(c, cls) and self._result_detached(c)
            for c in self._self_calls.get(name, ())
        )

    def _result_detached(self, call: cst.Call) -> bool:
        """`f(x).detach()`, `f(x).data`, or `y = f(x)` (`y, v = f(x)`) with a read of a
        bound name that is one of them."""
        index = self.index
        parent = index.parent.get(call)
        if type(parent) is cst.Attribute and parent.value is call:
            return parent.attr.value in _DETACHING
        if type(parent) is not cst.Assign or len(parent.targets) != 1:
            return False
        target = parent.targets[0].target
        if isinstance(target, (cst.Tuple, cst.List)):
            names = [e.value for e in target.elements if type(e) is cst.Element]
        else:
            names = [target]
        for name in names:
            if type(name) is not cst.Name:
                continue
            for read in self.values.uses_reached(parent, name.value):
                holder = index.parent.get(read)
                if (
                    type(holder) is cst.Attribute
                    and holder.value is read
                    and holder.attr.value in _DETACHING
                ):
                    return True
        return False

    def is_frozen(
        self, model: str, use: cst.CSTNode, *, whole: bool = False, scoped: bool = False
    ) -> bool:
        """Are (some of) the model's parameters switched off where `use` runs:
        `model.requires_grad_(False)`, or `p.requires_grad = False` in a loop over
        `model.parameters()`? A frozen model on inputs without history records nothing.
        Names are compared as written, so a switch on a submodule counts too; with
        `whole`, only a switch of the model itself or of a module holding it does (a
        frozen backbone leaves the head recording). With `scoped`, the name is read as
        the variable it is where it is used: a local of the use's function only by the
        switches in that function, a global not by a switch on a local namesake of
        another function (`ema = copy.deepcopy(net).requires_grad_(False)` in `train()`
        is not the module's `ema`). Without it, a switch anywhere counts, as it does for
        a model handed from a caller that froze it to the helper that runs it.

        The switches are read in order where they sit in the use's own function: a GAN
        freezes its critic for the generator's step and unfreezes it for its own, and a
        forward after the unfreeze records. A freeze elsewhere (another function, a
        caller) counts wherever the model is used."""
        if self._frozen is None:
            self._frozen = self._collect_frozen()
        root = model.split(".")[0]
        # `self.features` of one class is not the namesake of another: only its own
        # class, its bases and its subclasses switch it
        cls = self.index.class_around(use) if root == "self" else None
        classes = self._related_classes(cls) if cls is not None else ()
        scope = self.index.scope_of(use)
        # a parameter of the use's function holds what its callers hand it
        handed_to = (
            scope
            if scoped
            and root != "self"
            and type(scope) is cst.FunctionDef
            and any(p.name.value == root for p in all_params(scope.params))
            else None
        )
        # a module the use's function builds itself is another object than what a
        # namesake local of another function holds: `m = Net()` in two unit tests, one
        # of which freezes its own (not `m = self.model` or `m = net` in both)
        own_local = (
            root == model and type(scope) is cst.FunctionDef and self._built_here(root, scope)
        )
        switches = [
            (at, off)
            for owner, at, off in self._frozen
            if (owner == model or (not whole and _holds(model, owner)) or _holds(owner, model))
            and (cls is None or any(self.index.is_inside(at, c) for c in classes))
            and not (
                self._switched_by_no_caller(at, handed_to)
                if handed_to is not None
                else (scoped or own_local) and self._local_elsewhere(owner, at, scope)
            )
        ]
        if not any(off for _, off in switches):
            if switches:
                return False  # switched on in sight (`teacher.requires_grad_(True)`)
            return self._frozen_by_its_factory(model, use) or self._frozen_by_its_class(model, use)
        here = {at: off for at, off in switches if self.index.scope_of(at) is scope}
        if here:
            reaching = self.index.reaching(list(here), use)
            if reaching:
                return any(here[at] for at in reaching)
        if scoped and type(scope) is cst.FunctionDef and handed_to is None:
            return root == "self" or not self.tensors.bindings.binds(scope, root)
        return True

    def _frozen_by_its_factory(self, model: str, use: cst.CSTNode) -> bool:
        """`self.model = self._load_model()` (or `model = load_frozen(path)`), a function
        of this file each of whose returns hands back a model it froze there (`for p in
        model.parameters(): p.requires_grad = False`, then `return model`)."""
        assert self._frozen is not None
        if not any(off for _, _, off in self._frozen):
            return False  # nothing in the file freezes anything: no factory did either
        try:
            expr = cst.parse_expression(model)
        except cst.ParserSyntaxError:
            return False
        values = self.tensors.module_constructors(expr, self._binding_site(model, use))
        if not values or any(type(built_module_call(v)) is not cst.Call for v in values):
            return False

        def all_frozen(returns: list[tuple[cst.Return, cst.BaseExpression]]) -> bool:
            return bool(returns) and all(
                (name := dotted_name(built_module_call(returned))) is not None
                and self.is_frozen(name, statement, scoped=True)
                for statement, returned in returns
            )

        return all(
            self._ask_factory(cast(cst.Call, built_module_call(value)), all_frozen) is True
            for value in values
        )

    def _frozen_by_its_class(self, model: str, use: cst.CSTNode) -> bool:
        """`self.rnd.target(x)` where `self.rnd = RNDModel(...)` is an instance of a
        class, of this file or another of the project, whose `__init__` switches off
        the parameters of its `target` (or of the whole instance) for good
        (ModuleSummary.frozen_attributes): RND's random target network. Where `use`
        calls a submodule of the model (`self.rnd.target(x)` as a forward of
        `self.rnd`), that submodule is what runs. A model named alone is such an
        instance itself, built here or handed by every caller (`model =
        InceptionV3([3])`, then `get_activations(files, model)`), frozen whole; and a
        class that freezes unless it is handed a flag (`requires_grad=False` by
        default) freezes every instance built without it."""
        called = module_path(use.func) if type(use) is cst.Call else None
        if called is not None and called.startswith(model + "."):
            model = called
        holder, _, attribute = model.rpartition(".")
        if not holder:
            holder, attribute = model, ""  # the instance itself
        built_calls = self._instance_constructions(holder, use)
        if not built_calls:
            return False
        for built in built_calls:
            if type(built) is not cst.Call or type(built.func) is not cst.Name:
                return False
            frozen = self._class_freezes(built.func.value)
            if frozen is None:
                return False
            always, unless_given = frozen
            if attribute in always or "" in always:
                continue
            if not attribute and self._every_layer_frozen(built.func.value, always):
                continue
            given = unless_given.get(attribute) or unless_given.get("")
            if given is None or self._hands_argument(built, *given):
                return False
        return True

    def _every_layer_frozen(self, name: str, always: frozenset[str]) -> bool:
        """Does the class `name` of this file freeze for good every layer it keeps
        (`self.features = vgg16().features.eval()`, then `for p in
        self.features.parameters(): p.requires_grad = False`), one at least, so that an
        instance of it holds no parameter that requires grad? Not when it keeps
        something built by a call it cannot read (a layer of unknown weights)."""
        own = [c for c in self.index.classes if c.name.value == name]
        if len(own) != 1 or not always:
            return False
        layers: set[str] = set()
        for attribute, bindings in self.tensors.bindings.attributes_of(own[0]).items():
            for binding in bindings:
                if binding.kind is not BindingKind.ASSIGN or binding.value is None:
                    continue
                built = built_module_call(binding.value)
                if type(built) is not cst.Call:
                    continue
                qualified = self.index.qualified_name(built.func) or ""
                if self.tensors._is_module_constructor(qualified) or any(
                    c.name.value == qualified for c in self.index.classes
                ):
                    layers.add(attribute[5:])
                elif not qualified.startswith(LAYERLESS_VALUE_MODULES):
                    return False  # a value of a call out of sight: it may hold weights
        return bool(layers) and layers <= always

    def _instance_constructions(
        self, holder: str, use: cst.CSTNode, hops: int = _CALLER_HOPS
    ) -> list[cst.CSTNode]:
        """What builds the instance `holder` names at `use`: its own bindings, or, for a
        parameter of the function around `use` bound nowhere in it, what every caller
        of this file hands it (built at the call, or bound to a name there, or handed
        on from the caller's own callers, `hops` deep)."""
        try:
            expr = cst.parse_expression(holder)
        except cst.ParserSyntaxError:
            return []
        built = self._constructions(holder, expr, use)
        if built or "." in holder:
            return built
        func = self.index.scope_of(use)
        if type(func) is not cst.FunctionDef or all(
            p.name.value != holder for p in all_params(func.params)
        ):
            return []
        found: list[cst.CSTNode] = []
        for argument in self.caller_arguments.here(func, holder):
            passed = argument.passed
            if type(passed) is cst.Call:
                found.append(built_module_call(passed))
            elif type(passed) is cst.Name and hops:
                handed = self._instance_constructions(passed.value, argument.site, hops - 1)
                if not handed:
                    return []
                found.extend(handed)
            else:
                return []
        return found

    def _class_freezes(self, name: str) -> tuple[frozenset[str], dict[str, tuple[str, int]]] | None:
        """(attributes frozen for good, attributes frozen unless a parameter is given)
        of the class `name` names here, of this file or imported from the project's;
        None when it is neither."""
        origin = self.index.imported_from.get(name)
        if origin is not None and origin[2] is not None:
            project = self.summaries.project
            if project is None or not project.enabled:
                return None
            return (
                project.frozen_attributes(origin[0], origin[1], origin[2]),
                project.frozen_unless_given(origin[0], origin[1], origin[2]),
            )
        own = [c for c in self.index.classes if c.name.value == name]
        if len(own) != 1:
            return None
        # cheapest first: read only a class with a switch of the file's (_collect_frozen
        # reads anything but a written-out True as off, a parameter's value included)
        if self._frozen is None:
            self._frozen = self._collect_frozen()
        if not any(off and self.index.is_inside(at, own[0]) for _, at, off in self._frozen):
            return None
        return freezes_of_class_source(self.index.module.code_for_node(own[0]))

    @staticmethod
    def _hands_argument(built: cst.Call, parameter: str, position: int) -> bool:
        """Does the construction fill `__init__`'s `parameter` (at `position` after
        `self`) with anything but a written-out False?"""
        if any(arg.star for arg in built.args):
            return True  # `Net(*args, **kwargs)`: it may
        given = library_argument(built, parameter, position if position >= 0 else None)
        return given is not None and not is_false(given.value)

    def _related_classes(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        """The class, the classes of this file it inherits from, and its subclasses."""
        callees = self.summaries.callees
        lineage = [c for c in callees.lineage(cls) if type(c) is cst.ClassDef]
        return [*lineage, *callees.subclasses(cls)]

    def _switched_by_no_caller(self, at: cst.CSTNode, function: cst.FunctionDef) -> bool:
        """Is the switch at `at` outside `function` and outside every scope that calls
        it? A parameter of the function holds what its callers hand it: a model one
        of them froze (`ema = copy.deepcopy(model)`, frozen, then `ema_step(ema,
        model)`), not a namesake switched where the function is never called."""
        switched_in = self.index.scope_of(at)
        if switched_in is function:
            return False
        return not any(
            self.summaries.resolve(call) is function
            for call in self.index.of_types_in(
                switched_in.body if type(switched_in) is cst.FunctionDef else switched_in,
                cst.Call,
                into_functions=False,
            )
        )

    def _built_here(self, name: str, scope: cst.FunctionDef) -> bool:
        """Is every binding of the plain name `name` in the function an assignment of a
        module built there (`m = nn.Conv2d(3, 8, 1)`, `model = CModel(cfg)`), not an
        alias of one that lives on (`m = self.model`, `m = get_model()`, a parameter, a
        loop's element)? (_constructs_a_module)"""
        if name in ("self", "cls"):
            return False
        records = self.tensors.bindings.records(scope, frozenset(BindingKind)).get(name)
        if not records:
            return False
        for record in records:
            binding = record.node
            if not (
                type(binding) is cst.Assign
                and len(binding.targets) == 1
                and type(binding.targets[0].target) is cst.Name
            ):
                return False
            if not self._constructs_a_module(built_module_call(binding.value)):
                return False
        return True

    def _constructs_a_module(self, value: cst.CSTNode) -> bool:
        """Does `value` make a new module object: a torch.nn class, a module class of
        this file or imported from the project, or a deep copy (not a function that may
        hand back one that lives on, `get_model()`)?"""
        if type(value) is not cst.Call:
            return False
        qualified = self.index.qualified_name(value.func) or ""
        return (
            qualified.startswith("torch.nn.")
            or qualified in DEEP_COPYING_FUNCTIONS
            or ("." not in qualified and qualified in self.tensors.local_module_classes())
            or self.summaries.builds_imported_module(value)
            or self.summaries.builds_imported_container(value)
        )

    def _local_elsewhere(self, owner: str, at: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """Is the switch at `at` on a local name of another function (`ema =
        copy.deepcopy(net).requires_grad_(False)` inside `train()`): another object
        than a namesake where the model is used?"""
        switched_in = self.index.scope_of(at)
        if switched_in is scope or type(switched_in) is not cst.FunctionDef:
            return False
        root = owner.split(".")[0]
        return root != "self" and self.tensors.bindings.binds(switched_in, root)

    def _collect_frozen(self) -> list[tuple[str, cst.CSTNode, bool]]:
        """(owner, switch, turns requires_grad off) for every switch of a module's
        parameters in the file, on or off: `model.requires_grad_(False)` (also on what
        a name is bound to through a chain, `copy.deepcopy(net).requires_grad_(False)
        .eval()`), a switch of each element of a loop over `model.parameters()` (of
        its own argument of a `zip`, MoCo's key encoder), and a helper's loop.
        Anything but a written-out `True` is read as off."""
        found: list[tuple[str, cst.CSTNode, bool]] = []
        loops: dict[tuple[str, cst.CSTNode], set[bool]] = {}
        for node in self.index.of_types(cst.Call, cst.Assign):
            if type(node) is cst.Call:
                # `freeze_params(vae.parameters())` of a helper that switches each one
                for held, switched_off in self._parameters_switched_by_helper(node):
                    found.append((held, node, switched_off))
                # `toggle_grad(critic, False)` of a helper that loops over its model
                toggled = self.tensors.model_switched_by_helper(node)
                if toggled is not None:
                    found.append((toggled[0], node, not toggled[1]))
                # `utils.freeze_model(self.model_old)` of another file's helper
                for held in self._frozen_by_an_imported_helper(node):
                    found.append((held, node, True))
            switch = requires_grad_switch(node)
            if switch is None:
                continue
            elements = self._parameter_loop_of(switch.receiver, node)
            if elements:
                for held, iterable, loop in elements:
                    if not self._per_parameter(node, loop, set(bound_names(loop))):
                        loops.setdefault((held, iterable), set()).add(switch.on is True)
                continue
            if type(node) is cst.Call and node.func.attr.value == REQUIRES_GRAD_METHOD:  # type: ignore[attr-defined]
                owner = module_path(switch.receiver) or self._bound_through_chain(node)
                if owner is not None:
                    found.append((owner, node, switch.on is not True))
        # the loop's header stands for its switches: reached like any statement
        found.extend((owner, at, False in on) for (owner, at), on in loops.items())
        return found

    def _frozen_by_an_imported_helper(self, call: cst.Call) -> list[str]:
        """The modules a call of another project file's function freezes whole
        (ExternalFunction.frozen_params): `utils.freeze_model(self.model_old)`."""
        head = (dotted_name(call.func) or "").partition(".")[0]
        origin = self.index.imported_from.get(head)
        project = self.summaries.project
        if (
            origin is None
            or project is None
            or not project.enabled
            or not project.module_text_has(origin[0], origin[1], ("requires_grad",))
        ):
            return []  # no text of the module it comes from switches a parameter
        external = self.summaries.resolve_external(call)
        if external is None or not external.frozen_params:
            return []
        found = []
        for param in external.frozen_params:
            argument = self.summaries.external_argument(call, external, param)
            name = module_path(argument) if argument is not None else None
            if name is not None:
                found.append(name)
        return found

    def _parameter_loop_of(
        self, receiver: cst.BaseExpression, node: cst.CSTNode
    ) -> list[tuple[str, cst.CSTNode, cst.For]]:
        """(the module, the `X.parameters()` iterable, the loop) for each module whose
        parameters the loop around `node` hands the name `receiver`: one, or each of
        several walked in turn (`list(G.parameters()) + list(D.parameters())`,
        `itertools.chain(G.parameters(), D.parameters())`). Empty when any part of
        what the loop walks is something else."""
        if type(receiver) is not cst.Name:
            return []
        iterable = self.index.loop_element_source(receiver.value, node)
        if iterable is None:
            return []
        loop = next((a for a in self.index.ancestors(iterable) if type(a) is cst.For), None)
        found: list[tuple[str, cst.CSTNode, cst.For]] = []
        for part in self.index.walked_in_turn(iterable):
            if not (
                type(part) is cst.Call
                and type(part.func) is cst.Attribute
                and part.func.attr.value in PARAMETER_ITERATORS
            ):
                return []
            owner = module_path(part.func.value)
            if owner is None or loop is None:
                return []
            found.append((owner, part, loop))
        return found

    def _bound_through_chain(self, call: cst.Call) -> str | None:
        """The name `call`'s module is bound to through the module methods that return
        it: `ema` of `ema = copy.deepcopy(net).requires_grad_(False).eval()` (or of an
        annotated assignment)."""
        index = self.index
        node: cst.CSTNode = call
        while True:
            parent = index.parent.get(node)
            if type(parent) is cst.Attribute and parent.value is node:
                outer = index.parent.get(parent)
                if (
                    type(outer) is cst.Call
                    and outer.func is parent
                    and parent.attr.value in MODULE_WRAPPING_METHODS
                ):
                    node = outer
                    continue
                return None
            if type(parent) is cst.Assign and len(parent.targets) == 1:
                return module_path(parent.targets[0].target)
            if type(parent) is cst.AnnAssign and parent.value is node:
                return module_path(parent.target)
            return None

    def _parameters_switched_by_helper(self, call: cst.Call) -> list[tuple[str, bool]]:
        """(owner, turns requires_grad off) for each `X.parameters()` the call hands a
        function of this file that loops over that parameter switching each element
        (`def freeze_params(params): for p in params: p.requires_grad = False`)."""
        handed = [
            a.value
            for a in call.args
            if type(a.value) is cst.Call
            and type(a.value.func) is cst.Attribute
            and a.value.func.attr.value in PARAMETER_ITERATORS
        ]
        if not handed:
            return []
        helper = self.summaries.resolve(call)
        if helper is None:
            return []
        summary = self.summaries.of(helper)
        found: list[tuple[str, bool]] = []
        for loop in self.index.walk(helper.body):
            if type(loop) is not cst.For or type(loop.iter) is not cst.Name:
                continue
            argument = summary.forwarded_argument(call, loop.iter.value)
            if argument is None or all(argument is not h for h in handed):
                continue
            owner = module_path(argument.func.value)  # type: ignore[attr-defined]
            switches = self._loop_switches(loop)
            if owner is not None and switches:
                found.append((owner, False in switches))
        return found

    def _loop_switches(self, loop: cst.For) -> set[bool]:
        """What the `requires_grad` switches in a loop over parameters set each element
        to (True, False or both), leaving out those that switch only some of them."""
        names = set(bound_names(loop))
        return {
            switch.on is True
            for inner in self.index.walk(loop.body)
            if (switch := requires_grad_switch(inner)) is not None
            and not self._per_parameter(inner, loop, names)
        }

    def _per_parameter(self, switch: cst.CSTNode, loop: cst.For, names: set[str]) -> bool:
        """Is the switch under an `if` of the loop that tests the parameter or its name
        (`if not n.startswith('last'): p.requires_grad = False`)? It freezes some of the
        model's parameters, and the forward still records through the others."""
        for anc in self.index.ancestors(switch):
            if anc is loop:
                return False
            if type(anc) is cst.If and self.flow.reads(anc.test, graph_only=False) & names:
                return True
        return False

    # -- modules whose forward differentiates -----------------------------------------

    def differentiating_classes(self) -> set[str]:
        """Local module classes whose `forward` calls backward / autograd.grad / a
        differentiable optimizer step."""
        if self._differentiating_classes is None:
            found: set[str] = set()
            training_only: set[str] = set()
            for cls in self.index.classes:
                forward = forward_method(cls)
                if forward is not None and self.differentiates(forward):
                    found.add(cls.name.value)
                    if self._differentiates_only_in_training(forward, frozenset()):
                        training_only.add(cls.name.value)
            self._differentiating_classes = found
            self._differentiating_only_in_training = training_only
        return self._differentiating_classes

    def _differentiates_only_in_training(self, func: cst.FunctionDef, seen: frozenset) -> bool:
        """Does every differentiation the function runs, itself or through the functions
        of this file it calls, sit on a branch a module takes only in training mode (a
        trainer module's `if self.training: loss.backward()`)? In eval mode its
        forward then builds a graph that nothing uses."""
        index = self.index
        for node in index.of_types_in(func, cst.Call, into_functions=False):
            if self.autograd.event(node) is not None:
                if not index.runs_only_in_mode(node, training=True):
                    return False
                continue
            callee = self.summaries.resolve(node)
            if (
                callee is not None
                and callee not in seen
                and self.differentiates(callee)
                and not index.runs_only_in_mode(node, training=True)
                and not self._differentiates_only_in_training(callee, seen | {func})
            ):
                return False
        return True

    def differentiates(self, func: cst.FunctionDef, seen: frozenset = frozenset()) -> bool:
        """Does the function differentiate, itself or through the functions of this file
        it calls (MAML++'s forward calls an inner-loop update that calls autograd.grad)?"""
        if func in seen:
            return False
        if not seen:
            # asked of every forward's function (graph_is_used): the answer from the top
            found = self._differentiates.get(func)
            if found is None:
                found = self._differentiates[func] = self._compute_differentiates(func, seen)
            return found
        return self._compute_differentiates(func, seen)

    def _compute_differentiates(self, func: cst.FunctionDef, seen: frozenset) -> bool:
        if self.summaries.of(func).differentiates:
            return True
        for node in self.index.walk(func.body):
            if type(node) is cst.Call:
                callee = self.summaries.resolve(node)
                if callee is not None:
                    if self.differentiates(callee, seen | {func}):
                        return True
                elif self.reach.differentiated_elsewhere(node):
                    # a PINN's `gradients(u, x)` from the project's utils, handed what it
                    # differentiates (a training step of its own losses is not asked about)
                    return True
        return False

    def _forward_differentiates(
        self, model: str, use: cst.CSTNode, in_eval_mode: bool = False
    ) -> bool:
        classes = self.differentiating_classes()
        if in_eval_mode:
            # a trainer module's `if self.training: loss.backward()` does not run
            classes = classes - self._differentiating_only_in_training
        expr = cst.parse_expression(model)
        # a class of another project file whose forward differentiates (an inner
        # adaptation loop: meta-transfer-learning's `self.model = MtlLearner(args)`,
        # moved by `self.model = self.model.cuda()`)
        for value in self.tensors.module_constructors(expr, use):
            built = built_module_call(value)
            if type(built) is cst.Call and type(built.func) is cst.Name:
                name = built.func.value
                if name not in classes and self._imported_forward_differentiates(
                    name, in_eval_mode
                ):
                    return True
        cls = self.tensors.module_class(expr, use)
        # a class out of sight: none found, or a name that is no class of this file or
        # of torch (`models.load(ckpt)`, a registry's maker)
        out_of_sight = cls is None or (
            cls.split(".", 1)[0] != "torch"
            and all(c.name.value != cls.rsplit(".", 1)[-1] for c in self.index.classes)
            and not self._imported_forward_known(cls)
        )
        if (
            out_of_sight
            and type(use) is cst.Call
            and module_path(use.func) in (model, f"{model}.forward")
            and self._project_forward_admits(use)
        ):
            return True
        if not classes:
            return False
        if cls is not None:
            return cls.rsplit(".", 1)[-1] in classes
        # The model's class is out of sight (a parameter, an attribute): in a file whose
        # own models differentiate inside forward, do not guess that this one does not.
        return True

    def _project_forward_admits(self, call: cst.Call) -> bool:
        """A model of a class out of sight (`model = models.load(ckpt)`, built by a
        registry) called the way a `forward` of the project that differentiates takes
        its arguments: MAML's `model(x_shot, x_query, y_shot, inner_args,
        meta_train=False)` adapts inside its forward, so its graph is used. Only a call
        that names an argument the forward declares says which forward runs: `model(x,
        h)` fits too many."""
        project = self.summaries.project
        args = shape_of(call)
        keywords = {k for k, _ in args if k is not None}
        if project is None or not keywords:
            return False
        for forward in project.methods_named("forward") or ():
            signature = forward.signature
            if not forward.differentiates or not signature.admits(args, receiver_passed=True):
                continue
            if not keywords <= set(signature.positional) | set(signature.keyword_only):
                continue  # fits only through `**kwargs`
            required = [p for p in signature.positional[1:] if p not in signature.defaulted]
            if all(signature.bind(args, p, receiver_passed=True) is not None for p in required):
                return True
        return False

    def _imported_forward_known(self, name: str) -> bool:
        """Is `name` a class imported from a project file that defines its `forward`?"""
        origin = self.index.imported_from.get(name)
        project = self.summaries.project
        if origin is None or project is None:
            return False
        module, level, original = origin
        return project.function(module, level, f"{original or name}.forward") is not None

    def _imported_forward_differentiates(self, name: str, in_eval_mode: bool = False) -> bool:
        """Is `name` a class imported from a project file whose `forward` differentiates,
        itself or through the methods and functions it calls (in eval mode, not only
        under `if self.training:`)?"""
        origin = self.index.imported_from.get(name)
        project = self.summaries.project
        if origin is None or project is None:
            return False
        module, level, original = origin
        forward = project.function(module, level, f"{original or name}.forward")
        return (
            forward is not None
            and forward.differentiates
            and not (in_eval_mode and forward.trains_only)
        )


def _mode_switched(cls: cst.ClassDef) -> set[str]:
    """The attributes a class's own `train` or `eval` method switches: `self.actor` of
    `def train(self, training=True): self.actor.train(training)`."""
    found: set[str] = set()
    for method in cls.body.body:
        if type(method) is not cst.FunctionDef or method.name.value not in MODULE_MODE_METHODS:
            continue
        for statement in method.body.body:
            if type(statement) is not cst.SimpleStatementLine:
                continue
            for small in statement.body:
                call = small.value if type(small) is cst.Expr else None
                if type(call) is not cst.Call or type(call.func) is not cst.Attribute:
                    continue
                if call.func.attr.value not in MODULE_MODE_METHODS:
                    continue
                target = dotted_name(call.func.value)
                if target is not None and target.startswith("self.") and target.count(".") == 1:
                    found.add(target[5:])
    return found


def _holds(owner: str, path: str) -> bool:
    """Is the module at `path` inside the one at `owner` (`net.enc`, `nets[0]`)? An
    owner `nets[]` (every element of `nets`, as a loop over them switches them) holds
    each element by a constant key (`nets[0]`, `nets['G'].enc`)."""
    if owner.endswith("[]"):
        container = owner[:-2]
        if not path.startswith(container + "["):
            return False
        key = element_key_length(path[len(container) :])
        if key is None:
            return False
        rest = path[len(container) + key :]
        return rest == "" or rest[0] in (".", "[")
    return path.startswith(owner) and path[len(owner) : len(owner) + 1] in (".", "[")


def _owning_module(path: str | None, modules: Set[str]) -> str | None:
    """The module of `modules` that `path` is, or is inside (`vae` for `vae.encoder`);
    else the path itself."""
    if path is None or path in modules:
        return path
    owner = next((owner for owner in sorted(modules) if _holds(owner, path)), None)
    if owner is None:
        return path
    if owner.endswith("[]"):
        # every element is switched: the one picked here (`nets[0]` of `nets[0].enc`)
        container = owner[:-2]
        picked = path[len(container) :]
        return container + picked[: element_key_length(picked)]
    return owner


def _calls_by_receiver(
    calls: list[cst.Call],
    methods: Set[str],
    receiver_key: Callable[[cst.CSTNode | None], str | None],
) -> dict[str, list[cst.Call]]:
    """The calls `receiver.<method>(...)` of one of `methods`, by `receiver_key` of the
    receiver (dotted_name or module_path), in source order."""
    found: dict[str, list[cst.Call]] = {}
    for call in calls:
        func = call.func
        if type(func) is cst.Attribute and func.attr.value in methods:
            receiver = receiver_key(func.value)
            if receiver is not None:
                found.setdefault(receiver, []).append(call)
    return found
