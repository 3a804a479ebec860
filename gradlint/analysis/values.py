"""What a value is to autograd, flow-sensitively: for an expression at a point of the
program, the set of things it may be.

The question every rule asks of a name is "can this carry an autograd graph here?". A
name answers through the bindings that can reach the use (see `FileIndex.reaching`), so
a loop counter `i += seq_len` with `seq_len = max(5, int(...))` is a Python number, a
`baseline = baseline.to(device)` of an object made by a class call is that object, and
`x = x - x.mean(0)` on a tensor from `torch.randn` is a tensor without grad. Anything we
cannot see through is UNKNOWN, and UNKNOWN may carry a graph: rules that must not cry
wolf ask `may_carry_graph` and stay silent only on what is proven graph-free.

Loop-carried values are solved as a least fixpoint: a binding met again while it is
being evaluated contributes nothing, so `k = min(max(k, 0), 1)` is a number when its
other sources are.

Under `torch.no_grad()` / `inference_mode()` an operation records nothing, so a binding
made there from a computation (arithmetic, a torch function, a tensor method, a torch.nn
layer's forward) holds a tensor without history. Not so for views and for functions
that hand back their input: under no_grad `p.view(3)`, `p[0]`, `p.float()`,
`torch.as_tensor(p)` and `nn.Dropout().eval()(p)` of a parameter `p` all still require
grad (measured on torch 2.13), so they keep their input's value.

A tensor computed under `torch.inference_mode()` is more than history-free: it is an
*inference tensor*, and so are its views and `.detach()` (measured), while a computation
on it outside that mode gives a normal tensor. `is_inference_tensor` answers that.

Values are per binding: an in-place change (`x.requires_grad_()`, `x.copy_(y)`,
`x[i] = y`) is not a binding. A rule that needs a name *proven* free of history asks
`mutated_in_place` as well.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import cast

import libcst as cst

from gradlint.analysis.autograd_calls import AutogradCalls
from gradlint.analysis.bindings import (
    PYTHON_BINDINGS,
    BindingKind,
    ScopeBindings,
    all_params,
    bindings_of_node,
    is_true,
    keyed_name,
    paired_value,
    requires_grad_switched,
)
from gradlint.analysis.dataflow import COMPARISON_OPS, ELEMENTWISE_COMPARISONS
from gradlint.analysis.grad_mode import GradMode, GradModeAnalysis
from gradlint.analysis.imports import CST_IMPORTS
from gradlint.analysis.index import (
    ELEMENT_COMPREHENSIONS,
    FileIndex,
    bool_literal,
    dotted_name,
    keyword_is_true,
    loop_element_sources,
    target_names,
)
from gradlint.analysis.project import ExternalFunction
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.tensors import TensorFacts, built_module_call, strip_views
from gradlint.analysis.torch_api import (
    ALIASING_CALLS,
    ARITHMETIC_BUILTINS,
    AS_TENSOR_FUNCTIONS,
    AUTOGRAD_GRAD,
    DATA_LOADERS,
    DETACHING_ATTRIBUTES,
    DIFFERENTIABLE_METHODS,
    DISTRIBUTIONS_NAMESPACE,
    ELEMENT_PRESERVING_BUILTINS,
    ELEMENT_STORING_METHODS,
    ENVIRONMENT_RESET,
    ENVIRONMENT_STEP,
    ENVIRONMENT_STEP_RESULTS,
    FRAMEWORK_COLLECTIVES,
    FRAMEWORK_RECEIVERS,
    FREEZING_METHODS,
    FRESH_TENSOR_FUNCTIONS,
    FRESH_TENSOR_METHODS,
    GRAD_ATTRIBUTE,
    GRAD_RECORDING_SWITCHES,
    GRAPH_CUTTING_METHODS,
    GRAPH_PRESERVING_LIBRARY_FUNCTIONS,
    HISTORY_KEEPING_ATTRIBUTES,
    ITEM_PASSING_WRAPPERS,
    LEGACY_TENSOR_CONSTRUCTORS,
    MAX_MIN_FUNCTIONS,
    MAX_MIN_METHODS,
    METADATA_ATTRIBUTES,
    METADATA_METHODS,
    MOVING_METHODS,
    NO_AFFINE_FLAGS,
    NOT_COMPUTATION_NAMESPACES,
    OPTIMIZER_CLASSES,
    OPTIMIZER_NAMESPACES,
    PARAMETER_CLASSES,
    PASSTHROUGH_MODULES,
    PLAIN_VALUE_TYPES,
    PYTHON_NUMBER_METHODS,
    PYTHON_VALUE_BUILTINS,
    PYTHON_VALUE_MODULES,
    REDUCTIONS_WITH_INDICES,
    REQUIRES_GRAD_METHOD,
    REQUIRES_GRAD_NAMES,
    SELF_RETURNING_MODULE_METHODS,
    SHAPE_ONLY_ARGUMENT_METHODS,
    STORING_METHODS,
    TENSOR_CLASS_SUFFIXES,
    TENSOR_TYPE_TESTS,
    TENSOR_TYPES,
    TRANSPOSE_ATTRIBUTES,
    VALUE_OF_SELF_METHODS,
    VARIABLE_CLASSES,
    VIEW_METHODS,
    WEIGHTED_LAYERS,
)


class Kind(enum.Enum):
    PYTHON = "a Python number, string or other plain value"
    NONE = "None"
    MODULE = "a module"
    OBJECT = "an object of a class that is not a tensor"
    TENSOR = "a tensor without autograd history"
    LEAF = "a leaf tensor that requires grad"
    GRAPH = "a tensor that carries an autograd graph"
    UNKNOWN = "unknown"


Value = frozenset[Kind]

PYTHON: Value = frozenset({Kind.PYTHON})
NONE: Value = frozenset({Kind.NONE})
MODULE: Value = frozenset({Kind.MODULE})
OBJECT: Value = frozenset({Kind.OBJECT})
TENSOR: Value = frozenset({Kind.TENSOR})
LEAF: Value = frozenset({Kind.LEAF})
GRAPH: Value = frozenset({Kind.GRAPH})
UNKNOWN: Value = frozenset({Kind.UNKNOWN})
NOTHING: Value = frozenset()

_GRAPH_KINDS = frozenset({Kind.GRAPH, Kind.UNKNOWN})
_TENSORISH = frozenset({Kind.TENSOR, Kind.LEAF, Kind.GRAPH})

_GRAPH_FREE = frozenset({Kind.PYTHON, Kind.NONE, Kind.TENSOR})
# argparse's results are plain values (a common receiver of `.parse_args()` in scripts).
_ARGPARSE_METHODS = frozenset({"parse_args", "parse_known_args"})
_PYTHON_METHODS = PYTHON_NUMBER_METHODS | METADATA_METHODS | _ARGPARSE_METHODS
# `cpu_numpy` is a project helper spelling seen in the corpus, not torch's.
_GRAPH_FREE_METHODS = GRAPH_CUTTING_METHODS | {"cpu_numpy"}
_GRAPH_FREE_ATTRIBUTES = DETACHING_ATTRIBUTES | {GRAD_ATTRIBUTE}

# Literals of containers that code may fill after binding them.
_MUTABLE_LITERALS = (cst.List, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp)
# number and string literals (exact types: none of these classes has a subclass)
_LITERALS = frozenset(
    {
        cst.Integer,
        cst.Float,
        cst.Imaginary,
        cst.SimpleString,
        cst.ConcatenatedString,
        cst.FormattedString,
    }
)
_CONTAINER_LITERALS = (
    cst.List,
    cst.Tuple,
    cst.Set,
    cst.Dict,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)


def _updates_name(node: cst.AugAssign) -> bool:
    """`x += y` or `self.x += y`: an update of what the name holds (`x[i] += y` is a
    write into it)."""
    return isinstance(node.target, (cst.Name, cst.Attribute))


def _arithmetic_of(
    expr: cst.CSTNode,
    params: set[str],
    read: set[str],
    plain: Callable[[cst.Name], bool] = lambda name: False,
) -> bool:
    """Is `expr` made only of `params` (added to `read`), number literals, names that
    `plain` says hold no history there (a local `mean = torch.zeros(3)`), arithmetic
    and argument-free value methods of those (`(x - x.min()) / (x.max() - x.min())`)?"""
    kind = type(expr)
    if kind is cst.Name:
        if expr.value not in params:  # type: ignore[attr-defined]
            return plain(expr)  # type: ignore[arg-type]
        read.add(expr.value)  # type: ignore[attr-defined]
        return True
    if kind is cst.Integer or kind is cst.Float:
        return True
    if kind is cst.BinaryOperation:
        return _arithmetic_of(expr.left, params, read, plain) and _arithmetic_of(  # type: ignore[attr-defined]
            expr.right,  # type: ignore[attr-defined]
            params,
            read,
            plain,
        )
    if kind is cst.UnaryOperation:
        return _arithmetic_of(expr.expression, params, read, plain)  # type: ignore[attr-defined]
    if kind is cst.Call:
        func = expr.func  # type: ignore[attr-defined]
        return (
            not expr.args  # type: ignore[attr-defined]
            and type(func) is cst.Attribute
            and func.attr.value in VALUE_OF_SELF_METHODS
            and _arithmetic_of(func.value, params, read, plain)
        )
    return False


def may_carry_graph(value: Value) -> bool:
    return bool(value & _GRAPH_KINDS)


def is_graph_free(value: Value) -> bool:
    """Proven to hold no tensor that requires grad: a Python value, None, or a tensor
    without history (never UNKNOWN, a module or an object, which may hold one)."""
    return bool(value) and value <= _GRAPH_FREE


def _without_history(value: Value) -> Value:
    return frozenset(
        Kind.TENSOR if k in (Kind.LEAF, Kind.GRAPH, Kind.UNKNOWN) else k for k in value
    )


def combine(*values: Value) -> Value:
    """The value of arithmetic on these operands."""
    kinds: set[Kind] = set()
    for value in values:
        if Kind.UNKNOWN in value or value & {Kind.MODULE, Kind.OBJECT}:
            kinds.add(Kind.UNKNOWN)
        if value & {Kind.GRAPH, Kind.LEAF}:
            kinds.add(Kind.GRAPH)
    if not kinds:
        if any(Kind.TENSOR in v for v in values):
            kinds.add(Kind.TENSOR)
        elif any(v for v in values):
            kinds.add(Kind.PYTHON)
    return frozenset(kinds)


# A write into a container: the value it puts there (None: cannot be told), and where.
_Store = tuple[cst.BaseExpression | None, cst.CSTNode]


class ValueAnalysis:
    def __init__(
        self,
        index: FileIndex,
        tensors: TensorFacts,
        grad_mode: GradModeAnalysis | None = None,
        summaries: FunctionSummaries | None = None,
        *,
        bindings: ScopeBindings,
        autograd: AutogradCalls | None = None,
    ) -> None:
        self.index = index
        self.bindings = bindings
        self.autograd = autograd
        self.tensors = tensors
        self.grad_mode = grad_mode
        self.summaries = summaries
        self._mutated: dict[str, list[cst.CSTNode]] | None = None
        self._memo: dict[tuple[cst.CSTNode, str], Value] = {}
        self._source_memo: dict[tuple[str, cst.CSTNode], list[cst.CSTNode] | None] = {}
        # the bindings being evaluated, by the depth of the evaluation that holds them
        self._active: dict[tuple[cst.CSTNode, str], int] = {}
        # per of_binding in progress (outermost first): a token that names it, and the
        # shallowest evaluation in progress that a cycle under it reached
        self._frames: list[object] = []
        self._lows: list[int] = []
        # values that met a cycle: (value, the depth of the evaluation the cycle reached,
        # its token), good while that evaluation is still in progress
        self._in_cycle: dict[tuple[cst.CSTNode, str], tuple[Value, int, object]] = {}
        self._frozen: set[tuple[cst.CSTNode | None, str]] | None = None
        self._graph_grads: bool | None = None
        self._stores: dict[cst.CSTNode, dict[str, list[_Store]]] = {}
        self._inference_names: set[str] | None = None
        self._asking_for_losses: set[cst.Param] = set()  # _loss_parameter, in progress
        self._free_returns: dict[cst.FunctionDef, Value | None] = {}
        self._free_elements: dict[tuple[cst.FunctionDef, int, int], Value | None] = {}
        self._attributes: dict[tuple[cst.ClassDef, str], Value | None] = {}
        # per loop: does its body step an optimizer on what it differentiates (one
        # walk for all the names its target binds)
        self._training_loops: dict[cst.For, bool] = {}
        self._asking_callers: set[cst.Param] = set()  # parameters whose callers are asked

    # -- the queries -------------------------------------------------------------------

    def of_name(self, name: str, use: cst.CSTNode) -> Value:
        """What `name` may hold when `use` runs."""
        sources = self._sources(name, use)
        return UNKNOWN if sources is None else self._union(sources, name)

    def _sources(self, name: str, use: cst.CSTNode) -> list[cst.CSTNode] | None:
        """The bindings whose value `name` may hold when `use` runs; None when none is
        known. Kept: a chain of updates asks about each of its links many times."""
        key = (name, use)
        if key in self._source_memo:
            return self._source_memo[key]
        scope = self.index.scope_of(use)
        bindings = self._value_bindings(scope).get(name)
        found: list[cst.CSTNode] | None
        if not bindings:
            if scope is not self.index.module and name in self._value_bindings(self.index.module):
                # a global read in a function: any module-level binding may be current
                found = self._value_bindings(self.index.module)[name]
            else:
                found = None
        else:
            found = self.index.reaching(bindings, use) or None
        self._source_memo[key] = found
        return found

    def of_binding(self, binding: cst.CSTNode, name: str) -> Value:
        """What `name` holds right after `binding` (an Assign, AugAssign, For, ...)."""
        key = (binding, name)
        memo = self._memo.get(key)
        if memo is not None:
            return memo
        depth = self._active.get(key)
        if depth is not None:
            self._reached(depth)
            return NOTHING
        # A value that met a cycle depends on where the cycle was cut: on the evaluation
        # in progress that it reached. While that one runs, every evaluation under it
        # cuts there too, so the value is kept for all of them: a loop whose body
        # rebinds `x` on a dozen branches (`x = F.conv2d(x, w)`, `x = F.linear(x, w)`,
        # ...) asks each binding about every other one, 2**n evaluations without it.
        kept = self._in_cycle.get(key)
        if kept is not None:
            value, low, frame = kept
            if low < len(self._frames) and self._frames[low] is frame:
                self._reached(low)
                return value
        depth = len(self._frames)
        self._active[key] = depth
        self._frames.append(object())
        self._lows.append(depth)
        try:
            value = self._binding_value(binding, name)
        finally:
            del self._active[key]
            self._frames.pop()
            low = self._lows.pop()
        if low >= depth:
            # every cycle it met closed inside it: the value is its own for good
            self._memo[key] = value
        else:
            self._in_cycle[key] = (value, low, self._frames[low])
            self._reached(low)
        return value

    def _reached(self, depth: int) -> None:
        """The evaluation in progress met a cycle through the one at `depth`."""
        if self._lows and depth < self._lows[-1]:
            self._lows[-1] = depth

    def of_expr(self, expr: cst.CSTNode, use: cst.CSTNode | None = None) -> Value:
        """What `expr` evaluates to (names resolved at `use`, default: expr itself)."""
        return self._expr(expr, use if use is not None else expr)

    def reaching_bindings(self, name: str, use: cst.CSTNode) -> list[cst.CSTNode]:
        """The bindings of `name` that can reach `use` (its function's, or the module's
        for a global read): the def-use chain `of_name` reads its value from."""
        scope = self.index.scope_of(use)
        bindings = self._value_bindings(scope).get(name)
        if not bindings:
            if scope is not self.index.module:
                return list(self._value_bindings(self.index.module).get(name, ()))
            return []
        return self.index.reaching(bindings, use)

    def reaching_expressions(self, name: str, use: cst.CSTNode) -> list[cst.BaseExpression | None]:
        """The expression each binding of `name` that can reach `use` gives it
        (bound_expression; None for a binding that assigns no expression)."""
        return [self.bound_expression(b, name) for b in self.reaching_bindings(name, use)]

    def distributions_built(self, expr: cst.BaseExpression, use: cst.CSTNode) -> list[cst.Call]:
        """The torch.distributions constructions that `expr` is where it is read at `use`:
        the call itself (`Categorical(logits=logits)`), or every binding of a name that
        reaches it (`m = Normal(mu, std)`); empty when any of them is something else."""
        if type(expr) is cst.Call:
            built: list[cst.BaseExpression | None] = [expr]
        elif type(expr) is cst.Name:
            built = list(self.reaching_expressions(expr.value, use))
        else:
            return []
        calls = [e for e in built if type(e) is cst.Call and self._a_distribution(e)]
        return calls if built and len(calls) == len(built) else []

    def _a_distribution(self, call: cst.Call) -> bool:
        return (self.index.qualified_name(call.func) or "").startswith(DISTRIBUTIONS_NAMESPACE)

    def item_stores(
        self, name: str, use: cst.CSTNode
    ) -> list[tuple[cst.BaseExpression, cst.Assign]]:
        """The values written into the items of `name` (`name[k] = v`) in the function of
        `use`, after a binding of `name` that reaches it and before it: a tensor filled in
        place (`q_target = q.clone(); q_target[i, a] = r + gamma * q_next.max(1)[0]`)
        holds their history too."""
        scope = self.index.scope_of(use)
        reaching = self.reaching_bindings(name, use)
        order = self.index.order
        if not reaching or use not in order:
            return []
        start = min(order.get(b, 0) for b in reaching)
        found: list[tuple[cst.BaseExpression, cst.Assign]] = []
        for stored, at in self._stored_into(scope).get(name, ()):
            if (
                stored is not None
                and type(at) is cst.Assign
                and self.index.scope_of(at) is scope
                and start < order.get(at, -1) < order[use]
            ):
                found.append((stored, at))
        return found

    @staticmethod
    def bound_expression(binding: cst.CSTNode, name: str) -> cst.BaseExpression | None:
        """The expression a binding gives `name` (`y` for `x, y = a, b`; the whole value
        when it is unpacked from something that cannot be split); None for a binding
        that is no assignment of an expression."""
        if type(binding) is cst.Assign:
            for target in binding.targets:
                found = paired_value(target.target, binding.value, name)
                if found is not None:
                    return cast(cst.BaseExpression, found[0])
            return None
        if type(binding) is cst.AnnAssign or type(binding) is cst.NamedExpr:
            return binding.value
        if type(binding) is cst.AugAssign:
            return binding.value
        return None

    @staticmethod
    def element_source(binding: cst.CSTNode, name: str) -> cst.BaseExpression | None:
        """The iterable whose elements a loop's or a comprehension's `name` takes in turn
        (`next_q` of `for r, q in zip(rewards, next_q)`): each element has the history
        the iterable has. None for another binding, or a name that takes no element
        (the index of `enumerate`)."""
        if type(binding) is not cst.For and type(binding) is not cst.CompFor:
            return None
        names = target_names(binding.target)
        sources = loop_element_sources(binding.target, binding.iter)
        if name not in names or len(sources) != len(names):
            return None
        return sources[names.index(name)]

    def bindings_of(self, name: str, use: cst.CSTNode) -> list[cst.CSTNode]:
        """Every binding of `name` in the scope `use` reads it from (its function, else
        the nearest enclosing function that binds it, a closure's variable, else the
        module), flow-insensitively."""
        scope = self.index.scope_of(use)
        bindings = self._value_bindings(scope).get(name)
        if not bindings:
            for outer in self.index.outer_scopes(scope):
                bindings = self._value_bindings(outer).get(name)
                if bindings:
                    break
        return list(bindings or ())

    def variable_constructor(self, func: cst.CSTNode, use: cst.CSTNode) -> bool:
        """`torch.autograd.Variable`, a wrapper of this file that passes its keyword
        arguments on to it (`Variable = lambda *args, **kwargs: autograd.Variable(*args,
        **kwargs).cuda()`, the usual way old code moved every Variable to the GPU), or a
        subclass of it defined here."""
        name = dotted_name(func)
        if name is None:
            return False
        head = name.split(".")[0]
        if self.index.qualified_name(func) in VARIABLE_CLASSES:
            return self.bound_only_by_imports(head, use)
        if "." in name:
            return False
        bindings = self.bindings_of(name, use)
        return bool(bindings) and all(self._forwards_to_variable(b) for b in bindings)

    def _forwards_to_variable(self, binding: cst.CSTNode) -> bool:
        body: cst.CSTNode
        if type(binding) is cst.ClassDef:
            # `class Variable(autograd.Variable)` (old DQN code's way to move every
            # Variable to the GPU in `__init__`): constructing it is constructing a
            # Variable, whatever its `__init__` does with the keywords (measured on torch
            # 2.13: the instance is a plain tensor, and `volatile` is ignored)
            index = self.index
            return any(
                index.qualified_name(base.value) in VARIABLE_CLASSES for base in binding.bases
            )
        if type(binding) is cst.FunctionDef:
            params, body = binding.params, binding.body
        elif (
            type(binding) is cst.Assign
            and len(binding.targets) == 1
            and type(binding.value) is cst.Lambda
        ):
            params, body = binding.value.params, binding.value.body
        else:
            return False
        kwargs = params.star_kwarg
        if kwargs is None:
            return False
        index = self.index
        for node in index.walk(body):
            if type(node) is cst.Call and index.qualified_name(node.func) in VARIABLE_CLASSES:
                if any(
                    a.star == "**"
                    and type(a.value) is cst.Name
                    and a.value.value == kwargs.name.value
                    for a in node.args
                ):
                    return True
        return False

    def bound_only_by_imports(self, name: str, use: cst.CSTNode) -> bool:
        """Is every binding of `name` visible at `use` an import (or is it not bound in
        this file at all)? `from torch import no_grad` then `no_grad = torch.no_grad()`
        makes `no_grad` an instance, whatever the import table says."""
        return all(type(b) in CST_IMPORTS for b in self.bindings_of(name, use))

    def mutated_in_place(self, name: str, use: cst.CSTNode) -> bool:
        """Is the tensor `name` read at `use` changed in place, by an in-place method
        (`name.requires_grad_()`, `name.copy_(y)`, also through a view or an index),
        `out=name`, an indexed assignment (`name[i] = y`, `name[i] += y`) or
        `name.requires_grad = ...`? Any of them may give it history or make it require
        grad, which its bindings do not show. Flow-insensitive: a local name counts
        changes in its function (and the functions nested in it), an attribute or a
        global name changes anywhere in the file."""
        if self._mutated is None:
            self._mutated = self._collect_mutated()
        scopes = self._mutated.get(name)
        if not scopes:
            return False
        local = self.index.scope_of(use)
        if "." in name or local is self.index.module or name not in self._value_bindings(local):
            return True
        return any(self.index.is_inside(scope, local) for scope in scopes)

    def _collect_mutated(self) -> dict[str, list[cst.CSTNode]]:
        found: dict[str, list[cst.CSTNode]] = {}

        def add(expr: cst.CSTNode) -> None:
            name = _mutated_base(expr)
            if name is not None:
                found.setdefault(name, []).append(self.index.scope_of(expr))

        for node in self.index.nodes:
            if type(node) is cst.Call:
                func = node.func
                if type(func) is cst.Attribute:
                    method = func.attr.value
                    if method.endswith("_") and not method.startswith("_"):
                        add(func.value)
                for arg in node.args:
                    if arg.keyword is not None and arg.keyword.value == "out":
                        add(arg.value)
            elif type(node) is cst.Assign:
                for target in node.targets:
                    if type(target.target) is cst.Subscript:
                        add(target.target)
                    elif (
                        type(target.target) is cst.Attribute
                        and target.target.attr.value == "requires_grad"
                    ):
                        add(target.target.value)
            elif type(node) is cst.AugAssign and type(node.target) is cst.Subscript:
                add(node.target)
        return found

    def uses_reached(self, binding: cst.CSTNode, name: str) -> list[cst.CSTNode]:
        """The reads of `name` in the binding's scope that this binding can reach: the
        def-use chain, so a later rebinding of the same name starts a new chain."""
        scope = self.index.scope_of(binding)
        bindings = self._value_bindings(scope).get(name, [])
        return [
            use
            for use in self.bindings.uses(scope).get(name, ())
            if binding in self.index.reaching(bindings, use)
        ]

    def reached_as_a_non_tensor(self, binding: cst.CSTNode, name: str, use: cst.CSTNode) -> bool:
        """Does `binding` reach `use` only where a type test found `name` no tensor? In
        the test's `else`, or after `if torch.is_tensor(vec): vec = vec.detach().numpy()`,
        which rebinds every tensor: a tensor bound before the test never gets there."""
        index = self.index
        for node in index.ancestors(use):
            if type(node) is cst.If and _tests_a_tensor(node.test, name, index):
                if node.orelse is not None and index.is_inside(use, node.orelse):
                    return True
        order = index.order
        start, end = order.get(binding), order.get(use)
        if start is None or end is None:
            return False
        for test in index.of_types_in(index.scope_of(use), cst.If):
            if not (start < order[test] < end) or index.is_inside(use, test):
                continue
            if index.is_inside(binding, test) or not _tests_a_tensor(test.test, name, index):
                continue
            block = next(index.ancestors(test), None)
            if block is None or not index.is_inside(use, block):
                continue  # a test on one branch: the use may be reached around it
            if _rebinds(test.body, name):
                return True
        return False

    # -- bindings ----------------------------------------------------------------------

    def _value_bindings(self, scope: cst.CSTNode) -> dict[str, list[cst.CSTNode]]:
        """The scope's bindings of every kind that gives a name a value: the one table's
        Python bindings, with `out["loss"] = ...` keys as names of their own."""
        return self.bindings.nodes(scope, _VALUE_BINDINGS)

    def _union(self, bindings: list[cst.CSTNode], name: str) -> Value:
        out: set[Kind] = set()
        for binding in bindings:
            out |= self.of_binding(binding, name)
        return frozenset(out)

    def _binding_value(self, node: cst.CSTNode, name: str) -> Value:
        if type(node) is cst.Expr:
            return LEAF  # `x.requires_grad_(True)`: the tensor is a leaf that requires grad
        if type(node) is cst.Assign and requires_grad_switched(node) == name:
            # `x.requires_grad = True` makes it one; `= flag` may
            return LEAF if is_true(node.value) else UNKNOWN
        if type(node) is cst.Param:
            # `lambda_k=0.001`: a parameter whose default is a plain literal is plain
            if node.default is not None and self._expr(node.default, node) == PYTHON:
                return PYTHON
            # `smooth_grad(i, l, model, 500)`, `train(base_rates)` with `base_rates` a
            # numpy array: what every caller hands it
            passed = self._passed_at_every_call(node)
            return UNKNOWN if passed is None else passed
        if type(node) is cst.Assign:
            for target in node.targets:
                found = paired_value(target.target, node.value, name)
                if found is not None:
                    value, position = found
                    if isinstance(value, _MUTABLE_LITERALS) and name in self._stored_into(
                        self.index.scope_of(node)
                    ):
                        # `losses = []` then `losses.append(loss)`: what it is given
                        return self._stored_values(name, node, value)
                    if position is not None and type(value) is cst.Call:
                        place = _unpacked_place(target.target, name)
                        if (
                            place is not None
                            and place[1] >= ENVIRONMENT_STEP_RESULTS
                            and is_environment_step(value)
                            # `out, h, c = self.step(x, h, c)` of the module's own
                            # method is no environment's: its body says what it returns
                            and not self._runs_a_function_here(value)
                        ):
                            # an environment hands back data, whatever action it is given
                            stepped = _element(self._bound(value, node))
                            return stepped if is_graph_free(stepped) else PYTHON | TENSOR
                        if place is not None:
                            if place == (1, 2) and self._reduction_with_indices(value):
                                # `probs, ids = torch.topk(p, 1)`, `_, pred = out.max(1)`
                                return TENSOR
                            element = self._graph_free_element(value, *place)
                            if element is not None:
                                return element
                    whole = self._bound(value, node)
                    return whole if position is None else _element(whole)
            return UNKNOWN
        if type(node) is cst.AnnAssign:
            return self._bound(node.value, node) if node.value is not None else UNKNOWN
        if type(node) is cst.AugAssign:
            if _updates_name(node):
                return self._updated(node, name)
            return UNKNOWN
        if type(node) is cst.NamedExpr:
            return self._bound(node.value, node)
        if isinstance(node, (cst.For, cst.CompFor)):
            return self._loop_target(node, name)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) or type(node) in CST_IMPORTS:
            return OBJECT
        return UNKNOWN

    def _updated(self, node: cst.AugAssign, name: str) -> Value:
        """What `name` holds after `x += y`: arithmetic on what it held before and on y.
        The updates before it are followed in one walk, not one recursion each: a loop
        body of hundreds of `x += ...` would exhaust the stack. The result is the same,
        since arithmetic flattens (`combine(combine(a, b), c)` is `combine(a, b, c)`):
        every operand of every update the chain reaches, and the value of each binding
        that starts it. The updates walked are marked active, as of_binding marks the
        one it evaluates, so that an operand naming `name` again (`x += x * w`) is a
        cycle, not a second walk."""
        operands: list[Value] = []
        seen: set[cst.CSTNode] = {node}
        marked: list[tuple[cst.CSTNode, str]] = []
        todo = [node]
        try:
            while todo:
                current = todo.pop()
                # The updates before it are marked before its operand is evaluated.
                for previous in self._chain_step(current, name, seen, marked, todo, operands):
                    operands.append(self.of_binding(previous, name))
                operands.append(self._expr(current.value, current))
        finally:
            for key in marked:
                del self._active[key]
        return combine(*operands)

    def _chain_step(
        self,
        current: cst.AugAssign,
        name: str,
        seen: set[cst.CSTNode],
        marked: list[tuple[cst.CSTNode, str]],
        todo: list[cst.AugAssign],
        operands: list[Value],
    ) -> list[cst.CSTNode]:
        """One step of _updated's walk back from `current`: the updates before it are
        queued and marked, known values added to `operands`; the other bindings that
        reach it are returned, to be evaluated once the marks are in place."""
        others: list[cst.CSTNode] = []
        sources = self._sources(name, current)
        if sources is None:
            operands.append(UNKNOWN)
            return others
        for previous in sources:
            if previous in seen:
                continue
            key = (previous, name)
            memo = self._memo.get(key)
            if memo is not None:
                operands.append(memo)
            elif type(previous) is cst.AugAssign and _updates_name(previous):
                depth = self._active.get(key)
                if depth is not None:
                    self._reached(depth)
                    continue
                seen.add(previous)
                # part of the evaluation in progress, as the update it walks back from
                self._active[key] = len(self._frames) - 1
                marked.append(key)
                todo.append(previous)
            else:
                others.append(previous)
        return others

    def _loop_target(self, loop: cst.For | cst.CompFor, name: str) -> Value:
        iterable = loop.iter
        if type(iterable) is cst.Call:
            callee = self.index.qualified_name(iterable.func)
            if callee == "range":
                return PYTHON
            if callee == "enumerate" and type(loop.target) is cst.Tuple:
                first = loop.target.elements[0].value if loop.target.elements else None
                if type(first) is cst.Name and first.value == name:
                    return PYTHON
        if self._is_data_loader(iterable, loop):
            return TENSOR  # `for x, y in loader`: a batch of data, no history
        if self._trains_on_each_element(loop):
            return TENSOR  # `for X, y in train_iter` passed in: what the loop trains on
        return UNKNOWN

    def _trains_on_each_element(self, loop: cst.For | cst.CompFor) -> bool:
        """Does the loop's own body differentiate and step an optimizer on every element
        (`for X, y in loader: ... loss.backward(); opt.step()`)? What such a loop iterates
        is the data it trains on, wherever the iterable comes from (a loader handed in,
        `self.train_loader`, a replay buffer's sample): a tensor made by the model and
        differentiated once per element would raise on the second element's backward."""
        if self.autograd is None or type(loop) is not cst.For:
            return False
        found = self._training_loops.get(loop)
        if found is None:
            kinds = {event.kind for event in self.autograd.events_in(loop.body)}
            found = self._training_loops[loop] = "step" in kinds and bool(
                kinds & {"backward", "grad"}
            )
        return found

    def _is_data_loader(self, expr: cst.CSTNode, use: cst.CSTNode) -> bool:
        """Is `expr` (or what `enumerate`/`tqdm` wrap) a torch DataLoader built in sight:
        `DataLoader(...)`, or a name every binding of which that reaches `use` is one?"""
        while type(expr) is cst.Call and expr.args and not expr.args[0].keyword:
            if self.index.qualified_name(expr.func) not in ITEM_PASSING_WRAPPERS:
                break
            expr = expr.args[0].value
        if type(expr) is cst.Call:
            return self.index.qualified_name(expr.func) in DATA_LOADERS
        return self._bound_to_calls(
            expr, use, lambda call, _: self.index.qualified_name(call.func) in DATA_LOADERS
        )

    def _iterates_a_data_loader(self, expr: cst.CSTNode, use: cst.CSTNode) -> bool:
        """`iter(loader)` of a DataLoader built in sight, or a name every binding of which
        that reaches `use` is one (`iterator = iter(loader)`, then `next(iterator)`)."""
        if type(expr) is cst.Call:
            return (
                self.index.qualified_name(expr.func) == "iter"
                and len(expr.args) == 1
                and expr.args[0].keyword is None
                and self._is_data_loader(expr.args[0].value, use)
            )
        return self._bound_to_calls(expr, use, self._iterates_a_data_loader)

    def _bound_to_calls(
        self,
        expr: cst.CSTNode,
        use: cst.CSTNode,
        test: Callable[[cst.Call, cst.CSTNode], bool],
    ) -> bool:
        """Is `expr` a name every binding of which that reaches `use` binds it to a call
        that passes `test` (asked with the call and its binding)?"""
        if type(expr) is not cst.Name:
            return False
        sources = self._sources(expr.value, use)
        if not sources:
            return False
        return all(
            type(value := self.bound_expression(source, expr.value)) is cst.Call
            and test(value, source)
            for source in sources
        )

    # -- no-grad results ---------------------------------------------------------------

    def _bound(self, expr: cst.CSTNode, binding: cst.CSTNode) -> Value:
        """The value a binding gives its name: the expression's value, without history
        when it is computed where autograd records nothing."""
        value = self._expr(expr, binding)
        if (
            self.grad_mode is not None
            and value & {Kind.LEAF, Kind.GRAPH, Kind.UNKNOWN}
            and self._computes(expr, binding)
            and self.grad_mode.mode_at(binding) is GradMode.NOT_RECORDING
        ):
            return _without_history(value)
        return value

    def _computes(self, expr: cst.CSTNode, use: cst.CSTNode) -> bool:
        """Is expr a tensor computed by an operation (not a view or an alias of an
        existing tensor), so that under no_grad it has no history?"""
        if type(expr) is cst.BinaryOperation:
            operands = (expr.left, expr.right)
            if any(isinstance(o, _CONTAINER_LITERALS) for o in operands):
                return False  # `[p] * 3`, `(h,) + rest` repeat the same tensors
            return any(self._is_tensor(o, use) for o in operands)
        if type(expr) is cst.UnaryOperation:
            return type(expr.operator) is not cst.Not and self._is_tensor(expr.expression, use)
        if type(expr) is cst.Subscript:
            return self._computes(expr.value, use)  # a view of a computed tensor
        if type(expr) is not cst.Call:
            return False
        func = expr.func
        qualified = self.index.qualified_name(func) or ""
        if qualified.startswith("torch."):
            if qualified.startswith(NOT_COMPUTATION_NAMESPACES) and not qualified.startswith(
                "torch.nn.functional."
            ):
                return False
            last = qualified.rsplit(".", 1)[-1]
            return not (
                last in ALIASING_CALLS
                or last.endswith("_")
                or keyword_is_true(expr, "requires_grad")
            )
        layer = self.tensors.module_class(func, use) or ""
        if layer.startswith("torch.nn."):
            return layer.rsplit(".", 1)[-1] not in PASSTHROUGH_MODULES
        if layer and self._local_forward_computes(layer):
            return True
        if type(func) is cst.Attribute:
            method = func.attr.value
            if method in ALIASING_CALLS or method.endswith("_"):
                return self._computes(func.value, use)  # a view of a computed tensor
            return self._is_tensor(func.value, use)  # `p.sum()`, `h.softmax(-1)`
        return False

    def _is_tensor(self, expr: cst.CSTNode, use: cst.CSTNode) -> bool:
        value = self._expr(expr, use)
        if value and value <= _TENSORISH:
            return True
        return self.tensors.leaf_requiring_grad(expr, use) is not None or self._computes(expr, use)

    def _local_forward_computes(self, class_name: str) -> bool:
        """A module class of this file whose forward computes its result: every base is
        torch.nn's or another such class, nothing in it switches grad back on
        (`enable_grad`, `set_grad_enabled`), and its forward never returns one of its
        arguments or an attribute as it is (a wrapper that hands back its input, or a
        parameter, keeps its requires_grad under no_grad)."""
        if class_name not in self.tensors.local_module_classes():
            return False
        cls = next((c for c in self.index.classes if c.name.value == class_name), None)
        if cls is None or self.grad_mode is None:
            return False
        for base in cls.bases:
            base_name = self.index.qualified_name(base.value) or ""
            if not base_name.startswith("torch.nn.") and not self._local_forward_computes(
                base_name
            ):
                return False
        for node in self.index.of_types_in(cls, cst.Call, cst.FunctionDef):
            if (
                type(node) is cst.Call
                and self.grad_mode.api_of(node.func) in GRAD_RECORDING_SWITCHES
            ):
                return False
            if type(node) is cst.FunctionDef and node.name.value == "forward":
                params = {p.name.value for p in all_params(node.params)}
                for inner in self.index.walk(node.body):
                    if type(inner) is cst.Return and (
                        type(inner.value) is cst.Name
                        and inner.value.value in params
                        or (dotted_name(inner.value) or "").startswith("self.")
                    ):
                        return False  # `return x`, `return self.weight`
        return True

    def torch_loss_instance(self, func: cst.CSTNode, use: cst.CSTNode) -> bool:
        """Is `func` a name (of the function, or a global it does not bind) every
        binding of which constructs a `torch.nn` loss (`loss_fn = torch.nn.L1Loss()`),
        a module without parameters whose output is computed from its inputs alone?"""
        if type(func) is not cst.Name:
            return False
        bindings = self.bindings_of(func.value, use)
        if len(bindings) == 1 and type(bindings[0]) is cst.Param:
            return self._loss_parameter(bindings[0])
        if not bindings or not all(type(b) is cst.Assign for b in bindings):
            return False  # also a loop target, an import...
        # the scope that binds it: the function's, or the module's for a global
        constructors = self.tensors.module_constructors(func, bindings[0])
        if len(constructors) != len(bindings):
            return False
        built = _torch_nn_builds(self.index, constructors)
        # a layer may hold weights: its output is more than its inputs
        return built is not None and all(name.endswith("Loss") for name, _ in built)

    def _loss_parameter(self, param: cst.Param) -> bool:
        """A parameter that is a torch.nn loss: annotated as one (`criterion:
        nn.MSELoss`), or filled with one by every call of its function, all of them in
        this file (`valid(model, loader, nn.CrossEntropyLoss())`, or a name bound to
        one there): `def valid(model, loader, criterion)`."""
        annotation = param.annotation
        if annotation is not None:
            built = _torch_nn_builds(self.index, [cst.Call(func=annotation.annotation)])
            return built is not None and built[0][0].endswith("Loss")
        function = self.index.scope_of(param)
        if type(function) is not cst.FunctionDef or self.summaries is None:
            return False
        if param in self._asking_for_losses:
            return False  # a recursive helper handing its own parameter on
        self._asking_for_losses.add(param)
        try:
            arguments = self.summaries.caller_arguments.here(function, param.name.value)
            return (
                bool(arguments)
                and all(
                    a.value is not None and self._builds_a_loss(a.value, a.site) for a in arguments
                )
                and not self.summaries.caller_arguments.called_elsewhere(function)
            )
        finally:
            self._asking_for_losses.discard(param)

    def _builds_a_loss(self, value: cst.BaseExpression, site: cst.CSTNode) -> bool:
        if type(value) is cst.Name:
            return self.torch_loss_instance(value, site)
        built = _torch_nn_builds(self.index, [value])
        return built is not None and built[0][0].endswith("Loss")

    def trainable_layer(self, func: cst.CSTNode, use: cst.CSTNode) -> bool:
        """Is `func` (a name or `self.x`) proven to be a torch.nn layer with trainable
        parameters at `use`: every binding of it constructs one weighted layer class
        (`nn.Linear`, `nn.Conv2d`, ..., not with `affine=False`), and nothing in the file
        may freeze it (`requires_grad_`, a loop over its parameters that sets
        `requires_grad`) or hands the module itself to other code (`freeze(student)`)."""
        name = dotted_name(func)
        if name is None:
            return False
        constructors = self.tensors.module_constructors(func, use)
        if not constructors:
            return False
        if "." not in name:
            bindings = self.bindings_of(name, use)
            if len(bindings) != len(constructors) or not all(
                type(b) is cst.Assign for b in bindings
            ):
                return False  # also a parameter, a loop target, an import...
        built = _torch_nn_builds(self.index, constructors)
        if built is None:
            return False
        for layer, value in built:
            if layer not in WEIGHTED_LAYERS:
                return False
            for arg in value.args:
                if arg.star or (
                    arg.keyword is not None
                    and arg.keyword.value in NO_AFFINE_FLAGS
                    and not keyword_is_true(value, arg.keyword.value)
                ):
                    return False
        if "." in name:
            return (None, name) not in self._maybe_frozen()
        local = self.index.scope_of(use)
        # frozen in this function, a function nested in it, or at module level
        return not any(
            frozen == name
            and scope is not None
            and (scope is self.index.module or self.index.is_inside(scope, local))
            for scope, frozen in self._maybe_frozen()
        )

    def _maybe_frozen(self) -> set[tuple[cst.CSTNode | None, str]]:
        """(scope, name) of modules that this file may freeze or hand to other code; the
        scope is None for an attribute (`self.student`), which any function may reach."""
        if self._frozen is not None:
            return self._frozen
        found: set[tuple[cst.CSTNode | None, str]] = set()

        def add(expr: cst.CSTNode, at: cst.CSTNode) -> None:
            name = dotted_name(expr)
            if name is not None:
                found.add((None if "." in name else self.index.scope_of(at), name))

        for node in self.index.nodes:
            if type(node) is cst.Call:
                func = node.func
                if type(func) is cst.Attribute and func.attr.value in FREEZING_METHODS:
                    add(func.value, node)
                for arg in node.args:
                    add(arg.value, node)  # `freeze(student)`, `DDP(student)`
            elif type(node) is cst.For and type(node.iter) is cst.Call:
                iterated = node.iter.func
                if type(iterated) is cst.Attribute and any(
                    type(inner) is cst.Name and inner.value in REQUIRES_GRAD_NAMES
                    for inner in self.index.walk(node.body)
                ):
                    add(iterated.value, node)  # `for p in m.parameters(): p.requires_grad = ...`
        self._frozen = found
        return found

    def _stored_into(self, scope: cst.CSTNode) -> dict[str, list[_Store]]:
        """Every write into a container in the scope (and the functions nested in it),
        by the container's name: the value it puts there (an element for `append`, an
        iterable's elements for `extend`, the value of `name[k] = v`), None when that
        cannot be told (`update`, `name[k] += v`)."""
        stores = self._stores.get(scope)
        if stores is None:
            stores = {}
            root = scope.body if isinstance(scope, (cst.FunctionDef, cst.Lambda)) else scope
            for node in self.index.of_types_in(root, cst.Call, cst.Assign, cst.AugAssign):
                if type(node) is cst.Call and type(node.func) is cst.Attribute:
                    method = node.func.attr.value
                    if method in STORING_METHODS:
                        receiver = dotted_name(node.func.value)
                        if receiver is not None:
                            args = node.args
                            stored = None
                            if method in ELEMENT_STORING_METHODS and args and not args[-1].star:
                                stored = args[-1].value
                            elif method == "extend" and len(args) == 1 and not args[0].star:
                                stored = args[0].value
                            stores.setdefault(receiver, []).append((stored, node))
                elif isinstance(node, (cst.Assign, cst.AugAssign)):
                    targets = (
                        [t.target for t in node.targets]
                        if isinstance(node, cst.Assign)
                        else [node.target]
                    )
                    for target in targets:
                        if type(target) is cst.Subscript:
                            base = dotted_name(target.value)
                            if base is not None:
                                value = node.value if type(node) is cst.Assign else None
                                stores.setdefault(base, []).append((value, node))
            self._stores[scope] = stores
        return stores

    def _backward_creates_graph(self) -> bool:
        """Does some `backward(...)` of this file pass a `create_graph` that is not
        literally False? Then a `.grad` may carry history."""
        if self._graph_grads is None:
            self._graph_grads = False
            for call in self.index.calls:
                func = call.func
                if (
                    type(func) is cst.Attribute
                    and func.attr.value == "backward"
                    or (self.index.qualified_name(func) == "torch.autograd.backward")
                ):
                    for arg in call.args:
                        if arg.star == "**" or (
                            arg.keyword is not None
                            and arg.keyword.value == "create_graph"
                            and not (
                                type(arg.value) is cst.Name and arg.value.value in ("False", "None")
                            )
                        ):
                            self._graph_grads = True
                    if len([a for a in call.args if a.keyword is None]) >= 3:
                        self._graph_grads = True  # `backward(g, True, True)`
        return self._graph_grads

    def _recording(self, use: cst.CSTNode) -> bool:
        return self.grad_mode is not None and self.grad_mode.mode_at(use) is GradMode.RECORDING

    def _definitely_tensor(self, expr: cst.CSTNode, use: cst.CSTNode) -> bool:
        value = self._expr(expr, use)
        return bool(value) and value <= _TENSORISH

    # -- inference tensors -------------------------------------------------------------

    def is_inference_tensor(self, expr: cst.CSTNode, use: cst.CSTNode) -> bool:
        """Is `expr` proven to be an inference tensor when `use` runs: computed (by a
        torch operation, a torch.nn layer, a tensor factory) under
        `torch.inference_mode()`, or a view, an index or a `.detach()` of one, through
        every binding that reaches `use`?"""
        return self._inference(expr, use, set())

    def _inference_bound(self) -> set[str]:
        """Names assigned somewhere under `inference_mode` (a `with` block or a decorated
        function): only they can hold an inference tensor outside that mode."""
        if self._inference_names is None:
            names: set[str] = set()
            grad_mode = self.grad_mode
            if grad_mode is not None:
                for node in self.index.nodes:
                    body = None
                    if type(node) is cst.With and any(
                        grad_mode._is_inference(item.item) for item in node.items
                    ):
                        body = node.body
                    elif type(node) is cst.FunctionDef and any(
                        grad_mode._is_inference(d.decorator) for d in node.decorators
                    ):
                        body = node.body
                    if body is not None:
                        for inner in self.index.walk(body):
                            if type(inner) is cst.Assign:
                                names.update(_assigned_names(inner))
                        names.add("")  # entered, even if nothing is assigned there
                # and the names bound to views of those (`flat = target.detach().view(-1)`)
                aliases = (
                    [
                        (bound, _view_base(node.value))
                        for node in self.index.nodes
                        if type(node) is cst.Assign
                        for bound in _assigned_names(node)
                    ]
                    if names
                    else []
                )
                changed = bool(names)
                while changed:
                    changed = False
                    for bound, base in aliases:
                        if base in names and bound not in names:
                            names.add(bound)
                            changed = True
            self._inference_names = names
        return self._inference_names

    def _inference(self, expr: cst.CSTNode, use: cst.CSTNode, active: set) -> bool:
        grad_mode = self.grad_mode
        if grad_mode is None or not self._inference_bound():
            return False
        expr = _view_root(expr)
        if grad_mode.in_inference_mode(use):
            qualified = self.index.qualified_name(getattr(expr, "func", None)) or ""
            if qualified in FRESH_TENSOR_FUNCTIONS or self._computes(expr, use):
                return True
        if type(expr) is not cst.Name or expr.value not in self._inference_bound():
            return False
        scope = self.index.scope_of(use)
        bindings = self._value_bindings(scope).get(expr.value)
        if not bindings:
            return False
        reaching = self.index.reaching(bindings, use)
        if not reaching:
            return False
        for binding in reaching:
            key = (binding, expr.value)
            if key in active:
                return False
            if type(binding) is not cst.Assign or len(binding.targets) != 1:
                return False
            found = paired_value(binding.targets[0].target, binding.value, expr.value)
            if found is None or found[1] is not None:
                return False
            active.add(key)
            try:
                if not self._inference(found[0], binding, active):
                    return False
            finally:
                active.discard(key)
        return True

    # -- expressions -------------------------------------------------------------------

    def _expr(self, expr: cst.CSTNode, use: cst.CSTNode) -> Value:
        # exact types (no subclasses): isinstance on LibCST's ABCs is slow when it fails
        if type(expr) in _LITERALS:
            return PYTHON
        if type(expr) is cst.Name:
            if bool_literal(expr) is not None:
                return PYTHON
            if expr.value == "None":
                return NONE
            return self.of_name(expr.value, use)
        if type(expr) is cst.Attribute:
            return self._attribute(expr, use)
        if type(expr) is cst.Call:
            return self._call(expr, use)
        if type(expr) is cst.BinaryOperation:
            return combine(self._expr(expr.left, use), self._expr(expr.right, use))
        if type(expr) is cst.UnaryOperation:
            if type(expr.operator) is cst.Not:
                return PYTHON
            return combine(self._expr(expr.expression, use))
        if type(expr) is cst.BooleanOperation:
            return self._expr(expr.left, use) | self._expr(expr.right, use)
        if type(expr) is cst.IfExp:
            return self._expr(expr.body, use) | self._expr(expr.orelse, use)
        if type(expr) is cst.Comparison:
            if all(isinstance(c.operator, COMPARISON_OPS) for c in expr.comparisons):
                if all(isinstance(c.operator, ELEMENTWISE_COMPARISONS) for c in expr.comparisons):
                    operands = [expr.left, *(c.comparator for c in expr.comparisons)]
                    if any(self._definitely_tensor(o, use) for o in operands):
                        return TENSOR  # `(pred.argmax(1) == y)` is a bool tensor
                return PYTHON | TENSOR  # a bool, or a bool tensor: no history either way
            return UNKNOWN
        if type(expr) is cst.Subscript:
            keyed = keyed_name(expr)
            if keyed is not None and self._value_bindings(self.index.scope_of(use)).get(keyed):
                return self._keyed_value(expr, keyed, use)
            # None cannot be subscripted: what is indexed is the rest
            container = self._expr(expr.value, use) - NONE
            if container and container <= _TENSORISH | {Kind.UNKNOWN}:
                return frozenset(Kind.GRAPH if k is Kind.LEAF else k for k in container)
            return _element(container)
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            out: set[Kind] = set()
            for element in expr.elements:
                out |= self._expr(element.value, use)
            return frozenset(out) or PYTHON
        if type(expr) in ELEMENT_COMPREHENSIONS:
            # `[m(x).argmax(1).item() for x in xs]`: what each element is
            return self._expr(expr.elt, expr.elt) or PYTHON  # type: ignore[attr-defined]
        if type(expr) is cst.Dict:
            return UNKNOWN
        if type(expr) is cst.Lambda:
            return OBJECT
        if type(expr) is cst.StarredElement:
            return self._expr(expr.value, use)
        return UNKNOWN

    def _keyed_value(self, expr: cst.Subscript, keyed: str, use: cst.CSTNode) -> Value:
        """`out["loss"]` after `out["loss"] = out["loss"].detach()`: each key of a dict
        written with a literal key is a binding of its own, killed by a rebinding of the
        whole dict."""
        table = self._value_bindings(self.index.scope_of(use))
        base = dotted_name(expr.value) or ""
        key_bindings = table.get(keyed, [])
        base_bindings = table.get(base, [])
        out: set[Kind] = set()
        for node in self.index.reaching(key_bindings + base_bindings, use):
            if node in key_bindings:
                out |= self.of_binding(node, keyed)
            elif type(node) is cst.Assign and type(node.value) is cst.Dict:
                entry = _dict_entry(node.value, keyed[len(base) + 1 : -1])
                out |= self._expr(entry, node) if entry is not None else UNKNOWN
            else:
                out |= UNKNOWN
        return frozenset(out) or UNKNOWN

    def _attribute(self, expr: cst.Attribute, use: cst.CSTNode) -> Value:
        attr = expr.attr.value
        if attr in METADATA_ATTRIBUTES:
            return PYTHON
        if attr in _GRAPH_FREE_ATTRIBUTES:
            if attr == "grad" and self._backward_creates_graph():
                return UNKNOWN | NONE  # `backward(create_graph=True)` gives `.grad` history
            return TENSOR | NONE
        if attr in HISTORY_KEEPING_ATTRIBUTES:
            return combine(self._expr(expr.value, use))
        name = dotted_name(expr)
        if name is not None:
            head = name.split(".")[0]
            qualified = self.index.qualified_name(expr) or name
            if head in self.index.aliases or qualified.startswith("torch."):
                return PYTHON  # `torch.float32`, `np.pi`, `args.lr`-like constants of modules
            if name.startswith("self.") and name.count(".") == 1:
                return self._self_attribute(name, use)
            scope = self.index.scope_of(use)
            if self._value_bindings(scope).get(name):
                return self.of_name(name, use)
        base = self._expr(expr.value, use)
        if base == PYTHON:
            return PYTHON  # `args.bptt` of an argparse namespace
        if base and base <= TENSOR | PYTHON:
            # a batch a loader handed over, an environment's record, or another value
            # without history: what it holds was made outside autograd too (`data.x`,
            # `data.num_graphs`, `experience.reward`)
            return TENSOR | PYTHON
        return UNKNOWN

    def _self_attribute(self, name: str, use: cst.CSTNode) -> Value:
        """`self.env` in a method: what every binding of the attribute in its class gives
        it, when each is a plain assignment proven to hold no history (`self.env =
        gym.make(env_id)`, `self.gamma = gamma` of a literal default); else UNKNOWN."""
        scope = self.index.scope_of(use)
        cls = self.index.enclosing_class(scope) if type(scope) is cst.FunctionDef else None
        if cls is None or name.count(".") != 1:
            return UNKNOWN
        key = (cls, name)
        if key in self._attributes:
            return self._attributes[key] or UNKNOWN
        self._attributes[key] = None  # met again while being solved
        found = UNKNOWN
        values: list[Value] = []
        bindings = self.bindings.attribute_bindings(cls, name) or ()
        environments = _environments_of(b.value for b in bindings)
        for binding in bindings:
            node = binding.node
            if (
                binding.kind is not BindingKind.ASSIGN
                or not binding.whole
                or binding.value is None
                or type(node) is not cst.Assign
            ):
                values = []
                break
            if _receiver(binding.value) in environments:
                values.append(PYTHON | TENSOR)  # an environment hands back data
                continue
            values.append(self._bound(binding.value, node))
        if values and all(is_graph_free(v) for v in values):
            found = frozenset().union(*values)
        self._attributes[key] = found
        return found

    def _call(self, call: cst.Call, use: cst.CSTNode) -> Value:
        func = call.func
        qualified = self.index.qualified_name(func) or ""
        method = func.attr.value if type(func) is cst.Attribute else None
        if qualified in PYTHON_VALUE_BUILTINS:
            return PYTHON
        if (
            qualified == "next"
            and call.args
            and call.args[0].keyword is None
            and self._iterates_a_data_loader(call.args[0].value, use)
        ):
            return TENSOR  # `next(iter(loader))`: a batch of data, no history
        if (
            qualified in ELEMENT_PRESERVING_BUILTINS
            and len(call.args) == 1
            and call.args[0].keyword is None
            and call.args[0].star == ""
        ):
            # `tuple(image for _ in range(4))`: the same elements, in another container
            return self._expr(call.args[0].value, use)
        if qualified in ARITHMETIC_BUILTINS:
            args = [self._expr(a.value, use) for a in call.args]
            if call.args and all(a.star == "" for a in call.args):
                return combine(*args)
            return UNKNOWN
        if qualified.startswith(PYTHON_VALUE_MODULES):
            return PYTHON
        if (
            method in FRAMEWORK_COLLECTIVES
            and type(func) is cst.Attribute
            and (dotted_name(func.value) or "").rsplit(".", 1)[-1] in FRAMEWORK_RECEIVERS
            and call.args
            and call.args[0].keyword is None
            and call.args[0].star == ""
        ):
            return self._expr(call.args[0].value, use)
        if qualified in PARAMETER_CLASSES:
            return LEAF
        if qualified in VARIABLE_CLASSES and keyword_is_true(call, "requires_grad"):
            # `Variable(t, requires_grad=True)`: a new leaf that requires grad, whatever
            # `t` is (measured on torch 2.13: `is_leaf`, no `grad_fn`, even of a `t`
            # with history)
            return LEAF
        if qualified in VARIABLE_CLASSES and call.args and not call.args[0].keyword:
            # `Variable(t)`, `Variable(t, volatile=True)`: a new leaf holding `t`'s data,
            # without its history and not requiring grad (measured on torch 2.13: no
            # `grad_fn` even of a `t` with one, and a backward through it raises "does
            # not require grad")
            return TENSOR
        if qualified in AUTOGRAD_GRAD:
            # gradients carry history only when asked to (`create_graph=True`)
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "create_graph":
                    flag = arg.value
                    if type(flag) is cst.Name and flag.value in ("False", "None"):
                        return TENSOR | NONE
                    return UNKNOWN
            if len(call.args) < 6 or any(a.keyword is not None for a in call.args):
                return TENSOR | NONE
            return UNKNOWN
        if (
            qualified in LEGACY_TENSOR_CONSTRUCTORS
            and sum(1 for a in call.args if a.keyword is None and a.star == "") >= 2
            and not keyword_is_true(call, "requires_grad")
        ):
            # `torch.FloatTensor(batch_size, noise_dim)`: sizes, a new uninitialised tensor
            return TENSOR
        if (
            qualified in AS_TENSOR_FUNCTIONS
            and call.args
            and not keyword_is_true(call, "requires_grad")
        ):
            # `torch.as_tensor(t)` keeps `t`'s graph (measured); of plain data, a tensor
            return combine(TENSOR, self._expr(call.args[0].value, use))
        if qualified in FRESH_TENSOR_FUNCTIONS:
            return LEAF if keyword_is_true(call, "requires_grad") else TENSOR
        if qualified.startswith("torch.") and keyword_is_true(call, "requires_grad"):
            # only a factory takes `requires_grad` (`torch.normal(0, 0.01, size=(784, 10),
            # requires_grad=True)`, d2l's weights; `torch.exp(x, requires_grad=True)` is a
            # TypeError): a new leaf
            return LEAF
        if (
            qualified.startswith("torch.nn.functional.")
            or qualified in GRAPH_PRESERVING_LIBRARY_FUNCTIONS
        ) and call.args:
            # a functional op of its tensors (torch's, or einops' `rearrange`): history
            # only where they (any of them, keywords too: `weight=`, `target=`) have it
            if all(a.star == "" for a in call.args):
                return combine(TENSOR, *(self._expr(a.value, use) for a in call.args))
            return UNKNOWN
        if method is not None:
            if method in _PYTHON_METHODS:
                return PYTHON
            if method in _GRAPH_FREE_METHODS:
                return TENSOR
            if method in FRESH_TENSOR_METHODS and not self._names_import(func.value):  # type: ignore[attr-defined]
                # `batch.new(n)` is a new tensor of the receiver's type (`Image.new` is not)
                return LEAF if keyword_is_true(call, "requires_grad") else TENSOR
            # None has no methods: where the call runs, the receiver is the rest
            receiver = self._expr(func.value, use) - NONE  # type: ignore[attr-defined]
            if not receiver:
                return NOTHING  # met again while being solved: no new possibility yet
            plain = receiver <= {Kind.PYTHON} or (
                # data that is an array or a tensor without history (what an environment
                # hands back): its methods, but `requires_grad_()`, make none either
                receiver <= {Kind.PYTHON, Kind.TENSOR} and method != REQUIRES_GRAD_METHOD
            )
            if plain and not self._names_import(func.value):  # type: ignore[attr-defined]
                # A method of a plain value (a string, an argparse namespace, a numpy
                # array, an environment) computes from it and its arguments: given none
                # with history, it hands back none (`env.step(action)`, action a number).
                # Not a function of an imported module (`T.nn.LSTMCell(4, 8)`).
                arguments = self._plain_arguments(call, use)
                if arguments is not None:
                    return combine(receiver, *arguments)
            if (
                method in SELF_RETURNING_MODULE_METHODS
                and receiver
                and receiver <= {Kind.MODULE, Kind.OBJECT}
            ):
                return receiver
            if method == REQUIRES_GRAD_METHOD:
                return LEAF
            if method in SHAPE_ONLY_ARGUMENT_METHODS and not receiver & {Kind.MODULE, Kind.OBJECT}:
                # `ones.expand_as(probs)`: only the shape (or type) of `probs` is read
                return receiver
            if (
                receiver <= {Kind.LEAF, Kind.GRAPH}
                and method in DIFFERENTIABLE_METHODS
                and self._recording(use)
            ):
                return GRAPH  # `student(x).softmax(-1)`: differentiable in its receiver
            if receiver and receiver <= {Kind.TENSOR} and method in MOVING_METHODS:
                return TENSOR  # `x.to(device)` of a batch: moved, still without history
            if receiver and receiver <= {Kind.TENSOR} and not qualified.startswith("torch."):
                # A method of a tensor without history, on arguments without history
                args = [self._expr(a.value, use) for a in call.args]
                return combine(TENSOR, *args)
        if self.tensors._is_module_constructor(qualified):
            return MODULE
        if self.trainable_layer(func, use) and self._recording(use):
            # `student(x)` of an `nn.Linear` nobody freezes: its weight requires grad
            return GRAPH
        if self.torch_loss_instance(func, use):
            # `criterion(pred, y)` of an `nn.L1Loss()`: its output is computed from its
            # inputs (not a class instantiated by a capitalised name, `L1loss(...)`)
            output = combine(TENSOR, *(self._expr(a.value, use) for a in call.args))
            return output if self._recording(use) else (output - GRAPH) | TENSOR
        if self.summaries is not None:
            # A helper of this file that hands back nothing with history (`return
            # loss.item()` or `loss.detach()` after its own backward)
            local = self.summaries.function_run_by(call)
            returned = self._graph_free_return(local) if local is not None else None
            if returned is not None:
                return returned
            # an instance of this file's module class, whose `forward` hands back
            # nothing with history (a trainer module's `return loss.item()`)
            forward = self.summaries.forward_of_instance(call) if local is None else None
            returned = self._graph_free_return(forward) if forward is not None else None
            if returned is not None:
                return returned
            if local is not None:
                passed = self._arithmetic_of_arguments(local, call, use)
                if passed is not None:
                    return passed
            # A helper of another project file: `@torch.no_grad()` or returning `.item()`
            external = self.summaries.resolve_external(call)
            if external is None:
                # a method (or, called, the `forward`) of an instance of a project class:
                # what it computes from the object's weights too, unless it makes numbers
                # (a trainer module's `return loss.item()`) or runs under no_grad
                if type(func) is cst.Attribute:
                    imported = self.summaries.imported_method_of_instance(call)
                    of_instance = imported[1] if imported is not None else None
                else:
                    of_instance = self.summaries.imported_forward_of_instance(call)
                if of_instance is not None and of_instance.returns_python:
                    return PYTHON
                if of_instance is not None and of_instance.no_grad:
                    return TENSOR | PYTHON | NONE
            if external is not None:
                if external.returns_python or external.number_params:
                    return PYTHON  # `.item()`, or `to_numpy(t)`: numbers of its argument
                if external.no_grad:
                    return TENSOR | PYTHON | NONE
                carried = self._carried_arguments(call, external, use)
                if carried is not None:
                    return carried
        last = qualified.rsplit(".", 1)[-1]
        if last in OPTIMIZER_CLASSES or (
            qualified.startswith(OPTIMIZER_NAMESPACES) and last[:1].isupper()
        ):
            # `torch.optim.Adam(model.parameters())`, a scheduler: an object, not a tensor
            return OBJECT
        if type(func) is cst.Name and self._names_a_class_of_this_file(func, use):
            # `baseline(model=model)`: an instance, whatever the class is named like
            return OBJECT
        owner = qualified.rsplit(".", 2)[-2] if qualified.count(".") >= 1 else ""
        if (
            owner[:1].isupper()
            and not owner.isupper()
            and not owner.endswith(TENSOR_CLASS_SUFFIXES)
            and not qualified.startswith("torch.")
            and (last.startswith("from_") or last in ("load", "create", "build"))
        ):
            # `AutoencoderKL.from_pretrained(...)`: a class's factory makes an instance
            return OBJECT
        if (
            last[:1].isupper()
            and not last.isupper()
            and not last.endswith(TENSOR_CLASS_SUFFIXES)
            and not qualified.startswith("torch.")
        ):
            # `LinearValue(...)`, `ReplayBuffer(...)`: an instance of a class
            return OBJECT
        if (
            qualified.startswith("torch.")
            and not qualified.startswith(NOT_COMPUTATION_NAMESPACES)
            and not (last[:1].isupper() and not last.endswith(TENSOR_CLASS_SUFFIXES))
        ):
            # (not `torch.distributed.rpc.RRef(...)` or `torch.distributions.Normal(...)`:
            # objects, whatever they are built from)
            # a torch function of its arguments: history only where they have it
            args = [self._expr(a.value, use) for a in call.args if a.keyword is None]
            if args and all(a for a in args):
                return combine(TENSOR, *args)
        return UNKNOWN

    def _carried_arguments(
        self, call: cst.Call, external: ExternalFunction, use: cst.CSTNode
    ) -> Value | None:
        """What another file's helper hands back that it computes, with torch alone, from
        its arguments (`to_tensor(v)`: `torch.FloatTensor(v)`, on the GPU or not): a
        tensor with the history of what it is given. None when it carries none of them,
        or one of them is not passed as written."""
        if not external.carried_params or self.summaries is None:
            return None
        values: list[Value] = []
        for param in external.carried_params:
            argument = self.summaries.external_argument(call, external, param)
            if argument is None:
                return None
            values.append(self._expr(argument, use))
        return combine(TENSOR, *values)

    def _runs_a_function_here(self, call: cst.Call) -> bool:
        """Does the call run a function or method this file defines?"""
        return self.summaries is not None and self.summaries.function_run_by(call) is not None

    def _names_a_class_of_this_file(self, func: cst.Name, use: cst.CSTNode) -> bool:
        """Is every binding of the called name that reaches the call a `class`
        statement of this file? (A module class is answered before, as MODULE.)"""
        if not self.index.classes:
            return False
        bindings = self.reaching_bindings(func.value, use)
        return bool(bindings) and all(type(b) is cst.ClassDef for b in bindings)

    def _names_import(self, expr: cst.CSTNode) -> bool:
        """Does the dotted name start with an imported module's alias (`T.nn`, `np`)?"""
        name = dotted_name(expr)
        return name is not None and name.split(".")[0] in self.index.aliases

    def _plain_arguments(self, call: cst.Call, use: cst.CSTNode) -> list[Value] | None:
        """The values of the call's arguments when every one is proven to hold no
        history (keywords too); None when one may, or is starred."""
        values = []
        for arg in call.args:
            if arg.star:
                return None
            value = self._expr(arg.value, use)
            if not is_graph_free(value):
                return None
            values.append(value)
        return values

    def _reduction_with_indices(self, call: cst.Call) -> bool:
        """Does the call hand back (values, indices): `x.topk(k)`, `torch.sort(x)`,
        `x.max(1)`, `torch.max(x, dim=1)` (a dimension written out: `torch.max(a, b)` is
        elementwise), torch's, not a method of this file's own classes of that name nor
        of an imported module (`np.sort`)? The indices carry no history."""
        func = call.func
        if type(func) is not cst.Attribute or func.attr.value not in REDUCTIONS_WITH_INDICES:
            return False
        if not (self.index.qualified_name(func) or "").startswith("torch."):
            root = dotted_name(func.value)
            head = root.partition(".")[0] if root is not None else None
            if head is not None and head in self.index.imported_from:
                return False  # a module's function, or an imported object's method
            if self._runs_a_function_here(call):
                return False
        return func.attr.value not in MAX_MIN_METHODS or max_along_a_dimension(call, self.index)

    def _graph_free_element(self, call: cst.Call, place: int, length: int) -> Value | None:
        """`action, log_prob = policy.act(state)`: what the call's function of this file
        hands back at that place of the tuple it returns, when every `return` of it is
        a tuple of that length whose element there is proven to hold no history
        (`return action.item(), dist.log_prob(action)`); None otherwise."""
        if self.summaries is None:
            return None
        func = self.summaries.function_run_by(call)
        if func is None:
            return None
        key = (func, place, length)
        if key in self._free_elements:
            return self._free_elements[key]
        self._free_elements[key] = None  # a function that calls itself
        found: Value | None = None
        values: list[Value] = []
        for node in self.index.walk(func.body):
            if type(node) is not cst.Return or self.index.scope_of(node) is not func:
                continue
            returned = node.value
            if (
                not isinstance(returned, (cst.Tuple, cst.List))
                or len(returned.elements) != length
                or any(type(e) is cst.StarredElement for e in returned.elements)
            ):
                values = []
                break
            values.append(self._expr(returned.elements[place].value, node))
        if values and all(is_graph_free(v) for v in values):
            found = frozenset().union(*values)
        self._free_elements[key] = found
        return found

    def _stored_values(self, name: str, binding: cst.CSTNode, literal: cst.BaseExpression) -> Value:
        """What a container made by `literal` and filled in its scope holds: its own
        elements and every value stored into it (`rewards.append(reward)`,
        `xs.extend(ys)`, `xs.insert(0, x)`, `d[k] = v`); UNKNOWN when a store is one
        whose value cannot be told (`d.update(...)`, `xs[i] += x`)."""
        if type(literal) is not cst.List and type(literal) is not cst.Set:
            return UNKNOWN  # a dict's or a comprehension's own entries are not followed
        out: set[Kind] = set(self._expr(literal, binding)) if literal.elements else set()
        for stored, at in self._stored_into(self.index.scope_of(binding)).get(name, ()):
            if stored is None:
                return UNKNOWN
            out |= self._expr(stored, at)
        return frozenset(out) or PYTHON

    def returns_graph_free(self, func: cst.FunctionDef) -> bool:
        """Is every `return` of the function proven to hold no history: a forward that
        returns `argmax(...)` or a detached tensor hands its caller nothing that
        requires grad?"""
        return self._graph_free_return(func) is not None

    def _graph_free_return(self, func: cst.FunctionDef) -> Value | None:
        """What the function hands back when every `return` of it is proven to hold no
        history (a Python value, a detached tensor, None); None otherwise."""
        if func in self._free_returns:
            return self._free_returns[func]
        self._free_returns[func] = None  # a function that calls itself
        returns = [
            node
            for node in self.index.walk(func.body)
            if type(node) is cst.Return and self.index.scope_of(node) is func
        ]
        values = [
            PYTHON
            if self._returns_plain_tested(r)
            else self._expr(r.value, r)
            if r.value is not None
            else NONE
            for r in returns
        ]
        found: Value | None = None
        if values and all(is_graph_free(v) for v in values):
            found = frozenset().union(*values)
        self._free_returns[func] = found
        return found

    def _passed_at_every_call(self, param: cst.Param) -> Value | None:
        """What the calls of the parameter's function, every one of them in this file (a
        notebook's or a script's helper), give it: a number or string literal at every
        call is a number, for a method too; for a module-level function, any plain value
        known at every call (`train(base_rates)` after `base_rates = get_base_rates()`, a
        numpy array): context flows from the callers. None when a call is out of sight,
        the parameter is handed anything that may carry a graph or be a module, or the
        question is already being asked (a recursive function)."""
        summaries = self.summaries
        func = self.index.parent.get(self.index.parent.get(param))
        if summaries is None or type(func) is not cst.FunctionDef:
            return None
        arguments = summaries.caller_arguments
        sites = arguments.here(func, param.name.value)
        if not sites:
            return None
        if all(type(site.value) in _LITERALS for site in sites):
            return None if arguments.called_elsewhere(func) else PYTHON
        if self.index.enclosing_class(func) is not None or param in self._asking_callers:
            return None
        if any(site.value is None for site in sites):
            return None
        self._asking_callers.add(param)
        try:
            passed = frozenset(
                kind
                for site in sites
                for kind in self._expr(site.value, site.site)  # type: ignore[arg-type]
            )
        finally:
            self._asking_callers.discard(param)
        # plain values only: a tensor handed in may gain history after it was made
        # (`outputs[t] = decoder(x)` into a buffer of zeros), which values does not follow
        if not passed or not passed <= {Kind.PYTHON, Kind.NONE}:
            return None
        if arguments.called_elsewhere(func):
            return None
        return passed

    def _arithmetic_of_arguments(
        self, func: cst.FunctionDef, call: cst.Call, use: cst.CSTNode
    ) -> Value | None:
        """`normalize(smooth / epoch)` of `def normalize(image): return (image -
        image.min()) / (image.max() - image.min())`: a module function whose every
        `return` is arithmetic of its parameters and of local values without history
        (`mean = batch.data.new(...)`, then `return batch - mean`) hands back what that
        arithmetic on the arguments gives (numbers of numbers, history of history). A
        parameter changed in place by such a value (`batch -= mean`) is still the
        argument as far as history goes. None otherwise."""
        if self.summaries is None or self.index.enclosing_class(func) is not None:
            return None
        params = {p.name.value for p in all_params(func.params)}

        def plain(name: cst.Name) -> bool:
            return is_graph_free(self._expr(name, name))

        read: set[str] = set()
        returns = 0
        for node in self.index.walk(func.body):
            if type(node) is not cst.Return or self.index.scope_of(node) is not func:
                continue
            returns += 1
            if node.value is None or not _arithmetic_of(node.value, params, read, plain):
                return None
        if not returns or not read:
            return None
        for name in read:
            for binding in self.bindings_of(name, func.body):
                if type(binding) is cst.Param:
                    continue
                if type(binding) is cst.AugAssign and is_graph_free(
                    self._expr(binding.value, binding)
                ):
                    continue
                return None  # a parameter rebound in the body (`h = cell(x, h)`) is no argument
        summary = self.summaries.of(func)
        operands: list[Value] = []
        for name in sorted(read):
            argument = summary.forwarded_argument(call, name)
            if argument is None:
                return None  # a default, or a star argument: not told here
            operands.append(self._expr(argument, use))
        return combine(*operands)

    def _returns_plain_tested(self, statement: cst.Return) -> bool:
        """`return x` in the block of an `if` whose test shows `x` is a numpy array or a
        Python number (`if isinstance(x, np.ndarray): return x`): it hands back plain data."""
        if type(statement.value) is not cst.Name:
            return False
        block = self.index.parent.get(self.index.parent.get(statement))
        branch = self.index.parent.get(block) if block is not None else None
        if type(branch) is not cst.If or branch.body is not block:
            return False
        return _tests_a_plain_type(branch.test, statement.value.value, self.index)


# `x.requires_grad_()` as a statement makes `x` a leaf that requires grad from there on
_VALUE_BINDINGS = PYTHON_BINDINGS | {BindingKind.KEYED, BindingKind.REQUIRES_GRAD}


def _assigned_names(node: cst.Assign) -> list[str]:
    """The names an assignment binds (not the keys it writes: `out["k"] = ...`)."""
    return [b.name for b in bindings_of_node(node) if b.kind in _NAME_ASSIGNMENTS]


_NAME_ASSIGNMENTS = frozenset({BindingKind.ASSIGN, BindingKind.UNPACKED})


def _unpacked_place(target: cst.CSTNode, name: str) -> tuple[int, int] | None:
    """(place, length) of `name` in a flat tuple target (`a, b = ...`), without starred
    elements; None for any other target."""
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    names = [
        dotted_name(e.value) if type(e) is not cst.StarredElement else None for e in target.elements
    ]
    if None in names or names.count(name) != 1:
        return None
    return names.index(name), len(names)


def _dict_entry(literal: cst.Dict, key_source: str) -> cst.BaseExpression | None:
    for element in literal.elements:
        if type(element) is cst.DictElement and type(element.key) is cst.SimpleString:
            if element.key.value == key_source:
                return element.value
    return None


def _element(container: Value) -> Value:
    """An element unpacked from a value: plain from plain, else unknown."""
    if container and container <= {Kind.PYTHON, Kind.TENSOR}:
        return container
    return UNKNOWN


# Views, `.detach()` and `.data` share their base's storage and, for inference tensors,
# its inference-ness.
_SHARING_METHODS = VIEW_METHODS | {"detach"}


def _view_root(expr: cst.CSTNode) -> cst.CSTNode:
    """What a view, an index or a `.detach()` is taken of: `t` for `t.detach()[0]`."""
    return strip_views(expr, _SHARING_METHODS, TRANSPOSE_ATTRIBUTES | DETACHING_ATTRIBUTES)


def _view_base(expr: cst.CSTNode) -> str | None:
    """The name a view, an index or a `.detach()` is taken of: `t` for `t.detach()[0]`."""
    root = _view_root(expr)
    return root.value if type(root) is cst.Name else None


def _mutated_base(expr: cst.CSTNode) -> str | None:
    """The variable an in-place change reaches: `x` for `x`, `x[i]`, `x.view(-1)[0]`."""
    return dotted_name(strip_views(expr, ALIASING_CALLS, TRANSPOSE_ATTRIBUTES))


def _torch_nn_builds(
    index: FileIndex, constructors: list[cst.CSTNode]
) -> list[tuple[str, cst.Call]] | None:
    """(class name, call) of each constructor when every one builds a class of `torch.nn`
    itself (`nn.Linear(...)`, `torch.nn.L1Loss()`, maybe moved: `.to(device)`); None when
    one builds anything else."""
    found: list[tuple[str, cst.Call]] = []
    for constructor in constructors:
        value = built_module_call(constructor)
        if type(value) is not cst.Call:
            return None
        qualified = index.qualified_name(value.func) or ""
        if not qualified.startswith("torch.nn.") or qualified.count(".") != 2:
            return None
        found.append((qualified.rsplit(".", 1)[-1], value))
    return found


def _tests_a_plain_type(test: cst.BaseExpression, name: str, index: FileIndex) -> bool:
    """`isinstance(name, np.ndarray)`, `type(name) == float` (torch_api.PLAIN_VALUE_TYPES;
    every member of a tuple of types must be one)."""

    def plain(types: cst.BaseExpression) -> bool:
        members = [e.value for e in types.elements] if type(types) is cst.Tuple else [types]
        return bool(members) and all(index.qualified_name(m) in PLAIN_VALUE_TYPES for m in members)

    if type(test) is cst.Call and index.qualified_name(test.func) == "isinstance":
        args = test.args
        return (
            len(args) == 2
            and type(args[0].value) is cst.Name
            and args[0].value.value == name
            and plain(args[1].value)
        )
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        left, (comparison,) = test.left, test.comparisons
        return (
            type(comparison.operator) in (cst.Equal, cst.Is)
            and type(left) is cst.Call
            and index.qualified_name(left.func) == "type"
            and len(left.args) == 1
            and type(left.args[0].value) is cst.Name
            and left.args[0].value.value == name
            and plain(comparison.comparator)
        )
    return False


def _tests_a_tensor(test: cst.BaseExpression, name: str, index: FileIndex) -> bool:
    """`torch.is_tensor(name)` or `isinstance(name, torch.Tensor)` (a tuple of types
    holding one counts): true of every tensor."""
    if type(test) is not cst.Call or not test.args or type(test.args[0].value) is not cst.Name:
        return False
    if test.args[0].value.value != name:
        return False
    callee = index.qualified_name(test.func)
    if callee in TENSOR_TYPE_TESTS:
        return True
    if callee != "isinstance" or len(test.args) != 2:
        return False
    types = test.args[1].value
    candidates = [e.value for e in types.elements] if type(types) is cst.Tuple else [types]
    return any(index.qualified_name(t) in TENSOR_TYPES for t in candidates)


def _rebinds(body: cst.BaseSuite, name: str) -> bool:
    """Does one of the block's own statements (not a nested branch) assign `name`?"""
    if type(body) is not cst.IndentedBlock:
        return False
    for statement in body.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if type(small) is cst.Assign and any(
                type(t.target) is cst.Name and t.target.value == name for t in small.targets
            ):
                return True
    return False


def is_environment_reset(value: cst.CSTNode | None) -> bool:
    """`env.reset(...)`: an environment's first observation (torch_api.ENVIRONMENT_RESET)."""
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value == ENVIRONMENT_RESET
    )


