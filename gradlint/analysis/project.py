"""The project-wide pass: what the project's own *other* files do, as seen from the file
being linted.

Real training code puts the evaluation loop in `evaluate(model, loader)` in `utils.py`
and the `model.eval()` in `train.py`. A file's imports are resolved to the project's own
files (relative imports, packages with `__init__.py`, src layouts, the folder of the
importing file) and each imported module is summarised: per function, which parameters
it runs a forward of (and whether that forward records and is kept), whether it
differentiates, whether it runs under `no_grad`, whether it returns only plain Python
values.

Summaries come from CPython's `ast`, an order of magnitude cheaper than LibCST, and are
memoised per process by path, size, mtime and ctime, so each imported file is read
once however many files import it. The CLI's result cache records which summaries a
result depended on (`ProjectIndex.dependencies`) and re-lints a file when one changes;
flake8 and the language server get the same facts, read from disk.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import os
import re
import textwrap
import threading
import warnings
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field, is_dataclass
from dataclasses import fields as dataclass_fields
from dataclasses import replace as dataclass_replace
from pathlib import Path
from typing import Generic, TypeVar, cast

from gradlint.analysis.arguments import ArgumentShape, Signature, ast_shape_of, ast_signature
from gradlint.analysis.imports import (
    ImportMap,
    Origin,
    ast_called_through,
    ast_dotted_name,
    ast_import_map,
    star_bound,
)
from gradlint.analysis.last_activation import LastActivation, last_activations_of_classes
from gradlint.analysis.mode_layers import ClassModeParts, class_mode_parts, decide
from gradlint.analysis.module_state_summary import carried_attributes_of_class, own_method
from gradlint.analysis.project_files import (
    MAX_SUMMARY_BYTES,
    package_root_of,
    project_files,
    project_folder,
    project_root,
)
from gradlint.analysis.stamps import (
    ATTRIBUTES_PREFIX,
    DEFINITIONS_PREFIX,
    READERS_PREFIX,
    SEARCH_PREFIX,
    SUBCLASSES_PREFIX,
    TEXT_PREFIX,
    TREE_PREFIX,
    UNANSWERED_PREFIX,
    UNANSWERED_STAMP,
    file_stamp,
    file_state,
    search_stamp,
    split_stamp,
    stat_matches,
    stat_version,
    tree_key,
    tree_stamp,
    tree_stamp_in,
    unanswered_key,
)
from gradlint.analysis.summary_facts import (
    ACCUMULATING_METHODS,
    NO_VALUE,
    RECEIVER_PARAMETERS,
    GradMode,
    Holder,
    Mode,
    ResultUse,
    ReturnedNames,
    accumulated_parameter,
    argument_result_use,
    attribute_result_use,
    backpropagated_places,
    decorated_mode,
    differentiation_kind,
    forwarded_parameter,
    grad_api,
    grad_mode_effect,
    hot_loop_header,
    method_result_use,
    mode_switch,
    output_kept,
    picked_grad_mode_effect,
    storing_holder,
)
from gradlint.analysis.torch_api import (
    ARITHMETIC_BUILTINS,
    AUTOGRAD_FUNCTION_CLASSES,
    AUTOGRAD_FUNCTION_RUN,
    BACKWARD_METHODS,
    BACKWARD_WRAPPER_RECEIVERS,
    CONTAINER_MODULES,
    DETACHING_ATTRIBUTES,
    DETACHING_METHODS,
    GRAD_CLEARING_NAMES,
    GRAD_MODE_SETTER,
    GRAPH_CUTTING_METHODS,
    GRAPH_KEEPING_METHODS,
    GRAPH_PRESERVING_LIBRARY_FUNCTIONS,
    INDEX_METHODS,
    METADATA_ATTRIBUTES,
    MODE_CARRYING_MODULE_METHODS,
    MODULE_API,
    MODULE_MODE_ATTRIBUTES,
    MODULE_MODE_METHODS,
    MODULE_PRESERVING_FUNCTIONS,
    MODULE_WRAPPING_METHODS,
    NO_AFFINE_FLAGS,
    NON_DIFFERENTIABLE_METHODS,
    NOT_FORWARD_METHODS,
    NUMBER_METHODS,
    OBJECT_LOADERS,
    PARAMETER_CLASSES,
    PARAMETER_EVIDENCE_METHODS,
    PARAMETER_ITERATORS,
    PARAMETERLESS_LAYERS,
    PARAMETRIC_LAYERS,
    PLAIN_VALUE_LIBRARIES,
    PLAIN_VALUE_TYPES,
    PYTHON_VALUE_BUILTINS,
    REDUCTIONS_WITH_INDICES,
    REQUIRES_GRAD_ATTRIBUTE,
    REQUIRES_GRAD_METHOD,
    SAME_VALUE_STEPS,
    SELF_RETURNING_MODULE_METHODS,
    STORING_METHODS,
    VARIABLE_CLASSES,
    is_torch_container,
    torch_base_gives_weights,
)
from gradlint.diagnostics import CellLocation, Position
from gradlint.fileio import SourceReadError, read_regular
from gradlint.ipynb import (
    NotebookPython,
    NotebookSkipped,
    is_notebook,
    notebook_python,
    read_notebook,
)
from gradlint.results import SourceError

# what a project-wide search finds: calls of a method, or its definitions
_Found = TypeVar("_Found")

# How many modules a name is looked for in through `import *` re-exports.
_MAX_STAR_CHAIN = 16
# Arithmetic that carries its left operand's history (`self.sum += val * n`).
_CARRYING_OPERATORS = (ast.Mult, ast.Div, ast.Add, ast.Sub)
# What a module's text must contain for its function NAME to make numbers of an
# argument, as _number_params recognises one: a body of one `return` with a number
# maker, after a docstring maybe.
_NUMBER_HELPER = (
    rb"def NAME\((?:[^()]|\([^()]*\))*\)\s*(?:->[^:\n]*)?:\s*"
    rb"(?:(?:\"\"\"(?:[^\"]|\"(?!\"\"))*\"\"\"|'''(?:[^']|'(?!''))*'''|\"[^\"\n]*\"|'[^'\n]*')\s*)?"
    rb"return\b[^\n]*\b(?:numpy|item|tolist|float)\s*\("
)
_ANY_NUMBER_HELPER = re.compile(_NUMBER_HELPER.replace(b"NAME", rb"([^\s(\\]+)"))
# A helper whose last `return` makes numbers after guards (`if t is None: return None`),
# within a few hundred characters of its `def` and before the next top-level one.
_ANY_GUARDED_NUMBER_HELPER = re.compile(
    rb"\bdef[ \t]+([^\s(\[\\]+)[ \t]*\((?:(?!\n(?:def|class)\b)[\s\S]){0,600}?"
    rb"return\b[^\n]*\b(?:numpy|item|tolist)\s*\("
)
_NUMBER_HELPER_TOKEN = "<number-helper>"
# (_DEFINES_TOKEN, name): does the text define a function `name` (or may it re-export one
# with a star import)? A summary holds only the functions and methods a file defines.
_DEFINES_TOKEN = "<defines>"
_DEFINITION_TOKENS = (_NUMBER_HELPER_TOKEN, _DEFINES_TOKEN)  # answered by _Definitions
# `def name(` (or `def name[T](`, Python 3.12), spaces, tabs or a line continuation
# between; the name as bytes, so that a non-ASCII one is kept whole.
_DEFINITION = re.compile(rb"\bdef(?:[ \t]|\\\r?\n)+([^\s(\[\\]+)[ \t]*[(\[]")
_STAR_IMPORT_LINE = re.compile(rb"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+\*", re.MULTILINE)


@dataclass
class ForwardFact:
    """A forward of a parameter inside a function: does it record, is it kept, and does
    it sit in a hot loop of the function (a `while`, or a `for` over data, batches or
    steps by its header: summary_facts.hot_loop_header), so that it runs per batch
    whatever the call of the function?"""

    recording: bool
    kept: bool
    # defaulted: a summary made before the field reads back the same
    in_loop: bool = False


@dataclass
class ExternalFunction:
    name: str
    params: list[str]
    forwards: dict[str, list[ForwardFact]] = field(default_factory=dict)
    differentiates: bool = False
    # every differentiation of its own body sits on a branch a module takes only in
    # training mode (`if self.training: loss.backward()`): in eval mode it does not run
    trains_only: bool = False
    no_grad: bool = False
    returns_python: bool = False
    # every `return` hands back a tuple of this many elements (0 otherwise), and the
    # places in it that hold no graph at every return (a plain value, or one read off a
    # detach, `.data`, `.item()`, `.numpy()`): `return action.detach().cpu().numpy()[0],
    # hidden_out` gives (2, [0])
    returned_tuple_size: int = 0
    graph_free_returned_places: list[int] = field(default_factory=list)
    # the places of what it returns that hold the very value it differentiated, at
    # every return that hands back a value, as (size, places) of
    # summary_facts.backpropagated_places: a training step's `loss.backward(); return loss` gives
    # (0, [0]), and its caller's `loss = agent.update(batch)` holds that graph
    backpropagated_return_size: int = 0
    backpropagated_returns: list[int] = field(default_factory=list)
    # the body sets its own grad mode somewhere (a grad-mode decorator, a `with
    # torch.no_grad():` block, a `set_grad_enabled` statement): the caller's mode does
    # not say what a call of it records (defaulted: an older summary reads back alike)
    sets_grad_mode: bool = False
    # `def load_model(): m = Net(); m.eval(); return m`
    returns_eval_model: bool = False
    # what every `return` builds, as the file names it (`return Net()`, `m = Net();
    # ...; return m.to(device)`): a factory of another file hands back an instance of
    # these (empty when a return hands back anything else)
    returned_classes: list[str] = field(default_factory=list)
    # Where that model is put in eval mode: [path, line, column, end line, end column]
    # (1-based lines, columns in code points), for findings to show; empty otherwise.
    eval_switch: list = field(default_factory=list)
    # parameters whose last mode switch in the body, in source order, is `eval()`: the
    # function returns with them in eval mode (`def evaluate(model, loader): model.eval()`)
    eval_params: list[str] = field(default_factory=list)
    # for each of those, where that last `eval()` is, as eval_switch gives it: a finding
    # at the caller shows the switch in the helper's file
    eval_param_switches: dict[str, list] = field(default_factory=dict)
    # parameters added unchanged to the object's state: `self.sum += val`
    accumulated_params: list[str] = field(default_factory=list)
    # parameters the function only turns into plain numbers or arrays, each with whether
    # that raises on a tensor that requires grad (`.numpy()` before any `.detach()`):
    # `def to_np(t): return t.cpu().detach().numpy()`
    number_params: dict[str, bool] = field(default_factory=dict)
    # parameters the function only computes what it returns from, with torch's functions
    # and tensor methods, and hands nowhere else: `def euclidean_distance(a, b): ...
    # return torch.norm(a - b, dim=2)`; a caller's value carries on into its result
    carried_params: list[str] = field(default_factory=list)
    # parameters whose forward the function returns added to or subtracted from other
    # values, never cut on the way: `def td_target(q, r, s2): return r + 0.99 *
    # q(s2).max(1)[0]`, a bootstrapped target (GL013 follows a target into a helper of
    # another file)
    bootstrapped_params: list[str] = field(default_factory=list)
    # parameters handed on unchanged as `volatile=` of an autograd `Variable`
    # (`def to_tensor(x, volatile=False): return Variable(x, volatile=volatile)`): a
    # caller's `volatile=True` is as much a no-op as the Variable's own
    volatile_params: list[str] = field(default_factory=list)
    # a method that runs, with autograd recording, a forward of its object or of one of
    # the object's attributes that is no method of its class (`self.actor(obs)`,
    # `self(x)`, `self.netE.forward(x)`): calling it is a forward pass, on an object of
    # a class out of sight (`agent.act(obs)`) or of an imported class (`model.sample(n)`)
    runs_own_layers: bool = False
    # the methods of its own class it calls on `self` with autograd recording
    # (`self.decode(z)`): it runs their layers too (_layers_through_own_methods)
    recorded_own_methods: list[str] = field(default_factory=list)
    # a method with no body of its own (`@abstractmethod`, a docstring, `pass`, `...`,
    # `raise NotImplementedError`): its subclasses' say what a call does
    placeholder: bool = False
    # parameters the body calls `.backward()` on, and parameters it steps as optimizers
    # (`p.step()`), each with whether a backward runs before that step; both read off
    # the body's own statements, which run whenever it does: `def update_params(optim,
    # loss): optim.zero_grad(); loss.backward(); optim.step()` (GL011)
    backpropagated_params: list[str] = field(default_factory=list)
    # parameters whose every parameter the body's own statements switch off, so that a
    # call freezes the module it is handed: `def freeze_model(model): for p in
    # model.parameters(): p.requires_grad = False`, or `model.requires_grad_(False)`
    frozen_params: list[str] = field(default_factory=list)
    stepped_params: dict[str, bool] = field(default_factory=dict)
    # parameters whose value, as the caller passed it, the body differentiates anywhere
    # in it (a backward of it, `autograd.grad` of it): a PINN's `def gradients(y, x):
    # return torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y),
    # create_graph=True)`, whose callers' forwards handed in have their graph used
    differentiated_params: list[str] = field(default_factory=list)

    # how a call binds its arguments to the parameters (analysis.arguments)
    signature: Signature = field(default_factory=Signature)

    def argument_for(
        self, args: Sequence[ArgumentShape], param: str, *, receiver_passed: bool
    ) -> int | None:
        """Index into a call's arguments (their shapes) of the one bound to `param`;
        `receiver_passed`: the call binds the method's receiver itself
        (arguments.passes_receiver)."""
        found = self.signature.bind(args, param, receiver_passed=receiver_passed)
        return found.index if found is not None else None


@dataclass
class ModeManager:
    """A context manager of the project that puts its arguments in eval mode for the
    block (`with eval_mode(agent):`): a generator function that switches them before it
    yields, or a class whose `__enter__` switches what `__init__` stored."""

    params: list[str]  # its positional parameters in order, `self` left out
    vararg: str  # the name of its `*models` parameter, or ""
    to_eval: list[str]  # the parameters it switches to eval mode (the vararg's included)


@dataclass
class ModuleSummary:
    path: str
    functions: dict[str, ExternalFunction] = field(default_factory=dict)
    # module-level functions and classes that are eval-mode managers, by name
    mode_managers: dict[str, ModeManager] = field(default_factory=dict)
    # names a package re-exports by name: `from .lvae import LVAE` in `__init__.py`,
    # local name -> [module, relative level, name there]
    reexports: dict[str, list] = field(default_factory=dict)
    # (module, relative level) of each `from module import *`: names it re-exports
    star_imports: list[tuple[str, int]] = field(default_factory=list)
    # what the module's own scope binds by an absolute import and does not rebind,
    # local name -> [module, 0, name there or None]: what a star import of the module
    # may pass on (ProjectIndex.star_names)
    absolute_imports: dict[str, list] = field(default_factory=dict)
    # the names the module's own scope binds otherwise (def, class, assignment): they
    # hide what its own star imports bring in under the same name
    defined_names: list[str] = field(default_factory=list)
    # its `__all__` when that is a literal list or tuple of strings; None without one
    all_names: list[str] | None = None
    # classes whose instances are modules with parameters: they build a torch.nn layer
    # that has weights into an attribute of `self`
    parameter_classes: list[str] = field(default_factory=list)
    # classes that derive from a torch.nn container without an `__init__` of their own
    # (`class FlowSequential(nn.Sequential)`): an instance holds what its construction
    # hands the container, weighted or not (`FlowSequential(Sigmoid())`)
    container_classes: list[str] = field(default_factory=list)
    # class (not among parameter_classes) -> [module, relative level, name] of each class
    # imported from elsewhere that it subclasses or builds into `self`, its own classes'
    # included: its weights are those of its parts, written in other files
    # (`self.encoder = MLP(dims)` after `from .blocks import MLP`)
    imported_parts: dict[str, list[list]] = field(default_factory=dict)
    # the module-level functions every return of which builds layers with weights
    # (_layer_factories): another file's class that stores what one returns holds them
    layer_factories: list[str] = field(default_factory=list)
    # attribute -> is every value the file's classes store in `self.<it>` a torch.nn
    # layer that holds no parameters (`self.up = nn.Upsample(scale_factor=2)`)?
    parameterless_attributes: dict[str, bool] = field(default_factory=dict)
    # class -> [attribute, line] for each attribute its `forward` carries from one call
    # to the next with its graph (module_state.carried_attributes_of_class)
    carried_state: dict[str, list[list]] = field(default_factory=dict)
    # class -> the attributes whose parameters its `__init__` switches off for good
    # (`for p in self.target.parameters(): p.requires_grad = False`); "" for the
    # instance itself (_frozen_attributes)
    frozen_attributes: dict[str, list[str]] = field(default_factory=dict)
    # class -> {attribute: [parameter, position]} for the attributes its `__init__`
    # switches off unless it is handed that parameter: pytorch-fid's `InceptionV3(...,
    # requires_grad=False)` sets `p.requires_grad = requires_grad` for every parameter
    # (_frozen_unless_given); position counts `__init__`'s parameters after `self`
    frozen_unless_given: dict[str, dict[str, list]] = field(default_factory=dict)
    # classes whose `forward` clears the instance's own gradients on every call
    # (_forward_clears_own_grads)
    grad_clearing_forwards: list[str] = field(default_factory=list)
    # the module's classes that are custom autograd Functions (_autograd_function_classes)
    autograd_functions: list[str] = field(default_factory=list)
    # class -> [the saved-tensor table's function, a layer with parameters runs before
    # it] of the torch.nn activation its `forward` runs last on what it returns, when
    # the file shows one (analysis.last_activation): its result is saved for backward
    last_activations: dict[str, list] = field(default_factory=dict)
    # class -> {a parameter of its `__init__`: the attribute of `self` it keeps it in}
    # (`self.model = model`): what a construction hands it, the instance holds
    handed_attributes: dict[str, dict[str, str]] = field(default_factory=dict)
    # names the module's top level binds once, to an instance of a class with weights
    # (`model = Net()`, `net = nn.Sequential(...)`): what `from <module> import model`
    # hands another file (_weighted_instances)
    weighted_instances: list[str] = field(default_factory=list)
    # names the module's top level binds once, to a dict, list or tuple written out of
    # its own classes with weights (`MODELS = {"mlp": MLP, "cnn": CNN}`): a registry
    # whose picked element, called in another file, builds a model (_weighted_instances)
    weighted_registries: list[str] = field(default_factory=list)
    # the classes the module's top level defines, by name: which module of several
    # star imports brings a class in (ProjectIndex.star_class_home)
    classes: list[str] = field(default_factory=list)
    # class -> the attributes of `self` its methods only ever build as a module with
    # weights (`self.model = Net()`): what a subclass in another file inherits
    # (_weighted_attributes)
    weighted_attributes: dict[str, list[str]] = field(default_factory=dict)

    def digest(self) -> str:
        # Summaries are never changed once made (a new file state is a new summary).
        cached = self.__dict__.get("_digest")
        if cached is None:
            # the text asdict's copy would give, without the copy
            data = json.dumps(self, default=_json_fields, sort_keys=True).encode()
            cached = self.__dict__["_digest"] = hashlib.sha256(data).hexdigest()[:16]
        return cached


def _json_fields(value: object) -> dict[str, object]:
    """A summary's dataclass as json writes it: its fields by name."""
    if not is_dataclass(value):
        raise TypeError(f"not serialisable in a summary: {type(value).__name__}")
    return {f.name: getattr(value, f.name) for f in dataclass_fields(value)}


# -- summarising a module with ast -------------------------------------------------------


# CPython's AST of a file costs about 250 bytes of memory per byte of source (1.3 GB for
# 5 MB). What needs only part of a large file's tree (does it parse, what does it import)
# parses top-level pieces of about this size one at a time: the memory is that of one
# piece, the time the same.
PIECE_CHARS = 256 * 1024
# A piece starts at a line that begins at column 0 with code, and not with a closing
# bracket or a clause that continues the statement before it.
PIECE_START = re.compile(r"\n(?=[^\s#)\]}])(?!(?:else|elif|except|finally)\b)")


def parsed_in_pieces(source: str) -> bool:
    """Is the text large enough that what needs only part of its tree parses it in
    pieces (trees_in_pieces)?"""
    return len(source) > 2 * PIECE_CHARS


def trees_in_pieces(source: str) -> Iterator[ast.Module]:
    """The trees of consecutive top-level pieces that make up the source, one alive at a
    time. A piece that does not parse alone (a split inside a string) grows to the next
    start a few times, then the rest is parsed whole; a text that does not parse raises
    what ast.parse raises."""
    start = 0
    while start < len(source):
        end = start
        for _attempt in range(3):
            match = PIECE_START.search(source, max(end, start + PIECE_CHARS))
            end = match.end() if match else len(source)
            try:
                tree = _parse_unkept(source[start:end], "<unknown>")
                break
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                if end == len(source):
                    raise
        else:
            yield _parse_unkept(source[start:], "<unknown>")
            return
        yield tree
        start = end


def _parse_unkept(source: str, path: str) -> ast.Module:
    # catch_warnings swaps a process-wide filter list: one thread at a time (the
    # language server lints in threads).
    with _WARNINGS_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source, path)


def parse_quietly(source: str, path: str = "<unknown>") -> ast.Module:
    """ast.parse without the warnings CPython gives about the user's code (an invalid
    escape sequence is a SyntaxWarning on stderr from Python 3.12): reading a file to
    summarise it is not compiling it.

    One parse per text: the engine's syntax check, the positions of a file's findings,
    its imports, the summaries and caller searches of other files all ask for the same
    files' trees, so the latest few are kept, by text (a tree does not depend on the
    path, which only words a SyntaxError). Callers only read the trees."""
    with _MEMO_LOCK:
        tree = _RECENT_ASTS.get(source)
        if tree is not None:
            _RECENT_ASTS.touch(source)
            return tree
    tree = _parse_unkept(source, path)
    if len(source) <= _RECENT_AST_CHARS // 4:
        with _MEMO_LOCK:
            _RECENT_ASTS.keep(source, tree, len(source))
    return tree


_K = TypeVar("_K")
_V = TypeVar("_V")


class _SizedMemo(Generic[_K, _V]):
    """The latest values by key, oldest first, each with its size: the oldest are
    dropped while there are more than `count` or their sizes add up to more than
    `size`, the newest always kept. The caller holds _MEMO_LOCK. A hit moves a key to
    the newest end only where the caller touches it."""

    def __init__(self, size: int, count: int | None = None) -> None:
        self.limit = size
        self.count = count
        self.size = 0
        self._values: OrderedDict[_K, _V] = OrderedDict()
        self._sizes: dict[_K, int] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __iter__(self) -> Iterator[_K]:
        return iter(self._values)

    def get(self, key: _K) -> _V | None:
        return self._values.get(key)

    def touch(self, key: _K) -> None:
        self._values.move_to_end(key)

    def keep(self, key: _K, value: _V, size: int) -> None:
        """Remember the value as the newest (another thread may have kept it already)."""
        self.size += size - self._sizes.get(key, 0)
        self._sizes[key] = size
        self._values[key] = value
        self._values.move_to_end(key)
        values = self._values
        while len(values) > 1 and (
            self.size > self.limit or (self.count is not None and len(values) > self.count)
        ):
            dropped, _ = values.popitem(last=False)
            self.size -= self._sizes.pop(dropped)


# At most this many trees in a memo of parsed files, whatever their size.
_RECENT_COUNT = 256
# The latest parsed texts and their trees (a tree keeps about 40 bytes of memory per
# character of its text): at most _RECENT_COUNT of them, and this many characters.
_RECENT_AST_CHARS = 2_000_000
_RECENT_ASTS: _SizedMemo[str, ast.Module] = _SizedMemo(_RECENT_AST_CHARS, _RECENT_COUNT)
_WARNINGS_LOCK = threading.Lock()


def _manager(expr: ast.AST, imports: ImportMap) -> tuple[str | None, list[bool | None] | None]:
    """(what `expr` names, resolved through the imports; its first argument as a literal
    bool, or None when it is not called) as summary_facts reads a grad-mode manager."""
    if isinstance(expr, ast.Call):
        dotted = ast_dotted_name(expr.func)
        first = [*expr.args, *(k.value for k in expr.keywords)][:1]
        flags: list[bool | None] | None = [_bool_constant(v) for v in first]
    else:
        dotted, flags = ast_dotted_name(expr), None
    return (imports.qualify(dotted) if dotted is not None else None), flags


def _grad_effect(expr: ast.AST, imports: ImportMap) -> GradMode | None:
    """What entering `expr` (a with-item) does to grad mode (summary_facts); for a
    manager a condition picks, as GradModeAnalysis.context_effect reads it."""
    if isinstance(expr, ast.IfExp):
        return picked_grad_mode_effect(
            _grad_effect(expr.body, imports), _grad_effect(expr.orelse, imports)
        )
    return grad_mode_effect(*_manager(expr, imports))


def _block_mode(managers: list[ast.expr], imports: ImportMap, recording: bool) -> bool:
    """Does a `with` block over these managers record, when what is around it does
    (`recording`)? The last one that is a grad-mode manager decides; a mode that
    cannot be told is taken as not recording, as the linted file's rules stay silent
    there."""
    effects = [e for m in managers if (e := _grad_effect(m, imports)) is not None]
    return recording if not effects else effects[-1] is GradMode.RECORDING


def _decorated_recording(node: ast.FunctionDef | ast.AsyncFunctionDef, imports: ImportMap) -> bool:
    """Does the function's body record, as its decorators set it (summary_facts)?"""
    mode = decorated_mode(_manager(d, imports) for d in node.decorator_list)
    return mode is None or mode is GradMode.RECORDING


def _setter_effect(stmt: ast.stmt, imports: ImportMap) -> GradMode | None:
    """`torch.set_grad_enabled(False)` as a statement: the mode of the rest of its block."""
    if type(stmt) is not ast.Expr or type(stmt.value) is not ast.Call:
        return None
    dotted = ast_dotted_name(stmt.value.func)
    if dotted is None or grad_api(imports.qualify(dotted)) != GRAD_MODE_SETTER:
        return None
    return grad_mode_effect(*_manager(stmt.value, imports))


def _differentiates(call: ast.Call, imports: ImportMap, dotted: str | None = None) -> bool:
    """Does the call differentiate (summary_facts.differentiation_kind, with its callee
    resolved through the file's imports)? `dotted`: its callee's dotted name, when the
    caller has it already."""
    func = call.func
    if dotted is None:
        dotted = ast_dotted_name(func)
    method = func.attr if isinstance(func, ast.Attribute) else None
    return (
        differentiation_kind(
            imports.qualify(dotted) if dotted is not None else None,
            method,
            _step_operands,
            call,
        )
        is not None
    )


def _step_operands(call: ast.Call) -> tuple[str | None, list[str | None]]:
    """(the receiver's dotted name, the arguments'), as summary_facts reads a `.step`."""
    func = call.func
    receiver = ast_dotted_name(func.value) if isinstance(func, ast.Attribute) else None
    values = [*call.args, *(k.value for k in call.keywords)]
    return receiver, [ast_dotted_name(v) for v in values]


