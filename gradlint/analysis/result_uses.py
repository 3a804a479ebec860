"""Is a result only ever read as numbers? The question behind "inference that records a
graph for nothing" (GL012): a forward whose output ends, on every path, in `.item()`,
`.tolist()`, `float()`, an `argmax` or a comparison builds a graph that nobody can use.

The result is followed along def-use chains (a rebinding starts a new chain) and
through the operations that carry its history on (arithmetic, tensor methods, torch
functions, indexing, a loss module). Each path ends in one of:

- a *number*: `.item()`, `.tolist()`, `.numpy()`, `float(...)`, `argmax`/`argmin`, the
  indices of `max`/`min` along a dimension. `.numpy()` (or a numpy function) on a value
  that still requires grad raises "Can't call numpy() on Tensor that requires grad";
- a *cut* that holds no history either: a comparison, an integer cast, `.shape`, a
  truth test, an f-string, `print`, an index into another tensor;
- a discarded expression statement;
- a *helper* that only makes numbers of its argument: a function of this file (or the
  one every caller hands a parameter, `loss(net(X), y)` with `loss=squared_loss`),
  followed into its body from the parameter the argument binds, what it returns of the
  value coming back to that call; or an imported project function summarised as one
  (`to_np(t)`: `t.cpu().detach().numpy()` in `utils.py`);
- an *escape*: anything else. Returned, yielded, stored in an attribute, a container or
  a subscript, passed to a function gradlint cannot see into, read by a nested function
  or another scope, differentiated (`backward`, `autograd.grad`), a hook registered, an
  in-place change. One escape anywhere and the answer is "no": the graph may be used.

Precision first: the answer is "numbers only" only when every path is followed to its
end and at least one of them reads the value without its graph: a number, a cut that
reads it (a comparison, `.shape`, `print`), or a `.detach()` / `.data` that drops the
graph on purpose, after which nothing the value meets can use the graph. A result that
is merely dropped says nothing about intent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import libcst as cst

from gradlint.analysis.bindings import bindings_of_node
from gradlint.analysis.dataflow import ELEMENTWISE_COMPARISONS
from gradlint.analysis.grad_mode import callers_query
from gradlint.analysis.index import (
    ELEMENT_COMPREHENSIONS,
    FileIndex,
    keyword_is_true,
    own_method,
    target_names,
)
from gradlint.analysis.index import dotted_name as index_dotted
from gradlint.analysis.project import (
    ExternalFunction,
    MethodCall,
    MethodQuery,
    ProjectIndex,
    calls_read_as_numbers,
)
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.summary_facts import (
    ResultUse,
    argument_result_use,
    attribute_result_use,
    grad_api,
    method_result_use,
)
from gradlint.analysis.tensors import TensorFacts, all_params
from gradlint.analysis.torch_api import (
    ATTRIBUTE_HOOK_METHODS,
    DETACHING_ATTRIBUTES,
    DETACHING_METHODS,
    ELEMENT_STORING_METHODS,
    FRESH_TENSOR_FUNCTIONS,
    GRADLESS_LIBRARY_FUNCTIONS,
    GRADLESS_RESULTS,
    INDEX_METHODS,
    INSTANCE_DICT_ATTRIBUTE,
    LIBRARY_ROOTS,
    MAX_MIN_METHODS,
    METADATA_ATTRIBUTES,
    METADATA_METHODS,
    MODULE_API,
    NUMBER_BUILTINS,
    NUMBER_METHODS,
    NUMPY_BUFFER_BUILDERS,
    PAIRING_BUILTINS,
    PARAMETERLESS_LAYERS,
    REFLECTIVE_BUILTINS,
    REQUIRES_GRAD_METHOD,
    RESULT_PRESERVING_DECORATORS,
    SUMMARY_WRITER_METHODS,
    TRACKER_LOGGING_FUNCTIONS,
    VALUES_AND_INDICES_METHODS,
    called_implicitly,
    converts_with_numpy,
    is_test_assertion,
)
from gradlint.analysis.values import ValueAnalysis, max_along_a_dimension

_MAX_STEPS = 2000
# How many callers a parameter's module class is looked for through (`main` builds the
# criterion, `run_epoch` hands it on, `valid` calls it).
_PARAMETER_HOPS = 3


@dataclass
class NumberUses:
    """Where a result ends as numbers: the nodes that turn it into numbers, and those
    that call `.numpy()` (or a numpy function) while it still requires grad."""

    numbers: list[cst.CSTNode] = field(default_factory=list)
    numpy_raises: list[cst.CSTNode] = field(default_factory=list)
    # Reads that end the value without history and without making a number of it: a
    # comparison, `.shape`, `print`, a truth test. Enough, with no escape anywhere, to
    # show that the graph is built for nothing (`y = net(x); print(y.size())`).
    reads: list[cst.CSTNode] = field(default_factory=list)
    # `.detach()` / `.data`: the graph dropped on purpose. Whatever the detached value
    # then meets (a buffer, `save_image`, numpy) cannot use the graph.
    detaches: list[cst.CSTNode] = field(default_factory=list)
    # The calls in the project's other files of a function that returns the value, each
    # of which only reads it as numbers there (project.CallerContext.numbers_only).
    elsewhere: list[MethodCall] = field(default_factory=list)
    # Names the value is bound to and never read again (`y = model.sample(n)` in a
    # test): the graph is thrown away with the name, in a function that differentiates
    # nothing (where a hook or an attribute may carry it to a backward instead).
    unused: list[cst.CSTNode] = field(default_factory=list)
    # Of `numbers`, the calls of numpy or matplotlib functions (`np.asarray(y)`,
    # `plt.plot(x, y)`): they make an array of a tensor, and take an array as it is, so
    # they say "numbers" only of a value known to be a tensor there.
    numpy_calls: list[cst.CSTNode] = field(default_factory=list)
    # Lists kept on the instance the value is added to (`self.q_history` of
    # `self.q_history.append(q.max())`): every call's graph stays alive in them until
    # the class empties them, memory that grows with the run.
    kept: list[cst.CSTNode] = field(default_factory=list)

    @property
    def only_through_numpy(self) -> bool:
        """Is every way the value ends a numpy or matplotlib function?"""
        return not (self.reads or self.detaches or self.unused or self.elsewhere) and all(
            any(node is call for call in self.numpy_calls) for node in self.numbers
        )


class _Escapes(Exception):
    pass


class _Differentiated(_Escapes):
    """The value reaches something that needs its graph (a backward, `autograd.grad`,
    `requires_grad_`, a hook, a checkpoint, an optimizer): an escape even after a
    `.detach()`, since the code expects the graph there (GL009's bug, not a waste)."""


class ResultUses:
    def __init__(
        self,
        index: FileIndex,
        values: ValueAnalysis,
        tensors: TensorFacts,
        summaries: FunctionSummaries | None = None,
    ) -> None:
        self.index = index
        self.values = values
        self.tensors = tensors
        self.summaries = summaries
        self._reads: dict[str, list[cst.Name]] | None = None
        # name -> the scopes that declare it global or nonlocal (_read_elsewhere)
        self._declared: dict[str, list[tuple[cst.CSTNode, bool]]] | None = None
        self._read_elsewhere_memo: dict[tuple[cst.CSTNode, str], bool] = {}
        # The tables of scopes are keyed by id(scope): a scope is the file's module or
        # one of its functions or lambdas (index.scope_of), which the index keeps alive,
        # and LibCST's node hash is a Python call, asked some 15,000 times a run here.
        self._sinks: dict[int, bool] = {}  # through helpers
        # per function: its calls whose result is bound to a name, and whether one of
        # those names is never read
        self._bound_calls: dict[int, list[tuple[cst.Assign, str]]] = {}
        self._unread_memo: dict[int, bool] = {}
        self._direct_sinks: set[int] = set()  # scopes that make numbers themselves
        self._external_sinks: dict[str, bool] = {}  # imported name -> makes numbers
        self._scope_calls: dict[int, list[cst.Call]] | None = None
        self._number_helpers: dict[cst.FunctionDef, bool] = {}
        self._model: str | None = None  # the dotted name called by the forward followed
        # the model whose forward (or method) is followed: its other methods compute
        # from the value (`model.loss_function(*result)`)
        self._receiver: str | None = None
        self._elsewhere: dict[cst.FunctionDef, list[MethodCall] | None] = {}
        self._returned_from: list[cst.FunctionDef] = []  # of the walk under way
        # those of them whose value was one place of a returned tuple
        self._returned_in_places: set[cst.FunctionDef] = set()
        # the functions the walk under way entered through an argument, with the calls
        # it entered them by: what they return goes back to those calls
        self._entered: dict[cst.FunctionDef, list[cst.Call]] = {}
        self._origin: cst.CSTNode | None = None  # the scope of the value followed
        self._runs: Callable[[cst.CSTNode], bool] | None = None  # of the walk under way
        self._detached_ends = False  # of the walk under way
        # attribute name -> the file's `<x>.<name>` nodes (_kept_on_self)
        self._attribute_nodes: dict[str, list[cst.Attribute]] | None = None
        # the attribute names the file reads with getattr and the like, "" among them
        # when it computes one or reads them all (`vars(agent)`); None until asked
        self._reflected_names: frozenset[str] | None = None

    # -- the query ---------------------------------------------------------------------

    def numbers_only(
        self,
        call: cst.CSTNode,
        runs: Callable[[cst.CSTNode], bool] | None = None,
        *,
        detached_ends: bool = False,
    ) -> NumberUses | None:
        """How the value of `call` ends as numbers, or None when any use of it may keep
        or use its graph (or none of its uses is a number). With `runs`, only the uses
        it says may run count (one call of the function, whose flags rule out a branch:
        analysis.path_conditions). With `detached_ends`, a value detached on the way
        ends there even if what is computed from it is differentiated (a helper's
        result used only as `V.detach()` in a loss)."""
        self._detached_ends = detached_ends
        scope = self.index.scope_of(call)
        if not self.scope_may_make_numbers(scope) and not self.may_return_to_other_files(scope):
            return None  # the value never leaves its scope, where nothing makes numbers
        if type(call) is cst.Call and self._kept_by_the_callee(call):
            return None
        found = NumberUses()
        self._model = index_dotted(call.func) if type(call) is cst.Call else None
        self._receiver = _model_of(call)
        self._returned_from = []
        self._returned_in_places = set()
        self._entered = {}
        self._origin = scope  # its returns go to all its callers, recursive ones too
        self._runs = runs
        try:
            self._follow(call, found)
        except _Escapes:
            return None
        if not (
            found.numbers or found.reads or found.detaches or found.unused or self._returned_from
        ):
            return None
        # the functions whose result was followed into their callers: asked last, since
        # it may search the project's files
        for func in self._returned_from:
            elsewhere = self._callers_elsewhere(func)
            if elsewhere is None and func in self._returned_in_places:
                elsewhere = self._method_called_only_here(func)
            if elsewhere is None:
                return None
            found.elsewhere.extend(c for c in elsewhere if c not in found.elsewhere)
        if not (found.numbers or found.reads or found.detaches or found.unused or found.elsewhere):
            return None
        return found

    def read_by_numpy_alone(self, reads: list[cst.CSTNode]) -> bool:
        """Does numpy (or matplotlib) alone read what these reads read (`np.mean(actions)`)?
        On a tensor that requires grad it raises, so code that runs so holds no graph
        there."""
        if not reads:
            return False
        found = [self.numbers_only(read, detached_ends=True) for read in reads]
        return all(uses is not None and uses.only_through_numpy for uses in found)

    def only_numbers_of(self, reads: list[cst.CSTNode]) -> bool:
        """Does every read end as numbers or detached, nothing of it differentiated,
        returned or kept (`torch.cat(values).detach()`, `len(values)`)? What a rollout
        collected into a list, read back: its elements' graphs were kept for nothing.
        Not when numpy alone reads them (`np.mean(actions)`): it takes arrays as they
        are, and on tensors that require grad it would raise, so code that runs so has
        collected no graphs."""
        if not reads:
            return False
        found = [self.numbers_only(read, detached_ends=True) for read in reads]
        return all(uses is not None for uses in found) and not all(
            uses is not None and uses.only_through_numpy for uses in found
        )

    def scope_may_make_numbers(self, scope: cst.CSTNode, *, through_helpers: bool = True) -> bool:
        """Does the scope (nested functions excluded) hold a call that can turn a value
        into numbers (itself, or, through_helpers, through a helper it calls)? Most
        scopes (a module's forward) do not: they are ruled out without following a
        single name."""
        if self._scope_calls is None:
            # One pass over the file's calls, grouped by the scope they run in.
            by_scope: dict[int, list[cst.Call]] = {}
            direct: set[int] = set()
            bound: dict[int, list[tuple[cst.Assign, str]]] = {}
            parent = self.index.parent.by_id
            qualified_name = self.index.qualified_name
            for call in self.index.calls:
                owner = self.index.scope_of(call)
                by_scope.setdefault(id(owner), []).append(call)
                if _may_make_numbers(call):
                    direct.add(id(owner))
                elif type(call.func) is cst.Attribute and converts_with_numpy(
                    qualified_name(call.func)
                ):
                    direct.add(id(owner))  # `np.mean(y)`, `plt.plot(x, y)`
                elif (
                    _last_name(call.func) in _TRACKER_CALL_NAMES
                    and qualified_name(call.func) in TRACKER_LOGGING_FUNCTIONS
                ):
                    direct.add(id(owner))  # `wandb.log({"val_loss": loss})`
                statement = parent.get(id(call))
                if type(statement) is cst.Assign and type(owner) is cst.FunctionDef:
                    bound.setdefault(id(owner), []).extend(
                        (statement, t.target.value)
                        for t in statement.targets
                        if type(t.target) is cst.Name
                    )
            self._bound_calls = bound
            for node in self.index.of_types(cst.Attribute, cst.Comparison):
                # `torch.cat((a.data, b.data))`: a value read without its graph, wherever
                # the attribute stands; `(net(x) > 0.5) == y`: a comparison of tensors
                # makes a bool tensor, which has no history
                if (type(node) is cst.Attribute and node.attr.value in _ENDING_ATTRIBUTES) or (
                    type(node) is cst.Comparison and _compares_values(node)
                ):
                    direct.add(id(self.index.scope_of(node)))
            self._scope_calls, self._direct_sinks = by_scope, direct
        key = id(scope)
        if key in self._direct_sinks:
            return True
        if self._binds_unread(scope):
            # `y = model.sample(n)`, `y` never read: thrown away where it is made
            self._direct_sinks.add(key)
            return True
        if not through_helpers:
            return False
        calls = self._scope_calls.get(key, [])
        found = self._sinks.get(key)
        if found is None:
            found = self._sinks[key] = any(
                self._helper_may_make_numbers(c) for c in calls
            ) or self._callers_make_numbers(scope)
        return found

    def _binds_unread(self, scope: cst.CSTNode) -> bool:
        """Does the function bind a call's result to a name it never reads?"""
        key = id(scope)
        found = self._unread_memo.get(key)
        if found is None:
            found = self._unread_memo[key] = any(
                self._unread(statement, name) for statement, name in self._bound_calls.get(key, ())
            )
        return found

    def _callers_make_numbers(self, scope: cst.CSTNode) -> bool:
        """Could what the function returns be made numbers where it is called: does a
        scope that calls it (in this file) make numbers itself?"""
        if type(scope) is not cst.FunctionDef or self.summaries is None:
            return False
        callers = self.summaries.callees.callers_of(scope)
        return any(id(self.index.scope_of(c)) in self._direct_sinks for c in callers)

    def _helper_may_make_numbers(self, call: cst.Call) -> bool:
        """A call of a function of this file that may make numbers, or of an imported
        project function that makes numbers of an argument. Only names that can be one
        are resolved: `f(x)` of this file's or an imported name, `self.f(x)`, `mod.f(x)`."""
        summaries = self.summaries
        if summaries is None:
            return False
        func = call.func
        index = self.index
        if type(func) is cst.Name:
            name = func.value
            if summaries.callees.named(name):
                callee = summaries.resolve(call)
                return callee is not None and self._makes_numbers_of_a_parameter(callee)
            if name not in index.imported_from and not index.star_imports:
                return False
            key = name
        elif type(func) is cst.Attribute and type(func.value) is cst.Name:
            owner = func.value.value
            if owner in ("self", "cls"):
                callee = summaries.resolve(call)
                return callee is not None and self._makes_numbers_of_a_parameter(callee)
            origin = index.imported_from.get(owner)
            if origin is None or origin[0].partition(".")[0] in LIBRARY_ROOTS:
                return False
            key = f"{owner}.{func.attr.value}"
        else:
            return False
        # What an imported name is does not depend on where it is called.
        found = self._external_sinks.get(key)
        if found is None:
            external = summaries.resolve_external(call, making_numbers=True)
            found = self._external_sinks[key] = external is not None and bool(
                external.number_params
            )
        return found

    def may_return_to_other_files(self, scope: cst.CSTNode) -> bool:
        """Could a value of this scope be returned to callers in the project's other files,
        who may make numbers of it (`def generate_image(G, z): return G(z)` in utils.py,
        its image saved in train.py)? A module-level function that returns a value, in a
        project: cheap, and asked before the project is searched."""
        if (
            type(scope) is not cst.FunctionDef
            or self.index.scope_of(scope) is not self.index.module
        ):
            return False
        project = self.summaries.project if self.summaries is not None else None
        if project is None or not project.enabled:
            return False
        return any(  # asked for each call in the scope: only its returns are looked at
            node.value is not None and self.index.scope_of(node) is scope
            for node in self.index.of_types_in(scope.body, cst.Return)
        )

    def returns_to_other_files(self) -> bool:
        """Does a module-level function of the file return a value to the project's other
        files (may_return_to_other_files)? What a file without number conversions of its
        own needs before anything in it can be read as numbers elsewhere."""
        return any(
            self.may_return_to_other_files(func)
            for func in self.index.functions
            if self.index.scope_of(func) is self.index.module
        )

    def calls_imported_number_helpers(self) -> bool:
        """Does the file call a function of the project's other files that makes numbers
        of an argument? What a file without number conversions of its own needs before
        anything in it can be read as numbers."""
        if self.summaries is None or not (self.index.imported_from or self.index.star_imports):
            return False
        for call in self.index.calls:
            func = call.func
            if type(func) is cst.Attribute and type(func.value) is cst.Name:
                if func.value.value in ("self", "cls"):
                    continue
            elif type(func) is not cst.Name or self.summaries.callees.named(func.value):
                continue
            if self._helper_may_make_numbers(call):
                return True
        return False

    def _makes_numbers_of_a_parameter(self, func: cst.FunctionDef) -> bool:
        """Could the function make numbers of one of its parameters? A call that makes
        numbers whose receiver chain starts at a parameter (`t.detach().cpu().numpy()`,
        `float(x.mean())`): a cheap filter, the def-use walk decides."""
        found = self._number_helpers.get(func)
        if found is None:
            params = {p.name.value for p in all_params(func.params)} - {"self", "cls"}
            found = False
            calls = []
            if self.scope_may_make_numbers(func, through_helpers=False):
                assert self._scope_calls is not None
                calls = self._scope_calls.get(id(func), [])
            for node in calls:
                if not _may_make_numbers(node):
                    continue
                start = node.func.value if type(node.func) is cst.Attribute else None
                if start is None and node.args:
                    start = node.args[0].value  # `float(x)`
                if _chain_root(start) in params:
                    found = True
                    break
            self._number_helpers[func] = found
        return found

    # -- the walk ----------------------------------------------------------------------

    def _follow(self, start: cst.CSTNode, found: NumberUses) -> None:
        # (expression carrying the value, the value has been detached on the way)
        work: list[tuple[cst.CSTNode, bool]] = [(start, False)]
        # (id(node), detached) -> node, which it keeps alive: a pair of the node itself
        # would hash it through LibCST's __hash__, a Python call
        seen: dict[tuple[int, bool], cst.CSTNode] = {}
        while work:
            node, detached = work.pop()
            key = (id(node), detached)
            if key in seen:
                continue
            seen[key] = node
            if len(seen) > _MAX_STEPS:
                raise _Escapes  # too much to follow: assume the worst
            try:
                work.extend(self._step(node, detached, found))
            except _Differentiated:
                if not (detached and self._detached_ends):
                    raise
                # `A = returns - V.detach()`, then a loss of A backpropagated: not V's
            except _Escapes:
                if not detached:
                    raise
                # detached on the way: wherever it goes now, it takes no graph along

    def _step(self, node: cst.CSTNode, detached: bool, found: NumberUses):
        """Where the value held by `node` goes next: (node, detached) pairs, [] when it
        ends here, or _Escapes."""
        index = self.index
        parent = index.parent.get(node)
        if parent is None:
            raise _Escapes
        if type(parent) is cst.Attribute and parent.value is node:
            return self._attribute(parent, detached, found)
        if type(parent) is cst.Arg:
            call = index.parent.get(parent)
            if type(call) is cst.Call and parent.value is node:
                if not parent.star:
                    return self._argument(call, node, detached, found)
                return self._unpacked_into(call, detached, found)
            raise _Escapes
        if type(parent) is cst.Call:
            raise _Escapes  # the value is called
        if type(parent) is cst.BinaryOperation:
            return [(parent, detached)]
        if type(parent) is cst.UnaryOperation:
            return [] if type(parent.operator) is cst.Not else [(parent, detached)]
        if type(parent) is cst.BooleanOperation:
            return [(parent, detached)]
        if type(parent) is cst.Comparison or type(parent) is cst.ComparisonTarget:
            found.reads.append(parent)
            return []  # a bool, or a bool tensor: no history
        if type(parent) is cst.IfExp:
            return [] if parent.test is node else [(parent, detached)]
        if type(parent) is cst.Subscript:
            if parent.value is not node:
                raise _Escapes
            position = _integer_index(parent)
            if position is not None and self._max_along_dimension(node):
                if position == 1:
                    found.numbers.append(parent)  # `out.max(1)[1]`: the indices
                    return []
            if position == 1 and _values_and_indices(node):
                return [(parent, True)]  # `out.topk(k)[1]`: indices, which have no grad
            return [(parent, detached)]
        # exact types below (none of these classes has a subclass): isinstance on
        # LibCST's ABCs runs ABCMeta's check in Python whenever it fails
        if type(parent) in (cst.Index, cst.SubscriptElement, cst.Slice):
            found.reads.append(parent)
            return []  # an index into something else: the value's own graph ends here
        if type(parent) is cst.Element:
            holder = index.parent.get(parent)
            if type(holder) is cst.Tuple or type(holder) is cst.List:
                statement = index.parent.get(holder)
                if type(statement) is cst.Return:
                    return self._returned_in_place(statement, holder, parent, detached, found)
            if type(holder) in (cst.List, cst.Tuple, cst.Set):
                return [(holder, detached)]
            raise _Escapes
        if type(parent) is cst.DictElement and parent.value is node:
            # `{"val_loss": loss}`: the value goes where the dict does (`wandb.log(...)`,
            # `metrics["val_loss"].backward()`)
            holder = index.parent.get(parent)
            if type(holder) is cst.Dict:
                return [(holder, detached)]
            raise _Escapes
        if type(parent) in ELEMENT_COMPREHENSIONS:
            if parent.elt is node:  # type: ignore[attr-defined]
                return [(parent, detached)]
            raise _Escapes
        if type(parent) is cst.FormattedStringExpression:
            found.reads.append(parent)
            return []  # formatted for a log line
        if type(parent) in (cst.If, cst.While) and parent.test is node:  # type: ignore[attr-defined]
            found.reads.append(parent)
            return []
        if type(parent) is cst.Assert and parent.test is node:
            found.reads.append(parent)
            return []
        if (type(parent) is cst.For or type(parent) is cst.CompFor) and parent.iter is node:
            # `for hid in hidden:`, `[x.item() for x in out]`: each element goes where
            # the loop's name does
            return self._iterated(parent, detached)
        if type(parent) is cst.Lambda and parent.body is node:
            # `map(lambda x: x.detach(), out)`: what the lambda makes of each element is
            # what the map yields
            mapping = self._mapping_call(parent)
            if mapping is None:
                raise _Escapes
            return [(mapping, detached)]
        if type(parent) is cst.Expr or type(parent) is cst.Del:
            return []  # evaluated and dropped; `del out`: the reference dropped
        if type(parent) is cst.Return and type(node) not in (cst.Tuple, cst.List):
            # one value returned (a tuple of results, a state among them, still escapes)
            return self._returned(parent, detached)
        if type(parent) in (cst.Assign, cst.AnnAssign, cst.AugAssign):
            if parent.value is node:  # type: ignore[attr-defined]
                return self._bound(parent, node, detached, found)
            if type(parent) is cst.AugAssign and type(node) is cst.Name:
                # `total += x` read the old total: the new one carries it on
                return self._uses_of(parent, node.value, detached)
        raise _Escapes

    def _attribute(self, attribute: cst.Attribute, detached: bool, found: NumberUses):
        name = attribute.attr.value
        call = self.index.parent.get(attribute)
        if type(call) is cst.Call and call.func is attribute:
            if detached and name == REQUIRES_GRAD_METHOD:
                # a new leaf made of the detached values (a gradient penalty's
                # interpolates): what is differentiated from here is its own graph
                return []
            return _met(method_result_use(name), call, detached, found)
        use = attribute_result_use(name)
        if use is ResultUse.FOLLOWED and name == "indices":
            if self._max_along_dimension(attribute.value):
                found.numbers.append(attribute)
                return []
        return _met(use, attribute, detached, found)

    def _argument(self, call: cst.Call, node: cst.CSTNode, detached: bool, found: NumberUses):
        """The value is an argument of `call`."""
        if self._model is not None and index_dotted(call.func) == self._model:
            # fed to the same model again (an RNN state through a sampling loop): its
            # history flows into that forward's output, which is followed on
            return [(call, detached)]
        qualified = self.index.qualified_name(call.func) or ""
        mapped = self._mapped_by(call, node)
        if mapped is not None:
            return self._uses_of(mapped, mapped.name.value, detached)
        if qualified in PAIRING_BUILTINS:
            paired = self._paired_in_a_loop(call, node, qualified, detached)
            if paired is not None:
                return paired
        use = argument_result_use(
            qualified,
            writes_out=any(a.keyword and a.keyword.value == "out" for a in call.args),
            builtin=type(call.func) is not cst.Attribute,
            imported=self._root_imported(call),
        )
        if use is not None:
            return _met(use, call, detached, found)
        if (
            type(call.func) is cst.Attribute
            and call.func.attr.value == "format"
            and type(call.func.value) in (cst.SimpleString, cst.ConcatenatedString)
        ):
            found.reads.append(call)
            return []  # `'norm = {}'.format(d)`: formatted for a message, as an f-string is
        layer = self._module_class(call.func, call) or ""
        kind = layer.rsplit(".", 1)[-1]
        if layer.startswith("torch.nn.") and (
            kind.endswith("Loss") or kind in PARAMETERLESS_LAYERS
        ):
            # a loss module, or a layer with no weights (`softmax = nn.Softmax(dim=0)`,
            # then `softmax(out).argmax(-1)`): what it returns computes from its input.
            # A layer with weights runs a forward of its own, asked about at its call.
            return [(call, detached)]
        if self._method_of_the_model(call) and (
            self.summaries is None or self.summaries.resolve(call) is None
        ):
            return [(call, detached)]
        if self.summaries is not None and self.summaries.runs_autograd_function(call):
            return [(call, detached)]  # `LossFn.apply(out, y)`: computed from its arguments
        kept = self._kept_in_a_new_list(call, node, detached, found)
        if kept is not None:
            return kept
        return self._into_helper(call, node, detached, found)

    def _kept_in_a_new_list(
        self, call: cst.Call, node: cst.CSTNode, detached: bool, found: NumberUses
    ):
        """`losses.append(loss)` into a list made empty in this scope (`losses = []`):
        the value goes where the list is read afterwards (`torch.FloatTensor(losses)`,
        `sum(l.item() for l in losses)`, `torch.stack(losses).sum().backward()`), the
        further appends to it aside. None for any other call."""
        func = call.func
        if (
            detached  # what a detached copy becomes is not this graph's use
            or type(func) is not cst.Attribute
            or func.attr.value not in ELEMENT_STORING_METHODS
            or not call.args
            or call.args[-1].value is not node
        ):
            return None
        if type(func.value) is cst.Attribute:
            # `self.q_history.append(q.max())`: a list the instance keeps
            kept_reads = self._kept_on_self(func.value, detached, as_list=True)
            found.kept.append(func.value)
            return kept_reads
        if type(func.value) is not cst.Name:
            return None
        name = func.value.value
        bindings = self.values.reaching_bindings(name, call)
        if not bindings or not all(_makes_an_empty_list(b, name) for b in bindings):
            return None
        reads: list[tuple[cst.CSTNode, bool]] = []
        for binding in bindings:
            for use, was_detached in self._uses_of(binding, name, detached):
                if not self._adds_to_the_list(use):
                    reads.append((use, was_detached))
        return reads

    def _adds_to_the_list(self, use: cst.CSTNode) -> bool:
        """Is the read the list a further `append`/`insert` is made on?"""
        attribute = self.index.parent.get(use)
        if type(attribute) is not cst.Attribute or attribute.value is not use:
            return False
        call = self.index.parent.get(attribute)
        return (
            type(call) is cst.Call
            and call.func is attribute
            and attribute.attr.value in ELEMENT_STORING_METHODS
        )

    def _paired_in_a_loop(
        self, call: cst.Call, node: cst.CSTNode, qualified: str, detached: bool
    ) -> list[tuple[cst.CSTNode, bool]] | None:
        """`for out, size in zip(outs, sizes):`, `for i, out in enumerate(outs):`: each
        element of the value goes where the loop's name at its place does. None when the
        call is no loop's header, or its target does not unpack into names."""
        loop = self.index.parent.get(call)
        if not (type(loop) is cst.For or type(loop) is cst.CompFor) or loop.iter is not call:
            return None
        target = loop.target
        if not isinstance(target, (cst.Tuple, cst.List)) or not all(
            type(e) is cst.Element and type(e.value) is cst.Name for e in target.elements
        ):
            return None
        positional = [a for a in call.args if not a.keyword]
        if any(a.star for a in positional):
            return None
        place = next((i for i, a in enumerate(positional) if a.value is node), None)
        if qualified == "enumerate":
            place = 1 if place == 0 else None  # `(index, element)`
        if (
            place is None
            or place >= len(target.elements)
            or len(target.elements) != (2 if qualified == "enumerate" else len(positional))
        ):
            return None
        name = target.elements[place].value
        assert type(name) is cst.Name
        if type(loop) is cst.CompFor:
            return [(use, detached) for use in self._comprehension_uses(loop, name.value)]
        return self._uses_of(loop, name.value, detached)

    def _mapped_by(self, call: cst.Call, node: cst.CSTNode) -> cst.Param | None:
        """`map(lambda x: ..., value)`: the lambda's parameter each element of the value
        is bound to."""
        lam = self._map_lambda(call)
        if lam is None or len(call.args) < 2 or call.args[0].keyword:
            return None
        if any(a.star for a in call.args):
            return None
        params = list(lam.params.params)
        position = next(
            (i - 1 for i, arg in enumerate(call.args) if arg.value is node and i > 0), None
        )
        if position is None or position >= len(params):
            return None
        return params[position]

    def _mapping_call(self, lam: cst.Lambda) -> cst.Call | None:
        """The builtin `map(...)` call the lambda is the function of."""
        arg = self.index.parent.get(lam)
        call = self.index.parent.get(arg) if type(arg) is cst.Arg else None
        return call if type(call) is cst.Call and self._map_lambda(call) is lam else None

    def _map_lambda(self, call: cst.Call) -> cst.Lambda | None:
        """The lambda a builtin `map(lambda ...: ..., ...)` call is given first."""
        if type(call.func) is not cst.Name or not call.args:
            return None
        lam = call.args[0].value
        if type(lam) is not cst.Lambda:
            return None
        return lam if (self.index.qualified_name(call.func) or "") == "map" else None

    def _unpacked_into(self, call: cst.Call, detached: bool, found: NumberUses):
        """The value is unpacked into the arguments of `call` (`*result`): no parameter
        of a helper can be told to receive it, but a library function does the same to
        each element, and a method of the model computes what it returns from them."""
        if self._method_of_the_model(call):
            return [(call, detached)]
        qualified = self.index.qualified_name(call.func) or ""
        use = argument_result_use(
            qualified,
            builtin=type(call.func) is not cst.Attribute,
            imported=self._root_imported(call),
        )
        if use is None:
            raise _Escapes
        return _met(use, call, detached, found)

    def _root_imported(self, call: cst.Call) -> bool:
        """Is the root name of the call's callee an import of the file there, and bound
        by nothing else (`import wandb`, then `wandb = Tracker()`: the file's object)?"""
        dotted = index_dotted(call.func)
        if dotted is None:
            return False
        root = dotted.partition(".")[0]
        return self.index.import_alias_at(
            call, root
        ) is not None and self.values.bound_only_by_imports(root, call)

    def _kept_by_the_callee(self, call: cst.Call) -> bool:
        """Does the function of this file `call` runs keep what it hands back in its
        object's state (`self.latest = self.act(self.fc(x)); return self.latest`, or
        `out = ...; self.cache = out; return out`)? The caller's copy is not the only
        one then: a later loss may read the attribute (a PINN selector's
        `latest_weighted_features`, regularised in its `loss`)."""
        if self.summaries is None:
            return False
        resolver = self.summaries.callees
        callees = resolver.runs(call)
        if not callees and type(call.func) is cst.Attribute:
            # `model.weighted_features(x)` on an object of unknown class: the methods of
            # that name of this file's classes
            name = call.func.attr.value
            callees = [
                f
                for f in resolver.named(name)
                if (cls := self.index.enclosing_class(f)) is not None and own_method(cls, name) is f
            ]
        return any(
            self.index.enclosing_class(callee) is not None and self._returns_own_state(callee)
            for callee in callees
        )

    def _returns_own_state(self, callee: cst.FunctionDef) -> bool:
        returned = self.index.value_returns(callee)
        if not returned:
            return False
        # `self.x = value`, from the one binding table: the attribute, and the name it
        # was given, are both the object's now
        stored: set[str] = set()
        for record in self.values.bindings.of_scope(callee):
            if record.name.startswith("self.") and record.name.count(".") == 1:
                stored.add(record.name)
                if type(record.value) is cst.Name:
                    stored.add(record.value.value)
        return any(
            (name := index_dotted(value)) is not None and name in stored for _, value in returned
        )

    def _method_of_the_model(self, call: cst.Call) -> bool:
        """`model.loss_function(...)` after `model(x)`: a method, not of the nn.Module
        API, of the model whose forward is followed. Out of sight (its class in another
        file), what it returns is computed from its arguments: their graph, carried on."""
        func = call.func
        return (
            self._receiver is not None
            and type(func) is cst.Attribute
            and func.attr.value not in MODULE_API
            and index_dotted(func.value) == self._receiver
        )

    def _into_helper(self, call: cst.Call, node: cst.CSTNode, detached: bool, found: NumberUses):
        """The value is an argument of one of the project's functions: followed into the
        body of one of this file's, or read off the summary of an imported one."""
        if self.summaries is None:
            raise _Escapes
        callee = self.summaries.resolve(call)
        if callee is None:
            # `loss(net(X), y)` with `loss` a parameter every caller fills with
            # `squared_loss`: that function runs
            passed = self.summaries.passed_in(call)
            callee = passed if type(passed) is cst.FunctionDef else None
        # `criterion(out, y)` of `criterion = DiceLoss()`: its class's forward runs,
        # handed the receiver by the call
        instance = self.summaries.instance_forward(call) if callee is None else None
        if type(instance) is cst.FunctionDef:
            callee = instance
        if callee is not None:
            summary = self.summaries.of(callee)
            if summary.unwritten:
                raise _Escapes  # a value handed to a function not written yet: not known unused
            # `criterion(out, y)`, `Loss()(out, y)`: a method run on the instance called,
            # which the call binds to its first parameter itself
            implicit = (
                type(call.func) is not cst.Attribute
                and self.index.enclosing_class(callee) is not None
            )
            for param in all_params(callee.params):
                name = param.name.value
                argument = summary.forwarded_argument(
                    call, name, receiver_passed=True if implicit else None
                )
                if argument is node:
                    self._entered.setdefault(callee, []).append(call)
                    return self._uses_of(param, name, detached)
            raise _Escapes
        external: ExternalFunction | None
        if instance is not None:
            assert not isinstance(instance, cst.FunctionDef)  # followed into above
            external = instance
        else:
            external = self.summaries.resolve_external(call, making_numbers=True)

        summaries = self.summaries

        def argument_for(param: str) -> cst.BaseExpression | None:
            assert external is not None
            # an instance called by name binds its method's receiver itself
            passed = True if instance is not None else None
            return summaries.external_argument(call, external, param, receiver_passed=passed)

        if external is not None and external.number_params:
            for param, raises in external.number_params.items():
                if argument_for(param) is node:
                    found.numbers.append(call)
                    if raises and not detached:
                        found.numpy_raises.append(call)
                    return []
        external = external or self.summaries.resolve_external(call)
        if external is not None and any(
            argument_for(param) is node for param in external.carried_params
        ):
            # `euclidean_distance(z, prototypes)` of `_utils.py`: what it returns is
            # computed from the value with torch alone, and followed on from the call
            return [(call, detached)]
        if type(call.func) is cst.Attribute and call.func.attr.value in SUMMARY_WRITER_METHODS:
            # `writer.add_images("fake", G(z), step)`: logged as a numpy array, detached
            found.reads.append(call)
            return []
        raise _Escapes

    def _returned(self, statement: cst.Return, detached: bool):
        """The value is returned: followed on from each call of the function, when every
        call is in sight (`def sample(G, z): return G(z)`, then `save_image(sample(G,
        z))`): a nested function called where it is defined, or a module-level one that
        no other file of the project calls and nothing hands on. A method's callers may
        be anywhere: an escape."""
        func = self.index.scope_of(statement)
        summaries = self.summaries
        if detached or type(func) is not cst.FunctionDef or summaries is None:
            # detached on the way: nothing a caller does with it can use the graph (a
            # TD target returned inside a loss is differentiated, as it should be)
            raise _Escapes
        entered = self._entered.get(func)
        if entered and func is not self._origin:
            # a helper the value was handed to: what it returns of it comes back to the
            # calls that handed it in, not to the helper's other callers (whose
            # arguments are other values)
            return [(call, detached) for call in entered]
        callers = summaries.callees.callers_of(func)
        if summaries.callees.handed_on(func) or _is_generator(self.index, func):
            raise _Escapes
        if self.returns_to_a_decorator(func):
            raise _Escapes
        if self.index.enclosing_class(func) is not None and self._called_by_name_elsewhere(
            func, callers
        ):
            # `model.log_marginal(x)` on an object the resolver cannot tell the class of
            # (a parameter annotated with the class, one handed in): it may be this very
            # method, its result differentiated there
            raise _Escapes
        if not callers and self.index.scope_of(func) is not self.index.module:
            raise _Escapes  # a nested function never called: handed on out of sight
        if any(type(self.index.parent.get(call)) is cst.Expr for call in callers):
            # `main()` drops what it returns: the script's result, not a value read
            raise _Escapes
        self._returned_from.append(func)  # its callers elsewhere are asked about last
        return [(call, detached) for call in callers]

    def _returned_in_place(
        self,
        statement: cst.Return,
        returned: cst.Tuple | cst.List,
        element: cst.Element,
        detached: bool,
        found: NumberUses,
    ):
        """The value is one place of a tuple or list returned (`return action_t, action_np`):
        followed, as _returned follows a value, into each call, and there to the name
        that place is unpacked into (`action_t, action = self._sample_action(s)`) or
        the index that reads it (`self._sample_action(s)[0]`)."""
        elements = returned.elements
        if any(type(e) is not cst.Element for e in elements):
            raise _Escapes  # `return *outs, h`: the places cannot be told
        place = next(i for i, e in enumerate(elements) if e is element)
        out: list[tuple[cst.CSTNode, bool]] = []
        for call, was_detached in self._returned(statement, detached):
            out.extend(self._place_of_call(call, place, len(elements), was_detached, found))
        func = self.index.scope_of(statement)
        if type(func) is cst.FunctionDef:
            self._returned_in_places.add(func)
        return out

    def _method_called_only_here(self, func: cst.FunctionDef) -> list[MethodCall] | None:
        """[] when every call of the method in the project is in this file and tied to
        it, each followed by the walk (`action_t, action = self._sample_action(s)`):
        what one place of the tuple it returns becomes is then all known. The project's
        other files judge a returned tuple only whole (calls_read_as_numbers), so a
        call there leaves it unknown: None."""
        cls = self.index.enclosing_class(func)
        if cls is None or self.summaries is None:
            return None
        callers = self.summaries.callees.callers_of(func)
        search = self._caller_search(func, cls) if callers else None
        if search is None:
            return None
        project, query = search
        here = project.method_calls_here(query)
        if here is None or len(here) != len(callers):
            return None
        everywhere = project.method_calls(query)
        if everywhere is None or len(everywhere) != len(here):
            return None
        return []

    def _place_of_call(
        self, call: cst.CSTNode, place: int, size: int, detached: bool, found: NumberUses
    ):
        """Where one place of the tuple a call returns goes: the uses of the name it is
        unpacked into, or of the index that reads it; nowhere when another index is read
        or the result is dropped."""
        parent = self.index.parent.get(call)
        if type(parent) is cst.Expr:
            return []
        if type(parent) is cst.Subscript and parent.value is call:
            index = _integer_index(parent)
            if index is None:
                raise _Escapes
            return [(parent, detached)] if index == place else []
        unpacked = self.index.unpacked_into(call)
        if unpacked is not None and parent is not None and len(unpacked) == size:
            name = unpacked[place]
            if type(name) is cst.Name:
                uses = self._uses_of(parent, name.value, detached)
                if not uses and self._unread(parent, name.value):
                    found.unused.append(name)
                return uses
        raise _Escapes

    def returns_to_a_decorator(self, func: cst.FunctionDef) -> bool:
        """Does what the function returns go to a decorator's wrapper rather than to its
        callers (`@StaticCaptureTraining(model=model, optim=opt)`), which may
        backpropagate it out of sight?"""
        return not all(self._hands_back_unchanged(d) for d in func.decorators)

    def _hands_back_unchanged(self, decorator: cst.Decorator) -> bool:
        """Does the function's result reach its callers unchanged under the decorator: a
        grad-mode manager, or one of torch_api.RESULT_PRESERVING_DECORATORS?"""
        expr = decorator.decorator
        target = expr.func if type(expr) is cst.Call else expr
        name = self.index.qualified_name(target)
        return name is not None and (
            name in RESULT_PRESERVING_DECORATORS or grad_api(name) is not None
        )

    def _called_by_name_elsewhere(self, method: cst.FunctionDef, callers: list[cst.Call]) -> bool:
        """Is the method's name called in this file on an object other than those the
        resolver tied to the method (`p.log_marginal(x)` with `p = Joint(...)`)? A call
        the resolver ties to another class's method of that name is not one
        (`self.decoder.inference(x)` beside `Encoder.inference`)."""
        name = method.name.value
        known = {id(call) for call in callers}
        summaries = self.summaries
        for call in self.index.calls:
            if (
                type(call.func) is not cst.Attribute
                or call.func.attr.value != name
                or id(call) in known
            ):
                continue
            resolved = summaries.function_run_by(call) if summaries is not None else None
            if resolved is None or resolved is method:
                return True
        return False

    def _callers_elsewhere(self, func: cst.FunctionDef) -> list[MethodCall] | None:
        """The calls of the function in the project's other files, each of which only
        reads what it returns as numbers ([] for a nested function, called only where it
        is defined, and for a function no other file calls); None when one of them may
        use the value's graph, or they cannot be told."""
        if func not in self._elsewhere:
            self._elsewhere[func] = self._compute_callers_elsewhere(func)
        return self._elsewhere[func]

    def _caller_search(
        self, func: cst.FunctionDef, cls: cst.ClassDef | None
    ) -> tuple[ProjectIndex, MethodQuery] | None:
        """The project and the caller search's question about `func`, a module-level
        function (`cls` None) or a method of `cls`, a module-level class; None when the
        project is not searched or the calls by name are not all the calls."""
        if cls is not None and (
            called_implicitly(func.name.value) or self.index.scope_of(cls) is not self.index.module
        ):
            return None  # `model(x)` runs `forward`: its calls by name are not all
        summaries = self.summaries
        project = summaries.project if summaries is not None else None
        if summaries is None or project is None or not project.enabled:
            return None
        query = callers_query(summaries.callees, project, func)
        if query is None:
            return None
        # a method's calls on objects of unknown class count too (`model.sample_image(n)`
        # with `model` a parameter): every call of its name must then read numbers only
        return project, replace(query, unknown_receivers=cls is not None)

    def _compute_callers_elsewhere(self, func: cst.FunctionDef) -> list[MethodCall] | None:
        cls = self.index.enclosing_class(func)
        if cls is None and (owner := self.index.scope_of(func)) is not self.index.module:
            return [] if type(owner) is cst.FunctionDef else None  # nested: called here
        search = self._caller_search(func, cls)
        if search is None or self.summaries is None:
            return None
        project, query = search
        summaries = self.summaries
        if cls is not None:
            # `self.actor.get_action(s).detach()` beside the class: this file's own
            # analysis judges that call (GL012 reports it there), not its method's body.
            # Searched alone first: such a call (or one whose object cannot be told,
            # None) decides without the project's other files read.
            calls_here = project.method_calls_here(query)
            if calls_here is None or calls_here:
                return None
        calls = project.method_calls(query)
        if calls is None:
            return None
        if not calls:
            return [] if summaries.callees.callers_of(func) else None
        return calls_read_as_numbers(project, query)

    def _module_class(
        self, func: cst.BaseExpression, call: cst.CSTNode, hops: int = _PARAMETER_HOPS
    ) -> str | None:
        """The torch.nn class of the module called, built in this scope or, for a global
        read in a function, at module level (`criterion = nn.CrossEntropyLoss()`); for a
        parameter, the one class every call of its function in this file fills it with
        (`valid(model, loader, criterion)` after `criterion = nn.CrossEntropyLoss()`),
        through at most `hops` callers."""
        found = self.tensors.module_class(func, call)
        if found is None and type(func) is cst.Name:
            bindings = self.values.bindings_of(func.value, call)
            if bindings and self.index.scope_of(bindings[0]) is self.index.module:
                found = self.tensors.module_class(func, bindings[0])
            elif bindings and hops and all(type(b) is cst.Param for b in bindings):
                found = self._class_passed_for(func.value, call, hops - 1)
        return found

    def _class_passed_for(self, param: str, use: cst.CSTNode, hops: int) -> str | None:
        scope = self.index.scope_of(use)
        if type(scope) is not cst.FunctionDef or self.summaries is None:
            return None
        classes = set()
        for argument in self.summaries.caller_arguments.here(scope, param):
            passed = argument.passed
            if type(passed) is cst.Call:
                classes.add(self.index.qualified_name(passed.func))
            elif type(passed) is cst.Name:
                classes.add(self._module_class(passed, argument.site, hops))
            else:
                return None
        return classes.pop() if len(classes) == 1 else None

    def _bound(self, statement: cst.CSTNode, node: cst.CSTNode, detached: bool, found: NumberUses):
        """The value is bound to names: follow each name's uses."""
        if type(statement) is cst.Assign:
            targets = [t.target for t in statement.targets]
        else:
            targets = [statement.target]  # type: ignore[attr-defined]
        out: list[tuple[cst.CSTNode, bool]] = []
        for target in targets:
            if type(target) is cst.Name:
                uses = self._uses_of(statement, target.value, detached)
                if not uses and self._unread(statement, target.value):
                    found.unused.append(target)
                out.extend(uses)
            elif (
                isinstance(target, (cst.Tuple, cst.List))
                and type(statement) is cst.Assign
                and all(type(e) is cst.Element for e in target.elements)
            ):
                elements = [e.value for e in target.elements]
                names = _names_unpacked(target)
                if names is None:
                    raise _Escapes  # unpacked into attributes or subscripts: stored
                if len(elements) == 2 and self._max_along_dimension(node):
                    if type(elements[1]) is cst.Name:
                        found.numbers.append(elements[1])  # `_, predicted = out.max(1)`
                        names = _names_unpacked(elements[0]) or []
                for name in names:
                    # `out, (h, c) = lstm(x)`: each name holds a part of the result
                    out.extend(self._uses_of(statement, name.value, detached))
            elif (
                type(target) is cst.Subscript
                and type(target.value) is cst.Name
                and type(statement) is cst.Assign
            ):
                out.extend(
                    self._written_into_a_buffer(statement, target.value.value, detached, found)
                )
            elif type(target) is cst.Attribute:
                # `self.last_q = q`; `self.q_history += [q]` adds to what it holds
                added = type(statement) is cst.AugAssign
                out.extend(self._kept_on_self(target, detached, as_list=added))
                if added:
                    found.kept.append(target)
            else:
                raise _Escapes  # stored in a container
        return out

    def _kept_on_self(
        self, kept: cst.Attribute, detached: bool, *, as_list: bool = False
    ) -> list[tuple[cst.CSTNode, bool]]:
        """The value kept by a method in an attribute of its instance (`self.last_q = q`,
        or, as_list, added to `self.q_history`): it goes where the class's methods read
        that attribute again (`torch.stack(self.q_history).mean().item()` in `report`).
        Only when nothing else can read it: the class derives from torch or nothing
        (a base may read its attributes its own way), its body does not define the name
        (a property, a class attribute, a dataclass field), every `.<name>` of the file
        is `self.<name>` in one of its methods, nothing in the file reads an attribute by
        a computed name or that name (`getattr(agent, key)`, `vars(agent)`), no other
        file of the project has the name in its text, and one method at least reads it
        (else it is kept for a reader out of sight, a public `agent.last_action`). A
        list must be one the class makes, empty (`self.q_history = []`), and only so:
        another object with an `append` (a replay buffer, a list handed in) keeps the
        value its own way. Else an escape."""
        if detached:
            raise _Escapes  # a detached copy takes no graph along, wherever it is kept
        klass = self._method_class(kept)
        name = kept.attr.value
        if klass is None or not self._plain_class(klass) or _defines(klass, name):
            raise _Escapes
        reads: list[tuple[cst.CSTNode, bool]] = []
        made_empty = False
        for attribute in self._attributes_named().get(name, ()):
            if attribute is kept:
                continue
            if self._method_class(attribute) is not klass:
                raise _Escapes  # another object's `.<name>`, or outside the class
            parent = self.index.parent.get(attribute)
            if type(parent) is cst.AssignTarget:
                statement = self.index.parent.get(parent)
                empty = (
                    type(statement) is cst.Assign
                    and len(statement.targets) == 1
                    and _empty_list(statement.value)
                )
                if as_list and not empty:
                    raise _Escapes  # a list made elsewhere, or another object
                made_empty = made_empty or empty
                continue
            if (
                isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.Del))
                and parent.target is attribute
            ):
                if as_list:
                    raise _Escapes  # `self.q_history += handed`: not only its own list
                continue  # written: what is read of it afterwards is followed
            if as_list and (
                self._adds_to_the_list(attribute) or _stored_into(self.index, attribute)
            ):
                continue  # another element put in
            reads.append((attribute, detached))
        if (
            not reads
            or (as_list and not made_empty)
            or self._read_by_name(name)
            or self._project_names(name)
        ):
            raise _Escapes
        return reads

    def _attributes_named(self) -> dict[str, list[cst.Attribute]]:
        """The file's `<x>.<name>` nodes, by name."""
        if self._attribute_nodes is None:
            named: dict[str, list[cst.Attribute]] = {}
            for attribute in self.index.of_types(cst.Attribute):
                named.setdefault(attribute.attr.value, []).append(attribute)
            self._attribute_nodes = named
        return self._attribute_nodes

    def _method_class(self, attribute: cst.Attribute) -> cst.ClassDef | None:
        """The class of this file whose method reads or writes `self.<name>` here: the
        receiver is the first parameter of a function defined right in the class body."""
        receiver = attribute.value
        if type(receiver) is not cst.Name:
            return None
        method = self.index.scope_of(attribute)
        if type(method) is not cst.FunctionDef:
            return None
        params = method.params.params
        if not params or params[0].name.value != receiver.value:
            return None
        body = self.index.parent.get(method)
        klass = self.index.parent.get(body) if type(body) is cst.IndentedBlock else None
        return klass if type(klass) is cst.ClassDef else None

    def _plain_class(self, klass: cst.ClassDef) -> bool:
        """A class that no decorator, metaclass or base outside torch makes: nothing but
        its own methods reads its instances' attributes (a project base class may sum
        `getattr(self, "loss_" + name)`; a dataclass writes its fields itself)."""
        if (
            klass.decorators
            or klass.keywords
            or any(
                statement.name.value in ATTRIBUTE_HOOK_METHODS
                for statement in klass.body.body
                if type(statement) is cst.FunctionDef
            )
        ):
            return False
        for base in klass.bases:
            qualified = self.index.qualified_name(base.value) or ""
            if qualified != "object" and qualified.split(".")[0] != "torch":
                return False
        return True

    def _read_by_name(self, name: str) -> bool:
        """Does the file read or write an attribute by a name it computes, or by this
        name (`getattr(agent, key)`, `getattr(agent, "q_history")`, `vars(agent)`,
        `agent.__dict__`)?"""
        if self._reflected_names is None:
            names: set[str] = set()
            if self._attributes_named().get(INSTANCE_DICT_ATTRIBUTE):
                names.add("")
            for call in self.index.calls:
                if type(call.func) is not cst.Name or call.func.value not in REFLECTIVE_BUILTINS:
                    continue
                second = call.args[1] if len(call.args) > 1 else None
                literal = second.value if second is not None and not second.keyword else None
                if type(literal) is cst.SimpleString and isinstance(literal.evaluated_value, str):
                    names.add(literal.evaluated_value)
                else:
                    names.add("")  # a computed name, or `vars(agent)`: any attribute
            self._reflected_names = frozenset(names)
        return "" in self._reflected_names or name in self._reflected_names

    def _project_names(self, name: str) -> bool:
        """May a file of the project other than this one read `<object>.<name>` (its text
        has the name)? Yes when the project cannot be asked."""
        project = self.summaries.project if self.summaries is not None else None
        return project is None or project.attribute_named_elsewhere(name)

    def _written_into_a_buffer(
        self, statement: cst.Assign, name: str, detached: bool, found: NumberUses
    ) -> list[tuple[cst.CSTNode, bool]]:
        """`preds[i] = model(x)` into a buffer made in this scope: a numpy array (`preds
        = np.zeros(n)`) copies the values out (and raises on a value of more than one
        element that requires grad); a fresh tensor (`preds = torch.zeros(n)`) becomes
        part of the graph, and the value goes where the buffer is read afterwards. Any
        other container: an escape, as is a value already detached (whatever it is
        written into takes no graph along)."""
        if detached:
            raise _Escapes
        bindings = self.values.reaching_bindings(name, statement)
        makers = {_buffer_maker(self.index, b, name) for b in bindings}
        if not bindings or None in makers or len(makers) != 1:
            raise _Escapes
        if makers == {"numpy"}:
            # a one-element tensor is converted with a warning, a larger one raises (on
            # torch 2.13): the size is not known here, so no crash is claimed
            found.numbers.append(statement)
            return []
        reads: list[tuple[cst.CSTNode, bool]] = []
        for binding in bindings:
            for use, was_detached in self._uses_of(binding, name, detached):
                if not _stored_into(self.index, use):  # `preds[j] = ...`: another write
                    reads.append((use, was_detached))
        return reads

    def _iterated(self, loop: cst.For | cst.CompFor, detached: bool):
        """The value is iterated: follow the uses of the names its elements are bound
        to (`for hid in hidden: print(hid.size())`)."""
        names = _names_unpacked(loop.target)
        if names is None:
            raise _Escapes  # bound to attributes or subscripts: stored
        out: list[tuple[cst.CSTNode, bool]] = []
        for name in names:
            if type(loop) is cst.CompFor:
                out.extend((use, detached) for use in self._comprehension_uses(loop, name.value))
            else:
                out.extend(self._uses_of(loop, name.value, detached))
        return out

    def _comprehension_uses(self, clause: cst.CompFor, name: str) -> list[cst.CSTNode]:
        """The reads of a comprehension's target inside the comprehension: its element,
        its conditions, the clauses after it (the comprehension is no scope of the
        index's; its target is read nowhere else)."""
        comprehension: cst.CSTNode | None = clause
        while type(comprehension) is cst.CompFor:
            comprehension = self.index.parent.get(comprehension)
        if comprehension is None:
            raise _Escapes
        scope = self.index.scope_of(clause)
        return [
            use
            for use in self.values.bindings.uses(scope).get(name, ())
            if self.index.is_inside(use, comprehension)
            and not self.index.is_inside(use, clause.iter)
        ]

    def _unread(self, statement: cst.CSTNode, name: str) -> bool:
        """Is the name bound by the statement never read (on any path, not only on the
        one followed), in a function that differentiates nothing?"""
        scope = self.index.scope_of(statement)
        if type(scope) is not cst.FunctionDef or self.summaries is None:
            return False  # a module-level name may be read by any importer
        summary = self.summaries.of(scope)
        if summary.differentiates or summary.unwritten:
            # an exercise's blank (`<YOUR CODE>`, read as `...`) is where it is read
            return False
        return not self.values.uses_reached(statement, name)

    def _uses_of(self, binding: cst.CSTNode, name: str, detached: bool):
        if self._read_elsewhere(binding, name):
            raise _Escapes
        uses = [
            use
            for use in self.values.uses_reached(binding, name)
            if not self.values.reached_as_a_non_tensor(binding, name, use)
        ]
        if self._runs is not None:
            uses = [use for use in uses if self._runs(use)]
        return [(use, detached) for use in uses]

    def _max_along_dimension(self, node: cst.CSTNode) -> bool:
        return type(node) is cst.Call and max_along_a_dimension(node, self.index)

    # -- reads the def-use chain cannot see ---------------------------------------------

    def _read_elsewhere(self, binding: cst.CSTNode, name: str) -> bool:
        """Is `name` read in another scope than the binding's (a nested function, a
        lambda, or any function for a module-level name), or declared global/nonlocal?
        Those reads see the value without a def-use chain to follow."""
        if self._reads is None:
            reads: dict[str, list[cst.Name]] = {}
            declared: dict[str, list[tuple[cst.CSTNode, bool]]] = {}
            for node in self.index.of_types(cst.Name, cst.Global, cst.Nonlocal):
                if type(node) is cst.Name:
                    reads.setdefault(node.value, []).append(node)
                else:
                    where = (self.index.scope_of(node), type(node) is cst.Global)
                    for item in node.names:
                        declared.setdefault(item.name.value, []).append(where)
            self._reads, self._declared = reads, declared
        assert self._declared is not None
        scope = self.index.scope_of(binding)
        declarations = self._declared.get(name, ())
        if any(declarer is scope and is_global for declarer, is_global in declarations) and (
            scope is not self.index.module
        ):
            # `global probs` in this function: the value is the module's `probs`, seen by
            # every scope that reads that name without binding its own
            return self._module_name_read_outside(scope, name, declarations)
        if any(
            self._declaration_reaches(scope, declarer, is_global)
            for declarer, is_global in declarations
        ):
            return True
        # the answer is the scope's, whichever of its bindings asks
        key = (scope, name)
        found = self._read_elsewhere_memo.get(key)
        if found is None:
            found = self._read_elsewhere_memo[key] = self._read_outside(scope, name)
        return found

    def _declaration_reaches(
        self, scope: cst.CSTNode, declarer: cst.CSTNode, is_global: bool
    ) -> bool:
        """Does a `global`/`nonlocal` declaration in `declarer` make the name bound in
        `scope` shared with other scopes? A module's name, by any `global`; a function's,
        by its own declaration or a nested function's `nonlocal`. Another function's
        `global x` is about the module's `x`, not this function's local one."""
        if scope is self.index.module:
            return is_global
        if declarer is scope:
            return True
        return not is_global and self.index.is_inside(declarer, scope)

    def _module_name_read_outside(
        self,
        scope: cst.CSTNode,
        name: str,
        declarations: Iterable[tuple[cst.CSTNode, bool]],
    ) -> bool:
        """Is the module's `name`, which `scope` binds through its `global` declaration,
        read in another scope: the module's own code, a function that declares it global
        too, or one (nested ones included) that reads it without binding its own? A
        function that binds a local `probs` of its own reads that one."""
        assert self._reads is not None
        sharing = {id(declarer) for declarer, is_global in declarations if is_global}
        index = self.index
        for read in self._reads.get(name, ()):
            inner = index.scope_of(read)
            if inner is scope:
                continue
            owner = inner
            while owner is not index.module and id(owner) not in sharing:
                if self.values.bindings.binds(owner, name):
                    break  # its own name, or an enclosing function's
                owner = index.scope_of(owner)
            else:
                return True  # reached the module's name (or another declarer's)
        return False

    def _read_outside(self, scope: cst.CSTNode, name: str) -> bool:
        assert self._reads is not None
        for read in self._reads.get(name, ()):
            inner = self.index.scope_of(read)
            if inner is scope:
                continue
            if (
                scope is self.index.module or self.index.is_inside(inner, scope)
            ) and not self._shadowed(inner, scope, name):
                return True
        return False

    def _shadowed(self, inner: cst.CSTNode, scope: cst.CSTNode, name: str) -> bool:
        """Does a scope from `inner` out to `scope` (excluded) bind `name` itself (a
        parameter, an assignment)? Then its reads are of its own name, not of the value
        bound in `scope`: a notebook's `pred_probas = model(X)` handed to `def
        comp_accuracy(label_var, pred_probas)`. (A `global` or `nonlocal` declaration
        was answered before.)"""
        index = self.index
        while inner is not scope and inner is not index.module:
            if self.values.bindings.binds(inner, name):
                return True
            inner = index.scope_of(inner)
        return False


