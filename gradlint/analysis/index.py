"""Structural facts about one module, computed in a single iterative walk: each node's
parent, its textual order, the scope (function or module) it belongs to, and the
import-alias table that resolves `T.no_grad`, `ng`, `grad` to qualified names.

The walk is iterative so that deeply nested generated code cannot overflow the stack.
"""

from __future__ import annotations

import bisect
import collections.abc
import dataclasses
import re
import typing
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import libcst as cst

from gradlint.analysis.imports import CST_IMPORTS, ImportMap, cst_statement
from gradlint.analysis.torch_api import (
    CHAINING_FUNCTIONS,
    ELEMENT_PRESERVING_BUILTINS,
    MODULE_MODE_ATTRIBUTES,
)
from gradlint.ipynb import CELL_MARKER_PREFIX, is_notebook

if TYPE_CHECKING:
    from gradlint.analysis.project import ProjectIndex


def dotted_name(node: cst.CSTNode | None) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None. Parentheses are ignored."""
    # Exact types (these classes have no subclasses): isinstance against LibCST's
    # ABC-derived classes is slow whenever it fails, and this runs on every expression
    # (80,000 times on the RL tree, a plain name or no chain at all most of them).
    kind = type(node)
    if kind is _NAME:
        return node.value  # type: ignore[union-attr]
    if kind is not _ATTRIBUTE:
        return None
    parts: list[str] = []
    while kind is _ATTRIBUTE:
        parts.append(node.attr.value)  # type: ignore[union-attr]
        node = node.value  # type: ignore[union-attr]
        kind = type(node)
    if kind is _NAME:
        parts.append(node.value)  # type: ignore[union-attr]
        parts.reverse()
        return ".".join(parts)
    return None


def bool_literal(expr: cst.CSTNode | None) -> bool | None:
    """True or False for the literal `True` or `False`; None for any other expression
    (a flag that is a variable, `1`, `None`): what a switch's or a keyword's argument
    sets when it is written out."""
    if type(expr) is cst.Name and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


def positional_arguments(call: cst.Call) -> list[cst.BaseExpression]:
    """The values a call passes by position, up to any `*args` (which may hold more)."""
    return [arg.value for arg in call.args if arg.keyword is None and not arg.star]


def keyword_is_true(call: cst.Call, name: str) -> bool:
    """Does the call pass the keyword argument `name=True` (`requires_grad=True`)?"""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return bool_literal(arg.value) is True
    return False


_NAME = cst.Name
_ATTRIBUTE = cst.Attribute


def module_path(node: cst.CSTNode | None) -> str | None:
    """The key of a module reached by attributes and constant subscripts: `a.b.c` as
    dotted_name spells it, and `model["f_base_net"]`, `nets[0]`, `self.nets["G"].enc`
    with the key written as its repr (`model['f_base_net']`), so that one module kept
    in a dict or list is one path whichever quotes name it. A key that is not a
    constant (`nets[name]`) gives None: which element it is cannot be told."""
    parts: list[str] = []
    while True:
        kind = type(node)
        if kind is cst.Attribute:
            parts.append("." + node.attr.value)  # type: ignore[union-attr]
            node = node.value  # type: ignore[union-attr]
        elif kind is cst.Subscript:
            key = _constant_key(node)  # type: ignore[arg-type]
            if key is None:
                return None
            parts.append(f"[{key}]")
            node = node.value  # type: ignore[union-attr]
        elif kind is cst.Name:
            parts.append(node.value)  # type: ignore[union-attr]
            return "".join(reversed(parts))
        else:
            return None


_LEADING_KEY = re.compile(r"""\[('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\d+)\]""")


def element_key_length(path: str) -> int | None:
    """The length of the constant key a module path starts with (`['G']` of
    `['G'].enc`, as module_path spells keys); None when it starts otherwise."""
    match = _LEADING_KEY.match(path)
    return match.end() if match is not None else None


def every_element_path(path: str) -> str | None:
    """`nets[]`, the path of every element of a container, for a path that picks one
    of them by a constant key last (`nets[0]`, `models['G']`); None otherwise."""
    at = path.rfind("[")
    while at > 0:
        if element_key_length(path[at:]) == len(path) - at:
            return path[:at] + "[]"
        at = path.rfind("[", 0, at)
    return None


def literal_entry(container: cst.CSTNode, path: str) -> tuple[cst.BaseExpression, str] | None:
    """(the value, the rest of the path) that a dict, list or tuple written out
    (`{"G": G, "D": D}`, `[actor, critic]`) holds under the first constant key of a path
    as module_path spells it (`['G'].enc` gives `G` and `.enc`); None when the path
    starts otherwise, the key is not there, or an unpacked element (`**other`,
    `*rest`) may hold it."""
    match = _LEADING_KEY.match(path)
    if match is None:
        return None
    key, rest = match.group(1), path[match.end() :]
    if type(container) is cst.Dict:
        found = None
        for element in container.elements:
            if type(element) is not cst.DictElement:
                return None
            if _key_spelling(element.key) == key:
                found = element.value  # a later entry of the same key wins
        return (found, rest) if found is not None else None
    if type(container) in (cst.List, cst.Tuple):
        elements = container.elements  # type: ignore[attr-defined]
        if any(type(e) is cst.StarredElement for e in elements):
            return None
        index = int(key) if key.isdigit() else None  # module_path writes no negative key
        if index is None or index >= len(elements):
            return None
        return elements[index].value, rest
    return None


def _key_spelling(value: cst.CSTNode) -> str | None:
    """A constant key as module_path writes it: a string's repr, an integer's digits."""
    if type(value) is cst.SimpleString:
        evaluated = value.evaluated_value
        return repr(evaluated) if isinstance(evaluated, str) else None
    if type(value) is cst.Integer:
        return str(value.evaluated_value)
    return None


def _constant_key(subscript: cst.Subscript) -> str | None:
    if len(subscript.slice) != 1:
        return None
    index = subscript.slice[0].slice
    if type(index) is not cst.Index:
        return None
    return _key_spelling(index.value)


# pytest's fixture decorators, bare or called (`@pytest.fixture(scope="module")`).
PYTEST_FIXTURES = frozenset({"pytest.fixture"})


def _is_fixture_decorator(index: FileIndex, decorator: cst.BaseExpression) -> bool:
    called = decorator.func if type(decorator) is cst.Call else decorator
    return index.qualified_name(called) in PYTEST_FIXTURES


def named_like_a_test_file(path: str) -> bool:
    """Is the file one pytest collects by its name (`test_*.py`, `*_test.py`), or its
    `conftest.py`? A `def test_model(model, path)` elsewhere (a helper in `utils.py`) is
    no test: nothing collects it, its callers call it."""
    stem = path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return stem.startswith("test_") or stem.endswith("_test") or stem == "conftest"


def path_root(path: str) -> str:
    """The variable a module path starts from: `model` for `model['f'].enc`."""
    for position, char in enumerate(path):
        if char in ".[":
            return path[:position]
    return path


# Comprehensions whose value is their elements (`elt`), and all of them (a dict's has a
# key and a value): each a scope of its own, with its `for` clauses
ELEMENT_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp)
COMPREHENSIONS = (*ELEMENT_COMPREHENSIONS, cst.DictComp)


def _root_name(node: cst.CSTNode) -> cst.CSTNode:
    """The Name a dotted read starts from (`p` of `p.grad.data`); any other node itself."""
    while type(node) is cst.Attribute:
        node = node.value
    return node


def target_names(target: cst.CSTNode) -> list[str]:
    """Dotted names bound by an assignment target (tuples and starred unpacked)."""
    if type(target) is cst.Name or type(target) is cst.Attribute:
        name = dotted_name(target)
        return [name] if name else []
    if type(target) is cst.Tuple or type(target) is cst.List:
        out: list[str] = []
        for element in target.elements:
            out.extend(target_names(element.value))
        return out
    if type(target) is cst.StarredElement:
        return target_names(target.value)
    return []


def elements_of(iterable: cst.BaseExpression) -> cst.BaseExpression:
    """The iterable whose elements `iterable` hands out as they are: `ps` of `list(ps)`,
    `tuple(ps)`, `reversed(ps)` (nested too), else `iterable` itself."""
    while (
        type(iterable) is cst.Call
        and type(iterable.func) is cst.Name
        and iterable.func.value in ELEMENT_PRESERVING_BUILTINS
        and len(iterable.args) == 1
        and iterable.args[0].keyword is None
        and iterable.args[0].star == ""
    ):
        iterable = iterable.args[0].value
    return iterable


def loop_element_sources(
    target: cst.CSTNode, iterable: cst.BaseExpression
) -> list[cst.BaseExpression | None]:
    """For each name `target_names(target)` lists, in that order, the iterable whose
    elements it takes in turn, or None where that is not an iterable's element:
    `for p in ps` (p: ps), `for i, p in enumerate(ps)` (i: None, p: ps), `for e, p in
    zip(ema.parameters(), model.parameters())` (e and p: each argument), nested
    unpacking included. Of another iterable of tuples only the last name is taken for
    its element (`for n, p in model.named_parameters()`), as the pair's value.
    `list(ps)`, `tuple(ps)` and `reversed(ps)` hand out the elements of `ps`."""
    iterable = elements_of(iterable)
    if type(target) is cst.Name or type(target) is cst.Attribute:
        return [iterable] if dotted_name(target) else []
    if type(target) is cst.StarredElement:
        return [None] * len(target_names(target))
    if type(target) is not cst.Tuple and type(target) is not cst.List:
        return []
    elements = [element.value for element in target.elements]
    unpacked = not any(type(e) is cst.StarredElement for e in elements)
    if unpacked and type(iterable) is cst.Call and type(iterable.func) is cst.Name:
        # `enumerate(ps, start=1)` and `zip(a, b, strict=True)` walk the same elements
        args = [a for a in iterable.args if a.keyword is None]
        plain = all(a.star == "" for a in args)
        if plain and iterable.func.value == "zip" and len(args) == len(elements):
            return [
                source
                for element, arg in zip(elements, args, strict=True)
                for source in loop_element_sources(element, arg.value)
            ]
        if plain and iterable.func.value == "enumerate" and args and len(elements) == 2:
            return [None] * len(target_names(elements[0])) + loop_element_sources(
                elements[1], args[0].value
            )
    names = len(target_names(target))
    return [None] * (names - 1) + [iterable] if names else []


def registered_name(call: cst.Call, method: str) -> str | None:
    """The written-out name `self.<method>("name", ...)` registers (`register_buffer`,
    `register_parameter`); None for another call or a name that is computed."""
    if dotted_name(call.func) != f"self.{method}" or not call.args:
        return None
    first = call.args[0].value
    if type(first) is not cst.SimpleString:
        return None
    name = first.evaluated_value
    return name if isinstance(name, str) else None  # a b"..." name is never looked up


def forward_method(cls: cst.ClassDef) -> cst.FunctionDef | None:
    """The `forward` the class defines in its own body, if it defines one."""
    return own_method(cls, "forward")


def own_method(cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    """The method of that name the class defines in its own body, if it defines one:
    the last, which is the one Python binds."""
    found = None
    for statement in cls.body.body:
        if type(statement) is cst.FunctionDef and statement.name.value == name:
            found = statement
    return found


def node_types(*bases: type) -> frozenset[type]:
    """Every LibCST node class that is one of `bases` or derives from one of them.

    `type(node) in node_types(...)` answers what `isinstance(node, bases)` does, without
    its cost: LibCST's node classes are ABCs, and an isinstance that fails runs ABCMeta's
    check in Python, which the analysis's hottest loops would pay on every node."""
    found: set[type] = set()
    pending = list(bases)
    while pending:
        cls = pending.pop()
        if cls not in found:
            found.add(cls)
            pending.extend(cls.__subclasses__())
    return frozenset(found)


# The node types that open a scope of their own for the names bound inside them.
FUNCTION_SCOPES = frozenset({cst.FunctionDef, cst.Lambda})
LOOPS = frozenset({cst.For, cst.While})
STATEMENTS = node_types(cst.BaseSmallStatement, cst.BaseCompoundStatement)


# The small statements after which a path goes no further in its block.
LEAVING_STATEMENTS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def _line_settles(small: Sequence[cst.BaseSmallStatement], marks: set[cst.CSTNode]) -> bool:
    """One line's small statements: one of them is a mark, or ends the path."""
    return any(s in marks or _leaves(s) for s in small)


def _leaves(statement: cst.CSTNode) -> bool:
    """A small statement after which the path goes no further in its block: a
    LEAVING_STATEMENTS one, or `assert False` (argparse-style "cannot happen")."""
    if isinstance(statement, LEAVING_STATEMENTS):
        return True
    if type(statement) is cst.Assert:
        test = statement.test
        return bool_literal(test) is False or (type(test) is cst.Integer and test.value == "0")
    return False


# A line of simple statements, or a compound statement: what sits directly in a block.
STATEMENT_LINES = node_types(cst.SimpleStatementLine, cst.BaseCompoundStatement)


# Nodes that are only punctuation or whitespace: no rule looks at them, and skipping them
# roughly halves the walk.
_TRIVIA = (
    cst.BaseParenthesizableWhitespace,
    cst.EmptyLine,
    cst.TrailingWhitespace,
    cst.Newline,
    cst.Comma,
    cst.Semicolon,
    cst.Dot,
    cst.Colon,
    cst.AssignEqual,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.ImportStar,
)
_TRIVIA_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "leading_lines",
        "lines_after_decorators",
        "header",
        "footer",
        "indent",
        "semicolon",
        "comma",
        "dot",
        "colon",
        "equal",
        "newline",
        "trailing_whitespace",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "asynchronous",
    }
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _holds_text(annotation: object) -> bool:
    """A field typed `str` or a Literal of strings (`Name.value`, `Arg.star`): it never
    holds a node, and a Name, the commonest node, then has no field to read."""
    return annotation is str or (
        typing.get_origin(annotation) is typing.Literal
        and all(type(a) is str for a in typing.get_args(annotation))
    )


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(cls)
            if f.name not in _TRIVIA_FIELDS
            and not f.name.startswith("whitespace")
            and not _holds_text(f.type)
        )
        # Decorators come first in the source, though last among FunctionDef's fields.
        if "decorators" in names:
            names = ("decorators",) + tuple(n for n in names if n != "decorators")
        _FIELDS[cls] = names
    return names


