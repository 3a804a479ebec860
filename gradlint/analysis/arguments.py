"""Which argument of a call binds a parameter: Python's binding rules, said once.

Every analysis that follows a value across a call (the model handed to
`evaluate(model, loader)`, the flag of `run_epoch(train=False)`, the tensor given to
`to_np(t)`, the loss a tracker's `update(val)` keeps) and every reading of a library
call's argument (`F.mse_loss(input, target)`, `torch.autograd.grad(outputs, ...)`) asks
here. The rules, as CPython applies them:

- positional arguments fill the positional parameters in order, after the receiver a
  method call binds itself: `obj.m(x)`, `self.m(x)` and `super().m(x)` bind `self`; a
  classmethod binds `cls` through its class or an instance alike; a method called on
  its class (`Base.m(self, x)`, `cls.m(obj, x)`) binds none, nor does a staticmethod or
  a function called by name;
- a keyword argument binds the parameter of its name, unless that one is positional-only
  (then it goes to `**kwargs`);
- `*args` in a call may fill any positional parameter from its place on, `**kwargs` any
  parameter that nothing else binds: what they bind is out of sight, so the answer is
  None rather than a guess;
- a parameter no argument binds keeps its default (a missing one without a default is a
  TypeError: None too).

The call is read as its arguments' shapes (keyword, star), so the same binding serves a
LibCST call of the linted file and the summaries of the project's other files, which are
made from `ast` (analysis.project.ExternalFunction).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

# LibCST is loaded only where a LibCST call is read (analysis.imports says why)
if TYPE_CHECKING:
    import libcst as cst

# What binds a method's first parameter at a call made through an attribute.
INSTANCE = "instance"  # a plain method: the object the call is made on
CLASS = "class"  # a classmethod: the class, whether reached through it or an instance
_DECORATOR_RECEIVERS = {"staticmethod": "", "classmethod": CLASS}

# An argument as binding sees it: its keyword (None for a positional one) and its star
# ("", "*" or "**").
ArgumentShape = tuple[str | None, str]


@dataclass(frozen=True)
class Bound:
    """What binds a parameter at a call: the argument at `index` of the call's
    arguments, or, with index None, the parameter's default (no argument passes it, and
    no `*args` or `**kwargs` of the call can)."""

    index: int | None


@dataclass(frozen=True)
class Signature:
    """A function's parameters as binding needs them (its `*args` and `**kwargs` bind
    containers, never one argument, and are left out)."""

    # the positional-only and ordinary parameters, in order
    positional: tuple[str, ...] = ()
    # how many of `positional` are positional-only (before a `/`)
    positional_only: int = 0
    keyword_only: tuple[str, ...] = ()
    # the parameters that have a default
    defaulted: tuple[str, ...] = ()
    # "" for a function or a staticmethod, INSTANCE for a method, CLASS for a
    # classmethod: what a call through an attribute binds the first parameter to
    receiver: str = ""
    # a `*args` / `**kwargs` parameter: any further positional / keyword argument fits
    var_positional: bool = False
    var_keyword: bool = False

    def admits(self, args: Sequence[ArgumentShape], *, receiver_passed: bool) -> bool:
        """Can a call with these arguments run this function without a TypeError for an
        argument it has no parameter for (a keyword it does not name, one positional
        argument too many)? True where a star argument hides what is passed. A call of
        a method's name that passes `eval=True` to `def get_action(self, state)` is a
        call of another class's method."""
        if any(star for _, star in args):
            return True
        named = set(self.positional[self.positional_only :]) | set(self.keyword_only)
        if not self.var_keyword and any(
            keyword is not None and keyword not in named for keyword, _ in args
        ):
            return False
        if self.var_positional:
            return True
        capacity = len(self.positional)
        if receiver_passed and self.receiver:
            capacity -= 1  # the object the call is made on fills the first one
        return sum(1 for keyword, _ in args if keyword is None) <= capacity

    def bind(
        self, args: Sequence[ArgumentShape], param: str, *, receiver_passed: bool
    ) -> Bound | None:
        """What binds `param` at a call with these arguments; `receiver_passed`: the
        call binds the receiver itself (passes_receiver). None when that is out of sight
        (a star argument may hold it), or nothing does: the receiver itself, a missing
        argument, a name that is no parameter."""
        if param in self.positional:
            declared = self.positional.index(param)
            keyword = param if declared >= self.positional_only else None
            if receiver_passed and self.receiver:
                if declared == 0:
                    return None  # the object the call is made on, not an argument
                declared -= 1
            found = bind(args, declared, keyword)
        elif param in self.keyword_only:
            found = bind(args, None, param)
        else:
            return None
        if found is not None and found.index is None and param not in self.defaulted:
            return None  # not passed and no default: a TypeError at run time
        return found

    def slots(self, param: str, *, receiver_passed: bool) -> tuple[int | None, str | None]:
        """(the position among a call's positional arguments, the keyword) that can pass
        `param`; None for either that cannot. For a caller's record of its arguments by
        place rather than a call's shapes (project.CallerContext.model_arguments)."""
        if param in self.keyword_only:
            return None, param
        if param not in self.positional:
            return None, None
        declared = self.positional.index(param)
        keyword = param if declared >= self.positional_only else None
        if receiver_passed and self.receiver:
            if declared == 0:
                return None, None  # the object the call is made on
            declared -= 1
        return declared, keyword


