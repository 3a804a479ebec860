"""Enumerate the places where an autograd pitfall could be, with `ast` and no gradlint.

The census labels *sites*, not findings: every place of a kind below is listed whether or
not gradlint reports anything there, and a person judges each one by reading the code. The
enumeration is deliberately coarse and independent of gradlint's analysis, so that the
census does not inherit gradlint's blind spots. It over-lists; the judge marks most sites
NEG.

Kinds, and the rules whose pitfall a site can hold:

- eval-scope      a function whose name says evaluation/inference/sampling/plotting, or any
                  scope that calls `.eval()`; range = the function (or from `.eval()` to the
                  end of the module or cell). GL004, GL012, GL015
- train-loop      an innermost loop that calls `backward`; range = the loop.
                  GL007, GL014, GL016
- accumulator     `x += e`, `x = x + e`, `xs.append(e)`/`extend(e)` inside a loop of a
                  train-loop or eval-scope. GL006
- carried-state   `h = f(..h..)` inside a loop (the target is read by its own value).
                  GL001, GL015
- autograd-grad   a call of `autograd.grad` (or `grad` imported from it). GL005, GL009
- backward        a `.backward(...)` call. GL009
- param-update    an assignment or in-place call whose operands read `.grad`. GL002, GL003
- inplace         inside a `forward` method: a `*_()` method call, `inplace=True`, `x += e`,
                  `x[...] = e`. GL011
- checkpoint      a `checkpoint(...)` / `checkpoint_sequential(...)` call. GL010
- grad-mode       a mention of a grad-mode manager or `volatile=`. GL008
- target          in a train-loop, an assignment to a name like `target`, `next_q`,
                  `expected`, `teacher...` whose value calls something. GL013
- module-attr     in `__init__`, `self.x = [...]`/`{...}`/`(...)`/`list(...)` holding calls,
                  or a tensor created with `requires_grad=True`. GL017

A notebook's code cells are enumerated one by one (IPython magics and shell lines blanked);
a notebook site's line is `CELL:ROW`, the cell counted from 1 with markdown cells, as
gradlint's JSON reports it.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

EVAL_NAME = re.compile(
    r"(^|_)(eval|evaluate|evaluation|valid|validate|validation|val|test|predict|prediction|"
    r"infer|inference|sample|sampling|generate|generation|plot|visuali[sz]e|demo|render|"
    r"decode|translate|beam|greedy|play|rollout|act|select_action|get_action|score)($|_|\d)",
    re.IGNORECASE,
)
TARGET_NAME = re.compile(
    r"(target|next_q|q_next|next_v|v_next|expected|teacher|y_true|td_|bootstrap)", re.I
)
GRAD_MODE = {"no_grad", "enable_grad", "inference_mode", "set_grad_enabled"}
CODES = {
    "eval-scope": "GL004 GL012 GL015",
    "train-loop": "GL007 GL014 GL016",
    "accumulator": "GL006",
    "carried-state": "GL001 GL015",
    "autograd-grad": "GL005 GL009",
    "backward": "GL009",
    "param-update": "GL002 GL003",
    "inplace": "GL011",
    "checkpoint": "GL010",
    "grad-mode": "GL008",
    "target": "GL013",
    "module-attr": "GL017",
}


@dataclass(frozen=True)
class Site:
    path: str
    line: str  # "12", or "CELL:ROW" in a notebook
    end_line: str
    kind: str

    @property
    def codes(self) -> str:
        return CODES[self.kind]


def _attr_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _calls(node: ast.AST) -> Iterator[ast.Call]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            yield sub


def _has_backward(node: ast.AST) -> bool:
    return any(_attr_name(c.func) == "backward" for c in _calls(node))


def _reads(node: ast.AST) -> set[str]:
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id)
        elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
            out.add(f"{sub.value.id}.{sub.attr}")
    return out


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return [f"{target.value.id}.{target.attr}"]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _target_names(elt)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def _reads_grad(node: ast.AST) -> bool:
    return any(isinstance(s, ast.Attribute) and s.attr == "grad" for s in ast.walk(node))


_PLAIN_CALLS = {"range", "len", "enumerate", "zip", "print", "int", "float", "str", "min", "max"}


def _calls_something(node: ast.AST) -> bool:
    return any(_attr_name(c.func) not in _PLAIN_CALLS for c in _calls(node))


class _Enumerator(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[tuple[int, int, str]] = []
        self.functions: list[ast.AST] = []
        self.loops: list[ast.AST] = []
        self.eval_ranges: list[tuple[int, int]] = []

    def add(self, node: ast.AST, kind: str, end: ast.AST | None = None) -> None:
        last = end if end is not None else node
        self.found.append((node.lineno, getattr(last, "end_lineno", node.lineno), kind))

    # -- scopes ------------------------------------------------------------------------
    def visit_Module(self, node: ast.Module) -> None:
        self._scope(node)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(node)
        self._scope(node)
        if node.name == "__init__":
            self._module_attrs(node)
        saved_loops, self.loops = self.loops, []
        self.generic_visit(node)
        self.loops = saved_loops
        self.functions.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def _own_statements(self, scope: ast.AST) -> Iterator[ast.AST]:
        """Nodes of the scope, not descending into nested functions or classes."""
        stack = list(ast.iter_child_nodes(scope))
        while stack:
            node = stack.pop()
            yield node
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.extend(ast.iter_child_nodes(node))

    def _scope(self, scope: ast.AST) -> None:
        evals = [
            n
            for n in self._own_statements(scope)
            if isinstance(n, ast.Call) and _attr_name(n.func) == "eval" and not n.args
        ]
        if isinstance(scope, ast.Module):
            if evals and any(isinstance(n, ast.Call) for n in self._own_statements(scope)):
                first = min(evals, key=lambda n: n.lineno)
                end = max(getattr(s, "end_lineno", 0) for s in scope.body)
                self.found.append((first.lineno, end, "eval-scope"))
                self.eval_ranges.append((first.lineno, end))
            return
        assert isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
        if evals or EVAL_NAME.search(scope.name):
            if any(isinstance(n, ast.Call) for n in self._own_statements(scope)):
                self.add(scope, "eval-scope", scope)
                self.eval_ranges.append((scope.lineno, scope.end_lineno or scope.lineno))

    def _module_attrs(self, init: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for node in self._own_statements(init):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target, value = node.targets[0], node.value
            if not (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                continue
            container = isinstance(
                value, (ast.List, ast.Dict, ast.Tuple, ast.ListComp, ast.DictComp)
            ) or (isinstance(value, ast.Call) and _attr_name(value.func) in {"list", "dict"})
            grad_kw = any(
                k.arg == "requires_grad"
                and isinstance(k.value, ast.Constant)
                and k.value.value is True
                for c in _calls(value)
                for k in c.keywords
            )
            if (container and _calls_something(value)) or grad_kw:
                self.add(node, "module-attr")

    # -- loops -------------------------------------------------------------------------
    def _loop(self, node: ast.For | ast.While | ast.AsyncFor) -> None:
        inner_loops = [
            n
            for n in ast.walk(node)
            if n is not node and isinstance(n, (ast.For, ast.While, ast.AsyncFor))
        ]
        is_train = _has_backward(node)
        if is_train and not any(_has_backward(inner) for inner in inner_loops):
            self.add(node, "train-loop", node)
        in_eval = any(a <= node.lineno <= b for a, b in self.eval_ranges)
        for stmt in self._own_statements(node):
            if isinstance(stmt, (ast.For, ast.While, ast.AsyncFor)):
                continue
            if (is_train or in_eval) and self._is_accumulation(stmt):
                self.add(stmt, "accumulator")
            if (
                isinstance(stmt, ast.Assign)
                and not self._in_model_code()
                and self._is_carried(stmt, node)
            ):
                self.add(stmt, "carried-state")
            if (
                is_train
                and isinstance(stmt, ast.Assign)
                and any(TARGET_NAME.search(n) for t in stmt.targets for n in _target_names(t))
                and _calls_something(stmt.value)
            ):
                self.add(stmt, "target")
        self.loops.append(node)
        self.generic_visit(node)
        self.loops.pop()

    visit_For = _loop  # type: ignore[assignment]
    visit_While = _loop  # type: ignore[assignment]
    visit_AsyncFor = _loop  # type: ignore[assignment]

    @staticmethod
    def _is_accumulation(stmt: ast.AST) -> bool:
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
            return not isinstance(stmt.value, ast.Constant)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            names = _target_names(stmt.targets[0])
            value = stmt.value
            if (
                len(names) == 1
                and isinstance(value, ast.BinOp)
                and isinstance(value.op, ast.Add)
                and names[0] in _reads(value.left) | _reads(value.right)
            ):
                return True
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            return (
                _attr_name(call.func) in {"append", "extend"}
                and bool(call.args)
                and not isinstance(call.args[0], ast.Constant)
            )
        return False

    @staticmethod
    def _is_carried(stmt: ast.Assign, loop: ast.AST) -> bool:
        """The target's value flows in from the previous iteration: the statement reads a
        name it assigns, and nothing earlier in the loop body assigned that name."""
        names = {n for t in stmt.targets for n in _target_names(t)}
        carried = names & _reads(stmt.value)
        if not carried or not _calls_something(stmt.value):
            return False
        # `for layer in layers: x = layer(x)` composes a forward; it carries nothing
        # across training iterations.
        loop_vars = set(_target_names(loop.target)) if isinstance(loop, ast.For) else set()
        called = {_attr_name(c.func) for c in _calls(stmt.value)}
        called |= {
            c.func.value.id
            for c in _calls(stmt.value)
            if isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name)
        }
        if loop_vars & called:
            return False
        body = loop.body if isinstance(loop, (ast.For, ast.While, ast.AsyncFor)) else []
        for earlier in (n for b in body for n in ast.walk(b)):
            if getattr(earlier, "lineno", stmt.lineno) >= stmt.lineno:
                continue
            if isinstance(earlier, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)):
                targets = earlier.targets if isinstance(earlier, ast.Assign) else [earlier.target]
                carried -= {n for t in targets for n in _target_names(t)}
        return bool(carried)

    def _in_model_code(self) -> bool:
        """Inside a forward-like method, where loops compose layers within one step."""
        return any(
            getattr(f, "name", "") in {"forward", "__call__"}
            or getattr(f, "name", "").startswith("_forward")
            for f in self.functions
        )

    # -- single statements -------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        name = _attr_name(node.func)
        if name == "grad" and (
            isinstance(node.func, ast.Name)
            or (isinstance(node.func, ast.Attribute) and "autograd" in ast.unparse(node.func.value))
        ):
            self.add(node, "autograd-grad")
        elif name == "backward":
            self.add(node, "backward")
        elif name in {"checkpoint", "checkpoint_sequential"}:
            self.add(node, "checkpoint")
        if any(k.arg == "volatile" for k in node.keywords):
            self.add(node, "grad-mode")
        if (
            name
            and name.endswith("_")
            and not name.endswith("__")
            and any(_reads_grad(a) for a in node.args)
        ):
            self.add(node, "param-update")
        if self._in_forward() and name and self._inplace_call(node, name):
            self.add(node, "inplace")
        self.generic_visit(node)

    @staticmethod
    def _inplace_call(node: ast.Call, name: str) -> bool:
        if any(
            k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in node.keywords
        ):
            return True
        return (
            name.endswith("_")
            and not name.endswith("__")
            and name not in {"requires_grad_", "zero_grad_"}
        )

    def _in_forward(self) -> bool:
        return bool(self.functions) and getattr(self.functions[-1], "name", "") == "forward"

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in GRAD_MODE:
            self.add(node, "grad-mode")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in GRAD_MODE:
            self.add(node, "grad-mode")

    def visit_Assign(self, node: ast.Assign) -> None:
        if _reads_grad(node.value) and not any(
            isinstance(t, ast.Attribute) and t.attr == "grad" for t in node.targets
        ):
            if isinstance(node.value, ast.BinOp):
                self.add(node, "param-update")
        if self._in_forward() and any(isinstance(t, ast.Subscript) for t in node.targets):
            self.add(node, "inplace")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if _reads_grad(node.value):
            self.add(node, "param-update")
        elif self._in_forward():
            self.add(node, "inplace")
        self.generic_visit(node)


def _blank_magics(source: str) -> str:
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("%", "!", "?")) or stripped.endswith("?") and "#" not in line:
            lines.append("")  # keep the row numbers
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def _enumerate_module(source: str) -> list[tuple[int, int, str]] | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    walker = _Enumerator()
    walker.visit(tree)
    # Module-level loops are visited by generic_visit from visit_Module; dedupe exact repeats.
    return sorted(set(walker.found))


def sites_of_file(root: Path, rel: str) -> list[Site]:
    path = root / rel
    if rel.endswith(".ipynb"):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (ValueError, OSError, UnicodeDecodeError):
            return []
        out = []
        for number, cell in enumerate(cells, start=1):
            if cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            found = _enumerate_module(_blank_magics(source))
            for start, end, kind in found or []:
                out.append(Site(rel, f"{number}:{start}", f"{number}:{end}", kind))
        return out
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    found = _enumerate_module(source)
    return [Site(rel, str(s), str(e), k) for s, e, k in found or []]


def ranked_files(root: Path, repo: str) -> list[str]:
    """The repository's files with any site, ranked by a hash of the repository and path:
    a fixed order that owes nothing to gradlint (the census takes the first ones, a fresh
    sample the next)."""
    candidates = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".py", ".ipynb") or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if sites_of_file(root, rel):
            candidates.append(rel)
    candidates.sort(key=lambda rel: hashlib.sha256(f"{repo}:{rel}".encode()).hexdigest())
    return candidates


def sampled_files(root: Path, repo: str, max_files: int) -> list[str]:
    """The files of the census: the first `max_files` of ranked_files."""
    return sorted(ranked_files(root, repo)[:max_files])
