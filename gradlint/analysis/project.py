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
memoised per process by path, size and modification time, so each imported file is read
once however many files import it. The CLI's result cache records which summaries a
result depended on (`ProjectIndex.dependencies`) and re-lints a file when one changes;
flake8 and the language server get the same facts, read from disk.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

_NO_GRAD_NAMES = frozenset({"no_grad", "inference_mode"})
# Larger files are not summarised: a generated module is no helper library.
MAX_SUMMARY_BYTES = 2_000_000
_PYTHON_RESULT_CALLS = frozenset({"float", "int", "bool", "str", "len", "round"})
_PYTHON_RESULT_METHODS = frozenset({"item", "tolist"})


@dataclass
class ForwardFact:
    """A forward of a parameter inside a function: does it record, and is it kept?"""

    recording: bool
    kept: bool


@dataclass
class ExternalFunction:
    name: str
    params: list[str]
    forwards: dict[str, list[ForwardFact]] = field(default_factory=dict)
    differentiates: bool = False
    no_grad: bool = False
    returns_python: bool = False
    # `def load_model(): m = Net(); m.eval(); return m`
    returns_eval_model: bool = False
    # parameters added unchanged to the object's state: `self.sum += val`
    accumulated_params: list[str] = field(default_factory=list)

    def argument_for(self, args: list[tuple[str | None, bool]], param: str) -> int | None:
        """Index into a call's arguments [(keyword, starred)] of the one bound to param."""
        if param not in self.params:
            return None
        position = self.params.index(param)
        if self.params and self.params[0] in ("self", "cls"):
            position -= 1
        for i, (keyword, starred) in enumerate(args):
            if keyword is not None:
                if keyword == param:
                    return i
            elif starred:
                return None
            elif i == position:
                return i
        return None


@dataclass
class ModuleSummary:
    path: str
    functions: dict[str, ExternalFunction] = field(default_factory=dict)

    def digest(self) -> str:
        # Summaries are never changed once made (a new file state is a new summary).
        cached = self.__dict__.get("_digest")
        if cached is None:
            data = json.dumps(asdict(self), sort_keys=True).encode()
            cached = self.__dict__["_digest"] = hashlib.sha256(data).hexdigest()[:16]
        return cached


# -- summarising a module with ast -------------------------------------------------------


def _dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _is_no_grad(expr: ast.AST) -> bool:
    target = expr.func if isinstance(expr, ast.Call) else expr
    name = _dotted(target) or ""
    return name.rsplit(".", 1)[-1] in _NO_GRAD_NAMES


def _is_set_grad_enabled_false(expr: ast.AST) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    name = _dotted(expr.func) or ""
    return (
        name.rsplit(".", 1)[-1] == "set_grad_enabled"
        and bool(expr.args)
        and isinstance(expr.args[0], ast.Constant)
        and expr.args[0].value is False
    )


def _differentiates(call: ast.Call) -> bool:
    name = _dotted(call.func) or ""
    last = name.rsplit(".", 1)[-1]
    if last in ("backward", "manual_backward"):
        return True
    if name.endswith("autograd.grad") or name in ("grad", "torch.autograd.grad"):
        return True
    if last == "step" and isinstance(call.func, ast.Attribute):
        receiver = (_dotted(call.func.value) or "").lower()
        return "opt" in receiver and "sched" not in receiver
    return False


