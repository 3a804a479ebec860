"""What a file's import statements bind: one reading for both parsers' trees.

The linted file is read by LibCST (analysis.index), the project's other files by CPython's
`ast` (analysis.project). Each side turns its import statements into one neutral form
(ImportStatement, by the two small readers at the end of this module), and ImportMap.add
decides, once for both, what such a statement binds, which modules it may name, and how
a dotted name resolves through the bindings. Nothing else in gradlint reads an import
node (tests/test_architecture.py checks this).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

# LibCST is loaded only where a LibCST tree is read: a warm run checks the project's
# summaries (analysis.project, which reads `ast` imports here) without it
if TYPE_CHECKING:
    import libcst as cst

# (module, relative level, the name imported from it or None when the local name is the
# module itself): `from ..m import n` -> ("m", 2, "n"), `import a.b as c` -> ("a.b", 0, None)
Origin = tuple[str, int, str | None]

STAR = "*"
# Names that behave as torch even where the file does not import them (notebook cells,
# snippets that rely on a star import).
_DEFAULT_QUALIFIED = {"torch": "torch"}

_Node = TypeVar("_Node", bound=ast.AST)


@dataclass(frozen=True)
class ImportStatement:
    """An import statement as either parser spells it."""

    # None for `import a.b [as c], ...`; the module of `from <dots><module> import ...`
    # otherwise ("" for `from . import x`)
    from_module: str | None
    level: int  # the dots of a relative import
    names: tuple[tuple[str, str | None], ...]  # (dotted name, as-name); (STAR, None): `*`


@dataclass(frozen=True)
class ImportBinding:
    """One local name an import binds, and where."""

    local: str
    origin: Origin
    # the import statement of whichever tree the map was read from; None for a name a
    # star import binds (add_star_names)
    node: object
    # the innermost function or class whose body binds it; None: the module's own scope
    # (inside `if`/`try` at the top level included)
    scope: object | None


class ImportMap:
    """A file's imports, in source order."""

    def __init__(self) -> None:
        self.bindings: list[ImportBinding] = []
        # (module, level) of each `from module import *`, in source order (Python allows
        # them only in the module's own scope)
        self.star_imports: list[tuple[str, int]] = []
        # (module, level) of every module the imports may name: `from m import n` names
        # module `m` or module `m.n`, `import a.b` loads `a.b`
        self.modules: list[tuple[str, int]] = []
        # `a.b` of `import a.b`: modules reachable as attributes of the name bound (`a`)
        self._loaded: set[str] = set()
        self._by_name: dict[str, list[ImportBinding]] | None = None
        self._qualified: dict[str, str] | None = None

    def add(self, statement: ImportStatement, node: object, scope: object | None) -> None:
        """What one import statement binds: the one place that decides it."""
        self._by_name = self._qualified = None
        bound = self.bindings
        if statement.from_module is None:
            for name, asname in statement.names:
                self.modules.append((name, 0))
                if asname is not None:
                    bound.append(ImportBinding(asname, (name, 0, None), node, scope))
                else:
                    # `import a.b` binds `a`; `a.b` is reached as its attribute
                    top = name.partition(".")[0]
                    bound.append(ImportBinding(top, (top, 0, None), node, scope))
                    if name != top:
                        self._loaded.add(name)
            return
        module, level = statement.from_module, statement.level
        self.modules.append((module, level))
        for name, asname in statement.names:
            if name == STAR:
                self.star_imports.append((module, level))
                continue
            bound.append(ImportBinding(asname or name, (module, level, name), node, scope))
            self.modules.append((f"{module}.{name}" if module else name, level))

    def _index(self) -> dict[str, list[ImportBinding]]:
        if self._by_name is None:
            by_name: dict[str, list[ImportBinding]] = {}
            for binding in self.bindings:
                by_name.setdefault(binding.local, []).append(binding)
            self._by_name = by_name
        return self._by_name

    def origin(
        self, local: str, scope_of: Callable[[], object | None] | None = None
    ) -> Origin | None:
        """What `local` names through the imports. A name bound in several places is read
        in the scope `scope_of()` gives (the use's function; None for the module): that
        scope's own import, else the module's, else another function's (a closure's
        enclosing function, or an import that runs before the use in a way not seen
        here); the last of them in source order."""
        found = self._index().get(local)
        if not found:
            return None
        if len(found) == 1:
            return found[0].origin
        if scope_of is not None:
            scope = scope_of()
            if scope is not None:
                own = [b for b in found if b.scope is scope]
                if own:
                    return own[-1].origin
        return _preferred(found).origin

    def origins(self) -> dict[str, Origin]:
        """local name -> what it names, one per name (read as `origin` does without a
        scope: the module's own binding first)."""
        return {local: _preferred(found).origin for local, found in self._index().items()}

    def qualified_names(self) -> dict[str, str]:
        """local name -> the dotted name it stands for, for absolute imports only (a
        relative import is the project's own code, never torch): `T` -> `torch` after
        `import torch as T`, `ng` -> `torch.no_grad` after `from torch import no_grad as
        ng`, `a` -> `a` after `import a.b`."""
        if self._qualified is None:
            out: dict[str, str] = {}
            for local, (module, level, name) in self.origins().items():
                if level == 0 and module:
                    out[local] = f"{module}.{name}" if name is not None else module
            self._qualified = out
        return self._qualified

    def qualify(self, dotted: str) -> str:
        """A dotted name resolved through the imports: with `import torch as T`,
        `T.autograd.grad` -> `torch.autograd.grad`. A root the file does not import stays
        as written (`torch` is torch even unimported: notebook cells, star imports)."""
        head, _, rest = dotted.partition(".")
        qualified = self._qualified
        if qualified is None:
            qualified = self.qualified_names()
        resolved = qualified.get(head) or _DEFAULT_QUALIFIED.get(head)
        if resolved is None:
            return dotted
        return f"{resolved}.{rest}" if rest else resolved

    def target(
        self, dotted: str, scope_of: Callable[[], object | None] | None = None
    ) -> tuple[str, int, str] | None:
        """(module, level, name) of what a called dotted name names through the imports:
        `evaluate` after `from utils import evaluate` -> ("utils", 0, "evaluate");
        `utils.evaluate` after `import utils` or `from . import utils` (-> ("utils", 1,
        "evaluate")); `pkg.utils.evaluate` after `import pkg.utils`. None for a name the
        imports do not bind, and for a module itself (a module is not called)."""
        head, _, rest = dotted.partition(".")
        origin = self.origin(head, scope_of)
        if origin is None:
            return None
        module, level, name = origin
        if not rest:
            return (module, level, name) if name is not None else None
        if name is not None:  # `from . import utils`: the module is module.name
            module = f"{module}.{name}" if module else name
        path, _, attr = rest.rpartition(".")
        if path:
            # `pkg.utils.evaluate`: only through a module the imports load as `pkg.utils`
            inner = f"{module}.{path}"
            if name is not None or level or inner not in self._loaded:
                return None
            module = inner
        return module, level, attr

    def names(self) -> set[str]:
        """Every local name the imports bind, at any depth."""
        return set(self._index())

    def absolute_module_imports(self) -> dict[str, Origin]:
        """The names the module's own scope binds by an absolute import (`import torch.nn
        as nn`, `from torch.autograd import Variable`), the last binding of each: what
        `from <this module> import *` may pass on of its imports (star_bound decides
        which). A relative import is left out: its dots count from this module's
        folder, not the importer's (the project index follows those modules itself)."""
        out: dict[str, Origin] = {}
        for binding in self.bindings:
            if binding.scope is None and binding.node is not None:
                module, level, _ = binding.origin
                if level == 0 and module:
                    out[binding.local] = binding.origin
        return out

    def add_star_names(self, names: dict[str, Origin]) -> None:
        """Bind what the module's `from m import *` lines give, as the project index read
        it from those modules (ProjectIndex.star_names): at module scope, and only the
        names the file's own imports leave free (a star import usually comes first, and
        an explicit import of the name says what the file means by it)."""
        own = self._index()
        added = False
        for local, origin in names.items():
            if local not in own:
                self.bindings.append(ImportBinding(local, origin, None, None))
                added = True
        if added:
            self._by_name = self._qualified = None

    def reexports(self) -> dict[str, Origin]:
        """The names the module's own scope imports from a named module (`from .lvae
        import LVAE` in a package's `__init__.py`, under `try:` too): what importing the
        module gives by name."""
        out: dict[str, Origin] = {}
        for binding in self.bindings:
            module, _, name = binding.origin
            if binding.scope is None and module and name is not None and binding.node is not None:
                out[binding.local] = binding.origin
        return out


