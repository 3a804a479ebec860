"""Is autograd recording at a given node?

RECORDING is the default at module level and in a function that some visible caller
reaches with grad enabled (or that no caller in the module reaches: its users run it in
PyTorch's default mode). NOT_RECORDING under `torch.no_grad()`, `torch.inference_mode()`,
`torch.set_grad_enabled(False)` (as a block, a decorator or an earlier statement), inside a
function whose every call in this module sits in a not-recording context, and in the
framework hooks that their trainers run without grad (Lightning's validation/test/predict
steps). UNKNOWN where a flag or decorator we cannot evaluate decides; rules stay silent
there rather than guess.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import libcst as cst

from gradlint.analysis.arguments import signature_of
from gradlint.analysis.bindings import BindingKind, ScopeBindings
from gradlint.analysis.callees import CalleeResolver
from gradlint.analysis.index import FileIndex, bool_literal
from gradlint.analysis.project import MethodQuery, ProjectIndex
from gradlint.analysis.summary_facts import (
    GradMode,
    decorated_mode,
    grad_api,
    grad_mode_effect,
    picked_grad_mode_effect,
)
from gradlint.analysis.torch_api import GRAD_MODE_SETTER, NO_GRAD_HOOKS

# every kind of binding: which of a name's bindings reach a `with` is asked of all of them
_EVERY_BINDING = frozenset(BindingKind)


class GradModeAnalysis:
    def __init__(
        self,
        index: FileIndex,
        project: ProjectIndex | None = None,
        bindings: ScopeBindings | None = None,
        lambda_paths: Callable[[cst.Lambda], list[tuple[cst.Call, ...]]] | None = None,
    ) -> None:
        self.index = index
        self.project = project
        # the ways a lambda comes to run (PathConditions.lambda_paths, which follows it
        # through names and parameters; it binds arguments, a layer above)
        self._lambda_paths = lambda_paths
        self._lambda_modes: dict[cst.Lambda, GradMode] = {}
        self._function_modes: dict[cst.FunctionDef, GradMode] = {}
        self._in_progress: set[cst.FunctionDef] = set()
        self._guarded_elsewhere: dict[cst.FunctionDef, bool] = {}
        self.bindings = bindings
        self.callees = CalleeResolver(index, bindings)

    # -- context managers and decorators --------------------------------------------

    def api_of(self, expr: cst.CSTNode | None) -> str | None:
        """The grad-mode API a Name/Attribute names, resolved through imports:
        `no_grad`, `enable_grad`, `inference_mode` or `set_grad_enabled`; else None."""
        return grad_api(self.index.qualified_name(expr))

    def context_effect(self, expr: cst.BaseExpression) -> GradMode | None:
        """What entering `expr` (a with-item or a decorator) does to grad mode; None if it
        is not a grad-mode manager; a manager a condition picks as
        summary_facts.picked_grad_mode_effect reads it."""
        if type(expr) is cst.IfExp:
            return picked_grad_mode_effect(
                self.context_effect(expr.body), self.context_effect(expr.orelse)
            )
        return grad_mode_effect(*self._manager(expr))

    def entered(self, item: cst.BaseExpression) -> cst.BaseExpression:
        """What a with-item enters: the item itself, or for a name the one value
        assigned to it that reaches the `with` (`ctx = torch.no_grad()`, or `ctx =
        nullcontext() if train else torch.no_grad()`, then `with ctx:`)."""
        if type(item) is not cst.Name or self.bindings is None:
            return item
        records = self.bindings.records(self.index.scope_of(item), _EVERY_BINDING).get(
            item.value, []
        )
        reaching = self.index.reaching([r.node for r in records], item)
        if len(reaching) != 1:
            return item
        record = next(r for r in records if r.node is reaching[0])
        if type(record.node) is not cst.Assign or not record.whole or record.value is None:
            return item
        value = record.value
        return value if isinstance(value, cst.BaseExpression) else item

    def _manager(self, expr: cst.BaseExpression) -> tuple[str | None, list[bool | None] | None]:
        """(what `expr` names, resolved; its first argument as a literal bool, or None
        when it is not called) as summary_facts reads a grad-mode manager."""
        if type(expr) is cst.Call:
            return self.index.qualified_name(expr.func), [
                bool_literal(a.value) for a in expr.args[:1]
            ]
        return self.index.qualified_name(expr), None

    def _statement_setter(self, stmt: cst.CSTNode) -> GradMode | None:
        """`torch.set_grad_enabled(False)` written as a statement switches the mode for
        everything after it in the same block."""
        if type(stmt) is not cst.SimpleStatementLine:
            return None
        effect = None
        for small in stmt.body:
            if type(small) is cst.Expr and type(small.value) is cst.Call:
                call = small.value
                if grad_api(self.index.qualified_name(call.func)) == GRAD_MODE_SETTER:
                    effect = self.context_effect(call)
        return effect

    # -- the query ------------------------------------------------------------------

    def mode_at(self, node: cst.CSTNode) -> GradMode:
        child = node
        for anc in self.index.ancestors(node):
            if type(anc) is cst.With and child is anc.body:
                effects = [self.context_effect(self.entered(item.item)) for item in anc.items]
                known = [e for e in effects if e is not None]
                if known:
                    return known[-1]
            elif type(anc) is cst.IndentedBlock or type(anc) is cst.Module:
                effect = self._earlier_setter(anc, child)
                if effect is not None:
                    return effect
            elif type(anc) is cst.FunctionDef:
                return self.function_mode(anc)
            elif type(anc) is cst.Lambda:
                return self.lambda_mode(anc)
            child = anc
        return GradMode.RECORDING

    def may_record(self, node: cst.CSTNode) -> bool:
        """Does some way of reaching `node` record? RECORDING, or UNKNOWN where a flag
        or the callers decide (`with nullcontext() if train_encoder else
        torch.no_grad():`): a forward whose result is differentiated trains on the
        recording way."""
        return self.mode_at(node) is not GradMode.NOT_RECORDING

    def lambda_mode(self, lam: cst.Lambda) -> GradMode:
        """A lambda's body runs in the grad mode of the calls that run it (`policy =
        lambda x: agent.act(x)` called under `no_grad`), or of the call that hands it on
        when that one is under `no_grad` (`with torch.no_grad(): evaluate(env, policy)`,
        whatever other callers of `evaluate` do); recording when they are out of
        sight."""
        cached = self._lambda_modes.get(lam)
        if cached is not None:
            return cached
        self._lambda_modes[lam] = GradMode.RECORDING  # a lambda that runs itself: a cycle
        paths = self._lambda_paths(lam) if self._lambda_paths is not None else []
        modes = set()
        for path in paths:
            on_path = [self.mode_at(call) for call in path]
            if GradMode.NOT_RECORDING in on_path:
                modes.add(GradMode.NOT_RECORDING)
            else:
                modes.add(on_path[-1])
        if not modes or GradMode.RECORDING in modes:
            mode = GradMode.RECORDING
        elif modes == {GradMode.NOT_RECORDING}:
            mode = GradMode.NOT_RECORDING
        else:
            mode = GradMode.UNKNOWN
        self._lambda_modes[lam] = mode
        return mode

    def in_inference_mode(self, node: cst.CSTNode) -> bool:
        """Is `node` proven to run under `torch.inference_mode()`, the mode whose tensors
        are *inference tensors* (autograd refuses to save them for backward later)? Only
        the innermost deciding `with` block or the function's own decorator counts; a
        function reached from callers in inference mode is not followed."""
        child = node
        for anc in self.index.ancestors(node):
            if type(anc) is cst.With and child is anc.body:
                entered = [self.entered(item.item) for item in anc.items]
                deciding = [
                    (manager, effect)
                    for manager in entered
                    if (effect := self.context_effect(manager)) is not None
                ]
                if deciding:
                    expr, effect = deciding[-1]
                    return effect is GradMode.NOT_RECORDING and self._is_inference(expr)
            elif isinstance(anc, (cst.IndentedBlock, cst.Module)):
                if self._earlier_setter(anc, child) is not None:
                    return False
            elif type(anc) is cst.FunctionDef:
                for decorator in reversed(anc.decorators):
                    effect = self.context_effect(decorator.decorator)
                    if effect is not None:
                        return effect is GradMode.NOT_RECORDING and self._is_inference(
                            decorator.decorator
                        )
                return False
            elif type(anc) is cst.Lambda:
                return False
            child = anc
        return False

    def _is_inference(self, expr: cst.BaseExpression) -> bool:
        target = expr.func if type(expr) is cst.Call else expr
        return self.api_of(target) == "inference_mode"

    def _earlier_setter(
        self, block: cst.IndentedBlock | cst.Module, child: cst.CSTNode
    ) -> GradMode | None:
        effect = None
        for stmt in block.body:
            if stmt is child:
                break
            found = self._statement_setter(stmt)
            if found is not None:
                effect = found
        return effect

    def function_mode(self, func: cst.FunctionDef) -> GradMode:
        cached = self._function_modes.get(func)
        if cached is not None:
            return cached
        if func in self._in_progress:
            # A recursive call path: assume the default mode for the cycle.
            return GradMode.RECORDING
        self._in_progress.add(func)
        try:
            mode = self._compute_function_mode(func)
        finally:
            self._in_progress.discard(func)
        self._function_modes[func] = mode
        return mode

    def _compute_function_mode(self, func: cst.FunctionDef) -> GradMode:
        decorated = decorated_mode(self._manager(d.decorator) for d in func.decorators)
        if decorated is not None:
            return decorated
        cls = self.index.enclosing_class(func)
        if cls is not None and func.name.value in NO_GRAD_HOOKS and self._is_lightning(cls):
            return GradMode.NOT_RECORDING
        callers = self.callers_of(func)
        if not callers:
            return GradMode.RECORDING
        modes = {self.mode_at(call) for call in callers}
        if GradMode.RECORDING in modes:
            return GradMode.RECORDING
        if modes == {GradMode.NOT_RECORDING}:
            return GradMode.NOT_RECORDING
        return GradMode.UNKNOWN

    def _is_lightning(self, cls: cst.ClassDef) -> bool:
        for base in cls.bases:
            name = self.index.qualified_name(base.value) or ""
            if "lightning" in name.lower() or name.endswith("LightningModule"):
                return True
        return False

    def callers_of(self, func: cst.FunctionDef) -> list[cst.Call]:
        return self.callees.callers_of(func)

    def guarded_by_every_caller_elsewhere(self, node: cst.CSTNode) -> bool:
        """Is every call of the function around `node` under `no_grad`, counting the
        project's other files (`with torch.no_grad(): acc = evaluate(model, loader)` in
        train.py): each one there, and each one in this file either under `no_grad` or in
        a function whose every call is, by the same question (`sample_twice` calling
        `sample`, itself called only under `no_grad` from main.py)? Then its body records
        nothing, whatever its own grad mode says. Asked only before reporting: it reads
        those files."""
        func = self.index.scope_of(node)
        if type(func) is not cst.FunctionDef:
            return False
        found = self._guarded_elsewhere.get(func)
        if found is None:
            self._guarded_elsewhere[func] = False  # a cycle of calls proves nothing
            found = self._guarded_elsewhere[func] = self._compute_guarded_elsewhere(func)
        return found

    def _compute_guarded_elsewhere(self, func: cst.FunctionDef) -> bool:
        project = self.project
        if project is None or not project.enabled:
            return False
        if self.callees.handed_on(func):
            return False
        local = self.callers_of(func)
        for site in local:
            if self.mode_at(site) is GradMode.NOT_RECORDING:
                continue
            if self.index.scope_of(site) is func or not self.guarded_by_every_caller_elsewhere(
                site
            ):
                return False
        query = callers_query(self.callees, project, func)
        if query is None:
            return False
        # a call on an object whose class cannot be told (`vocoder =
        # torch.hub.load(...)`, then `vocoder.inference(mel)`) may be one of this
        # method's: counted as one, it covers the method only if it does not record either
        answered = project.method_calls_counting_unknown(query, whoever_defines_it=True)
        if answered is None:
            return False
        # a call in the function's own body (`x_dist.sample()` in `def sample(self)`,
        # counted with the unknown receivers) runs in the mode the function is entered
        # in, and is no way into it
        cls = self.index.enclosing_class(func)
        itself = f"{cls.name.value}.{func.name.value}" if cls is not None else func.name.value
        here = os.path.realpath(project.path)
        calls = [
            c for c in answered[1] if not (c.within == itself and os.path.realpath(c.path) == here)
        ]
        if not (calls or local):
            return False
        # one that records by itself may sit in a function called only under no_grad
        return all(not c.recording or project.called_only_without_recording(c) for c in calls)


def callers_query(
    callees: CalleeResolver, project: ProjectIndex, func: cst.FunctionDef
) -> MethodQuery | None:
    """The caller search's question about `func`, a module-level function or a method:
    who in the project's other files calls it (a base class's `self.func()` included)?
    None for a nested function, which is called where it is defined. GL004/GL012's grad
    mode and impact ask the same one, so its answer is searched once."""
    index = callees.index
    cls = index.enclosing_class(func)
    if cls is None and index.scope_of(func) is not index.module:
        return None
    methods = callees.method_names(cls) if cls is not None else frozenset()
    return MethodQuery(
        project.path,
        cls.name.value if cls is not None else "",
        func.name.value,
        "",
        frozenset(),
        frozenset(),
        methods,
        callees.base_names(cls) if cls is not None else frozenset(),
        signature=signature_of(func, method=True) if cls is not None else None,
    )