# Nodes that hold nothing a summary reads: names, constants, and the context and
# operator markers ast hangs under expressions (`ast.Load`, `ast.Add`). They are most of
# a function's nodes.
_AST_LEAVES = frozenset(
    {ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue}
    | {
        cls
        for base in (ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
        for cls in base.__subclasses__()
    }
)
_AST_FIELDS: dict[type, tuple[str, ...]] = {}
_AST_STATEMENTS = frozenset(ast.stmt.__subclasses__())
# What _FunctionWalk does at a node, by its class (anything else: _PLAIN).
_PLAIN, _NESTED, _CALL, _HANDING_ON, _WITH, _BLOCKS, _STATEMENT = range(7)
_WALK_KINDS: dict[type, int] = {
    **dict.fromkeys(_AST_STATEMENTS, _STATEMENT),
    # nested scopes, not walked: FileIndex.walk skips the same
    **dict.fromkeys((ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef), _NESTED),
    ast.Call: _CALL,
    **dict.fromkeys((ast.Yield, ast.YieldFrom, ast.Await), _HANDING_ON),
    **dict.fromkeys((ast.With, ast.AsyncWith), _WITH),
    # nodes that hold blocks of statements (`with` is walked on its own)
    **dict.fromkeys(
        (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.TryStar, ast.ExceptHandler),
        _BLOCKS,
    ),
    ast.match_case: _BLOCKS,
}


def _inner_nodes(node: ast.AST) -> list[ast.AST]:
    """What ast.walk gives, in its order (breadth first), less the leaves above: the
    statements and expressions a caller search reads (calls, assignments). ast.walk's
    generators cost several times this loop over the same trees."""
    found = [node]
    i = 0
    while i < len(found):
        found.extend(_ast_children(found[i]))
        i += 1
    return found


def _ast_children(node: ast.AST) -> list[ast.AST]:
    """What ast.iter_child_nodes gives, less the leaves above, as a list."""
    children_of = _AST_CHILDREN.get(type(node))
    if children_of is None:
        children_of = _AST_CHILDREN[type(node)] = _ast_children_function(
            type(node), _AST_NO_CHILD, leaves=True
        )
    return children_of(node)


# node class -> its _ast_children (or _all_ast_children), generated from the class's
# grammar (_ast_children_function)
_AST_CHILDREN: dict[type, Callable[[ast.AST], list[ast.AST]]] = {}
_AST_ALL_CHILDREN: dict[type, Callable[[ast.AST], list[ast.AST]]] = {}
# Grammar types of fields that hold no node (`identifier id`, `int? level`), and those
# that hold only leaves too (`expr_context ctx`, `cmpop* ops`).
_AST_PLAIN = frozenset({"identifier", "string", "int", "constant"})
_AST_NO_CHILD = _AST_PLAIN | {"expr_context", "operator", "unaryop", "cmpop", "boolop"}
# `expr* args` in a class's grammar line (its docstring: `Call(expr func, expr* args,
# keyword* keywords)`)
_AST_FIELD_SPEC = re.compile(r"(\w+)([*?]?) (\w+)")


def _ast_children_function(
    cls: type, no_child: frozenset[str], *, leaves: bool
) -> Callable[[ast.AST], list[ast.AST]]:
    """_ast_children (leaves: the leaves left out) or _all_ast_children for one node
    class, reading its fields as the grammar types them: a field whose type is in
    no_child is not read; one that holds a node is not tested for being one (`expr*
    args` only for a None, which `Dict.keys` holds for `**d`). A class whose grammar
    line does not name its fields, in order, gets the generic loop."""
    doc = (cls.__doc__ or "").strip()
    head, _, rest = doc.partition("(")
    specs = _AST_FIELD_SPEC.findall(rest) if head == cls.__name__ and rest.endswith(")") else []
    fields = tuple(getattr(cls, "_fields", ()))
    if not fields:
        return _no_ast_children
    if tuple(name for _, _, name in specs) != fields:
        return _ast_children_generic if leaves else _all_ast_children_generic
    kept = "type({}) not in leaves" if leaves else ""
    lines = ["def children(node):", "    out = []"]
    for kind, arity, name in specs:
        if kind in no_child:
            continue
        if arity == "*":
            test = " and ".join(t for t in ("item is not None", kept.format("item")) if t)
            lines += [f"    for item in node.{name}:", f"        if {test}:"]
            lines.append("            out.append(item)")
        else:
            test = " and ".join(t for t in ("value is not None", kept.format("value")) if t)
            lines += [f"    value = node.{name}", f"    if {test}:", "        out.append(value)"]
    lines.append("    return out")
    namespace: dict = {"leaves": _AST_LEAVES}
    exec("\n".join(lines), namespace)  # noqa: S102 - our own text, from the grammar
    return namespace["children"]


def _no_ast_children(node: ast.AST) -> list[ast.AST]:
    return []


def _ast_children_generic(node: ast.AST) -> list[ast.AST]:
    """_ast_children for a class without a grammar line to read: every field tested."""
    cls = type(node)
    fields = _AST_FIELDS.get(cls)
    if fields is None:
        fields = _AST_FIELDS[cls] = cls._fields
    leaves = _AST_LEAVES
    out: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend(
                [item for item in value if isinstance(item, ast.AST) and type(item) not in leaves]
            )
        elif isinstance(value, ast.AST) and type(value) not in leaves:
            out.append(value)
    return out


class _FunctionWalk:
    """One pre-order pass over a function body, in source order, tracking how deep in
    `no_grad` blocks each node sits. An explicit stack with exact-type dispatch: the
    summaries of every imported module are made this way, and ast.NodeVisitor's
    per-node method lookup and generic_visit cost several times more."""

    def __init__(self, function: ExternalFunction, imports: ImportMap) -> None:
        self.function = function
        self.imports = imports  # the file's, to resolve what a call calls
        # what the body calls that may be a function of the same file: `f` of `f(x)`,
        # `.m` of `self.m(x)` / `cls.m(x)` (a method of the same class)
        self.callees: set[str] = set()
        self.returns: list[ast.AST | None] = []
        self.return_statements: list[ast.Return] = []  # the same, as statements
        # name -> last switch seen in source order (True: eval); a coarse reading, used
        # only to say a returned model is in eval mode
        self.modes: dict[str, bool] = {}
        # name -> its last `.eval()` call
        self.eval_calls: dict[str, ast.Call] = {}
        # the forwards' calls, beside their facts (whose in_loop is set after the walk)
        self.forward_calls: list[tuple[ast.Call, ForwardFact]] = []
        # what the body calls on `self` with autograd recording: "" for `self(x)` and
        # `self.forward(x)`, the attribute for `self.<attr>(x)` / `self.<attr>.forward(x)`
        self.recorded_self_calls: set[str] = set()
        # the names the body differentiates (`loss.backward()`): what it may hand back
        self.backpropagated: set[str] = set()
        self._body: list[ast.stmt] = []
        # ids of the calls on branches a module takes only in training mode, found when
        # the first differentiation is met (most bodies have none)
        self._training_calls: set[int] | None = None

    def _entered(self, body: list[ast.stmt]) -> dict[str, ast.expr]:
        """Names the body binds once, at its top level, to a grad-mode manager (`ctx =
        torch.no_grad()`, then `with ctx:`): what a `with` over the name enters (the
        twin of grad_mode.GradModeAnalysis.entered, which reads reaching bindings)."""
        counts: dict[str, int] = {}
        managers: dict[str, ast.expr] = {}
        for node in _walk_ast(ast.Module(body=body, type_ignores=[])):
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if isinstance(target, ast.Name):
                    counts[target.id] = counts.get(target.id, 0) + 1
                    if _grad_effect(node.value, self.imports) is not None:
                        managers[target.id] = node.value
        return {name: value for name, value in managers.items() if counts[name] == 1}

    def run(self, body: list[ast.stmt], recording: bool) -> None:
        """Walk the body, which records when `recording` (its decorators' mode)."""
        self._body = body
        imports = self.imports
        entered: dict[str, ast.expr] | None = None  # read when a `with` names its manager
        other = Holder.OTHER
        # (node, does it record, the innermost node around it with a say in whether a
        # call's output is kept: summary_facts.output_kept)
        stack = self._block(body, recording)[::-1]
        kinds = _WALK_KINDS
        while stack:
            node, recording, holder = stack.pop()
            cls = type(node)
            kind = kinds.get(cls, _PLAIN)  # one lookup per node: most are _PLAIN
            if kind == _PLAIN:
                pass
            elif kind == _NESTED:
                continue  # nested functions run at another time (as the linted file's walk)
            elif kind == _CALL:
                call = cast(ast.Call, node)
                self._call(call, recording, output_kept((holder,)))
                if isinstance(call.func, ast.Attribute):
                    stored = storing_holder(call.func.attr)
                    if stored is not other:  # its arguments are stored, not its callee
                        children: list[tuple[ast.AST, bool, Holder]] = [
                            (call.func, recording, holder)
                        ]
                        children += [(a, recording, stored) for a in _ast_children(call)[1:]]
                        stack.extend(reversed(children))
                        continue
            elif kind == _HANDING_ON:
                holder = Holder.HANDED_ON
            elif kind == _WITH:
                with_node = cast(ast.With, node)
                managers = [i.context_expr for i in with_node.items]
                if any(isinstance(m, ast.Name) for m in managers):
                    if entered is None:
                        entered = self._entered(body)
                    managers = [
                        entered.get(m.id, m) if isinstance(m, ast.Name) else m for m in managers
                    ]
                inner = _block_mode(managers, imports, recording)
                if any(_grad_effect(m, imports) is not None for m in managers):
                    self.function.sets_grad_mode = True
                children = [(i.context_expr, recording, other) for i in with_node.items]
                children += self._block(with_node.body, inner)
                stack.extend(reversed(children))
                continue
            elif kind == _BLOCKS:
                # each block of statements runs its own `set_grad_enabled` statements
                children = []
                for name in cls._fields:
                    value = getattr(node, name, None)
                    if type(value) is list and value and type(value[0]) in _AST_STATEMENTS:
                        children += self._block(value, recording)
                    elif type(value) is list:
                        children += [
                            (v, recording, other)
                            for v in value
                            if isinstance(v, ast.AST) and type(v) not in _AST_LEAVES
                        ]
                    elif isinstance(value, ast.AST) and type(value) not in _AST_LEAVES:
                        children.append((value, recording, other))
                stack.extend(reversed(children))
                continue
            else:  # a simple statement: what its expressions make is kept, but for Expr
                holder = other
                if cls is ast.Expr:
                    holder = Holder.EXPRESSION_STATEMENT
                    self._statement(cast(ast.Expr, node))
                elif cls is ast.Return:
                    self.returns.append(cast(ast.Return, node).value)
                    self.return_statements.append(cast(ast.Return, node))
                elif cls is ast.AugAssign:
                    self._augmented(cast(ast.AugAssign, node))
            kids = _ast_children(node)
            if kids:
                stack.extend([(child, recording, holder) for child in reversed(kids)])

    def _block(
        self, statements: list[ast.stmt], recording: bool
    ) -> list[tuple[ast.AST, bool, Holder]]:
        """A block's statements with the mode each runs in: a `set_grad_enabled(...)`
        statement sets it for the rest of the block, as the linted file's grad mode
        reads it (GradModeAnalysis._earlier_setter)."""
        out: list[tuple[ast.AST, bool, Holder]] = []
        for stmt in statements:
            effect = _setter_effect(stmt, self.imports)
            if effect is not None:
                recording = effect is GradMode.RECORDING
                self.function.sets_grad_mode = True
            out.append((stmt, recording, Holder.OTHER))
        return out

    def _statement(self, node: ast.Expr) -> None:
        call = _switch_in_chain(node.value)  # `m.eval()`, `m.to(device).eval().half()`
        if call is not None:
            receiver = _switched_receiver(call)
            mode = _mode_switch(call)
            if receiver is not None and mode is not None:
                self.modes[receiver] = mode
                if mode:
                    self.eval_calls[receiver] = call

    def _augmented(self, node: ast.AugAssign) -> None:
        if isinstance(node.op, ast.Add):
            value = node.value
            while isinstance(value, ast.BinOp) and isinstance(value.op, _CARRYING_OPERATORS):
                value = value.left  # `self.sum += val * n`: val, scaled, with its history
            added = value.id if isinstance(value, ast.Name) else None
            self._accumulated(
                accumulated_parameter(ast_dotted_name(node.target), added, self.function.params)
            )

    def _accumulated(self, param: str | None) -> None:
        if param is not None and param not in self.function.accumulated_params:
            self.function.accumulated_params.append(param)

    def _call(self, node: ast.Call, recording: bool, kept: bool) -> None:
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in ACCUMULATING_METHODS
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], ast.Name)
        ):
            added = node.args[0].id
            self._accumulated(
                accumulated_parameter(ast_dotted_name(func.value), added, self.function.params)
            )
        dotted = ast_dotted_name(func)
        if recording and dotted is not None and dotted.split(".", 1)[0] == "self":
            parts = dotted.split(".")
            if parts[-1] == "forward":
                parts.pop()
            if len(parts) <= 2:
                self.recorded_self_calls.add(parts[1] if len(parts) == 2 else "")
        forwarded = forwarded_parameter(dotted, self.function.params)
        if forwarded is not None:
            fact = ForwardFact(recording=recording, kept=kept)
            self.function.forwards.setdefault(forwarded, []).append(fact)
            self.forward_calls.append((node, fact))
        if _differentiates(node, self.imports, dotted):
            function = self.function
            # a trainer module's `if self.training: loss.backward()` (only a forward's
            # is asked: ForwardAnalysis._imported_forward_differentiates)
            in_training = False
            if function.name.rpartition(".")[2] == "forward":
                if self._training_calls is None:
                    self._training_calls = _calls_only_in_training(self._body)
                in_training = id(node) in self._training_calls
            function.trains_only = in_training and (
                function.trains_only or not function.differentiates
            )
            function.differentiates = True
            if (
                isinstance(func, ast.Attribute)
                and func.attr in BACKWARD_METHODS
                and isinstance(func.value, ast.Name)
            ):
                self.backpropagated.add(func.value.id)  # `loss.backward()`, not a step
        if isinstance(func, ast.Name):
            self.callees.add(func.id)
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in RECEIVER_PARAMETERS
        ):
            self.callees.add("." + func.attr)


def _returns_python(
    value: ast.AST | None,
    python_names: frozenset[str] = frozenset(),
    plain_functions: frozenset[str] = frozenset(),
) -> bool:
    """Is `value` a plain Python value: a constant, a number made of a tensor
    (`.item()`), a builtin's result, a container of those, arithmetic of them, a name
    the function binds only to such values (`python_names`), or a call of a function
    of the same file that returns one (`plain_functions`)?"""
    return _plain_value(value, python_names.__contains__, plain_functions=plain_functions)


def _plain_value(
    value: ast.AST | None,
    plain_name: Callable[[str], bool],
    imports: ImportMap | None = None,
    plain_functions: frozenset[str] = frozenset(),
) -> bool:
    """_returns_python, with a name's answer from `plain_name`; with the file's
    imports, a call of a plain-value library (`np.sum(...)`, sklearn's `f1_score(...)`)
    is plain too."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Name):
        return plain_name(value.id)
    if isinstance(value, ast.BinOp):
        return _plain_value(value.left, plain_name, imports, plain_functions) and _plain_value(
            value.right, plain_name, imports, plain_functions
        )
    if isinstance(value, ast.UnaryOp):
        return _plain_value(value.operand, plain_name, imports, plain_functions)
    if isinstance(value, ast.Call) and imports is not None:
        qualified = imports.qualify(ast_dotted_name(value.func) or "")
        if qualified.split(".", 1)[0] in PLAIN_VALUE_LIBRARIES:
            return True
    if isinstance(value, ast.Call):
        name = ast_dotted_name(value.func) or ""
        if name in PYTHON_VALUE_BUILTINS or (
            isinstance(value.func, ast.Name) and name in plain_functions
        ):
            return True
    if isinstance(value, (ast.Call, ast.Subscript)) and _made_plain(value, imports):
        return True
    if isinstance(value, (ast.Tuple, ast.List)):
        return all(_plain_value(e, plain_name, imports, plain_functions) for e in value.elts)
    if isinstance(value, ast.Dict):
        return all(_plain_value(v, plain_name, imports, plain_functions) for v in value.values)
    return False


def _made_plain(value: ast.AST, imports: ImportMap | None) -> bool:
    """A number, an array or a string by how it is made, not by a name: `.item()`,
    `.tolist()`, `.numpy()`, a builtin's result, a plain library's call, a constant, and
    a method of or an index into one of those (`x.cpu().data.numpy().flatten()`,
    `a.numpy()[0]`, `str(v).strip()`). A name is not followed: one bound to an empty
    list may be filled with tensors."""
    while True:
        if isinstance(value, ast.Constant):
            return True
        if isinstance(value, ast.Subscript):
            value = value.value
            continue
        if not isinstance(value, ast.Call):
            return False
        func = value.func
        name = ast_dotted_name(func) or ""
        if name in PYTHON_VALUE_BUILTINS and isinstance(func, ast.Name):
            return True
        if imports is not None and name:
            if imports.qualify(name).split(".", 1)[0] in PLAIN_VALUE_LIBRARIES:
                return True
        if not isinstance(func, ast.Attribute):
            return False
        if func.attr in NUMBER_METHODS:
            return True
        value = func.value


def _plain_where_returned(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    returned: ast.AST | None,
    python_names: frozenset[str],
    imports: ImportMap,
    plain_functions: frozenset[str] = frozenset(),
) -> bool:
    """Is what a `return` of the function's own body hands back plain? A name is judged
    by its last binding before the return in that body, when that binding is a plain
    assignment (`MAE = F.l1_loss(s, t)`, `MAE = MAE.detach().item()`, `return MAE`);
    bound inside a block, by every binding it has (`python_names`)."""
    body = node.body
    at = next((i for i, stmt in enumerate(body) if stmt is returned), None)
    if at is None:
        return False

    def plain_before(name: str, position: int, depth: int) -> bool:
        if depth > 8:
            return False
        for i in range(position - 1, -1, -1):
            stmt = body[i]
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in stmt.targets
            ):
                if not all(isinstance(t, ast.Name) for t in stmt.targets):
                    return False
                return _plain_value(
                    stmt.value, names_before(i, depth + 1), imports, plain_functions
                )
            if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and (
                isinstance(stmt.target, ast.Name) and stmt.target.id == name
            ):
                if stmt.value is None:
                    continue  # `acc: float` binds nothing
                old = isinstance(stmt, ast.AnnAssign) or plain_before(name, i, depth + 1)
                return old and _plain_value(
                    stmt.value, names_before(i, depth + 1), imports, plain_functions
                )
            if any(
                isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                for n in _walk_ast(stmt)
            ) or (
                isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and stmt.name == name
            ):
                return name in python_names
        return False

    def names_before(position: int, depth: int) -> Callable[[str], bool]:
        return lambda name: plain_before(name, position, depth)

    value = body[at].value if isinstance(body[at], ast.Return) else None  # type: ignore[attr-defined]
    return _plain_value(value, names_before(at, 0), imports, plain_functions)


def _python_names(
    node: ast.FunctionDef | ast.AsyncFunctionDef, plain_functions: frozenset[str] = frozenset()
) -> frozenset[str]:
    """The local names every binding of which, in the function's body, is a plain
    Python value (`acc = (pred == y).float().sum().item()`, then `acc = acc / len(y)`):
    a `return acc` hands back a number. A name bound any other way (a parameter, a loop
    target, an unpacking, a `with`, a nested definition) is not one."""
    values: dict[str, list[ast.AST | None]] = {}
    assigned: dict[str, int] = {}  # the Store names the statements above account for
    stores: dict[str, int] = {}
    other: set[str] = {a.arg for a in _walk_ast(node.args) if isinstance(a, ast.arg)}
    for inner in _inner_nodes(node):
        if isinstance(inner, ast.Assign) and all(isinstance(t, ast.Name) for t in inner.targets):
            for target in inner.targets:
                name = target.id  # type: ignore[attr-defined]
                values.setdefault(name, []).append(inner.value)
                assigned[name] = assigned.get(name, 0) + 1
        elif isinstance(inner, (ast.AugAssign, ast.AnnAssign)) and isinstance(
            inner.target, ast.Name
        ):
            name = inner.target.id
            values.setdefault(name, []).append(inner.value)
            assigned[name] = assigned.get(name, 0) + 1
            if isinstance(inner, ast.AugAssign):
                # `acc += x`: the new value is the old and x together
                values[name].append(ast.BinOp(inner.target, inner.op, inner.value))
        elif isinstance(inner, ast.Name) and not isinstance(inner.ctx, ast.Load):
            stores[inner.id] = stores.get(inner.id, 0) + 1
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if inner is not node:
                other.add(inner.name)
    other |= {name for name, count in stores.items() if count != assigned.get(name, 0)}
    plain = frozenset(name for name in values if name not in other)
    while True:  # drop the names one of whose values is not plain, until none is
        kept = frozenset(
            name
            for name in plain
            if all(
                v is not None and _returns_python(v, plain, plain_functions) for v in values[name]
            )
        )
        if kept == plain:
            return plain
        plain = kept


def _number_of_param(value: ast.AST | None, params: list[str]) -> tuple[str, bool] | None:
    """(parameter, raises) when `value` only turns a parameter into plain numbers:
    `t.cpu().detach().numpy()`, `x.item()`, `float(x)`; raises: a `.numpy()` reached
    without a `.detach()` (or `.data`) before it. A conditional expression does so when
    both its branches make numbers of the same parameter (`var.cpu().data.numpy() if
    USE_CUDA else var.data.numpy()`, the old way to reach the host from either device)."""
    if isinstance(value, ast.IfExp):
        body = _number_of_param(value.body, params)
        orelse = _number_of_param(value.orelse, params)
        if body is None or orelse is None or body[0] != orelse[0]:
            return None
        return body[0], body[1] or orelse[1]
    steps: list[str] = []  # outermost first
    node = value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "float"
        and len(node.args) == 1
        and not node.keywords
    ):
        steps.append("item")
        node = node.args[0]
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            steps.append(node.func.attr)
            node = node.func.value
        elif isinstance(node, ast.Attribute):
            steps.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            break
    if not isinstance(node, ast.Name) or node.id not in params:
        return None
    if not any(step in NUMBER_METHODS for step in steps):
        return None
    if any(step not in SAME_VALUE_STEPS and step not in NUMBER_METHODS for step in steps):
        return None
    detached = False
    for step in reversed(steps):  # from the parameter outwards
        if step in DETACHING_METHODS or step in DETACHING_ATTRIBUTES:
            detached = True
        elif step == "numpy":
            return node.id, not detached
        elif step in NUMBER_METHODS:
            return node.id, False
    return None


def _volatile_params(
    node: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str], imports: ImportMap
) -> list[str]:
    """The parameters the body passes, never rebound, as `volatile=` of a Variable."""
    found: list[str] = []
    rebound: set[str] = set()
    for inner in _walk_ast(node):
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
            rebound.add(inner.id)
        elif isinstance(inner, ast.Call):
            dotted = ast_dotted_name(inner.func)
            if dotted is None or imports.qualify(dotted) not in VARIABLE_CLASSES:
                continue
            for keyword in inner.keywords:
                value = keyword.value
                if keyword.arg == "volatile" and isinstance(value, ast.Name):
                    if value.id in params and value.id not in found:
                        found.append(value.id)
    return [p for p in found if p not in rebound]


def _number_params(
    node: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]
) -> dict[str, bool]:
    """The parameter a one-statement helper turns into numbers: its body (a docstring
    aside) is `return <that parameter, made numbers>`."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return {}
    found = _number_of_param(body[0].value, params)
    return dict([found]) if found is not None else {}


_STRAIGHT_LINE = (ast.Assign, ast.AnnAssign, ast.Assert, ast.Return)


def _carried_params(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    params: list[str],
    imports: ImportMap,
    autograd_functions: Set[str] = frozenset(),
) -> list[str]:
    """ExternalFunction.carried_params. Straight-line bodies only (a docstring, plain
    assignments to names, asserts, returns, and `if`s whose arms are such statements):
    every statement that reads a parameter, or a local computed from one, binds a name,
    asserts or returns, and every call it makes of them is a tensor method or a torch
    function. Anything else (a loop, a store into an attribute or a container, a call of
    another function, a nested function) may keep or differentiate the value: no
    parameter is carried then. A parameter read only by an `if` test picks an arm and
    is not carried."""
    carrying = set(params)
    statements = _straight_line_statements(node)
    if statements is None:
        return []
    returned = False
    for statement in statements:
        bound = _bound_and_value(statement)
        if bound is None:
            return []
        targets, value = bound
        reads = _reads_of(value, carrying)
        if reads is None or not _computes_with_torch(value, carrying, imports, autograd_functions):
            return []
        if reads:
            carrying.update(t for t in targets if t is not None)
            returned = returned or isinstance(statement, ast.Return)
    if not returned:
        return []
    read = {
        n.id
        for statement in statements
        for n in _walk_ast(statement)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return [p for p in params if p in read and p not in ("self", "cls")]


def _straight_line_statements(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
) -> list[ast.stmt] | None:
    """The body's statements when it is straight-line (a docstring, plain assignments,
    asserts, returns, and `if`s whose arms are such statements, the arms' statements in
    turn: what either binds may be returned, and the test only picks an arm); None
    otherwise."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    statements: list[ast.stmt] = []
    for statement in body:
        if isinstance(statement, ast.If):
            arms = [*statement.body, *statement.orelse]
            if not all(isinstance(inner, _STRAIGHT_LINE) for inner in arms):
                return None
            statements.extend(arms)
        elif isinstance(statement, _STRAIGHT_LINE):
            statements.append(statement)
        else:
            return None  # most functions: before walking any expression
    return statements


def _bound_and_value(statement: ast.stmt) -> tuple[list[str | None], ast.AST] | None:
    """(the names a straight-line statement binds, the expression it evaluates); None
    for a store into anything but names."""
    if isinstance(statement, ast.Assign):
        targets = [t for target in statement.targets for t in _assigned_names(target)]
        if None in targets:
            return None
        return targets, statement.value
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id], statement.value or ast.Constant(None)
    if isinstance(statement, ast.Assert):
        return [], statement.test
    if isinstance(statement, ast.Return):
        return [], statement.value or ast.Constant(None)
    return None


def _bootstrapped_params(
    node: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str], imports: ImportMap
) -> list[str]:
    """ExternalFunction.bootstrapped_params. Straight-line bodies only, as
    _carried_params reads them: the parameters whose forward (`q(s2)`, `q.forward(s2)`)
    what the function returns is computed from, with torch's functions and tensor
    methods, added to or subtracted from other values on the way and never cut (`return
    r + gamma * q(s2).max(1)[0] * (1 - done)`). Anything else on the way says nothing."""
    statements = _straight_line_statements(node)
    if statements is None:
        return []
    # local name -> (the parameters whose forward it holds, combined with other values)
    holding: dict[str, tuple[set[str], bool]] = {}
    found: set[str] = set()
    for statement in statements:
        bound = _bound_and_value(statement)
        if bound is None:
            return []
        targets, value = bound
        origin = {
            param
            for inner in _walk_ast(value)
            if isinstance(inner, ast.Call)
            and (param := forwarded_parameter(ast_dotted_name(inner.func), params)) is not None
        }
        combined = False
        for inner in _walk_ast(value):
            if isinstance(inner, ast.Name) and inner.id in holding:
                held, was_combined = holding[inner.id]
                origin |= held
                combined = combined or was_combined
        if (
            not origin
            or _cuts_the_graph(value, indices=True)
            or not _computes_with_torch(value, set(holding) | origin, imports)
        ):
            for target in targets:
                holding.pop(target or "", None)  # rebound: it no longer holds a forward
            continue
        # `r + gamma * q(s2)`: the forward (or a name holding one) is an operand of the
        # addition, not inside the forward's own arguments (`net(x - mean)`)
        combined = combined or any(
            isinstance(inner, ast.BinOp)
            and isinstance(inner.op, (ast.Add, ast.Sub))
            and _holds_a_forward(inner, params, holding)
            for inner in _walk_ast(value)
        )
        if isinstance(statement, ast.Return) and combined:
            found |= origin
        for target in targets:
            if target is not None:
                holding[target] = (set(origin), combined)
    return [p for p in params if p in found]


def _holds_a_forward(
    operation: ast.BinOp, params: list[str], holding: dict[str, tuple[set[str], bool]]
) -> bool:
    """Is a forward of a parameter, or a name holding one, among the operation's
    operands, outside any call's arguments?"""
    stack: list[ast.AST] = [operation.left, operation.right]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and node.id in holding:
            return True
        if isinstance(node, ast.Call):
            if forwarded_parameter(ast_dotted_name(node.func), params) is not None:
                return True
            stack.append(node.func)  # `q(s2).max(1)`: its receiver, not its arguments
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def _cuts_the_graph(value: ast.AST, *, indices: bool = False) -> bool:
    """Does the expression detach or read out a value anywhere (`.detach()`, `.item()`,
    `.data`)? Then what it computes may hold no graph of what it reads. With `indices`,
    also where it takes indices or other values without history (`q(s2).argmax(1)`,
    `.max(1)[1]`, `.indices`, a comparison): a double DQN's action choice."""
    for inner in _walk_ast(value):
        if isinstance(inner, ast.Attribute):
            attr = inner.attr
            if attr in DETACHING_METHODS or attr in NUMBER_METHODS or attr in DETACHING_ATTRIBUTES:
                return True
            if indices and (
                attr in INDEX_METHODS or attr in NON_DIFFERENTIABLE_METHODS or attr == "indices"
            ):
                return True
        elif indices and isinstance(inner, ast.Subscript):
            # `q.max(1)[1]`: the indices of a reduction
            if (
                isinstance(inner.value, ast.Call)
                and isinstance(inner.value.func, ast.Attribute)
                and inner.value.func.attr in REDUCTIONS_WITH_INDICES
                and isinstance(inner.slice, ast.Constant)
                and inner.slice.value == 1
            ):
                return True
    return False


def _assigned_names(target: ast.AST) -> list[str | None]:
    """The names an assignment target binds; None for one that is no name (an attribute,
    an item, a starred element): a store the value may escape into."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _assigned_names(element)]
    return [None]


def _reads_of(value: ast.AST, names: set[str]) -> bool | None:
    """Does the expression read one of the names? None when it holds a lambda or a
    comprehension, whose reads run at another time."""
    found = False
    for inner in _walk_ast(value):
        if isinstance(inner, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp)):
            return None
        if isinstance(inner, (ast.GeneratorExp, ast.NamedExpr, ast.Yield, ast.Await)):
            return None
        if isinstance(inner, ast.Name) and inner.id in names:
            found = True
    return found


def _computes_with_torch(
    value: ast.AST,
    names: set[str],
    imports: ImportMap,
    autograd_functions: Set[str] = frozenset(),
) -> bool:
    """Is every call in the expression that is handed one of the names, or made on one,
    a tensor method or a torch function (`torch.norm(input=a - b)`, `a.unsqueeze(1)`),
    or runs one of the module's custom autograd Functions (`LossFn.apply(y, labels)`)?"""
    for inner in _walk_ast(value):
        if not isinstance(inner, ast.Call):
            continue
        func = inner.func
        if isinstance(func, ast.Attribute) and _reads_of(func.value, names):
            if func.attr in GRAPH_KEEPING_METHODS or func.attr in STORING_METHODS:
                return False  # `a.backward()`, or stored into a list it came with
            continue  # a method of the tensor: computes from it
        if not any(
            _reads_of(argument, names)
            for argument in [*inner.args, *(k.value for k in inner.keywords)]
        ):
            continue  # not handed one of them
        dotted = ast_dotted_name(func)
        if dotted in PYTHON_VALUE_BUILTINS or dotted in ARITHMETIC_BUILTINS:
            if dotted not in imports.names():
                continue  # `len(target)`, `max(a, b)`: keeps nothing
        if _runs_autograd_function(func, autograd_functions):
            continue
        if dotted is None:
            return False
        qualified = imports.qualify(dotted)
        if (
            not qualified.startswith("torch.")
            and qualified not in GRAPH_PRESERVING_LIBRARY_FUNCTIONS
        ):
            return False
    return True


def _runs_autograd_function(func: ast.expr, autograd_functions: Set[str]) -> bool:
    """`LossFn.apply` of one of the module's custom autograd Functions."""
    return (
        isinstance(func, ast.Attribute)
        and func.attr == AUTOGRAD_FUNCTION_RUN
        and isinstance(func.value, ast.Name)
        and func.value.id in autograd_functions
    )


def _autograd_function_classes(tree: ast.Module, imports: ImportMap) -> frozenset[str]:
    """The module's top-level classes that are custom autograd Functions: derived from
    torch's Function (AUTOGRAD_FUNCTION_CLASSES), or from such a class of the module."""
    found: set[str] = set()
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for base in node.bases:
            dotted = ast_dotted_name(base)
            if dotted is not None and (
                dotted in found or imports.qualify(dotted) in AUTOGRAD_FUNCTION_CLASSES
            ):
                found.add(node.name)
                break
    return frozenset(found)


# statements that rule out a helper with guards wherever they are in it (the walk below
# returns nothing when it meets one): checked first among the body's own statements
_NOT_GUARDED_HELPER = (
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Global,
    ast.Nonlocal,
)


def _guarded_number_params(
    node: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str], imports: ImportMap
) -> dict[str, bool]:
    """The parameter a helper with guards turns into numbers: every `return` is either
    that parameter made numbers, a plain value that does not read it (`None`, a
    constant, `np.array([])`), or the parameter handed back where a test has shown it is
    already an array or a number, and no other statement stores or hands the parameter
    on: `if t is None: return None ... return t.cpu().detach().numpy()`, `if type(x) ==
    np.ndarray: return x ... return x.data.numpy()`."""
    if not params or any(isinstance(stmt, _NOT_GUARDED_HELPER) for stmt in node.body):
        return {}  # most functions: an assignment, or a nested one, is among the first
    made: set[tuple[str, bool]] = set()
    already_plain: set[int] | None = None  # walked for only at a return that needs it
    for inner in _inner_nodes(node):
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if inner is not node:
                return {}  # a nested function may keep the parameter
        elif isinstance(inner, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)):
            return {}
        elif isinstance(inner, ast.Return):
            found = _number_of_param(inner.value, params)
            if found is not None:
                made.add(found)
            elif not _plain_return(inner.value, params):
                if already_plain is None:
                    already_plain = _returns_under_plain_type_tests(node, imports)
                if id(inner) not in already_plain:
                    return {}
        elif isinstance(inner, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            return {}  # the parameter may be stored or rebound: not this simple shape
    names = {name for name, _ in made}
    if len(names) != 1:
        return {}
    name = names.pop()
    if not _read_only_in_returns_and_tests(node, name):
        return {}
    return {name: any(raises for _, raises in made)}


def _returns_under_plain_type_tests(
    node: ast.FunctionDef | ast.AsyncFunctionDef, imports: ImportMap
) -> set[int]:
    """The ids of the `return name` statements in the body of an `if` whose test shows
    `name` is a numpy array or a Python number (`isinstance(x, np.ndarray)`, `type(x) ==
    np.ndarray`, `type(x) is float`): what they hand back holds no graph."""
    found: set[int] = set()
    for branch in _walk_ast(node):
        if not isinstance(branch, ast.If):
            continue
        name = _plain_type_tested(branch.test, imports)
        if name is None:
            continue
        for stmt in branch.body:
            if (
                isinstance(stmt, ast.Return)
                and isinstance(stmt.value, ast.Name)
                and stmt.value.id == name
            ):
                found.add(id(stmt))
    return found


def _plain_type_tested(test: ast.expr, imports: ImportMap) -> str | None:
    """The name a test shows to be of a plain value type (torch_api.PLAIN_VALUE_TYPES)."""

    def plain(expr: ast.expr) -> bool:
        members = expr.elts if isinstance(expr, ast.Tuple) else [expr]
        return bool(members) and all(
            imports.qualify(ast_dotted_name(m) or "") in PLAIN_VALUE_TYPES for m in members
        )

    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and isinstance(test.args[0], ast.Name)
        and plain(test.args[1])
    ):
        return test.args[0].id
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Eq, ast.Is))
        and isinstance(test.left, ast.Call)
        and isinstance(test.left.func, ast.Name)
        and test.left.func.id == "type"
        and len(test.left.args) == 1
        and isinstance(test.left.args[0], ast.Name)
        and plain(test.comparators[0])
    ):
        return test.left.args[0].id
    return None