# type -> 0 (not a node), 1 (trivia), 2 (a node that matters). LibCST's node classes are
# ABCs, and isinstance against an ABC is the walk's single largest cost, so each type is
# classified once.
_KIND: dict[type, int] = {}


def _kind(cls: type) -> int:
    kind = _KIND.get(cls)
    if kind is None:
        if not issubclass(cls, cst.CSTNode):
            kind = 0
        elif issubclass(cls, _TRIVIA):
            kind = 1
        else:
            kind = 2
        _KIND[cls] = kind
    return kind


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The node's children that carry meaning, in source order. LibCST's `.children`
    rebuilds every child through the visitor protocol, which costs more than parsing;
    reading the dataclass fields directly is several times cheaper."""
    out: list[cst.CSTNode] = []
    kinds = _KIND
    for name in _fields(type(node)):
        value = getattr(node, name)
        cls = type(value)
        if cls is tuple or cls is list:
            for item in value:
                item_kind = kinds.get(type(item))
                if item_kind is None:
                    item_kind = _kind(type(item))
                if item_kind == 2:
                    out.append(item)
        else:
            kind = kinds.get(cls)
            if kind is None:
                kind = _kind(cls)
            if kind == 2:
                out.append(value)
    return out


# type -> a function of a node of that type giving what child_nodes gives, None for a
# type without a field that may hold a child (`Name`): the index walk's per-node step.
_CHILDREN: dict[type, Any] = {}


def _children_of_type(cls: type) -> Any:
    """child_nodes for one node type, its fields read in one generated function: a
    field whose annotation admits only nodes that matter (`Call.func`, a
    `BaseExpression`; `Call.args`, a sequence of `Arg`) is taken whole, with no test of
    each value's type; any other field is tested as child_nodes tests it."""
    if cls in _CHILDREN:
        return _CHILDREN[cls]
    names = _fields(cls)
    getter = None
    if names:
        annotations = {f.name: f.type for f in dataclasses.fields(cls)}
        lines = ["def children(node):", "    out = []"]
        for name in names:
            lines += ["    " + line for line in _field_code(name, annotations[name])]
        lines.append("    return out")
        namespace: dict[str, Any] = {"kinds": _KIND, "kind_of": _kind}
        exec("\n".join(lines), namespace)  # noqa: S102 - our own text, from the fields
        getter = namespace["children"]
    _CHILDREN[cls] = getter
    return getter


