"""Bindings in order, per scope: the one table of which statement binds which name, that
values, tensors, summaries and loops all read.

A scope is a function (its parameters, then its body), a lambda, or the module. Its table
lists every binding in source order, each with the name it binds, what kind of binding it
is and the expression it gives the name. Nested functions, lambdas and class bodies are
not walked: their names are bound when they run, in a scope of their own.

Each analysis reads the kinds it understands: a value flows through an assignment and an
`import`, but `losses.append(loss)` is only a store into `losses` (loops follow it, values
do not), and `x.requires_grad_()` makes a leaf of `x` without rebinding it (tensors follow
it). `bindings_of_node` is the one answer to "what does this statement bind"; the table
is that answer for every statement of a scope, computed once.
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.imports import CST_IMPORTS, names_bound_by
from gradlint.analysis.index import (
    FUNCTION_SCOPES,
    FileIndex,
    bool_literal,
    dotted_name,
    target_names,
)
from gradlint.analysis.torch_api import REQUIRES_GRAD_METHOD, STORING_METHODS


class BindingKind(enum.Enum):
    PARAM = "a function's parameter"
    LAMBDA_PARAM = "a lambda's parameter"
    ASSIGN = "`name = value`, `self.x = value`"
    UNPACKED = "one name of a tuple or list target: `a, b = value`"
    KEYED = "`out['loss'] = value`: a key of a dict, a variable of its own"
    ANNOTATED = "`name: T = value`"
    AUGMENTED = "`name += value`"
    WALRUS = "`(name := value)`"
    FOR = "a `for` statement's target"
    COMPREHENSION = "a comprehension's target"
    WITH = "`with ... as name`"
    DEF = "`def name`"
    CLASS = "`class name`"
    IMPORT = "`import name`, `from m import name`"
    STORE = "`name.append(value)`: the container now holds the value"
    # Not followed by a loop's flow (loops._FLOW_KINDS): what a list of numbers is
    # written from is not what a tensor carries.
    ITEM = "`name[i] = value`: the container now holds the value at i"
    REQUIRES_GRAD = "`name.requires_grad_()`, `name.requires_grad = True`: a leaf from now on"


K = BindingKind
# What each kind of statement binds in Python itself, for a name read later.
ASSIGNMENTS = frozenset({K.ASSIGN, K.UNPACKED, K.ANNOTATED, K.AUGMENTED, K.WALRUS})
PYTHON_BINDINGS = ASSIGNMENTS | {
    K.PARAM,
    K.LAMBDA_PARAM,
    K.FOR,
    K.COMPREHENSION,
    K.WITH,
    K.DEF,
    K.CLASS,
    K.IMPORT,
}


# Not frozen: a frozen dataclass's __init__ costs twice as much, and one is made for
# every binding of every file. Nothing changes one after it is made.
@dataclass(slots=True, eq=False)
class NameBinding:
    """One name bound by one statement or clause."""

    # The Assign, AnnAssign, AugAssign, NamedExpr, For, CompFor, With, FunctionDef,
    # ClassDef, Import(From), Param, the storing Call, or the `requires_grad_()` Expr.
    node: cst.CSTNode
    name: str
    kind: BindingKind
    # The expression the name is given: for an assignment its value, paired element-wise
    # with a tuple target where the value is a tuple too; a loop's iterable; a `with`
    # item's context expression; a parameter's default; a store's call. None for a def,
    # a class, an import and `requires_grad_()`.
    value: cst.CSTNode | None = None
    # False when the name is one element of `value` (`a, b = pair`), not all of it.
    whole: bool = True
    # The name's place among the names its target binds (`for i, (x, y) in ...`: 0, 1, 2).
    position: int = 0


def all_params(params: cst.Parameters):
    yield from params.posonly_params
    yield from params.params
    if type(params.star_arg) is cst.Param:
        yield params.star_arg
    yield from params.kwonly_params
    if params.star_kwarg is not None:
        yield params.star_kwarg


def is_false(expr: cst.CSTNode) -> bool:
    return bool_literal(expr) is False


def is_true(expr: cst.CSTNode) -> bool:
    return bool_literal(expr) is True


def is_none(expr: cst.CSTNode | None) -> bool:
    return type(expr) is cst.Name and expr.value == "None"


def keyed_name(expr: cst.CSTNode) -> str | None:
    """`out["loss"]` -> 'out["loss"]': a subscript of a dotted name by one string literal,
    treated as a variable of its own."""
    if type(expr) is not cst.Subscript or len(expr.slice) != 1:
        return None
    index = expr.slice[0].slice
    if type(index) is not cst.Index or type(index.value) is not cst.SimpleString:
        return None
    base = dotted_name(expr.value)
    if base is None:
        return None
    return f"{base}[{index.value.value}]"


def _pairs(
    target: cst.CSTNode, value: cst.CSTNode
) -> Iterator[tuple[str, cst.CSTNode, bool, bool]]:
    """(name, expression, whole, keyed) for each name `target = value` binds, pairing a
    tuple target with a tuple value of its length element-wise; a name unpacked from a
    value that cannot be split gets the whole value, with whole False."""
    if type(target) is cst.Subscript:
        keyed = keyed_name(target)
        if keyed is not None:
            yield keyed, value, True, True
        return
    if type(target) is cst.Name or type(target) is cst.Attribute:
        name = dotted_name(target)
        if name is not None:
            yield name, value, True, False
        return
    if type(target) is cst.Tuple or type(target) is cst.List:
        elements = target.elements
        if (
            (type(value) is cst.Tuple or type(value) is cst.List)
            and len(value.elements) == len(elements)
            and not any(type(e) is cst.StarredElement for e in elements)
        ):
            for t, v in zip(elements, value.elements, strict=True):
                yield from _pairs(t.value, v.value)
            return
        for name in target_names(target):
            yield name, value, False, False
        return
    if type(target) is cst.StarredElement:
        yield from _pairs(target.value, value)


def paired_value(
    target: cst.CSTNode, value: cst.CSTNode, name: str
) -> tuple[cst.CSTNode, int | None] | None:
    """The expression bound to `name` by `target = value`, pairing tuples element-wise;
    (value, 0) when the name is unpacked from a value we cannot split, (expr, None) when
    it is given all of expr."""
    for bound, expr, whole, _keyed in _pairs(target, value):
        if bound == name:
            return (expr, None) if whole else (expr, 0)
    return None


def requires_grad_switched(node: cst.CSTNode) -> str | None:
    """The variable (a dotted name, or a dict key: `y["car"]`) a statement makes a
    leaf that requires grad: `x.requires_grad_()`, `x.requires_grad = True` (or any
    value but a literal False)."""
    if type(node) is cst.Expr:
        call = node.value
        if (
            type(call) is cst.Call
            and type(call.func) is cst.Attribute
            and call.func.attr.value == REQUIRES_GRAD_METHOD
            and not (call.args and is_false(call.args[0].value))
        ):
            return dotted_name(call.func.value) or keyed_name(call.func.value)
    elif type(node) is cst.Assign and not is_false(node.value):
        for target in node.targets:
            top = target.target
            if type(top) is cst.Attribute and top.attr.value == "requires_grad":
                return dotted_name(top.value) or keyed_name(top.value)
    return None


def _assign_bindings(node: cst.Assign, out: list[NameBinding]) -> None:
    switched = requires_grad_switched(node)
    if switched:
        out.append(NameBinding(node, switched, K.REQUIRES_GRAD))
    for target in node.targets:
        top = target.target
        position = 0
        if type(top) is cst.Subscript and keyed_name(top) is None:
            container = dotted_name(top.value)
            if container is not None:
                out.append(NameBinding(node, container, K.ITEM, node.value))
            continue
        for name, expr, whole, keyed in _pairs(top, node.value):
            if keyed:
                # Only a whole target is a key of its own (`a, out["k"] = ...` is not).
                if type(top) is not cst.Subscript:
                    continue
                out.append(NameBinding(node, name, K.KEYED, expr, whole))
                continue
            kind = K.ASSIGN if type(top) is cst.Name or type(top) is cst.Attribute else K.UNPACKED
            out.append(NameBinding(node, name, kind, expr, whole, position))
            position += 1


def bindings_of_node(node: cst.CSTNode, into: list[NameBinding] | None = None) -> list[NameBinding]:
    """What this statement or clause binds, in the order it binds it: the one answer to
    "what does this statement bind". A `for` is its target; a function or class
    definition is its name (not its parameters: they belong to its own scope)."""
    out: list[NameBinding] = [] if into is None else into
    # Exact types: see index.dotted_name.
    if type(node) is cst.Assign:
        _assign_bindings(node, out)
    elif type(node) is cst.AnnAssign:
        if node.value is not None:
            for name in target_names(node.target):
                out.append(NameBinding(node, name, K.ANNOTATED, node.value))
    elif type(node) is cst.AugAssign:
        for name in target_names(node.target):
            out.append(NameBinding(node, name, K.AUGMENTED, node.value))
    elif type(node) is cst.NamedExpr:
        for name in target_names(node.target):
            out.append(NameBinding(node, name, K.WALRUS, node.value))
    elif type(node) is cst.For or type(node) is cst.CompFor:
        loop_kind = K.FOR if type(node) is cst.For else K.COMPREHENSION
        for position, name in enumerate(target_names(node.target)):
            out.append(NameBinding(node, name, loop_kind, node.iter, False, position))
    elif type(node) is cst.With:
        for item in node.items:
            if item.asname is not None:
                for name in target_names(item.asname.name):
                    out.append(NameBinding(node, name, K.WITH, item.item))
    elif type(node) is cst.FunctionDef:
        out.append(NameBinding(node, node.name.value, K.DEF))
    elif type(node) is cst.ClassDef:
        out.append(NameBinding(node, node.name.value, K.CLASS))
    elif type(node) in CST_IMPORTS:
        for local in names_bound_by(node):
            out.append(NameBinding(node, local, K.IMPORT))
    elif type(node) is cst.Call:
        func = node.func
        if type(func) is cst.Attribute and func.attr.value in STORING_METHODS:
            receiver = dotted_name(func.value)
            if receiver is not None:
                out.append(NameBinding(node, receiver, K.STORE, node))
    elif type(node) is cst.Expr:
        switched = requires_grad_switched(node)
        if switched:
            out.append(NameBinding(node, switched, K.REQUIRES_GRAD))
    return out


def bound_names(node: cst.CSTNode) -> list[str]:
    """The names a statement or clause binds in Python (`for` targets, imports and
    definitions included; not a store into a container or a dict key)."""
    return [b.name for b in bindings_of_node(node) if b.kind in PYTHON_BINDINGS]


def assigned_names(statement: cst.CSTNode) -> list[str]:
    """The names an assignment statement (or a walrus) binds to its value; none for any
    other statement."""
    return [b.name for b in bindings_of_node(statement) if b.kind in ASSIGNMENTS]


_BINDING_NODE_TYPES = frozenset(
    {
        cst.Assign,
        cst.AnnAssign,
        cst.AugAssign,
        cst.NamedExpr,
        cst.For,
        cst.CompFor,
        cst.With,
        cst.FunctionDef,
        cst.ClassDef,
        cst.Call,
        cst.Expr,
    }
    | CST_IMPORTS
)


# The statements _outside_attribute_names counts: what can assign `x.attr`.
_ATTRIBUTE_ASSIGNING = (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For)


class ScopeBindings:
    """Every scope's bindings, each table built once, when first asked for."""

    def __init__(self, index: FileIndex) -> None:
        self.index = index
        # The tables of scopes are keyed by id(scope) (LibCST's node hash is a Python
        # call, and they are asked some 20,000 times a run); `_held` keeps each scope
        # asked about alive, so that no id is reused while the tables live.
        self._held: list[cst.CSTNode] = []
        self._records: dict[int, list[NameBinding]] = {}
        # the source order of each record's node, for finding a region's records
        self._orders: dict[int, list[int]] = {}
        self._views: dict[tuple[int, frozenset[BindingKind]], dict] = {}
        self._node_views: dict[tuple[int, frozenset[BindingKind]], dict] = {}
        self._uses: dict[int, dict[str, list[cst.CSTNode]]] = {}
        self._bound_names: dict[int, frozenset[str]] = {}
        self._attributes: dict[cst.ClassDef, dict[str, list[NameBinding]]] = {}
        self._attribute_names: dict[str, int] | None = None

    def attribute_bindings(self, cls: cst.ClassDef, name: str) -> list[NameBinding] | None:
        """Every binding of `self.x` (name) in the class's methods and the functions
        nested in them, flow-insensitively: what the attribute may hold anywhere in the
        object's life. None when code outside the class may bind an attribute of that
        name on some object (`agent.env = ...`), which could be this class's instance."""
        return self.family_attribute_bindings([cls], name)

    def own_attribute_bindings(self, cls: cst.ClassDef, name: str) -> list[NameBinding]:
        """The bindings of `self.x` (name) the class's own methods make, whatever code
        outside it may bind on other objects (attribute_bindings is None then)."""
        return list(self._attribute_table(cls).get(name, []))

    def family_attribute_bindings(
        self, classes: list[cst.ClassDef], name: str
    ) -> list[NameBinding] | None:
        """attribute_bindings of an object whose methods are those of several classes
        (a class, its bases and its subclasses): None when code outside all of them may
        bind an attribute of that name."""
        found: list[NameBinding] = []
        for cls in classes:
            found.extend(self._attribute_table(cls).get(name, []))
        # another class's own `self.x = ...` binds its instances, not these
        if self.bound_outside_classes(name):
            return None
        return found

    def attributes_of(self, cls: cst.ClassDef) -> dict[str, list[NameBinding]]:
        """Every `self.x` (one level) the class's methods bind, with its bindings."""
        return self._attribute_table(cls)

    def _attribute_table(self, cls: cst.ClassDef) -> dict[str, list[NameBinding]]:
        table = self._attributes.get(cls)
        if table is None:
            table = {}
            for node in self.index.of_types_in(cls, cst.FunctionDef):
                for record in self.of_scope(node):
                    if record.name.startswith("self.") and record.name.count(".") == 1:
                        table.setdefault(record.name, []).append(record)
            self._attributes[cls] = table
        return table

    def bound_outside_classes(self, name: str) -> bool:
        """Does code other than a class's own `self.x = ...` assign an attribute named
        like `self.x` (name) anywhere in the file (`agent.x = ...`, `make().x = ...`)?"""
        attr = name.rpartition(".")[2]
        own = sum(
            1
            for cls in self.index.classes
            for b in self._attribute_table(cls).get(name, [])
            if type(b.node) in _ATTRIBUTE_ASSIGNING
        )
        return self._outside_attribute_names().get(attr, 0) > own

    def _outside_attribute_names(self) -> dict[str, int]:
        """How many assignments of each attribute name (`x.attr = ...` on any object,
        `make().attr = ...` too) the file makes, to tell a class's own bindings from
        another object's."""
        if self._attribute_names is None:
            counts: dict[str, int] = {}
            for node in self.index.of_types(*_ATTRIBUTE_ASSIGNING):
                targets: list[cst.BaseExpression]
                if type(node) is cst.Assign:
                    targets = [t.target for t in node.targets]
                elif type(node) in _ATTRIBUTE_ASSIGNING:
                    targets = [node.target]
                else:
                    continue
                while targets:
                    target = targets.pop()
                    if type(target) is cst.Attribute:
                        attr = target.attr.value
                        counts[attr] = counts.get(attr, 0) + 1
                    elif type(target) is cst.Tuple or type(target) is cst.List:
                        targets.extend(e.value for e in target.elements)
                    elif type(target) is cst.StarredElement:
                        targets.append(target.value)
            self._attribute_names = counts
        return self._attribute_names

    def of_scope(self, scope: cst.CSTNode) -> list[NameBinding]:
        """The scope's bindings in source order: parameters first, then its body's."""
        records = self._records.get(id(scope))
        if records is None:
            records = []
            if type(scope) in FUNCTION_SCOPES:
                kind = K.PARAM if type(scope) is cst.FunctionDef else K.LAMBDA_PARAM
                for param in all_params(scope.params):  # type: ignore[attr-defined]
                    records.append(NameBinding(param, param.name.value, kind, param.default))
                root = scope.body  # type: ignore[attr-defined]
            else:
                root = scope
            self._collect(root, records)
            self._held.append(scope)
            self._records[id(scope)] = records
        return records

    def binds(self, scope: cst.CSTNode, name: str) -> bool:
        """Does the scope bind `name` itself (a parameter, an assignment, a loop or
        `with` target, an import; `self.x` for an attribute it assigns)? Then the
        scope's reads of the name are its own, not an enclosing scope's value."""
        names = self._bound_names.get(id(scope))
        if names is None:
            names = self._bound_names[id(scope)] = frozenset(r.name for r in self.of_scope(scope))
        return name in names

    def _collect(self, root: cst.CSTNode, records: list[NameBinding]) -> None:
        for node in self.index.of_types_in(root, *_BINDING_NODE_TYPES, into_functions=False):
            bindings_of_node(node, records)

    def records(
        self, scope: cst.CSTNode, kinds: frozenset[BindingKind]
    ) -> dict[str, list[NameBinding]]:
        """The scope's bindings of these kinds, by name, in source order."""
        key = (id(scope), kinds)
        view = self._views.get(key)
        if view is None:
            view = {}
            for record in self.of_scope(scope):  # holds the scope
                if record.kind in kinds:
                    view.setdefault(record.name, []).append(record)
            self._views[key] = view
        return view

    def nodes(
        self, scope: cst.CSTNode, kinds: frozenset[BindingKind]
    ) -> dict[str, list[cst.CSTNode]]:
        """The scope's binding statements of these kinds, by the name they bind."""
        key = (id(scope), kinds)
        view = self._node_views.get(key)
        if view is None:
            view = {
                name: [record.node for record in found]
                for name, found in self.records(scope, kinds).items()
            }
            self._node_views[key] = view
        return view

    def in_region(self, region: cst.CSTNode) -> list[NameBinding]:
        """The bindings made inside region (a loop's body, a scope's body), in source
        order; nested scopes excluded, as in the scope's own table."""
        index = self.index
        scope = index.scope_of(region)
        covered = True
        for anc in index.ancestors(region):
            if anc is scope:
                break
            if type(anc) is cst.ClassDef:
                covered = False  # a class body is no part of its scope's table
                break
        if not covered:
            found: list[NameBinding] = []
            self._collect(region, found)
            return found
        records = self.of_scope(scope)
        span = index.span(region)
        if span is None:
            found = []
            self._collect(region, found)
            return found
        orders = self._orders.get(id(scope))
        if orders is None:
            order = index.order.by_id
            orders = self._orders[id(scope)] = [order.get(id(r.node), -1) for r in records]
        start, stop = span
        # The region's own node is not a binding made inside it (a `for` region's target).
        return records[bisect.bisect_right(orders, start) : bisect.bisect_left(orders, stop)]

    def uses(self, scope: cst.CSTNode) -> dict[str, list[cst.CSTNode]]:
        """The reads of each dotted name in the scope (not the targets that bind it), in
        source order."""
        found = self._uses.get(id(scope))
        if found is not None:
            return found
        found = {}
        root = scope.body if type(scope) in FUNCTION_SCOPES else scope  # type: ignore[attr-defined]
        # ids of the targets, and of the `attr` Names of the attributes walked so far (a
        # node's parent comes before it): every node of the scope is tested, and a set
        # of nodes would hash each through LibCST's __hash__, a Python call. The nodes
        # are the tree's, alive for the whole lint, so their ids are theirs.
        targets: set[int] = set()
        attributes: set[int] = set()
        for node in self.index.walk(root):
            kind = type(node)
            if kind is cst.Assign:
                targets.update(id(t.target) for t in node.targets)
            elif (
                kind is cst.AnnAssign
                or kind is cst.For
                or kind is cst.CompFor
                or kind is cst.NamedExpr
            ):
                targets.add(id(node.target))
            if id(node) in targets:
                if kind is cst.Tuple or kind is cst.List:
                    targets.update(id(e.value) for e in node.elements)
                elif kind is cst.StarredElement:
                    targets.add(id(node.value))
                elif kind is cst.Attribute:
                    attributes.add(id(node.attr))
                continue
            if kind is cst.Attribute:
                attributes.add(id(node.attr))
            elif kind is cst.Arg and node.keyword is not None:
                # the `logits` of `Categorical(logits=x)` names a parameter of the callee,
                # not a read of the caller's `logits`
                attributes.add(id(node.keyword))
            if kind is cst.Name or kind is cst.Attribute:
                if id(node) in attributes:
                    continue  # the `attr` of `x.attr`: read as part of its attribute
                name = dotted_name(node)
                if name is not None:
                    found.setdefault(name, []).append(node)
        self._held.append(scope)
        self._uses[id(scope)] = found
        return found