def _model_of(call: cst.CSTNode) -> str | None:
    """The model a forward runs: `model` of `model(x)` and of `model.sample(n)` (not
    `self` of `self.encode(x)`, whose other methods include a test's assertions)."""
    if type(call) is not cst.Call:
        return None
    func = call.func
    if type(func) is cst.Attribute:
        receiver = index_dotted(func.value)
        if receiver is not None and receiver != "self":
            return receiver
    name = index_dotted(func)
    return None if name == "self" else name


def _met(use: ResultUse, node: cst.CSTNode, detached: bool, found: NumberUses):
    """Where the value goes after `node` does `use` to it (summary_facts decides what a
    method, an attribute or a library function does; this records it)."""
    if use is ResultUse.NUMBER or use is ResultUse.NUMPY:
        found.numbers.append(node)
        if use is ResultUse.NUMPY and not detached:
            found.numpy_raises.append(node)
        return []
    if use is ResultUse.NUMPY_CALL:
        found.numbers.append(node)  # numbers, or it raises on a value that requires grad
        found.numpy_calls.append(node)
        if not detached:
            found.numpy_raises.append(node)
        return []
    if use is ResultUse.READ:
        found.reads.append(node)
        return []
    if use is ResultUse.DETACHED:
        found.detaches.append(node)
        return [(node, True)]
    if use is ResultUse.GRADLESS:
        # `torch.argsort(pred)`, `pred.eq(y)`: what comes out holds no graph, so the
        # value's graph ends here, read for its values, wherever the result goes
        found.reads.append(node)
        return [(node, True)]
    if use is ResultUse.DIFFERENTIATED:
        raise _Differentiated
    if use is ResultUse.ESCAPES:
        raise _Escapes
    return [(node, detached)]