def _read_only_in_returns_and_tests(
    node: ast.FunctionDef | ast.AsyncFunctionDef, name: str
) -> bool:
    """Is `name` read only by `return` statements and the tests of `if`/`while` (the
    guards), so that nothing else can keep or hand on the value?"""
    for stmt in _walk_ast(node):
        if not isinstance(stmt, ast.stmt) or stmt is node:
            continue
        if isinstance(stmt, (ast.Return, ast.If, ast.While)):
            continue  # returns are judged one by one above; a test only reads
        # the statement's own expressions, not the blocks it holds
        for part in ast.iter_child_nodes(stmt):
            # an `except` clause's block is walked as statements of their own
            read: ast.AST | None = part.type if isinstance(part, ast.ExceptHandler) else part
            if read is None or isinstance(read, ast.stmt):
                continue
            if any(isinstance(n, ast.Name) and n.id == name for n in _walk_ast(read)):
                return False
    return True


def _plain_return(value: ast.AST | None, params: list[str]) -> bool:
    """`None`, a constant, or a call of a numeric library on values that are none of the
    parameters (`np.array([])`, `np.zeros(3)`)."""
    if value is None or _returns_python(value):
        return True
    if isinstance(value, ast.Call):
        name = ast_dotted_name(value.func) or ""
        if name.split(".", 1)[0] in ("np", "numpy"):
            return not any(isinstance(n, ast.Name) and n.id in params for n in _walk_ast(value))
    return False


def _code_points(lines: list[str], line: int, offset: int) -> int:
    """ast counts columns in UTF-8 bytes; positions are in code points."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return len(text.encode("utf-8")[:offset].decode("utf-8", "replace"))


def _summarise_function(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    imports: ImportMap,
    path: str = "",
    lines: list[str] | None = None,
    callees: set[str] | None = None,
    *,
    method: bool = False,
    class_methods: frozenset[str] = frozenset(),
    returns: list[tuple[ast.AST | None, ast.stmt]] | None = None,
    autograd_functions: Set[str] = frozenset(),
) -> ExternalFunction:
    """The function's summary; `callees` gets what its body calls that may be a
    function of the same file (_FunctionWalk.callees); `method`: it is defined directly
    in a class's body, which defines `class_methods`; `returns` gets each `return`'s
    value and statement; `autograd_functions`: the module's custom autograd Functions."""
    args = node.args
    params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    function = ExternalFunction(node.name, params, signature=ast_signature(node, method=method))
    records = _decorated_recording(node, imports)
    function.no_grad = not records
    function.sets_grad_mode = (
        decorated_mode(_manager(d, imports) for d in node.decorator_list) is not None
    )
    function.number_params = _number_params(node, params) or _guarded_number_params(
        node, params, imports
    )
    if lines is not None and any(
        "volatile" in line for line in lines[node.lineno - 1 : node.end_lineno]
    ):  # the walk only where the word is
        function.volatile_params = _volatile_params(node, params, imports)
    function.backpropagated_params, function.stepped_params = _backward_and_step_params(
        node, params
    )
    if lines is None or any(
        "requires_grad" in line for line in lines[node.lineno - 1 : node.end_lineno]
    ):  # the walk only where a switch may be
        function.frozen_params = _frozen_params(node, params)
    if not function.number_params:
        function.carried_params = _carried_params(node, params, imports, autograd_functions)
    function.bootstrapped_params = _bootstrapped_params(node, params, imports)
    if lines is None or any(
        "grad(" in line or "backward(" in line for line in lines[node.lineno - 1 : node.end_lineno]
    ):  # the walk only where a differentiation may be
        function.differentiated_params = _differentiated_params(node, params, imports)
    visitor = _FunctionWalk(function, imports)
    visitor.run(node.body, records)
    if function.accumulated_params:
        # a parameter the body rebinds (`v = v.data.sum()`) is no longer what the
        # caller passed by the time it is kept
        rebound = _rebound_names(node)
        function.accumulated_params = [p for p in function.accumulated_params if p not in rebound]
    if visitor.forward_calls:  # rare: only then are the loops read
        in_hot_loops = _in_hot_loops(node.body)
        for call, fact in visitor.forward_calls:
            fact.in_loop = id(call) in in_hot_loops
    if callees is not None:
        callees |= visitor.callees
    if method:
        function.placeholder = _placeholder(node)
        may_forward = node.name not in NOT_FORWARD_METHODS and node.name[:2] != "__"
        function.runs_own_layers = may_forward and any(
            attr not in class_methods and attr not in MODULE_API
            for attr in visitor.recorded_self_calls
        )
        if may_forward:
            function.recorded_own_methods = sorted(visitor.recorded_self_calls & class_methods)
    function.returns_python = _returns_plain(
        node, visitor.returns, visitor.return_statements, imports
    )
    function.returned_tuple_size, function.graph_free_returned_places = _graph_free_places(
        visitor.returns
    )
    if visitor.backpropagated:
        function.backpropagated_return_size, function.backpropagated_returns = (
            backpropagated_places(map(_returned_names, visitor.returns), visitor.backpropagated)
        )
    if returns is not None:
        returns.extend(zip(visitor.returns, visitor.return_statements, strict=True))
    function.returned_classes = _returned_classes(node, params, visitor.returns)
    switches = [_eval_switch_returned(value, visitor) for value in visitor.returns]
    function.returns_eval_model = bool(switches) and all(s is not None for s in switches)
    function.eval_params = [p for p in params if visitor.modes.get(p) is True]
    if lines is not None:
        if function.returns_eval_model:
            function.eval_switch = _place_of(path, lines, cast(ast.Call, switches[-1]))
        function.eval_param_switches = {
            param: _place_of(path, lines, visitor.eval_calls[param])
            for param in function.eval_params
            if param in visitor.eval_calls
        }
    return function


def _returned_classes(
    node: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str], values: list[ast.AST | None]
) -> list[str]:
    """The names called to build what each `return` hands back, looked through the
    module's own methods that return it (`return Net().to(device)`), or through the
    function's single-name assignments of what it returns (`model = Net(); model.
    load_state_dict(...); return model`): [] when one return hands back anything else.
    Whether a name is a class with weights is asked where the factory is imported."""
    found: set[str] = set()
    assigned: dict[str, list[ast.expr]] | None = None
    for value in values:
        if value is None:
            return []
        built = ast_called_through(value, MODULE_WRAPPING_METHODS)
        if isinstance(built, ast.Name):
            if assigned is None:
                assigned = _single_name_assignments(node, params)
            builds: list[ast.AST] = [
                ast_called_through(v, MODULE_WRAPPING_METHODS) for v in assigned.get(built.id, ())
            ]
            if not builds:
                return []
        else:
            builds = [built]
        for call in builds:
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                return []
            found.add(call.func.id)
    return sorted(found)


def _single_name_assignments(
    scope: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]
) -> dict[str, list[ast.expr]]:
    """{name: the values assigned to it} for the scope's names bound only by plain
    single-name assignments (not a parameter, a loop target, an unpacking or an
    augmented assignment)."""
    values: dict[str, list[ast.expr]] = {}
    other: set[str] = set(params)
    for node in _own_nodes(scope):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                values.setdefault(target.id, []).append(node.value)
                continue
            other.update(n for n in _assigned_names(target) if n is not None)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                other.update(n for n in _assigned_names(target) if n is not None)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
            other.update(n for n in _assigned_names(node.target) if n is not None)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    other.update(n for n in _assigned_names(item.optional_vars) if n is not None)
    return {name: found for name, found in values.items() if name not in other}


def _place_of(path: str, lines: list[str], node: ast.expr) -> list:
    """[path, line, column, end line, end column] of a node (1-based lines, columns in
    code points), as a summary records a place for findings in other files to show."""
    end_line = node.end_lineno or node.lineno
    end_offset = node.end_col_offset or node.col_offset
    return [
        path,
        node.lineno,
        _code_points(lines, node.lineno, node.col_offset),
        end_line,
        _code_points(lines, end_line, end_offset),
    ]


def _eval_switch_returned(value: ast.AST | None, visitor: _FunctionWalk) -> ast.Call | None:
    """The switch that puts the module a `return` hands back in eval mode: the body's
    last switch of the name returned (`return model`, `return model.to(device)`), or one
    on the way out (`return model.eval()`); None when it is not known to be in eval mode
    (the twin of train_mode.TrainModeAnalysis._returns_eval)."""
    if value is None:
        return None
    switch = _switch_in_chain(value)
    if switch is not None:
        return switch if _mode_switch(switch) else None
    name = ast_dotted_name(ast_called_through(value, MODE_CARRYING_MODULE_METHODS))
    if name is None or visitor.modes.get(name) is not True:
        return None
    return visitor.eval_calls[name]


def _returns_plain(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    values: Sequence[ast.AST | None],
    statements: Sequence[ast.stmt],
    imports: ImportMap,
    plain_functions: frozenset[str] = frozenset(),
) -> bool:
    """Does every `return` of the function hand back a plain Python value (one at
    least)? `plain_functions`: the same file's functions known to return one."""
    python_names = (
        _python_names(node, plain_functions)
        if any(isinstance(value, ast.Name) for value in values)
        else frozenset()
    )
    return bool(values) and all(
        _returns_python(value, python_names, plain_functions)
        or _plain_where_returned(node, statement, python_names, imports, plain_functions)
        for value, statement in zip(values, statements, strict=True)
    )


def _graph_free_places(values: Sequence[ast.AST | None]) -> tuple[int, list[int]]:
    """(the size of the tuple every return hands back, the places in it that hold no
    graph at every return); (0, []) unless every return is a tuple literal of one size
    without a starred element."""
    sizes = {
        len(v.elts)
        if isinstance(v, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in v.elts)
        else 0
        for v in values
    }
    if len(sizes) != 1 or 0 in sizes:
        return 0, []
    size = sizes.pop()
    tuples = cast(list[ast.Tuple], values)
    return size, [i for i in range(size) if all(_read_off_a_cut(t.elts[i]) for t in tuples)]


def _constant(value: ast.AST) -> bool:
    """A literal that carries no graph: `None`, `0`, `-1.0`, `"skip"`, `False`."""
    if isinstance(value, ast.UnaryOp):
        value = value.operand
    return isinstance(value, ast.Constant)


def _returned_names(value: ast.AST | None) -> ReturnedNames | str:
    """What a return hands back, as summary_facts.backpropagated_places reads it."""
    if value is None or _constant(value):
        return NO_VALUE
    if isinstance(value, ast.Tuple):
        if any(isinstance(e, ast.Starred) for e in value.elts):
            return None
        if all(_constant(e) for e in value.elts):
            return NO_VALUE  # `return 0, 0` while a replay buffer fills
        return tuple(e.id if isinstance(e, ast.Name) else None for e in value.elts)
    return value.id if isinstance(value, ast.Name) else None


def _read_off_a_cut(value: ast.AST) -> bool:
    """A plain Python value, or one a chain of indexing, attributes and method calls
    reads off a graph cut: `action.detach().cpu().numpy()[0]`, `q.data.max(1)[1]`,
    `loss.item()`."""
    if _returns_python(value):
        return True
    while True:
        if isinstance(value, ast.Subscript):
            value = value.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            if value.func.attr in NUMBER_METHODS or value.func.attr in DETACHING_METHODS:
                return True
            value = value.func.value
        elif isinstance(value, ast.Attribute):
            if value.attr in DETACHING_ATTRIBUTES:
                return True
            value = value.value
        else:
            return False


def _plain_through_helpers(
    functions: dict[str, ExternalFunction],
    nodes: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
    returns: dict[str, list[tuple[ast.AST | None, ast.stmt]]],
    calls: dict[str, set[str]],
    imports: ImportMap,
) -> None:
    """A module-level function whose return is built from the file's other number
    helpers returns a number too: `def get_F1(SR, GT): SE = get_sensitivity(SR, GT);
    PC = get_precision(SR, GT); return 2*SE*PC/(SE+PC)`, where each helper returns a
    `float(...)`. Only a function that calls one of those is asked again, and again
    while a round finds one more (a chain of helpers)."""
    plain = frozenset(name for name in nodes if functions[name].returns_python)
    new = plain
    while new:
        found = set()
        for name, node in nodes.items():
            if functions[name].returns_python or not returns[name] or not calls[name] & new:
                continue
            values = [value for value, _ in returns[name]]
            statements = [statement for _, statement in returns[name]]
            if _returns_plain(node, values, statements, imports, plain):
                functions[name].returns_python = True
                found.add(name)
        new = frozenset(found)
        plain |= new


def _backward_and_step_params(
    node: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]
) -> tuple[list[str], dict[str, bool]]:
    """(the parameters `p.backward(...)` is called on, the parameters `p.step()` is
    called on with whether a backward comes first), among the statements of the body
    itself: those run whenever the function does."""
    backpropagated: list[str] = []
    stepped: dict[str, bool] = {}
    differentiated = False
    for stmt in node.body:
        if type(stmt) is not ast.Expr or type(stmt.value) is not ast.Call:
            continue
        call = stmt.value
        func = call.func
        if type(func) is not ast.Attribute or type(func.value) is not ast.Name:
            continue
        receiver = func.value.id
        if func.attr == "backward":
            differentiated = True
            if receiver in params and receiver not in backpropagated:
                backpropagated.append(receiver)
        elif func.attr == "step" and receiver in params and not call.args and not call.keywords:
            stepped.setdefault(receiver, differentiated)
    return backpropagated, stepped


def _frozen_params(node: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]) -> list[str]:
    """ExternalFunction.frozen_params: the parameters, not rebound in the body, whose
    parameters a statement of the body itself (run whenever the function is) switches
    off, as _frozen_attributes reads a class's `__init__` (_freeze_of)."""
    rebound = {
        t.id
        for stmt in _walk_ast(node)
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
        if isinstance(t, ast.Name)
    }

    def handed(expr: ast.AST) -> str | None:
        if isinstance(expr, ast.Name) and expr.id in params and expr.id not in rebound:
            return expr.id
        return None

    found: list[str] = []
    for stmt in node.body:
        owner = _freeze_of(stmt, handed)
        if owner is not None and owner not in found:
            found.append(owner)
    return found


def _differentiated_params(
    node: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str], imports: ImportMap
) -> list[str]:
    """ExternalFunction.differentiated_params: the parameters whose value reaches what a
    differentiation of the body (not of a nested function) differentiates, the receiver
    of `.backward()` and its argument (`accelerator.backward(loss)`) or the outputs of
    `torch.autograd.grad` / `torch.autograd.backward` (`y`, `y.sum()`, `[y]`), itself or
    through the names the body binds from it with its graph (`y = y.reshape(-1, 1)`, `s
    = u.sum()`, `for o in outputs:`, `with amp.scale_loss(loss, opt) as s:`; not `t =
    teacher_logits.detach().softmax(-1)` or `n = len(y)`). A parameter rebound to a
    value that does not read it (`y = x * 2`) is no longer what the caller passed, and
    does not count."""
    differentiated: list[ast.AST] = []
    # name -> the values the body binds it from; `x += ...` reads `x` itself
    bound: dict[str, list[ast.AST]] = {}
    augmented: set[str] = set()

    def bind(target: ast.AST, value: ast.AST) -> None:
        for name in _assigned_names(target):
            if name is not None:
                bound.setdefault(name, []).append(value)

    for inner in _own_nodes(node):
        if isinstance(inner, ast.Assign):
            for target in inner.targets:
                bind(target, inner.value)
            continue
        if isinstance(inner, (ast.AnnAssign, ast.AugAssign)):
            if inner.value is not None:
                bind(inner.target, inner.value)
            if isinstance(inner, ast.AugAssign) and isinstance(inner.target, ast.Name):
                augmented.add(inner.target.id)
            continue
        if isinstance(inner, (ast.For, ast.AsyncFor, ast.comprehension)):
            bind(inner.target, inner.iter)
            continue
        if isinstance(inner, ast.withitem):
            if inner.optional_vars is not None:
                bind(inner.optional_vars, inner.context_expr)
            continue
        if type(inner) is not ast.Call:
            continue
        func = inner.func
        dotted = ast_dotted_name(func)
        kind = differentiation_kind(
            imports.qualify(dotted) if dotted is not None else None,
            func.attr if isinstance(func, ast.Attribute) else None,
            _step_operands,
            inner,
        )
        if kind == "backward" and isinstance(func, ast.Attribute):
            receiver = func.value
            owner = ast_dotted_name(receiver)
            if func.attr == "manual_backward" or (
                owner is not None and owner.rpartition(".")[2] in BACKWARD_WRAPPER_RECEIVERS
            ):
                # `accelerator.backward(loss)`, `self.accelerator.backward(loss)`
                differentiated.extend(inner.args[:1])
            else:
                # `y.backward(g)` hands a gradient, `acc.backward(loss)` the loss: the
                # call does not tell which, and either counted only quiets a finding
                differentiated.extend([receiver, *inner.args[:1]])
        elif kind in ("grad", "backward"):
            outputs = inner.args[0] if inner.args else None
            for keyword in inner.keywords:
                if keyword.arg in ("outputs", "tensors"):
                    outputs = keyword.value
            if outputs is not None:
                differentiated.append(outputs)
    if not differentiated:
        return []
    # the names whose values flow into what is differentiated, however indirectly,
    # each binding read only when its name is reached
    upstream: set[str] = set()
    work: list[str] = []
    for expression in differentiated:
        work.extend(_names_read_with_graph(expression))
    while work:
        name = work.pop()
        if name not in upstream:
            upstream.add(name)
            for value in bound.get(name, ()):
                work.extend(_names_read_with_graph(value))
    found = [param for param in params if param in upstream]
    if not found:
        return []
    rebound = _rebound_names(node)

    def reads_itself(param: str) -> bool:
        return param in augmented or any(
            param in _names_read_with_graph(value) for value in bound.get(param, ())
        )

    # `y = x * 2`: another value than the caller's
    return [param for param in found if param not in rebound or reads_itself(param)]


def _names_read_with_graph(value: ast.AST) -> set[str]:
    """The names an expression reads that its value may carry the graph of: not a name
    only called (`model(x)` reads `x`), nor one read through a cut (`.detach()`,
    `.item()`, `.data`, `.shape`, `len(y)`, `y.argmax(1)`)."""
    skipped: set[int] = set()
    for inner in _walk_ast(value):
        cut: ast.AST | None = None
        if isinstance(inner, ast.Call):
            skipped.add(id(inner.func))
            func = inner.func
            if isinstance(func, ast.Attribute) and func.attr in GRAPH_CUTTING_METHODS:
                cut = func.value
            elif isinstance(func, ast.Name) and func.id in PYTHON_VALUE_BUILTINS:
                skipped.update(id(n) for arg in inner.args for n in _walk_ast(arg))
        elif isinstance(inner, ast.Attribute) and (
            inner.attr in DETACHING_ATTRIBUTES or inner.attr in METADATA_ATTRIBUTES
        ):
            cut = inner.value
        if cut is not None:
            skipped.update(id(n) for n in _walk_ast(cut))
    return {n.id for n in _walk_ast(value) if isinstance(n, ast.Name) and id(n) not in skipped}


def _placeholder(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    if any(
        ast_dotted_name(d) in ("abstractmethod", "abc.abstractmethod") for d in node.decorator_list
    ):
        return True
    for stmt in node.body:
        if isinstance(stmt, ast.Pass) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        ):
            continue  # `pass`, a docstring, `...`
        if isinstance(stmt, ast.Raise) and "NotImplementedError" in ast.unparse(stmt):
            continue
        return False
    return True


def _header_words(*parts: ast.AST) -> str:
    """The names and string literals of a loop header's parts, as ast.unparse writes them:
    all of its text that hot_loop_header can match (the same verdict on the 34,727 `for`
    loops of the corpus), without unparsing."""
    words: list[str] = []
    for part in parts:
        for node in _walk_ast(part):
            if isinstance(node, ast.Name):
                words.append(node.id)
            elif isinstance(node, ast.Attribute):
                words.append(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
                words.append(repr(node.value))
            elif isinstance(node, ast.arg):
                words.append(node.arg)
            elif isinstance(node, ast.keyword) and node.arg:
                words.append(node.arg)
    return " ".join(words)


def _in_hot_loops(body: list[ast.stmt]) -> set[int]:
    """ids of the nodes of a function body (nested functions left out, as the walk
    leaves them) inside the body of a hot loop: a `while`, or a `for` whose header names
    data, batches or steps."""
    found: set[int] = set()
    stack: list[tuple[ast.AST, bool]] = [(stmt, False) for stmt in body]
    while stack:
        node, hot = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if hot:
            found.add(id(node))
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            if isinstance(node, ast.While):
                header = None
                stack.append((node.test, hot))  # a `while` test runs every pass too
            else:
                header = _header_words(node.target, node.iter)
                stack.append((node.iter, hot))  # evaluated once
            inner = hot or hot_loop_header(header)
            stack.extend((stmt, inner) for stmt in node.body)
            stack.extend((stmt, hot) for stmt in node.orelse)  # runs once, at the end
            continue
        stack.extend((child, hot) for child in _all_ast_children(node))
    return found


def summarise_source(source: str, path: str) -> ModuleSummary:
    summary = ModuleSummary(path)
    try:
        tree = parse_quietly(source, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return summary
    # Lines as ast numbers them (str.splitlines would also break at form feeds).
    lines = re.split(r"\r\n|\r|\n", source)
    imports = ast_import_map(tree)
    summary.star_imports = list(imports.star_imports)
    summary.reexports = {local: list(origin) for local, origin in imports.reexports().items()}
    _note_module_names(tree, imports, summary)
    autograd_functions = _autograd_function_classes(tree, imports)
    summary.autograd_functions = sorted(autograd_functions)
    # summary key -> the keys of the functions of this file it calls
    calls: dict[str, set[str]] = {}
    module_functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    module_returns: dict[str, list[tuple[ast.AST | None, ast.stmt]]] = {}
    # classes that build no weights themselves: (class, what its `__init__` builds)
    holders: list[tuple[ast.ClassDef, dict[str, set[str]]]] = []
    # every class's _built_attributes
    built_by_class: dict[str, dict[str, set[str]]] = {}
    classes: dict[str, ast.ClassDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            manager = _mode_manager(node)
            if manager is not None:
                summary.mode_managers[node.name] = manager
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            called = calls[node.name] = set()
            returned = module_returns[node.name] = []
            module_functions[node.name] = node
            summary.functions[node.name] = _summarise_function(
                node,
                imports,
                path,
                lines,
                called,
                returns=returned,
                autograd_functions=autograd_functions,
            )
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = node
            summary.classes.append(node.name)
            built = built_by_class[node.name] = _built_attributes(node)
            _summarise_methods(
                node, imports, path, lines, calls, summary.functions, autograd_functions
            )
            carried = carried_attributes_of_class(node)
            if carried:
                summary.carried_state[node.name] = [list(c) for c in carried]
            frozen = _frozen_attributes(node)
            if frozen:
                summary.frozen_attributes[node.name] = frozen
            unless = _frozen_unless_given(node)
            if unless:
                summary.frozen_unless_given[node.name] = {
                    attribute: list(given) for attribute, given in unless.items()
                }
            handed = _handed_attributes(node)
            if handed:
                summary.handed_attributes[node.name] = handed
            forward = own_method(node, "forward")
            if forward is not None and _forward_clears_own_grads(forward):
                summary.grad_clearing_forwards.append(node.name)
            _note_parameterless_attributes(built, imports, summary.parameterless_attributes)
            if (
                _builds_weighted_layers(built)
                or _builds_parameters(built, imports)
                or _extends_a_weighted_layer(node, imports)
            ):
                summary.parameter_classes.append(node.name)
            elif _passes_layers_to_a_container(node, imports):
                summary.container_classes.append(node.name)
            else:
                holders.append((node, built))
        elif isinstance(node, ast.Assign):
            _note_class_alias(node, summary)
    factories = _layer_factories(module_returns, imports, module_functions)
    summary.layer_factories = sorted(factories)
    _holders_of_parameters(summary.parameter_classes, holders, factories)
    summary.imported_parts = _imported_parts(summary.parameter_classes, holders, imports)
    summary.weighted_attributes = _weighted_attributes(
        built_by_class, summary.parameter_classes, imports
    )
    summary.weighted_instances, summary.weighted_registries = _weighted_instances(
        tree, summary.parameter_classes, imports
    )
    summary.last_activations = {
        name: [last.function, last.after_parameters]
        for name, last in last_activations_of_classes(classes, imports.qualify).items()
    }
    _differentiating_through_calls(summary.functions, calls)
    _plain_through_helpers(summary.functions, module_functions, module_returns, calls, imports)
    return summary


def _weighted_instances(
    tree: ast.Module, parameter_classes: list[str], imports: ImportMap
) -> tuple[list[str], list[str]]:
    """The names the module's top level (its `if`/`try` blocks included) binds exactly
    once, by a plain assignment of a construction of one of its own classes with
    weights or of a torch.nn layer with weights or container of layers, moved or not
    (`model = Net().to(device)`, `net = nn.Sequential(nn.Linear(4, 8), nn.ReLU())`): a
    script's model that another file imports by name. Then the names it binds once to
    a registry of its classes with weights (`MODELS = {"mlp": MLP, "cnn": CNN}`)."""
    bindings: dict[str, int] = {}
    built: set[str] = set()
    registries: set[str] = set()
    for node in _top_level_statements(tree, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
        bound: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            bound = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For)):
            bound = [node.target]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bindings[node.name] = bindings.get(node.name, 0) + 1
        for target in bound:
            for inner in _walk_ast(target):
                if isinstance(inner, ast.Name):
                    bindings[inner.id] = bindings.get(inner.id, 0) + 1
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            continue
        if _registry_of_weighted_classes(node.value, parameter_classes):
            registries.add(node.targets[0].id)
            continue
        made = ast_called_through(node.value, SELF_RETURNING_MODULE_METHODS)
        if not isinstance(made, ast.Call):
            continue
        if _builds_weights(ast_dotted_name(made.func) or "", parameter_classes, imports):
            built.add(node.targets[0].id)
    imported = imports.names()  # an import of the name binds it too
    built = {name for name in built if bindings.get(name) == 1 and name not in imported}
    if built:
        built -= _frozen_at_top_level(tree)
    registries = {n for n in registries if bindings.get(n) == 1 and n not in imported}
    if registries:
        registries -= _changed_or_handed_on(tree, registries)
    return sorted(built), sorted(registries)


def _changed_or_handed_on(tree: ast.Module, names: set[str]) -> set[str]:
    """The names of `names` the module reads other than to pick an element
    (`MODELS[name]`): stored into (`MODELS["x"] = f`, in a registering decorator too),
    changed by a method (`MODELS.update(...)`), aliased or handed on. What such a
    registry holds when another file picks from it is out of sight."""
    found: set[str] = set()
    picked: set[int] = set()
    # ast.walk meets a subscript before the name it picks from
    for node in _walk_ast(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
        ):
            picked.add(id(node.value))
        elif (
            isinstance(node, ast.Name)
            and node.id in names
            and isinstance(node.ctx, ast.Load)
            and id(node) not in picked
        ):
            found.add(node.id)
    return found


def _registry_of_weighted_classes(value: ast.expr, parameter_classes: list[str]) -> bool:
    """Is `value` a dict, list or tuple written out of names of the module's classes
    with weights, and nothing else (`{"mlp": MLP, "cnn": CNN}`)?"""
    if isinstance(value, ast.Dict):
        if any(key is None for key in value.keys):
            return False  # `{**OTHER, ...}`: entries out of sight
        entries = value.values
    elif isinstance(value, (ast.List, ast.Tuple)):
        entries = value.elts
    else:
        return False
    return bool(entries) and all(
        isinstance(entry, ast.Name) and entry.id in parameter_classes for entry in entries
    )


def _top_level_statements(
    tree: ast.Module, blocks: tuple[type[ast.stmt], ...]
) -> Iterator[ast.stmt]:
    """The module's top-level statements and those of the `blocks` among them (an
    `if`'s arms, a `try`'s handlers too), nested in turn, in source order: each
    compound statement before its blocks' statements (`__all__ = [...]` is read before
    a later `__all__ += [...]`)."""
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, blocks):
            inner: list[ast.stmt] = list(getattr(node, "body", ()))
            for handler in getattr(node, "handlers", ()):
                inner.extend(handler.body)
            inner.extend(getattr(node, "orelse", ()))
            inner.extend(getattr(node, "finalbody", ()))
            stack.extend(reversed(inner))


def _frozen_at_top_level(tree: ast.Module) -> set[str]:
    """The names read by a top-level statement (its nested blocks included) that
    switches requires_grad (`model.requires_grad_(False)`, `for p in
    model.parameters(): p.requires_grad = False`): a frozen instance's forward records
    nothing of its own."""
    frozen: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if any(
            isinstance(inner, ast.Attribute)
            and inner.attr in (REQUIRES_GRAD_ATTRIBUTE, REQUIRES_GRAD_METHOD)
            for inner in _walk_ast(node)
        ):
            frozen.update(inner.id for inner in _walk_ast(node) if isinstance(inner, ast.Name))
    return frozen


def _handed_attributes(cls: ast.ClassDef) -> dict[str, str]:
    """{parameter: attribute} for each `self.<attribute> = <parameter>` among the
    statements of the class's own `__init__` (its first parameter, the instance,
    aside): what a construction hands the class, it keeps."""
    init = own_method(cls, "__init__")
    if init is None:
        return {}
    params = [a.arg for a in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)]
    if not params:
        return {}
    receiver, handed = params[0], set(params[1:])
    found: dict[str, str] = {}
    for statement in init.body:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target, value = statement.targets[0], statement.value
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == receiver
            and isinstance(value, ast.Name)
            and value.id in handed
        ):
            found.setdefault(value.id, target.attr)
    return found