def star_bound(names: dict[str, Origin], all_names: Sequence[str] | None) -> dict[str, Origin]:
    """Of the names a module binds, those `from <module> import *` binds in the
    importer: the ones its `__all__` lists, or without one every name that does not start
    with an underscore (the language reference, "The import statement")."""
    if all_names is not None:
        listed = set(all_names)
        return {local: origin for local, origin in names.items() if local in listed}
    return {local: origin for local, origin in names.items() if not local.startswith("_")}


def _preferred(found: list[ImportBinding]) -> ImportBinding:
    """Of a name's bindings, the module scope's last, else the last of any."""
    for binding in reversed(found):
        if binding.scope is None:
            return binding
    return found[-1]


def names_bound_by(node: cst.CSTNode) -> list[str]:
    """The local names a LibCST import statement binds (none for `import *`)."""
    statement = cst_statement(node)
    if statement is None:
        return []
    found = ImportMap()
    found.add(statement, node, None)
    return [binding.local for binding in found.bindings]


def is_future_import(node: cst.CSTNode) -> bool:
    """`from __future__ import ...`."""
    statement = cst_statement(node)
    return statement is not None and statement.from_module == "__future__"


# -- the readers: each parser's import statement, in the neutral form --------------------

CST_IMPORTS: frozenset[type]  # {cst.Import, cst.ImportFrom}, made on first use (__getattr__)
AST_IMPORTS = frozenset({ast.Import, ast.ImportFrom})