class _FunctionVisitor(ast.NodeVisitor):
    def __init__(self, function: ExternalFunction, parents: dict[ast.AST, ast.AST]) -> None:
        self.function = function
        self.parents = parents
        self.no_grad_depth = 0
        self.returns: list[ast.AST | None] = []
        # name -> last switch seen in source order (True: eval); a coarse reading, used
        # only to say a returned model is in eval mode
        self.modes: dict[str, bool] = {}

    def visit_With(self, node: ast.With) -> None:
        disabled = any(_is_no_grad(item.context_expr) for item in node.items)
        for item in node.items:
            self.visit(item.context_expr)
        self.no_grad_depth += disabled
        for stmt in node.body:
            self.visit(stmt)
        self.no_grad_depth -= disabled

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        return  # nested functions run at another time

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Lambda(self, node: ast.Lambda) -> None:
        return

    def visit_Return(self, node: ast.Return) -> None:
        self.returns.append(node.value)
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            receiver = _dotted(call.func.value)
            if receiver is not None and call.func.attr == "eval" and not call.args:
                self.modes[receiver] = True
            elif receiver is not None and call.func.attr == "train":
                self.modes[receiver] = False
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        target = _dotted(node.target) or ""
        if (
            isinstance(node.op, ast.Add)
            and target.startswith("self.")
            and isinstance(node.value, ast.Name)
            and node.value.id in self.function.params
            and node.value.id not in self.function.accumulated_params
        ):
            self.function.accumulated_params.append(node.value.id)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr in ("append", "extend")
            and (_dotted(node.func.value) or "").startswith("self.")
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in self.function.params
            and node.args[0].id not in self.function.accumulated_params
        ):
            self.function.accumulated_params.append(node.args[0].id)
        callee = node.func
        if isinstance(callee, ast.Attribute) and callee.attr == "forward":
            callee = callee.value
        if isinstance(callee, ast.Name) and callee.id in self.function.params:
            parent = self.parents.get(node)
            kept = not isinstance(parent, ast.Expr)
            self.function.forwards.setdefault(callee.id, []).append(
                ForwardFact(recording=self.no_grad_depth == 0, kept=kept)
            )
        if _differentiates(node):
            self.function.differentiates = True
        self.generic_visit(node)


def _returns_python(value: ast.AST | None) -> bool:
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Call):
        name = _dotted(value.func) or ""
        if name in _PYTHON_RESULT_CALLS:
            return True
        if isinstance(value.func, ast.Attribute) and value.func.attr in _PYTHON_RESULT_METHODS:
            return True
    if isinstance(value, (ast.Tuple, ast.List)):
        return all(_returns_python(e) for e in value.elts)
    if isinstance(value, ast.Dict):
        return all(_returns_python(v) for v in value.values)
    return False


def _summarise_function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ExternalFunction:
    args = node.args
    params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    function = ExternalFunction(node.name, params)
    function.no_grad = any(_is_no_grad(d) for d in node.decorator_list)
    parents: dict[ast.AST, ast.AST] = {}
    for parent in ast.walk(node):
        for child in ast.iter_child_nodes(parent):
            parents[child] = parent
    visitor = _FunctionVisitor(function, parents)
    for stmt in node.body:
        if isinstance(stmt, ast.Expr) and _is_set_grad_enabled_false(stmt.value):
            visitor.no_grad_depth += 1  # for the rest of the body
        visitor.visit(stmt)
    function.returns_python = bool(visitor.returns) and all(
        _returns_python(value) for value in visitor.returns
    )
    returned = {_dotted(value) if value is not None else None for value in visitor.returns}
    function.returns_eval_model = (
        len(returned) == 1
        and None not in returned
        and visitor.modes.get(returned.pop() or "") is True
    )
    if function.no_grad:
        for facts in function.forwards.values():
            for fact in facts:
                fact.recording = False
    return function