def _environments_of(values: Iterable[cst.CSTNode | None]) -> set[str]:
    """The receivers that both `reset()` and `step(action)` are called on among the
    values one variable is bound to (`self.experience = self.env.reset()`, then
    `self.experience = self.env.step(action)`): environments, whose records hold data
    whatever the library; an optimizer has no `reset()`."""
    resets: set[str] = set()
    steps: set[str] = set()
    for value in values:
        receiver = _receiver(value)
        if receiver is None:
            continue
        if is_environment_reset(value):
            resets.add(receiver)
        elif is_environment_step(value):
            steps.add(receiver)
    return resets & steps


def _receiver(value: cst.CSTNode | None) -> str | None:
    """The dotted receiver of a method call, `self.env` of `self.env.step(a)`."""
    if type(value) is cst.Call and type(value.func) is cst.Attribute:
        return dotted_name(value.func.value)
    return None


def is_environment_step(value: cst.CSTNode | None) -> bool:
    """`env.step(action)`: an environment's step, known by its shape (torch_api), not
    by the library; unpacked into ENVIRONMENT_STEP_RESULTS or more, it is no optimizer's."""
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value == ENVIRONMENT_STEP
        and any(arg.keyword is None and arg.star == "" for arg in value.args)
    )


def max_along_a_dimension(call: cst.Call, index: FileIndex) -> bool:
    """`x.max(1)`, `x.max(dim=1)`, `torch.max(x, 1)`: a (values, indices) pair, whose
    indices hold no history; `torch.max(a, b)` of two tensors is elementwise."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value not in MAX_MIN_METHODS:
        return False
    if any(a.keyword is not None and a.keyword.value == "dim" for a in call.args):
        return True
    positional = [a.value for a in call.args if a.keyword is None]
    dimension = 1 if index.qualified_name(func) in MAX_MIN_FUNCTIONS else 0
    return len(positional) > dimension and _is_dimension(positional[dimension])


def _is_dimension(expr: cst.CSTNode) -> bool:
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        expr = expr.expression
    return type(expr) is cst.Integer
