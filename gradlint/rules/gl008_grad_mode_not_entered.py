from __future__ import annotations

import libcst as cst

from gradlint.analysis.grad_mode import GradMode
from gradlint.analysis.index import bool_literal, dotted_name
from gradlint.analysis.torch_api import (
    GRAD_MODE_MANAGERS,
    GRAD_MODE_NAMES,
    VARIABLE_CLASSES,
)
from gradlint.diagnostics import Applicability, Edit, Fix, Group, Related
from gradlint.fix_builders import render
from gradlint.rules.base import Rule
from gradlint.rules.explain import at_call_elsewhere

_NOT_CALLED = (
    "`{name}` is used without calling it: `with {name}:` raises `TypeError: 'type' object "
    "does not support the context manager protocol`; write `with {name}():`"
)
_NOT_CALLED_SETTER = (
    "`{name}` is used without calling it: `with {name}:` raises `TypeError: 'type' object "
    "does not support the context manager protocol`; pass the mode: `with {name}(False):`"
)
_BARE_CALL = (
    "`{call}` on its own line does nothing: the context manager is created and dropped "
    "without being entered, so grad mode does not change; put the code it should cover "
    "under `with {call}:`"
)
_BARE_NAME = (
    "`{name}` on its own line does nothing, so grad mode does not change; put the code it "
    "should cover under `with {name}():`"
)
_VOLATILE = (
    "`volatile=True` has had no effect since PyTorch 0.4: autograd still records everything "
    "computed from this Variable; run that code under `with torch.no_grad():` instead"
)

_VOLATILE_PASSED = (
    "`volatile={name}` has had no effect since PyTorch 0.4, and a caller makes it `True`: "
    "autograd still records everything computed from this Variable; run that code under "
    "`with torch.no_grad():` instead"
)

_VOLATILE_HANDED = (
    "`volatile=True` has had no effect since PyTorch 0.4: `{name}` hands it to a "
    "`Variable`, which ignores it, so autograd still records everything computed from the "
    "result; run that code under `with torch.no_grad():` instead"
)


