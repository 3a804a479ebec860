"""Parameters known by their use, not by how they were made.

Course code and hand-written models keep their weights in plain names and lists: `W =
torch.normal(0, 0.01, (2, 1))` made to require grad in a helper out of sight, `params =
get_params()`, `rnn(X, state, params)`, and an update `for p in params: p[:] -= lr *
p.grad`. Nothing at the binding says "parameter"; the uses do:

- a tensor whose gradient is read or cleared (`p.grad`, `p.grad.zero_()`) is a leaf that requires grad: only such a tensor has a `.grad` to read (a
  non-leaf's is None, and arithmetic on it raises), unless the code asks a non-leaf to
  keep it with `retain_grad()`, which then says nothing;
- an iterable whose elements are such tensors, or are made to require grad (`for p in
  params: p.requires_grad_(True)`), holds parameters: `for p in params`,
  `for p, v in zip(params, states)`, `for i, p in enumerate(params)`; so does one handed
  to an optimizer (`torch.optim.SGD(params, lr)`), or to a function of this file whose
  parameter holds parameters by its own uses (`sgd(params, lr)` with `sgd` reading each
  `param.grad`);
- a name bound to what a function of this file returns holds parameters when every
  `return` of it gives back such an iterable (`params = get_params()`);
- a function's parameter that every call of it in this file fills with an iterable that
  holds parameters holds them too (`predict(prefix, rnn, params)` called from the
  training function that clips and steps `params`).

The evidence must belong to the same value as the use asked about: a read of `p.grad`
counts for a use of `p` only when the same bindings of `p` reach both.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Protocol

import libcst as cst

from gradlint.analysis.arguments import argument_of, signature_of
from gradlint.analysis.bindings import PYTHON_BINDINGS, ScopeBindings, is_false
from gradlint.analysis.index import FileIndex, loop_element_sources, target_names
from gradlint.analysis.torch_api import (
    GRAD_ATTRIBUTE,
    LOOP_WALKING_BUILTINS,
    OPTIMIZER_CLASSES,
    REQUIRES_GRAD_METHOD,
    RETAIN_GRAD_METHOD,
)

_Built = Callable[[cst.BaseExpression, cst.CSTNode], bool]


class Callees(Protocol):
    """What the roles need of the callee resolver (analysis.callees)."""

    def resolve(self, call: cst.Call) -> cst.FunctionDef | None: ...


class PassedArgument(Protocol):
    @property
    def site(self) -> cst.Call: ...

    @property
    def passed(self) -> cst.BaseExpression | None: ...


class ArgumentsAtCalls(Protocol):
    """What the roles need of the one fact of what callers pass (analysis.caller_arguments,
    which imports what imports this module)."""

    def here(self, func: cst.FunctionDef, param: str) -> Sequence[PassedArgument]: ...


class ParameterRoles:
    def __init__(
        self,
        index: FileIndex,
        bindings: ScopeBindings,
        callees: Callees,
        callers: ArgumentsAtCalls,
    ) -> None:
        self.index = index
        self.bindings = bindings
        self.callees = callees
        # what each call of a function of this file binds a parameter to (one fact)
        self.callers = callers
        # Is an expression built as an iterable of parameters (`[W, b]` of leaves,
        # `list(model.parameters())`)? Told by analysis.tensors, which reads these roles
        # for what no binding shows; held weakly, so that the two make no reference
        # cycle (the file's facts are freed by reference counting, analysis.facts).
        self._built: weakref.WeakMethod[_Built] | None = None
        # (scope, name, the bindings that reach, callers asked) -> holds parameters;
        # False while it is being asked
        self._holders: dict[tuple[cst.CSTNode, str, frozenset[cst.CSTNode], bool], bool] = {}
        self._grad_names: frozenset[str] | None = None

    def ask_built_with(self, method: _Built) -> None:
        """Where to ask whether an expression is built as an iterable of parameters."""
        self._built = weakref.WeakMethod(method)

    # -- the queries -------------------------------------------------------------------

    def is_parameter(self, name: str, use: cst.CSTNode) -> bool:
        """Does the plain name at `use` hold a leaf that requires grad, by a read or a
        clearing of its `.grad` that the same bindings reach?"""
        if name not in self._names_with_grad_read():
            return False  # most names: no `.grad` of theirs anywhere in the file
        reaching = self._reaching(name, use)
        if not reaching:
            return False
        scope = self.index.scope_of(use)
        return any(self._reaching(name, read) == reaching for read in self._grad_reads(scope, name))

    def _names_with_grad_read(self) -> frozenset[str]:
        """The plain names whose `.grad` the file reads somewhere: one walk per file."""
        if self._grad_names is None:
            self._grad_names = frozenset(
                node.value.value
                for node in self.index.of_types(cst.Attribute)
                if node.attr.value == GRAD_ATTRIBUTE and type(node.value) is cst.Name
            )
        return self._grad_names

    def holds_parameters(self, name: str, use: cst.CSTNode) -> bool:
        """Does the plain name at `use` hold an iterable of parameters, by its uses (see
        the module's docstring)?"""
        reaching = self._reaching(name, use)
        if not reaching:
            return False
        return self._holds(self.index.scope_of(use), name, reaching, callers=True)

    # -- evidence ----------------------------------------------------------------------

    def _reaching(self, name: str, use: cst.CSTNode) -> frozenset[cst.CSTNode]:
        if "." in name:
            return frozenset()
        scope = self.index.scope_of(use)
        bindings = self.bindings.nodes(scope, PYTHON_BINDINGS).get(name)
        if not bindings:
            return frozenset()
        return frozenset(self.index.reaching(bindings, use))

    def _grad_reads(self, scope: cst.CSTNode, name: str) -> list[cst.CSTNode]:
        """The reads of `name.grad` in the scope (`name.grad.zero_()` among them), or
        none when the scope asks a non-leaf of that name to keep its gradient."""
        reads = self.bindings.uses(scope)
        if reads.get(f"{name}.{RETAIN_GRAD_METHOD}"):
            return []
        return reads.get(f"{name}.{GRAD_ATTRIBUTE}", [])

    def _element_is_parameter(self, loop: cst.For, name: str) -> bool:
        """Is the loop's target `name` a parameter in the loop, by a read of its `.grad`
        or a `requires_grad_()` on it that this loop's binding reaches?"""
        scope = self.index.scope_of(loop)
        bindings = self.bindings.nodes(scope, PYTHON_BINDINGS).get(name)
        if not bindings:
            return False
        evidence = [*self._grad_reads(scope, name), *self._made_to_require_grad(scope, name)]
        return any(loop in self.index.reaching(bindings, read) for read in evidence)

    def _made_to_require_grad(self, scope: cst.CSTNode, name: str) -> list[cst.CSTNode]:
        """The `name.requires_grad_()` calls of the scope (not `requires_grad_(False)`)."""
        found: list[cst.CSTNode] = []
        for read in self.bindings.uses(scope).get(f"{name}.{REQUIRES_GRAD_METHOD}", ()):
            call = self.index.parent.get(read)
            if type(call) is cst.Call and call.func is read:
                if not (call.args and is_false(call.args[0].value)):
                    found.append(call)
        return found

    def _holds(
        self, scope: cst.CSTNode, name: str, reaching: frozenset[cst.CSTNode], *, callers: bool
    ) -> bool:
        """With `callers`, a parameter filled by every call of its function may hold
        parameters by the callers' arguments; without, only its own uses (and those of
        the functions it is handed to) count. A question goes up the calls or down into
        callees, never back, so only a recursive function meets a cycle."""
        key = (scope, name, reaching, callers)
        known = self._holders.get(key)
        if known is not None:
            return known
        self._holders[key] = False  # a cycle of calls proves nothing
        found = self._compute_holds(scope, name, reaching, callers)
        self._holders[key] = found
        return found

    def _compute_holds(
        self, scope: cst.CSTNode, name: str, reaching: frozenset[cst.CSTNode], callers: bool
    ) -> bool:
        for read in self.bindings.uses(scope).get(name, ()):
            if self._reaching(name, read) == reaching and self._read_as_parameters(read):
                return True
        if all(self._returned_holder(binding, name) for binding in reaching):
            return True
        if not callers or type(scope) is not cst.FunctionDef or len(reaching) != 1:
            return False
        (binding,) = reaching
        if type(binding) is not cst.Param:
            return False
        passed = self.callers.here(scope, name)
        return bool(passed) and all(self._passes_parameters(a.passed, a.site) for a in passed)

    def _passes_parameters(self, argument: cst.BaseExpression | None, site: cst.Call) -> bool:
        if argument is None:
            return False
        built = self._built() if self._built is not None else None
        if built is not None and built(argument, site):
            return True
        return type(argument) is cst.Name and self.holds_parameters(argument.value, site)

    def _returned_holder(self, binding: cst.CSTNode, name: str) -> bool:
        """`name = f(...)` where every `return` of this file's function `f` gives back a
        name that holds parameters there (`return params` after `for p in params:
        p.requires_grad_(True)`)."""
        if type(binding) is not cst.Assign or len(binding.targets) != 1:
            return False
        target, value = binding.targets[0].target, binding.value
        if type(target) is not cst.Name or target.value != name or type(value) is not cst.Call:
            return False
        func = self.callees.resolve(value)
        if func is None:
            return False
        returns = self.index.value_returns(func)
        return bool(returns) and all(
            type(returned) is cst.Name
            and self._holds(
                func, returned.value, self._reaching(returned.value, returned), callers=False
            )
            for _, returned in returns
        )

    def _loop_over(self, read: cst.CSTNode) -> cst.For | None:
        """The `for` whose header walks the read: its iterable, or an argument of the
        builtin call that is (`zip(params, states)`, `enumerate(params)`)."""
        parent = self.index.parent.get(read)
        if type(parent) is cst.For:
            return parent if parent.iter is read else None
        if type(parent) is not cst.Arg or parent.value is not read:
            return None
        call = self.index.parent.get(parent)
        if type(call) is not cst.Call:
            return None
        loop = self.index.parent.get(call)
        if type(loop) is not cst.For or loop.iter is not call:
            return None
        qualified = self.index.qualified_name(call.func) or ""
        return loop if qualified in LOOP_WALKING_BUILTINS else None

    def _read_as_parameters(self, read: cst.CSTNode) -> bool:
        """Is this read of the iterable one that shows it holds parameters: iterated with
        its elements' gradients read, handed to an optimizer, or handed to a function of
        this file whose parameter holds parameters?"""
        parent = self.index.parent.get(read)
        loop = self._loop_over(read)
        if loop is not None:
            # `for p in params`, `for p, v in zip(params, states)`, `for i, p in
            # enumerate(params)`: the name that takes the read's elements
            sources = loop_element_sources(loop.target, loop.iter)
            return any(
                source is read and self._element_is_parameter(loop, name)
                for name, source in zip(target_names(loop.target), sources, strict=True)
            )
        if type(parent) is not cst.Arg or parent.value is not read:
            return False
        call = self.index.parent.get(parent)
        if type(call) is not cst.Call:
            return False
        positional = [a for a in call.args if a.keyword is None and not a.star]
        qualified = self.index.qualified_name(call.func) or ""
        if qualified.startswith("torch.optim.") and qualified.rsplit(".", 1)[-1] in (
            OPTIMIZER_CLASSES
        ):
            return bool(positional) and positional[0] is parent
        callee = self.callees.resolve(call)
        if callee is None:
            return False
        signature = signature_of(callee, method=self.index.enclosing_class(callee) is not None)
        for param in (*signature.positional, *signature.keyword_only):
            if argument_of(call, signature, param) is read:
                return self._param_holds(callee, param)
        return False

    def _param_holds(self, func: cst.FunctionDef, param: str) -> bool:
        """Does the function's parameter hold parameters by its uses in the function?"""
        for binding in self.bindings.records(func, PYTHON_BINDINGS).get(param, ()):
            if type(binding.node) is cst.Param:
                return self._holds(func, param, frozenset({binding.node}), callers=False)
        return False
