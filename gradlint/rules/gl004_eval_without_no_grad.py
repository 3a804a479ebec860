from __future__ import annotations

import libcst as cst

from gradlint.analysis import GradMode, dotted_name
from gradlint.analysis.dataflow import target_names
from gradlint.fix_builders import wrap_in_no_grad
from gradlint.rules.base import Rule


def _literal(expr: cst.CSTNode) -> bool | None:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


# Methods through which a value outlives the statement that computed it.
_STORING_METHODS = frozenset({"append", "extend", "insert", "add", "put", "update", "setdefault"})


class EvalWithoutNoGrad(Rule):
    """
    ## What it does
    Flags a forward pass of a model that was put in evaluation mode (`model.eval()` or
    `model.train(False)`) while autograd is still recording, when the result is never
    differentiated in that function.

    ## Why is this bad?
    `eval()` only switches layers such as dropout and batch norm to inference
    behaviour; it does not turn off autograd. Every evaluation forward still builds a
    graph and keeps its activations alive as long as the outputs live: one batch of
    activations of extra peak memory, and unbounded growth when outputs or losses are
    kept across batches (`preds.append(model(x))`). PyTorch's autograd notes: "Evaluation
    mode is not a mechanism to locally disable gradient computation."

    Not flagged: forwards inside `torch.no_grad()` / `torch.inference_mode()` (blocks,
    decorators, or a helper whose every caller in the module is guarded), and forwards
    whose result flows into `backward()` or `torch.autograd.grad` (eval mode used on
    purpose to freeze batch norm while fine-tuning, adversarial examples, saliency).

    ## Example
    ```python
    import torch
    from torch import nn

    model = nn.Linear(4, 2)
    model.eval()
    logits = model(torch.randn(8, 4))
    accuracy = (logits.argmax(1) == 0).float().mean().item()
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn

    model = nn.Linear(4, 2)
    model.eval()
    with torch.no_grad():
        logits = model(torch.randn(8, 4))
    accuracy = (logits.argmax(1) == 0).float().mean().item()
    ```

    ## Fix safety
    The fix wraps the statement in `with torch.no_grad():`. It is unsafe: if the result
    is differentiated somewhere gradlint cannot see (returned to a caller that calls
    `backward()`), that gradient disappears.

    ## References
    - [Autograd mechanics: evaluation mode](https://pytorch.org/docs/stable/notes/autograd.html#evaluation-mode-nn-module-eval)
    - [`torch.inference_mode`](https://pytorch.org/docs/stable/generated/torch.autograd.grad_mode.inference_mode.html)
    """

    code = "GL004"
    name = "eval-without-no-grad"
    message = "`{model}` is in eval mode but this forward pass records autograd history that is never used; run inference under `torch.no_grad()` or `torch.inference_mode()`"
    fix_title = "Wrap the inference in `with torch.no_grad():`"
    trigger_tokens = (".eval()", ".train(False", ".train(mode=False")

    def __init__(self, context) -> None:
        super().__init__(context)
        self._mode_switches: list[tuple[cst.Call, str, bool]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        model = dotted_name(func.value)
        if model is None:
            return

        method = func.attr.value
        if method == "eval" and not node.args:
            self._mode_switches.append((node, model, True))
        elif method == "train":
            flag = _literal(node.args[0].value) if node.args else True
            if flag is not None:
                self._mode_switches.append((node, model, not flag))

    def leave_Module(self, original_node: cst.Module) -> None:
        if not any(is_eval for _, _, is_eval in self._mode_switches):
            return
        facts = self.facts
        index = facts.index
        switches_by_scope: dict[cst.CSTNode, list[tuple[int, str, bool]]] = {}
        for call, model, is_eval in self._mode_switches:
            # `model.eval()` as a statement switches the model; `jit.freeze(m.eval())`
            # makes a new object whose name we do not follow.
            if not isinstance(index.parent.get(call), cst.Expr):
                continue
            switches_by_scope.setdefault(index.scope_of(call), []).append(
                (index.order[call], model, is_eval)
            )
        for scope, switches in switches_by_scope.items():
            models = {model for _, model, is_eval in switches if is_eval}
            for call in self._forward_calls(scope, models):
                model = self._called_model(call)
                if self._latest_switch(switches, model, index.order[call]) is not True:
                    continue
                if facts.mode_at(call) is not GradMode.RECORDING:
                    continue
                if not self._is_retained(call) or self._is_differentiated(call, scope):
                    continue
                statement = index.statement_of(call)
                self.report(
                    call,
                    self.message.format(model=model),
                    fix=wrap_in_no_grad(self.context, statement, self.fix_title),
                )

    @staticmethod
    def _called_model(call: cst.Call) -> str | None:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "forward":
            return dotted_name(func.value)
        return dotted_name(func)

    def _forward_calls(self, scope: cst.CSTNode, models: set[str]):
        index = self.facts.index
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        for node in index.walk(body):
            if isinstance(node, cst.Call) and self._called_model(node) in models:
                yield node

    @staticmethod
    def _latest_switch(switches, model: str, at: int) -> bool | None:
        """Is `model` in eval mode at textual position `at` (the last switch before it)?"""
        latest = None
        latest_order = -1
        for order, name, is_eval in switches:
            if name == model and latest_order < order < at:
                latest, latest_order = is_eval, order
        return latest

    def _is_retained(self, call: cst.Call) -> bool:
        """Does the output outlive its statement (assigned, returned, yielded, stored)?
        `self.assertEqual(model(x), ref)` or a bare `model(x)` drops it at once."""
        index = self.facts.index
        statement = index.statement_of(call)
        if not isinstance(statement, cst.Expr):
            return True
        node: cst.CSTNode = call
        for anc in index.ancestors(call):
            if anc is statement:
                return False
            if isinstance(anc, (cst.Yield, cst.Await)):
                return True
            if (
                isinstance(anc, cst.Call)
                and anc is not call
                and isinstance(anc.func, cst.Attribute)
                and anc.func.attr.value in _STORING_METHODS
                and node is not anc.func
            ):
                return True
            node = anc
        return False

    def _is_differentiated(self, call: cst.Call, scope: cst.CSTNode) -> bool:
        facts = self.facts
        index = facts.index
        region = facts.loops.scope_facts(scope)
        if not region.events:
            return False
        for event in region.events:
            if event.root_expr is not None and index.is_inside(call, event.root_expr):
                return True
            if event.kind == "grad" and index.is_inside(call, event.call):
                return True
        statement = index.statement_of(call)
        produced: set[str] = set()
        if isinstance(statement, cst.Assign):
            for target in statement.targets:
                produced |= set(target_names(target.target))
        elif isinstance(statement, (cst.AnnAssign, cst.AugAssign)):
            produced |= set(target_names(statement.target))
        elif isinstance(statement, cst.Expr):
            # `losses.append(crit(model(x), y))` then a backward of the list
            value = statement.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
                receiver = dotted_name(value.func.value)
                if receiver:
                    produced.add(receiver)
        if not produced:
            return False
        return bool(region.closure(region.roots) & produced)