def _may_make_numbers(call: cst.Call) -> bool:
    """Could this call end a value without its graph: make a number of it, detach it,
    read its size or print it? A scope with none of these, and no `.data` / `.shape`,
    cannot show that a result is only read."""
    func = call.func
    if type(func) is cst.Attribute:
        if func.attr.value in _ENDING_METHODS:
            return True
        if func.attr.value.startswith("assert"):
            return is_test_assertion(index_dotted(func) or "")  # a test's assertion reads
    elif type(func) is cst.Name and func.value in _ENDING_BUILTINS:
        return True
    return False


_ENDING_METHODS = (
    NUMBER_METHODS
    | INDEX_METHODS
    | MAX_MIN_METHODS
    | DETACHING_METHODS
    | GRADLESS_RESULTS
    | METADATA_METHODS
    | SUMMARY_WRITER_METHODS
    | {name.rsplit(".", 1)[1] for name in GRADLESS_LIBRARY_FUNCTIONS}
)
_ENDING_BUILTINS = (
    NUMBER_BUILTINS | {"print"} | {n.rsplit(".", 1)[1] for n in GRADLESS_LIBRARY_FUNCTIONS}
)
# The last names of the trackers' logging calls: asked before resolving a call's name
# (a bare `.log(` is torch's, or a logger's, far more often)
_TRACKER_CALL_NAMES = frozenset(n.rsplit(".", 1)[1] for n in TRACKER_LOGGING_FUNCTIONS)