def _always_matters(annotation: object) -> bool:
    """Is every value a field so annotated may hold a node that matters (kind 2)?"""
    return (
        isinstance(annotation, type)
        and issubclass(annotation, cst.CSTNode)
        and all(_kind(c) == 2 for c in node_types(annotation))
    )


def _field_code(name: str, annotation: object) -> list[str]:
    """The lines of _children_of_type's function that read one field."""
    if _always_matters(annotation):
        return [f"out.append(node.{name})"]
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin is typing.Union and len(args) == 2 and type(None) in args:
        (inner,) = (a for a in args if a is not type(None))
        if _always_matters(inner):
            return [f"value = node.{name}", "if value is not None:", "    out.append(value)"]
    if origin is collections.abc.Sequence and len(args) == 1 and _always_matters(args[0]):
        return [f"out += node.{name}"]
    return [  # child_nodes' test of one field
        f"value = node.{name}",
        "value_cls = type(value)",
        "if value_cls is tuple or value_cls is list:",
        "    for item in value:",
        "        kind = kinds.get(type(item))",
        "        if kind is None:",
        "            kind = kind_of(type(item))",
        "        if kind == 2:",
        "            out.append(item)",
        "else:",
        "    kind = kinds.get(value_cls)",
        "    if kind is None:",
        "        kind = kind_of(value_cls)",
        "    if kind == 2:",
        "        out.append(value)",
    ]


_NESTED_SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})

_V = typing.TypeVar("_V")


class NodeTable(typing.Generic[_V]):
    """What a dict keyed by node gives its readers (`get`, `[]`, `in`), stored by the
    node's id in `by_id`. LibCST's `CSTNode.__hash__` is a Python function (`return
    id(self)`, nodes being equal only to themselves), and the index's parent and order
    tables, keyed by node, cost two of its calls per node of every file and one per
    lookup (660,000 calls on the RL tree, a tenth of gradlint's own instructions); a
    builtin `id` costs a fraction of one. The keys are ids of the nodes the index holds,
    so none of them is reused by another object while the table lives, and a node the
    index has not seen is not found, as before. A hot loop may read `by_id` itself."""

    __slots__ = ("by_id",)

    def __init__(self, by_id: dict[int, _V]) -> None:
        self.by_id = by_id

    @typing.overload
    def get(self, node: object) -> _V | None: ...
    @typing.overload
    def get(self, node: object, default: _V) -> _V: ...
    def get(self, node: object, default: _V | None = None) -> _V | None:
        return self.by_id.get(id(node), default)

    def __getitem__(self, node: object) -> _V:
        return self.by_id[id(node)]

    def __contains__(self, node: object) -> bool:
        return id(node) in self.by_id

    def __len__(self) -> int:
        return len(self.by_id)


def _parameter_names(scope: cst.FunctionDef | cst.Lambda) -> set[str]:
    # bindings.all_params' reading: bindings imports this module, so not called here
    params = scope.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names


