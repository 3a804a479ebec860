from __future__ import annotations

from typing import TYPE_CHECKING, cast

import libcst as cst

from gradlint.analysis.arguments import library_argument
from gradlint.analysis.bindings import assigned_names
from gradlint.analysis.index import bool_literal
from gradlint.diagnostics import Edit
from gradlint.fix_builders import add_keyword_argument
from gradlint.rules.base import Rule
from gradlint.rules.explain import at_call_elsewhere

if TYPE_CHECKING:
    from gradlint.analysis.project import MethodCall

# torch.autograd.grad(outputs, inputs, grad_outputs, retain_graph, create_graph, ...)
_CREATE_GRAPH_POSITION = 4


def _between(index, after: int, before: int, first: cst.Call):
    statement = index.statement_of(first)

    def keep(binding) -> bool:
        if binding.statement is statement:
            return True
        return after < index.order[binding.statement] < before

    return keep


class DetachedHigherOrderGrad(Rule):
    """
    ## What it does
    Flags a first derivative taken with `torch.autograd.grad(...)` without
    `create_graph=True`, or detached right after, whose result is then differentiated
    again: by a second `torch.autograd.grad` (Laplacians and Hessians in PINNs) or by
    `backward()` of a loss built from it (WGAN-GP gradient penalties, MAML inner steps,
    input-gradient regularisers). The derivative may be taken in a helper that returns
    it or what it computes (`gradient_penalty(D, real, fake)`, a PINN's `gradient(y,
    x)`), and differentiated again where the helper is called, in this file or in
    another file of the project: the finding is then on the helper's `grad`, with the
    call that differentiates it beside it.

    ## Why is this bad?
    Without `create_graph=True` autograd does not record how the gradient was computed,
    so the gradient is a constant to everything after it. A second `grad` of it raises
    `RuntimeError: element 0 of tensors does not require grad and does not have a
    grad_fn`; worse, when another differentiable term is present, the penalty or
    residual silently contributes no gradient and training quietly optimises the wrong
    objective.

    Not flagged: `create_graph=True` with `.detach()` only for logging or plotting,
    first derivatives that are never differentiated again (saliency maps, attacks), and
    an explicit `create_graph=False`, which states a deliberate first-order choice such
    as first-order MAML.

    ## Example
    ```python
    import torch

    x = torch.linspace(0.0, 1.0, 16, requires_grad=True)
    u = torch.sin(3.0 * x)
    u_x = torch.autograd.grad(u.sum(), x)[0]
    u_xx = torch.autograd.grad(u_x.sum(), x)[0]
    ```

    ## Use instead
    ```python
    import torch

    x = torch.linspace(0.0, 1.0, 16, requires_grad=True)
    u = torch.sin(3.0 * x)
    u_x = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
    u_xx = torch.autograd.grad(u_x.sum(), x)[0]
    ```

    ## Fix safety
    The fix adds `create_graph=True` (or removes the `.detach()` that follows the call).
    It is unsafe: it makes the second derivative flow, which is the intent, but it
    costs memory and changes the gradients the optimizer sees.

    ## References
    - [`torch.autograd.grad`](https://pytorch.org/docs/stable/generated/torch.autograd.grad.html)
    - [Double backward with custom functions](https://pytorch.org/tutorials/intermediate/custom_function_double_backward_tutorial.html)
    """

    code = "GL005"
    name = "detached-higher-order-grad"
    message = "This gradient is differentiated again later, but it is computed {why}, so the second derivative is lost"
    fix_title = "Compute the first derivative with `create_graph=True`"
    trigger_tokens = ("autograd",)

    def __init__(self, context) -> None:
        super().__init__(context)
        self._grad_calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        # Resolved at the end: `G(...)` may be `from torch.autograd import grad as G`.
        if isinstance(node.func, (cst.Name, cst.Attribute)):
            self._grad_calls.append(node)

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._grad_calls:
            return
        autograd = self.facts.autograd
        for call in self._grad_calls:
            if autograd.is_autograd_grad(call):
                self._check(call)

    def _check(self, call: cst.Call) -> None:
        create_graph = library_argument(call, "create_graph", _CREATE_GRAPH_POSITION)
        detach_call = self._detach_applied(call)
        if create_graph is None:
            if detach_call is not None:
                # `grad(...)[0].detach()` without create_graph: first order on purpose,
                # as VQGAN's adaptive weight is (the detach says so twice)
                return
            why = "without `create_graph=True`"
        elif bool_literal(create_graph.value) is True:
            if detach_call is None:
                return
            why = "with `create_graph=True` but detached right after"
        else:
            # `create_graph=False` says first order on purpose; a variable we cannot read.
            return
        again = self._differentiated_again(call)
        if again is not None and (detach_call is not None or self._reaches_differentiation(call)):
            where: cst.Call | MethodCall | None = again
        elif self._stored_and_differentiated(call):
            where = None
        else:
            where = self._differentiated_through_helper(call)
            if where is None:
                where = self._differentiated_by_callers_elsewhere(call)
                if where is None:
                    return
        related: list = []
        if isinstance(where, cst.Call):
            related = [(where, "differentiated again here")]
        elif where is not None:
            related = [at_call_elsewhere("differentiated again here", where)]
        self.report(
            call,
            self.message_for(why=why),
            fix=self._fix(call, create_graph, detach_call),
            related=related,
        )

    def _differentiated_by_callers_elsewhere(self, call: cst.Call) -> MethodCall | None:
        """`def gradient_penalty(D, real, fake): ... return penalty` in a helpers file,
        whose result a training script of the project adds to a loss it backpropagates:
        the call there that differentiates it again."""
        helper = self.facts.index.scope_of(call)
        if type(helper) is not cst.FunctionDef:
            return None
        if not self._returns_result(call, helper):
            return None
        return self.facts.differentiation.differentiated_by_callers_elsewhere(helper)

    def _reaches_differentiation(self, call: cst.Call) -> bool:
        """The def-use reading, for results that are assigned: a path that passes a
        graph cut (the VQGAN adaptive weight: `w = norm(g1) / norm(g2); w = w.detach()`)
        is no second derivative, however the names are reused."""
        statement = self.facts.index.statement_of(call)
        if not isinstance(statement, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            return True  # nothing to follow by name: keep the textual reading
        return self.facts.differentiation.result_is_differentiated(call)

    def _stored_and_differentiated(self, call: cst.Call) -> bool:
        """`grads.append(grad(...))`, then differentiated through a loop over `grads`.
        Assigned results are judged by `_differentiated_again`, whose "a rebinding in
        between kills it" reading is what torch's own tests need (the same name
        recomputed with create_graph=True under the same condition)."""
        statement = self.facts.index.statement_of(call)
        if type(statement) is not cst.Expr:
            return False
        return self.facts.differentiation.result_is_differentiated(call)

    def _differentiated_again(
        self,
        call: cst.Call,
        helper: cst.FunctionDef | None = None,
        outputs_param: str | None = None,
    ) -> cst.Call | None:
        """Where the result of `call` (a grad, or a call of a grad helper) is
        differentiated later in the same scope: a grad/backward built from it, or another
        call of the helper whose `outputs` argument is built from it; None if nowhere."""
        index = self.facts.index
        produced = set(assigned_names(self.facts.index.statement_of(call)))
        scope = index.scope_of(call)
        region = self.facts.loops.scope_facts(scope)
        after = index.order[call]
        for event in region.events:
            if event.kind == "step" or event.call is call or index.is_inside(event.call, call):
                continue
            inside_root = event.root_expr is not None and index.is_inside(call, event.root_expr)
            if inside_root:
                return event.call
            before = index.order[event.call]
            if before < after:
                continue
            # Follow only what is computed between the two calls; a name rebound in
            # between (say with create_graph=True) no longer holds this result.
            window = _between(index, after, before, call)
            own = index.statement_of(call)
            alive = produced - {
                b.var for b in region.bindings if b.statement is not own and window(b)
            }
            if region.closure(event.roots, window) & alive:
                return event.call
        if helper is None or outputs_param is None or not produced:
            return None
        for argument in self.facts.caller_arguments.here(helper, outputs_param):
            other = argument.site
            if other is call or index.scope_of(other) is not scope or index.order[other] < after:
                continue
            arg = argument.passed
            window = _between(index, after, index.order[other], call)
            if arg is not None and region.closure(self.facts.flow.reads(arg), window) & produced:
                return other
        return None

    def _differentiated_through_helper(self, call: cst.Call) -> cst.Call | None:
        """`def gradient(y, x): return torch.autograd.grad(y, x, ...)[0]`, called as
        `du = gradient(u, x)` and then `gradient(du, x)`: where that happens."""
        index = self.facts.index
        helper = index.scope_of(call)
        if type(helper) is not cst.FunctionDef or not self._returns_result(call, helper):
            return None
        outputs = library_argument(call, "outputs", 0)
        params = [p.name.value for p in helper.params.params]
        reads = self.facts.flow.reads(outputs.value) if outputs else set()
        param = next((name for name in params if name in reads), None)
        for caller in self.facts.grad_mode.callers_of(helper):
            again = self._differentiated_again(caller, helper, param)
            if again is not None:
                return again
        return None

    def _returns_result(self, call: cst.Call, helper: cst.FunctionDef) -> bool:
        """Does the derivative, or what it is used for, reach a `return` of its
        function: `return grad(...)[0]`, `g = grad(...); return g`, or a MAML inner loop
        (`fast = [w - a * g ...]`, `return loss_fn(net(x, fast), y)`)? A caller that
        differentiates the result then differentiates the derivative."""
        index = self.facts.index
        statement = index.statement_of(call)
        if type(statement) is cst.Return:
            return True
        produced = set(assigned_names(self.facts.index.statement_of(call)))
        if not produced:
            return False
        for node in index.walk(helper.body):
            if type(node) is cst.Return and self.facts.flow.reads(node.value) & produced:
                return True
        return any(
            type(index.statement_of(use)) is cst.Return
            for use in self.facts.differentiation.reads_reached(call, set())
        )

    def _detach_applied(self, call: cst.Call) -> cst.Call | None:
        """`grad(...)[0].detach()`: the `.detach()` call applied to this result in the
        same expression, if any."""
        index = self.facts.index
        node: cst.CSTNode = call
        for anc in index.ancestors(call):
            if type(anc) is cst.Subscript and anc.value is node:
                node = anc
                continue
            if type(anc) is cst.Attribute and anc.value is node:
                parent = index.parent.get(anc)
                if anc.attr.value == "detach" and type(parent) is cst.Call and parent.func is anc:
                    return parent
                return None
            return None
        return None

    def _fix(self, call: cst.Call, create_graph: cst.Arg | None, detach_call: cst.Call | None):
        context = self.context
        if create_graph is None:
            if not call.args or any(arg.star for arg in call.args):
                return None
            edits = add_keyword_argument(context, call, "create_graph", "True")
            return self.fix(self.fix_title, edits)
        if detach_call is not None:
            # `grad(...)[0].detach()` -> `grad(...)[0]`
            # _detach_applied only returns a call whose func is the `.detach` Attribute.
            receiver = cast(cst.Attribute, detach_call.func).value
            _, receiver_end = context.position_of(receiver)
            _, call_end = context.position_of(detach_call)
            return self.fix(
                "Remove the `.detach()` so the gradient keeps its graph",
                (Edit(receiver_end, call_end, ""),),
            )
        return None