def summarise_source(source: str, path: str) -> ModuleSummary:
    summary = ModuleSummary(path)
    try:
        tree = ast.parse(source, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return summary
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            summary.functions[node.name] = _summarise_function(node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    summary.functions[f"{node.name}.{item.name}"] = _summarise_function(item)
    return summary


# -- finding the project's modules -------------------------------------------------------

_MEMO: dict[tuple[str, int, int], ModuleSummary] = {}
_MEMO_LOCK = threading.Lock()


def summary_of_file(path: str) -> ModuleSummary | None:
    """The module's summary, memoised by (path, size, mtime); None if unreadable."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    if stat.st_size > MAX_SUMMARY_BYTES:
        return None
    key = (path, stat.st_size, stat.st_mtime_ns)
    with _MEMO_LOCK:
        found = _MEMO.get(key)
    if found is not None:
        return found
    try:
        data = Path(path).read_bytes()
        source = data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    found = summarise_source(source, path)
    with _MEMO_LOCK:
        _MEMO[key] = found
    return found


def _package_root(directory: Path) -> Path:
    """The folder above the outermost package containing `directory` (where `import
    pkg.mod` resolves from)."""
    current = directory
    while (current / "__init__.py").is_file() and current.parent != current:
        current = current.parent
    return current


def resolve_module(
    importing_file: str, module: str, level: int, exists: Callable[[Path], bool] = Path.is_file
) -> str | None:
    """The project file that `from <level dots><module> import ...` (or `import module`)
    in importing_file names; None for anything outside the project (torch, numpy).
    `exists` says which files there are (the default: those on disk)."""
    here = Path(importing_file).absolute().parent
    parts = module.split(".") if module else []
    if level:
        base = here
        for _ in range(level - 1):
            base = base.parent
        candidates = [base]
    else:
        candidates = [here, _package_root(here)]
        src = _package_root(here).parent / "src"
        if src.is_dir():
            candidates.append(src)
    for base in candidates:
        target = base.joinpath(*parts) if parts else base
        for path in (target.with_suffix(".py"), target / "__init__.py"):
            if parts and exists(path):
                return str(path)
        if not parts and exists(target / "__init__.py"):
            return str(target / "__init__.py")
    return None


class ProjectIndex:
    """The summaries one file's imports resolve to, and what they depended on."""

    def __init__(self, path: str, enabled: bool = True) -> None:
        self.path = path
        self.enabled = enabled and path not in ("-", "", "<stdin>")
        # path of each summarised dependency -> digest of its summary
        self.dependencies: dict[str, str] = {}

    def function(self, module: str, level: int, name: str) -> ExternalFunction | None:
        """`name` as imported `from <module> import name` (a dotted name for a method)."""
        if not self.enabled:
            return None
        target = resolve_module(self.path, module, level)
        if target is None or os.path.abspath(target) == os.path.abspath(self.path):
            return None
        summary = summary_of_file(target)
        if summary is None:
            return None
        self.dependencies[target] = _stamp(target, summary)
        return summary.functions.get(name)


def _stamp(path: str, summary: ModuleSummary) -> str:
    """`size:mtime:digest`: a file whose size and mtime are unchanged need not be read
    again to know its summary is unchanged (a warm run stays a stat per dependency)."""
    try:
        info = os.stat(path)
    except OSError:
        return f"-:-:{summary.digest()}"
    return f"{info.st_size}:{info.st_mtime_ns}:{summary.digest()}"


def dependencies_unchanged(dependencies: dict[str, str]) -> bool:
    """Do these summarised files still summarise as they did? A file touched without a
    change to what it does (a comment, a new unrelated line) still counts as unchanged."""
    for path, stamp in dependencies.items():
        size, _, rest = stamp.partition(":")
        mtime, _, digest = rest.partition(":")
        try:
            info = os.stat(path)
        except OSError:
            return False
        if str(info.st_size) == size and str(info.st_mtime_ns) == mtime:
            continue
        summary = summary_of_file(path)
        if summary is None or summary.digest() != digest:
            return False
    return True


# -- who depends on whom: files to re-lint when others change ----------------------------


def imported_project_files(
    path: str, source: str, exists: Callable[[Path], bool] = Path.is_file
) -> set[str]:
    """The real paths of the project files whose summaries `path`'s findings can depend
    on: every module its imports resolve to, as ProjectIndex resolves them (`from m
    import n` may name module `m` or module `m.n`)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        modules: list[tuple[str, int]] = []
        if isinstance(node, ast.Import):
            modules = [(alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            modules = [(base, node.level)] + [
                (f"{base}.{alias.name}" if base else alias.name, node.level)
                for alias in node.names
                if alias.name != "*"
            ]
        for module, level in modules:
            target = resolve_module(path, module, level, exists)
            if target is not None:
                found.add(os.path.realpath(target))
    return found


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
            if os.path.getsize(candidate) > max_bytes:
                continue
            with open(candidate, "rb") as handle:
                text = handle.read().decode("utf-8", errors="replace")
        except OSError:
            continue
        # A relative import names its package by dots, not by name.
        if "from ." not in text and not any(word in text for word in words):
            continue
        if imported_project_files(candidate, text, exists) & changed:
            found.add(candidate)
    return found