def _summarise_methods(
    node: ast.ClassDef,
    imports: ImportMap,
    path: str,
    lines: list[str],
    calls: dict[str, set[str]],
    functions: dict[str, ExternalFunction],
    autograd_functions: Set[str] = frozenset(),
) -> None:
    """Adds the summaries of the class's methods to `functions`, keyed `Class.method`,
    and what each calls to `calls` (`autograd_functions`: the module's custom autograd
    Functions)."""
    defined = [
        item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    methods = frozenset(item.name for item in defined)
    for item in defined:
        name = f"{node.name}.{item.name}"
        called = calls[name] = set()
        functions[name] = _summarise_function(
            item,
            imports,
            path,
            lines,
            called,
            method=True,
            class_methods=methods,
            autograd_functions=autograd_functions,
        )
    _layers_through_own_methods(functions, node.name)


@dataclass(frozen=True)
class SummarisedClasses:
    """What summarise_methods_named has summarised of one file so far: the methods of
    some of its classes, keyed `Class.method`, and the module's functions they call,
    with what each calls. Grown a class at a time, as searches ask for methods."""

    functions: dict[str, ExternalFunction] = field(default_factory=dict)
    calls: dict[str, set[str]] = field(default_factory=dict)
    classes: frozenset[str] = frozenset()
    # class name -> its place in the file, as summarise_source lists them
    order: dict[str, int] = field(default_factory=dict)

    def methods_named(self, method: str) -> list[ExternalFunction]:
        found = _methods_named(self.functions, method)
        found.sort(key=lambda pair: self.order[pair[0]])
        return [function for _, function in found]


def _methods_named(
    functions: dict[str, ExternalFunction], method: str
) -> list[tuple[str, ExternalFunction]]:
    """(class, summary) of each method `method` among a file's summaries, keyed
    `Class.method` (module functions have no dot), in the dict's order."""
    found: list[tuple[str, ExternalFunction]] = []
    for name, function in functions.items():
        owner, _, own = name.rpartition(".")
        if owner and own == method:
            found.append((owner, function))
    return found


def summarise_methods_named(
    source: str, path: str, method: str, done: SummarisedClasses = SummarisedClasses()
) -> SummarisedClasses:
    """`done` with the classes of the file that define `method` summarised as
    summarise_source summarises them, without the rest of the file: their other methods
    (a method runs layers through its own methods) and the module's functions they
    call, transitively (one that differentiates makes its caller differentiate). A
    search for the definitions of one method reads many files, of whose functions it
    asks about few. `done` is left as it was."""
    try:
        tree = parse_quietly(source, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return done
    classes = [
        (place, node)
        for place, node in enumerate(tree.body)
        if isinstance(node, ast.ClassDef)
        and node.name not in done.classes
        and any(
            isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == method
            for item in node.body
        )
    ]
    if not classes:
        return done
    lines = re.split(r"\r\n|\r|\n", source)
    imports = ast_import_map(tree)
    module_functions = {
        node.name: node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    calls = dict(done.calls)
    functions = dict(done.functions)
    order = dict(done.order)
    autograd_functions = _autograd_function_classes(tree, imports)
    for place, node in classes:
        order.setdefault(node.name, place)
        _summarise_methods(node, imports, path, lines, calls, functions, autograd_functions)
    waiting = [name for called in calls.values() for name in called]
    while waiting:
        name = waiting.pop()
        if name in functions or name not in module_functions:
            continue
        called = calls[name] = set()
        functions[name] = _summarise_function(
            module_functions[name],
            imports,
            path,
            lines,
            called,
            autograd_functions=autograd_functions,
        )
        waiting.extend(called)
    # the functions summarised before call none of the new ones: their answers stand
    _differentiating_through_calls(functions, calls)
    return SummarisedClasses(
        functions, calls, done.classes | {node.name for _, node in classes}, order
    )


def _holders_of_parameters(
    parameter_classes: list[str],
    holders: list[tuple[ast.ClassDef, dict[str, set[str]]]],
    factories: Set[str] = frozenset(),
) -> None:
    """Adds the classes that hold weights through a class of the same module, wherever
    in the file it is defined: a subclass (`class ConditionalNormalizingFlow(
    NormalizingFlow)`: its base's `__init__` builds the layers) or a holder
    (`self.gaussianize = Gaussianize(...)`, Glow's Split defined above its Gaussianize;
    kuc2477's WGAN holding its critic and generator), or one that stores what a layer
    factory of the module returns (`self.policy = create_conv(c, n)`, `factories`).
    Repeated while a round adds one."""
    waiting = list(holders)
    while waiting:
        known = set(parameter_classes)
        added = [
            node
            for node, built in waiting
            if any(isinstance(base, ast.Name) and base.id in known for base in node.bases)
            or any(name in known or name in factories for names in built.values() for name in names)
        ]
        if not added:
            return
        parameter_classes.extend(node.name for node in added)
        waiting = [(node, built) for node, built in waiting if node not in added]


def _layer_factories(
    returns: dict[str, list[tuple[ast.AST | None, ast.stmt]]],
    imports: ImportMap,
    functions: Mapping[str, ast.FunctionDef | ast.AsyncFunctionDef] | None = None,
) -> set[str]:
    """The module-level functions every return of which builds a torch.nn layer with
    weights or a container of layers, through any call that hands the module back
    (`def create_conv(c, n): return nn.Sequential(nn.Conv2d(c, 32, 8), ...).apply(init)`,
    `def mlp(sizes): return nn.Sequential(*layers)`): what a class stores from one in
    `self` is its layers. Whether those weights train is another question
    (frozen_attributes): an `apply` that freezes them still leaves them held."""

    def builds_layers(value: ast.AST | None) -> bool:
        made = ast_called_through(value, SELF_RETURNING_MODULE_METHODS) if value else None
        if not isinstance(made, ast.Call):
            return False
        built = ast_dotted_name(made.func) or ""
        return _is_weighted_layer(built) or imports.qualify(built) in PARAMETER_CLASSES

    found = set()
    for name, returned in returns.items():
        values = [value for value, _ in returned]
        if not values or not all(
            isinstance(value, ast.Name) or builds_layers(value) for value in values
        ):
            continue  # cheapest first: a return that is no layer and no name
        function = functions.get(name) if functions is not None else None
        if all(
            value is not None and builds_layers(_bound_once(function, value)) for value in values
        ):
            found.add(name)
    return found


def _bound_once(function: ast.FunctionDef | ast.AsyncFunctionDef | None, value: ast.AST) -> ast.AST:
    """What a name a function returns is bound to, when its body binds it once, by a
    plain assignment (`layers = nn.ModuleList([...])`, then `return layers`); the value
    itself otherwise. One walk of the body, left at a second binding."""
    if function is None or not isinstance(value, ast.Name):
        return value
    name = value.id
    stores = 0
    assigned: ast.AST | None = None
    for node in _walk_ast(function):
        if isinstance(node, ast.Name):
            if node.id == name and isinstance(node.ctx, ast.Store):
                stores += 1
                if stores > 1:
                    return value
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
        ):
            assigned = node.value
    return assigned if stores == 1 and assigned is not None else value


def _imported_parts(
    parameter_classes: list[str],
    holders: list[tuple[ast.ClassDef, dict[str, set[str]]]],
    imports: ImportMap,
) -> dict[str, list[list]]:
    """ModuleSummary.imported_parts: for each class not known to hold weights, the
    classes the imports bring in (not torch's: what those build is known already) that
    it subclasses or builds into `self`, and those of the file's classes it is made of."""
    known = set(parameter_classes)
    local = {node.name for node, _ in holders}
    direct: dict[str, list[list]] = {}
    made_of: dict[str, set[str]] = {}
    for node, built in holders:
        if node.name in known:
            continue
        names = {ast_dotted_name(base) or "" for base in node.bases}
        names.update(name for built_names in built.values() for name in built_names)
        parts: list[list] = []
        for name in sorted(names - {""}):
            if name in local:
                made_of.setdefault(node.name, set()).add(name)
                continue
            target = imports.target(name)
            if target is not None and target[0].partition(".")[0] != "torch":
                parts.append(list(target))
        direct[node.name] = parts
    found: dict[str, list[list]] = {}
    for name in direct:
        parts, waiting, seen = [], [name], {name}
        while waiting:
            current = waiting.pop()
            parts.extend(p for p in direct.get(current, ()) if p not in parts)
            for inner in made_of.get(current, ()):
                if inner not in seen:
                    seen.add(inner)
                    waiting.append(inner)
        if parts:
            found[name] = parts
    return found


def _note_module_names(tree: ast.Module, imports: ImportMap, summary: ModuleSummary) -> None:
    """What `from <this module> import *` can give: the module's absolute imports, its
    other top-level names (which hide an import or a star import of the same name) and
    its literal `__all__`. Top-level statements only: a star import binds what the
    module's namespace holds once it has run, and a name bound inside `if`/`try` at
    the top is taken as bound."""
    defined: set[str] = set()
    all_names: list[str] | None = None
    all_unknown = False  # `__all__` bound to something other than a literal list
    for node in _top_level_statements(tree, (ast.If, ast.Try, ast.With)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for inner in _walk_ast(target):
                    if isinstance(inner, ast.Name):
                        defined.add(inner.id)
            listed = _literal_names(node.value)
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                if listed is None:
                    all_names, all_unknown = None, True
                elif isinstance(node, ast.AugAssign):
                    # a list computed before stays unknown, whatever is added to it
                    all_names = None if all_unknown else [*(all_names or []), *listed]
                else:
                    all_names, all_unknown = listed, False
    summary.absolute_imports = {
        local: list(origin)
        for local, origin in imports.absolute_module_imports().items()
        if local not in defined
    }
    if imports.star_imports:  # nothing to hide otherwise: keep the summary small
        summary.defined_names = sorted(defined)
    summary.all_names = all_names


def _literal_names(value: ast.AST | None) -> list[str] | None:
    """The strings of a literal list or tuple of strings (`__all__ = ["a", "b"]`)."""
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    names = [e.value for e in value.elts if isinstance(e, ast.Constant)]
    if len(names) != len(value.elts) or not all(isinstance(n, str) for n in names):
        return None
    return cast(list[str], names)


def _layers_through_own_methods(functions: dict[str, ExternalFunction], cls: str) -> None:
    """A method that calls, with autograd recording, a method of its class that runs
    the object's layers runs them too: IWAE's `sample(n)` decodes with `self.decode(z)`,
    whose body calls `self.decoder(z)`. To a fixed point, since the chain may be long."""
    methods = {
        name.rpartition(".")[2]: function
        for name, function in functions.items()
        if name.rpartition(".")[0] == cls
    }
    changed = True
    while changed:
        changed = False
        for function in methods.values():
            if function.runs_own_layers:
                continue
            if any(
                (callee := methods.get(name)) is not None and callee.runs_own_layers
                for name in function.recorded_own_methods
            ):
                function.runs_own_layers = changed = True


def _calls_only_in_training(body: list[ast.stmt]) -> set[int]:
    """The ids of the calls in `body` (not in nested functions) on a branch a module
    takes only in training mode: `if self.training:` (or `self.training and ...`), the
    `else:` of `if not self.training:` (FileIndex.runs_only_in_mode's reading, less
    what follows an early return)."""
    found: set[int] = set()
    stack: list[tuple[ast.AST, bool]] = [(statement, False) for statement in body]
    while stack:
        node, in_training = stack.pop()
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef):
            continue
        if type(node) is ast.If:
            tested = _ast_mode_tested(node.test)
            stack.append((node.test, in_training))
            stack += [(s, in_training or tested is True) for s in node.body]
            stack += [(s, in_training or tested is False) for s in node.orelse]
            continue
        if in_training and type(node) is ast.Call:
            found.add(id(node))
        stack += [(child, in_training) for child in ast.iter_child_nodes(node)]
    return found


def _ast_mode_tested(test: ast.expr) -> bool | None:
    """True for `self.training` (and `self.training and ...`, whose `else:` says
    nothing), False for `not self.training`, else None: index._mode_tested's reading,
    of an ast test."""
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        return False if _ast_is_mode_flag(test.operand) else None
    if _ast_is_mode_flag(test):
        return True
    if type(test) is ast.BoolOp and type(test.op) is ast.And:
        if any(_ast_is_mode_flag(v) for v in test.values):
            return True
    return None


def _ast_is_mode_flag(expr: ast.expr) -> bool:
    head, _, attribute = (ast_dotted_name(expr) or "").partition(".")
    return head == "self" and attribute in MODULE_MODE_ATTRIBUTES


def _differentiating_through_calls(
    functions: dict[str, ExternalFunction], calls: dict[str, set[str]]
) -> None:
    """A function that calls a function of its own file that differentiates
    differentiates too (`train_step` calling `backward_and_step`), as the linted file's
    analysis follows its own callees (ForwardAnalysis.differentiates): a call `f(...)`
    runs the module's function `f`, `self.m(...)` the same class's method `m`. The
    names are bound by then, wherever the call sits in the body."""
    resolved: dict[str, set[str]] = {}
    for key, called in calls.items():
        owner = key.rpartition(".")[0]
        targets = set()
        for name in called:
            target = f"{owner}{name}" if name.startswith(".") else name
            if target in functions and target != key:
                targets.add(target)
        resolved[key] = targets
    changed = True
    while changed:
        changed = False
        for key, targets in resolved.items():
            function = functions[key]
            if any(functions[t].differentiates for t in targets):
                # a helper's differentiation: where it is called is not read
                function.trains_only = False
                if not function.differentiates:
                    function.differentiates = changed = True


def _note_class_alias(node: ast.Assign, summary: ModuleSummary) -> None:
    """`KAN = MultKAN`: the alias of a class with weighted layers is one too."""
    value = node.value
    if isinstance(value, ast.Name) and value.id in summary.parameter_classes:
        for target in node.targets:
            if isinstance(target, ast.Name):
                summary.parameter_classes.append(target.id)


def _mode_manager(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
) -> ModeManager | None:
    """The eval-mode manager a module-level definition is, if it is one: a generator
    function that switches parameters to eval mode (`@contextmanager def eval_mode(m):
    m.eval(); yield; m.train(prev)`), or a class whose `__enter__` switches what its
    `__init__` stored from its parameters (pytorch_sac's `utils.eval_mode(*models)`)."""
    if isinstance(node, ast.ClassDef):
        methods = {
            item.name: item
            for item in node.body
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        init, enter = methods.get("__init__"), methods.get("__enter__")
        if init is None or enter is None or "__exit__" not in methods:
            return None
        params, vararg = _positional(init)
        params = params[1:]  # self
        stored: dict[str, str] = {}  # `self.models = models`: attribute -> parameter
        for stmt in _walk_ast(init):
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name):
                for target in stmt.targets:
                    name = ast_dotted_name(target) or ""
                    if name.startswith("self.") and stmt.value.id in (*params, vararg):
                        stored[name] = stmt.value.id
        switched = _switched_to_eval(enter, stored)
    else:
        if not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _inner_nodes(node)):
            return None
        params, vararg = _positional(node)
        switched = _switched_to_eval(node, {p: p for p in (*params, vararg) if p})
    if not switched:
        return None
    return ModeManager(params, vararg, sorted(switched))


def _positional(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[str], str]:
    args = func.args
    params = [a.arg for a in (*args.posonlyargs, *args.args)]
    return params, args.vararg.arg if args.vararg is not None else ""


def _switched_to_eval(
    func: ast.FunctionDef | ast.AsyncFunctionDef, sources: dict[str, str]
) -> set[str]:
    """The parameters behind `sources` (dotted name -> parameter) that the function
    switches to eval mode: `m.eval()`, `m.train(False)`, directly or on the loop
    variable of `for m in models`."""
    loops: dict[str, str] = {}
    for stmt in _walk_ast(func):
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and isinstance(stmt.target, ast.Name):
            source = sources.get(ast_dotted_name(stmt.iter) or "")
            if source is not None:
                loops[stmt.target.id] = source
    found: set[str] = set()
    for call in _walk_ast(func):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            continue
        receiver = _switched_receiver(call) or ""
        source = sources.get(receiver) or loops.get(receiver)
        if source is not None and _mode_switch(call) is True:
            found.add(source)
    return found


def _mode_switch(call: ast.Call) -> bool | None:
    """The mode `x.eval()` / `x.train(...)` puts x in: True for eval mode (`eval()`,
    `train(False)`, `train(mode=False)`), False for training or a flag not known here
    (`train()`, `train(flag)`), None for any other call."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    arguments: list[tuple[str | None, bool | None]] = [(None, _bool_constant(a)) for a in call.args]
    arguments += [(k.arg, _bool_constant(k.value)) for k in call.keywords]
    mode = mode_switch(func.attr, arguments)
    return None if mode is None else mode is Mode.EVAL


def _switched_receiver(call: ast.Call) -> str | None:
    """The dotted name a switch `call` switches, read through the module methods that
    return the module itself (`net.to(device).eval()` switches `net`), as
    train_mode.switch_of reads it in the linted file."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    return ast_dotted_name(ast_called_through(func.value, MODE_CARRYING_MODULE_METHODS))


def _switch_in_chain(expr: ast.AST) -> ast.Call | None:
    """The mode switch a statement's expression is, or carries on through the module
    methods that return the module itself (`_ = m.eval().half()`'s `m.eval()`)."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        if _mode_switch(expr) is not None:
            return expr
        if expr.func.attr not in MODE_CARRYING_MODULE_METHODS:
            return None
        expr = expr.func.value
    return None


def _bool_constant(node: ast.AST) -> bool | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, bool) else None


def _frozen_unless_given(cls: ast.ClassDef) -> dict[str, tuple[str, int]]:
    """The attributes of `self` ("" for the instance itself) whose parameters the
    class's `__init__` sets, on every path, to one of its own parameters whose default
    is `False`, with that parameter's name and position after `self`, when no method of
    the class switches them on again: `for param in self.parameters(): param.requires_grad
    = requires_grad` in pytorch-fid's InceptionV3, frozen unless built with
    `requires_grad=True`."""
    init = own_method(cls, "__init__")
    if init is None:
        return {}
    arguments = init.args
    positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)][1:]
    defaults = dict(zip(reversed(positional), reversed(arguments.defaults), strict=False))
    defaults.update(
        (a.arg, d)
        for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if d is not None
    )
    off_by_default = {
        name for name, default in defaults.items() if _bool_constant(default) is False
    }
    if not off_by_default:
        return {}
    found: dict[str, tuple[str, int]] = {}
    for statement in init.body:  # not under an `if`: on every path
        if not isinstance(statement, ast.For):
            continue
        owner = _parameters_walked(statement.iter)
        if owner is None:
            continue
        values = _element_switch_values(statement.body, statement.target)
        if len(values) == 1 and isinstance(values[0], ast.Name):
            given = values[0].id
            if given in off_by_default and not _rebinds(init, given):
                if _built_after(init, statement.lineno, owner):
                    continue  # a head added after the freeze trains
                position = positional.index(given) if given in positional else -1
                found[owner] = (given, position)
    # a switch back on anywhere else in the class (`def unfreeze(self)`) undoes it
    for attribute in list(found):
        if attribute in _switched_on_in_class(cls, skip=init):
            del found[attribute]
    return found


def _built_after(init: ast.FunctionDef | ast.AsyncFunctionDef, line: int, owner: str) -> bool:
    """Does `__init__` build a module into `self` after `line` (`self.fc = nn.Linear(16,
    2)` after freezing the backbone): for the instance (`owner` ""), any attribute; for
    `self.<owner>`, that one? What is built after a freeze keeps requiring grad."""
    for node in _walk_ast(init):
        if not isinstance(node, ast.Assign) or node.lineno <= line:
            continue
        if not isinstance(node.value, ast.Call):
            continue
        for target in node.targets:
            attribute = _self_attribute_or_self(target)
            if attribute and (owner == "" or attribute == owner):
                return True
    return False


def _rebinds(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    return any(
        isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
        for node in _walk_ast(function)
    )


def _switched_on_in_class(cls: ast.ClassDef, skip: ast.AST | None = None) -> set[str]:
    """The attributes ("" for the instance) a statement of the class (outside `skip`, a
    method) switches on, or to anything but a written-out False."""
    on: set[str] = set()
    for method in cls.body:
        if method is skip:
            continue
        for node in _walk_ast(method):
            if isinstance(node, ast.Call):
                switched = _requires_grad_method_switch(node)
                owner = _self_attribute_or_self(switched[0]) if switched is not None else None
                if owner is not None and switched is not None and switched[1] is not False:
                    on.add(owner)
            elif isinstance(node, ast.For):
                owner = _parameters_walked(node.iter)
                if owner is not None and any(
                    value is not False for value in _element_switches(node.body, node.target)
                ):
                    on.add(owner)
    return on


def _frozen_attributes(cls: ast.ClassDef) -> list[str]:
    """The attributes of `self` whose parameters the class's `__init__` switches off on
    every path (`self.target.requires_grad_(False)`, or `p.requires_grad = False` in a
    loop over `self.target.parameters()`), "" for the instance itself, and that no
    method of the class switches on again: RND's random target network, a frozen
    teacher. A forward of one on inputs without history records nothing, wherever
    the instance is used."""
    init = own_method(cls, "__init__")
    if init is None:
        return []
    off: set[str] = set()
    # statements that run on every path through `__init__`: not under an `if`/`try`
    pending: list[ast.stmt] = list(init.body)
    while pending:
        statement = pending.pop()
        owner = None
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            pending.extend(statement.body)
        else:
            owner = _freeze_of(statement, _self_attribute_or_self)
        # a head added after the freeze (`self.fc = nn.Linear(16, 2)`) trains
        if owner is not None and not _built_after(init, statement.lineno, owner):
            off.add(owner)
    if not off:
        return []
    # a switch back on anywhere in the class (`def unfreeze(self)`) undoes it
    return sorted(off - _switched_on_in_class(cls))


def _forward_clears_own_grads(forward: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Does a `forward` clear the instance's gradients on every call: `self.zero_grad()`
    as a statement of its body, not under an `if`? A seq2seq model that starts its
    forward so: the loop that calls it and backpropagates needs no clear of its own, the
    optimizers hold the instance's parameters."""
    for statement in forward.body:
        if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
            continue
        func = statement.value.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in GRAD_CLEARING_NAMES
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
        ):
            return True
    return False


def forward_clears_own_grads_of_source(source: str) -> bool:
    """_forward_clears_own_grads of a `forward` of the linted file, from its source
    alone: the same recipe as for another file's classes."""
    if not any(name in source for name in GRAD_CLEARING_NAMES):
        return False
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return False
    forward = tree.body[0] if tree.body else None
    return isinstance(forward, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
        _forward_clears_own_grads(forward)
    )


def freezes_of_class_source(source: str) -> tuple[frozenset[str], dict[str, tuple[str, int]]]:
    """(_frozen_attributes, _frozen_unless_given) of a class of the linted file, from its
    source alone, parsed once: one recipe for what a class freezes, without summarising
    the whole file."""
    nothing: tuple[frozenset[str], dict[str, tuple[str, int]]] = (frozenset(), {})
    if REQUIRES_GRAD_ATTRIBUTE not in source:
        return nothing
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return nothing
    cls = tree.body[0] if tree.body else None
    if not isinstance(cls, ast.ClassDef):
        return nothing
    return frozenset(_frozen_attributes(cls)), _frozen_unless_given(cls)


def _requires_grad_method_switch(call: ast.Call) -> tuple[ast.AST, bool | None] | None:
    """(the receiver, the value as a written-out bool or None) of
    `x.requires_grad_(...)`; `x.requires_grad_()` turns it on."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != REQUIRES_GRAD_METHOD:
        return None
    if call.args:
        return func.value, _bool_constant(call.args[0])
    given = next((k.value for k in call.keywords if k.arg == REQUIRES_GRAD_ATTRIBUTE), None)
    return func.value, True if given is None else _bool_constant(given)


def _self_attribute_or_self(expr: ast.AST) -> str | None:
    """`target` of `self.target`, "" of `self` itself; None for anything else."""
    if isinstance(expr, ast.Name) and expr.id == "self":
        return ""
    if (
        isinstance(expr, ast.Attribute)
        and isinstance(expr.value, ast.Name)
        and expr.value.id == "self"
    ):
        return expr.attr
    return None


def _parameters_walked(
    iterable: ast.AST, owner_of: Callable[[ast.AST], str | None] = _self_attribute_or_self
) -> str | None:
    """The module, as `owner_of` names it (by default the attribute, or "" for
    `self`), whose `.parameters()` a loop walks."""
    if (
        isinstance(iterable, ast.Call)
        and isinstance(iterable.func, ast.Attribute)
        and iterable.func.attr in PARAMETER_ITERATORS
    ):
        return owner_of(iterable.func.value)
    return None


def _freeze_of(statement: ast.stmt, owner_of: Callable[[ast.AST], str | None]) -> str | None:
    """The module, as `owner_of` names it, whose parameters one statement switches off:
    `m.requires_grad_(False)`, or `p.requires_grad = False` in a loop over
    `m.parameters()`; None for any other statement."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        switched = _requires_grad_method_switch(statement.value)
        if switched is not None and switched[1] is False:
            return owner_of(switched[0])
    elif isinstance(statement, ast.For):
        owner = _parameters_walked(statement.iter, owner_of)
        if owner is not None and any(
            on is False for on in _element_switches(statement.body, statement.target)
        ):
            return owner
    return None


def _loop_element(target: ast.AST) -> str | None:
    """The name a loop over parameters gives each one: the target itself, or for
    `named_parameters()`, the pair's second name."""
    if isinstance(target, ast.Tuple) and len(target.elts) == 2:
        target = target.elts[1]
    return target.id if isinstance(target, ast.Name) else None


def _element_switch_values(body: list[ast.stmt], target: ast.AST) -> list[ast.expr]:
    """What the loop body's own assignments set the loop element's requires_grad to, as
    written: `p.requires_grad = requires_grad` gives the Name."""
    element = _loop_element(target)
    if element is None:
        return []
    return [
        statement.value
        for statement in body
        if isinstance(statement, ast.Assign)
        for assigned in statement.targets
        if isinstance(assigned, ast.Attribute)
        and assigned.attr == REQUIRES_GRAD_ATTRIBUTE
        and isinstance(assigned.value, ast.Name)
        and assigned.value.id == element
    ]


def _element_switches(body: list[ast.stmt], target: ast.AST) -> list[bool | None]:
    """What the loop body's own statements set the loop element's requires_grad to:
    `p.requires_grad = False`, `p.requires_grad_(False)` (None where it is not written
    out as a bool); assignments first, then method calls."""
    element = _loop_element(target)
    if element is None:
        return []
    found = [_bool_constant(value) for value in _element_switch_values(body, target)]
    for statement in body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            switched = _requires_grad_method_switch(statement.value)
            if (
                switched is not None
                and isinstance(switched[0], ast.Name)
                and switched[0].id == element
            ):
                found.append(switched[1])
    return found


def _built_attributes(cls: ast.ClassDef) -> dict[str, set[str]]:
    """attribute -> the dotted names of what the class's methods build into `self.<it>`
    (`self.fc = nn.Linear(...)`: "nn.Linear"; `self.encoder = Encoder(...)`): its
    layers, if it is a module. A value that is no call, or one unpacked from a tuple
    (`self.act = activation`), is "": something it cannot name."""
    found: dict[str, set[str]] = {}
    for node in _inner_nodes(cls):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        # `QNetwork(...).to(device)`: the module built, moved
        value = ast_called_through(value, MODULE_WRAPPING_METHODS)
        built = (ast_dotted_name(value.func) or "") if isinstance(value, ast.Call) else ""
        for target in targets:
            unpacked = isinstance(target, (ast.Tuple, ast.List))
            elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            for element in elements:
                if (
                    isinstance(element, ast.Attribute)
                    and isinstance(element.value, ast.Name)
                    and element.value.id == "self"
                ):
                    found.setdefault(element.attr, set()).add("" if unpacked else built)
    return found


def _weighted_attributes(
    built_by_class: dict[str, dict[str, set[str]]],
    parameter_classes: list[str],
    imports: ImportMap,
) -> dict[str, list[str]]:
    """class -> its attributes every value of which is a torch.nn layer with weights,
    a container of layers or a class of this module with weights (`self.model =
    Net()`, `self.q = nn.Sequential(...)`): a base class of a trainer or an agent
    that builds its model, for the subclasses other files derive from it."""
    found: dict[str, list[str]] = {}
    for cls, built in built_by_class.items():
        weighted = [
            attribute
            for attribute, names in built.items()
            if names and all(_builds_weights(name, parameter_classes, imports) for name in names)
        ]
        if weighted:
            found[cls] = weighted
    return found


def _note_parameterless_attributes(
    built: dict[str, set[str]], imports: ImportMap, found: dict[str, bool]
) -> None:
    """Notes, for each attribute a class's methods assign in `self`, whether every value
    is a torch.nn layer that holds no parameters (`self.drop = nn.Dropout(p)`); one
    value of any other kind (`self.act = activation`, a layer with weights) says it may
    hold some. `built`: the class's _built_attributes."""
    for attribute, names in built.items():
        parameterless = all(
            head == "torch.nn" and last in PARAMETERLESS_LAYERS
            for head, _, last in (imports.qualify(name).rpartition(".") for name in names)
        )
        found[attribute] = found.get(attribute, True) and parameterless


def _builds_weighted_layers(built: dict[str, set[str]]) -> bool:
    """Does a method of the class store a torch.nn layer with weights in `self`
    (`self.fc = nn.Linear(...)`, `self.body = nn.Sequential(...)`)? `built`: its
    _built_attributes."""
    return any(_is_weighted_layer(name) for names in built.values() for name in names)


def _extends_a_weighted_layer(cls: ast.ClassDef, imports: ImportMap) -> bool:
    """Does the class hold weights through a torch.nn base (torch_base_gives_weights):
    a parametric layer (`class MaskedConv2d(nn.Conv2d)`), or a container its own
    `__init__` fills with layers that may have weights (`class CModel(nn.Sequential)`
    handing `super().__init__(*layers)` the layers its configuration names)?"""
    own_init = own_method(cls, "__init__")
    handed: list[str] | None = None
    weights_off = False
    call = _super_init_call(own_init) if own_init is not None else None
    if call is not None:
        init_call, skipped = call
        handed = [_built_torch_class(arg, imports) for arg in init_call.args[skipped:]]
        weights_off = any(
            keyword.arg in NO_AFFINE_FLAGS
            and isinstance(keyword.value, ast.Constant)
            and keyword.value.value is False
            for keyword in init_call.keywords
        )
    return any(
        torch_base_gives_weights(
            imports.qualify(ast_dotted_name(base) or ""),
            own_init=own_init is not None,
            handed=handed,
            weights_off=weights_off,
        )
        for base in cls.bases
    )


def _super_init_call(
    init: ast.FunctionDef | ast.AsyncFunctionDef,
) -> tuple[ast.Call, int] | None:
    """(the call, how many leading arguments are not the base's) of the base class's
    `__init__` that an `__init__` makes: `super().__init__(...)`, `super(Cls,
    self).__init__(...)`, or `nn.Sequential.__init__(self, ...)`."""
    for node in ast.walk(init):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "__init__"
        ):
            continue
        owner = node.func.value
        if isinstance(owner, ast.Call) and ast_dotted_name(owner.func) == "super":
            return node, 0
        if isinstance(owner, (ast.Name, ast.Attribute)):
            return node, 1
    return None


def _built_torch_class(arg: ast.expr, imports: ImportMap) -> str:
    """The qualified torch.nn class an argument builds (`nn.ReLU()`), or "" for
    anything else (`*layers`, a layer of the project, a name)."""
    if isinstance(arg, ast.Call):
        qualified = imports.qualify(ast_dotted_name(arg.func) or "")
        if qualified.startswith("torch.nn."):
            return qualified
    return ""


def _passes_layers_to_a_container(cls: ast.ClassDef, imports: ImportMap) -> bool:
    """Does the class derive from a torch.nn container and leave its construction to
    the container's own `__init__` (`class FlowSequential(nn.Sequential)` with only a
    `forward`)? ModuleSummary.container_classes."""
    return own_method(cls, "__init__") is None and any(
        is_torch_container(imports.qualify(ast_dotted_name(base) or "")) for base in cls.bases
    )


def _builds_weights(name: str, parameter_classes: list[str], imports: ImportMap) -> bool:
    """Does a call of the dotted name `name` build a module with weights: one of the
    module's own classes with weights, or a torch.nn layer with weights or container?"""
    return name in parameter_classes or (
        _is_weighted_layer(name) and imports.qualify(name).startswith("torch.nn.")
    )


def _is_weighted_layer(name: str) -> bool:
    """Is the dotted name of what a call builds a torch.nn layer with weights, or a
    container of layers?"""
    last = name.rsplit(".", 1)[-1]
    return last in PARAMETRIC_LAYERS or last in CONTAINER_MODULES


def _builds_parameters(built: dict[str, set[str]], imports: ImportMap) -> bool:
    """Does a method of the class store a parameter of its own in `self` (`self.g =
    Parameter(torch.Tensor(n, m))`, torch_geometric's convolutions): its instances hold
    weights without a torch.nn layer. `built`: its _built_attributes."""
    return any(
        imports.qualify(name) in PARAMETER_CLASSES for names in built.values() for name in names
    )


# -- finding the project's modules -------------------------------------------------------

# (path, size, stat_version): a file's memoised facts are those of this version of it.
MemoKey = tuple[str, int, str]
_MEMO: dict[MemoKey, ModuleSummary] = {}
_MEMO_LOCK = threading.Lock()


def _memo_key(path: str) -> MemoKey | None:
    """(path, size, times): what a file's memoised facts are keyed on; None when it
    cannot be read or is too large to summarise (stamps.file_state). Inside
    files_settled, one stat per file."""
    settled: dict[str, MemoKey | None] | None = getattr(_SETTLED, "keys", None)
    if settled is not None and path in settled:
        return settled[path]
    key = file_state(path)
    if settled is not None:
        settled[path] = key
    return key