class FileIndex:
    def __init__(self, module: cst.Module, project: ProjectIndex | None = None) -> None:
        """`project`: where the names of the file's star imports of its project's own
        modules are read (ProjectIndex.star_names); without it they stay unbound."""
        self.module = module
        # a notebook's program (gradlint.notebook): its cells' last expressions are shown
        self.is_notebook = project is not None and is_notebook(project.path)
        self._cell_results: frozenset[cst.Expr] | None = None
        # id(node) -> its parent, id(node) -> its pre-order position: the index's own
        # queries read these; `parent` and `order` are the same tables read by node
        self._parent: dict[int, cst.CSTNode] = {}
        self._order: dict[int, int] = {}
        self.parent: NodeTable[cst.CSTNode] = NodeTable(self._parent)
        self.order: NodeTable[int] = NodeTable(self._order)
        self.nodes: list[cst.CSTNode] = []  # pre-order, i.e. source order
        # the file's imports (analysis.imports reads them, for this tree and for `ast`'s)
        self.imports = ImportMap()
        self.functions: list[cst.FunctionDef] = []
        self.classes: list[cst.ClassDef] = []
        self.calls: list[cst.Call] = []
        self.loops: list[cst.For | cst.While] = []  # source order
        # exact type -> the pre-order positions of its nodes (of_types)
        self._by_type: dict[type, list[int]] = {}
        # _span_end[i]: one past the last pre-order position of nodes[i]'s subtree, so a
        # subtree is the slice nodes[i:_span_end[i]] and walking it needs no stack.
        self._span_end: list[int] = []
        # id of a block -> the pre-order positions of its statements (_statement_starts)
        self._block_starts: dict[int, list[int]] = {}
        self._scope_cache: dict[int, cst.CSTNode] = {}  # id(node) -> scope_of(node)
        self._returns: dict[cst.FunctionDef, list[tuple[cst.Return, cst.BaseExpression]]] = {}
        self._lambdas: list[cst.Lambda] = []
        self._called: frozenset[str] | None = None  # _called_names
        # pre-order positions of the functions, lambdas and classes, sorted (walk)
        self._nested_positions: list[int] | None = None
        self._comprehension_reads_by_id: dict[int, cst.CompFor] | None = None  # reaching
        self._walk()
        imports = self.imports
        if imports.star_imports and project is not None and project.enabled:
            self._bind_star_names(project)
        # local name -> qualified, absolute imports only
        self.aliases: dict[str, str] = imports.qualified_names()
        # local name -> (module, relative level, imported name or None for a module),
        # relative imports included: what the project-wide pass resolves to files.
        self.imported_from: dict[str, tuple[str, int, str | None]] = imports.origins()
        # (module, relative level) of each `from module import *`, in source order
        self.star_imports: list[tuple[str, int]] = imports.star_imports
        self._qualify = imports.qualify  # asked of most calls and names: bound once
        # the imported names some function or lambda takes as a parameter: nearly always
        # none, and then no name's scope is looked up
        imported = imports.names()
        self._param_shadowed = frozenset(
            name for param in self.of_types(cst.Param) if (name := param.name.value) in imported
        )

    def _walk(self) -> None:
        # One loop for the whole tree; each node's children come from its type's
        # generated function (_children_of_type): this runs once per node of every
        # file, and testing each field's value cost more than the rest of the step.
        # None on the stack closes the subtree opened last (its position is on `open_`).
        stack: list[cst.CSTNode | None] = [self.module]
        pop, push, push_all = stack.pop, stack.append, stack.extend
        open_: list[int] = []
        parent = self._parent
        nodes = self.nodes
        end = self._span_end
        # exact type -> (its pre-order positions, its children function)
        types: dict[type, tuple[list[int], Any]] = {}
        while stack:
            node = pop()
            if node is None:
                end[open_.pop()] = len(nodes)
                continue
            position = len(nodes)
            nodes.append(node)
            end.append(position + 1)  # a leaf's span; a node with children closes later
            cls = type(node)
            seen = types.get(cls)
            if seen is None:
                seen = types[cls] = ([], _children_of_type(cls))
            seen[0].append(position)
            children_of = seen[1]
            if children_of is None:
                continue
            children = children_of(node)
            if not children:
                continue
            for child in children:
                parent[id(child)] = node
            open_.append(position)
            push(None)
            children.reverse()
            push_all(children)
        self._by_type = {cls: positions for cls, (positions, _) in types.items()}
        # each node's position, in one pass of builtins over the pre-order list
        self._order.update(zip(map(id, nodes), range(len(nodes)), strict=True))
        # Exact types: these classes have no subclasses, and isinstance on LibCST's ABCs
        # is slow enough to matter on every node.
        self.calls = self.of_types(cst.Call)
        self.functions = self.of_types(cst.FunctionDef)
        self.classes = self.of_types(cst.ClassDef)
        self.loops = self.of_types(cst.For, cst.While)
        self._lambdas = self.of_types(cst.Lambda)
        for node in self.of_types(*CST_IMPORTS):
            self._record_import(node)

    def of_types(self, *types: type) -> list[Any]:
        """The nodes of these exact types, in source (pre-) order: what a pass over
        `nodes` testing each node's type finds, without the pass. Typed Any, as walk's
        nodes are."""
        by_type = self._by_type
        if len(types) == 1:
            positions = by_type.get(types[0], [])
        else:
            positions = []
            for cls in types:
                found = by_type.get(cls)
                if found:
                    positions += found
            positions.sort()
        return list(map(self.nodes.__getitem__, positions))

    def of_types_in(
        self, root: cst.CSTNode, *types: type, into_functions: bool = True
    ) -> list[Any]:
        """The nodes of these exact types that `walk(root, into_functions=...)` gives, in
        its (source) order, without looking at the others: the types' positions under
        the root, less, unless into_functions, those inside the nested scopes there (a
        class's `self.x = ...` assignments among all its nodes)."""
        span = self.span(root)
        if span is None:
            found = self.walk(root, into_functions=into_functions)
            return [n for n in found if type(n) in types]
        start, stop = span
        by_type = self._by_type
        picked: list[int] = []
        for cls in types:
            positions = by_type.get(cls)
            if positions:
                picked += positions[
                    bisect.bisect_left(positions, start) : bisect.bisect_left(positions, stop)
                ]
        if len(types) > 1:
            picked.sort()
        if not into_functions and picked:
            picked = self._outside_nested_scopes(start, stop, picked)
        return list(map(self.nodes.__getitem__, picked))

    def _outside_nested_scopes(self, start: int, stop: int, picked: list[int]) -> list[int]:
        """The positions of `picked` (sorted, within start..stop) that walk(nodes[start])
        gives: not inside a function, lambda or class under it (the def itself is)."""
        scopes = self._nested_scope_positions()
        first = bisect.bisect_right(scopes, start)
        last = bisect.bisect_left(scopes, stop)
        if first == last:
            return picked
        end = self._span_end
        kept: list[int] = []
        k = first
        inside_until = -1  # one past the nested scope the positions are in
        for i in picked:
            while k < last and scopes[k] < i:
                if scopes[k] >= inside_until:
                    inside_until = end[scopes[k]]
                k += 1
            if i >= inside_until:
                kept.append(i)
        return kept

    def _nested_scope_positions(self) -> list[int]:
        """The pre-order positions of the functions, lambdas and classes, sorted."""
        scopes = self._nested_positions
        if scopes is None:
            order = self._order
            scopes = self._nested_positions = sorted(
                order[id(n)]
                for group in (self.functions, self.classes, self._lambdas)
                for n in group
            )
        return scopes

    def node_types(self) -> list[type]:
        """The types of the file's nodes (each once)."""
        return list(self._by_type)

    def kids(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The node's meaningful children in source order (read off the pre-order list:
        each child's subtree ends where the next child starts)."""
        i = self._order.get(id(node))
        if i is None or self.nodes[i] is not node:
            return child_nodes(node)
        nodes = self.nodes
        end = self._span_end
        stop = end[i]
        out = []
        i += 1
        while i < stop:
            out.append(nodes[i])
            i = end[i]
        return out

    def span(self, node: cst.CSTNode) -> tuple[int, int] | None:
        """(first, one past the last) pre-order position of node's subtree, or None for a
        node the index has not seen."""
        i = self._order.get(id(node))
        if i is None or self.nodes[i] is not node:
            return None
        return i, self._span_end[i]

    def _bind_star_names(self, project: ProjectIndex) -> None:
        """`Variable` after `from utils import *` is torch.autograd.Variable when utils.py
        imports it so: every rule that resolves names then sees it. A name the file
        defines at its top level is its own."""
        names = project.star_names(self.imports.star_imports)
        if not names:
            return
        for stmt in self.module.body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                names.pop(stmt.name.value, None)
        self.imports.add_star_names(names)

    def _record_import(self, node: cst.CSTNode) -> None:
        statement = cst_statement(node)
        if statement is None:
            return
        # where it binds: the innermost function or class around it (its parents are
        # known by now: a node's children get their parent when it is walked)
        scope = None
        for anc in self.ancestors(node):
            if type(anc) in _NESTED_SCOPES:
                scope = anc
                break
        self.imports.add(statement, node, scope)

    # -- queries -------------------------------------------------------------------

    def qualified_name(self, node: cst.CSTNode | None) -> str | None:
        """Resolve a Name/Attribute chain through imports: with `import torch as T`,
        `T.autograd.grad` -> `torch.autograd.grad`. Unimported roots stay as written, and
        so does a root that a parameter of an enclosing function hides (hides_import)."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        # asked of most calls and names: the scope is looked up only in a file where some
        # parameter has an imported name
        if self._param_shadowed and self.hides_import(node, dotted.partition(".")[0]):  # type: ignore[arg-type]
            return dotted
        return self._qualify(dotted)

    def import_alias_at(self, node: cst.CSTNode, head: str) -> str | None:
        """What the plain name `head`, read at `node`, names through the file's absolute
        imports (`aliases`); None where it is no import there."""
        resolved = self.aliases.get(head)
        if resolved is None or not self.hides_import(node, head):
            return resolved
        return None

    def hides_import(self, node: cst.CSTNode, head: str) -> bool:
        """Is `head` at `node` a parameter of an enclosing function rather than the
        module's import of that name? `def evaluate_neuralnet(nn, env): nn(obs)` in a
        file with `import torch.nn as nn` calls the model it was given."""
        if head not in self._param_shadowed:
            return False
        scope = self.scope_of(node)
        while type(scope) in FUNCTION_SCOPES:
            if head in _parameter_names(typing.cast("cst.FunctionDef | cst.Lambda", scope)):
                return True
            scope = self.scope_of(scope)
        return False

    def ancestors(self, node: cst.CSTNode):
        parents = self._parent
        parent = parents.get(id(node))
        while parent is not None:
            yield parent
            parent = parents.get(id(parent))

    def scope_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The innermost FunctionDef (or Lambda) containing node, else the Module."""
        key = id(node)
        cached = self._scope_cache.get(key)
        if cached is not None:
            return cached
        scope: cst.CSTNode = self.module
        # the parent chain read directly: a generator (ancestors) per call cost more
        # than the few steps up, and this is asked tens of thousands of times a run
        parent = self._parent
        anc = parent.get(key)
        while anc is not None:
            if type(anc) in FUNCTION_SCOPES:
                scope = anc
                break
            anc = parent.get(id(anc))
        self._scope_cache[key] = scope
        return scope

    def outer_scopes(self, scope: cst.CSTNode):
        """The scopes a name not bound in `scope` is looked up in, innermost first: the
        enclosing functions (a closure's variables; a class body is never one), then the
        module. Nothing for the module itself."""
        while scope is not self.module:
            scope = self.scope_of(scope)
            yield scope

    def enclosing_class(self, func: cst.FunctionDef) -> cst.ClassDef | None:
        """The class a function is a method of (directly in its body), if any."""
        parent = self._parent
        anc = parent.get(id(func))
        while anc is not None:
            if type(anc) is cst.ClassDef:
                return anc
            if type(anc) in FUNCTION_SCOPES:
                return None
            anc = parent.get(id(anc))
        return None

    def unpacked_into(self, value: cst.CSTNode) -> list[cst.BaseExpression] | None:
        """The targets `a, b = value` unpacks the value into, in order (`[a, b]`); None
        when the value is not so unpacked (bound whole, starred, several targets)."""
        parent = self.parent.get(value)
        if type(parent) is not cst.Assign or parent.value is not value or len(parent.targets) != 1:
            return None
        target = parent.targets[0].target
        if type(target) is not cst.Tuple and type(target) is not cst.List:
            return None
        elements = target.elements
        if any(type(e) is not cst.Element for e in elements):
            return None
        return [e.value for e in elements]

    def cell_results(self) -> frozenset[cst.Expr]:
        """In a notebook's program, the expression statements that end a cell, unless a
        `;` silences them: IPython shows their value and keeps it in `Out[n]` and `_`
        for the rest of the session. Cells are the module's statements between two
        cell markers (the last one runs to the end)."""
        if self._cell_results is None:
            found: list[cst.Expr] = []
            if self.is_notebook:
                body = self.module.body
                for at, statement in enumerate(body):
                    if type(statement) is not cst.SimpleStatementLine:
                        continue
                    last = statement.body[-1]
                    if type(last) is not cst.Expr or type(last.semicolon) is cst.Semicolon:
                        continue
                    following = body[at + 1] if at + 1 < len(body) else None
                    if following is None or self.starts_a_cell(following):
                        found.append(last)
            self._cell_results = frozenset(found)
        return self._cell_results

    def shown_by_its_cell(self, statement: cst.CSTNode) -> bool:
        """Is this a notebook cell's last expression, whose value IPython shows? Inside
        `with torch.no_grad():` it would be shown no more (a `print(...)` still prints)."""
        if type(statement) is cst.SimpleStatementLine:
            statement = statement.body[-1]
        if statement not in self.cell_results():
            return False
        value = statement.value  # type: ignore[attr-defined]
        return not (
            type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == "print"
        )

    def starts_a_cell(self, statement: cst.BaseStatement) -> bool:
        """Is this statement the first of a notebook cell after the first cell?"""
        return self.is_notebook and any(
            line.comment is not None and line.comment.value.startswith(CELL_MARKER_PREFIX)
            for line in getattr(statement, "leading_lines", ())
        )

    def runs_only_in_mode(self, node: cst.CSTNode, *, training: bool) -> bool:
        """Does `node` sit, within its function, on a branch that a torch module runs only
        in training mode (`training=True`: `if self.training:`, `if self.training and
        ...:`, the `else:` of `if not self.training:`, what follows `if not
        self.training: return ...`), or only in eval mode (`training=False`: the mirror
        branches)?"""
        child = node
        for anc in self.ancestors(node):
            kind = type(anc)
            if kind is cst.IndentedBlock and child in anc.body:
                before = anc.body[: anc.body.index(child)]
                if any(_leaves_unless_in_mode(s, training) for s in before):
                    return True
            elif kind is cst.If and (child is anc.body or child is anc.orelse):
                runs_when = _mode_tested(anc.test, for_body=child is anc.body)
                if (
                    runs_when is not None
                    and (runs_when if child is anc.body else not runs_when) is training
                ):
                    return True
            elif kind is cst.FunctionDef:
                return False
            child = anc
        return False

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The innermost statement (simple or compound) containing node."""
        current: cst.CSTNode | None = node
        parent = self._parent
        while current is not None and type(current) not in STATEMENTS:
            current = parent.get(id(current))
        return current if current is not None else node

    def is_inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        if node is container:
            return True
        # Both indexed: the container's subtree is a slice of the pre-order list.
        order = self._order
        start = order.get(id(container))
        at = order.get(id(node))
        if start is not None and at is not None:
            nodes = self.nodes
            if nodes[start] is container and nodes[at] is node:
                return start < at < self._span_end[start]
        return any(anc is container for anc in self.ancestors(node))

    def in_exclusive_branches(self, a: cst.CSTNode, b: cst.CSTNode) -> bool:
        """Are a and b in different arms of one `if` (so never in one pass)?"""
        at = self._order.get(id(a))
        return at is not None and _in_another_arm(at, self._arms_beside(b))

    def class_around(self, node: cst.CSTNode) -> cst.ClassDef | None:
        """The innermost class whose body holds `node` (through its methods too)."""
        for anc in self.ancestors(node):
            if type(anc) is cst.ClassDef:
                return anc
        return None

    def walk(self, root: cst.CSTNode, *, into_functions: bool = False) -> Iterator[Any]:
        """Pre-order nodes under root (root included); nested defs are skipped unless
        asked, since their bodies run at another time (the def, lambda or class node
        itself is walked, its inside is not). Typed Any: callers narrow each node by
        its exact type (`type(node) is cst.Call`), which mypy does not follow."""
        start = self._order.get(id(root))
        if start is None or self.nodes[start] is not root:
            return self._walk_unindexed(root, into_functions)
        nodes = self.nodes
        end = self._span_end
        stop = end[start]
        if into_functions:
            return iter(nodes[start:stop])
        # The subtree less the insides of the nested scopes in it, as slices of the
        # pre-order list: the analyses walk half a million nodes on 70 files, and a
        # generator yielding them one by one cost several times a list's iteration.
        scopes = self._nested_scope_positions()
        first = bisect.bisect_right(scopes, start)
        last = bisect.bisect_left(scopes, stop)
        if first == last:
            return iter(nodes[start:stop])
        out: list[cst.CSTNode] = []
        at = start
        for k in range(first, last):
            position = scopes[k]
            if position < at:
                continue  # inside a nested scope already left out
            out += nodes[at : position + 1]
            at = end[position]
        out += nodes[at:stop]
        return iter(out)

    def _walk_unindexed(self, root: cst.CSTNode, into_functions: bool):
        """The same walk over a tree the index has not seen (a node built by a fix)."""
        stack = [root]
        while stack:
            node = stack.pop()
            yield node
            if node is not root and not into_functions and type(node) in _NESTED_SCOPES:
                continue
            stack.extend(reversed(self.kids(node)))

    def dominates(self, binding: cst.CSTNode, use: cst.CSTNode) -> bool:
        """Does `binding` always run before `use`? True when the binding's statement sits
        in a block that encloses the use (so nothing can skip it), or it is the `for`
        whose body holds the use."""
        if type(binding) is cst.For:
            return self.is_inside(use, binding.body)
        if type(binding) is cst.Param:
            return True
        block = self.block_of(binding)
        if block is None or not self.is_inside(use, block):
            return False
        # Conditional blocks that hold the binding but not the use break dominance,
        # and that is exactly "block encloses use"; `try` bodies may be cut short.
        return True

    def reaching(self, bindings: list[cst.CSTNode], use: cst.CSTNode) -> list[cst.CSTNode]:
        """Which of a variable's binding nodes (in one scope) can reach `use`: the last
        one before it that dominates it and any later-but-earlier ones that do not, plus,
        inside a loop, bindings later in the loop body that flow back round to it (unless
        one inside that loop already dominates the use). A binding of the use's own
        statement (`w -= ...`) does not reach itself."""
        own = self.comprehension_variable(use)
        if own is not None:
            # a read of a comprehension's own variable: only its clause binds it
            return [node for node in bindings if node is own]
        bindings = self.outside_comprehensions(bindings)
        if len(bindings) == 1:
            before = self._bound_before(bindings, use)
            if before:
                # the one binding runs before the use: it reaches it, and nothing later
                # in a loop can flow round (there is nothing else)
                return before
        return self._reaching(bindings, use)

    def comprehension_variable(self, use: cst.CSTNode) -> cst.CompFor | None:
        """The clause that binds `use` when it reads a comprehension's own variable."""
        if self._comprehension_reads_by_id is None:
            self._comprehension_reads_by_id = self._comprehension_reads()
        if not self._comprehension_reads_by_id:
            return None
        return self._comprehension_reads_by_id.get(id(_root_name(use)))

    @staticmethod
    def outside_comprehensions(bindings: list[cst.CSTNode]) -> list[cst.CSTNode]:
        """The bindings that may reach a read outside the comprehensions binding its
        name: a comprehension's variable is gone after it (Python 3), and the name there
        is the enclosing scope's."""
        if not any(type(node) is cst.CompFor for node in bindings):
            return bindings
        return [node for node in bindings if type(node) is not cst.CompFor]

    def _comprehension_reads(self) -> dict[int, cst.CompFor]:
        """id of each Name read inside a comprehension whose own `for` binds it -> that
        clause. The comprehension is a scope of its own: `tuple(r + max(p) for p in
        batch)` reads its `p`, not the `p` the function bound before it. The first
        clause's iterable is evaluated outside, in the enclosing scope."""
        found: dict[int, cst.CompFor] = {}
        # outer comprehensions first (pre-order), so an inner one rebinding the name wins
        for comprehension in self.of_types(*COMPREHENSIONS):
            clause: cst.CompFor | None = comprehension.for_in
            outer_iter = clause.iter if clause is not None else None
            while clause is not None:
                names = set(target_names(clause.target))
                if names:
                    for node in self.walk(comprehension):
                        if (
                            type(node) is cst.Name
                            and node.value in names
                            and not (outer_iter is not None and self.is_inside(node, outer_iter))
                            and not self._before_clause(node, clause, comprehension)
                        ):
                            found[id(node)] = clause
                clause = clause.inner_for_in
        return found

    def _before_clause(
        self, node: cst.CSTNode, clause: cst.CompFor, comprehension: cst.CSTNode
    ) -> bool:
        """Is `node` in an earlier clause's iterable or condition than `clause` (where
        `clause`'s variable is not bound yet)? The element and later clauses are not."""
        order = self._order
        at = order.get(id(node), 0)
        start = order.get(id(clause), 0)
        return at < start and not self._in_element(node, comprehension)

    def _in_element(self, node: cst.CSTNode, comprehension: cst.CSTNode) -> bool:
        if type(comprehension) is cst.DictComp:
            return self.is_inside(node, comprehension.key) or self.is_inside(
                node, comprehension.value
            )
        return self.is_inside(node, comprehension.elt)  # type: ignore[attr-defined]

    def _reaching(self, bindings: list[cst.CSTNode], use: cst.CSTNode) -> list[cst.CSTNode]:
        order = self._order
        use_order = order.get(id(use), 0)
        before = sorted(self._bound_before(bindings, use), key=lambda n: order.get(id(n), 0))
        reaching: list[cst.CSTNode] = []
        # a binding in another arm of an `if` than the use reaches it only round a loop
        across: list[cst.CSTNode] = []
        other_arms: list[tuple[int, int, int, int]] | None = None  # asked once, if at all
        for node in before:
            if self.dominates(node, use):
                reaching = [node]
                continue
            if other_arms is None:
                other_arms = self._arms_beside(use)
            if _in_another_arm(order.get(id(node), 0), other_arms):
                across.append(node)
            else:
                reaching.append(node)
        if len(reaching) > 1:
            # `if cuda: x = x.cpu().numpy() / else: x = x.numpy()`: every arm rebinds,
            # so what was bound before the `if` is gone after it
            marks = {self.statement_of(n) for n in bindings}
            settled = self._last_settling(use, marks, order.get(id(reaching[0]), 0))
            reaching = [n for n in reaching if order.get(id(n), 0) >= settled]
        # `for ...: m.train(); ...; m.eval()` then a use after the loop: every way out
        # of the loop body passes the later binding, which kills the earlier one.
        reaching = [node for node in reaching if not self._killed_by(node, reaching, use)]
        for loop in self.enclosing_loops(use):
            if self._rebound_in(loop, before, use):
                break
            for node in bindings:
                if not self.is_inside(node, loop):
                    continue
                if order.get(id(node), 0) > use_order:
                    reaching.append(node)
                elif node in across and not self._killed_by(node, bindings, use):
                    reaching.append(node)  # from another arm, round the loop
        return [n for n in reaching if not self.is_inside(use, n) or type(n) is cst.For]

    def _killed_by(self, node: cst.CSTNode, later: list[cst.CSTNode], use: cst.CSTNode) -> bool:
        """Is `node` rebound by one of `later` after it in a block that holds it and not
        `use` (`a = net(x)` then `a = a.numpy()` in one arm; `m.train()` then `m.eval()`
        in a loop body), so that nothing it binds leaves that block (_kills)?"""
        order = self._order
        at = order.get(id(node), 0)
        return any(order.get(id(n), 0) > at and self._kills(n, node, use) for n in later)

    def _arms_beside(self, use: cst.CSTNode) -> list[tuple[int, int, int, int]]:
        """For each `if` whose body or `else` holds `use`: the span of the `if`'s arms
        (its test and the use's own arm left out: the pre-order span of that arm) as
        (start, end, arm start, arm end) positions. A node inside an `if`'s span, past
        its test and outside the use's arm, is in another arm (_in_another_arm)."""
        order = self._order
        end = self._span_end
        found = []
        child: cst.CSTNode = use
        for anc in self.ancestors(use):
            if type(anc) is cst.If and child is not anc.test:
                arm = order.get(id(child))
                test = order.get(id(anc.test))
                if arm is not None and test is not None:
                    found.append((end[test] - 1, end[order[id(anc)]], arm, end[arm]))
            child = anc
        return found

    def _last_settling(self, use: cst.CSTNode, marks: set[cst.CSTNode], after: int) -> int:
        """The position of the last statement before `use`, in a block holding it and
        starting after position `after`, that rebinds the name in each of its arms
        (`_settles`): every path to the use runs it, so what was bound before it does not
        reach the use though no one of its bindings dominates the use. 0 when none."""
        order = self._order
        use_at = order.get(id(use), 0)
        scope = self.scope_of(use)
        last = 0
        for block in self.ancestors(use):
            if type(block) is cst.IndentedBlock or type(block) is cst.Module:
                statements = block.body
                starts = self._statement_starts(block)
                # the statements after `after` (and after the last found) before the use's
                first = bisect.bisect_right(starts, max(after, last))
                stop = bisect.bisect_right(starts, use_at) - 1  # the one holding the use
                for k in range(first, stop):
                    statement = statements[k]
                    if type(statement) is not cst.SimpleStatementLine and self._settles(
                        statement, marks
                    ):
                        last = starts[k]
            if block is scope:
                break
        return last

    def _statement_starts(self, block: cst.IndentedBlock | cst.Module) -> list[int]:
        """The pre-order positions of a block's statements, in order (memoised)."""
        found = self._block_starts.get(id(block))
        if found is None:
            order = self._order
            found = self._block_starts[id(block)] = [order.get(id(s), 0) for s in block.body]
        return found

    def loops_back(
        self, binding: cst.CSTNode, use: cst.CSTNode, bindings: list[cst.CSTNode]
    ) -> bool:
        """Does `binding`, a statement that holds `use` (`h = f(h)`), reach `use` again
        on a later iteration of a loop around both? Not when another of the variable's
        `bindings` inside that loop always runs before the use (`h = x.detach()` at the
        top of the body)."""
        before = self._bound_before(bindings, use)
        for loop in self.enclosing_loops(use):
            if self._rebound_in(loop, before, use):
                return False
            if self.is_inside(binding, loop):
                return True
        return False

    def _bound_before(self, bindings: list[cst.CSTNode], use: cst.CSTNode) -> list[cst.CSTNode]:
        """The bindings that run before `use`. The statement that holds the use (`x = x *
        2`, `w -= lr * g`) starts before it in source order but binds after it runs, so it
        is not one of them; a `for` whose body holds the use is."""
        order = self._order
        use_order = order.get(id(use), 0)
        return [
            n
            for n in bindings
            if order.get(id(n), 0) < use_order
            and (type(n) is cst.For or not self.is_inside(use, n))
        ]

    def _rebound_in(self, loop: cst.CSTNode, before: list[cst.CSTNode], use: cst.CSTNode) -> bool:
        """Does a binding inside `loop` always run before `use` in its body, so that
        nothing bound later in the body flows round to the use?"""
        return any(self.is_inside(n, loop) and self.dominates(n, use) for n in before)

    def block_of(self, binding: cst.CSTNode) -> cst.CSTNode | None:
        """The block (indented body or module) whose statement holds the binding."""
        parent = self._parent
        statement: cst.CSTNode | None = binding
        while statement is not None and type(statement) not in STATEMENT_LINES:
            statement = parent.get(id(statement))
        return parent.get(id(statement)) if statement is not None else None

    def _kills(self, later: cst.CSTNode, earlier: cst.CSTNode, use: cst.CSTNode) -> bool:
        """Does every path from `earlier` out of the block holding `later` run `later`?
        True when that block also holds `earlier` and the use lies outside it (a `break`
        between the two is not modelled)."""
        if type(later) in (cst.For, cst.Param):
            return False
        block = self.block_of(later)
        return (
            block is not None and self.is_inside(earlier, block) and not self.is_inside(use, block)
        )

    def settled_before(
        self, use: cst.CSTNode, nodes: Iterable[cst.CSTNode], within: cst.CSTNode
    ) -> bool:
        """Does every path from the start of `within` (a loop or function) to `use` run
        one of `nodes` first, or leave before reaching it? Structural: a statement
        settles the paths through it when it holds one of `nodes` as a statement of its
        own, or it is an `if` whose every branch (an `else` included) settles or leaves,
        or a `with` whose body does. `if a: x() / elif b: y() / else: raise` settles
        where no one of its branches dominates."""
        marks = {self.statement_of(n) for n in nodes}
        if not marks:
            return False
        chain = [anc for anc in self.ancestors(use) if self.is_inside(anc, within)]
        for block in chain:
            if type(block) not in (cst.IndentedBlock, cst.Module):
                continue
            for statement in block.body:
                if self.is_inside(use, statement):
                    break
                if self._settles(statement, marks):
                    return True
            if block is within or self._parent.get(id(block)) is within:
                break
        return False

    def _settles(self, statement: cst.CSTNode, marks: set[cst.CSTNode]) -> bool:
        if statement in marks:
            return True
        if type(statement) is cst.SimpleStatementLine:
            return _line_settles(statement.body, marks)
        if type(statement) is cst.If:
            orelse = statement.orelse
            if orelse is None or not self._block_settles(statement.body, marks):
                return False
            if type(orelse) is cst.If:
                return self._settles(orelse, marks)
            return self._block_settles(orelse.body, marks)
        if type(statement) is cst.With:
            return self._block_settles(statement.body, marks)
        return False

    def _block_settles(self, body: cst.BaseSuite, marks: set[cst.CSTNode]) -> bool:
        if type(body) is cst.SimpleStatementSuite:
            return _line_settles(body.body, marks)
        return any(self._settles(s, marks) for s in getattr(body, "body", ()))

    def is_pytest_function(self, func: cst.FunctionDef) -> bool:
        """A pytest function: `test_*` at module level or in a `Test*` class, returning
        nothing. One that returns a value (`def test_acc(): return ...`, handed to a
        training loop as a metric) computes a test-set figure; pytest warns when a test
        returns one."""
        if not func.name.value.startswith("test"):
            return False
        if func.name.value in self._called_names():
            # pytest calls its tests; one the file calls itself is a helper:
            # `test_net(net, imdb)` after `net.eval()` in a detector's evaluation script
            return False
        cls = self.enclosing_class(func)
        if cls is not None and not cls.name.value.startswith("Test"):
            return False
        return not self.value_returns(func)

    def fixture_values(self, name: str) -> list[tuple[cst.CSTNode, cst.BaseExpression]]:
        """(statement, value) of each `return <value>` and `yield <value>` of the pytest
        fixture of this file's top level named `name` (`@pytest.fixture def
        tiny_model(): return LSANODE(...)`): what pytest hands a test's parameter of that
        name. Empty when the file defines no such fixture."""
        found: list[tuple[cst.CSTNode, cst.BaseExpression]] = []
        for statement in self.module.body:
            if not (
                type(statement) is cst.FunctionDef
                and statement.name.value == name
                and any(_is_fixture_decorator(self, d.decorator) for d in statement.decorators)
            ):
                continue
            found.extend(self.value_returns(statement))
            for node in self.walk(statement.body):
                if type(node) is cst.Yield and isinstance(node.value, cst.BaseExpression):
                    found.append((self.statement_of(node), node.value))
        return found

    def fixture_overridden(self, test: cst.FunctionDef, name: str) -> bool:
        """Does something nearer than the file's fixtures fill the test's parameter
        `name`: a `pytest.mark.parametrize` of the test naming it, or a function of that
        name in the test's class (a class-level fixture overrides the module's)?"""
        for decorator in test.decorators:
            call = decorator.decorator
            if not (
                type(call) is cst.Call
                and (dotted_name(call.func) or "").endswith("parametrize")
                and call.args
                and type(call.args[0].value) is cst.SimpleString
            ):
                continue
            names = typing.cast(cst.SimpleString, call.args[0].value).evaluated_value
            if isinstance(names, str) and name in {part.strip() for part in names.split(",")}:
                return True
        cls = self.enclosing_class(test)
        return cls is not None and any(
            type(statement) is cst.FunctionDef and statement.name.value == name
            for statement in cls.body.body
        )

    def _called_names(self) -> frozenset[str]:
        """The names this file calls, bare or as an attribute (`f(x)`, `self.f(x)`)."""
        if self._called is None:
            names = set()
            for call in self.calls:
                func = call.func
                if type(func) is cst.Name:
                    names.add(func.value)
                elif type(func) is cst.Attribute:
                    names.add(func.attr.value)
            self._called = frozenset(names)
        return self._called

    def constructions(self, cls: cst.ClassDef) -> list[cst.Call]:
        """The calls of this file that build an instance of the module-level class by its
        name (`Agent(net)`), in source order; a name no import hides."""
        if self.scope_of(cls) is not self.module:
            return []
        name = cls.name.value
        return [
            call
            for call in self.calls
            if type(call.func) is cst.Name
            and call.func.value == name
            and self.qualified_name(call.func) == name
        ]

    def value_returns(self, func: cst.FunctionDef) -> list[tuple[cst.Return, cst.BaseExpression]]:
        """(statement, value) of the function's own `return <value>` statements (not its
        nested functions'), in source order: what a call of it can give back."""
        found = self._returns.get(func)
        if found is None:
            found = self._returns[func] = [
                (node, node.value)
                for node in self.walk(func.body)
                if type(node) is cst.Return and node.value is not None
            ]
        return found

    def loop_element_source(self, name: str, node: cst.CSTNode) -> cst.BaseExpression | None:
        """The iterable whose elements `name` takes in turn, when it is the target (or
        one name of the target) of the innermost `for` loop around `node` that binds it
        (loop_element_sources: `grads` for `g` in `for p, g in zip(params, grads)`)."""
        found = self.loop_element_binding(name, node)
        return found[1] if found is not None else None

    def loop_element_binding(
        self, name: str, node: cst.CSTNode
    ) -> tuple[cst.For, cst.BaseExpression | None] | None:
        """(the loop, the iterable) of loop_element_source: the innermost `for` around
        `node` that binds `name`, and what it hands the name (None where the name is
        not one iterable's element: the index of `enumerate`)."""
        for loop in self.enclosing_loops(node):
            if type(loop) is not cst.For:
                continue
            names = target_names(loop.target)
            if name in names:
                return loop, loop_element_sources(loop.target, loop.iter)[names.index(name)]
        return None

    def walked_in_turn(self, iterable: cst.BaseExpression) -> list[cst.BaseExpression]:
        """The iterables whose elements `iterable` hands out one after another: itself,
        or the parts of `a + b` and of `itertools.chain(a, b)`, each seen through
        `list(...)`."""
        iterable = elements_of(iterable)
        if type(iterable) is cst.BinaryOperation and type(iterable.operator) is cst.Add:
            return self.walked_in_turn(iterable.left) + self.walked_in_turn(iterable.right)
        if (
            type(iterable) is cst.Call
            and self.qualified_name(iterable.func) in CHAINING_FUNCTIONS
            and iterable.args
            and all(a.keyword is None and not a.star for a in iterable.args)
        ):
            return [p for a in iterable.args for p in self.walked_in_turn(a.value)]
        return [iterable]

    def enclosing_loops(self, node: cst.CSTNode):
        """The `for`/`while` loops whose iterations run node, innermost first, up to its
        function. A `for` loop's iterable and either loop's `else:` run once, so a node
        there is not inside that loop."""
        child = node
        for anc in self.ancestors(node):
            kind = type(anc)
            if kind in FUNCTION_SCOPES:
                return
            if kind in LOOPS and _repeats(anc, child):
                yield anc
            child = anc


def _repeats(loop: cst.CSTNode, child: cst.CSTNode) -> bool:
    """Does the part of `loop` that holds `child` run on every iteration?"""
    if type(loop) is cst.For:
        return child is loop.body or child is loop.target
    return child is not getattr(loop, "orelse", None)


def _in_another_arm(at: int, arms: list[tuple[int, int, int, int]]) -> bool:
    """Is the node at pre-order position `at` in another arm of one of the `if`s that
    FileIndex._arms_beside read around some node?"""
    return any(lo < at < hi and not arm_lo <= at < arm_hi for lo, hi, arm_lo, arm_hi in arms)


def _is_mode_flag(expr: cst.BaseExpression) -> bool:
    """`self.training`: the flag `train()` and `eval()` set on a module."""
    head, _, attribute = (dotted_name(expr) or "").partition(".")
    return head == "self" and attribute in MODULE_MODE_ATTRIBUTES


def _mode_tested(test: cst.BaseExpression, *, for_body: bool) -> bool | None:
    """The mode an `if`'s test is true in: True for `self.training`, False for `not
    self.training`, None when the test is not the module's mode. `for_body`: asked for
    the body, which `self.training and ...` also lets run only in training mode."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return False if _is_mode_flag(test.expression) else None
    if _is_mode_flag(test):
        return True
    if for_body and type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        if _is_mode_flag(test.left) or _is_mode_flag(test.right):
            return True
    return None


def _leaves_unless_in_mode(statement: cst.CSTNode, training: bool) -> bool:
    """`if self.training: ... return x` with no `else` (for training=False: after it,
    only eval mode runs on), or `if not self.training: ... return` (for training=True)."""
    if type(statement) is not cst.If or statement.orelse is not None:
        return False
    tested = _mode_tested(statement.test, for_body=False)
    if tested is None or tested is training:
        return False
    body = statement.body
    last = body.body[-1] if type(body) is cst.IndentedBlock and body.body else None
    return (
        type(last) is cst.SimpleStatementLine
        and bool(last.body)
        and type(last.body[-1]) in (cst.Return, cst.Raise)
    )