def bind(args: Sequence[ArgumentShape], position: int | None, keyword: str | None) -> Bound | None:
    """What binds the parameter at `position` among those the call's positional
    arguments fill (None: keyword-only) and named `keyword` (None: positional-only) at
    a call with these arguments: the rules in the module's docstring."""
    seen = 0  # positional arguments before the first `*args`
    unpacked = double_unpacked = False
    for i, (name, star) in enumerate(args):
        if star == "**":
            double_unpacked = True
        elif star:
            unpacked = True  # the positions from here on are out of sight
        elif name is not None:
            if name == keyword:
                return Bound(i)
        elif not unpacked:
            if seen == position:
                return Bound(i)
            seen += 1
    if (unpacked and position is not None) or double_unpacked:
        return None
    return Bound(None)


def collected(args: Sequence[ArgumentShape], count: int) -> list[int]:
    """The indices of the arguments a `*args` parameter collects after `count`
    positional parameters: the positional arguments beyond them, up to the first star
    argument (from there which is which is out of sight)."""
    found = []
    seen = 0
    for i, (name, star) in enumerate(args):
        if star == "*":
            break
        if name is None and not star:
            if seen >= count:
                found.append(i)
            seen += 1
    return found


def shape_of(call: cst.Call) -> list[ArgumentShape]:
    return [(a.keyword.value if a.keyword is not None else None, a.star) for a in call.args]


def passes_receiver(call: cst.Call, receiver: str, *, on_class: bool = False) -> bool:
    """Does `call` bind the callee's first parameter itself (see Signature.receiver)?
    Only a call through an attribute does: of a classmethod always, of a method unless
    it is made on the class, as `cls.m(...)` is, or as the caller knows (`on_class`: an
    imported class's method, `Net.m(obj, x)`)."""
    import libcst as cst

    if not receiver or type(call.func) is not cst.Attribute:
        return False
    if receiver == CLASS:
        return True
    owner = call.func.value
    return not on_class and not (type(owner) is cst.Name and owner.value == "cls")


def bound_at(
    call: cst.Call, signature: Signature, param: str, *, on_class: bool = False
) -> Bound | None:
    """What binds `param` at `call`, a call of a function with `signature`."""
    passed = passes_receiver(call, signature.receiver, on_class=on_class)
    return signature.bind(shape_of(call), param, receiver_passed=passed)


def argument_of(
    call: cst.Call,
    signature: Signature,
    param: str,
    *,
    on_class: bool = False,
    receiver_passed: bool | None = None,
) -> cst.BaseExpression | None:
    """The argument expression `call` passes for `param`; None when it passes none (the
    default binds it) or that is out of sight. `receiver_passed`: whether the call binds
    the method's receiver itself, when the caller knows it (an instance called by name,
    `criterion(out, y)`, or a class built, `Scorer(net)`); else as passes_receiver says."""
    if receiver_passed is None:
        found = bound_at(call, signature, param, on_class=on_class)
    else:
        found = signature.bind(shape_of(call), param, receiver_passed=receiver_passed)
    return call.args[found.index].value if found is not None and found.index is not None else None