# The memo keys of the files the current thread's lint has looked at (files_settled).
_SETTLED = threading.local()


@contextlib.contextmanager
def files_settled() -> Iterator[None]:
    """The project's files as they were when the lint of one file began: each is looked
    at (stat) once for the lint, not once by every search, which stats every file it may
    read (a file asks a hundred searches: 10,000 stats over the RL tree's 70 scripts).
    The next lint looks again, so an editor's change is seen by the next lint."""
    outer = getattr(_SETTLED, "keys", None)
    if outer is not None:
        yield  # nested: the outer lint's view stands
        return
    _SETTLED.keys = {}
    try:
        yield
    finally:
        _SETTLED.keys = None


def summary_of_file(path: str) -> ModuleSummary | None:
    """The module's summary, memoised by (path, size, times); None if unreadable."""
    key = _memo_key(path)
    if key is None:
        return None
    with _MEMO_LOCK:
        found = _MEMO.get(key)
    if found is not None:
        return found
    data = _text_of(key, path)
    if data is None:
        return None
    try:
        source = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    found = summarise_source(source, path)
    with _MEMO_LOCK:
        _MEMO[key] = found
    return found


_CLASS_MODE_MEMO: dict[MemoKey, dict[str, ClassModeParts]] = {}


def class_modes_of_file(path: str) -> tuple[dict[str, ClassModeParts], str] | None:
    """The parts that decide whether each class of the file depends on train/eval mode
    (analysis.mode_layers), and the file's text stamp; memoised by (path, size, times);
    None if unreadable."""
    key = _memo_key(path)
    if key is None:
        return None
    text = _text_answer(path, _EVAL_TOKENS, key)
    if text is None:
        return None
    with _MEMO_LOCK:
        found = _CLASS_MODE_MEMO.get(key)
    if found is None:
        data = _text_of(key, path)
        if data is None:
            return None
        try:
            tree = parse_quietly(data.decode("utf-8-sig"), path)
        except (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeDecodeError):
            tree = ast.Module(body=[], type_ignores=[])
        found = class_mode_parts(tree)
        with _MEMO_LOCK:
            _CLASS_MODE_MEMO[key] = found
    return found, text[1]


# `.eval` as an attribute, across spaces or a line continuation, or `.train(False)`: what
# a summary's eval switch (`m.eval()`, `m.train(mode=False)`: _mode_switch) needs in the
# text.
_EVAL_ATTRIBUTE = re.compile(rb"\.[\s\\]*(?:eval\b|train\(\s*(?:mode\s*=\s*)?False\b)")
_TEXT_MEMO: dict[MemoKey, str] = {}  # memo key -> text stamp
# (memo key, tokens) -> does the text contain one of them; "<eval>": _EVAL_ATTRIBUTE
_TOKEN_MEMO: dict[tuple[MemoKey, tuple[str, ...]], bool] = {}
_EVAL_TOKENS = ("<eval>",)
# What an eval-mode manager's text must contain: one of its switches.
_MODE_SWITCH_TOKENS = (".eval(", ".train(False", ".train(mode=False")
# The latest texts, by memo key, up to this many bytes in all: a project's whole text,
# for most projects (each caller search asks every file about one more method).
_RECENT_TEXT_BYTES = 8_000_000
_RECENT_TEXTS: _SizedMemo[MemoKey, bytes] = _SizedMemo(_RECENT_TEXT_BYTES)
# The latest parsed files, by memo key, sized by the characters of their text: as many
# as _RECENT_COUNT and _RECENT_AST_CHARS allow. A project's searches ask each file about
# one method after another, file after file, so a memo smaller than the project parses
# the same files again for every method (32 trees: half the caller search's cost on a
# folder of 70 RL scripts).
_RECENT_TREES: _SizedMemo[MemoKey, tuple[ast.Module, list[str], NotebookPython | None]] = (
    _SizedMemo(_RECENT_AST_CHARS, _RECENT_COUNT)
)


def _mentions(key: MemoKey, data: bytes, tokens: tuple[str, ...]) -> bool:
    if tokens == _EVAL_TOKENS:
        return _EVAL_ATTRIBUTE.search(data) is not None
    if tokens[0] in _DEFINITION_TOKENS:
        return _defined_names(key, data).answer(tokens)
    return any(t.encode() in data for t in tokens)


@dataclass(frozen=True)
class _Definitions:
    names: frozenset[bytes]  # every name the text has a `def` for, at any depth
    star_import: bool  # has a `from m import *` line
    number_helpers: frozenset[bytes]  # the defs that are one `return` making numbers

    def answer(self, tokens: tuple[str, ...]) -> bool:
        """What the text says to (_DEFINES_TOKEN or _NUMBER_HELPER_TOKEN, name)."""
        name = tokens[1].encode()
        if name not in self.names:
            # defined elsewhere, maybe re-exported from there by a star import
            return self.star_import
        return tokens[0] == _DEFINES_TOKEN or name in self.number_helpers


_DEFINED_MEMO: dict[MemoKey, _Definitions] = {}


def _defined_names(key: MemoKey, data: bytes) -> _Definitions:
    """The functions a text defines, found once per file state: each of its imported
    names is asked about in turn."""
    with _MEMO_LOCK:
        found = _DEFINED_MEMO.get(key)
    if found is None:
        found = _Definitions(
            frozenset(_DEFINITION.findall(data)),
            _STAR_IMPORT_LINE.search(data) is not None,
            frozenset(_ANY_NUMBER_HELPER.findall(data))
            | frozenset(_ANY_GUARDED_NUMBER_HELPER.findall(data)),
        )
        with _MEMO_LOCK:
            _DEFINED_MEMO[key] = found
    return found


def _text_answer(
    path: str, tokens: tuple[str, ...], key: MemoKey | None = None
) -> tuple[bool, str] | None:
    """(does the file's text contain one of the tokens, its stamp `size:times:text-<digest
    of its bytes>`), memoised like summaries; None if unreadable or too large. The
    answers are kept, and only the latest few texts."""
    key = key or _memo_key(path)
    if key is None:
        return None
    with _MEMO_LOCK:
        stamp = _TEXT_MEMO.get(key)
        found = _TOKEN_MEMO.get((key, tokens))
        defined = _DEFINED_MEMO.get(key) if tokens[0] in _DEFINITION_TOKENS else None
    if found is None and stamp is not None and defined is not None:
        # a text's definitions answer each name without reading it again
        found = defined.answer(tokens)
    if stamp is None or found is None:
        data = _text_of(key, path)
        if data is None:
            return None
        if stamp is None:
            _, size, times = key
            stamp = file_stamp(size, times, TEXT_PREFIX + hashlib.sha256(data).hexdigest()[:16])
        found = _mentions(key, data, tokens)
        with _MEMO_LOCK:
            _TEXT_MEMO[key] = stamp
            _TOKEN_MEMO[(key, tokens)] = found
            # a module asked about one name is asked about the next, and a caller search
            # asks every file of the project about each method: keep the latest texts
            _RECENT_TEXTS.keep(key, data, len(data))
    return found, stamp


def _text_of(key: MemoKey, path: str) -> bytes | None:
    """The file's bytes: one of the few texts kept (a text gate has just read it), else
    from disk; None if unreadable."""
    with _MEMO_LOCK:
        data = _RECENT_TEXTS.get(key)
    if data is not None:
        return data
    try:
        # A project file may be a FIFO or a link to a device: only a regular file, and
        # only as much as a summary reads.
        return read_regular(path, MAX_SUMMARY_BYTES)
    except SourceReadError:
        return None


def _parsed(
    path: str, key: MemoKey | None = None
) -> tuple[ast.Module, list[str], NotebookPython | None] | None:
    """A file's ast and its lines (as ast numbers them), for the caller search: each
    file that names a method or function is read by several searches (one per method,
    and again to check a cached result), so the few latest are kept, and the text the
    search's filter just read is used rather than read again. A notebook is read as its
    code cells (gradlint.ipynb), which it also returns for the way back to them."""
    key = key or _memo_key(path)
    if key is None:
        return None
    with _MEMO_LOCK:
        found = _RECENT_TREES.get(key)
    if found is not None:
        return found
    data = _text_of(key, path)
    if data is None:
        return None
    cells: NotebookPython | None = None
    try:
        source = data.decode("utf-8-sig")
        if is_notebook(path):
            cells = notebook_python(source)
            if cells is None:
                return None
            source = cells.text
        tree = parse_quietly(source, path)
    except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = (tree, re.split(r"\r\n|\r|\n", source), cells)
    with _MEMO_LOCK:
        _RECENT_TREES.keep(key, found, len(source))
    return found


def text_stamp(path: str) -> tuple[bool, str] | None:
    """(does the file name an attribute `eval`, its text stamp); None if unreadable."""
    return _text_answer(path, _EVAL_TOKENS)


def resolve_module(
    importing_file: str,
    module: str,
    level: int,
    exists: Callable[[Path], bool] | None = None,
) -> str | None:
    """The project file that `from <level dots><module> import ...` (or `import module`)
    in importing_file names; None for anything outside the project (torch, numpy).
    `exists` says which files there are (the default: those on disk). Strings and
    os.path, not pathlib: this is asked of every import of every linted file."""
    here = str(Path(importing_file).absolute().parent)
    is_file = os.path.isfile if exists is None else lambda path: exists(Path(path))
    parts = module.split(".") if module else []
    if level:
        base = here
        for _ in range(level - 1):
            base = os.path.dirname(base)
        candidates = [base]
    else:
        root = package_root_of(here)
        # the script's folder, its package root, then the folder above that root: a
        # `tests/` or `scripts/` folder importing the repository's top-level package, as
        # it does when run from the repository root (pytest's rootdir, `python -m`)
        candidates = [here, root, os.path.dirname(root)]
        src = os.path.join(os.path.dirname(root), "src")
        if os.path.isdir(src):
            candidates.append(src)
        # a notebook or script in `tutorials/part1/` importing the repository's package,
        # as it does once the package is installed from the repository
        top = project_folder(here)
        if top is not None and top not in candidates:
            candidates.append(top)
        if top is not None and len(parts) > 1:
            # a folder between the file and its repository, outside every package, is
            # where a sub-project's scripts and tests import its package from
            # (`physicsnemo/` holding `physicsnemo/physicsnemo/` and `physicsnemo/test/`,
            # `src/lib/` put on sys.path): only for a dotted name of a package there
            # (`from physicsnemo.models.pix2pix import Pix2Pix`), since a lone name
            # (`import evaluate`, `from utils import f`) is as often a library or a
            # script's neighbour that Python never imports from there
            between: list[str] = []
            above = os.path.dirname(here)
            while above.startswith(top) and above != top:
                between.append(above)
                above = os.path.dirname(above)
            # from the repository down, the folders before the first package's: every
            # folder below it is in that package (one without __init__.py too)
            outside: list[str] = []
            for folder in reversed(between):
                if is_file(os.path.join(folder, "__init__.py")):
                    break
                outside.append(folder)
            for folder in reversed(outside):  # the nearest first
                if folder not in candidates and is_file(
                    os.path.join(folder, parts[0], "__init__.py")
                ):
                    candidates.append(folder)
    for base in candidates:
        if not parts:
            package = os.path.join(base, "__init__.py")
            if is_file(package):
                return package
            continue
        target = os.path.join(base, *parts)
        for path in (target + ".py", os.path.join(target, "__init__.py")):
            if is_file(path):
                return path
    return None


class ProjectIndex:
    """The summaries one file's imports resolve to, and what they depended on."""

    def __init__(self, path: str, enabled: bool = True) -> None:
        self.path = path
        self.enabled = enabled and path not in ("-", "", "<stdin>")
        # path of each summarised dependency -> digest of its summary
        self.dependencies: dict[str, str] = {}
        # (module, level) -> its file: each import is asked about once per call site,
        # and resolving it stats several candidate paths
        self._modules: dict[tuple[str, str, int], str | None] = {}
        self._summaries: dict[str, ModuleSummary | None] = {}  # one file state per lint
        self._parts_memo: dict[tuple[str, str], bool] = {}  # _parts_hold_parameters
        self._root: str | None = None  # where the caller searches look (project_root)
        # query key -> its calls: a lint asks about the same method again (its modes and
        # GL012's callers each ask), within the one file state a lint reads
        self._searches: dict[str, list[MethodCall] | None] = {}
        self._subclasses: dict[str, list[frozenset[int | str]] | None] = {}
        self._definitions: dict[str, list[ExternalFunction] | None] = {}
        self._attributes: dict[str, bool | None] = {}
        self._readers: dict[str, bool | None] = {}
        self._namers: dict[str, list[str] | None] = {}
        # (path, function) -> called_only_without_recording's answer
        self._covered_functions: dict[tuple[str, str], bool] = {}
        # method name -> method_runs_layers' answer
        self._layer_methods: dict[str, bool] = {}
        # (method, the call's arguments, how many names unpack its result) ->
        # methods_run_by's answer
        self._methods_run: dict[
            tuple[str, tuple[ArgumentShape, ...], int | None], list[ExternalFunction]
        ] = {}

    def _target(self, module: str, level: int, importer: str | None = None) -> str | None:
        """The project file an import in `importer` (default: the linted file) names,
        never the linted file itself."""
        if not self.enabled:
            return None
        key = (importer or self.path, module, level)
        if key not in self._modules:
            self._modules[key] = resolve_module(key[0], module, level)
        target = self._modules[key]
        if target is None or os.path.abspath(target) == os.path.abspath(self.path):
            return None
        return target

    def may_switch_to_eval(self, module: str, level: int) -> bool:
        """Could a function of that module return a model in eval mode? Not unless its
        text has an attribute `eval`: a read and a regex search instead of a summary."""
        return self._text_gate(module, level, _EVAL_TOKENS)

    def may_make_numbers(self, module: str, level: int, name: str) -> bool:
        """Could the module's function `name` make numbers of an argument? Not unless its
        text defines it as one `return` with a number maker (or the module re-exports
        with `import *`)."""
        return self._text_gate(module, level, (_NUMBER_HELPER_TOKEN, name))

    def _text_gate(
        self, module: str, level: int, tokens: tuple[str, ...], importer: str | None = None
    ) -> bool:
        """Does the module's text allow the answer a summary would give? A "no" still
        makes the module a dependency, stamped by its text, so a cached result is
        re-linted once the module changes."""
        target = self._target(module, level, importer)
        if target is None:
            return False
        if target in self._summaries:
            return True  # summarised for another question already: ask the summary
        text = _text_answer(target, tokens)
        if text is None:
            return False
        mentions, stamp = text
        if not mentions:
            self.dependencies.setdefault(target, stamp)
        return mentions

    def module_text_has(self, module: str, level: int, tokens: tuple[str, ...]) -> bool:
        """Does the project module imported as (module, level) have one of the tokens in
        its own text (its re-exports not followed)? A "no" makes it a dependency."""
        return self._text_gate(module, level, tokens)

    def imports_text_with(
        self, modules: Iterable[tuple[str, int]], tokens: tuple[str, ...]
    ) -> bool:
        """Does one of these imports (module, level) name a project module whose text has
        one of the tokens (or re-exports with `import *`)? What the engine asks before
        skipping the parse of a file without a rule's tokens when a helper elsewhere may
        do that rule's part of the work (GL012's number conversions in `utils.to_np`)."""
        tokens = (*tokens, "import *")
        return any(
            self._text_gate(module, level, tokens) or self._reexported_with(module, level, tokens)
            for module, level in modules
        )

    def _reexported_with(
        self,
        module: str,
        level: int,
        tokens: tuple[str, ...],
        importer: str | None = None,
        seen: set[str] | None = None,
    ) -> bool:
        """For a package's `__init__.py`, which re-exports by name what its modules
        define (`from .tab_mlp import TabMlp`, `from pkg.models.blocks import MLP`),
        through its subpackages' own: does the text of a module it imports from have one
        of the tokens? What a package gives is written in its modules, not in the
        `__init__.py` that names it."""
        target = self._target(module, level, importer)
        seen = set() if seen is None else seen
        if (
            target is None
            or os.path.basename(target) != "__init__.py"
            or target in seen
            or len(seen) >= _MAX_STAR_CHAIN
        ):
            return False
        seen.add(target)
        key = _memo_key(target)
        data = _text_of(key, target) if key is not None else None
        if data is None:
            return False
        for inner, inner_level in imported_modules(data.decode("utf-8", "replace")):
            if self._text_gate(
                inner, inner_level, tokens, importer=target
            ) or self._reexported_with(inner, inner_level, tokens, target, seen):
                return True
        return False

    def method_calls(self, query: MethodQuery) -> list[MethodCall] | None:
        """The project's calls of a method of the linted file's class (see method_calls).
        The result depends on every file that names the method, and on no other file
        starting to: the search itself is a dependency, redone to check a cached result."""
        if not self.enabled:
            return None
        root = self._searched_root()
        return self._recorded_search(
            self._searches, query.key(root), lambda: method_calls(query, root)
        )

    def method_calls_counting_unknown(
        self, query: MethodQuery, *, whoever_defines_it: bool = False
    ) -> tuple[MethodQuery, list[MethodCall]] | None:
        """method_calls, where a call of the method's name on an object whose class
        cannot be told counts as one of its calls, for a question every call must answer
        alike (does each pass a model? does each follow an eval switch?), with the query
        that found them (what caller_contexts is then asked). Only when no other class of
        the files linked to this one defines a method of that name (methods_named finds
        this one alone): such a call may otherwise be of the other class's method, and
        the answer stays unknown. `whoever_defines_it`: counted all the same, for a
        question that an unrelated call can only make stricter (does every call run
        under no_grad?)."""
        calls = self.method_calls(query)
        if calls is not None or not query.class_name or query.unknown_receivers:
            return (query, calls) if calls is not None else None
        if not whoever_defines_it:
            definitions = self.methods_named(query.method)
            if definitions is None or len(definitions) != 1:
                return None
        counting = dataclass_replace(query, unknown_receivers=True)
        calls = self.method_calls(counting)
        return (counting, calls) if calls is not None else None

    def _searched_root(self) -> str:
        """The project root the searches of this lint look under: the same for each."""
        if self._root is None:
            self._root = project_root(self.path)
        return self._root

    def methods_named(self, method: str) -> list[ExternalFunction] | None:
        """The methods of that name the project's classes define (method_definitions);
        None when the project is not searched. The result depends on every file whose
        text defines the name, and on no other file starting to, as a caller search's."""
        if not self.enabled:
            return None
        root = self._searched_root()
        return self._recorded_search(
            self._definitions,
            definitions_key(method, root, self.path),
            lambda: method_definitions(method, root, self.path),
        )

    def attribute_parameterless(self, attribute: str) -> bool:
        """Does every class of the project that stores a value in `self.<attribute>`
        store a torch.nn layer without parameters there, and one at least
        (attribute_parameterless)? False when the project is not searched."""
        if not self.enabled:
            return False
        root = self._searched_root()
        found: bool | None = self._recorded_search(
            self._attributes,
            attributes_key(attribute, root, self.path),
            lambda: attribute_parameterless(attribute, root, self.path),
        )
        return bool(found)

    def attribute_named_elsewhere(self, attribute: str) -> bool:
        """Does a file of the project other than the linted one, linked to it by imports,
        have the attribute's name in its text (attribute_readers)? Where an instance of
        the linted file's class goes, that file may read its `self.<attribute>`. True
        when the project cannot be searched (too large, or a text with no file)."""
        if not self.enabled:
            return True
        root = self._searched_root()
        found: bool | None = self._recorded_search(
            self._readers,
            readers_key(attribute, root, self.path),
            lambda: attribute_readers(attribute, root, self.path),
        )
        return found is not False

    def subclass_init_arguments(self, class_name: str) -> list[frozenset[int | str]] | None:
        """For each subclass the project's other files derive from the linted file's
        module-level class `class_name`, the places of the arguments its `__init__`
        hands up with `super().__init__(...)` that are modules with parameters
        (subclass_init_arguments); None when the project is not searched."""
        if not self.enabled:
            return None
        root = self._searched_root()
        return self._recorded_search(
            self._subclasses,
            subclasses_key(class_name, root, self.path),
            lambda: subclass_init_arguments(self, class_name, root, self.path),
        )

    def _recorded_search(
        self,
        answers: dict[str, _Found | None],
        key: str,
        search: Callable[[], tuple[_Found, str] | None],
    ) -> _Found | None:
        """A project-wide search asked once per lint, its stamp recorded as a dependency
        of the linted file's cached result (None: the project is too large to search, or
        the search cannot tell), with the stamp of the files under the root."""
        if key in answers:
            return answers[key]
        root = self._searched_root()
        found = search()
        self._stamp_root_files(root)
        if found is None:
            self.dependencies[unanswered_key(root)] = UNANSWERED_STAMP
            answers[key] = None
            return None
        result, digest = found
        self.dependencies[key] = search_stamp(digest)
        answers[key] = result
        return result

    def _stamp_root_files(self, root: str) -> None:
        """Records, once per lint, which files are under the searched root, each with its
        size and times: what a search's answer, or its lack of one, rests on."""
        tree = tree_key(root)
        if tree not in self.dependencies:
            # the states the lint's reads are keyed on (files_settled): the stamp is of
            # what the searches read, not of a save made since, which can only make it
            # stale
            self.dependencies[tree] = tree_stamp(root, _memo_key)

    def called_only_without_recording(self, call: MethodCall) -> bool:
        """Does every way the module-level function `call` sits in (MethodCall.within)
        runs, run under `no_grad`, so that what a call in it records by itself is not
        recorded (`def draw_figs(model, ...): samples = model.sample(100)` in utils,
        called only inside `with torch.no_grad():` in main.py)? Its calls in the project
        must all be found, none recording: every file that names it only calls it by
        its name (not handed on as a callback, a `partial`, a thread's target, an entry
        of a dict, by `getattr`, from a lambda or a generator expression, under another
        name), its own file not at all (the search leaves a file's calls of its own
        function to that file's analysis, not at hand here), each of those calls is one
        the search found, and the function is neither a generator nor a coroutine (run
        later, in whatever mode then), nor decorated, and sets no grad mode of its own.
        One level of callers: False whenever that cannot be shown."""
        name = call.within
        if not name or "." in name:
            return False
        key = (call.path, name)
        found = self._covered_functions.get(key)
        if found is None:
            found = self._covered_functions[key] = self._called_only_without_recording(
                call.path, name
            )
        return found

    def _called_only_without_recording(self, path: str, name: str) -> bool:
        query = MethodQuery(path, "", name, "", frozenset(), frozenset(), frozenset())
        callers = self.method_calls(query)
        if not callers or any(c.recording for c in callers):
            return False  # the cheap answers first: most are these
        root = self._searched_root()
        # every linked file whose text has the name: its stamp is a dependency
        naming: list[str] | None = self._recorded_search(
            self._namers,
            readers_key(name, root, path),
            lambda: _files_with(_readers_token(name), root, path),
        )
        if naming is None:
            return False
        own = os.path.realpath(path)
        found = Counter(os.path.realpath(c.path) for c in callers)
        for naming_path in naming:
            parsed = _parsed(naming_path)
            if parsed is None:
                return False  # a file that names it and does not parse may call it
            calls = _direct_calls_only(parsed[0], name)
            here = os.path.realpath(naming_path)
            if calls is None or (here == own and calls) or (here != own and calls != found[here]):
                return False
            if here == own and not _runs_when_called(parsed[0], name):
                return False
        summary = summary_of_file(path)
        function = summary.functions.get(name) if summary is not None else None
        return function is not None and not function.sets_grad_mode

    def method_calls_here(self, query: MethodQuery) -> list[MethodCall] | None:
        """The calls method_calls finds in the linted file itself, searched alone: when
        there is one (or one whose object cannot be told: None), a question that any
        call here answers (analysis.result_uses: is what a method returns read only in
        other files?) needs no other file read, parsed or searched."""
        if not self.enabled:
            return None
        return method_calls_in(query, self._searched_root(), self.path)

    def method_runs_layers(self, method: str) -> bool:
        """Is `obj.<method>(...)` a forward pass whatever the class of `obj`, as far as
        the project tells: some class of the project's files defines the method
        (methods_named, whose files are the answer's dependencies), and every definition
        with a body runs, with autograd recording, its object's layers
        (ExternalFunction.runs_own_layers) and differentiates nothing?"""
        found = self._layer_methods.get(method)
        if found is None:
            definitions = [d for d in self.methods_named(method) or () if not d.placeholder]
            # one that differentiates (an update step) needs its graph, as forward_methods
            # says of this file's classes
            found = bool(definitions) and all(
                d.runs_own_layers and not d.differentiates for d in definitions
            )
            self._layer_methods[method] = found
        return found

    def methods_run_by(
        self, method: str, args: Sequence[ArgumentShape], unpacked: int | None
    ) -> list[ExternalFunction]:
        """What `obj.<method>(...)`, called with `args` (and its result unpacked into
        `unpacked` names, if it is), may run whatever the class of `obj`, as far as the
        project tells: the definitions of that name its classes hold (methods_named)
        with a body, that take such arguments, and that hand back as many values (a
        trainer handed an agent calls `agent.fit_batch()`: any agent class's). Empty
        when none, or the project is not searched."""
        key = (method, tuple(args), unpacked)
        found = self._methods_run.get(key)
        if found is None:
            found = self._methods_run[key] = [
                d
                for d in self.methods_named(method) or ()
                if not d.placeholder
                and d.signature.admits(args, receiver_passed=True)
                # `a, b = obj.m()` cannot run a method that returns three
                and (unpacked is None or d.returned_tuple_size in (0, unpacked))
            ]
        return found

    def function(self, module: str, level: int, name: str) -> ExternalFunction | None:
        """`name` as imported `from <module> import name` (a dotted name for a method),
        defined there or re-exported by its star imports (`from .utils import *`). A
        module whose text defines no function of that name, and re-exports nothing, is
        not summarised: most calls of imported names are of classes and constants."""
        home = self._imported_function_home(module, level, name)
        return home[1] if home is not None else None

    def _imported_function_home(
        self, module: str, level: int, name: str
    ) -> tuple[str, ExternalFunction] | None:
        """(the file that defines it, its summary) of `name` as function() finds it."""
        target = self._target(module, level)
        if target is None:
            return None
        if not self._text_gate(module, level, (_DEFINES_TOKEN, name.rsplit(".", 1)[-1])):
            return None
        return self._function_home(target, name, set())

    def factory_builds_parameters(self, module: str, level: int, name: str) -> bool:
        """Is `name`, a function imported from that project module (or re-exported by
        it), a factory every return of which builds a module with weights (`def
        build_model(cfg): return Net(cfg)`, the class of its own file or imported there)?"""
        home = self._imported_function_home(module, level, name)
        return home is not None and self._factory_builds(home, set())

    def _factory_builds(
        self, home: tuple[str, ExternalFunction], seen: set[tuple[str, str]]
    ) -> bool:
        """Does every return of the factory at `home` build a class with weights of its
        file, or call another factory there that does?"""
        path, function = home
        if (path, function.name) in seen or len(seen) >= _MAX_STAR_CHAIN:
            return False
        seen.add((path, function.name))
        return bool(function.returned_classes) and all(
            self._class_in(path, built, set())
            or (
                (inner := self._function_home(path, built, set())) is not None
                and self._factory_builds(inner, seen)
            )
            for built in function.returned_classes
        )

    def builds_parameters(
        self, module: str, level: int, name: str, importer: str | None = None
    ) -> bool:
        """Is `name`, imported from that project module (or re-exported by its star
        imports) into `importer` (default: the linted file), a class whose instances hold
        torch.nn layers with weights?"""
        target = self._target(module, level, importer)
        return target is not None and self._class_in(target, name, set())

    def class_builds_parameters(self, path: str, name: str) -> bool:
        """Is `name` a class of the project file `path` (or re-exported by it) whose
        instances hold torch.nn layers with weights?"""
        return self.enabled and self._class_in(path, name, set())

    def attribute_holds_parameters(
        self, module: str, level: int, name: str, attribute: str
    ) -> bool:
        """Does `name`, a class imported from that project module, only ever build
        `self.<attribute>` as a module with weights (ModuleSummary.weighted_attributes)?"""
        home = self._class_home(module, level, name)
        if home is None:
            return False
        _, summary, name = home
        return attribute in summary.weighted_attributes.get(name, ())

    def handed_attributes(self, module: str, level: int, name: str) -> dict[str, str]:
        """{`__init__` parameter: the attribute it is kept in} of `name`, a class
        imported from that project module (ModuleSummary.handed_attributes)."""
        home = self._class_home(module, level, name)
        if home is None:
            return {}
        _, summary, name = home
        return summary.handed_attributes.get(name, {})

    def carried_state(
        self, module: str, level: int, name: str
    ) -> tuple[str, list[tuple[str, int]]] | None:
        """(its file, [(attribute, line)]) when `name`, imported from that project
        module (or re-exported by it), is a class whose forward carries attributes from
        one call to the next with their graph (module_state)."""
        home = self._class_home(module, level, name)
        if home is None:
            return None
        target, summary, name = home
        carried = summary.carried_state.get(name)
        return (target, [(attribute, line) for attribute, line in carried]) if carried else None

    def frozen_attributes(self, module: str, level: int, name: str) -> frozenset[str]:
        """The attributes ("" for the instance itself) whose parameters `name`, a class
        imported from that project module (or re-exported by it), switches off for good
        in its `__init__` (ModuleSummary.frozen_attributes)."""
        home = self._class_home(module, level, name)
        return frozenset(home[1].frozen_attributes.get(home[2], ())) if home else frozenset()

    def frozen_unless_given(self, module: str, level: int, name: str) -> dict[str, tuple[str, int]]:
        """The attributes ("" for the instance itself) that `name`, a class imported
        from that project module, switches off in its `__init__` unless it is handed
        the parameter named (ModuleSummary.frozen_unless_given)."""
        home = self._class_home(module, level, name)
        if home is None:
            return {}
        unless = home[1].frozen_unless_given.get(home[2], {})
        return {attribute: (given[0], given[1]) for attribute, given in unless.items()}

    def forward_clears_grads(self, module: str, level: int, name: str) -> bool:
        """Does `name`, a class imported from that project module (or re-exported by it,
        or brought in by a star import of it), clear its own gradients at the top of its
        `forward` (ModuleSummary.grad_clearing_forwards)?"""
        home = self._class_home(module, level, name)
        return home is not None and home[2] in home[1].grad_clearing_forwards

    def is_autograd_function(self, module: str, level: int, name: str) -> bool:
        """Is `name`, a class imported from that project module (or re-exported by it),
        a custom autograd Function (ModuleSummary.autograd_functions)?"""
        home = self._class_home(module, level, name)
        return home is not None and home[2] in home[1].autograd_functions

    def last_activation(self, module: str, level: int, name: str) -> LastActivation | None:
        """The torch.nn activation that `name`, a class imported from that project module
        (or re-exported by it), runs last on what its `forward` returns
        (ModuleSummary.last_activations)."""
        home = self._class_home(module, level, name)
        found = home[1].last_activations.get(home[2]) if home is not None else None
        return LastActivation(found[0], found[1]) if found else None

    def _class_home(
        self, module: str, level: int, name: str
    ) -> tuple[str, ModuleSummary, str] | None:
        """(the file, its summary, the name there) where `name`, imported from that
        project module, is defined: through the re-exports of packages' `__init__.py`
        (`from .model import RNDModel`)."""
        target = self._target(module, level, None)
        seen: set[str] = set()
        while target is not None and target not in seen and len(seen) < _MAX_STAR_CHAIN:
            seen.add(target)
            summary = self._summary(target)
            if summary is None:
                return None
            reexport = summary.reexports.get(name)
            if reexport is None:
                return target, summary, name
            module, level, name = reexport
            target = self._target(module, level, importer=target)
        return None

    def star_class_home(
        self, star_imports: Sequence[tuple[str, int]], name: str
    ) -> tuple[str, int] | None:
        """(module, level) of the last of the linted file's `from <module> import *`
        lines whose project module defines the class `name` at its top level: the one
        that binds it when the file runs."""
        definition = (f"class {name}",)
        for module, level in reversed(star_imports):
            if not self._text_gate(module, level, definition):
                continue
            target = self._target(module, level)
            summary = self._summary(target) if target is not None else None
            if summary is not None and name in summary.classes:
                return module, level
        return None

    def conftest_fixture_builds_parameters(self, name: str) -> bool:
        """Is `name` a function of a conftest.py in the linted file's folder or one
        above it, up to the project's root (the nearest first, as pytest looks fixtures
        up), every return of which builds a module with weights (`@pytest.fixture def
        model(): return Net()`)? Which conftest.py files there are is a question about
        the files under the root: their stamp is a dependency of the answer, so a
        conftest.py added or removed re-lints the test."""
        if not self.enabled:
            return False
        root = os.path.abspath(self._searched_root())
        self._stamp_root_files(root)
        # an answer of which files there are: it stands while the root's files do, as
        # a search's without an answer does (a conftest.py added nearer may define it)
        self.dependencies[unanswered_key(root)] = UNANSWERED_STAMP
        folder = os.path.dirname(os.path.abspath(self.path))
        while folder.startswith(root):
            conftest = os.path.join(folder, "conftest.py")
            summary = self._summary(conftest) if os.path.isfile(conftest) else None
            if summary is not None and name in summary.functions:
                return self._class_in(conftest, name, set()) or self._factory_builds(
                    (conftest, summary.functions[name]), set()
                )
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        return False

    def is_container_class(self, module: str, level: int, name: str) -> bool:
        """Is `name`, imported from that project module (or re-exported by it), a class
        deriving from a torch.nn container that its constructions fill
        (ModuleSummary.container_classes)?"""
        home = self._class_home(module, level, name)
        return home is not None and home[2] in home[1].container_classes

    def instance_holds_parameters(self, module: str, level: int, name: str) -> bool:
        """Is `name`, imported from that project module (or re-exported by it), an
        instance its top level builds once from a class with weights (`model = Net()`
        in models.py, then `from models import model`)?"""
        home = self._class_home(module, level, name)
        return home is not None and home[2] in home[1].weighted_instances

    def registry_builds_parameters(self, module: str, level: int, name: str) -> bool:
        """Is `name`, imported from that project module (or re-exported by it), a
        registry of the module's classes with weights (`MODELS = {"mlp": MLP}` in
        models.py, then `MODELS[args.model]()`)?"""
        home = self._class_home(module, level, name)
        return home is not None and home[2] in home[1].weighted_registries

    def class_mode(
        self, module: str, level: int, name: str, seen: set[tuple[str, str]] | None = None
    ) -> bool | None:
        """Does `name`, imported from that project module (or re-exported by it), depend
        on train/eval mode (analysis.mode_layers)? None when it is not a class of the
        project, or what it holds is out of sight."""
        target = self._target(module, level)
        return None if target is None else self._class_mode_in(target, name, seen or set())

    def _class_mode_in(self, target: str, name: str, seen: set[tuple[str, str]]) -> bool | None:
        # `seen`: the classes being decided, up the chain (a cycle is unknown)
        if (target, name) in seen or len(seen) > _MAX_STAR_CHAIN:
            return None
        seen.add((target, name))
        try:
            return self._decide_class_mode(target, name, seen)
        finally:
            seen.discard((target, name))

    def _decide_class_mode(self, target: str, name: str, seen: set[tuple[str, str]]) -> bool | None:
        summary = self._summary(target)
        modes = self._class_modes(target)
        if summary is None or modes is None:
            return None

        def imported(ref: str) -> bool | None:
            found = summary.reexports.get(ref)
            if found is None:
                return None
            module, level, original = found
            inner = self._target(module, level, importer=target)
            return None if inner is None else self._class_mode_in(inner, original, seen)

        parts = modes.get(name)
        if parts is not None:
            return decide(
                parts,
                lambda ref: (
                    self._class_mode_in(target, ref, seen) if ref in modes else imported(ref)
                ),
            )
        if name in summary.reexports:
            return imported(name)  # `from .lvae import LVAE` in a package's `__init__.py`
        for module, level in summary.star_imports:
            inner = self._target(module, level, importer=target)
            if inner is not None:
                found = self._class_mode_in(inner, name, seen)
                if found is not None:
                    return found
        return None

    def _class_modes(self, target: str) -> dict[str, ClassModeParts] | None:
        """What decides the mode dependence of the file's classes. Read only when asked
        (a GL016 finding is about to be reported), not with every summary, which it
        would make slower by a fifth: so the file is a dependency by its text."""
        found = class_modes_of_file(target)
        if found is None:
            return None
        modes, stamp = found
        self.dependencies[target] = stamp  # any change to the text may change a class
        return modes

    def own_mode_manager(self, name: str) -> ModeManager | None:
        """`name`, a module-level class or function of the linted file itself, as an
        eval-mode manager (read from the file's own summary, as another file's would
        be: one recipe for what a manager is)."""
        if not self.enabled:
            return None
        summary = summary_of_file(self.path)
        return summary.mode_managers.get(name) if summary is not None else None

    def mode_manager(self, module: str, level: int, name: str) -> ModeManager | None:
        """`name`, imported from that project module, as an eval-mode manager; None when
        it is none (or the module's text switches no mode at all)."""
        target = self._target(module, level)
        if target is None or not self._text_gate(module, level, _MODE_SWITCH_TOKENS):
            return None
        summary = self._summary(target)
        return summary.mode_managers.get(name) if summary is not None else None

    def _class_in(self, target: str, name: str, seen: set[str]) -> bool:
        seen.add(target)
        summary = self._summary(target)
        if summary is None:
            return False
        if name in summary.parameter_classes or name in summary.layer_factories:
            # (a part stored from another file's layer factory: `self.layers = mlp(...)`)
            return True
        parts = summary.imported_parts.get(name)
        if parts:
            return self._parts_hold_parameters(target, name, parts)
        reexport = summary.reexports.get(name)
        if reexport is not None:
            # `from .lvae import LVAE` in a package's `__init__.py`
            module, level, original = reexport
            inner = self._target(module, level, importer=target)
            if inner is not None and inner not in seen and len(seen) < _MAX_STAR_CHAIN:
                return self._class_in(inner, original, seen)
            return False
        for module, level in summary.star_imports:
            inner = self._target(module, level, importer=target)
            if inner is not None and inner not in seen and len(seen) < _MAX_STAR_CHAIN:
                if self._class_in(inner, name, seen):
                    return True
        return False

    def _parts_hold_parameters(self, target: str, name: str, parts: list[list]) -> bool:
        """Does one of the class's parts, imported from another project file, hold
        weights (ModuleSummary.imported_parts)? Memoised per class; a class asked again
        while it is being answered (parts that import each other) answers no."""
        key = (target, name)
        found = self._parts_memo.get(key)
        if found is not None:
            return found
        self._parts_memo[key] = False
        found = False
        for module, level, part in parts:
            inner = self._target(module, level, importer=target)
            if inner is not None and self._class_in(inner, part, set()):
                found = True
                break
        self._parts_memo[key] = found
        return found

    def star_names(self, star_imports: Sequence[tuple[str, int]]) -> dict[str, Origin]:
        """What the linted file's `from <module> import *` lines bind of those project
        modules' own imports (`Variable` after `from utils import *`, where utils.py has
        `from torch.autograd import Variable`), followed through their star imports in
        turn; a later star import wins, as it does when the file runs. The functions and
        classes the modules define are asked of them by name instead (star_imported)."""
        found: dict[str, Origin] = {}
        for module, level in star_imports:
            target = self._target(module, level)
            if target is not None:
                found.update(self._star_names_of(target, set()))
        return found

    def _star_names_of(self, target: str, seen: set[str]) -> dict[str, Origin]:
        seen.add(target)
        summary = self._summary(target)
        if summary is None:
            return {}
        found: dict[str, Origin] = {}
        for module, level in summary.star_imports:
            inner = self._target(module, level, importer=target)
            if inner is not None and inner not in seen and len(seen) < _MAX_STAR_CHAIN:
                found.update(self._star_names_of(inner, seen))
        for name in summary.defined_names:
            found.pop(name, None)
        for local, (module, level, name) in summary.absolute_imports.items():
            found[local] = (module, level, name)
        return star_bound(found, summary.all_names)

    def star_imported(
        self, star_imports: list[tuple[str, int]], name: str
    ) -> ExternalFunction | None:
        """A plain name the linted file's `from <module> import *` lines bring in."""
        for module, level in star_imports:
            found = self.function(module, level, name)
            if found is not None:
                return found
        return None

    def _function_home(
        self, target: str, name: str, seen: set[str]
    ) -> tuple[str, ExternalFunction] | None:
        """(the file that defines it, its summary) of `name` as `target` gives it."""
        seen.add(target)
        summary = self._summary(target)
        if summary is None:
            return None
        found = summary.functions.get(name)
        if found is not None:
            return target, found
        owner, dot, method = name.partition(".")
        if dot:
            # `Class.method` of a class the module re-exports by name (`from .lvae
            # import LVAE` in a package's `__init__.py`)
            reexport = summary.reexports.get(owner)
            if reexport is not None:
                module, level, original = reexport
                inner = self._target(module, level, importer=target)
                if inner is not None and inner not in seen and len(seen) < _MAX_STAR_CHAIN:
                    return self._function_home(inner, f"{original}.{method}", seen)
                return None
        elif name in summary.reexports:
            # `from .factory import build_model` in a package's `__init__.py`
            module, level, original = summary.reexports[name]
            inner = self._target(module, level, importer=target)
            if inner is not None and inner not in seen and len(seen) < _MAX_STAR_CHAIN:
                return self._function_home(inner, original, seen)
            return None
        for module, level in summary.star_imports:
            inner = self._target(module, level, importer=target)
            if inner is not None and inner not in seen and len(seen) < _MAX_STAR_CHAIN:
                home = self._function_home(inner, name, seen)
                if home is not None:
                    return home
        return None

    def _summary(self, target: str) -> ModuleSummary | None:
        if target not in self._summaries:
            summary = self._summaries[target] = summary_of_file(target)
            if summary is not None:
                # a summary's stamp answers every question, the text stamp's included
                self.dependencies[target] = _stamp(target, summary)
        return self._summaries[target]