def _last_name(func: cst.BaseExpression) -> str | None:
    """`log` of `wandb.log` or of `log`; None for any other callee."""
    if type(func) is cst.Attribute:
        return func.attr.value
    return func.value if type(func) is cst.Name else None


_ENDING_ATTRIBUTES = DETACHING_ATTRIBUTES | METADATA_ATTRIBUTES


def _is_generator(index: FileIndex, func: cst.FunctionDef) -> bool:
    return any(type(node) is cst.Yield for node in index.walk(func.body))


def _compares_values(comparison: cst.Comparison) -> bool:
    """An ordering or equality between two operands that may be tensors: not `x is
    None`, `k in d`, nor a test of a literal against a literal."""
    operands = [comparison.left, *(t.comparator for t in comparison.comparisons)]
    return all(type(t.operator) in ELEMENTWISE_COMPARISONS for t in comparison.comparisons) and any(
        type(o) in (cst.Call, cst.Name, cst.Attribute, cst.Subscript) for o in operands
    )


def _chain_root(expr: cst.CSTNode | None) -> str | None:
    """The name an attribute, call or subscript chain starts at: `t` of `t.cpu()[0]`."""
    while expr is not None:
        if type(expr) is cst.Name:
            return expr.value
        if type(expr) is cst.Attribute or type(expr) is cst.Subscript:
            expr = expr.value
        elif type(expr) is cst.Call:
            expr = expr.func
        else:
            return None
    return None