class GradModeNotEntered(Rule):
    """
    ## What it does
    Flags a grad-mode switch that never takes effect: `with torch.no_grad:` (also
    `torch.enable_grad`, `torch.inference_mode`, `torch.set_grad_enabled`) without the
    call; `torch.no_grad()`, `torch.inference_mode()` or `torch.enable_grad()` written as
    a statement of its own; and `Variable(x, volatile=True)`, also through a helper.

    The helper is old code's `def to_tensor(x, volatile=False): return Variable(x,
    volatile=volatile)`: its `Variable` is flagged when a caller (in this file or
    another) passes `volatile=True`, with that caller shown, and so is that caller's
    `to_tensor(x, volatile=True)`.

    ## Why is this bad?
    `torch.no_grad` is a class, and a class is not a context manager:
    `with torch.no_grad:` raises `TypeError: 'type' object does not support the context
    manager protocol` every time it is reached. The bare statement `torch.no_grad()` is
    worse because it is silent: it builds a context manager and drops it without
    entering it, so every operation after it is still recorded, the very memory and time
    the line was meant to save (the eval outputs keep their `grad_fn`).
    `volatile=True` was PyTorch 0.3's way to say "record nothing computed from this
    input"; since 0.4 it is ignored with only a `UserWarning: volatile was removed and now
    has no effect`, so old evaluation and acting code builds a graph on every call.

    Not flagged: `@torch.no_grad` used as a decorator without the call (valid since
    PyTorch 2.1), `torch.set_grad_enabled(False)` as a statement (that call does switch
    the mode, for the rest of the thread), a context manager stored first and entered
    later (`ctx = torch.no_grad()` then `with ctx:`), a name the file rebinds after
    importing it, `volatile=False`, a `volatile=` flag that is not the literal `True`
    and that no caller in sight passes as `True` (`volatile=evaluation` with
    `evaluation=args.eval`), or a volatile Variable made where autograd is already off.

    ## Example
    ```python
    import torch
    from torch import nn

    model = nn.Linear(4, 2)
    x = torch.randn(8, 4)
    with torch.no_grad:
        logits = model(x)
    torch.no_grad()
    scores = model(x)
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn

    model = nn.Linear(4, 2)
    x = torch.randn(8, 4)
    with torch.no_grad():
        logits = model(x)
    with torch.no_grad():
        scores = model(x)
    ```

    ## Fix safety
    The fix adds the missing `()` to `with torch.no_grad:` (and to `enable_grad` and
    `inference_mode`). It is safe: the statement as written raises `TypeError` whenever
    it runs, so no working program depends on it, and the call is the only thing the
    line can mean. `with torch.set_grad_enabled:` gets no fix, since the flag it lacks
    is not knowable.

    Bare statements and `volatile=True` get no fix: the code they were meant to cover
    (the rest of the block? the next forward? everything computed from the Variable?)
    cannot be read off the source, and dropping `volatile=True` alone would only hide
    the evidence of intent while the graph is still recorded.

    ## References
    - [`torch.no_grad`](https://pytorch.org/docs/stable/generated/torch.no_grad.html)
    - [Autograd mechanics: locally disabling gradient computation](https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation)
    - [PyTorch 0.4.0 migration guide: `volatile` is deprecated and has no effect](https://pytorch.org/blog/pytorch-0_4_0-migration-guide/)
    - [pytorch/pytorch#107086: grad-mode decorators without parentheses](https://github.com/pytorch/pytorch/pull/107086)
    """

    code = "GL008"
    name = "grad-mode-not-entered"
    message = _NOT_CALLED
    fix_title = "Add the missing `()` so that `with` enters the manager"
    _fix_title_for = "Call `{name}()` so that `with` enters it"
    fix_applicability = Applicability.SAFE
    trigger_tokens = (*sorted(GRAD_MODE_NAMES), "volatile")

    # -- `with torch.no_grad:` ---------------------------------------------------------

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            expr = item.item
            if type(expr) is cst.Call:
                continue
            api = self._grad_api(expr)
            if api is None:
                continue
            name = dotted_name(expr) or api
            if api == "set_grad_enabled":
                self.report(expr, _NOT_CALLED_SETTER.format(name=name))
                continue
            _, end = self.context.position_of(expr)
            fix = Fix(
                self._fix_title_for.format(name=name), (Edit(end, end, "()"),), Applicability.SAFE
            )
            self.report(expr, _NOT_CALLED.format(name=name), fix=fix)

    # -- `torch.no_grad()` as a statement ------------------------------------------------

    def visit_Expr(self, node: cst.Expr) -> None:
        value = node.value
        if type(value) is cst.Call:
            api = self._grad_api(value.func)
            if api in GRAD_MODE_MANAGERS:
                call = " ".join(render(value).split())
                self.report(value, _BARE_CALL.format(call=call), group=Group.WASTE)
        elif isinstance(value, (cst.Name, cst.Attribute)):
            api = self._grad_api(value)
            if api in GRAD_MODE_MANAGERS:
                self.report(
                    value, _BARE_NAME.format(name=dotted_name(value) or api), group=Group.WASTE
                )

    # -- `Variable(x, volatile=True)` ----------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        volatile = next(
            (a for a in node.args if a.keyword is not None and a.keyword.value == "volatile"),
            None,
        )
        if volatile is None:
            return
        related: list[tuple[cst.CSTNode, str] | Related] = []
        if bool_literal(volatile.value) is not True:
            # `Variable(x, volatile=volatile)` in `to_tensor(x, volatile=False)`: the
            # callers that pass True are where the no-op is asked for
            related = self._callers_passing_true(volatile.value, node)
            if not related:
                return
        message = _VOLATILE
        if related:
            message = _VOLATILE_PASSED.format(name=cst.Module([]).code_for_node(volatile.value))
        if not self.facts.values.variable_constructor(node.func, node):
            if related or not self._hands_volatile_on(node):
                return
            message = _VOLATILE_HANDED.format(name=dotted_name(node.func))
        if self.facts.mode_at(node) is not GradMode.RECORDING:
            return  # already under no_grad (or a mode we cannot tell): nothing to miss
        self.report(volatile, message, group=Group.WASTE, related=related)

    def _callers_passing_true(
        self, value: cst.BaseExpression, use: cst.CSTNode
    ) -> list[tuple[cst.CSTNode, str] | Related]:
        """The calls of the enclosing function, in this file or another, that give the
        parameter `value` names the literal True with autograd recording there."""
        func = self.facts.index.scope_of(use)
        inverted = False
        if type(value) is cst.UnaryOperation and type(value.operator) is cst.Not:
            value, inverted = value.expression, True  # `volatile=(not do_train)`
        if type(value) is not cst.Name or type(func) is not cst.FunctionDef:
            return []
        facts = self.facts
        # `volatile=volatile`, or `volatile=not_training` after `not_training = not
        # training`: the caller's flag, maybe negated
        alias = facts.path_conditions.flag_alias(func, value.value)
        if alias is None:
            return []
        flag, negated = alias[0], alias[1] != inverted
        found: list[tuple[cst.CSTNode, str] | Related] = []
        label = f"called here with `{flag}={not negated}`, with autograd recording"
        for caller in facts.path_conditions.caller_values(func, flag, facts.grad_mode):
            constant = caller.value.constant
            if (
                not caller.recording
                or not constant.is_literal
                or constant.literal is not (not negated)
            ):
                continue
            site = caller.site
            if isinstance(site, cst.Call):
                found.append((site, label + (" (its default)" if caller.value.default else "")))
            else:
                found.append(at_call_elsewhere(label, site))
        return found

    def _hands_volatile_on(self, call: cst.Call) -> bool:
        """Does the call run a function of the project that passes its own `volatile`
        parameter, unchanged, as a Variable's `volatile=` (pytorch-ddpg's `to_tensor(x,
        volatile=True)`, with `to_tensor` in `util.py`)?"""
        facts = self.facts
        func = facts.summaries.resolve(call)
        if func is None:
            external = facts.summaries.resolve_external(call)
            return external is not None and "volatile" in external.volatile_params
        if "volatile" not in facts.path_conditions.flags_of(func):
            return False
        index = facts.index
        for node in index.walk(func.body):
            if type(node) is cst.Call and index.qualified_name(node.func) in VARIABLE_CLASSES:
                for arg in node.args:
                    keyword, value = arg.keyword, arg.value
                    if keyword is not None and keyword.value == "volatile":
                        if type(value) is cst.Name and value.value == "volatile":
                            return True
        return False

    # -- names -----------------------------------------------------------------------------

    def _grad_api(self, expr: cst.CSTNode) -> str | None:
        """The grad-mode API `expr` names, when its root name is only ever an import
        (or not bound here at all, like `torch` in a notebook cell)."""
        api = self.facts.grad_mode.api_of(expr)
        if api is None:
            return None
        name = dotted_name(expr)
        if name is None or not self.facts.values.bound_only_by_imports(name.split(".")[0], expr):
            return None
        return api
