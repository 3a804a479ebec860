from __future__ import annotations

import libcst as cst

from gradlint.analysis.grad_mode import GradMode
from gradlint.analysis.torch_api import is_inplace_method
from gradlint.rules.base import Rule
from gradlint.rules.explain import leaf_origins


class LeafInplaceOutsideNoGrad(Rule):
    """
    ## What it does
    Flags an in-place operation (`-=`, `+=`, `*=`, `/=`, `x[i] = ...`, or any `.xxx_()`
    method such as `add_`, `zero_`, `copy_`, `clamp_`) on a leaf tensor that requires
    grad (a parameter, a `requires_grad=True` tensor) while autograd is recording. A
    tensor made out of sight counts when its use shows it is one: its `.grad` is read
    (`for p, v in zip(params, states): ... p.grad`), or it is an element of an iterable
    handed to an optimizer or to a function that reads its elements' gradients. Each
    name of `for t, p in zip(target.parameters(), net.parameters())` holds its own
    argument's parameters (an EMA or soft target update written in place), unless
    that target's parameters were all switched off once (`requires_grad = False` in a
    loop over them, `requires_grad_(False)`) or the loop detaches each in place first
    (`t.detach_()`).

    ## Why is this bad?
    Autograd cannot record an in-place change of a leaf it is tracking, so the operation
    raises `RuntimeError: a leaf Variable that requires grad is being used in an in-place
    operation.` (or `a view of a leaf Variable ...` for `w[0] = 0`). Manual optimizers,
    weight clipping and re-initialisation hit it as soon as they run outside
    `torch.no_grad()`. Going through `.data` silences the error but also hides
    autograd's version check, which can give silently wrong gradients.

    ## Example
    ```python
    import torch

    w = torch.zeros(3, requires_grad=True)
    loss = (w * 2.0).sum()
    loss.backward()
    w -= 0.1 * w.grad
    ```

    ## Use instead
    ```python
    import torch

    w = torch.zeros(3, requires_grad=True)
    loss = (w * 2.0).sum()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    ```

    ## Fix safety
    The fix wraps the statement in `with torch.no_grad():`. It is unsafe: the update
    stops being recorded, which is what an optimizer step wants, but code that meant to
    differentiate through the update (rare, and impossible on a leaf) changes meaning.

    ## References
    - [Autograd mechanics: in-place operations](https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd)
    - [`torch.no_grad`](https://pytorch.org/docs/stable/generated/torch.no_grad.html)
    """

    code = "GL002"
    name = "leaf-inplace-outside-no-grad"
    message = "In-place update of leaf tensor `{name}` that requires grad while autograd is recording; this raises at run time"
    fix_title = "Wrap the update in `with torch.no_grad():`"
    # `.grad`: a tensor whose gradient is read is a parameter by its use
    trigger_tokens = ("requires_grad", "Parameter", "parameters(", ".weight", ".bias", ".grad")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node.target, node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if type(target.target) is cst.Subscript:
                self._check(target.target, node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is not cst.Attribute:
            return
        method = func.attr.value
        if not is_inplace_method(method):
            return
        self._check(func.value, node)

    def _check(self, target: cst.CSTNode, node: cst.CSTNode) -> None:
        facts = self.facts
        leaf = facts.tensors.leaf_requiring_grad(target, target)
        if leaf is None:
            return
        if facts.mode_at(node) is not GradMode.RECORDING:
            return
        if self._frozen_elsewhere(leaf, node):
            return
        if facts.grad_mode.guarded_by_every_caller_elsewhere(node):
            return  # `init_weights(m)` called under no_grad from another file
        statement = facts.index.statement_of(node)
        from gradlint.fix_builders import wrap_in_no_grad

        self.report(
            statement,
            self.message_for(name=leaf),
            fix=wrap_in_no_grad(self.context, statement, self.fix_title, self.fix_applicability),
            related=leaf_origins(facts, leaf, node),
        )

    def _frozen_elsewhere(self, leaf: str, node: cst.CSTNode) -> bool:
        """A parameter of a model (a target network) whose parameters were all switched
        off once: they are no leaves that require grad. The model's name is read as the
        variable it is there (forwards.is_frozen with `scoped`): a local by the switches
        of its own function (`ema = copy.deepcopy(net).eval().requires_grad_(False)`),
        a global or `self.x` by a switch anywhere on it, not on a local namesake."""
        owner = self.facts.tensors.parameter_owner(leaf, node)
        return owner is not None and self.facts.forwards.is_frozen(
            owner, node, whole=True, scoped=True
        )