def _stamp(path: str, summary: ModuleSummary) -> str:
    """`size:times:digest`: a file whose size and times are unchanged need not be read
    again to know its summary is unchanged (a warm run stays a stat per dependency)."""
    try:
        info = os.stat(path)
    except OSError:
        return file_stamp("-", "-", summary.digest())
    return file_stamp(info.st_size, stat_version(info), summary.digest())


def dependencies_unchanged(
    dependencies: dict[str, str], trees: dict[str, str] | None = None
) -> bool:
    """Do these summarised files still summarise as they did? A file touched without a
    change to what it does (a comment, a new unrelated line) still counts as unchanged.
    `trees`: the searched roots' stamps already taken by this run (stamps.tree_stamp_in)."""
    for path, stamp in dependencies.items():
        if path.startswith(TREE_PREFIX):
            continue  # the files under a searched root: their searches are asked below
        if path.startswith(UNANSWERED_PREFIX):
            # a search that gave no answer is not asked again: it stands only while
            # the files under its root are as they were
            root = path.removeprefix(UNANSWERED_PREFIX)
            if dependencies.get(tree_key(root)) != tree_stamp_in(root, trees):
                return False
            continue
        # A search's stamp is a digest of the files linked to where it was asked whose
        # text names what it looked for, with the digests of their texts: the same files,
        # unchanged, give the same answer, so only their texts are read again, not
        # searched.
        token: str | None = None
        if path.startswith(DEFINITIONS_PREFIX):
            method, root, near = definitions_of_key(path)
            token = _definitions_token(method)
        elif path.startswith(ATTRIBUTES_PREFIX):
            attribute, root, near = attributes_of_key(path)
            token = _attributes_token(attribute)
        elif path.startswith(SUBCLASSES_PREFIX):
            token, root, near = subclasses_of_key(path)  # the class's name
        elif path.startswith(READERS_PREFIX):
            attribute, root, near = readers_of_key(path)
            token = _readers_token(attribute)
        elif path.startswith(SEARCH_PREFIX):
            query, root = MethodQuery.from_key(path)
            token, near = _calls_token(query), query.class_file
        if token is not None:
            found = _files_with(token, root, near)
            if found is None or search_stamp(found[1]) != stamp:
                return False
            continue
        same = stat_matches(path, stamp)
        if same is None:
            return False
        if same:
            continue
        digest = split_stamp(stamp)[2]
        if digest.startswith(TEXT_PREFIX):
            # only its text was read: any change to the text is a change
            text = text_stamp(path)
            if text is None or text[1].rpartition(":")[2] != digest:
                return False
            continue
        summary = summary_of_file(path)
        if summary is None or summary.digest() != digest:
            return False
    return True


def affected_by(dependencies: dict[str, str], path: str) -> bool:
    """Can a change to the file at `path` change a result with these dependencies? When
    it is one of them, or lies under a folder searched for callers."""
    changed = os.path.abspath(path)
    for key in dependencies:
        if key.startswith((SEARCH_PREFIX, UNANSWERED_PREFIX)):
            if key.startswith(UNANSWERED_PREFIX):
                root = key.removeprefix(UNANSWERED_PREFIX)
            elif key.startswith(DEFINITIONS_PREFIX):
                root = definitions_of_key(key)[1]
            elif key.startswith(ATTRIBUTES_PREFIX):
                root = attributes_of_key(key)[1]
            elif key.startswith(SUBCLASSES_PREFIX):
                root = subclasses_of_key(key)[1]
            elif key.startswith(READERS_PREFIX):
                root = readers_of_key(key)[1]
            else:
                _, root = MethodQuery.from_key(key)
            if changed.startswith(os.path.join(os.path.abspath(root), "")):
                return True
        elif os.path.abspath(key) == changed:
            return True
    return False


# -- who depends on whom: files to re-lint when others change ----------------------------


def imported_project_files(
    path: str, source: str, exists: Callable[[Path], bool] | None = None
) -> set[str]:
    """The real paths of the project files whose summaries `path`'s findings can depend
    on: every module its imports resolve to, as ProjectIndex resolves them (`from m
    import n` may name module `m` or module `m.n`)."""
    found: set[str] = set()
    for module, level in imported_modules(source):
        target = resolve_module(path, module, level, exists)
        if target is not None:
            found.add(os.path.realpath(target))
    return found


def imported_modules(source: str) -> list[tuple[str, int]]:
    """(module, relative level) of every module the source's imports may name (`from m
    import n` may name module `m` or module `m.n`); [] when it does not parse."""
    modules: list[tuple[str, int]] = []
    try:
        # a large text's whole tree would cost ~250 bytes per character: in pieces
        trees = trees_in_pieces(source) if parsed_in_pieces(source) else [parse_quietly(source)]
        for tree in trees:
            modules += ast_import_map(tree).modules
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return modules


def _module_word(path: str) -> str:
    """The name an import of `path` must spell: its stem, or its package's name."""
    name = Path(path)
    return name.parent.name if name.name == "__init__.py" else name.stem


def importers(
    candidates: Iterable[str], changed: set[str], max_bytes: int = MAX_SUMMARY_BYTES
) -> set[str]:
    """The candidates (real paths) that import one of the `changed` files (real paths,
    deleted ones included): their findings depend on the summaries of those files, so
    they are linted again with them. A file that does not even contain the name of a
    changed module (or a relative import) cannot import it, and is not parsed."""
    words = {_module_word(path) for path in changed}
    words.discard("")

    def exists(path: Path) -> bool:
        return path.is_file() or os.path.realpath(path) in changed

    found: set[str] = set()
    for candidate in candidates:
        if candidate in changed:
            continue
        try:
            text = read_regular(candidate, max_bytes).decode("utf-8", errors="replace")
        except SourceReadError:
            continue
        # A relative import names its package by dots, not by name.
        if "from ." not in text and not any(word in text for word in words):
            continue
        if is_notebook(candidate):
            cells = notebook_python(text)
            text = cells.text if cells is not None else ""
        if imported_project_files(candidate, text, exists) & changed:
            found.add(candidate)
    return found


# -- who calls a method: the project's files read backwards ------------------------------


@dataclass(frozen=True)
class MethodCall:
    """A call `obj.method(...)` on an object that may be an instance of the class asked
    about, somewhere in the project."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    # A call that switches the attribute to eval mode (one of the class's methods that
    # does, or `obj.attr.eval()`) always runs before it on the same object, and nothing
    # that may switch it back runs in between or round a loop.
    after_eval: bool
    recording: bool  # not under `no_grad` / `inference_mode`
    # In a notebook: the cell (line and columns are then inside it).
    cell: CellLocation | None = None
    # (keyword, source) of each keyword argument that is a literal (`volatile=True`,
    # `train=False`, `mode="eval"`): what the caller gives those parameters
    keyword_constants: tuple[tuple[str, str], ...] = ()
    # the function of its file the call sits in: `name` for a module-level one (whose
    # callers decide its grad mode when it records by itself: `def draw_figs(model):
    # model.sample(64)`, called only under `no_grad`), `Class.name` for a method of a
    # module-level class, "" in the module's own code or a nested function
    within: str = ""


@dataclass(frozen=True)
class MethodQuery:
    """The calls of a method of a class of `class_file`, or, with `class_name` empty, of
    a module-level function of it, asked of the project's other files."""

    class_file: str
    class_name: str
    method: str
    attribute: str  # `G` for `self.G`
    evals: frozenset[str]  # the class's methods that switch it to eval mode
    resets: frozenset[str]  # those that may switch it back (or rebuild it)
    methods: frozenset[str]  # every method the class defines
    # the names of the class's base classes, theirs in its file included: `self.method()`
    # in one of them runs the class's own method on an instance of the class
    bases: frozenset[str] = frozenset()
    # every call of the method's name on an object whose class cannot be told counts as
    # one of its calls, instead of making the answer None: for a question every call
    # must answer the same way (is its result only read as numbers?), more calls only
    # make the answer stricter
    unknown_receivers: bool = False
    # the method's own parameters: a call whose arguments it cannot take (`eval=True`
    # given to `def get_action(self, state)`) is of another class's method of the name
    signature: Signature | None = None

    def key(self, root: str) -> str:
        """The dependency a search for these calls under root is recorded as."""
        fields = [self.class_file, self.class_name, self.method, self.attribute, root]
        if self.unknown_receivers:  # absent otherwise: the keys recorded before stay valid
            fields.append("unknown receivers")
        sets = [sorted(self.evals), sorted(self.resets), sorted(self.methods)]
        if self.bases or self.signature is not None:
            # absent otherwise: the keys recorded before bases stay valid
            sets.append(sorted(self.bases))
        if self.signature is not None:
            sets.append(_signature_fields(self.signature))
        return SEARCH_PREFIX + json.dumps([fields, sets])

    @classmethod
    def from_key(cls, key: str) -> tuple[MethodQuery, str]:
        fields, sets = json.loads(key[len(SEARCH_PREFIX) :])
        class_file, class_name, method, attribute, root, *flags = fields
        evals, resets, methods = (frozenset(x) for x in sets[:3])
        bases = frozenset(sets[3]) if len(sets) > 3 else frozenset()
        signature = _signature_from_fields(sets[4]) if len(sets) > 4 else None
        query = cls(
            class_file,
            class_name,
            method,
            attribute,
            evals,
            resets,
            methods,
            bases,
            unknown_receivers=bool(flags),
            signature=signature,
        )
        return query, root


def _signature_fields(signature: Signature) -> list:
    return [
        list(signature.positional),
        signature.positional_only,
        list(signature.keyword_only),
        list(signature.defaulted),
        signature.receiver,
        signature.var_positional,
        signature.var_keyword,
    ]


def _signature_from_fields(fields: list) -> Signature:
    positional, positional_only, keyword_only, defaulted, receiver, varargs, varkw = fields
    return Signature(
        tuple(positional),
        positional_only,
        tuple(keyword_only),
        tuple(defaulted),
        receiver,
        varargs,
        varkw,
    )


def _tree_memo(tree: ast.Module) -> dict:
    """Facts of one parsed file that every caller search of it asks again (its imports,
    the names it calls, what its classes store in `self`): kept on the tree itself, which
    the recent-trees cache keeps alive as long as the facts can be asked for."""
    memo = tree.__dict__.get("_gradlint_memo")
    if memo is None:
        memo = tree.__dict__["_gradlint_memo"] = {}
    return memo


@dataclass
class _TreeFacts:
    """What a caller search asks of a file, found in one walk of its tree in ast.walk's
    order (breadth first)."""

    called: frozenset[str]  # every name a call calls: `f` of `f(x)`, `m` of `a.b.m(x)`
    # called name -> ids of the scopes (the module, a function) whose own statements call
    # it; a class body's own statements are no caller's scope
    owners: dict[str, set[int]]
    # (owner, body, records by default, enclosing class) for the module and each function
    scopes: list[tuple[ast.AST, list[ast.stmt], bool, str | None]]
    classes: dict[str, list[ast.ClassDef]]  # name -> its definitions, in walk order


def _facts_of(tree: ast.Module) -> _TreeFacts:
    memo = _tree_memo(tree)
    found = memo.get("facts")
    if found is None:
        found = memo["facts"] = _walk_facts(tree)
    return found


def _walk_facts(tree: ast.Module) -> _TreeFacts:
    called: set[str] = set()
    owners: dict[str, set[int]] = {}
    scopes: list[tuple[ast.AST, list[ast.stmt], bool, str | None]] = [(tree, tree.body, True, None)]
    classes: dict[str, list[ast.ClassDef]] = {}
    imports = ast_import_map(tree)
    # Breadth first, as ast.walk: `pending` grows at its end as it is read, and
    # owner_of[i] is the id of the scope whose own statements hold pending[i] (a pair
    # per node, made by a generator per node, cost more than the rest of the step).
    pending: list[ast.AST] = [tree]
    owner_of: list[int | None] = [id(tree)]
    children_functions = _AST_CHILDREN
    for position, node in enumerate(pending):
        owner = owner_of[position]
        kind = type(node)
        inner = owner
        if kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            kind_of_func = type(func)
            name = (
                func.attr
                if kind_of_func is ast.Attribute
                else func.id
                if kind_of_func is ast.Name
                else None
            )
            if name is not None:
                called.add(name)
                if owner is not None:
                    owners.setdefault(name, set()).add(owner)
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            inner = id(node)
            scopes.append((node, node.body, _decorated_recording(node, imports), None))  # type: ignore[arg-type,attr-defined]
        elif kind is ast.ClassDef:
            inner = None
            classes.setdefault(node.name, []).append(node)  # type: ignore[attr-defined,arg-type]
            for item in node.body:  # type: ignore[attr-defined]
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    scopes.append((item, item.body, _decorated_recording(item, imports), node.name))  # type: ignore[attr-defined]
        # names, constants and operators hold none of these facts (_AST_LEAVES)
        children_of = children_functions.get(kind)
        children = children_of(node) if children_of is not None else _ast_children(node)
        if children:
            pending += children
            owner_of += [inner] * len(children)
    return _TreeFacts(frozenset(called), owners, scopes, classes)


def _called_names(tree: ast.Module) -> frozenset[str]:
    """Every name a call in the file calls: `f` of `f(x)`, `m` of `a.b.m(x)`."""
    return _facts_of(tree).called


def _owners_calling(tree: ast.Module, name: str) -> set[int]:
    """ids of the scopes (the module, a function) whose own statements call `name`."""
    return _facts_of(tree).owners.get(name, set())


def _self_attributes(tree: ast.Module, class_name: str) -> dict[str, list[ast.AST]]:
    """attribute -> the objects the class's methods store in `self.<attribute>`."""
    memo = _tree_memo(tree)
    key = ("self", class_name)
    found = memo.get(key)
    if found is None:
        found = memo[key] = {}
        for node in _facts_of(tree).classes.get(class_name, ()):
            for inner in _inner_nodes(node):
                if not isinstance(inner, ast.Assign):
                    continue
                for t in inner.targets:
                    if (
                        isinstance(t, ast.Attribute)
                        and isinstance(t.value, ast.Name)
                        and t.value.id == "self"
                    ):
                        found.setdefault(t.attr, []).append(_built_object(inner.value))
    return found


def _defines_class(tree: ast.Module, name: str) -> bool:
    """Does the module define a class of that name at its top level?"""
    return any(isinstance(node, ast.ClassDef) and node.name == name for node in tree.body)


class _CallerSearch:
    """One file read for calls of `query.method`: each is judged in its own function."""

    def __init__(
        self,
        path: str,
        tree: ast.Module,
        query: MethodQuery,
        lines: list[str],
        cells: NotebookPython | None = None,
    ) -> None:
        self.path = path
        self.query = query
        self.imports: ImportMap = ast_import_map(tree)
        self.tree = tree
        self.lines = lines  # as ast numbers them, for columns in code points
        self.cells = cells  # a notebook's: the way back to its cells

    def names_the_class(self, func: ast.AST, owner: ast.AST) -> bool:
        """Does `func` (what a constructor call in `owner`'s body calls) name the queried
        class?"""
        query = self.query
        if isinstance(func, ast.Name) and func.id == query.class_name:
            if os.path.abspath(self.path) == os.path.abspath(query.class_file):
                return True
        return self._names_from_the_file(func, owner, query.class_name)

    def names_the_function(self, func: ast.AST, owner: ast.AST) -> bool:
        """Does a call's `func` (in `owner`'s body) name the queried module-level
        function, imported from its file (`evaluate` after `from utils import evaluate`,
        `utils.evaluate`)? Calls in the function's own file are the file's own analysis."""
        return self._names_from_the_file(func, owner, self.query.method)

    def _names_from_the_file(self, func: ast.AST, owner: ast.AST, name: str) -> bool:
        """`name` imported from the queried file (`from m import name`), or an attribute
        of that module (`m.name` after `import m` or `from pkg import m`), as the imports
        of `owner` (a function, or the module) read it."""
        dotted = ast_dotted_name(func)
        if dotted is None:
            return False
        found = self.imports.target(dotted, lambda: None if owner is self.tree else owner)
        if found is None and dotted == name and self.imports.star_imports:
            return self._star_imported(name)
        return found is not None and found[2] == name and self._is_class_file(found[0], found[1])

    def names_another_files_class(self, func: ast.AST, owner: ast.AST) -> bool:
        """Does `func` name a class of the queried class's name imported from another
        file of the project? Folders of scripts side by side each hold their own
        `networks.py` with its own `Actor`, and `from networks import Actor` in one
        folder's agent names that folder's, not the queried one."""
        dotted = ast_dotted_name(func)
        if dotted is None:
            return False
        found = self.imports.target(dotted, lambda: None if owner is self.tree else owner)
        if found is None or found[2] != self.query.class_name:
            return False
        target = resolve_module(self.path, found[0], found[1])
        return target is not None and os.path.abspath(target) != os.path.abspath(
            self.query.class_file
        )

    def _star_imported(self, name: str) -> bool:
        """`from training_utils import *` brings `name` from the queried file: the file
        neither binds the name itself (a definition, an import, an assignment at module
        level) nor star-imports it from any other module (which may define it too)."""
        memo = _tree_memo(self.tree)
        bound = memo.get("module_bound")
        if bound is None:
            bound = memo["module_bound"] = (
                self.imports.names()
                | {
                    target.id
                    for node in self.tree.body
                    if isinstance(node, ast.Assign)
                    for target in node.targets
                    if isinstance(target, ast.Name)
                }
                | {
                    node.name
                    for node in self.tree.body
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                }
            )
        if name in bound:
            return False
        sources = [
            self._is_class_file(module, level) for module, level in self.imports.star_imports
        ]
        return any(sources) and self._no_other_star_defines(name)

    def _no_other_star_defines(self, name: str) -> bool:
        for module, level in self.imports.star_imports:
            if self._is_class_file(module, level):
                continue
            target = resolve_module(self.path, module, level)
            if target is None:
                continue  # a library's star import (`from torch.nn import *`)
            summary = summary_of_file(target)
            if summary is None or name in summary.functions or summary.star_imports:
                return False
        return True

    def is_the_queried_base(self, name: str) -> bool:
        """Is this file's class `name` the base of that name the queried class inherits:
        a class of the queried class's own file, or imported by that file from this one?
        Yes when that cannot be told (a star import, a base out of the project)."""
        if os.path.abspath(self.path) == os.path.abspath(self.query.class_file):
            return True
        # the caller search's own memoised reader: a notebook's code cells, read once
        parsed = _parsed(self.query.class_file)
        if parsed is None:
            return True
        tree = parsed[0]
        origin = ast_import_map(tree).origin(name)
        if origin is None:
            # the queried class's own file defines the base: this file's namesake is not it
            return not _defines_class(tree, name)
        module, level, imported = origin
        if imported is None:
            return False  # `import pkg` as a base is no class of this file
        here = os.path.abspath(self.path)
        submodule = f"{module}.{imported}" if module else imported
        for candidate in (module, submodule):  # `from . import Algorithm`: maybe a module
            target = resolve_module(self.query.class_file, candidate, level)
            if target is not None and os.path.abspath(target) == here:
                return True
        # another file that defines its own class of the name: certainly another class;
        # a package's `__init__` (a re-export) or a file out of sight may be this one
        target = resolve_module(self.query.class_file, module, level)
        parsed = _parsed(target) if target is not None else None
        return parsed is None or not _defines_class(parsed[0], imported)

    def _is_class_file(self, module: str, level: int) -> bool:
        target = resolve_module(self.path, module, level)
        return target is not None and os.path.abspath(target) == os.path.abspath(
            self.query.class_file
        )

    def calls(self) -> list[MethodCall] | None:
        """The calls of the method in this file on objects that may be instances of the
        class; None when one is on an object whose class cannot be told."""
        if self.query.method not in _called_names(self.tree):
            return []  # the file never calls anything of that name
        out: list[MethodCall] = []
        scopes = _scopes_of(self.tree)
        calling = _owners_calling(self.tree, self.query.method)
        seen: set[int] = set()
        for owner, body, recording, class_name in scopes:
            if id(owner) in seen or id(owner) not in calling:
                continue  # a scope that never calls the name holds none of its calls
            seen.add(id(owner))
            found = _ScopeCalls(self, owner, body, recording, class_name).calls()
            if found is None:
                return None
            out.extend(found)
        return out


def _scopes_of(tree: ast.Module) -> list[tuple[ast.AST, list[ast.stmt], bool, str | None]]:
    """(owner, body, records by default, enclosing class) for the module and each
    function of the file: where a caller search judges calls."""
    return _facts_of(tree).scopes


