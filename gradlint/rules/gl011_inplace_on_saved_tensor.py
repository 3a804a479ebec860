from __future__ import annotations

import libcst as cst

from gradlint.analysis.autograd_calls import DiffEvent
from gradlint.analysis.dataflow import method_name
from gradlint.analysis.grad_mode import GradMode
from gradlint.analysis.index import dotted_name
from gradlint.analysis.inplace import InplaceChange, changes_in
from gradlint.analysis.torch_api import TRANSPOSE_ATTRIBUTES
from gradlint.rules.base import Rule

_MESSAGE = (
    "`{name}` is changed in place ({how}) after {saver} saved it for backward; {backward} "
    'needs it and raises "one of the variables needed for gradient computation has been '
    'modified by an inplace operation"'
)
# Contexts under which saved tensors are not checked against their version: the
# mutation is allowed (`allow_mutation_on_saved_tensors`), or packed copies and hooks
# replace the saved tensor (`save_on_cpu`, `saved_tensors_hooks`).
_SAVED_TENSOR_CONTEXTS = "torch.autograd.graph."
_SHOWN_CHARS = 40


class InplaceOnSavedTensor(Rule):
    """
    ## What it does
    Flags an in-place change (`x += 1`, `x[0] = 0`, `x.mul_(2)`, `x.zero_()`,
    `torch.relu_(x)`, `F.relu(x, inplace=True)`, `out=x`) of a tensor that an earlier
    operation saved for its backward, when a backward through that operation follows
    in the same function, or when the change sits in the `forward()` of a module that
    is trained and the operation's result flows into what it returns (the backward is
    then the training loop's: `g = torch.sigmoid(self.lin(x)); g *= 2; return g`).

    Also flags the commonest form of it in SAC, DDPG, TD3 and GAN code: a `backward()`
    (or `autograd.grad`) of a value built through a module's forward, after an optimizer
    holding that module's parameters stepped. `opt.step()` changes every parameter it
    holds in place, and the forward saved them (a layer keeps its weight for its
    input's gradient). Reported on the backward, since the step is where the program
    is right and the value built before it is what is stale.

    ## Why is this bad?
    Many operations keep a tensor for their backward: `torch.sigmoid`, `exp`, `tanh`,
    `relu` and `softmax` keep their output (so do their layers, `nn.Sigmoid()`,
    `nn.ReLU(inplace=True)`, and an `nn.Sequential` or a module class, of this file or
    of another of the project's, whose last layer is one), `w * x` keeps `x` for `w`'s
    gradient, `x ** 2`, `log`, `sin` and `F.linear` keep their input. Autograd notes the
    tensor's version when it saves it; an in-place change bumps the version, and the
    backward refuses to use the stale value: `RuntimeError: one of the variables
    needed for gradient computation has been modified by an inplace operation:
    [torch.FloatTensor [3]], which is output 0 of Sigmoid, is at version 1;
    expected version 0 instead.` The error names the tensor, but not the line that
    changed it, so it is slow to find in a real model.

    The optimizer form, measured on torch 2.13: the actor's loss built through the
    critic, `policy_loss = -qf(obs, policy(obs)).mean()`, then `q_loss.backward();
    q_opt.step()`, then `policy_loss.backward()` raises `RuntimeError: one of the
    variables needed for gradient computation has been modified by an inplace
    operation: [torch.FloatTensor [256, 1]], which is output 0 of AsStrided, is at
    version 2; expected version 1 instead.` (earlier releases name the tensor's
    producer `AsStridedBackward0`). It raises since torch 1.5, whose optimizers change
    the parameters themselves under `no_grad` rather than through `.data`: rlkit's SAC
    fixed it by updating the actor first ("will create an error in pytorch 1.5.0",
    commit b7f97b2).

    Which operations save what is not a guess: the table gradlint reads is measured on
    torch itself (`python -m runtime_check saved-tensors`), per combination of
    operands that require grad (with only `w` requiring grad, `w * x` saves `x` and
    not `w`). An operation that saves nothing the change touches is fine: `y = x + w;
    x += 1` (addition saves nothing), `y = x.exp(); x += 1` (exp saves its output, not
    its input).

    Reported only where gradlint can show all of it: autograd records the operation
    (an operand is a parameter, a `requires_grad=True` tensor or computed from one,
    outside `no_grad`), the tensor changed is the very one saved (one binding reaches
    both, not rebound, not `.clone()`d in between; also through a view such as `x[0]`
    or `x.view(-1)`), and a `backward()` or `autograd.grad` of a value computed from
    the operation's result comes after the change in the same function, with no
    differentiation in between. In a module's `forward()` that differentiates nothing
    itself, the trainer's backward stands in for it when the module is trained and the
    operation's result reaches a `return` after the change: trained means the `forward`
    of a class of the file that subclasses a torch module, not under `no_grad` (nor a
    module every call of which in the file runs under it), where the change runs in
    training (not under `if not self.training:` or in the `else` of
    `if self.training:`); its layers' results record, so `F.relu(self.bn(self.conv(x)))`
    saves its output, and SqueezeNext's `output += F.relu(self.shortcut(input))` after it
    raises in the first training step, while ResNet's `out = self.bn2(...); out +=
    shortcut` does not (batch norm saves its input, not its output). Not flagged: a
    change after the backward, under
    `torch.autograd.graph.allow_mutation_on_saved_tensors()` or `save_on_cpu()`, of a
    tensor nothing saved, or through `.data` (that one hides the error and gives wrong
    gradients instead); tensors passed through module calls and helpers are not
    followed, and neither are modules built with `nn.ReLU(inplace=True)`. A parameter
    changed in place outside `no_grad` raises GL002's error first, so it is left to
    GL002.

    The optimizer form is reported only where all of it is shown, in straight-line
    order, in one function or along the calls a method makes of its own object's methods
    (BicycleGAN's `optimize_parameters()` runs `self.forward()`, which stores
    `self.mu2 = self.netE(self.fake_B_random)`, then a method that backpropagates a first
    loss with `retain_graph=True`, steps G and E, and runs the method whose backward goes
    through `self.mu2`; what a method stores on `self` is what the methods run after it
    read there, until another value is stored, and what it returns is what its call
    evaluates to, place for place when a tuple is unpacked: `actor_loss, q_loss =
    self.losses(batch)`): the optimizer is built from the module's
    `.parameters()`
    (`Adam(qf.parameters())`, `self.q_opt = optimizer_class(self.qf.parameters())`,
    chained lists and param groups; a parameter list built out of sight proves
    nothing), or from a part of it (`Adam(critic.Q1.parameters())` steps weights that
    `q1, q2 = critic(s)` saved). Which output a part computes is out of sight, so the
    forward's values must then be unpacked and the backward go through every one, as a
    policy loss of `torch.min(q1, q2)` does (a loss of `out[1]` alone need not); and when
    the model's class is in the file, its `forward` must run the part (an auxiliary
    head run by another method is not), which must not be a single torch layer on the
    forward's own inputs (it saves them, not its weight); the forward records (outside
    `no_grad`, the module not frozen); the backward reaches the forward's result with no
    `.detach()` on the way; the step runs between them whenever the backward does (not
    under an `if`, a loop or a `try` of its own), in the function itself or in a helper of this file it calls
    (`self.update_critic(loss)`, `update(q_opt, q_loss)`) or of the project's other files
    (`update_params(q_optim, q_loss)` from `utils.py`, whose own statements step the
    optimizer it is handed after a backward), and the backward too may be such a
    helper's (`update_params(policy_optim, policy_loss)`, reported at that call); and a backward before the
    step gives it gradients to apply (a step with no gradients changes nothing). Not
    flagged: the step after the backward; the loss recomputed after the step; a
    discriminator loss built on `G(z).detach()` after the generator's step (its graph
    holds D's weights, not G's); `retain_graph=True` with no step in between; a single
    torch layer (`nn.Linear(...)`) on inputs without history, which saves the input
    and not its weight (measured: the step then breaks nothing; any other module is
    taken to save a weight, as every network of two layers does); a backward in between
    that frees the graph (the next one raises "backward through the graph a second
    time" instead).

    ## Example
    ```python
    import torch

    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y.mul_(2)
    y.sum().backward()
    ```

    ## Use instead
    ```python
    import torch

    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y = y.mul(2)
    y.sum().backward()
    ```

    ## Fix safety
    There is no automatic fix. The out-of-place form (`y = y * 2`, `x = x + 1`) or a
    `.clone()` before the change is the usual repair, but it changes what other names
    bound to the same tensor see, which in-place code often relies on (a buffer that a
    module reads back, a running statistic).

    ## On real code
    In preview. On the development corpus (29 public repositories, notebooks included;
    `bench/real-code/`) the in-place statement form reports nothing, and the 6 correct
    look-alikes recorded in the ledger (ResNet's `out += shortcut`, drop-connect, in-place
    scaling of matmul and `torch.cat` results, a CG update under `no_grad`, a clone
    divided in place) stay silent. The form in a trained module's forward, on the
    census's 87 development repositories linted whole, reports one finding, true:
    anode's SqueezeNext block (`models/sqnxt.py`) adds its shortcut in place to a
    `F.relu` output (the census's labeller reproduced the raise on CPU); the ResNet
    blocks beside it, which add theirs to a batch norm output, stay silent. On the
    census's 229 development repositories it also reports pytorch-semseg's LinkNet,
    true: `d4 = self.decoder4(e4); d4 += e3`, the decoder block a class of `utils.py`
    whose last unit ends in `nn.ReLU(inplace=True)` (a class of another project file
    counts as one of this file). The optimizer form, on the census's 55 development
    repositories linted whole, reports 4 findings, all judged true by reading the code:
    PyTorch-GAN's softmax GAN steps D between `d_loss.backward(retain_graph=True)` and
    `g_loss.backward()` through D (its shape re-run on torch 2.13 raises), and
    Popular-RL-Algorithms' DDPG and RDPG (`ddpg.py`, `ddpg_v2.py`, `rdpg.py`) step the Q
    network between building the policy loss through it and its backward. The fix
    benchmark's upstream repair (rlkit's SAC, commit b7f97b2) is caught on its parent and
    clean on the fix, and so is BicycleGAN's (commit 6f0eec8, issue #87), where the
    forward, the step and the backward sit in four methods of one model class. Four
    findings are too few to measure precision, so the rule stays in preview.

    ## References
    - [torch.autograd: in-place correctness checks](https://pytorch.org/docs/stable/autograd.html#in-place-correctness-checks)
    - [Autograd mechanics: saved tensors](https://pytorch.org/docs/stable/notes/autograd.html#saved-tensors)
    - [Hooks for saved tensors (tutorial)](https://pytorch.org/tutorials/intermediate/autograd_saved_tensors_hooks_tutorial.html)
    """

    code = "GL011"
    name = "inplace-on-saved-tensor"
    message = _MESSAGE
    # Reported only before a differentiation in the same function, or in a module's
    # forward (the trainer's backward goes through what it returns).
    trigger_tokens = ("backward", "autograd", "def forward")
    # ... which may be a helper's of the project's other files (`update_params(optim,
    # loss)` in utils.py): a file importing a module with the tokens is parsed too
    triggers_may_be_imported = True

    def __init__(self, context) -> None:
        super().__init__(context)
        # scope -> source order of its last differentiation
        self._last_differentiation: dict[cst.CSTNode, int] | None = None

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._statement(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._statement(node)

    def visit_Expr(self, node: cst.Expr) -> None:
        if type(node.value) is cst.Call:
            self._statement(node)

    def visit_Call(self, node: cst.Call) -> None:
        # The optimizer-step form: the backward is what is reported, since the step is
        # where the program is right and the graph built before it is what is stale.
        func = node.func
        name = func.attr.value if type(func) is cst.Attribute else (dotted_name(func) or "")
        facts = self.facts
        if name.endswith(("backward", "grad")):
            event = facts.autograd.event(node)
            if event is None or event.kind == "step":
                return
            found = facts.stepped_after_saving.before(event)
        else:
            # `update(p_opt, policy_loss)`: a helper of this file backpropagates it
            found = facts.stepped_after_saving.before_helper(node)
        if found is None:
            return
        step = found.step
        how = f"`{found.step.optimizer}.step()` on line {self._line(step.call)}"
        if step.call is not step.step or method_name(step.call) != "step":
            # a helper's step, of this file or (the helper call itself) of another
            how = f"`{found.step.optimizer}.step()` in `{_shown(step.call)}` on line {self._line(step.call)}"
        if found.caller is not None:
            # forward, step and backward in different methods of one object
            how += f", which `{found.caller.name.value}()` runs between them"
        self.report(
            node,
            self.message_for(
                name=f"{found.changed}.parameters()",
                how=how,
                saver=f"the forward `{_shown(found.forward)}` (line {self._line(found.forward)})",
                backward=f"the backward on line {self._line(node)}"
                + ("" if name.endswith(("backward", "grad")) else f" (in `{_shown(node)}`)"),
            ),
            related=[
                (found.forward, f"`{found.model}`'s parameters are saved for backward here"),
                (step.call, f"`{found.step.optimizer}.step()` changes them in place"),
            ],
        )

    def _statement(self, node: cst.CSTNode) -> None:
        for change in changes_in(node, self.facts.index):
            self._check(change)

    def _check(self, change: InplaceChange) -> None:
        facts = self.facts
        index = facts.index
        base = change.base
        use = _base_node(change.target)
        if base is None or use is None:
            return
        statement = change.statement
        # Cheapest first: most in-place changes sit in functions that never differentiate
        # after them (a forward, a data pipeline, an optimizer's step).
        if not self._differentiation_after(statement):
            return
        bindings = facts.values.bindings_of(base, use)
        reaching = index.reaching(bindings, use)
        if len(reaching) != 1 or self._unchecked_context(statement):
            return
        binding = reaching[0]
        for saved in self._savers(binding, base, bindings, statement):
            later = self._backward_after(saved.operation, statement)
            if later is None:
                continue
            if facts.tensors.leaf_requiring_grad(change.target, statement) is not None and (
                facts.mode_at(statement) is not GradMode.NOT_RECORDING
            ):
                return  # GL002: the change itself raises first
            operation = saved.operation
            saver = f"`{_shown(operation)}` (line {self._line(operation)})"
            where: cst.CSTNode
            if isinstance(later, cst.Return):
                # in a trained module's forward: the trainer differentiates what it returns
                where = later
                returning = self.facts.index.scope_of(later)
                function = returning.name.value if type(returning) is cst.FunctionDef else ""
                backward = (
                    f"the training step's backward through what `{function}` returns "
                    f"(line {self._line(later)})"
                )
                needs = "the trainer's backward goes through this value, and raises"
            else:
                where = later.call
                backward = f"the backward on line {self._line(where)}"
                needs = "the backward that needs it, and raises"
            self.report(
                statement,
                self.message_for(name=base, how=change.how, saver=saver, backward=backward),
                related=[
                    (operation, f"`{base}` is saved for backward here"),
                    (where, needs),
                ],
            )
            return

    def _differentiation_after(self, statement: cst.CSTNode) -> bool:
        """Is there a backward or autograd.grad later in the statement's function?"""
        index = self.facts.index
        if self._last_differentiation is None:
            # One pass over the file's calls; only names that can differentiate are
            # resolved (`x.backward()`, `grad(...)`, `torch.autograd.backward(...)`).
            last: dict[cst.CSTNode, int] = {}
            for call in index.calls:
                func = call.func
                name = (
                    func.attr.value
                    if type(func) is cst.Attribute
                    else index.qualified_name(func) or ""
                )
                if not name.endswith(("backward", "grad")):
                    continue
                event = self.facts.autograd.event(call)
                if event is not None and event.kind != "step":
                    scope = index.scope_of(call)
                    last[scope] = max(last.get(scope, -1), index.order[call])
            self._last_differentiation = last
        scope = index.scope_of(statement)
        if self._last_differentiation.get(scope, -1) > index.order[statement]:
            return True
        # a trained module's forward: the trainer differentiates its result later
        return self.facts.trained_forwards.forward_of(statement) is not None

    def _savers(self, binding: cst.CSTNode, name: str, bindings, statement: cst.CSTNode):
        """What each recorded operation before `statement` is proven to save, when it
        saved the tensor that `binding` gave `name`."""
        facts = self.facts
        index = facts.index
        saved_facts = facts.saved
        at = index.order[statement]
        # Its output: `y = torch.sigmoid(x)`.
        if (
            type(binding) is cst.Assign
            and len(binding.targets) == 1
            and dotted_name(binding.targets[0].target) == name
        ):
            saved = saved_facts.saved(binding.value)
            if saved is not None and saved.output and not self._unchecked_context(binding):
                yield saved
        # An operand: `h = w * x`, then `x` is changed.
        for use in facts.values.uses_reached(binding, name):
            if index.order.get(use, 0) >= at or index.is_inside(use, statement):
                continue
            if index.reaching(bindings, use) != [binding]:
                continue  # another binding may be the one read there
            operation = self._operation_of(use)
            if operation is None:
                continue
            saved = saved_facts.saved(operation)
            if saved is None or not any(o is use for o in saved.operands):
                continue
            if self._unchecked_context(operation) or self._exclusive(operation, statement):
                continue
            yield saved

    def _operation_of(self, use: cst.CSTNode) -> cst.CSTNode | None:
        """The operation `use` is a direct operand of: `w * x`, `f(x)`, `x.pow(2)`."""
        parent = self.facts.index.parent.get(use)
        if type(parent) is cst.Arg:
            return self.facts.index.parent.get(parent)
        if type(parent) is cst.Attribute and parent.value is use:
            call = self.facts.index.parent.get(parent)
            if type(call) is cst.Call and call.func is parent:
                return call
            return None
        if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
            return parent
        return None

    def _backward_after(
        self, operation: cst.BaseExpression, statement: cst.CSTNode
    ) -> DiffEvent | cst.Return | None:
        """The first differentiation through `operation`'s result that runs after
        `statement` in the same function; None when one in between consumes the graph
        first (the change then comes after the backward) or none follows. In a trained
        module's forward that differentiates nothing itself, the first `return` after
        `statement` that hands the result on to the trainer's backward."""
        index = self.facts.index
        scope = index.scope_of(statement)
        if index.scope_of(operation) is not scope:
            return None
        start = index.order[index.statement_of(operation)]
        at = index.order[statement]
        if start >= at:
            return None
        for event in self.facts.differentiation.differentiations_of(operation):
            if index.scope_of(event.call) is not scope:
                continue
            order = index.order[event.call]
            if start < order < at:
                return None
            if order > at and not self._exclusive(statement, event.call):
                return event
        if self.facts.differentiation.differentiations_of(operation, first=True):
            return None  # differentiated in the function itself: that backward decides
        for returned in self.facts.trained_forwards.returns_reached(operation):
            if index.order[returned] > at and not self._exclusive(statement, returned):
                return returned
        return None

    def _exclusive(self, a: cst.CSTNode, b: cst.CSTNode) -> bool:
        """Do a and b sit in different branches of one `if` / `try` / `match`, so that
        one run does not reach both in this order?"""
        index = self.facts.index
        above = set(index.ancestors(a))
        for ancestor in index.ancestors(b):
            if ancestor in above:
                return isinstance(ancestor, (cst.If, cst.Try, cst.TryStar, cst.Match))
        return False

    def _unchecked_context(self, node: cst.CSTNode) -> bool:
        for ancestor in self.facts.index.ancestors(node):
            if type(ancestor) is cst.With:
                for item in ancestor.items:
                    call = item.item
                    func = call.func if type(call) is cst.Call else call
                    qualified = self.facts.qualified_name(func) or ""
                    if qualified.startswith(_SAVED_TENSOR_CONTEXTS):
                        return True
        return False

    def _line(self, node: cst.CSTNode) -> int:
        return self.context.position_of(node)[0].line


def _base_node(target: cst.CSTNode) -> cst.CSTNode | None:
    """The Name/Attribute that names the changed variable inside `target`."""
    expr = target
    while True:
        if type(expr) is cst.Subscript:
            expr = expr.value
        elif type(expr) is cst.Call and type(expr.func) is cst.Attribute:
            expr = expr.func.value
        elif type(expr) is cst.Attribute and expr.attr.value in TRANSPOSE_ATTRIBUTES:
            expr = expr.value
        elif isinstance(expr, (cst.Name, cst.Attribute)):
            return expr
        else:
            return None


def _shown(node: cst.CSTNode) -> str:
    text = " ".join(cst.Module([]).code_for_node(node).split())
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."
