from __future__ import annotations

import libcst as cst

from gradlint.analysis.grad_mode import GradMode
from gradlint.analysis.index import child_nodes, dotted_name
from gradlint.analysis.torch_api import CONTAINER_STORING_METHODS, RELEAFING_METHODS
from gradlint.fix_builders import render, rewrite_statement
from gradlint.rules.base import Rule
from gradlint.rules.explain import leaf_origins


def _mentions_grad(expr: cst.CSTNode) -> bool:
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node) is cst.Attribute and node.attr.value == "grad":
            return True
        stack.extend(child_nodes(node))
    return False


def _grad_owners(expr: cst.CSTNode) -> set[str]:
    owners: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node) is cst.Attribute and node.attr.value == "grad":
            name = dotted_name(node.value)
            if name:
                owners.add(name)
        stack.extend(child_nodes(node))
    return owners


class ParamRebindUpdate(Rule):
    """
    ## What it does
    Flags a gradient step written as a rebinding, `p = p - lr * p.grad` (or `+`, or with
    the `.grad` of another tensor, or a gradient `torch.autograd.grad` handed back:
    `for p, g in zip(params, grads): p = p - lr * g`), where `p` is a parameter or a
    tensor that requires grad. Not a rebinding of a loop's parameter whose new value is
    read afterwards (`fast.append(p)`): fast weights made on purpose.

    ## Why is this bad?
    The assignment makes a *new* tensor and points the name at it; the parameter itself
    never changes. Outside `no_grad` the new `p` is a non-leaf: next step its `.grad` is
    `None` (with a warning), and every update chains another node onto the graph. Inside
    `no_grad` the new `p` no longer requires grad: the next `backward()` raises, or, when
    other parameters keep the loss differentiable, `p` silently stops training. For a
    loop variable over `model.parameters()` the model is never updated at all.

    ## Example
    ```python
    import torch

    w = torch.zeros(4, requires_grad=True)
    for _ in range(3):
        loss = ((w - 1.0) ** 2).sum()
        loss.backward()
        w = w - 0.1 * w.grad
    ```

    ## Use instead
    ```python
    import torch

    w = torch.zeros(4, requires_grad=True)
    for _ in range(3):
        loss = ((w - 1.0) ** 2).sum()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
        w.grad = None
    ```

    Making the result a fresh leaf on purpose, `w = (w - lr * w.grad).detach()
    .requires_grad_()`, is also fine and is not flagged; neither are functional
    fast weights built from `torch.autograd.grad(..., create_graph=True)` (MAML), which
    use no `.grad`.

    ## Fix safety
    The fix rewrites the statement as an in-place update (`w -= 0.1 * w.grad`) inside
    `with torch.no_grad():`. Unless the loop that runs the backward clears `w.grad`
    (`w.grad = None`, or `model.zero_grad()` for a tensor a module holds), the fix also
    clears it after the update: the rebind started every step from a fresh, empty
    `.grad`, and one leaf updated in place would otherwise apply the sum of all
    gradients so far. It is unsafe: it changes which tensor the name refers to
    afterwards (now always the original parameter), which is the point, but code that
    relied on the old behaviour changes.

    ## References
    - [Autograd mechanics](https://pytorch.org/docs/stable/notes/autograd.html)
    - [`torch.Tensor.is_leaf`](https://pytorch.org/docs/stable/generated/torch.Tensor.is_leaf.html)
    """

    code = "GL003"
    name = "param-rebind-update"
    message = (
        "`{name} = {name} {op} ...` rebinds the name instead of updating the tensor; {consequence}"
    )
    fix_title = "Update the tensor in place under `torch.no_grad()`"
    _fix_title_for = "Update `{name}` in place under `torch.no_grad()`"
    trigger_tokens = (".grad",)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target_node, value = node.targets[0].target, node.value
        if type(target_node) is cst.Tuple and type(value) is cst.Tuple:
            # `w, b = w - lr * gw, b - lr * gb`
            if len(target_node.elements) != len(value.elements):
                return
            pairs = [
                (t.value, v.value)
                for t, v in zip(target_node.elements, value.elements, strict=True)
            ]
        else:
            pairs = [(target_node, value)]
        updates = [
            u
            for u in (self._update(node, t, v) for t, v in pairs)
            if u is not None and not self._functional_update(node, u[1])
        ]
        if not updates:
            return
        mode = self.facts.mode_at(node)
        if mode is GradMode.UNKNOWN:
            return
        target_expr, target, op, step = updates[0]
        names = [u[1] for u in updates]
        self.report(
            node,
            self.message_for(
                name=", ".join(names) if len(names) > 1 else target,
                op=op,
                consequence=self._consequence(node, target, mode),
            ),
            fix=self._fix(node, updates, len(pairs), mode),
            related=[place for name in names for place in leaf_origins(self.facts, name, node)],
        )

    def _update(self, node: cst.Assign, target_expr, value):
        """(target node, name, operator, step) when `target = target ± step` is a
        gradient step on a tensor that requires grad; else None."""
        target = dotted_name(target_expr)
        if target is None or type(value) is not cst.BinaryOperation:
            return None
        if not isinstance(value.operator, (cst.Add, cst.Subtract)):
            return None
        left, right = dotted_name(value.left), dotted_name(value.right)
        if left == target:
            step = value.right
        elif right == target and type(value.operator) is cst.Add:
            step = value.left
        else:
            return None
        owners = self._grad_owners(step, node)
        if owners is None:
            return None
        is_leaf = self.facts.tensors.leaf_requiring_grad(target_expr, value) is not None
        if not is_leaf and target not in owners:
            # `lr = lr - decay * x.grad.norm()`-like arithmetic on plain data.
            return None
        if self._made_leaf_afterwards(node, target):
            return None
        op = "-" if type(value.operator) is cst.Subtract else "+"
        return target_expr, target, op, step

    def _grad_owners(self, step: cst.CSTNode, node: cst.CSTNode) -> set[str] | None:
        """Whose `.grad` the step uses, directly (`p.grad`) or through a name bound to a
        `.grad` (`g = p.grad`, `gw, gb = w.grad, b.grad`), or a gradient `autograd.grad`
        handed back (`for p, g in zip(params, grads)` with `grads =
        torch.autograd.grad(loss, params)`: whose, unknown). None if it uses no
        gradient."""
        owners = _grad_owners(step)
        if _mentions_grad(step):
            return owners
        aliases = self._grad_aliases(node)
        used = self.facts.flow.reads(step, graph_only=False)
        found = False
        for name in used:
            if name in aliases:
                found = True
                owners |= aliases[name]
            elif self._element_of_gradients(name, node):
                found = True
        return owners if found else None

    def _element_of_gradients(self, name: str, node: cst.CSTNode) -> bool:
        """Is `name` what a loop around `node` takes from the tuple `autograd.grad`
        returns (`for p, g in zip(params, grads)`, `for g in grads`)?"""
        facts = self.facts
        iterable = facts.index.loop_element_source(name, node)
        if type(iterable) is cst.Name:
            values = facts.values.reaching_expressions(iterable.value, node)
            iterable = values[0] if len(values) == 1 else None
        return (
            type(iterable) is cst.Call
            and (event := facts.autograd.event(iterable)) is not None
            and event.kind == "grad"
        )

    def _functional_update(self, node: cst.Assign, target: str) -> bool:
        """`p = p - lr * g` on a loop's parameter whose new value is read afterwards
        (`fast.append(p)`, `new[name] = p`): fast weights made on purpose, not an update
        lost to a rebinding."""
        if not self._is_parameter_loop_variable(node, target):
            return False
        parent = self.facts.index.parent
        for use in self.facts.values.uses_reached(node, target):
            # kept: appended or stored, bound to a container's item, or returned; a
            # `print(p.norm())` or `p.grad = None` after it keeps nothing
            holder = parent.get(use)
            if type(holder) is cst.Arg:
                call = parent.get(holder)
                func = call.func if type(call) is cst.Call else None
                if type(func) is cst.Attribute and func.attr.value in CONTAINER_STORING_METHODS:
                    return True
            if type(holder) in (cst.Return, cst.Element) or (
                type(holder) is cst.Assign and holder.value is use
            ):
                return True
        return False

    def _grad_aliases(self, node: cst.CSTNode) -> dict[str, set[str]]:
        index = self.facts.index
        scope = index.scope_of(node)
        aliases: dict[str, set[str]] = {}
        for other in index.walk(scope.body if type(scope) is cst.FunctionDef else scope):
            if type(other) is not cst.Assign or len(other.targets) != 1:
                continue
            target, value = other.targets[0].target, other.value
            pairs = (
                [(t.value, v.value) for t, v in zip(target.elements, value.elements, strict=False)]
                if type(target) is cst.Tuple and type(value) is cst.Tuple
                else [(target, value)]
            )
            for t, v in pairs:
                name = dotted_name(t)
                if name and type(v) is cst.Attribute and v.attr.value == "grad":
                    owner = dotted_name(v.value)
                    aliases[name] = {owner} if owner else set()
        return aliases

    def _consequence(self, node: cst.Assign, target: str, mode: GradMode) -> str:
        if self._is_parameter_loop_variable(node, target):
            return "the model's parameter is never updated"
        if mode is GradMode.NOT_RECORDING:
            return (
                f"the new `{target}` does not require grad, so it silently stops training "
                "(and the next backward raises if nothing else in the loss requires grad)"
            )
        return (
            f"the new `{target}` is a non-leaf whose `.grad` stays None, so later updates are lost"
        )

    def _is_parameter_loop_variable(self, node: cst.Assign, target: str) -> bool:
        index = self.facts.index
        for anc in index.ancestors(node):
            if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
                return False
            if type(anc) is cst.For and target in {dotted_name(anc.target)} | {
                dotted_name(e.value) for e in getattr(anc.target, "elements", ())
            }:
                return self.facts.tensors.leaf_requiring_grad(anc.target, node) is not None or (
                    self.facts.tensors.kind_of_name(target, node) == "leaf"
                )
        return False

    def _made_leaf_afterwards(self, node: cst.Assign, target: str) -> bool:
        """`w = w - lr * w.grad` followed by `w.requires_grad_()` (or retain_grad) makes a
        fresh leaf on purpose."""
        index = self.facts.index
        scope = index.scope_of(node)
        after = index.order[node]
        for other in index.walk(scope.body if type(scope) is cst.FunctionDef else scope):
            if index.order.get(other, -1) <= after:
                continue
            if type(other) is cst.Call and type(other.func) is cst.Attribute:
                if (
                    other.func.attr.value in RELEAFING_METHODS
                    and dotted_name(other.func.value) == target
                ):
                    return True
            if type(other) is cst.Assign:
                for t in other.targets:
                    if dotted_name(t.target) == f"{target}.requires_grad":
                        return True
        return False

    def _loop_clears_grad_of(self, node: cst.Assign, name: str) -> bool:
        """Does the loop that repeats this step's backward clear `name.grad` (or is there
        no loop, so nothing accumulates)? The loop is the innermost one around the
        statement that runs a backward, or the outermost one when none does. A clear of
        `name.grad` itself counts; `X.zero_grad()` (or a clearing helper) counts for a
        tensor a module or optimizer holds (`self.w`, a loop over `parameters()`), not
        for a plain name, which may be a tensor no module holds (a PGD perturbation):
        there a second clear is harmless and a missing one is not."""
        facts = self.facts
        loops = list(facts.index.enclosing_loops(node))
        if not loops:
            return True
        loop = loops[-1]
        for candidate in loops:
            if any(
                type(n) is cst.Call
                and (event := facts.autograd.event(n)) is not None
                and event.kind == "backward"
                for n in facts.index.walk(candidate.body)
            ):
                loop = candidate
                break
        held = "." in name or any(
            type(anc) is cst.For and dotted_name(anc.target) == name for anc in loops
        )
        for other in facts.index.walk(loop.body):
            clear = facts.grad_clears.clear_at(other)
            if clear is None:
                continue
            owners = _grad_owners(clear.node)
            if owners:
                if {owner.removesuffix(".data") for owner in owners} & {name}:
                    return True
            elif held:
                return True
        return False

    def _fix(self, node: cst.Assign, updates, element_count: int, mode):
        """One in-place update per rebound name, under `no_grad` when grad is on. In a
        tuple assignment every right-hand side is computed first, so a sequential
        rewrite is offered only when no step reads another target."""
        if len(updates) != element_count:
            return None
        names = {name for _, name, _, _ in updates}
        lines = []
        for target_expr, name, op, step in updates:
            if len(updates) > 1 and self.facts.flow.reads(step, graph_only=False) & (
                names - {name}
            ):
                return None
            operator = cst.SubtractAssign() if op == "-" else cst.AddAssign()
            lines.append(render(cst.AugAssign(target=target_expr, operator=operator, value=step)))
        # The rebind made a fresh tensor each step, whose `.grad` started empty (with
        # `retain_grad()` the loop even converges); the in-place update keeps one leaf,
        # whose `.grad` backward adds into: without a clear every step would apply the
        # sum of all gradients so far (GL007 on the fix's own output).
        lines.extend(
            f"{name}.grad = None"
            for _, name, _, _ in updates
            if not self._loop_clears_grad_of(node, name)
        )
        title = self._fix_title_for.format(name="`, `".join(sorted(names)))
        return rewrite_statement(
            self.context,
            node,
            title,
            self.fix_applicability,
            "\n".join(lines),
            wrap_no_grad=mode is GradMode.RECORDING,
        )