class _ScopeIndex:
    """The statements of one scope (nested functions are their own scopes) in order, with
    where each is and the calls each makes itself: the same for every method asked about,
    so made once per scope and kept on the tree."""

    def __init__(self, body: list[ast.stmt], imports: ImportMap) -> None:
        self.imports = imports  # the file's: which `with` blocks are grad-mode managers
        # statement -> (its block, its index there, the statement holding that block)
        self.place: dict[int, tuple[int, int, ast.stmt | None]] = {}
        self.order: dict[int, int] = {}
        # statements inside a block that does not record (`no_grad`, `inference_mode`)
        self.no_grad: set[int] = set()
        self.loops: dict[int, list[ast.stmt]] = {}  # statement -> loops around it
        self.statements: list[ast.stmt] = []
        self._index(body, None, False, [])
        # (statement, call) for the calls in each statement itself, in order
        self.calls: list[tuple[ast.stmt, ast.Call]] = [
            (stmt, call) for stmt in self.statements for call in _statement_calls(stmt)
        ]
        # the same, for calls of a method or attribute (`x.name(...)`), by its name
        self.attribute_calls: dict[str, list[tuple[ast.stmt, ast.Call]]] = {}
        for stmt, call in self.calls:
            if isinstance(call.func, ast.Attribute):
                self.attribute_calls.setdefault(call.func.attr, []).append((stmt, call))
        # name -> the assignments `name = ...` among the statements, in order
        self.assigned: dict[str, list[ast.Assign]] = {}
        for stmt in self.statements:
            if isinstance(stmt, ast.Assign):
                for name in {t.id for t in stmt.targets if isinstance(t, ast.Name)}:
                    self.assigned.setdefault(name, []).append(stmt)

    def _index(self, block: list[ast.stmt], holder, guarded: bool, loops: list[ast.stmt]) -> None:
        for i, stmt in enumerate(block):
            self.place[id(stmt)] = (id(block), i, holder)
            self.order[id(stmt)] = len(self.order)
            self.loops[id(stmt)] = loops
            self.statements.append(stmt)
            if guarded:
                self.no_grad.add(id(stmt))
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            inner_guard = (
                not _block_mode([i.context_expr for i in stmt.items], self.imports, not guarded)
                if isinstance(stmt, (ast.With, ast.AsyncWith))
                else guarded
            )
            inner_loops = loops + [stmt] if isinstance(stmt, (ast.For, ast.While)) else loops
            for field_name in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field_name, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    self._index(inner, stmt, inner_guard, inner_loops)
            for handler in getattr(stmt, "handlers", ()) or ():
                self._index(handler.body, stmt, inner_guard, inner_loops)
            # `torch.set_grad_enabled(False)`: the rest of the block (as _FunctionWalk._block)
            effect = _setter_effect(stmt, self.imports)
            if effect is not None:
                guarded = effect is not GradMode.RECORDING


def _scope_index(tree: ast.Module, owner: ast.AST, body: list[ast.stmt]) -> _ScopeIndex:
    memo = _tree_memo(tree)
    key = ("scope", id(owner))
    found = memo.get(key)
    if found is None:
        found = memo[key] = _ScopeIndex(body, ast_import_map(tree))
    return found


def _statement_calls(stmt: ast.stmt) -> list[ast.Call]:
    """Calls in the statement itself, not in the blocks it holds."""
    parts: list[ast.AST] = []
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        parts = [stmt.iter]
    elif isinstance(stmt, (ast.While, ast.If)):
        parts = [stmt.test]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        parts = [item.context_expr for item in stmt.items]
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try)):
        parts = []
    else:
        parts = [stmt]
    return [node for part in parts for node in _inner_nodes(part) if type(node) is ast.Call]


class _ScopeCalls:
    """The method's calls in one function (nested functions are their own scopes)."""

    def __init__(
        self,
        search: _CallerSearch,
        owner: ast.AST,
        body: list[ast.stmt],
        recording: bool,
        class_name: str | None,
    ) -> None:
        self.search = search
        self.owner = owner
        self.recording = recording
        self.class_name = class_name
        scope = _scope_index(search.tree, owner, body)
        self.scope = scope
        self._within_name: str | None = None  # _within's answer
        self.place = scope.place
        self.order = scope.order
        self.no_grad = scope.no_grad
        self.loops = scope.loops
        self.statements = scope.statements

    def _dominates(self, first: ast.stmt, then: ast.stmt) -> bool:
        block, index, _ = self.place[id(first)]
        current: ast.stmt | None = then
        while current is not None:
            inner_block, inner_index, holder = self.place[id(current)]
            if inner_block == block:
                return inner_index > index
            current = holder
        return False

    def calls(self) -> list[MethodCall] | None:
        query = self.search.query
        out: list[MethodCall] = []
        signature = query.signature
        if not query.class_name:
            for stmt, call in self.scope.calls:
                if self.search.names_the_function(call.func, self.owner):
                    out.append(self._judge(call, stmt, ""))
            return out
        for stmt, call in self.scope.attribute_calls.get(query.method, ()):
            if signature is not None and not signature.admits(
                ast_shape_of(call), receiver_passed=True
            ):
                continue  # it could not run the method: another class's of that name
            receiver = cast(ast.Attribute, call.func).value
            if isinstance(receiver, ast.Name):
                name = receiver.id
                kind = self._receiver_kind(name)
            elif (
                isinstance(receiver, ast.Attribute)
                and isinstance(receiver.value, ast.Name)
                and receiver.value.id == "self"
            ):
                name = f"self.{receiver.attr}"
                kind = self._self_attribute_kind(receiver.attr)
            else:
                name, kind = "", None  # `self.agent.policy.run()`: whose it is cannot be told
            if kind is None:
                if not query.unknown_receivers:
                    return None
                kind = True
            if not kind:
                continue  # another class's method of the same name
            out.append(self._judge(call, stmt, name))
        return out

    def _self_attribute_kind(self, attr: str) -> bool | None:
        """`self.actor.act(s)`: what the caller's class stores in `self.actor`, in any of
        its methods (`self.actor = Actor(...).to(device)`). True: may be an instance of
        the queried class; False: is not; None: cannot tell."""
        if self.class_name is None:
            return None
        values = _self_attributes(self.search.tree, self.class_name).get(attr, [])
        if not values:
            return None  # set out of sight: by a caller, a base class, setattr
        return self._kind_of_built(values)

    def _receiver_kind(self, name: str) -> bool | None:
        """True: may be an instance of the class; False: is not; None: cannot tell."""
        if name in ("self", "cls"):
            query = self.search.query
            if self.class_name is None:
                return None
            if self.class_name == query.class_name:
                return None  # the class calling its own method: its entry state is its own
            if self.class_name in query.bases:
                if not self.search.is_the_queried_base(self.class_name):
                    # a namesake of the base in another module (two packages' own
                    # `BasicInstructor`): its `self.method()` never runs the queried one
                    return False
                # a base class calling the method on itself: on an instance of the
                # queried class that is its override, unless that class overrides the
                # calling method too (then this one never runs on it)
                owner = self.owner
                return not (
                    isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and owner.name in query.methods
                )
            return self._class_bases_unrelated()
        constructors = [stmt.value for stmt in self.scope.assigned.get(name, ())]
        if not constructors:
            if self._imported_module(name):
                return False  # `metrics.evaluate(...)`: a module's function
            return None  # a parameter or a global: built out of sight
        kind = self._kind_of_built(constructors)
        if kind is False and self._is_parameter(name):
            return None  # rebound from what the caller passed in: `model = model.to(d)`
        return kind

    def _imported_module(self, name: str) -> bool:
        """Is `name` a module the file imports whole (`import metrics`), and no
        parameter of the scope that shadows it?"""
        origin = self.scope.imports.origin(name)
        return origin is not None and origin[2] is None and not self._is_parameter(name)

    def _kind_of_built(self, values: Sequence[ast.AST]) -> bool | None:
        """What the values bound to a receiver build: True when one may be an instance of
        the class, False when every one is a constant or another class's instance, None
        otherwise (`m = make_model()`, `m = m.to(device)`: may be an instance)."""
        built = [_built_object(v) for v in values]
        if any(
            isinstance(v, ast.Call) and self.search.names_the_class(v.func, self.owner)
            for v in built
        ):
            return True
        if all(isinstance(v, ast.Constant) or self._other_class(v) for v in built):
            return False
        return None

    def _is_parameter(self, name: str) -> bool:
        owner = self.owner
        if not isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        args = owner.args
        return name in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}

    def _other_class(self, value: ast.AST) -> bool:
        """`Trainer(...)`, `models.Critic(...)`: by its name, an instance of a class other
        than the queried one; this file's own class of the queried class's name is one."""
        if not isinstance(value, ast.Call):
            return False
        name = ast_dotted_name(value.func)
        last = name.rsplit(".", 1)[-1] if name else ""
        if not last[:1].isupper():
            return False
        if last != self.search.query.class_name:
            return True
        # the queried class's name, but this file's own class of that name (sac.py's
        # `Actor` beside networks.py's), or one imported from another project file
        if self.search.names_another_files_class(value.func, self.owner):
            return True
        return (
            isinstance(value.func, ast.Name)
            and not self.search.names_the_class(value.func, self.owner)
            and last in _facts_of(self.search.tree).classes
        )

    def _class_bases_unrelated(self) -> bool | None:
        assert self.class_name is not None
        for node in _facts_of(self.search.tree).classes.get(self.class_name, ()):
            if any(
                ast_dotted_name(b)
                and (ast_dotted_name(b) or "").split(".")[-1] == self.search.query.class_name
                for b in node.bases
            ):
                return None
        return False

    def _judge(self, call: ast.Call, stmt: ast.stmt, receiver: str) -> MethodCall:
        evals: list[ast.stmt] = []
        # a new object (`name = ...`); only the order of these statements is read
        resets: list[ast.stmt] = list(self.scope.assigned.get(receiver, ()))
        rebinding = {id(other) for other in resets}
        query = self.search.query
        # only these methods can switch the mode (see _effect)
        for method in query.evals | query.resets | MODULE_MODE_METHODS:
            for other, inner in self.scope.attribute_calls.get(method, ()):
                if id(other) in rebinding:
                    continue
                effect = self._effect(inner, receiver)
                if effect is True:
                    evals.append(other)
                elif effect is False:
                    resets.append(other)
        at = self.order[id(stmt)]
        dominating = [e for e in evals if self.order[id(e)] < at and self._dominates(e, stmt)]
        after_eval = False
        if dominating:
            last = max(self.order[id(e)] for e in dominating)
            loops = self.loops[id(stmt)]
            after_eval = not any(
                last < self.order[id(r)] < at
                or (self.order[id(r)] > last and any(_holds(loop, r) for loop in loops))
                for r in resets
            )
        end_line = call.end_lineno or call.lineno
        lines = self.search.lines
        start = Position(call.lineno, _code_points(lines, call.lineno, call.col_offset))
        end_column = call.end_col_offset or call.col_offset
        end = Position(end_line, _code_points(lines, end_line, end_column))
        cell = None
        if self.search.cells is not None:
            start, end, cell = self.search.cells.span(
                start.line, start.column, end.line, end.column
            )
        return MethodCall(
            self.search.path,
            start.line,
            start.column,
            end.line,
            end.column,
            after_eval,
            self.recording and id(stmt) not in self.no_grad,
            cell,
            _keyword_constants(call),
            self._within(),
        )

    def _within(self) -> str:
        """MethodCall.within of the calls of this scope, found once for them all."""
        if self._within_name is None:
            self._within_name = ""
            owner = self.owner
            if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for stmt in self.search.tree.body:
                    if stmt is owner:
                        self._within_name = owner.name
                        break
                    if isinstance(stmt, ast.ClassDef) and any(i is owner for i in stmt.body):
                        self._within_name = f"{stmt.name}.{owner.name}"
                        break
        return self._within_name

    def _effect(self, call: ast.Call, receiver: str) -> bool | None:
        """True: the call switches the attribute to eval mode on the receiver; False: it
        may switch it back; None: neither."""
        query = self.search.query
        func = call.func
        if not isinstance(func, ast.Attribute):
            return None
        target = _switched_receiver(call) if _mode_switch(call) is not None else None
        if target is None:
            target = ast_dotted_name(func.value)
        method = func.attr
        if target == receiver:
            if method in query.evals:
                return True
            if method in query.resets:
                return False
            if method not in query.methods:
                return _mode_switch(call)  # the module's own switch, for all its layers
            return None
        if target == f"{receiver}.{query.attribute}":
            return _mode_switch(call)
        return None


def _built_object(value: ast.AST) -> ast.AST:
    """The constructor call under method calls that return the object itself:
    `Actor(...).to(device)`, `Net().cuda().float()`."""
    while (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in SELF_RETURNING_MODULE_METHODS
        and isinstance(value.func.value, ast.Call)
    ):
        value = value.func.value
    return value


def _holds(loop: ast.stmt, stmt: ast.stmt) -> bool:
    return any(node is stmt for node in _walk_ast(loop))


def _keyword_constants(call: ast.Call) -> tuple[tuple[str, str], ...]:
    """(keyword, source) of the call's keyword arguments that are literals."""
    found = []
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg is not None and isinstance(value, ast.Constant):
            found.append((keyword.arg, repr(value.value)))
    return tuple(found)


def method_calls(query: MethodQuery, root: str) -> tuple[list[MethodCall], str] | None:
    """Every call of `query.method` in the project's files on an object that may be an
    instance of the class, and a stamp of where they were looked for (the files linked to
    the class's file by imports whose text names the method, with the digests of their texts);
    None when one of them is on an object whose class cannot be told, or the project is
    too large to search."""
    found = _files_naming(_calls_token(query), root, query.class_file)
    if found is None:
        return None
    naming, digest = found
    # One file with a call whose object cannot be told makes the answer None, whichever
    # file it is: the files already parsed are searched first, so that such an answer
    # (the common one) seldom parses another file.
    found_in: dict[str, list[MethodCall]] = {}
    for path, key in sorted(naming, key=lambda named: not _tree_at_hand(*named)):
        calls = _file_calls(query, path, key)
        if calls is None:
            return None
        found_in[path] = calls
    return [call for path, _ in naming for call in found_in.get(path, ())], digest


def definitions_key(method: str, root: str, near: str) -> str:
    """The dependency a search for the definitions of `method` under root, from the
    file `near`, is recorded as."""
    return DEFINITIONS_PREFIX + json.dumps([method, root, near])


def definitions_of_key(key: str) -> tuple[str, str, str]:
    # a key recorded before searches had an asking file: the root, which is no file, so
    # every file is searched as then
    method, root, *near = json.loads(key[len(DEFINITIONS_PREFIX) :])
    return method, root, near[0] if near else root


def method_definitions(
    method: str, root: str, near: str
) -> tuple[list[ExternalFunction], str] | None:
    """The summaries of every method `method` of a class in the project's files linked to
    `near` by imports (`def test(self, z)` in a class of `models/`), and a stamp of where
    they were looked for (the files whose text defines the name, with the digests of their texts);
    None when the project is too large to search. What a call of that name in `near` on
    an object whose class cannot be told may run."""
    found = _files_with(_definitions_token(method), root, near)
    if found is None:
        return None
    paths, digest = found
    functions = [function for path in paths for function in _methods_of_file(path, method)]
    return functions, digest


# memo key -> the file's classes summarised for method searches so far
_METHODS_MEMO: dict[MemoKey, SummarisedClasses] = {}


def _methods_of_file(path: str, method: str) -> list[ExternalFunction]:
    """The summaries of the methods `method` of the file's classes: from its summary
    when one is made already, else from summarise_methods_named's, memoised like
    summaries; [] if unreadable."""
    key = _memo_key(path)
    if key is None:
        return []
    with _MEMO_LOCK:
        summary = _MEMO.get(key)
        done = _METHODS_MEMO.get(key, SummarisedClasses())
    if summary is not None:
        return [function for _, function in _methods_named(summary.functions, method)]
    data = _text_of(key, path)
    try:
        source = data.decode("utf-8-sig") if data is not None else None
    except UnicodeDecodeError:
        source = None
    if source is None:
        return []
    found = summarise_methods_named(source, path, method, done)
    if found is not done:
        with _MEMO_LOCK:
            _METHODS_MEMO[key] = found
    return found.methods_named(method)


def _calls_token(query: MethodQuery) -> str:
    """What a file's text must hold to call the queried method (method_calls)."""
    return f".{query.method}(" if query.class_name else f"{query.method}("


def _definitions_token(method: str) -> str:
    """What a file's text must hold to define a method of that name (method_definitions)."""
    return f"def {method}("


def _attributes_token(attribute: str) -> str:
    """What a file's text must hold to store `self.<attribute>` (attribute_parameterless)."""
    return f"self.{attribute}"


def _files_with(token: str, root: str, near: str) -> tuple[list[str], str] | None:
    """The project's files linked to `near` by imports whose text has `token`, and a
    stamp of where it was looked for (those files, with the digests of their texts); None when the
    project is too large to search."""
    found = _files_naming(token, root, near)
    if found is None:
        return None
    naming, digest = found
    return [path for path, _ in naming], digest


def _files_naming(token: str, root: str, near: str) -> tuple[list[tuple[str, MemoKey]], str] | None:
    """(path, memo key) of the project's files linked to `near` by imports
    (_linked_files) whose text has `token`, and a digest of those files with the digests
    of their texts: the same files, unchanged, give a search the same answer. None when the
    project is too large to search."""
    files = project_files(root)
    if files is None:
        return None
    keyed = [(path, _memo_key(path)) for path in files]  # one stat of each file a search
    linked = _linked_files(near, root, keyed)
    naming: list[tuple[str, MemoKey]] = []
    stamps: list[str] = []
    for path, key in keyed:
        if key is None or (linked is not None and path not in linked):
            continue
        text = _text_answer(path, (token,), key)
        if text is None or not text[0]:
            continue
        naming.append((path, key))
        # the text's digest, not its times: a file touched (a checkout) searches alike
        stamps.append(f"{path}={split_stamp(text[1])[2]}")
    return naming, hashlib.sha256("\n".join(stamps).encode()).hexdigest()[:16]


# -- which files' objects can meet: the project's files linked by imports ---------------

# Every word an import line names may be a project module's: `from pkg.mod import a, b`
# (pkg, mod, a, b), `import a.b as c`, a notebook's `%run script.py`. Read off the lines
# that start so; a word too many only links more files.
_IMPORT_LINE = re.compile(
    r"[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([\w., \t]*)"
    r"|import[ \t]+([\w., \t]+)"
    r"|%run[ \t]+(?:-\w+[ \t]+)*([\w./-]+))"
)
_WORD = re.compile(r"\w+")
# A call that hands back an object of any class, not one whose weights go straight into
# `load_state_dict(...)`: the file may hold an instance of any class of the project.
_LOADS_OBJECTS = re.compile(
    r"(?<!load_state_dict\()\b(?:"
    + "|".join(re.escape(name) for name in sorted(OBJECT_LOADERS))
    + r")\("
)


@dataclass(frozen=True)
class _ImportWords:
    """What a file's text says of the project files it can meet objects of."""

    words: frozenset[str]  # every name its imports spell
    loads_objects: bool  # it unpickles or imports by name (_LOADS_OBJECTS)


# memo key -> the file's _ImportWords
_IMPORT_WORDS_MEMO: dict[MemoKey, _ImportWords] = {}
# root -> (the (path, memo key) of its files, each file's linked files)
_LINKED_MEMO: dict[str, tuple[list[tuple[str, MemoKey | None]], dict[str, frozenset[str]]]] = {}


def _code_cells_as_written(text: str, path: str) -> str:
    """A notebook's code cells (ipynb.read_notebook), one after another, magics and all
    (`%run script.py`); "" for text that is not a notebook of a Python kernel."""
    try:
        notebook = read_notebook(text, path)
    except (SourceError, NotebookSkipped):
        return ""
    return "\n".join(cell.source for cell in notebook.cells if cell.is_code)


def _import_words(path: str, key: MemoKey) -> _ImportWords:
    """The names the file's imports spell (its modules, their packages, the names
    imported from them; for a relative import the package it starts from), and whether
    it loads objects of classes it does not import."""
    with _MEMO_LOCK:
        found = _IMPORT_WORDS_MEMO.get(key)
    if found is not None:
        return found
    data = _text_of(key, path)
    text = data.decode("utf-8", errors="replace") if data is not None else ""
    if is_notebook(path):
        text = _code_cells_as_written(text, path)
    words: set[str] = set()
    loads = False
    for line in text.splitlines():
        # most lines hold neither: a substring test costs a tenth of a regex's scan
        if not loads and ("load" in line or "import_module" in line):
            loads = _LOADS_OBJECTS.search(line) is not None
        if "import" not in line and "%run" not in line:
            continue
        match = _IMPORT_LINE.match(line)
        if match is None:
            continue
        dots, module, names, plain, script = match.groups("")
        words.update(_WORD.findall(module), _WORD.findall(names), _WORD.findall(plain))
        if dots:
            parents = Path(path).absolute().parents  # `from ...` above the root: the root
            words.add(parents[min(len(dots), len(parents)) - 1].name)
        if script:
            words.add(Path(script).stem)
    found = _ImportWords(frozenset(words), loads)
    with _MEMO_LOCK:
        _IMPORT_WORDS_MEMO[key] = found
    return found


def linked_files(near: str, root: str) -> frozenset[str] | None:
    """The files of the project under root whose objects can meet those of `near`
    (_linked_files); None when the project is too large to search or `near` is not one
    of its files."""
    files = project_files(root)
    if files is None:
        return None
    return _linked_files(near, root, [(path, _memo_key(path)) for path in files])


def _linked_files(
    near: str, root: str, keyed: list[tuple[str, MemoKey | None]]
) -> frozenset[str] | None:
    """The project's files (paths as project_files gives them) whose objects can meet
    those of `near`: an object of a class is made where its module is imported, and
    handed only to code that such a file imports, so a caller of a method (or an object
    of unknown class calling it) is in a file linked to the class's file by a chain of
    imports, in either direction. A folder of training scripts that import nothing of
    each other is that many projects. A conftest.py hands its fixtures to every test
    under its folder. A file that unpickles objects (`model = torch.load(path)`) may
    hold any class's, and hand them to what it imports: its files are linked to every
    file. None when `near` is not one of the files (then all are linked)."""
    with _MEMO_LOCK:
        memo = _LINKED_MEMO.get(root)
    if memo is None or memo[0] != keyed:
        memo = (keyed, _import_links(keyed))
        with _MEMO_LOCK:
            _LINKED_MEMO[root] = memo
    return memo[1].get(os.path.abspath(near))


def _import_links(keyed: list[tuple[str, MemoKey | None]]) -> dict[str, frozenset[str]]:
    """Each file's (by absolute path) set of the files linked to it by imports: the
    files whose module name (_module_word) some import of one names, joined in both
    directions and transitively."""
    parent = {path: path for path, _ in keyed}

    def root_of(path: str) -> str:
        while parent[path] != path:
            parent[path] = parent[parent[path]]
            path = parent[path]
        return path

    def join(one: str, other: str) -> None:
        first, second = root_of(one), root_of(other)
        if first != second:
            parent[first] = second

    by_word: dict[str, list[str]] = {}
    for path, _ in keyed:
        by_word.setdefault(_module_word(path), []).append(path)
    loaders: list[str] = []  # the files that unpickle objects or import by name
    for path, key in keyed:
        if key is None:
            continue
        said = _import_words(path, key)
        if said.loads_objects:
            loaders.append(path)
        for word in said.words:
            for other in by_word.get(word, ()):
                join(path, other)
        if os.path.basename(path) == "conftest.py":
            folder = os.path.join(os.path.dirname(path), "")
            for other, _ in keyed:
                if other.startswith(folder):
                    join(path, other)
    groups: dict[str, set[str]] = {}
    for path, _ in keyed:
        groups.setdefault(root_of(path), set()).add(path)
    # the files an unpickled object may reach, whatever its class: not joined to each
    # other's groups through it, which would make one group of a folder of scripts
    loading: set[str] = set()
    for path in loaders:
        loading |= groups[root_of(path)]
    frozen = {top: frozenset(members | loading) for top, members in groups.items()}
    return {os.path.abspath(path): frozen[root_of(path)] for path, _ in keyed}


def _summaries_with(token: str, root: str, near: str) -> tuple[list[ModuleSummary], str] | None:
    """The summaries of the project's files linked to `near` whose text has `token`, and
    a stamp of where it was looked for (_files_with); None when the project is too large
    to search."""
    found = _files_with(token, root, near)
    if found is None:
        return None
    paths, digest = found
    summaries = [summary for path in paths if (summary := summary_of_file(path)) is not None]
    return summaries, digest


def subclasses_key(class_name: str, root: str, near: str) -> str:
    """The dependency a search for the subclasses of `near`'s class under root is
    recorded as."""
    return SUBCLASSES_PREFIX + json.dumps([class_name, root, near])


def subclasses_of_key(key: str) -> tuple[str, str, str]:
    class_name, root, near = json.loads(key[len(SUBCLASSES_PREFIX) :])
    return class_name, root, near


def subclass_init_arguments(
    project: ProjectIndex, class_name: str, root: str, near: str
) -> tuple[list[frozenset[int | str]], str] | None:
    """For each module-level class of the project's other files linked to `near` (the
    files whose text names the class) that derives from `near`'s class `class_name`: the
    places of the arguments its `__init__`'s one `super().__init__(...)` hands up that
    are modules with parameters (CallerContext.model_arguments), empty when it hands up
    none, or has no `__init__` of its own, or calls the base's another way. A base
    class's method that runs `self.model` runs what its subclasses hand it
    (`super().__init__(QNet())` in agent.py for `BaseAgent` in base.py). With a stamp of
    where it was looked for; None when the project is too large to search."""
    found = _files_naming(class_name, root, near)
    if found is None:
        return None
    naming, digest = found
    query = MethodQuery(near, "", class_name, "", frozenset(), frozenset(), frozenset())
    places: list[frozenset[int | str]] = []
    for path, key in naming:
        if os.path.abspath(path) == os.path.abspath(near):
            continue  # the class's own file: its analysis reads its subclasses itself
        parsed = _parsed(path, key)
        if parsed is None:
            continue
        tree, lines, cells = parsed
        search = _CallerSearch(path, tree, query, lines, cells)
        for cls in tree.body:
            if not isinstance(cls, ast.ClassDef) or not any(
                search.names_the_function(base, tree) for base in cls.bases
            ):
                continue
            init = own_method(cls, "__init__")
            handed_up = (
                [c for c in _walk_ast(init) if isinstance(c, ast.Call) and _calls_super_init(c)]
                if init
                else []
            )
            if len(handed_up) != 1:
                places.append(frozenset())
                continue
            places.append(
                _model_arguments(
                    handed_up[0],
                    _parents(tree),
                    tree,
                    functools.partial(_builds_from, project, path),
                    ast_import_map(tree),
                    functools.partial(project.class_builds_parameters, path),
                )
            )
    return places, digest


def _calls_super_init(node: ast.Call) -> bool:
    """`super().__init__(...)` (or `super(Cls, self).__init__(...)`)."""
    return (
        isinstance(node.func, ast.Attribute)
        and node.func.attr == "__init__"
        and isinstance(node.func.value, ast.Call)
        and isinstance(node.func.value.func, ast.Name)
        and node.func.value.func.id == "super"
    )


def attributes_key(attribute: str, root: str, near: str) -> str:
    """The dependency a search for what the project stores in `self.<attribute>` under
    root, from the file `near`, is recorded as."""
    return ATTRIBUTES_PREFIX + json.dumps([attribute, root, near])


def attributes_of_key(key: str) -> tuple[str, str, str]:
    attribute, root, *near = json.loads(key[len(ATTRIBUTES_PREFIX) :])  # as definitions'
    return attribute, root, near[0] if near else root


def attribute_parameterless(attribute: str, root: str, near: str) -> tuple[bool, str] | None:
    """Does some class of the project's files linked to `near` store a value in
    `self.<attribute>`, and is every such value a torch.nn layer that holds no
    parameters? With a stamp of where it was looked for; None when the project is too
    large to search. What `model.<attribute>(x)` in `near` on a model whose class cannot
    be told may run."""
    found = _summaries_with(_attributes_token(attribute), root, near)
    if found is None:
        return None
    summaries, digest = found
    verdicts = {
        summary.parameterless_attributes[attribute]
        for summary in summaries
        if attribute in summary.parameterless_attributes
    }
    return verdicts == {True}, digest


def _readers_token(attribute: str) -> str:
    """What a file's text must hold to read `<object>.<attribute>` (attribute_readers):
    the name itself, which `getattr(agent, "q_history")` and `vars(agent)["q_history"]`
    have too."""
    return attribute


def readers_key(attribute: str, root: str, near: str) -> str:
    """The dependency a search for the files under root, linked to `near`, whose text
    has the attribute's name is recorded as."""
    return READERS_PREFIX + json.dumps([attribute, root, near])


def readers_of_key(key: str) -> tuple[str, str, str]:
    attribute, root, near = json.loads(key[len(READERS_PREFIX) :])
    return attribute, root, near


def attribute_readers(attribute: str, root: str, near: str) -> tuple[bool, str] | None:
    """Does a project file linked to `near`, other than `near` itself, have the
    attribute's name in its text? With a stamp of where it was looked for; None when the
    project is too large to search."""
    found = _files_with(_readers_token(attribute), root, near)
    if found is None:
        return None
    paths, digest = found
    own = os.path.abspath(near)
    return any(os.path.abspath(path) != own for path in paths), digest


def _direct_calls_only(tree: ast.Module, name: str) -> int | None:
    """How many calls `name(...)` or `<module>.name(...)` the file makes, not deferred
    (outside a lambda or a generator expression), when those are all its uses of it (an
    import of it under its own name aside); None when it hands it on or renames it:
    `partial(name, ...)`, `Thread(target=name)`, `{"k": name}`, `m.name` uncalled,
    `getattr(m, "name")`, `import ... as other`. An attribute of that name on an object
    no import binds (`args.draw_figs`) and a string elsewhere (`__all__`) are another
    matter."""
    origins = ast_import_map(tree).origins()
    for local, (module, _level, imported) in origins.items():
        if local != name and (imported or module.rpartition(".")[2]) == name:
            return None  # `from utils.draw import draw_figs as show`
    called: set[int] = set()
    deferred: set[int] = set()
    for node in _walk_ast(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Name) and func.id == name) or (
                isinstance(func, ast.Attribute) and func.attr == name
            ):
                called.add(id(func))
            elif isinstance(func, ast.Name) and func.id in ("getattr", "hasattr"):
                if any(isinstance(a, ast.Constant) and a.value == name for a in node.args):
                    return None
        elif isinstance(node, (ast.Lambda, ast.GeneratorExp)):
            deferred.update(id(inner) for inner in _walk_ast(node))
    calls = 0
    for node in _walk_ast(tree):
        if isinstance(node, ast.Attribute):
            if node.attr != name:
                continue
            root = ast_dotted_name(node.value)
            if id(node) not in called and (root is None or root.split(".")[0] not in origins):
                continue  # `args.draw_figs`: some object's attribute
        elif not (isinstance(node, ast.Name) and node.id == name):
            continue
        if id(node) not in called or id(node) in deferred:
            return None
        calls += 1
    return calls


def _runs_when_called(tree: ast.Module, name: str) -> bool:
    """Is the module-level function `name` of the file one whose body runs when it is
    called, in the caller's grad mode: not a generator or a coroutine, and not decorated
    (a decorator may hand it to a registry, or wrap it in a mode of its own)?"""
    for stmt in tree.body:
        if type(stmt) is ast.FunctionDef and stmt.name == name:
            return not stmt.decorator_list and not any(
                isinstance(inner, (ast.Yield, ast.YieldFrom, ast.Await))
                for inner in _own_nodes(stmt)
            )
    return False


def _file_calls(query: MethodQuery, path: str, key: MemoKey) -> list[MethodCall] | None:
    """The calls method_calls finds in one file that names the method ([] for a file it
    cannot read or parse); None when one is on an object whose class cannot be told."""
    parsed = _parsed(path, key)
    if parsed is None:
        return []
    tree, lines, cells = parsed
    return _CallerSearch(path, tree, query, lines, cells).calls()


def method_calls_in(query: MethodQuery, root: str, path: str) -> list[MethodCall] | None:
    """What method_calls(query, root) finds in the file at `path` ([] when the search
    would not read it: outside root's files, or its text never names the method); None
    when one of its calls is on an object whose class cannot be told, and then so is
    the whole search's answer."""
    files = project_files(root)
    if files is None:
        return None  # too large to search: method_calls answers None
    target = os.path.abspath(path)
    searched = next((f for f in files if os.path.abspath(f) == target), None)
    if searched is None:
        return []
    if target != os.path.abspath(query.class_file):
        linked = linked_files(query.class_file, root)
        if linked is not None and searched not in linked:
            return []
    token = _calls_token(query)
    key = _memo_key(searched)
    text = _text_answer(searched, (token,), key) if key is not None else None
    if text is None or not text[0]:
        return []
    return _file_calls(query, searched, cast(MemoKey, key))