def __getattr__(name: str) -> frozenset[type]:
    if name == "CST_IMPORTS":
        import libcst as cst

        found = globals()["CST_IMPORTS"] = frozenset({cst.Import, cst.ImportFrom})
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def cst_statement(node: cst.CSTNode) -> ImportStatement | None:
    """A LibCST import statement in the neutral form; None for any other node (and for a
    name neither parser would accept)."""
    import libcst as cst
    from libcst.helpers import get_full_name_for_node

    # exact types first: an isinstance that fails on LibCST's ABCs is slow
    kind = type(node)
    if kind is cst.Import and isinstance(node, cst.Import):
        return ImportStatement(None, 0, _cst_names(node.names))
    if kind is not cst.ImportFrom or not isinstance(node, cst.ImportFrom):
        return None
    module = get_full_name_for_node(node.module) if node.module is not None else ""
    if module is None:
        return None
    if isinstance(node.names, cst.ImportStar):
        return ImportStatement(module, len(node.relative), ((STAR, None),))
    return ImportStatement(module, len(node.relative), _cst_names(node.names))


def _cst_names(aliases: Sequence[cst.ImportAlias]) -> tuple[tuple[str, str | None], ...]:
    from libcst.helpers import get_full_name_for_node

    names: list[tuple[str, str | None]] = []
    for alias in aliases:
        name = get_full_name_for_node(alias.name)
        if name is not None:
            asname = get_full_name_for_node(alias.asname.name) if alias.asname else None
            names.append((name, asname))
    return tuple(names)


def ast_statement(node: ast.AST) -> ImportStatement | None:
    """An `ast` import statement in the neutral form; None for any other node."""
    if type(node) is ast.Import:
        return ImportStatement(None, 0, tuple((a.name, a.asname) for a in node.names))
    if type(node) is ast.ImportFrom:
        names = tuple((a.name, a.asname) for a in node.names)
        return ImportStatement(node.module or "", node.level or 0, names)
    return None


# Statements that open a scope of their own for what their body binds.
_AST_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# The fields of a statement (or of an `except` clause, a `case`) that hold statements.
_AST_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
# node class -> which of those fields it has (none for a simple statement: most)
_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {}


def _block_fields(cls: type) -> tuple[str, ...]:
    found = _BLOCK_FIELDS.get(cls)
    if found is None:
        fields = getattr(cls, "_fields", ())
        found = _BLOCK_FIELDS[cls] = tuple(f for f in _AST_BLOCKS if f in fields)
    return found


def ast_statements(body: list[ast.stmt], *, into_definitions: bool) -> Iterator[ast.stmt]:
    """The statements of a body in source order, those of its blocks included (`if`,
    `for`, `with`, `try` and its `except` clauses, `match` cases), and those of the
    functions and classes it defines when asked; never reading an expression."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            yield node
            if not into_definitions and isinstance(node, _AST_SCOPES):
                continue
        held: list[ast.AST] = []
        for name in _block_fields(type(node)):
            held.extend(getattr(node, name))
        stack.extend(reversed(held))


def ast_called_through(expr: _Node, methods: frozenset[str]) -> _Node | ast.expr:
    """The object a chain of calls of these methods is made on: `model` of
    `model.to(device).half()` for the methods that hand back the module itself (the twin
    of tensors.called_through, which reads LibCST)."""
    found: _Node | ast.expr = expr
    while (
        isinstance(found, ast.Call)
        and isinstance(found.func, ast.Attribute)
        and found.func.attr in methods
    ):
        found = found.func.value
    return found


def ast_dotted_name(node: ast.AST) -> str | None:
    """`a.b.c` of an `ast` Name/Attribute chain, the name the import map resolves; None
    for anything else (a call, a subscript). LibCST's is index.dotted_name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def ast_import_map(tree: ast.Module) -> ImportMap:
    """The imports of an `ast` tree, at any depth, in source order; read once per tree
    (kept on it) by a walk of its statements only, not of their expressions."""
    found = tree.__dict__.get("_gradlint_imports")
    if found is not None:
        return found
    found = ImportMap()
    stack: list[tuple[ast.AST, object | None]] = [(stmt, None) for stmt in reversed(tree.body)]
    while stack:
        node, scope = stack.pop()
        cls = type(node)
        if cls in AST_IMPORTS:
            statement = ast_statement(node)
            assert statement is not None
            found.add(statement, node, scope)
            continue
        fields = _BLOCK_FIELDS.get(cls)
        if fields is None:
            fields = _block_fields(cls)
        if not fields:
            continue
        inner = node if isinstance(node, _AST_SCOPES) else scope
        held: list[ast.AST] = []
        for name in fields:
            held.extend(getattr(node, name))
        stack.extend((child, inner) for child in reversed(held))
    tree.__dict__["_gradlint_imports"] = found
    return found