def passed_or_default(
    call: cst.Call, func: cst.FunctionDef, param: str, *, method: bool, constructed: bool = False
) -> tuple[cst.BaseExpression, bool] | None:
    """(the expression `call`, a call of the linted file's `func`, binds `param` to,
    whether it is the parameter's default); None when that cannot be told. `method`:
    `func` is defined directly in a class's body; `constructed`: it is the class's
    `__init__`, which `call` (`Agent(net)`) runs on the instance it builds."""
    signature = signature_of(func, method=method)
    if constructed:
        found = signature.bind(shape_of(call), param, receiver_passed=True)
    else:
        found = bound_at(call, signature, param)
    if found is None:
        return None
    if found.index is not None:
        return call.args[found.index].value, False
    params = func.params
    for declared in (*params.posonly_params, *params.params, *params.kwonly_params):
        if declared.name.value == param and declared.default is not None:
            return declared.default, True
    return None


def library_argument(call: cst.Call, keyword: str, position: int | None = None) -> cst.Arg | None:
    """The argument of a library call (`F.mse_loss(input, target)`,
    `torch.autograd.grad(outputs, inputs, ...)`) that binds its parameter `keyword`, the
    `position`-th of the positional ones (None: keyword-only); None when the call passes
    none or a star argument hides it."""
    found = bind(shape_of(call), position, keyword)
    return call.args[found.index] if found is not None and found.index is not None else None


def signature_of(func: cst.FunctionDef, *, method: bool) -> Signature:
    """The signature of a function of the linted file; `method`: it is defined directly
    in a class's body."""
    import libcst as cst

    params = func.params
    positional = (*params.posonly_params, *params.params)
    return Signature(
        positional=tuple(p.name.value for p in positional),
        positional_only=len(params.posonly_params),
        keyword_only=tuple(p.name.value for p in params.kwonly_params),
        defaulted=tuple(
            p.name.value for p in (*positional, *params.kwonly_params) if p.default is not None
        ),
        receiver=_receiver(
            method, [d.decorator.value for d in func.decorators if type(d.decorator) is cst.Name]
        ),
        var_positional=isinstance(params.star_arg, cst.Param),
        var_keyword=params.star_kwarg is not None,
    )


def ast_signature(func: ast.FunctionDef | ast.AsyncFunctionDef, *, method: bool) -> Signature:
    """The same for a function of another of the project's files, read with `ast`."""
    args = func.args
    positional = (*args.posonlyargs, *args.args)
    # ast aligns the positional defaults with the last positional parameters
    defaulted = [a.arg for a in positional[len(positional) - len(args.defaults) :]]
    defaulted += [
        a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
    ]
    return Signature(
        positional=tuple(a.arg for a in positional),
        positional_only=len(args.posonlyargs),
        keyword_only=tuple(a.arg for a in args.kwonlyargs),
        defaulted=tuple(defaulted),
        receiver=_receiver(method, [d.id for d in func.decorator_list if isinstance(d, ast.Name)]),
        var_positional=args.vararg is not None,
        var_keyword=args.kwarg is not None,
    )


def ast_shape_of(call: ast.Call) -> list[ArgumentShape]:
    """A call of another of the project's files, read with `ast`, as binding sees it."""
    shapes: list[ArgumentShape] = [
        (None, "*" if isinstance(a, ast.Starred) else "") for a in call.args
    ]
    shapes += [(k.arg, "" if k.arg is not None else "**") for k in call.keywords]
    return shapes


def _receiver(method: bool, decorators: list[str]) -> str:
    if not method:
        return ""
    for name in decorators:
        if name in _DECORATOR_RECEIVERS:
            return _DECORATOR_RECEIVERS[name]
    return INSTANCE
