"""What a function does to autograd, summarised once so that a call site can be judged
without re-reading the body: which of its parameters it runs a forward of, whether it
differentiates, whether it accumulates into `.grad`, steps, or clears gradients, and the
callee a call resolves to.

Summaries are per module today: a call resolves to a function of the same file (a
module-level or nested function by name, a method through `self.`/`cls.`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from gradlint.analysis.autograd_calls import AutogradCalls
from gradlint.analysis.grad_clears import GradClear, GradClearing
from gradlint.analysis.index import FileIndex, dotted_name


@dataclass
class FunctionSummary:
    function: cst.FunctionDef
    params: list[str] = field(default_factory=list)
    # Parameters the body calls (`model(x)`, `model.forward(x)`): forwards of arguments.
    forwarded_params: set[str] = field(default_factory=set)
    forwards: dict[str, list[cst.Call]] = field(default_factory=dict)
    # backward / autograd.grad / an optimizer step somewhere in the body.
    differentiates: bool = False
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

    def forwarded_argument(self, call: cst.Call, param: str) -> cst.BaseExpression | None:
        """The argument expression a call passes for `param`."""
        try:
            position = self.params.index(param)
        except ValueError:
            return None
        if self.params and self.params[0] in ("self", "cls"):
            position -= 1
        for i, arg in enumerate(call.args):
            if arg.keyword is not None:
                if arg.keyword.value == param:
                    return arg.value
            elif arg.star:
                return None
            elif i == position:
                return arg.value
        return None


class FunctionSummaries:
    def __init__(
        self, index: FileIndex, autograd: AutogradCalls, clearing: GradClearing | None = None
    ) -> None:
        self.index = index
        self.autograd = autograd
        self.clearing = clearing if clearing is not None else GradClearing(index)
        self._summaries: dict[cst.FunctionDef, FunctionSummary] = {}
        self._by_name: dict[str, list[cst.FunctionDef]] | None = None
        self._in_progress: set[cst.FunctionDef] = set()

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
        summary = FunctionSummary(func, params)
        candidates = set(params) - {"self", "cls"}
        for node in self.index.walk(func.body):
            if not isinstance(node, cst.Call):
                continue
            callee = node.func
            if isinstance(callee, cst.Attribute) and callee.attr.value == "forward":
                callee = callee.value
            if isinstance(callee, cst.Name) and callee.value in candidates:
                summary.forwarded_params.add(callee.value)
                summary.forwards.setdefault(callee.value, []).append(node)
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
        for node in self.index.walk(func.body):
            clear = self.clearing.clear_at(node)
            if clear is not None:
                summary.clears.append(clear)
            elif self.clearing.update_at(node) is not None:
                summary.updates.append(node)
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
        if self._by_name is None:
            self._by_name = {}
            for func in self.index.functions:
                self._by_name.setdefault(func.name.value, []).append(func)
        target = call.func
        if isinstance(target, cst.Name):
            candidates = [
                f
                for f in self._by_name.get(target.value, ())
                if self.index.enclosing_class(f) is None
            ]
            return candidates[0] if len(candidates) == 1 else None
        if isinstance(target, cst.Attribute) and dotted_name(target.value) in ("self", "cls"):
            cls = None
            for anc in self.index.ancestors(call):
                if isinstance(anc, cst.ClassDef):
                    cls = anc
                    break
            if cls is None:
                return None
            methods = [
                f
                for f in self._by_name.get(target.attr.value, ())
                if self.index.enclosing_class(f) is cls
            ]
            return methods[0] if len(methods) == 1 else None
        return None