def _values_and_indices(node: cst.CSTNode) -> bool:
    """`x.topk(k)`, `x.sort()`, `torch.sort(x)`: a (values, indices) pair."""
    if type(node) is not cst.Call or type(node.func) is not cst.Attribute:
        return False
    return node.func.attr.value in VALUES_AND_INDICES_METHODS


def _names_unpacked(target: cst.BaseExpression) -> list[cst.Name] | None:
    """The names a target binds, through nested tuples and lists (`out, (h, c) = ...`);
    None when a part is stored elsewhere (an attribute, a subscript, a starred name)."""
    if type(target) is cst.Name:
        return [target]
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    names: list[cst.Name] = []
    for element in target.elements:
        if type(element) is not cst.Element:
            return None
        inner = _names_unpacked(element.value)
        if inner is None:
            return None
        names += inner
    return names


def _integer_index(subscript: cst.Subscript) -> int | None:
    if len(subscript.slice) != 1:
        return None
    index = subscript.slice[0].slice
    if type(index) is cst.Index and type(index.value) is cst.Integer:
        return int(index.value.value, 0)
    return None


def _buffer_maker(index: FileIndex, binding: cst.CSTNode, name: str) -> str | None:
    """ "numpy" for `name = np.zeros(n)` (NUMPY_BUFFER_BUILDERS), "torch" for `name =
    torch.zeros(n)` (a fresh tensor), else None."""
    if type(binding) is not cst.Assign or len(binding.targets) != 1:
        return None
    target = binding.targets[0].target
    value = binding.value
    if type(target) is not cst.Name or target.value != name or type(value) is not cst.Call:
        return None
    qualified = index.qualified_name(value.func) or ""
    if qualified in NUMPY_BUFFER_BUILDERS:
        return "numpy"
    if qualified in FRESH_TENSOR_FUNCTIONS and not keyword_is_true(value, "requires_grad"):
        return "torch"
    return None


