"""The facts a function summary states about a call or a statement, each defined once.

Two summaries read function bodies: the linted file's (analysis.summaries and
analysis.autograd_calls, over LibCST) and the project's other files' (analysis.project,
over `ast`). Each reads its own syntax into the plain names these functions take (a
callee resolved through the imports, a receiver's dotted name, an argument's); what the
call or statement then is to autograd is decided here, for both.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from gradlint.analysis.torch_api import (
    ARITHMETIC_BUILTINS,
    AUTOGRAD_BACKWARD,
    AUTOGRAD_GRAD,
    BACKWARD_METHODS,
    DETACHING_ATTRIBUTES,
    DETACHING_METHODS,
    DIFFERENTIATING_NAMESPACES,
    DISTRIBUTIONS_NAMESPACE,
    ESCAPING_NAMESPACES,
    GRAD_ATTRIBUTE,
    GRAD_MODE_MODULES,
    GRAD_MODE_NAMES,
    GRADLESS_LIBRARY_FUNCTIONS,
    GRADLESS_RESULTS,
    GRAPH_CUTTING_METHODS,
    GRAPH_KEEPING_METHODS,
    GRAPH_PRESERVING_LIBRARY_FUNCTIONS,
    INDEX_METHODS,
    METADATA_ATTRIBUTES,
    NOT_A_HANDED_FORWARD,
    NUMBER_BUILTINS,
    NUMBER_METHODS,
    OPTIMIZER_STEP,
    PYTHON_VALUE_BUILTINS,
    STORING_METHODS,
    TENSOR_RETURNING_BUILTINS,
    TRACKER_LOGGING_FUNCTIONS,
    VARIABLE_CLASSES,
    converts_with_numpy,
    is_test_assertion,
)

T = TypeVar("T")

# Names of what a hot loop walks over or counts (its `for` header: target and iterable).
_HOT_LOOP_NAMES = re.compile(
    r"epoch|batch|load|data|step|iter|frame|episode|env|sample_idx|global", re.IGNORECASE
)


def hot_loop_header(header: str | None) -> bool:
    """Does a loop run per batch by what its header says? `header`: a `for` loop's
    target and iterable as text (`x, y loader`); None for a `while` loop, which is hot.
    The linted file's impact (LibCST) and the project's summaries (ast) both ask it."""
    return header is None or _HOT_LOOP_NAMES.search(header) is not None


# Methods that add their one argument, unchanged, to the receiver: `self.values.append(v)`.
ACCUMULATING_METHODS = frozenset({"append", "extend"})
# The parameters that name the object or class a method is called on, not an argument.
RECEIVER_PARAMETERS = frozenset({"self", "cls"})


class GradMode(enum.Enum):
    RECORDING = "recording"
    NOT_RECORDING = "not recording"
    UNKNOWN = "unknown"


class Mode(enum.Enum):
    """The train/eval mode a module switch sets."""

    EVAL = "eval"
    TRAIN = "train"
    # `model.train(was)`, `model.train(flag)`: a restore, or a mode only known at run time.
    # It ends whatever eval came before, as far as a linter can tell.
    SET = "set"


def mode_switch(
    method: str | None, arguments: Sequence[tuple[str | None, bool | None]]
) -> Mode | None:
    """What `x.<method>(<arguments>)` does to x's train/eval mode: EVAL for `eval()`,
    `train(False)`, `train(mode=False)`; TRAIN for `train()`, `train(True)`; SET for
    `train(flag)`; None for any other call. `arguments`: each argument's keyword (None
    when positional) and its value as a literal bool (None when it is not one)."""
    if method == "eval":
        return Mode.EVAL if not arguments else None
    if method != "train":
        return None
    if not arguments:
        return Mode.TRAIN
    keyword, flag = arguments[0]
    if keyword is not None and keyword != "mode":
        return None
    if flag is None:
        return Mode.SET
    return Mode.TRAIN if flag else Mode.EVAL


def grad_api(qualified: str | None) -> str | None:
    """`torch.no_grad` / `torch.autograd.grad_mode.no_grad` -> `no_grad`: the grad-mode
    API a name resolved through the imports names (`no_grad`, `enable_grad`,
    `inference_mode`, `set_grad_enabled`), else None."""
    if not qualified:
        return None
    for prefix in GRAD_MODE_MODULES:
        if qualified.startswith(prefix):
            tail = qualified[len(prefix) :]
            if tail in GRAD_MODE_NAMES:
                return tail
    return None


def picked_grad_mode_effect(body: GradMode | None, orelse: GradMode | None) -> GradMode | None:
    """What entering a manager a condition picks does (`torch.no_grad() if frozen else
    nullcontext()`), from each arm's grad_mode_effect: that mode when both arms agree,
    UNKNOWN when one may stop recording and the other not (the flag decides). An arm
    that is no manager keeps the mode around it, which records where the other arm is
    `enable_grad()`, so that pair enters nothing (the flag paths read it per path)."""
    if body is orelse:
        return body
    if {body, orelse} == {GradMode.RECORDING, None}:
        return None
    return GradMode.UNKNOWN


def grad_mode_effect(qualified: str | None, flags: Sequence[bool | None] | None) -> GradMode | None:
    """What entering a with-item or a decorator does to grad mode; None if it is no
    grad-mode manager. `qualified`: what it names (called or not), resolved through the
    imports; `flags`: None when it is not called, else its first argument as a literal
    bool (None when it is not one), or nothing."""
    api = grad_api(qualified)
    if api is None:
        return None
    if api == "no_grad":
        return GradMode.NOT_RECORDING
    if api == "enable_grad":
        return GradMode.RECORDING
    if api == "inference_mode":
        if not flags:
            return GradMode.NOT_RECORDING
        if flags[0] is None:
            return GradMode.UNKNOWN
        return GradMode.NOT_RECORDING if flags[0] else None
    # set_grad_enabled(flag)
    if flags is None:
        return None
    if not flags or flags[0] is None:
        return GradMode.UNKNOWN
    return GradMode.RECORDING if flags[0] else GradMode.NOT_RECORDING


def decorated_mode(
    decorators: Iterable[tuple[str | None, Sequence[bool | None] | None]],
) -> GradMode | None:
    """The grad mode a function's decorators (outermost first, each as grad_mode_effect
    reads it) run its body in; None when none decides. A home-made decorator named
    after grad mode (torch.optim's `_use_grad_for_differentiable`, `no_grad_if(...)`)
    may switch it: UNKNOWN."""
    for qualified, flags in reversed(list(decorators)):
        effect = grad_mode_effect(qualified, flags)
        if effect is not None:
            return effect
        lowered = (qualified or "").lower()
        if "grad" in lowered or "inference" in lowered:
            return GradMode.UNKNOWN
    return None


class Holder(enum.Enum):
    """What a node around a call's output (or around an expression that holds it) is,
    for whether the output outlives its statement."""

    EXPRESSION_STATEMENT = "drops it at once"  # `model(x)`, `print(model(x))`
    HANDED_ON = "yields or awaits it"
    STORED = "stores it"  # an argument of `losses.append(...)` (STORING_METHODS)
    OTHER = "has no say: the next node out decides"


def storing_holder(method: str | None) -> Holder:
    """A call of `<receiver>.<method>(...)` around the output, in its arguments."""
    return Holder.STORED if method in STORING_METHODS else Holder.OTHER


def output_kept(holders: Iterable[Holder]) -> bool:
    """Does a call's output outlive its statement (assigned, returned, yielded, stored)?
    `holders`: the nodes around it, innermost first, up to its statement (an expression
    statement's `Holder.EXPRESSION_STATEMENT` last; any other statement keeps it). The
    innermost one with a say decides: `self.assertEqual(model(x), ref)` or a bare
    `model(x)` drops it, `losses.append(model(x))` keeps it."""
    for holder in holders:
        if holder is not Holder.OTHER:
            return holder is not Holder.EXPRESSION_STATEMENT
    return True


def differentiation_kind(
    qualified: str | None,
    method: str | None,
    step_operands: Callable[[T], tuple[str | None, Iterable[str | None]]],
    call: T,
) -> str | None:
    """What a call does to autograd: "grad" (`torch.autograd.grad`), "backward"
    (`torch.autograd.backward`, `loss.backward()`, `accelerator.backward(loss)`), "step"
    (an optimizer's step), or None. `qualified`: the callee resolved through the
    imports; `method`: its attribute when the callee is `x.<method>`;
    `step_operands(call)`: x's dotted name and its arguments' (None where one has none),
    asked only of a `.step` (this runs on every call of a file: no closure per call)."""
    if qualified in AUTOGRAD_GRAD:
        return "grad"
    if qualified in AUTOGRAD_BACKWARD:
        return "backward"
    if method is None:
        return None
    if method in BACKWARD_METHODS:
        return "backward"
    if method == OPTIMIZER_STEP and is_optimizer_step(*step_operands(call)):
        return "step"
    return None


def is_optimizer_step(receiver: str | None, arguments: Iterable[str | None]) -> bool:
    """Is `<receiver>.step(<arguments>)` an optimizer's step? `opt.step()`,
    `self.optimizer.step()`, and AMP's `scaler.step(optimizer)`, which steps the optimizer
    it is given; not a scheduler's."""
    lowered = (receiver or "").lower()
    if "sched" in lowered:
        return False
    if "opt" in lowered.rsplit(".", 1)[-1]:
        return True
    return any("opt" in (argument or "").lower() for argument in arguments)


def forwarded_parameter(callee: str | None, params: Iterable[str]) -> str | None:
    """The parameter a call runs a forward of: `model(x)` or `model.forward(x)` in a
    function with a parameter `model` (not `self` or `cls`). `callee`: the dotted name
    of what is called."""
    if callee is None:
        return None
    if callee.endswith(".forward"):
        callee = callee[: -len(".forward")]
    root, _, method = callee.partition(".")
    if method and "." not in method and method not in NOT_A_HANDED_FORWARD:
        # `model.predict(seq)`, `policy.act(obs)`: a method of the module handed in,
        # not of the nn.Module API, computes with its weights
        callee = root
    if "." in callee or callee in RECEIVER_PARAMETERS or callee not in params:
        return None
    return callee


def receiver_attribute_called(callee: str | None, methods: Iterable[str]) -> str | None:
    """The attribute of the object a method calls: `self.network(x)` or
    `self.network.forward(x)` (path `self.network`), not a method of the class
    (`self.act(x)`, one of `methods`) nor a method of what the attribute holds
    (`self.memory.sample(n)`)."""
    if callee is None:
        return None
    if callee.endswith(".forward"):
        callee = callee[: -len(".forward")]
    root, _, attribute = callee.partition(".")
    if root != "self" or not attribute or "." in attribute or attribute in methods:
        return None
    return callee


def accumulated_parameter(
    store: str | None, added: str | None, params: Iterable[str]
) -> str | None:
    """The parameter a statement adds, unchanged, to the object's own state: `self.sum
    += val` (store `self.sum`, added `val`) or `self.values.append(val)` (store
    `self.values`); a tracker's update method. `added` is the plain name added (None for
    anything else)."""
    if store is None or added is None or not store.startswith("self."):
        return None
    if added in RECEIVER_PARAMETERS or added not in params:
        return None
    return added


# -- is a result only read as numbers? (analysis.result_uses over LibCST, and the caller
# search of analysis.project over `ast`, follow a value; what each step it meets does to
# it is decided here, for both) ----------------------------------------------------------


class ResultUse(enum.Enum):
    NUMBER = "made a number"  # `.item()`, `float(x)`, an argmax: the graph's end, on purpose
    NUMPY = "made a numpy array"  # `.numpy()`: a number, and it raises on a value with grad
    NUMPY_CALL = "read by numpy"  # `np.mean(x)`: ends it, and raises on a value with grad
    READ = "read without its history"  # a comparison, `.shape`, `print`
    DETACHED = "detached"  # `.detach()`, `.data`, `save_image(x)`: followed on, graphless
    GRADLESS = "followed on, without history"  # `x.multinomial(1)`: no grad in its result
    FOLLOWED = "followed on"  # arithmetic, tensor methods, torch functions
    DIFFERENTIATED = "differentiated"  # `backward`, a hook, `torch.autograd`: the graph used
    ESCAPES = "escapes"  # changed in place, saved, handed to the unknown


# Methods whose result holds no history, and that say nothing about intent: every cut
# but the detaching ones (followed on, detached) and those that make numbers.
_CUT_METHODS = GRAPH_CUTTING_METHODS - DETACHING_METHODS - NUMBER_METHODS - INDEX_METHODS
# `.grad` is read for its values, not the graph.
_CUT_ATTRIBUTES = METADATA_ATTRIBUTES | {GRAD_ATTRIBUTE}
# Builtins whose result is a plain value, less those that say "numbers" and those that
# may hand the tensor on.
_CUT_BUILTINS = PYTHON_VALUE_BUILTINS - NUMBER_BUILTINS - TENSOR_RETURNING_BUILTINS
# Builtins that compute from a tensor argument (`sum(losses)`): followed on.
FOLLOWED_BUILTINS = ARITHMETIC_BUILTINS - {"pow"}


def method_result_use(method: str) -> ResultUse:
    """What `value.<method>(...)` does to the value."""
    if method in NUMBER_METHODS:
        return ResultUse.NUMPY if method == "numpy" else ResultUse.NUMBER
    if method in INDEX_METHODS:
        return ResultUse.NUMBER
    if method in _CUT_METHODS:
        return ResultUse.READ
    if method in DETACHING_METHODS:
        return ResultUse.DETACHED
    if method in GRAPH_KEEPING_METHODS:
        return ResultUse.DIFFERENTIATED  # differentiated or hooked
    if method.endswith("_") and not method.startswith("_"):
        return ResultUse.ESCAPES  # changed in place
    # past an op whose result has no grad, `.numpy()` works and nothing can use a graph
    return ResultUse.GRADLESS if method in GRADLESS_RESULTS else ResultUse.FOLLOWED


def attribute_result_use(attribute: str) -> ResultUse:
    """What reading `value.<attribute>` (not called) does to the value."""
    if attribute in _CUT_ATTRIBUTES:
        return ResultUse.READ
    if attribute in DETACHING_ATTRIBUTES:
        return ResultUse.DETACHED
    return ResultUse.FOLLOWED


def argument_result_use(
    qualified: str, *, writes_out: bool = False, builtin: bool = True, imported: bool = True
) -> ResultUse | None:
    """What passing the value to `qualified(...)` (resolved through the imports) does to
    it; None when no library function decides (a project function, a module: the
    caller's to follow). `writes_out`: the call has an `out=` argument; `builtin`: the
    callee is a plain name, not `x.sum(...)`; `imported`: the callee's root name is an
    import (`wandb = Tracker()` makes `wandb.log` the file's own)."""
    if qualified in NUMBER_BUILTINS:
        return ResultUse.NUMBER
    if (
        qualified in _CUT_BUILTINS
        or is_test_assertion(qualified)
        or (imported and qualified in TRACKER_LOGGING_FUNCTIONS)
    ):
        return ResultUse.READ
    if qualified in GRADLESS_LIBRARY_FUNCTIONS:
        return ResultUse.DETACHED  # run under no_grad: what they return has no history
    if converts_with_numpy(qualified):
        return ResultUse.NUMPY_CALL
    if qualified in GRAPH_PRESERVING_LIBRARY_FUNCTIONS:
        return ResultUse.FOLLOWED  # `rearrange(out, ...)`: a tensor computed from it
    if qualified in VARIABLE_CLASSES:
        # `Variable(net(x))` hands back a leaf without the output's history (measured)
        return ResultUse.DETACHED
    if qualified.startswith("torch."):
        if qualified.startswith(DISTRIBUTIONS_NAMESPACE):
            # followed on through the distribution: a `log_prob` kept for a later
            # backward escapes there, a `sample()` only reads it
            return ResultUse.FOLLOWED
        if qualified.startswith(DIFFERENTIATING_NAMESPACES):
            return ResultUse.DIFFERENTIATED
        if qualified.startswith(ESCAPING_NAMESPACES):
            return ResultUse.ESCAPES
        last = qualified.rsplit(".", 1)[-1]
        if last in INDEX_METHODS:
            return ResultUse.NUMBER
        if last.endswith("_") or writes_out:
            return ResultUse.ESCAPES
        if last == "detach" or last in GRADLESS_RESULTS:
            return ResultUse.GRADLESS
        return ResultUse.FOLLOWED
    if qualified in FOLLOWED_BUILTINS and builtin:
        return ResultUse.FOLLOWED  # builtin arithmetic on it
    return None


# What one `return` hands back, as backpropagated_places reads it: NO_VALUE for no value
# (a bare `return`, `return None`) or only literals (`return 0, 0`), the name returned
# (None for any other expression), or for a tuple literal the same of each element.
ReturnedNames = tuple[str | None, ...] | str | None
NO_VALUE = "<no value>"


def backpropagated_places(
    returns: Iterable[ReturnedNames | str], backpropagated: set[str]
) -> tuple[int, list[int]]:
    """(the size of the tuple every return that hands back a value makes, 0 for one
    value; the places in it that hold, at every such return, a name the body
    differentiates): a training step's `loss.backward(); return loss` gives (0, [0]),
    `return loss, td.detach()` (2, [0]). A return of no value or of literals only
    (NO_VALUE: a step skipped while a replay buffer fills, `return 0, 0`) hands back
    nothing to keep, and is left out."""
    shown = [r for r in returns if r != NO_VALUE]
    sizes = {len(r) if type(r) is tuple else 0 for r in shown}
    if not backpropagated or len(sizes) != 1:
        return 0, []
    size = sizes.pop()
    if size == 0:
        return 0, ([0] if all(r in backpropagated for r in shown) else [])
    tuples = [r for r in shown if type(r) is tuple]
    return size, [i for i in range(size) if all(t[i] in backpropagated for t in tuples)]


def reaching(seed: Iterable[str], edges: Mapping[str, set[str]]) -> set[str]:
    """The seed and every name whose edges meet it, transitively: the methods that call,
    however deep, one of the seed (`edges` maps a method to the methods it calls), or
    the names a value read from the seed may flow into (`edges` maps a name to the
    names its bindings read)."""
    found = set(seed)
    grew = True
    while grew:
        grew = False
        for name, met in edges.items():
            if name not in found and met & found:
                found.add(name)
                grew = True
    return found
