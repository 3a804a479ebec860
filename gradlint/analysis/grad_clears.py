"""Where `.grad` is cleared, and where a parameter is updated from its own `.grad`.

`backward()` *adds* into `.grad`; only an explicit clear starts the next sum from zero.
A clear is any of

- `optimizer.zero_grad()`, `model.zero_grad(set_to_none=True)`, `self.zero_grad()`, and the
  attribute `.zero_grad` handed on uncalled (`callbacks=[opt.zero_grad]`), though not
  as a statement of its own (`opt.zero_grad` with its parentheses forgotten clears nothing);
- an assignment or deletion of a `.grad` (`p.grad = None`, `p.grad = torch.zeros_like(p)`,
  `p.grad.data = ...`, `del p.grad`): the old sum is gone either way;
- an in-place overwrite of a `.grad` (`p.grad.zero_()`, `p.grad.data.zero_()`,
  `p.grad.fill_(0)`, `p.grad.copy_(g)`, `torch.nn.init.zeros_(p.grad)`);
- a call of a helper named for it (`zero_grad(model)`, `utils.clear_grads(net)`), and the
  other frameworks' spellings (`clear_grad`, `clear_gradients`, `cleargrads`), since a
  multi-backend file spells them in its torch branch too.

A *manual update* is an in-place change of a tensor computed from that same tensor's
`.grad`: `p -= lr * p.grad`, `p.data.add_(p.grad, alpha=-lr)`, `w.sub_(lr * w.grad)`,
`x_adv.data = x_adv.data + a * x_adv.grad.sign()`, `delta.data[i] = (delta + a * g)[i]`
with `g = delta.grad.detach()` earlier in the function. A statistic of the gradient kept
in another tensor (`fisher[n] += p.grad ** 2`) is not an update of the parameter.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.index import FileIndex, dotted_name
from gradlint.analysis.torch_api import (
    GRAD_CLEARING_NAMES,
    OVERWRITING_METHODS,
    UPDATING_METHODS,
    ZEROING_FUNCTIONS,
)

# The node types GradClearing.clear_at and .update_at can answer for: a walk over many
# nodes tests these first rather than call them on every node.
CLEAR_TYPES = frozenset(
    {cst.Attribute, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Del, cst.Call}
)
UPDATE_TYPES = frozenset({cst.AugAssign, cst.Assign, cst.Call})


@dataclass(frozen=True)
class GradClear:
    node: cst.CSTNode
    # The receiver of `X.zero_grad()` (an optimizer or a model), None for the other kinds.
    receiver: str | None = None


def _strip_data(name: str | None) -> str | None:
    """`p.data` is `p` for what an update changes."""
    while name is not None and name.endswith(".data"):
        name = name[: -len(".data")]
    return name


def is_grad_expr(node: cst.CSTNode | None) -> bool:
    """`p.grad`, `p.grad.data` (and parenthesised forms): the gradient tensor itself."""
    while type(node) is cst.Attribute and node.attr.value == "data":
        node = node.value
    return type(node) is cst.Attribute and node.attr.value == "grad"


def grad_owners(expr: cst.CSTNode, index: FileIndex) -> set[str]:
    """Whose `.grad` an expression reads: `p` for `p.grad`, `self.w` for `self.w.grad`."""
    owners: set[str] = set()
    for node in index.walk(expr):
        if type(node) is cst.Attribute and node.attr.value == "grad":
            owner = _strip_data(dotted_name(node.value))
            if owner:
                owners.add(owner)
    return owners


class GradClearing:
    def __init__(self, index: FileIndex) -> None:
        self.index = index
        self._aliases: dict[cst.CSTNode, dict[str, set[str]]] = {}

    def clear_at(self, node: cst.CSTNode) -> GradClear | None:
        """The clear this node is, if it is one (see the module docstring)."""
        # Exact type checks first: these node classes have no subclasses, and isinstance
        # against LibCST's ABCs costs more than the rest of this test on most nodes.
        if type(node) not in CLEAR_TYPES:
            return None
        if type(node) is cst.Attribute:
            if node.attr.value in GRAD_CLEARING_NAMES:
                if type(self.index.parent.get(node)) is cst.Expr:
                    return None  # `opt.zero_grad` as a statement: the call was forgotten
                return GradClear(node, dotted_name(node.value))
            return None
        if type(node) is cst.Assign:
            if any(is_grad_expr(t.target) for t in node.targets):
                return GradClear(node)
            return None
        if type(node) is cst.AnnAssign or type(node) is cst.AugAssign:
            # `p.grad *= 0` is rare, but `p.grad: Tensor = None` is an assignment.
            if type(node) is cst.AnnAssign and is_grad_expr(node.target):
                return GradClear(node)
            if (
                type(node) is cst.AugAssign
                and is_grad_expr(node.target)
                and type(node.operator) is cst.MultiplyAssign
                and type(node.value) is cst.Integer
                and node.value.value == "0"
            ):
                return GradClear(node)
            return None
        if type(node) is cst.Del:
            if is_grad_expr(node.target) or (
                type(node.target) is cst.Tuple
                and any(is_grad_expr(e.value) for e in node.target.elements)
            ):
                return GradClear(node)
            return None
        if type(node) is cst.Call:
            func = node.func
            if type(func) is cst.Attribute:
                if func.attr.value in OVERWRITING_METHODS and is_grad_expr(func.value):
                    return GradClear(node)
                return None  # `X.zero_grad` itself is found as the Attribute
            if type(func) is cst.Name and func.value in GRAD_CLEARING_NAMES:
                return GradClear(node)
            qualified = self.index.qualified_name(func)
            if qualified in ZEROING_FUNCTIONS and node.args and is_grad_expr(node.args[0].value):
                return GradClear(node)
        return None

    def update_at(self, node: cst.CSTNode) -> str | None:
        """The tensor (dotted name, `.data` stripped) this node updates in place from its
        own `.grad`, if it is such a manual update."""
        if type(node) not in UPDATE_TYPES:
            return None
        if type(node) is cst.AugAssign:
            if not isinstance(node.operator, (cst.SubtractAssign, cst.AddAssign)):
                return None
            return self._updated(node.target, node.value, node)
        if type(node) is cst.Assign and len(node.targets) == 1:
            target: cst.BaseExpression = node.targets[0].target
            # `x.data = x.data - a * x.grad` changes the tensor itself; `x = ...` rebinds
            # the name (GL003's pitfall, not an update of `x`).
            if type(target) is cst.Subscript:
                target = target.value  # `x.data[idx] = ...` writes into x
                if not (type(target) is cst.Attribute and target.attr.value == "data"):
                    return None  # `x[idx] = ...` on a leaf raises (GL002) or is data
            if type(target) is cst.Attribute and target.attr.value == "data":
                return self._updated(target, node.value, node)
            return None
        if type(node) is cst.Call and type(node.func) is cst.Attribute:
            if node.func.attr.value not in UPDATING_METHODS:
                return None
            receiver = node.func.value
            for arg in node.args:
                found = self._updated(receiver, arg.value, node)
                if found is not None:
                    return found
        return None

    def _updated(self, target: cst.CSTNode, value: cst.CSTNode, at: cst.CSTNode) -> str | None:
        if is_grad_expr(target):
            return None  # `p.grad += noise` changes the gradient, not the parameter
        name = _strip_data(dotted_name(target))
        if name is None:
            return None
        if name in grad_owners(value, self.index):
            return name
        aliases = self._grad_aliases(self.index.scope_of(at))
        for node in self.index.walk(value):
            if type(node) is cst.Name and name in aliases.get(node.value, ()):
                return name
        return None

    def _grad_aliases(self, scope: cst.CSTNode) -> dict[str, set[str]]:
        """Names bound in a scope to a gradient (`g = p.grad`, `grad = delta.grad.detach()`,
        `gs = w.grad.data.sign()`), with whose gradient it is."""
        found = self._aliases.get(scope)
        if found is not None:
            return found
        found = {}
        body = scope.body if isinstance(scope, (cst.FunctionDef, cst.Lambda)) else scope
        for node in self.index.walk(body):
            if type(node) is cst.Assign and len(node.targets) == 1:
                target = node.targets[0].target
                if type(target) is cst.Name and not is_grad_expr(target):
                    owners = grad_owners(node.value, self.index)
                    if owners:
                        found.setdefault(target.value, set()).update(owners)
        self._aliases[scope] = found
        return found