def _defines(klass: cst.ClassDef, name: str) -> bool:
    """Does the class body bind `name` itself (bindings_of_node: a method or property, a
    class attribute), or annotate it (`q_history: list`, a field of a dataclass)?"""
    for statement in klass.body.body:
        smalls = statement.body if type(statement) is cst.SimpleStatementLine else (statement,)
        for small in smalls:
            if any(binding.name == name for binding in bindings_of_node(small)):
                return True
            if type(small) is cst.AnnAssign and target_names(small.target) == [name]:
                return True
    return False


def _stored_into(index: FileIndex, use: cst.CSTNode) -> bool:
    """Is the read the container of a subscript written to (`preds[j] = ...`)?"""
    subscript = index.parent.get(use)
    if type(subscript) is not cst.Subscript or subscript.value is not use:
        return False
    return type(index.parent.get(subscript)) in (cst.AssignTarget, cst.AugAssign)


def _makes_an_empty_list(binding: cst.CSTNode, name: str) -> bool:
    """`name = []`, `name = list()`, or `outs, ys = [], []`: a list that holds only what
    is added to it."""
    if type(binding) is not cst.Assign or len(binding.targets) != 1:
        return False
    target = binding.targets[0].target
    value = binding.value
    if type(target) is cst.Name:
        return target.value == name and _empty_list(value)
    if type(target) not in (cst.Tuple, cst.List) or type(value) not in (cst.Tuple, cst.List):
        return False
    names = target.elements  # type: ignore[attr-defined]
    values = value.elements  # type: ignore[attr-defined]
    if len(names) != len(values) or any(type(e) is not cst.Element for e in (*names, *values)):
        return False  # a starred element: the places do not pair up
    return any(
        type(t.value) is cst.Name and t.value.value == name and _empty_list(v.value)
        for t, v in zip(names, values, strict=True)
    )


def _empty_list(value: cst.BaseExpression) -> bool:
    if type(value) is cst.List:
        return not value.elements
    return (
        type(value) is cst.Call
        and type(value.func) is cst.Name
        and value.func.value == "list"
        and not value.args
    )
