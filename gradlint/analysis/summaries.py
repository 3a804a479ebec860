"""What a function does to autograd, summarised once so that a call site can be judged
without re-reading the body: which of its parameters it runs a forward of, whether it
differentiates, whether it accumulates into `.grad`, steps, or clears gradients, and the
callee a call resolves to.

A call resolves to a function of the same file (a module-level or nested function by
name, a method through `self.`/`cls.`) or, through the file's imports, to a function of
another of the project's files (`resolve_external`, summarised by analysis.project).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Set
from dataclasses import dataclass, field

import libcst as cst

from gradlint.analysis.arguments import (
    Signature,
    argument_of,
    passes_receiver,
    shape_of,
    signature_of,
)
from gradlint.analysis.autograd_calls import AutogradCalls
from gradlint.analysis.bindings import (
    ASSIGNMENTS,
    PYTHON_BINDINGS,
    BindingKind,
    ScopeBindings,
    all_params,
)
from gradlint.analysis.callees import CalleeResolver
from gradlint.analysis.caller_arguments import ArgumentHere, CallerArguments
from gradlint.analysis.grad_clears import CLEAR_TYPES, UPDATE_TYPES, GradClear, GradClearing
from gradlint.analysis.index import FileIndex, dotted_name
from gradlint.analysis.project import ExternalFunction, ProjectIndex
from gradlint.analysis.summary_facts import (
    ACCUMULATING_METHODS,
    accumulated_parameter,
    forwarded_parameter,
    receiver_attribute_called,
)
from gradlint.analysis.tensors import built_module_call
from gradlint.analysis.torch_api import (
    AUTOGRAD_FUNCTION_CLASSES,
    AUTOGRAD_FUNCTION_RUN,
    COMMON_TENSOR_METHODS,
    NOT_FORWARD_METHODS,
    OPTIMIZER_METHODS,
    PYTHON_OBJECT_METHODS,
    is_torch_module_base,
)

# Names of a container's methods that an agent's training step commonly has too
_AGENT_METHODS = frozenset({"update"})

_BUILTIN_NAMES = frozenset(dir(builtins))


_PLAIN_ASSIGNMENTS = frozenset({BindingKind.ASSIGN})
# How far back through callers a parameter's class is looked for: `train(net)` called
# with the `net = Net()` its caller built, or handed on once more.
_CALLER_HOPS = 2


@dataclass
class FunctionSummary:
    function: cst.FunctionDef
    params: list[str] = field(default_factory=list)
    signature: Signature = field(default_factory=Signature)
    # Parameters the body calls (`model(x)`, `model.forward(x)`), in source order: forwards
    # of arguments.
    forwards: dict[str, list[cst.Call]] = field(default_factory=dict)
    # In a method, the object's own attributes the body calls (`self.network(x)`,
    # `self.network.forward(x)`), by path: forwards of what the caller's receiver holds
    # (`agent.sample(s)` runs `agent.network`'s).
    receiver_forwards: dict[str, list[cst.Call]] = field(default_factory=dict)
    # backward / autograd.grad / an optimizer step somewhere in the body.
    differentiates: bool = False
    # Parameters the body adds to the object's own state as they are (`self.sum += val`,
    # `self.values.append(val)`): a tracker's update method.
    accumulated_params: set[str] = field(default_factory=set)
    # In the body itself (nested defs excluded): the backward calls, which add into
    # `.grad`; the optimizer steps (differentiable ones excluded) and manual updates
    # from `.grad`; the gradient clears; and the calls that resolve to this file's
    # functions, with their callee.
    backwards: list[cst.Call] = field(default_factory=list)
    updates: list[cst.CSTNode] = field(default_factory=list)
    clears: list[GradClear] = field(default_factory=list)
    calls: list[tuple[cst.Call, cst.FunctionDef]] = field(default_factory=list)
    # The body, or a function of this file it calls, clears gradients (`zero_grad()`,
    # `p.grad = None`, ...): a call of it is a clear at the call site.
    clears_grads: bool = False
    # The body holds `...` as a statement: a stub, or a course exercise whose
    # `<YOUR CODE HERE>` the notebook reader masked. What it does with its parameters is
    # not written yet.
    unwritten: bool = False

    @property
    def forwarded_params(self) -> list[str]:
        """The parameters the body calls, in the order of their first forward: a finding
        that names one of several reads the same name on every run (a set's order
        changes with PYTHONHASHSEED)."""
        return list(self.forwards)

    def forwarded_argument(
        self, call: cst.Call, param: str, *, receiver_passed: bool | None = None
    ) -> cst.BaseExpression | None:
        """The argument expression a call passes for `param` (analysis.arguments)."""
        return argument_of(call, self.signature, param, receiver_passed=receiver_passed)


# ((module, level, class) a class comes from, the summary of one of its methods)
_ImportedMethod = tuple[tuple[str, int, str], ExternalFunction]


class FunctionSummaries:
    def __init__(
        self,
        index: FileIndex,
        autograd: AutogradCalls,
        callees: CalleeResolver,
        project: ProjectIndex | None = None,
        clearing: GradClearing | None = None,
        *,
        bindings: ScopeBindings,
        caller_arguments: CallerArguments,
    ) -> None:
        self.index = index
        self.bindings = bindings
        self.autograd = autograd
        self.callees = callees
        self.project = project
        self.caller_arguments = caller_arguments
        self.clearing = clearing if clearing is not None else GradClearing(index)
        self._summaries: dict[cst.FunctionDef, FunctionSummary] = {}
        self._autograd_function_names: frozenset[str] | None = None  # _autograd_functions
        self._apply_named: bool | None = None  # _names_apply
        # id(call) -> (call, imported_method_of_instance's answer): asked of a call by
        # the value, forward and loop questions alike
        self._imported_methods: dict[int, tuple[cst.Call, _ImportedMethod | None]] = {}
        self._in_progress: set[cst.FunctionDef] = set()
        self._bound_here: set[str] | None = None

    def of(self, func: cst.FunctionDef) -> FunctionSummary:
        found = self._summaries.get(func)
        if found is None:
            self._in_progress.add(func)
            try:
                found = self._summarise(func)
            finally:
                self._in_progress.discard(func)
            self._summaries[func] = found
        return found

    def _summarise(self, func: cst.FunctionDef) -> FunctionSummary:
        params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
        params += [p.name.value for p in func.params.kwonly_params]
        owner = self.index.enclosing_class(func)
        method = owner is not None
        summary = FunctionSummary(func, params, signature_of(func, method=method))
        own_methods = (
            self.callees.method_names(owner)
            if owner is not None and params[:1] == ["self"]
            else None
        )
        candidates = set(params)
        kept: set[str] | None = None  # of them, those never rebound: asked when needed
        clearing = self.clearing
        # manual `.grad` updates go after the optimizer steps, as a walk of their own
        # would put them; one walk finds both
        manual_updates: list[cst.CSTNode] = []
        for node in self.index.walk(func.body):
            kind = type(node)
            if kind in CLEAR_TYPES:
                clear = clearing.clear_at(node)
                if clear is not None:
                    summary.clears.append(clear)
                elif kind in UPDATE_TYPES and clearing.update_at(node) is not None:
                    manual_updates.append(node)
            if kind is cst.Expr and type(node.value) is cst.Ellipsis:
                summary.unwritten = True
            if kind is cst.AugAssign or kind is cst.Call:
                if kept is None:
                    # a parameter the body rebinds (`v = v.data.sum()`) is no longer
                    # what the caller passed by the time it is kept
                    rebound = self.bindings.nodes(func, ASSIGNMENTS | {BindingKind.FOR})
                    kept = candidates - set(rebound)
                accumulated = _accumulated_into_self(node, kept)
                if accumulated is not None:
                    summary.accumulated_params.add(accumulated)
                elif kind is cst.AugAssign and owner is not None:
                    # `l = F.cross_entropy(out, y)`, then `self.cum_loss += l`: a loss
                    # module that keeps a running total of what it computes
                    summary.accumulated_params.update(
                        self._computed_and_kept(func, node, candidates)
                    )
            if kind is not cst.Call:
                continue
            assert isinstance(node, cst.Call)
            callee = dotted_name(node.func)
            forwarded = forwarded_parameter(callee, candidates)
            if forwarded is not None:
                summary.forwards.setdefault(forwarded, []).append(node)
            elif own_methods is not None:
                held = receiver_attribute_called(callee, own_methods)
                if held is not None:
                    summary.receiver_forwards.setdefault(held, []).append(node)
            event = self.autograd.event(node)
            if event is not None:
                summary.differentiates = True
                if event.kind == "backward":
                    summary.backwards.append(node)
                elif event.kind == "step" and not event.keeps_graph:
                    summary.updates.append(node)
            callee_def = self.resolve(node)
            if callee_def is not None and callee_def is not func:
                summary.calls.append((node, callee_def))
        summary.updates.extend(manual_updates)
        summary.clears_grads = bool(summary.clears) or any(
            callee not in self._in_progress and self.of(callee).clears_grads
            for _, callee in summary.calls
        )
        return summary

    def function_named(self, name: str, at: cst.CSTNode) -> cst.FunctionDef | None:
        """The function `name` refers to at `at`: defined in the scope of `at` or one
        around it (the innermost wins), not a method. For closures handed on by name
        (`optimizer.step(closure)`)."""
        scopes = [self.index.scope_of(at)]
        while scopes[-1] is not self.index.module:
            scopes.append(self.index.scope_of(scopes[-1]))
        best: tuple[int, cst.FunctionDef] | None = None
        for func in self.index.functions:
            if func.name.value != name or self.index.enclosing_class(func) is not None:
                continue
            owner = self.index.scope_of(func)
            if owner not in scopes:
                continue
            depth = scopes.index(owner)
            if best is None or depth < best[0]:
                best = (depth, func)
        return best[1] if best is not None else None

    def resolve(self, call: cst.Call) -> cst.FunctionDef | None:
        """The function of this file a call runs, when it is unambiguous."""
        return self.callees.resolve(call)

    def passed_in(self, call: cst.Call) -> cst.FunctionDef | cst.Lambda | None:
        """`net(X)` where `net` is a parameter, never rebound, that every call of the
        enclosing function in this file fills with the same callable: a module-level
        function of this file (`evaluate_accuracy(test_iter, net)`, d2l's hand-written
        nets of leaf tensors), or a lambda (`net = lambda X: linreg(X, w, b)`, then
        `evaluate_loss(net, data_iter, loss)`), named directly or through a name the
        caller binds once to it (`net, loss = lambda X: ..., squared_loss`)."""
        func = call.func
        scope = self.index.scope_of(call)
        if type(func) is not cst.Name or type(scope) is not cst.FunctionDef:
            return None
        name = func.value
        summary = self.of(scope)
        if name not in summary.params:
            return None
        if len(self.bindings.records(scope, PYTHON_BINDINGS).get(name, ())) != 1:
            return None  # rebound in the function: not the callers' value throughout
        passed: set[cst.FunctionDef | cst.Lambda] = set()
        for argument in self.caller_arguments.here(scope, name):
            found = self._callable_at(argument.passed, argument.site, 0)
            if found is None:
                return None
            passed.add(found)
        return passed.pop() if len(passed) == 1 else None

    def bound_lambda(self, call: cst.Call) -> cst.Lambda | None:
        """`model(x, y)` where `model` is bound once in the call's scope to a lambda (a
        PINN's hard boundary condition, `model = lambda x, y: x * (1 - x) * net(x, y)`):
        that lambda, which runs where it is called."""
        if type(call.func) is not cst.Name:
            return None
        found = self._callable_at(call.func, call, 0)
        return found if type(found) is cst.Lambda else None

    def _callable_at(
        self, argument: cst.CSTNode | None, site: cst.Call, depth: int
    ) -> cst.FunctionDef | cst.Lambda | None:
        """The lambda or module-level function an argument is: written there, the one
        value of the name it reads in the caller's scope, or a function of that name."""
        if type(argument) is cst.Lambda:
            return argument
        if type(argument) is not cst.Name or depth > 1:
            return None
        bound = self.bindings.records(self.index.scope_of(site), PYTHON_BINDINGS).get(
            argument.value, ()
        )
        if bound:
            if len(bound) != 1:
                return None
            record = bound[0]
            if record.kind is BindingKind.DEF:
                func = record.node
                return func if type(func) is cst.FunctionDef else None
            if record.kind not in (BindingKind.ASSIGN, BindingKind.UNPACKED) or not record.whole:
                return None  # a loop's target, one element of an unpacked value, ...
            return self._callable_at(record.value, site, depth + 1)
        candidates = [
            f
            for f in self.callees.named(argument.value)
            if self.index.scope_of(f) is self.index.module and self.index.enclosing_class(f) is None
        ]
        return candidates[0] if len(candidates) == 1 else None

    def runs_autograd_function(self, call: cst.Call) -> bool:
        """`LossFn.apply(y, labels)` of a custom autograd Function: a class of this file
        deriving from torch's Function (or from such a class of the file), or one
        imported from another project file (ModuleSummary.autograd_functions). What it
        returns is computed from its tensor arguments, with their graph."""
        func: cst.BaseExpression = call.func
        if not self._names_apply():
            return False  # most files: asked of every call the value analysis meets
        if type(func) is cst.Name:
            # `grad_reverse = GradReverse.apply` at the top of the module, then
            # `grad_reverse(x)` where no function around the call binds the name
            top = self.index.module
            scope = self.index.scope_of(call)
            if any(
                around is not top and self.bindings.binds(around, func.value)
                for around in (scope, *self.index.outer_scopes(scope))
            ):
                return False
            if self.index.comprehension_variable(func) is not None:
                return False  # `[f(x) for f in models]`: the comprehension's own `f`
            # bound once in the module, by that assignment alone (not also a loop's
            # target, `for f in models:`, or a def)
            bound = [r for r in self.bindings.of_scope(top) if r.name == func.value]
            if (
                len(bound) != 1
                or bound[0].kind not in _PLAIN_ASSIGNMENTS
                or not bound[0].whole
                or bound[0].value is None
            ):
                return False
            func = bound[0].value  # type: ignore[assignment]
        if (
            type(func) is not cst.Attribute
            or func.attr.value != AUTOGRAD_FUNCTION_RUN
            or type(func.value) is not cst.Name
        ):
            return False
        name = func.value.value
        if name in self._autograd_functions():
            return True
        origin = self.index.imported_from.get(name)
        if origin is None or self.project is None or not self.project.enabled:
            return False
        module, level, there = origin
        return there is not None and self.project.is_autograd_function(module, level, there)

    def _names_apply(self) -> bool:
        """Does the file read an attribute `.apply` anywhere?"""
        if self._apply_named is None:
            self._apply_named = any(
                node.attr.value == AUTOGRAD_FUNCTION_RUN
                for node in self.index.of_types(cst.Attribute)
            )
        return self._apply_named

    def _autograd_functions(self) -> frozenset[str]:
        """The names of this file's classes that are custom autograd Functions."""
        if self._autograd_function_names is None:
            found: set[str] = set()
            for cls in self.index.classes:
                for base in cls.bases:
                    dotted = dotted_name(base.value)
                    if dotted is not None and (
                        dotted in found
                        or self.index.qualified_name(base.value) in AUTOGRAD_FUNCTION_CLASSES
                    ):
                        found.add(cls.name.value)
                        break
            self._autograd_function_names = frozenset(found)
        return self._autograd_function_names

    def resolve_external(
        self, call: cst.Call, *, returning_eval_model: bool = False, making_numbers: bool = False
    ) -> ExternalFunction | None:
        """The summary of an imported project function a call runs: `evaluate(...)`
        after `from utils import evaluate`, `utils.evaluate(...)` after `import utils`
        or `from . import utils`. With returning_eval_model, only when that module could
        return a model in eval mode at all (it mentions `eval`): asked of every call
        whose result is bound, and most modules need not be summarised to answer."""
        if self.project is None:
            return None
        # `self.evaluate(...)`: a method inherited from a base imported from the project
        found = self._external_target(call) or self.callees.inherited_import(call)
        if found is None:
            return self._star_imported(call, returning_eval_model, making_numbers)
        module, level, name = found
        if returning_eval_model and not self.project.may_switch_to_eval(module, level):
            return None
        if making_numbers and not self.project.may_make_numbers(module, level, name):
            return None
        return self.project.function(module, level, name)

    def resolve_external_or_method(self, call: cst.Call) -> ExternalFunction | None:
        """resolve_external, or for `obj.method(...)` on an instance of a class imported
        from the project (`diffusion.training_loss(model, x0)` after `diffusion =
        GaussianDiffusion()`), the summary of that class's method: what the forward
        questions ask of a helper call (which model it runs, and how)."""
        found = self.resolve_external(call)
        if found is not None:
            return found
        func = call.func
        if not call.args or type(func) is not cst.Attribute:
            return None  # a helper handed nothing runs no model of the caller's
        head = (dotted_name(func) or "").partition(".")[0]
        if not head or self.index.import_alias_at(call, head) is not None:
            return None  # `np.mean`, `torch.cat`: a module's function, not an object's
        method = self.imported_method_of_instance(call)
        return method[1] if method is not None else None

    def external_argument(
        self,
        call: cst.Call,
        external: ExternalFunction,
        param: str,
        *,
        receiver_passed: bool | None = None,
    ) -> cst.BaseExpression | None:
        """The argument expression `call`, a call of another file's function that
        resolve_external gave, passes for `param` (analysis.arguments). resolve_external
        reaches a method only through `self.`/`cls.` (one the class inherits from an
        imported base), never through the class's name; `receiver_passed` says so for a
        call that binds the receiver itself otherwise (an instance called, a class
        built)."""
        return argument_of(call, external.signature, param, receiver_passed=receiver_passed)

    def builds_imported_module(self, call: cst.Call) -> bool:
        """Does the call build an instance of a class imported from the project's own
        code that holds torch.nn layers with weights (`IWAE(3, 10)` after
        `from models import IWAE`), or of a class of this file derived from one (`class
        CModel(OriginalCModel)` in a test, after `from pytorch_tools.models import CModel
        as OriginalCModel`)?"""
        if self.project is None:
            return False
        found = self._external_target(call)
        if found is None:
            # `KAN(...)` after `from kan import *`: a class the star imports may bring in
            func = call.func
            if type(func) is not cst.Name:
                return False
            if func.value in self._own_names():
                # a class of this file: through the base it imports, the first the
                # lookup of its attributes reaches outside the file
                for cls in self.index.classes:
                    if (
                        cls.name.value == func.value
                        and self.index.scope_of(cls) is self.index.module
                    ):
                        base = self.callees.imported_base(cls)
                        return base is not None and self.project.builds_parameters(*base)
                return False
            project = self.project
            return any(
                project.builds_parameters(module, level, func.value)
                for module, level in self.index.star_imports
            )
        module, level, name = found
        return self.project.builds_parameters(module, level, name)

    def builds_imported_container(self, call: cst.Call) -> bool:
        """Does the call build an instance of a class imported from the project's own
        code that derives from a torch.nn container without an `__init__` of its own
        (`fnn.FlowSequential(fnn.Sigmoid())` after `import flows as fnn`)?"""
        if self.project is None:
            return False
        found = self._external_target(call)
        return found is not None and self.project.is_container_class(*found)

    def built_by_an_imported_factory(self, call: cst.Call) -> bool:
        """Does the call run a function imported from the project's own code every
        return of which builds a module with weights (`model = build_model(cfg)` after
        `from models import build_model`)?"""
        if self.project is None:
            return False
        found = self._external_target(call)
        if found is None:
            return False
        module, level, name = found
        return self.project.factory_builds_parameters(module, level, name)

    def kept_by_an_imported_class(self, call: cst.Call) -> list[cst.BaseExpression]:
        """The arguments a construction of a class imported from the project's own code
        (`Scorer(net)` after `from detector import Scorer`) hands to parameters of its
        `__init__` that the instance keeps on itself (`self.model = model`)."""
        if self.project is None:
            return []
        found = self._external_target(call)
        if found is None:
            return []
        return [passed for _, passed in self._kept_arguments(found, call)]

    def kept_by_an_imported_base(
        self, base: cst.BaseExpression, call: cst.Call
    ) -> dict[str, cst.BaseExpression]:
        """{attribute: what `super().__init__(...)` (`call`) hands the parameter kept
        there} for `base`, a class imported from the project's own code whose
        `__init__` keeps parameters in attributes of `self`."""
        if self.project is None or type(base) is not cst.Name:
            return {}
        origin = self._class_origin(base.value)
        if origin is None:
            return {}
        found: dict[str, cst.BaseExpression] = {}
        for attribute, passed in self._kept_arguments(origin, call):
            found.setdefault(attribute, passed)
        return found

    def _kept_arguments(
        self, origin: tuple[str, int, str], call: cst.Call
    ) -> list[tuple[str, cst.BaseExpression]]:
        """(attribute, argument) for each parameter of the `__init__` of the project's
        class at `origin` that it keeps in `self.<attribute>`, which `call` (a
        construction, or `super().__init__(...)`: either binds the receiver itself)
        passes an argument for."""
        assert self.project is not None
        module, level, name = origin
        handed = self.project.handed_attributes(module, level, name)
        if not handed:
            return []
        init = self.project.function(module, level, f"{name}.__init__")
        if init is None:
            return []
        found = []
        for param, attribute in handed.items():
            passed = self.external_argument(call, init, param, receiver_passed=True)
            if passed is not None:
                found.append((attribute, passed))
        return found

    def _star_imported(
        self, call: cst.Call, returning_eval_model: bool, making_numbers: bool
    ) -> ExternalFunction | None:
        """`to_np(x)` where `to_np` is defined nowhere in this file but may come in through
        a `from .utils import *` of the project's own code."""
        stars = self.index.star_imports
        if not stars or self.project is None or type(call.func) is not cst.Name:
            return None
        name = call.func.value
        if name in _BUILTIN_NAMES or name in self._own_names():
            return None
        if returning_eval_model and not any(
            self.project.may_switch_to_eval(module, level) for module, level in stars
        ):
            return None
        if making_numbers and not any(
            self.project.may_make_numbers(module, level, name) for module, level in stars
        ):
            return None
        return self.project.star_imported(stars, name)

    def _own_names(self) -> set[str]:
        """Names this file binds itself at any level: they shadow a star import."""
        if self._bound_here is None:
            bound: set[str] = {f.name.value for f in self.index.functions}
            bound.update(c.name.value for c in self.index.classes)
            bound.update(self.index.imported_from)
            bound.update(self._assignments(self.index.module))
            self._bound_here = bound
        return self._bound_here

    def _external_target(self, call: cst.Call) -> tuple[str, int, str] | None:
        """(module, relative level, function name) an imported call names."""
        dotted = dotted_name(call.func)
        if dotted is None or dotted.partition(".")[0] not in self.index.imported_from:
            return None  # most calls: a name no import binds
        return self.index.imports.target(dotted, lambda: self._import_scope(call))

    def _import_scope(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The function whose imports a name used at node is read in (None: the
        module's)."""
        scope = self.index.scope_of(node)
        return None if scope is self.index.module else scope

    def _assignments(self, scope: cst.CSTNode) -> dict[str, list[cst.CSTNode]]:
        """The scope's plain assignments (`obj = ...`, `self.x = ...`, not unpacking), by
        the name they bind."""
        return self.bindings.nodes(scope, _PLAIN_ASSIGNMENTS)

    def forward_of_instance(self, call: cst.Call) -> cst.FunctionDef | None:
        """For `obj(...)` on an instance of a torch module class of this file that
        defines no `__call__`, its `forward`: `nn.Module.__call__` runs it and hands back
        what it returns (hooks aside)."""
        func = call.func
        if type(func) is not cst.Name or not self.callees.named("forward"):
            return None  # no class of this file defines one: cheap and sure
        cls_name = self._class_of_name(func.value, call, _CALLER_HOPS)
        if cls_name is None:
            return None
        # a notebook's cells may define the class again: which one is built is not read
        named = [cls for cls in self.index.classes if cls.name.value == cls_name]
        if len(named) != 1 or not self._torch_module_class(named[0]):
            return None
        if self.callees.method_of(named[0], "__call__") is not None:
            return None  # its own `__call__` runs instead
        return self.callees.method_of(named[0], "forward")

    def _torch_module_class(self, cls: cst.ClassDef) -> bool:
        """Does the class derive from a torch module, itself or through its bases of
        this file?"""
        return any(
            is_torch_module_base(self.index.qualified_name(base.value) or "")
            for known in self.callees.lineage(cls)
            for base in known.bases
        )

    def _instance_class(self, call: cst.Call) -> str | None:
        """For `obj.method(...)`: the one class name every binding of `obj` that
        reaches the call makes an instance of (`obj = Agent()`, `obj = Net().to(d)`),
        else None."""
        func = call.func
        if type(func) is not cst.Attribute:
            return None
        scope = self.index.scope_of(call)
        if type(func.value) is cst.Attribute:
            return self._attribute_class(func.value, scope)
        if type(func.value) is not cst.Name:
            return None
        return self._class_of_name(func.value.value, call, _CALLER_HOPS)

    def handed_in_receiver(self, call: cst.Call) -> bool:
        """For `obj.method(...)`: is `obj` an object the code is handed whose class it
        cannot tell, so that any class of the project defining the method may be
        running? A parameter of the enclosing function it never rebinds (`def
        train(agent, env)`), or `self.x` that the class binds only in its `__init__`, to
        a parameter (`self.agent = agent`). Its shape only: whether a caller of this
        file tells the class is methods_of_handed_in's last question."""
        func = call.func
        if type(func) is not cst.Attribute:
            return False
        scope = self.index.scope_of(call)
        if type(scope) is not cst.FunctionDef:
            return False
        receiver = func.value
        if type(receiver) is cst.Name:
            return receiver.value not in ("self", "cls") and self._unrebound_parameter(
                scope, receiver.value
            )
        if type(receiver) is not cst.Attribute or type(receiver.value) is not cst.Name:
            return False
        if receiver.value.value != "self":
            return False
        cls = self.index.enclosing_class(scope)
        if cls is None:
            return False
        # `self.agent.update(batch)` itself counts as a store into the object
        every = self.bindings.attribute_bindings(cls, f"self.{receiver.attr.value}")
        bindings = [b for b in every or () if b.kind is not BindingKind.STORE]
        if not bindings:
            return False
        for binding in bindings:
            init = self.index.scope_of(binding.node)
            if (
                type(binding.node) is not cst.Assign
                or not binding.whole
                or type(binding.value) is not cst.Name
                or type(init) is not cst.FunctionDef
                or init.name.value != "__init__"
                or not self._unrebound_parameter(init, binding.value.value)
            ):
                return False
        return True

    def _unrebound_parameter(self, function: cst.FunctionDef, name: str) -> bool:
        """Is `name` a parameter of `function` that its body never binds again?"""
        return name in {p.name.value for p in all_params(function.params)} and (
            len(self.bindings.records(function, PYTHON_BINDINGS).get(name, ())) == 1
        )

    def function_handed_in(self, call: cst.Call) -> cst.FunctionDef | None:
        """For `criterion(out, y)`, `criterion` a parameter of the enclosing function it
        never rebinds: the one function of this file every call of that function in this
        file hands it, by name (`train(net, loader, kd_loss)`) or as the function a
        factory of this file returns (`criterion = make_criterion(T=4.0)`, whose body
        defines `def criterion(...)` and returns it). None when a call hands anything
        else, when none is seen, or when the function is called out of sight too."""
        func = call.func
        scope = self.index.scope_of(call)
        if type(func) is not cst.Name or type(scope) is not cst.FunctionDef:
            return None
        name = func.value
        if not self._unrebound_parameter(scope, name) or self.callees.handed_on(scope):
            return None
        handed = self.caller_arguments.here(scope, name)
        if not handed:
            return None
        found: set[cst.FunctionDef] = set()
        for argument in handed:
            function = self._function_named(argument.value, argument.site)
            if function is None:
                return None
            found.add(function)
        return found.pop() if len(found) == 1 else None

    def _function_named(
        self, value: cst.BaseExpression | None, site: cst.CSTNode
    ) -> cst.FunctionDef | None:
        """The function of this file `value` (read at `site`) is: a module-level one by
        name, or what the one factory call it is bound to returns, a function that
        factory defines."""
        if type(value) is not cst.Name:
            return None
        functions = [
            f
            for f in self.callees.named(value.value)
            if self.index.scope_of(f) is self.index.module
        ]
        bindings = self._assignments(self.index.scope_of(site)).get(value.value, [])
        if functions and not bindings:
            return functions[0] if len(functions) == 1 else None
        reaching = self.index.reaching(bindings, site) if bindings else []
        if len(reaching) != 1 or type(reaching[0]) is not cst.Assign:
            return None
        factory_call = reaching[0].value
        factory = self.resolve(factory_call) if type(factory_call) is cst.Call else None
        if factory is None:
            return None
        made: set[cst.FunctionDef] = set()
        for _ret, returned in self.index.value_returns(factory):
            if type(returned) is not cst.Name:
                return None
            nested = [
                f for f in self.callees.named(returned.value) if self.index.scope_of(f) is factory
            ]
            if len(nested) != 1:
                return None
            made.add(nested[0])
        return made.pop() if len(made) == 1 else None

    def methods_of_handed_in(
        self, call: cst.Call, agree: Callable[[list[ExternalFunction]], bool]
    ) -> list[ExternalFunction]:
        """For `obj.method(...)` on an object handed in whose class cannot be told
        (handed_in_receiver, and no caller in this file telling it): every method of
        the project's classes the call may run (ProjectIndex.methods_run_by), when they
        `agree` as the asker needs (asked before the callers are searched, which costs
        more). Empty for a name torch's optimizers and modules
        or Python's containers answer to (`optimizer.step()`, `buffer.append(x)`),
        which a project class may define as well, but for `update`, an agent's usual
        step (a dict handed in, `stats.update(...)`, answers only where every class of
        the project defining `update` agrees), and when the project is not searched."""
        func = call.func
        project = self.project
        if type(func) is not cst.Attribute or project is None or not project.enabled:
            return []
        method = func.attr.value
        if (
            method in COMMON_TENSOR_METHODS  # `x.view(...)` of a tensor handed in
            or method in OPTIMIZER_METHODS
            or method in NOT_FORWARD_METHODS
            or (method in PYTHON_OBJECT_METHODS and method not in _AGENT_METHODS)
            or method[:2] == "__"
            or not self.handed_in_receiver(call)
        ):
            return []
        if any(self.index.enclosing_class(f) is not None for f in self.callees.named(method)):
            # a class of this file defines it: its instance is what callers here hand,
            # which the file's own analysis reads (and the search would parse this file)
            return []
        statement = self.index.statement_of(call)
        unpacked = None
        if (
            type(statement) is cst.Assign
            and statement.value is call
            and len(statement.targets) == 1
            and type(statement.targets[0].target) in (cst.Tuple, cst.List)
        ):
            unpacked = len(statement.targets[0].target.elements)  # type: ignore[attr-defined]
        definitions = project.methods_run_by(method, shape_of(call), unpacked)
        if not definitions or not agree(definitions) or self._instance_class(call) is not None:
            return []
        return definitions

    def _class_of_name(self, owner: str, use: cst.CSTNode, hops: int) -> str | None:
        """The one class every binding of `owner` reaching `use` instantiates; for a
        parameter the function never rebinds, the one class every caller in this file
        passes an instance of (`train_one_epoch(net, loader)` after `net =
        GatedGCN_net(...)`), through at most `hops` callers."""
        scope = self.index.scope_of(use)
        bindings: list[cst.CSTNode] = list(self._assignments(scope).get(owner, ()))
        reaching = self.index.reaching(bindings, use) if bindings else []
        if (
            not bindings
            and type(scope) is cst.FunctionDef
            and owner in {p.name.value for p in all_params(scope.params)}
        ):
            if hops == 0 or owner in ("self", "cls"):
                return None
            return self._class_handed(self.caller_arguments.here(scope, owner), hops - 1)
        if (
            not bindings
            and scope is not self.index.module
            and owner not in self.bindings.nodes(scope, PYTHON_BINDINGS)
        ):
            # a global read in a function (`policy.act(s)` in `def reinforce():`, the
            # policy built at module level): any module-level binding may be current,
            # and each must be a plain assignment
            module = self.index.module
            reaching = list(self._assignments(module).get(owner, ()))
            if len(reaching) != len(self.bindings.nodes(module, PYTHON_BINDINGS).get(owner, ())):
                return None
        classes = set()
        for node in reaching:
            built = _built_class(node.value) if type(node) is cst.Assign else None
            if built is None:
                return None
            classes.add(built)
        return next(iter(classes)) if len(classes) == 1 else None

    def _class_origin(self, cls_name: str) -> tuple[str, int, str] | None:
        """(module, level, class) a class named as it is built here comes from: a name
        imported from a module (`from models import Net`), or a module's attribute
        (`nf.NormalizingFlow` after `import normflows as nf`)."""
        if "." not in cls_name:
            origin = self.index.imported_from.get(cls_name)
            if origin is None:
                return self._star_imported_class(cls_name)
            if origin[2] is None:
                return None
            return origin[0], origin[1], origin[2]
        qualified = self.index.imports.qualify(cls_name)
        module, _, name = qualified.rpartition(".")
        if qualified == cls_name and cls_name.split(".", 1)[0] not in self.index.imported_from:
            return None  # a name the file does not import: nothing to look up
        return (module, 0, name) if module and not module.startswith("torch") else None

    def _star_imported_class(self, cls_name: str) -> tuple[str, int, str] | None:
        """(module, level, class) of a class `from <module> import *` brings in: the last
        of the project's modules so imported that defines it at its top level (it wins
        when the file runs). None when this file binds the name itself."""
        stars = self.index.star_imports
        if not stars or self.project is None or cls_name in self._own_names():
            return None
        home = self.project.star_class_home(stars, cls_name)
        return (*home, cls_name) if home is not None else None

    def _attribute_class(self, receiver: cst.Attribute, scope: cst.CSTNode) -> str | None:
        """For `self.x.method(...)` in a method: the one class every binding of `self.x`
        in the class makes an instance of (`self.local_net = ActorCritic(...)` in
        `__init__`), else None."""
        name = dotted_name(receiver)
        if name is None or not name.startswith("self.") or name.count(".") != 1:
            return None
        cls = self.index.enclosing_class(scope) if type(scope) is cst.FunctionDef else None
        if cls is None:
            return None
        # `self.agent.update(batch)` and `self.memory.append(x)` store into the object
        # they name, as a dict's `update` would: what it is stays what was built
        every = self.bindings.attribute_bindings(cls, name)
        bindings = [b for b in every or () if b.kind is not BindingKind.STORE]
        if not bindings:
            return None
        classes = set()
        for binding in bindings:
            if type(binding.node) is not cst.Assign or not binding.whole or binding.value is None:
                return None
            built = self._kept_class(binding.value, binding.node, cls)
            if built is None:
                return None
            classes.add(built)
        return next(iter(classes)) if len(classes) == 1 else None

    def _kept_class(
        self, value: cst.CSTNode, statement: cst.CSTNode, cls: cst.ClassDef
    ) -> str | None:
        """The class of what `self.x = value` keeps: one built there (`ActorCritic(...)`),
        or, for `self.agent = agent` in the class's `__init__`, the one class every
        construction of the class hands that parameter (`Runner(Agent(), 5)`, or a name
        bound to an instance), when every one is in this file and no subclass of it
        here may be built with another."""
        built = built_module_call(value)
        if type(built) is cst.Call and type(built.func) is cst.Name:
            return built.func.value
        if type(built) is not cst.Name:
            return None
        init = self.index.scope_of(statement)
        if (
            type(init) is not cst.FunctionDef
            or init.name.value != "__init__"
            or self.index.enclosing_class(init) is not cls
        ):
            return None
        param = built.value
        if param not in {p.name.value for p in all_params(init.params)} or self._assignments(
            init
        ).get(param):
            return None  # not the parameter, or rebound before it is kept
        if any(cls.name.value in self.callees.base_names(other) for other in self.index.classes):
            return None  # a subclass's instances keep it too, handed anything
        sites = self.index.constructions(cls)
        if not sites or not self.caller_arguments.constructed_only_here(cls, init):
            return None
        handed = self.caller_arguments.here(init, param, sites, constructed=True)
        return self._class_handed(handed, _CALLER_HOPS - 1)

    def _class_handed(self, arguments: list[ArgumentHere], hops: int) -> str | None:
        """The one class of what every call site hands a parameter: an instance built at
        the call (`rollout(Agent(), env)`), or a name bound to one there, followed
        through at most `hops` more callers. None when there is no call, or they
        disagree, or one cannot be told."""
        if not arguments:
            return None
        found = set()
        for argument in arguments:
            passed = argument.passed
            if type(passed) is cst.Name:
                found.add(self._class_of_name(passed.value, argument.site, hops))
            else:
                found.add(_built_class(passed))
        return found.pop() if len(found) == 1 else None

    def instance_forward(self, call: cst.Call) -> cst.FunctionDef | ExternalFunction | None:
        """What calling an instance runs (`criterion(out, y)` after `criterion =
        DiceLoss()`): its class's `__call__`, else its `forward` (what nn.Module's call
        runs), of this file's class (a FunctionDef) or of one imported from the
        project's own code (its summary). The call binds the method's receiver itself.
        None when the instance's one class cannot be told."""
        if type(call.func) is not cst.Name:
            return None
        cls_name = self._class_of_name(call.func.value, call, _CALLER_HOPS)
        if cls_name is None:
            return None
        for cls in self.index.classes:
            if cls.name.value == cls_name:
                return self.callees.method_of(cls, "__call__") or self.callees.method_of(
                    cls, "forward"
                )
        for method in ("__call__", "forward"):
            found = self._imported_method(cls_name, method)
            if found is not None:
                return found[1]
        return None

    def function_run_by(self, call: cst.Call) -> cst.FunctionDef | None:
        """The function or method of this file the call runs: one the resolver names
        (`f(x)`, `self.m(x)`), else a method of an instance of this file's class
        (`model.train_step(x, h)` after `model = Recurrent()`)."""
        return self.resolve(call) or self.method_of_instance(call)

    def calls_on_instances(self, method: cst.FunctionDef) -> list[cst.Call]:
        """The calls of this file that run `method` on an instance of its class
        (`model.inference(seq)` after `model = Tacotron2()`): the resolver's callers_of
        sees `self.inference(...)` only."""
        name = method.name.value
        return [
            call
            for call in self.index.calls
            if type(call.func) is cst.Attribute
            and call.func.attr.value == name
            and self.method_of_instance(call) is method
        ]

    def method_of_instance(self, call: cst.Call) -> cst.FunctionDef | None:
        """The method of this file's class that `obj.method(...)` runs, `obj` being an
        instance of it (`model = Recurrent()` then `model.train_step(x, h)`)."""
        func = call.func
        if type(func) is not cst.Attribute or not self.callees.named(func.attr.value):
            return None  # no function of this file has that name: cheap and sure
        cls_name = self._instance_class(call)
        if cls_name is None:
            return None
        assert type(call.func) is cst.Attribute
        for cls in self.index.classes:
            if cls.name.value == cls_name:
                # its own method, or one it inherits from a base class of this file
                found = self.callees.method_of(cls, call.func.attr.value)
                if found is not None:
                    return found
        return None

    def _computed_and_kept(
        self, func: cst.FunctionDef, node: cst.CSTNode, params: set[str]
    ) -> set[str]:
        """The parameters a value added to `self.<x>` (`self.cum_loss += l`) is computed
        from, with torch, in one binding of the method: the graph of what the caller
        passes for them is kept in the object's state."""
        assert type(node) is cst.AugAssign
        if type(node.operator) is not cst.AddAssign:
            return set()
        store, added = dotted_name(node.target), _added_name(node.value)
        if store is None or not store.startswith("self.") or added is None or added in params:
            return set()
        bindings = self.bindings.nodes(func, PYTHON_BINDINGS).get(added, [])
        if len(bindings) != 1 or type(bindings[0]) is not cst.Assign:
            return set()
        # what it reads past no graph cut (`.item()`, `.detach()`, `.data`)
        return (self.autograd.flow.reads(bindings[0].value) & params) - {"self"}

    def runs_a_method_of_the_project(self, call: cst.Call) -> bool:
        """Is `obj.method(...)` a method of one class of this file or an imported project
        file, `obj` an instance of it (`loss_avg.add(cost)` with `loss_avg =
        utils.averager()`)? Its summary then says what it keeps, not its name."""
        return self._instance_method(call) is not None

    def accumulated_argument(self, call: cst.Call) -> cst.BaseExpression | None:
        """For `obj.method(...)` where every binding of `obj` that reaches the call makes
        an instance of one class (of this file or an imported project file): the
        argument the method adds unchanged to the object's state (`meter.update(loss)`
        with `self.sum += val`), the first in the call when it adds several."""
        found = self._instance_method(call)
        if found is None:
            return None
        signature, accumulated = found
        # called on an instance: a plain method's `self` is the object (`criteria(out,
        # y)` calls the instance itself: its `forward` gets it as `self` too)
        passed = type(call.func) is cst.Name or passes_receiver(call, signature.receiver)
        shape = shape_of(call)
        positions = []
        for param in accumulated:
            bound = signature.bind(shape, param, receiver_passed=passed)
            if bound is not None and bound.index is not None:
                positions.append(bound.index)
        return call.args[min(positions)].value if positions else None

    def runs_imported_layers(self, call: cst.Call) -> bool:
        """Is `obj.method(...)` a forward of `obj`, an instance of one class imported from
        the project's own code that holds layers with weights, whose `method` runs the
        module's own layers (`self.model.sample(n)` with `self.model = LVAE(...)`), and
        neither differentiates nor sets its own grad mode (project.ExternalFunction)?"""
        found = self.imported_method_of_instance(call)
        if found is None:
            return False
        (module, level, name), external = found
        return (
            external.runs_own_layers
            and not (external.differentiates or external.sets_grad_mode or external.no_grad)
            and self.project is not None
            and self.project.builds_parameters(module, level, name)
        )

    def imported_method_of_instance(
        self, call: cst.Call, within: Set[tuple[str, int]] | None = None
    ) -> _ImportedMethod | None:
        """For `obj.method(...)`, `obj` an instance of one class imported from the
        project's own code (`agent = Agent()` after `from agent import Agent`, `self.agent
        = Agent()` in `__init__`): ((module, level, class) it comes from, the summary of
        the method it runs). `within`: only a class of these (module, level) imports is
        summarised."""
        func = call.func
        if type(func) is not cst.Attribute or self.project is None:
            return None
        if within is None:
            known = self._imported_methods.get(id(call))
            if known is not None and known[0] is call:
                return known[1]
        cls_name = self._instance_class(call)
        if cls_name is None or any(c.name.value == cls_name for c in self.index.classes):
            found = None
        else:
            found = self._imported_method(cls_name, func.attr.value, within)
        if within is None:
            self._imported_methods[id(call)] = (call, found)
        return found

    def imported_forward_of_instance(self, call: cst.Call) -> ExternalFunction | None:
        """For `obj(...)`, `obj` an instance of one class imported from the project's own
        code that defines no `__call__` (a module: `nn.Module.__call__` runs `forward`
        and hands back what it returns), the summary of its `forward`."""
        if type(call.func) is not cst.Name or self.project is None:
            return None
        cls_name = self._class_of_name(call.func.value, call, _CALLER_HOPS)
        if cls_name is None or any(c.name.value == cls_name for c in self.index.classes):
            return None
        if self._imported_method(cls_name, "__call__") is not None:
            return None
        found = self._imported_method(cls_name, "forward")
        return found[1] if found is not None else None

    def _imported_method(
        self, cls_name: str, method: str, within: Set[tuple[str, int]] | None = None
    ) -> tuple[tuple[str, int, str], ExternalFunction] | None:
        """((module, level, class), the summary of its `method`) of a class named as it
        is built here and imported from the project's own code."""
        origin = self._class_origin(cls_name)
        if origin is None or self.project is None:
            return None
        if within is not None and origin[:2] not in within:
            return None
        module, level, name = origin
        external = self.project.function(module, level, f"{name}.{method}")
        return (origin, external) if external is not None else None

    def _instance_method(self, call: cst.Call) -> tuple[Signature, set[str]] | None:
        """The signature of the method `obj.method(...)` runs on an instance of one
        class, and the parameters it accumulates into the object's state."""
        if type(call.func) is cst.Name:
            # `criteria(out, y)`: the instance called runs its class's `forward`
            cls_name = self._class_of_name(call.func.value, call, _CALLER_HOPS)
            method = "forward"
        elif type(call.func) is cst.Attribute:
            cls_name = self._instance_class(call)
            method = call.func.attr.value
        else:
            return None
        if cls_name is None:
            return None
        for cls in self.index.classes:
            if cls.name.value == cls_name:
                # its own method, or one it inherits from a base class of this file
                found = self.callees.method_of(cls, method)
                if found is None:
                    return None
                summary = self.of(found)
                return summary.signature, summary.accumulated_params
        imported = self._imported_method(cls_name, method)
        if imported is None:
            return None
        external = imported[1]
        return external.signature, set(external.accumulated_params)


def _added_name(value: cst.BaseExpression) -> str | None:
    """The name `self.sum += value` adds with its history: `val`, or `val` scaled or
    shifted by another operand (`val * n`, the running sum of a batch-size-weighted
    meter), `val` being the left operand."""
    while type(value) is cst.BinaryOperation and type(value.operator) in _CARRYING_OPERATORS:
        value = value.left
    return value.value if type(value) is cst.Name else None


_CARRYING_OPERATORS = (cst.Multiply, cst.Divide, cst.Add, cst.Subtract)


def _accumulated_into_self(node: cst.CSTNode, params: set[str]) -> str | None:
    """The parameter a statement adds to `self.<x>` unchanged, if any (the fact is
    summary_facts.accumulated_parameter's; this reads LibCST's syntax for it)."""
    if type(node) is cst.AugAssign and type(node.operator) is cst.AddAssign:
        return accumulated_parameter(dotted_name(node.target), _added_name(node.value), params)
    if (
        type(node) is cst.Call
        and type(node.func) is cst.Attribute
        and node.func.attr.value in ACCUMULATING_METHODS
        and len(node.args) == 1
        and node.args[0].keyword is None
        and not node.args[0].star
        and type(node.args[0].value) is cst.Name
    ):
        added = node.args[0].value.value
        return accumulated_parameter(dotted_name(node.func.value), added, params)
    return None


def _built_class(value: cst.CSTNode | None) -> str | None:
    """The class name a value builds an instance of, through its wrappers: `Learner` of
    `Learner().to(device)`; `nf.NormalizingFlow` of a class of a module imported whole.
    None for anything else."""
    value = built_module_call(value) if value is not None else None
    if type(value) is not cst.Call:
        return None
    return dotted_name(value.func)
