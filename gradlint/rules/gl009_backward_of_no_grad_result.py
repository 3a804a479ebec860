from __future__ import annotations

import libcst as cst

from gradlint.analysis.arguments import library_argument
from gradlint.analysis.grad_mode import GradMode
from gradlint.analysis.index import dotted_name, keyword_is_true
from gradlint.analysis.torch_api import (
    DATA_COPYING_FUNCTIONS,
    INDEX_FUNCTIONS,
    INDEX_METHODS,
    PYTHON_NUMBER_METHODS,
    SAVING_FUNCTIONS,
    SAVING_METHODS,
    TARGET_SAVING_LOSS_MODULES,
    TARGET_SAVING_LOSSES,
    VARIABLE_CLASSES,
)
from gradlint.analysis.values import TENSOR, Kind
from gradlint.diagnostics import Group
from gradlint.rules.base import Rule

_MESSAGE = (
    '`{call}` raises "element 0 of tensors does not require grad and does not have a '
    'grad_fn": `{root}` has no autograd history ({origin}); compute it where autograd '
    "records, from something that requires grad"
)
_INFERENCE_MESSAGE = (
    "`{tensor}` was made under `torch.inference_mode()`, and this operation must save it "
    'for backward because {other} requires grad: it raises "Inference tensors cannot be '
    'saved for backward"; make it under `torch.no_grad()` instead, or pass `{tensor}.clone()`'
)

_NEW_LEAF_MESSAGE = (
    "`{call}` stops at `{root}`, a new leaf made with `requires_grad=True` from data with "
    "no history ({origin}): nothing it was computed from gets a gradient, so the "
    "optimizer step applies nothing and the model does not train; compute the loss from "
    "the model's output itself"
)

_COPIED_LEAF_MESSAGE = (
    "`{call}` stops at `{root}`, a new leaf that `{maker}(...)` makes with "
    "`requires_grad=True`: it copies the data of `{copied}`, not its history, so nothing "
    "it was computed from gets a gradient, the optimizer step applies nothing and the "
    "model does not train; drop `{maker}(...)` and backpropagate `{copied}` as it is"
)

# The operators that save an operand for backward (the methods and functions are in
# torch_api, measured with them by tests/test_gl009_table.py).
SAVING_OPERATORS = (cst.Multiply, cst.Divide, cst.MatrixMultiply)
_FUNCTIONAL = "torch.nn.functional."