# -- how often the calls found run: the context of each, for gradlint.analysis.impact -----


@dataclass(frozen=True)
class EnclosingLoop:
    """A loop around a call the caller search found, as its header reads."""

    header: str | None  # `target iter` of a `for` loop; None for a `while` loop
    differentiates: bool  # its body calls backward(), autograd.grad or an optimizer's step
    # the call sits under an `if` whose test has a `%` (`if step % 100 == 0:`), inside
    # this loop
    periodic: bool = False
    # the loops in its body that do not hold the call (their own `beside` left empty)
    beside: tuple[EnclosingLoop, ...] = ()


@dataclass(frozen=True)
class CallerContext:
    """Where one call of a function found in the project's other files runs: what it
    takes to tell how often it runs (gradlint.analysis.impact decides)."""

    call: MethodCall
    loops: tuple[EnclosingLoop, ...]  # innermost first, inside the caller's function
    function: str | None  # the function around the call; None at module level
    test_function: bool  # a pytest function: `test*` at module level or in a `Test*` class
    file_has_tests: bool  # the file defines `test*` functions or imports pytest or unittest
    # the call's result is only read as numbers there (summary_facts.ResultUse: `.data`
    # saved as an image, `.item()`), and nothing can use its graph
    numbers_only: bool = False
    # the arguments that are modules with parameters in the caller's scope, by position
    # (positional ones before any `*args`) and by keyword: a name whose `.parameters()`
    # is asked for, whose gradients are cleared, whose weights are loaded or whose mode
    # is switched there (`generate_image(aG, z)` after `Adam(aG.parameters())`)
    model_arguments: frozenset[int | str] = frozenset()
    # the arguments that are a dict, list or tuple written out in the caller's scope,
    # every element of which is such a module (`evaluate(models, loader)` after
    # `models = {"G": G}` and `Adam(G.parameters())`)
    model_containers: frozenset[int | str] = frozenset()


def _recently_parsed(path: str) -> tuple[ast.Module, list[str], NotebookPython | None] | None:
    """The tree the search just parsed for a file it found calls in (_parsed's memo), or
    None when it is no longer among the recently parsed ones: never parsed anew here."""
    key = _memo_key(path)
    if key is None:
        return None
    with _MEMO_LOCK:
        return _RECENT_TREES.get(key)


def caller_contexts(project: ProjectIndex, query: MethodQuery) -> list[CallerContext] | None:
    """The project's calls of the queried function (ProjectIndex.method_calls, recorded as
    the same dependency), each with its context; None when the calls cannot be told, or
    one of them is in a file whose tree is no longer among the recently parsed ones: the
    trees just parsed by the search are read again, never a file parsed anew."""
    calls = project.method_calls(query)
    if calls is None:
        return None
    found: list[CallerContext] = []
    for call in calls:
        parsed = _recently_parsed(call.path)
        if parsed is None:
            return None
        context = _context_of(
            call,
            query.method,
            *parsed,
            builds=functools.partial(_builds_from, project, call.path),
            builds_here=functools.partial(project.class_builds_parameters, call.path),
        )
        if context is None:
            return None
        found.append(context)
    return found


def _located_calls(
    project: ProjectIndex, query: MethodQuery
) -> Iterator[tuple[MethodCall, ast.Call, ast.Module, NotebookPython | None] | None]:
    """Each of the project's calls of the queried function with its node in the tree
    the search just parsed (and its notebook's cells, if any), in order; a None, then
    nothing more, when the calls cannot be told or a file's tree is no longer among
    the recently parsed ones (never parsed anew here)."""
    calls = project.method_calls(query)
    if calls is None:
        yield None
        return
    for call in calls:
        parsed = _recently_parsed(call.path)
        node = _call_at(call, query.method, *parsed) if parsed is not None else None
        if parsed is None or node is None:
            yield None
            return
        yield call, node, parsed[0], parsed[2]


def calls_read_as_numbers(project: ProjectIndex, query: MethodQuery) -> list[MethodCall] | None:
    """The project's calls of the queried function when every one of them only reads
    what it returns as numbers (CallerContext.numbers_only); None when one may use it,
    or caller_contexts would be None. Only that is asked of each call, in order, up to
    the first that fails: not its loops nor its function, which caller_contexts also
    works out for each."""
    found = []
    for located in _located_calls(project, query):
        if located is None:
            return None
        call, node, tree, cells = located
        if cells is not None and cells.incomplete:
            return None  # a cell left out, or a blank to fill, may use it otherwise
        if not _read_as_numbers(node, _parents(tree), ast_import_map(tree)):
            return None
        found.append(call)
    return found


def calls_differentiated(project: ProjectIndex, query: MethodQuery) -> list[MethodCall] | None:
    """The project's calls of the queried function whose result their own scope
    differentiates (_differentiated_where_called); None when the calls cannot be told,
    or one is in a file whose tree is no longer among the recently parsed ones."""
    found = []
    for located in _located_calls(project, query):
        if located is None:
            return None
        call, node, tree, _ = located
        if _differentiated_where_called(node, _parents(tree), ast_import_map(tree), query.method):
            found.append(call)
    return found


def _differentiated_where_called(
    call: ast.Call, parents: dict[int, ast.AST], imports: ImportMap, name: str
) -> bool:
    """Does what `call` returns reach a differentiation in its own scope: a backward or
    a grad of an expression computed from it (`loss = d_loss + 10 *
    gradient_penalty(D, x, y)`, then `loss.backward()`), or another call of the same
    function handed it (`u_xx = gradient(u_x, x)`: a second derivative through the
    helper)? The names it is bound to are followed flow-insensitively, in source
    order, through plain assignments; a container, a helper or a return is not."""
    statement: ast.AST | None = call
    while statement is not None and not isinstance(statement, ast.stmt):
        statement = parents.get(id(statement))
    scope = parents.get(id(statement)) if statement is not None else None
    while scope is not None and not isinstance(scope, (*_SCOPES, ast.Module)):
        scope = parents.get(id(scope))
    if statement is None or scope is None or isinstance(scope, ast.ClassDef):
        return False
    own_statements: list[ast.stmt] = []
    stack: list[ast.AST] = list(scope.body) if not isinstance(scope, ast.Lambda) else []
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES) or not isinstance(node, ast.stmt):
            continue  # a nested function's or class's body runs elsewhere
        own_statements.append(node)
        for field_name in ("body", "orelse", "finalbody"):
            stack.extend(getattr(node, field_name, ()))
        for handler in getattr(node, "handlers", ()):
            stack.extend(handler.body)
    start = (statement.lineno, statement.col_offset)
    statements = sorted(
        (node for node in own_statements if (node.lineno, node.col_offset) >= start),
        key=lambda node: (node.lineno, node.col_offset),
    )
    carrying: set[str] = set()

    def carries(node: ast.AST) -> bool:
        return any(
            inner is call or (isinstance(inner, ast.Name) and inner.id in carrying)
            for inner in _walk_ast(node)
        )

    for node in statements:
        own = [node] if not hasattr(node, "body") else _headers_of(node)
        for part in own:
            if _cuts_the_graph(part):
                continue  # `(loss / gn.item()).backward()`: not the result's graph
            for inner in _walk_ast(part):
                if not isinstance(inner, ast.Call) or inner is call:
                    continue
                func = inner.func
                dotted = ast_dotted_name(func)
                method = func.attr if isinstance(func, ast.Attribute) else None
                kind = differentiation_kind(
                    imports.qualify(dotted) if dotted is not None else None,
                    method,
                    _step_operands,
                    inner,
                )
                again = kind in ("backward", "grad") or (
                    dotted is not None and dotted.rsplit(".", 1)[-1] == name
                )
                if again and carries(inner):
                    return True
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            value = node.value
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {
                inner.id
                for target in targets
                for inner in _walk_ast(target)
                if isinstance(inner, ast.Name)
            }
            if value is not None and carries(value) and not _cuts_the_graph(value):
                carrying |= names
            elif not isinstance(node, ast.AugAssign):
                # rebound to something else, or to a value cut from the graph
                # (`loss = loss / gn.item()`): it no longer holds the result
                carrying -= names
    return False


def _headers_of(node: ast.stmt) -> list[ast.AST]:
    """The parts of a compound statement outside its bodies: a loop's target and
    iterable, an `if`'s or a `while`'s test, a `with`'s items."""
    if isinstance(node, (ast.If, ast.While)):
        return [node.test]
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [node.target, node.iter]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return list(node.items)
    return []


def _call_at(
    call: MethodCall, name: str, tree: ast.Module, lines: list[str], cells: NotebookPython | None
) -> ast.Call | None:
    """The call of `name` that the caller search reported at `call`'s place in this tree;
    None if no call of that name is there."""
    where = (call.line, call.column, call.end_line, call.end_column, call.cell)
    return next((c for c in _calls_named(tree, name) if _place(c, lines, cells) == where), None)


def _builds_from(project: ProjectIndex, importer: str, module: str, level: int, name: str) -> bool:
    """ProjectIndex.builds_parameters of an import in `importer`, a caller's file."""
    return project.builds_parameters(module, level, name, importer)


def _context_of(
    call: MethodCall,
    name: str,
    tree: ast.Module,
    lines: list[str],
    cells: NotebookPython | None,
    builds: Callable[[str, int, str], bool] | None = None,
    builds_here: Callable[[str], bool] | None = None,
) -> CallerContext | None:
    """The context of the call of `name` that the caller search reported at `call`'s
    place in this tree; None if no call of that name is there. `builds`: whether a class
    imported from a project module holds layers with weights (ProjectIndex.builds_parameters);
    `builds_here`: the same of a class of the caller's own file."""
    node = _call_at(call, name, tree, lines, cells)
    if node is None:
        return None
    parents = _parents(tree)
    imports = ast_import_map(tree)
    around: set[int] = set()  # the call's ancestors: a loop holds it when it is one
    above = parents.get(id(node))
    while above is not None:
        around.add(id(above))
        above = parents.get(id(above))
    loops: list[EnclosingLoop] = []
    periodic = False
    child: ast.AST = node
    current = parents.get(id(node))
    function: str | None = None
    test_function = False
    while current is not None:
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            function = current.name if not isinstance(current, ast.Lambda) else "<lambda>"
            above = parents.get(id(current))
            test_function = function.startswith("test") and (
                isinstance(above, ast.Module)
                or (isinstance(above, ast.ClassDef) and above.name.startswith("Test"))
            )
            break
        if isinstance(current, ast.If) and child is not current.test:
            periodic = periodic or any(
                isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)
                for n in _walk_ast(current.test)
            )
        if isinstance(current, (ast.For, ast.AsyncFor, ast.While)) and child is not (
            current.iter if isinstance(current, (ast.For, ast.AsyncFor)) else current.test
        ):
            beside = tuple(
                _loop_of(inner, imports)
                for inner in _walk_ast(current)
                if inner is not current
                and isinstance(inner, (ast.For, ast.AsyncFor, ast.While))
                and id(inner) not in around
            )
            loops.append(_loop_of(current, imports, periodic, beside))
        child, current = current, parents.get(id(current))
    numbers_only = _read_as_numbers(node, parents, imports)
    return CallerContext(
        call,
        tuple(loops),
        function,
        test_function,
        _has_tests(tree),
        numbers_only,
        _model_arguments(node, parents, tree, builds, imports, builds_here),
        _model_containers(node, parents, tree),
    )


def _model_arguments(
    call: ast.Call,
    parents: dict[int, ast.AST],
    tree: ast.Module,
    builds: Callable[[str, int, str], bool] | None = None,
    imports: ImportMap | None = None,
    builds_here: Callable[[str], bool] | None = None,
) -> frozenset[int | str]:
    """CallerContext.model_arguments: the names the call passes that show themselves as
    modules with parameters in the call's own scope (analysis.forwards asks the same of
    a name in the linted file, there with its bindings followed), and `self` in a method
    of a class of the caller's file that holds weights (`return eval_np(self, obs)`)."""
    passed, built = _arguments_passed(call, lambda arg: _module_handed_on(arg, imports))
    found_built = _built_model_arguments(built, builds, imports, builds_here)
    if not passed:
        return found_built
    scope = _call_scope(call, parents)
    if scope is None:
        return frozenset()
    found: set[int | str] = set()
    receiver = _receiver_of_method(scope, parents)
    if receiver is not None and receiver[0] in passed and builds_here is not None:
        if builds_here(receiver[1].name):
            found.update(passed[receiver[0]])
    origins = imports.origins() if imports is not None else {}
    evidence, constructed = _parameter_evidence(tree, scope)
    for name, positions in passed.items():
        if name in evidence:
            found.update(positions)
        elif builds is not None:
            # `wgan = WGAN(...)` of a project class with weights, then `test_model(wgan)`
            for callee in constructed.get(name, ()):
                origin = origins.get(callee)
                if origin is not None and origin[2] is not None and builds(*origin[:2], origin[2]):
                    found.update(positions)
                    break
    return frozenset(found) | found_built


def _arguments_passed(
    call: ast.Call, through: Callable[[ast.expr], ast.expr] = lambda arg: arg
) -> tuple[dict[str, list[int | str]], list[tuple[int | str, ast.Call]]]:
    """({name: the positions and keywords it is passed at}, [(position or keyword, a
    call passed there)]) for the call's arguments, each read `through` a function (the
    module a `model.to(device)` hands on); positional ones only before any `*args`,
    whose later positions are not known."""
    passed: dict[str, list[int | str]] = {}
    built: list[tuple[int | str, ast.Call]] = []
    slots: list[tuple[int | str, ast.expr]] = []
    for position, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        slots.append((position, arg))
    slots += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
    for slot, value in slots:
        value = through(value)
        if isinstance(value, ast.Name):
            passed.setdefault(value.id, []).append(slot)
        elif isinstance(value, ast.Call):
            built.append((slot, value))
    return passed, built


def _call_scope(call: ast.Call, parents: dict[int, ast.AST]) -> ast.AST | None:
    """The function or module whose own code makes the call; None in a class body or a
    lambda."""
    scope: ast.AST | None = parents.get(id(call))
    while scope is not None and not isinstance(scope, (*_SCOPES, ast.Module)):
        scope = parents.get(id(scope))
    if scope is None or isinstance(scope, (ast.ClassDef, ast.Lambda)):
        return None
    return scope


def _model_containers(
    call: ast.Call, parents: dict[int, ast.AST], tree: ast.Module
) -> frozenset[int | str]:
    """CallerContext.model_containers: the names the call passes that its scope binds,
    once, to a dict, list or tuple written out of names each showing its parameters
    there (_parameter_evidence)."""
    passed, _ = _arguments_passed(call)
    scope = _call_scope(call, parents) if passed else None
    if scope is None:
        return frozenset()
    bound = _container_bindings(tree, scope)
    if bound.keys().isdisjoint(passed):
        return frozenset()
    evidence, _ = _parameter_evidence(tree, scope)
    found: set[int | str] = set()
    for name, positions in passed.items():
        values = bound.get(name, [])
        if len(values) != 1:
            continue
        value = values[0]
        if isinstance(value, ast.Dict):
            elements: list[ast.expr | None] = list(value.values)
            keys_known = all(key is not None for key in value.keys)  # no `**others`
        elif isinstance(value, (ast.List, ast.Tuple)):
            elements, keys_known = list(value.elts), True
        else:
            continue
        if (
            keys_known
            and elements
            and all(isinstance(e, ast.Name) and e.id in evidence for e in elements)
        ):
            found.update(positions)
    return frozenset(found)


def _parameter_evidence(tree: ast.Module, scope: ast.AST) -> tuple[set[str], dict[str, list[str]]]:
    """For the scope's own statements: the names a method that shows parameters is called
    on (`model.parameters()`, PARAMETER_EVIDENCE_METHODS), and, for each name, the names
    called in its plain assignments `name = Callee(...)`. Made once per scope and kept
    on the tree: every call of the scope that a caller search reports asks it."""
    evidence, constructed, _ = _scope_evidence(tree, scope)
    return evidence, constructed


def _container_bindings(tree: ast.Module, scope: ast.AST) -> dict[str, list[ast.expr]]:
    """For the scope's own statements: each name's assigned values, for the names
    assigned a dict, list or tuple written out at least once."""
    return _scope_evidence(tree, scope)[2]


def _scope_evidence(
    tree: ast.Module, scope: ast.AST
) -> tuple[set[str], dict[str, list[str]], dict[str, list[ast.expr]]]:
    """_parameter_evidence's and _container_bindings' answers, from one walk of the
    scope, kept on the tree."""
    memo = _tree_memo(tree)
    key = ("parameter evidence", id(scope))
    found = memo.get(key)
    if found is None:
        evidence: set[str] = set()
        constructed: dict[str, list[str]] = {}
        assigned: dict[str, list[ast.expr]] = {}
        for node in _own_nodes(scope):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in PARAMETER_EVIDENCE_METHODS
                and isinstance(node.func.value, ast.Name)
            ):
                evidence.add(node.func.value.id)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        assigned.setdefault(target.id, []).append(node.value)
                if (
                    len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Call)
                    and isinstance(node.value.func, ast.Name)
                ):
                    constructed.setdefault(node.targets[0].id, []).append(node.value.func.id)
        containers = {
            name: values
            for name, values in assigned.items()
            if any(isinstance(v, (ast.Dict, ast.List, ast.Tuple)) for v in values)
        }
        found = memo[key] = (evidence, constructed, containers)
    return found


def _module_handed_on(arg: ast.expr, imports: ImportMap | None) -> ast.expr:
    """The module an argument hands on, looked through the calls that return it or a
    copy of it with its parameters (`copy.deepcopy(model)`, `model.to(device)`,
    `model.eval()`): what the callee is then given, as analysis.forwards reads a
    binding through them."""
    while True:
        arg = ast_called_through(arg, MODULE_WRAPPING_METHODS)
        if not isinstance(arg, ast.Call) or not arg.args:
            return arg
        name = ast_dotted_name(arg.func)
        qualified = imports.qualify(name) if name is not None and imports is not None else name
        if qualified not in MODULE_PRESERVING_FUNCTIONS:
            return arg
        arg = arg.args[0]


def _built_model_arguments(
    built: list[tuple[int | str, ast.Call]],
    builds: Callable[[str, int, str], bool] | None,
    imports: ImportMap | None,
    builds_here: Callable[[str], bool] | None,
) -> frozenset[int | str]:
    """The places of the arguments a call builds in place as a module with parameters:
    `Agent(Net())` with `Net` a class of the caller's file that holds weights, or one
    it imports from the project's code."""
    if not built:
        return frozenset()
    origins = imports.origins() if imports is not None else {}
    found: set[int | str] = set()
    for place, value in built:
        if not isinstance(value.func, ast.Name):
            continue
        name = value.func.id
        origin = origins.get(name)
        if origin is None and builds_here is not None and builds_here(name):
            found.add(place)
        elif (
            origin is not None
            and origin[2] is not None
            and builds is not None
            and builds(*origin[:2], origin[2])
        ):
            found.add(place)
    return frozenset(found)


def _receiver_of_method(
    scope: ast.AST, parents: dict[int, ast.AST]
) -> tuple[str, ast.ClassDef] | None:
    """(the name of its instance parameter, its class) for a plain method of a class;
    None for anything else (a static or class method, a function)."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    cls = parents.get(id(scope))
    if not isinstance(cls, ast.ClassDef) or not scope.args.args:
        return None
    for decorator in scope.decorator_list:
        if isinstance(decorator, ast.Name) and decorator.id in ("staticmethod", "classmethod"):
            return None
    return scope.args.args[0].arg, cls


def _rebound_names(scope: ast.AST) -> set[str]:
    """The names the scope's own statements bind by assignment or a `for` target (not
    what an attribute or item store writes into: `v[0] = 1` keeps `v` the caller's)."""
    found: set[str] = set()
    for node in _own_nodes(scope):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
            targets = [node.target]
        elif isinstance(node, ast.NamedExpr):
            targets = [node.target]
        else:
            continue
        for target in targets:
            found.update(n for n in _assigned_names(target) if n is not None)
    return found


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of the scope's own statements: nested functions and classes left out."""
    work = _all_ast_children(scope)
    while work:
        node = work.pop()
        yield node
        if not isinstance(node, _SCOPES):
            work.extend(_all_ast_children(node))


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _read_as_numbers(call: ast.Call, parents: dict[int, ast.AST], imports: ImportMap) -> bool:
    """Is what `call` returns only read as numbers where it is called, every path ending
    in a number, a read or a detach (at least one of them), none escaping? The value is
    followed through expressions and the names it is bound to in its scope, as
    analysis.result_uses follows it in the linted file, with the same definition of what
    each step does (summary_facts.ResultUse); anything this simpler walk does not know
    (a helper, a container, a return) is an escape."""
    scope: ast.AST | None = parents.get(id(call))
    while scope is not None and not isinstance(scope, (*_SCOPES, ast.Module)):
        scope = parents.get(id(scope))
    if scope is None or isinstance(scope, ast.ClassDef):
        return False
    ended = False
    work: list[tuple[ast.AST, bool]] = [(call, False)]
    seen: set[tuple[int, bool]] = set()
    while work:
        node, detached = work.pop()
        if (id(node), detached) in seen:
            continue
        seen.add((id(node), detached))
        if len(seen) > 500:
            return False
        parent = parents.get(id(node))
        if parent is None:
            return False
        use: ResultUse | None = None
        at: ast.AST = parent
        if isinstance(parent, ast.Attribute) and parent.value is node:
            above = parents.get(id(parent))
            if isinstance(above, ast.Call) and above.func is parent:
                use, at = method_result_use(parent.attr), above
            else:
                use = attribute_result_use(parent.attr)
        elif isinstance(parent, ast.Call) and node in parent.args:
            dotted = ast_dotted_name(parent.func)
            use = argument_result_use(
                imports.qualify(dotted) if dotted is not None else "",
                writes_out=any(k.arg == "out" for k in parent.keywords),
                builtin=isinstance(parent.func, ast.Name),
                imported=dotted is not None and dotted.partition(".")[0] in imports.names(),
            )
            if use is None:
                # a function of the project, a module: not followed here
                use = ResultUse.ESCAPES
        elif isinstance(parent, (ast.BinOp, ast.BoolOp)) or (
            isinstance(parent, ast.UnaryOp) and not isinstance(parent.op, ast.Not)
        ):
            use = ResultUse.FOLLOWED
        elif isinstance(parent, ast.Subscript) and parent.value is node:
            use = ResultUse.FOLLOWED
        elif isinstance(parent, (ast.Compare, ast.FormattedValue, ast.Subscript)) or (
            isinstance(parent, (ast.If, ast.While, ast.Assert, ast.UnaryOp))
        ):
            use = ResultUse.READ  # a comparison, a test, an index into something else
        elif isinstance(parent, ast.Expr):
            continue  # evaluated and dropped
        elif (
            isinstance(parent, ast.Assign)
            and parent.value is node
            and len(parent.targets) == 1
            and None not in (names := _assigned_names(parent.targets[0]))
        ):
            # `img = sample(model)`, `out, (h, c) = decode(model, x)`: each name holds
            # the value or a part of it
            for name in names:
                assert name is not None
                uses = _loads_in(scope, name, parents)
                if uses is None:
                    return False
                work.extend((u, detached) for u in _reached_from(parent, name, uses, parents))
            continue
        else:
            if detached:
                continue  # detached on the way: wherever it goes, it takes no graph
            return False
        if use is ResultUse.DIFFERENTIATED:
            return False
        if use is ResultUse.ESCAPES:
            if detached:
                continue
            return False
        if use in (ResultUse.NUMBER, ResultUse.NUMPY, ResultUse.NUMPY_CALL, ResultUse.READ):
            ended = True
        elif use is ResultUse.DETACHED:
            ended = True
            work.append((at, True))
        else:
            work.append((at, detached or use is ResultUse.GRADLESS))
    return ended


_JUMPS = (
    ast.Break,
    ast.Continue,
    ast.Return,
    ast.Raise,
    ast.Try,
    ast.TryStar,
    ast.Yield,
    ast.YieldFrom,
)


def _reached_from(
    binding: ast.Assign, name: str, loads: list[ast.Name], parents: dict[int, ast.AST]
) -> list[ast.Name]:
    """The loads of `name` the binding's value may reach: all of them, unless a later
    statement of the same block rebinds the name on every path (`a = agent.act(s)`, then
    `a = a.detach().numpy()`). Then only the loads up to that statement's value are
    reached: the rebinding's own value read, not the reads of what it binds, also
    around a loop, whose next pass starts from the rebinding. With a jump, a `try` or a
    `yield` in between, any load may be."""
    block = _block_holding(binding, parents)
    if block is None:
        return loads
    following = block[block.index(binding) + 1 :]
    for statement in following:
        if any(isinstance(node, _JUMPS) for node in _walk_ast(statement)):
            return loads
        if isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in statement.targets
        ):
            start = (binding.end_lineno or 0, binding.end_col_offset or 0)
            stop = (statement.end_lineno or 0, statement.end_col_offset or 0)
            return [u for u in loads if start <= (u.lineno, u.col_offset) <= stop]
    return loads


def _block_holding(statement: ast.stmt, parents: dict[int, ast.AST]) -> list[ast.stmt] | None:
    """The statement list (a body, an `else:`, a `finally:`) the statement is in."""
    owner = parents.get(id(statement))
    for part in ("body", "orelse", "finalbody"):
        block = getattr(owner, part, None)
        if isinstance(block, list) and any(s is statement for s in block):
            return block
    return None


def _loads_in(scope: ast.AST, name: str, parents: dict[int, ast.AST]) -> list[ast.Name] | None:
    """The reads of `name` in `scope`'s own statements; None when another scope may read
    it too (a nested function or class, a `global` declaration). A module-level name
    read only by the module's own statements (a script's `__main__` code, a notebook's
    cells) is followed there."""
    reads = _scope_reads(scope)
    if name in reads.declared or name in reads.elsewhere:
        return None
    return reads.own.get(name, [])


@dataclass
class _ScopeReads:
    """The names read in one function (or lambda), found in one walk of it, for every
    name asked about (each assignment a followed result meets asks for its own)."""

    own: dict[str, list[ast.Name]]  # read by the scope's own code, in ast.walk's order
    elsewhere: set[str]  # read in a scope nested in it (a decorator or default included)
    declared: set[str]  # declared `global` or `nonlocal` anywhere in it


def _scope_reads(scope: ast.AST) -> _ScopeReads:
    found = scope.__dict__.get("_gradlint_reads")
    if found is not None:
        return cast(_ScopeReads, found)
    found = _ScopeReads({}, set(), set())
    # (node, the nearest scope above it): ast.walk's breadth-first order
    work: list[tuple[ast.AST, ast.AST]] = [(scope, scope)]
    i = 0
    while i < len(work):
        node, owner = work[i]
        i += 1
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is ast.Load:  # type: ignore[attr-defined]
                if owner is scope:
                    found.own.setdefault(node.id, []).append(node)  # type: ignore[attr-defined,arg-type]
                else:
                    found.elsewhere.add(node.id)  # type: ignore[attr-defined]
            continue
        if kind is ast.Global or kind is ast.Nonlocal:
            found.declared.update(node.names)  # type: ignore[attr-defined]
        inner = node if isinstance(node, _SCOPES) else owner
        work.extend((child, inner) for child in _all_ast_children(node))
    scope.__dict__["_gradlint_reads"] = found
    return found


def _loop_of(
    loop: ast.For | ast.AsyncFor | ast.While,
    imports: ImportMap,
    periodic: bool = False,
    beside: tuple[EnclosingLoop, ...] = (),
) -> EnclosingLoop:
    header = None
    if isinstance(loop, (ast.For, ast.AsyncFor)):
        header = f"{ast.unparse(loop.target)} {ast.unparse(loop.iter)}"
    differentiates = any(
        isinstance(n, ast.Call) and _differentiates(n, imports)
        for statement in loop.body
        for n in _walk_ast(statement)
    )
    return EnclosingLoop(header, differentiates, periodic, beside)


def _parents(tree: ast.Module) -> dict[int, ast.AST]:
    """id of each node -> its parent, made once per tree (kept with its other facts)."""
    memo = _tree_memo(tree)
    found = memo.get("parents")
    if found is None:
        found = memo["parents"] = {}
        work: list[ast.AST] = [tree]
        for node in work:
            children = _all_ast_children(node)
            for child in children:
                found[id(child)] = node
            work.extend(children)
    return found


def _walk_ast(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk, in its order (breadth first), with the children functions generated
    from the grammar: the summaries walk every function several times, and ast.walk's
    generic children (iter_child_nodes over iter_fields) were a fifth of their time."""
    todo = deque([node])
    pop, extend = todo.popleft, todo.extend
    while todo:
        node = pop()
        extend(_all_ast_children(node))
        yield node


def _all_ast_children(node: ast.AST) -> list[ast.AST]:
    """What ast.iter_child_nodes gives, as a list (its generators cost several times
    this loop)."""
    children_of = _AST_ALL_CHILDREN.get(type(node))
    if children_of is None:
        children_of = _AST_ALL_CHILDREN[type(node)] = _ast_children_function(
            type(node), _AST_PLAIN, leaves=False
        )
    return children_of(node)


def _all_ast_children_generic(node: ast.AST) -> list[ast.AST]:
    """_all_ast_children for a class without a grammar line to read: every field
    tested."""
    cls = type(node)
    fields = _AST_FIELDS.get(cls)
    if fields is None:
        fields = _AST_FIELDS[cls] = cls._fields
    out: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend([item for item in value if isinstance(item, ast.AST)])
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def _calls_named(tree: ast.Module, name: str) -> list[ast.Call]:
    """The calls `name(...)` and `x.name(...)` in the tree, in ast.walk's order: the
    tree's calls are grouped by name once, for every name asked about."""
    memo = _tree_memo(tree)
    by_name = memo.get("calls by name")
    if by_name is None:
        by_name = memo["calls by name"] = {}
        for node in _inner_nodes(tree):
            if type(node) is ast.Call:
                func = node.func
                called = (
                    func.id
                    if type(func) is ast.Name
                    else func.attr
                    if type(func) is ast.Attribute
                    else None
                )
                if called is not None:
                    by_name.setdefault(called, []).append(node)
    return by_name.get(name, [])


def _place(node: ast.Call, lines: list[str], cells: NotebookPython | None) -> tuple:
    """The call's place as the caller search reports it (_ScopeCalls._judge): lines and
    columns in code points, in its cell for a notebook."""
    start = Position(node.lineno, _code_points(lines, node.lineno, node.col_offset))
    end_line = node.end_lineno or node.lineno
    end = Position(end_line, _code_points(lines, end_line, node.end_col_offset or node.col_offset))
    cell = None
    if cells is not None:
        start, end, cell = cells.span(start.line, start.column, end.line, end.column)
    return (start.line, start.column, end.line, end.column, cell)


def _has_tests(tree: ast.Module) -> bool:
    """Does the file define test functions or import a test framework?"""
    memo = _tree_memo(tree)
    found = memo.get("has_tests")
    if found is None:
        found = memo["has_tests"] = any(
            isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef))
            and owner.name.startswith("test")
            for owner, _, _, _ in _scopes_of(tree)
        ) or any(
            module.split(".")[0] in ("pytest", "unittest")
            for module, *_ in ast_import_map(tree).origins().values()
        )
    return found


def _tree_at_hand(path: str, key: MemoKey) -> bool:
    """Is the file's tree among the few kept, by the searches (_parsed) or by the parse
    of its text for another reason (parse_quietly: the file was linted just now)?"""
    with _MEMO_LOCK:
        if key in _RECENT_TREES:
            return True
    if is_notebook(path):
        return False
    data = _text_of(key, path)
    try:
        source = data.decode("utf-8-sig") if data is not None else None
    except UnicodeDecodeError:
        return False
    with _MEMO_LOCK:
        return source is not None and source in _RECENT_ASTS