class BackwardOfNoGradResult(Rule):
    """
    ## What it does
    Flags `backward()` (also `torch.autograd.backward`, `accelerator.backward(loss)`)
    and `torch.autograd.grad(outputs, ...)` whose differentiated value is proven not to
    require grad: it was computed under `torch.no_grad()` or `torch.inference_mode()`,
    detached (`.detach()`, `.data`), rebuilt from numbers (`torch.tensor(...)` of
    `.item()` values), or made by an operation with no gradient (`argmax`, a
    comparison), and what it is computed from afterwards (also inside
    `torch.enable_grad()`) adds nothing that requires grad. Also flags, at the operation
    itself, a tensor made under `torch.inference_mode()` used together with one that
    requires grad in an operation that must save it for backward (`F.mse_loss(student(x),
    target)`, `weights * logits`, a trainable layer's forward).

    Also flags a backward of a new leaf rebuilt from such data with
    `requires_grad=True` (`loss = torch.tensor(out.item(), requires_grad=True)`,
    `Variable(loss.data, requires_grad=True)`), the usual way to silence the error
    above, in a function that steps an optimizer; and of one copied from the loss
    itself (`loss = Variable(loss, requires_grad=True)`), which keeps its data and drops
    its history just the same.

    ## Why is this bad?
    Autograd only records operations on tensors that require grad, and only while grad
    mode is on. A value computed under `no_grad` has no `grad_fn`, and `enable_grad()`
    around the later arithmetic does not bring the history back: there is none to
    bring. `loss.backward()` then raises `RuntimeError: element 0 of tensors does not
    require grad and does not have a grad_fn`. PyTorch's own documentation showed this
    shape as a "tip" for years: a value computed under `no_grad`, differentiated in an
    `enable_grad()` block. A loss made of `.item()` values, `argmax` hits or a detached
    prediction has the same problem: the gradient path to the parameters is cut before
    the loss. Rebuilding it as a leaf that requires grad makes the error go away and
    the bug silent: the backward stops at the new leaf, every parameter's `.grad` stays
    None (or zero), the optimizer step skips them, and the loss never goes down.

    `inference_mode` goes further than `no_grad`: its tensors are *inference tensors*,
    and autograd refuses to save one for backward. Using a teacher's output made under
    `inference_mode` as the target of `F.mse_loss` against a student's output raises
    `RuntimeError: Inference tensors cannot be saved for backward` at the loss, even
    though the target itself needs no gradient. Under `no_grad` the same code works.

    Flagged only when gradlint can prove it: the value of a name comes from every
    assignment that can reach the call, and anything it cannot see through (a model or
    helper whose forward is out of sight, a function argument, an attribute) may carry a
    graph. Not flagged: `y.requires_grad_()` after the block (the input of a Grad-CAM or
    an adversarial attack), a model run inside `enable_grad()` within a `no_grad`
    block, `no_grad` values used only as targets of a loss against a model's output
    (distillation with a `no_grad` teacher, DQN and SAC target networks), a
    `.grad` or `autograd.grad` result (it may carry history with `create_graph=True`),
    and operations on inference tensors that save nothing (`+`, `-`, `l1_loss`).

    ## Example
    ```python
    import torch
    from torch import nn

    model = nn.Linear(8, 1)
    x = torch.randn(16, 8)
    with torch.no_grad():
        y = model(x)
    with torch.enable_grad():
        loss = (y * 2).sum()
        loss.backward()
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn

    model = nn.Linear(8, 1)
    x = torch.randn(16, 8)
    y = model(x)
    loss = (y * 2).sum()
    loss.backward()
    ```

    ## Fix safety
    There is no fix: whether the forward should record (move it out of `no_grad`),
    the input should require grad (`y.requires_grad_()`, to differentiate with respect
    to it), or the loss should be built from other tensors is a decision about what
    trains. For an inference tensor, `torch.no_grad()` instead of `inference_mode()` or
    a `.clone()` is a one-line change that keeps the numbers.

    ## On real code
    In preview. On the development corpus (29 public repositories, notebooks included;
    `bench/real-code/`) it reports nothing: none of the differentiation roots there
    (286 in the first 28 repositories) is provably without history, and the 8 correct
    look-alikes recorded in the ledger (distillation, MoCo, DQN target networks,
    detached GAN inputs, EMA models) stay silent. With no finding to judge, its precision on real code is not measured yet.

    ## References
    - [Autograd mechanics: locally disabling gradient computation](https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation)
    - [Autograd mechanics: inference mode](https://pytorch.org/docs/stable/notes/autograd.html#inference-mode)
    - [`torch.inference_mode`](https://docs.pytorch.org/docs/stable/generated/torch.autograd.grad_mode.inference_mode.html)
    - [`torch.enable_grad`](https://pytorch.org/docs/stable/generated/torch.enable_grad.html)
    """

    code = "GL009"
    name = "backward-of-no-grad-result"
    message = _MESSAGE
    trigger_tokens = ("backward", "autograd", "inference_mode")

    def __init__(self, context) -> None:
        super().__init__(context)
        source = context.source
        # Cheap text gates, per file: each check needs its API named somewhere.
        self._differentiates = "backward" in source or "autograd" in source
        self._inference = "inference_mode" in source

    # -- differentiating a value without history ----------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        if self._differentiates:
            self._check_differentiation(node)
        if self._inference:
            self._check_inference_call(node)

    def _check_differentiation(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute:
            if "backward" not in func.attr.value and func.attr.value != "grad":
                return
        elif type(func) is not cst.Name:
            return
        facts = self.facts
        event = facts.autograd.event(node)
        if event is None or event.kind not in ("backward", "grad") or event.root_expr is None:
            return
        root = event.root_expr
        values = facts.values
        if event.kind == "backward" and self._check_new_leaf(node, root):
            return
        if values.of_expr(root, node) != TENSOR:
            return  # may require grad, or is not even a tensor (another bug)
        if any(values.mutated_in_place(name, node) for name in facts.flow.reads(root)):
            return  # `y.requires_grad_()`, `y.copy_(z)` may give it grad
        found = self._origin(root, node)
        if found is None:
            return
        origin, where = found
        call = "torch.autograd.grad(...)" if event.kind == "grad" else _callee(node)
        related = [] if where is node else [(where, "the value loses its history here")]
        self.report(
            node, self.message_for(call=call, root=_short(root), origin=origin), related=related
        )

    def _check_new_leaf(self, node: cst.Call, root: cst.BaseExpression) -> bool:
        """`loss = torch.tensor(out.item(), requires_grad=True)` (or `Variable(x.data,
        requires_grad=True)`), then `loss.backward()`: the backward runs, but stops at
        the new leaf, so nothing upstream gets a gradient. Reported when the leaf's data
        visibly went through a cut (it was computed from tensors), and an optimizer step
        in the same function is left with nothing to apply. True when reported."""
        facts = self.facts
        name = dotted_name(root)
        if name is None:
            return False
        made = facts.values.reaching_expressions(name, node)
        if len(made) != 1 or type(made[0]) is not cst.Call:
            return False
        value = made[0]
        qualified = facts.qualified_name(value.func) or ""
        if qualified not in DATA_COPYING_FUNCTIONS and qualified not in VARIABLE_CLASSES:
            return False
        if not keyword_is_true(value, "requires_grad") or not value.args:
            return False
        copied = value.args[0].value
        cut = _cut_in(copied, facts)
        if cut is None and not (
            facts.values.of_expr(copied, value) & {Kind.GRAPH, Kind.LEAF, Kind.UNKNOWN}
        ):
            return False  # `torch.tensor([1.0, 2.0], requires_grad=True)`: a leaf of numbers
        scope = facts.index.scope_of(node)
        if cut is None and (node.args or facts.optimizers.steps_only_tensors(scope)):
            # `z.backward(grad)` of a leaf an optimizer steps (`SGD([z])`): the leaf is
            # the variable being fitted, given its gradient from outside
            return False
        body = scope.body if type(scope) is cst.FunctionDef else scope
        steps = [
            n
            for n in facts.index.walk(body)
            if type(n) is cst.Call
            and (event := facts.autograd.event(n)) is not None
            and event.kind == "step"
        ]
        if not steps:
            return False
        if cut is not None:
            message = _NEW_LEAF_MESSAGE.format(call=_callee(node), root=_short(root), origin=cut)
        else:
            # `Variable(loss, requires_grad=True)`: the new leaf copies the loss's data,
            # not its history (measured on torch 2.13: no grad_fn, `is_leaf` True), so a
            # backward of it stops there whatever the loss was computed from
            message = _COPIED_LEAF_MESSAGE.format(
                call=_callee(node),
                root=_short(root),
                maker=dotted_name(value.func) or "tensor",
                copied=_short(copied),
            )
        self.report(
            node,
            message,
            related=[(value, "a new leaf is made here"), (steps[0], "this step applies nothing")],
            group=Group.WRONG,
        )
        return True

    def _takes_a_derivative(self, call: cst.Call) -> bool:
        """`torch.autograd.grad(...)`, or a call of this file's helper that calls it
        (`gradient(u, x)` in a PINN)."""
        facts = self.facts
        if facts.autograd.is_autograd_grad(call):
            return True
        helper = facts.summaries.function_run_by(call)
        return helper is not None and any(
            type(n) is cst.Call and facts.autograd.is_autograd_grad(n)
            for n in facts.index.walk(helper.body)
        )

    def _origin(self, root: cst.CSTNode, use: cst.CSTNode) -> tuple[str, cst.CSTNode] | None:
        """Why the value has no history, in the user's terms, and where: the first cut
        found in the expression or in the assignments that reach it. None when the value is a first
        derivative (`autograd.grad` without `create_graph=True`) differentiated again:
        that is GL005's finding, reported at the derivative, not twice."""
        facts = self.facts
        work: list[tuple[cst.CSTNode, cst.CSTNode, str | None]] = [(root, use, None)]
        seen: set[cst.CSTNode] = set()
        found: str | None = None
        found_at: cst.CSTNode = use
        while work and len(seen) < 50:
            expr, at, name = work.pop(0)
            if expr in seen:
                continue
            seen.add(expr)
            if any(
                type(n) is cst.Call and self._takes_a_derivative(n) for n in facts.index.walk(expr)
            ):
                return None
            if found is None and name is not None and facts.mode_at(at) is GradMode.NOT_RECORDING:
                found_at = at
                if facts.grad_mode.in_inference_mode(at):
                    found = f"`{name}` is computed under `torch.inference_mode()`"
                else:
                    found = f"`{name}` is computed while autograd is off (`no_grad`)"
            if found is None:
                found = _cut_in(expr, facts)
                if found is not None:
                    found_at = at
            for read in sorted(facts.flow.reads(expr)):
                bindings = facts.values.bindings_of(read, at)
                for binding in facts.index.reaching(bindings, at):
                    if type(binding) is cst.Assign:
                        work.append((binding.value, binding, read))
        if found is None:
            return "nothing it is computed from requires grad", use
        return found, found_at

    # -- inference tensors saved for backward -------------------------------------------

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self._inference and isinstance(node.operator, SAVING_OPERATORS):
            self._check_pair(node, node.left, node.right, either=True)

    def _check_inference_call(self, node: cst.Call) -> None:
        facts = self.facts
        func = node.func
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if any(a.star for a in node.args) or not positional:
            return
        values = facts.values
        operands = [a.value for a in node.args]
        if type(func) is cst.Attribute:
            operands.append(func.value)
        if not any(values.is_inference_tensor(o, node) for o in operands):
            return  # the cheap question first: most calls touch no inference tensor
        if type(func) is cst.Attribute and func.attr.value in SAVING_METHODS:
            qualified = facts.qualified_name(func) or ""
            if qualified in SAVING_FUNCTIONS and len(positional) == 2:
                self._check_pair(node, positional[0], positional[1], either=True)
            elif not qualified.startswith("torch.") and len(positional) == 1:
                self._check_pair(node, func.value, positional[0], either=True)
            return
        qualified = facts.qualified_name(func) or ""
        if qualified.startswith(_FUNCTIONAL):
            if qualified[len(_FUNCTIONAL) :] in TARGET_SAVING_LOSSES:
                target = library_argument(node, "target", 1)
                loss_input = library_argument(node, "input", 0)
                if target is not None and loss_input is not None:
                    self._check_pair(node, loss_input.value, target.value, either=False)
            return
        layer = facts.tensors.module_class(func, node) or ""
        if layer.startswith("torch.nn.") and layer.rsplit(".", 1)[-1] in (
            TARGET_SAVING_LOSS_MODULES
        ):
            target = library_argument(node, "target", 1)
            loss_input = library_argument(node, "input", 0)
            if target is not None and loss_input is not None:
                self._check_pair(node, loss_input.value, target.value, either=False)
            return
        if len(positional) == 1 and facts.values.trainable_layer(func, node):
            if self._recording(node) and facts.values.is_inference_tensor(positional[0], node):
                other = f"the weights of `{dotted_name(func)}`"
                self._report_inference(node, positional[0], other)

    def _check_pair(
        self, node: cst.CSTNode, first: cst.CSTNode, second: cst.CSTNode, *, either: bool
    ) -> None:
        """`first` requires grad and `second` is an inference tensor (or, for a
        symmetric operation, the other way round)."""
        values = self.facts.values
        if not (
            values.is_inference_tensor(first, node) or values.is_inference_tensor(second, node)
        ):
            return
        if not self._recording(node):
            return
        pairs = [(first, second), (second, first)] if either else [(first, second)]
        for grad_side, inference_side in pairs:
            if values.is_inference_tensor(inference_side, node) and self._requires_grad(
                grad_side, node
            ):
                self._report_inference(node, inference_side, f"`{_short(grad_side)}`")
                return

    def _requires_grad(self, expr: cst.CSTNode, use: cst.CSTNode) -> bool:
        value = self.facts.values.of_expr(expr, use)
        return bool(value) and value <= {Kind.LEAF, Kind.GRAPH}

    def _recording(self, node: cst.CSTNode) -> bool:
        facts = self.facts
        return facts.mode_at(node) is GradMode.RECORDING and not (
            facts.grad_mode.in_inference_mode(node)
        )

    def _report_inference(self, node: cst.CSTNode, tensor: cst.CSTNode, other: str) -> None:
        self.report(node, _INFERENCE_MESSAGE.format(tensor=_short(tensor), other=other))


def _cut_in(expr: cst.CSTNode, facts) -> str | None:
    """A visible graph cut inside `expr`, described."""
    for node in facts.index.walk(expr):
        if type(node) is cst.Call:
            func = node.func
            if type(func) is cst.Attribute:
                method = func.attr.value
                if method == "detach":
                    return f"`{_short(func.value)}` is detached"
                if method in PYTHON_NUMBER_METHODS:
                    return f"`.{method}()` turns it into a plain number"
                if method in INDEX_METHODS or method == "argsort":
                    return f"`{method}` has no gradient"
            qualified = facts.qualified_name(func) or ""
            if qualified in DATA_COPYING_FUNCTIONS:
                return "`torch.tensor(...)` makes a new tensor from its data"
            if qualified in INDEX_FUNCTIONS:
                return f"`{qualified}` has no gradient"
        elif type(node) is cst.Attribute and node.attr.value == "data":
            return f"`{_short(node)}` is detached from the graph"
        elif type(node) is cst.Comparison:
            return "a comparison has no gradient"
    return None


def _callee(call: cst.Call) -> str:
    name = dotted_name(call.func)
    if name is None and type(call.func) is cst.Attribute:
        name = f"{_short(call.func.value)}.{call.func.attr.value}"
    return f"{name or 'backward'}()"


def _short(node: cst.CSTNode, limit: int = 40) -> str:
    text = " ".join(cst.Module([]).code_for_node(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
