"""Which module classes have layers whose behaviour depends on train/eval mode.

`model.eval()` changes what a model computes only through such layers: dropout (the
identity in eval), batch norm (running statistics in eval), RReLU, a forward that reads
`self.training`, a `train()` override. A model built of Linear, convolutions and
activations computes the same in both modes, so an evaluation that leaves it in eval mode
changes nothing today (it is a latent bug: the first dropout added trains wrong).

A class's answer rests on what it builds and derives from, read with CPython's `ast`
(one reading for the linted file and the project's other files alike; theirs only when a
finding asks, ProjectIndex.class_mode): the torch.nn layers it constructs anywhere in its body
(inside `nn.Sequential(...)` too), with the arguments that decide (`Dropout(p=0.0)` does
not depend), the functions of its file it calls to build them, its bases, and the other
classes it builds, by the name the file knows them by (resolved later, in this file or
through the project's imports). Something out of sight makes the answer unknown: a
module handed in through a parameter (`self.backbone = backbone`, then called), a
library's class or factory, a call of something not resolved.

The vocabulary of mode-dependent torch.nn layers is in torch_api (MODE_DEPENDENT_LAYERS).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gradlint.analysis.imports import ast_dotted_name, ast_import_map
from gradlint.analysis.torch_api import (
    MODE_ARGUMENT_FUNCTIONALS,
    MODE_DEPENDENT_FUNCTIONS,
    MODE_DEPENDENT_LAYERS,
    MODE_HOLDING_MODULES,
    MODEL_ZOO_MODE_FREE,
    MODEL_ZOO_NAMESPACES,
    MODEL_ZOO_NON_MODELS,
    MODULE_HOLDING_METHODS,
    MODULE_LOADERS,
    MODULE_MODE_METHODS,
    NOT_CONSTANT,
    PYTHON_VALUE_MODULES,
    UNPACKED,
    built_mode_dependent,
)

_BUILTINS = frozenset(dir(builtins))


@dataclass
class ClassModeParts:
    """What decides whether a class of a file depends on train/eval mode."""

    # It builds or reads something mode-dependent itself (a dropout layer, `self.training`).
    direct: bool = False
    # It holds or derives from something out of sight (a module handed in, a library's).
    opaque: bool = False
    # Other classes it builds or derives from, by the names its file knows them by.
    refs: list[str] = field(default_factory=list)


def decide(parts: ClassModeParts, resolve: Callable[[str], bool | None]) -> bool | None:
    """True: the class depends on the mode; False: it is known not to; None: unknown.
    `resolve` answers the same for a class the parts name."""
    if parts.direct:
        return True
    verdicts = {resolve(ref) for ref in parts.refs}
    if True in verdicts:
        return True
    if parts.opaque or None in verdicts:
        return None
    return False


def class_mode_parts(tree: ast.Module) -> dict[str, ClassModeParts]:
    """The parts of every top-level class of the module."""
    functions = {
        node.name: node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    if not classes and not functions:
        return {}
    reading = _Reading(_import_aliases(tree), functions, set(classes))
    found = {name: reading.parts(cls) for name, cls in classes.items()}
    # a function other files import to build a part (`self.act = _get_act(act)`): as
    # what it builds, and unknown when what it returns comes from its parameters
    for name, func in functions.items():
        if name not in found:
            found[name] = reading.function_parts(func)
    return found


def _import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> what it names: `nn` -> `torch.nn`, `Encoder` -> `models.Encoder`,
    a relative import with its leading dots (`.models.Encoder`). The module's own
    imports, under `if` and `try` too (those inside functions are not the classes'),
    as the one import map reads them."""
    aliases: dict[str, str] = {}
    for binding in ast_import_map(tree).bindings:
        if binding.scope is not None:
            continue
        module, level, name = binding.origin
        dotted = "." * level + module
        if name is not None:
            sep = "" if dotted.endswith(".") else "."
            dotted = f"{dotted}{sep}{name}"
        aliases[binding.local] = dotted
    return aliases


def constant_arguments(
    args: Iterable[ast.expr], keywords: Iterable[ast.keyword]
) -> tuple[list[object], dict[str, object]]:
    """A call's arguments as built_mode_dependent reads them."""
    positional: list[object] = []
    for arg in args:
        positional.append(UNPACKED if isinstance(arg, ast.Starred) else _constant(arg))
    named: dict[str, object] = {}
    for keyword in keywords:
        named[keyword.arg if keyword.arg is not None else UNPACKED] = _constant(keyword.value)
    return positional, named


def _constant(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NOT_CONSTANT


class _Reading:
    """One file's classes read for their parts."""

    def __init__(
        self,
        aliases: dict[str, str],
        functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
        classes: set[str],
    ) -> None:
        self.aliases = aliases
        self.functions = functions
        self.classes = classes

    def _qualified(self, name: str) -> str:
        head, dot, rest = name.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return name
        return target + dot + rest

    def parts(self, cls: ast.ClassDef) -> ClassModeParts:
        parts = ClassModeParts()
        holding_base = False
        for base in cls.bases:
            name = ast_dotted_name(base)
            if name is None:
                parts.opaque = True
                continue
            qualified = self._qualified(name)
            last = qualified.rsplit(".", 1)[-1]
            if qualified.startswith("torch.nn.") and last[:1].isupper():
                if built_mode_dependent(last, [], {}):
                    parts.direct = True
                holding_base = holding_base or last != "Module"
            elif name in self.classes:
                parts.refs.append(name)
            elif qualified != name and "." not in name:
                parts.refs.append(name)  # imported: resolved through the project
            elif name != "object":
                parts.opaque = True
        if any(
            isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            and item.name in MODULE_MODE_METHODS
            for item in cls.body
        ):
            parts.direct = True  # its own `train(mode)`: it does something with the mode
        nodes = self._read_body(cls, parts, set())
        if nodes.reads_training:
            parts.direct = True
        self._read_parameters(nodes, holding_base, parts)
        parts.refs = sorted(set(parts.refs))
        return parts

    def function_parts(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> ClassModeParts:
        """What a factory function of the file builds (`def _get_act(name): return
        F.gelu`): the layers it constructs and the functions of its file it calls, as a
        class's body is read; opaque when it returns something made from a parameter."""
        parts = ClassModeParts()
        params = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)}
        for node in ast.walk(func):
            if isinstance(node, ast.Return) and node.value is not None:
                if _names_in(node.value) & params:
                    parts.opaque = True  # `return layer`: what the caller hands in
        self._read_body(func, parts, {func.name})
        parts.refs = sorted(set(parts.refs))
        return parts

    def _read_body(self, root: ast.AST, parts: ClassModeParts, seen: set[str]) -> _Nodes:
        """Read `root` and the functions of the file it calls (`seen`: those not to read
        again) into `parts`: the layers built, the references out of the file."""
        pending: list[ast.AST] = [root]
        nodes = _Nodes()
        while pending:
            nodes.collect(pending.pop())
            for call in nodes.calls[len(nodes.read) :]:
                nodes.read.append(call)
                helper = self._read_call(call, parts, nodes.stored)
                if helper is not None and helper not in seen:
                    seen.add(helper)
                    pending.append(self.functions[helper])
        # `norm = nn.BatchNorm2d` then `norm(64)`, `isinstance(m, nn.Dropout)` or `return
        # nn.Dropout`: a mode-dependent layer named but not built here, so whether one is
        # built is not told
        called = {id(call.func) for call in nodes.calls}
        for named in nodes.layer_names:
            if id(named) not in called:
                if self._qualified(ast_dotted_name(named) or "").startswith("torch.nn."):
                    parts.opaque = True
        return nodes

    def _read_call(self, call: ast.Call, parts: ClassModeParts, bound: set[str]) -> str | None:
        """Note what the call builds; the name of a function of the file to read too."""
        func = call.func
        name = ast_dotted_name(func)
        if name is None:
            if isinstance(func, ast.Call):
                parts.opaque = True  # `getattr(nn, kind)()`
            elif isinstance(func, ast.Subscript) and not (
                ast_dotted_name(func.value) or ""
            ).startswith("self."):
                parts.opaque = True  # `LAYERS[kind]()`; not `self.blocks[i](h)`
            return None
        qualified = self._qualified(name)
        last = qualified.rsplit(".", 1)[-1]
        if qualified.startswith("torch.nn.functional."):
            if last in MODE_ARGUMENT_FUNCTIONALS:
                for keyword in call.keywords:
                    if keyword.arg == "training" and _constant(keyword.value) is NOT_CONSTANT:
                        if ast_dotted_name(keyword.value) != "self.training":  # read as such
                            parts.opaque = True
            return None
        if qualified in MODE_DEPENDENT_FUNCTIONS:
            parts.direct = True
            return None
        if qualified.startswith("torch.nn.") and last[:1].isupper():
            positional, named = constant_arguments(call.args, call.keywords)
            verdict = built_mode_dependent(last, positional, named)
            if verdict is None:
                parts.opaque = True
            elif verdict:
                parts.direct = True
            return None
        if qualified.startswith(MODULE_LOADERS):
            parts.opaque = True
            return None
        if qualified.startswith(MODEL_ZOO_NAMESPACES):
            if last.startswith(MODEL_ZOO_MODE_FREE) or last.startswith(MODEL_ZOO_NON_MODELS):
                parts.opaque = True
            else:
                parts.direct = True
            return None
        if qualified.startswith("torch.") or qualified.startswith(PYTHON_VALUE_MODULES):
            return None
        head = name.split(".", 1)[0]
        if "." in name:
            # `x.view(...)`, `self.fc(x)`, `layers.append(...)`: a method of a value
            # the body holds; `timm.create_model(...)`: a library's
            if head in self.aliases:
                parts.opaque = True
            return None
        if name in self.classes:
            parts.refs.append(name)
        elif name in self.functions:
            return name
        elif name in self.aliases:
            parts.refs.append(name)  # imported: a project class, or unknown
        elif name not in _BUILTINS and name not in bound:
            parts.opaque = True  # a callable handed in, a star import's name
        return None

    def _built_by_a_known_call(self, value: ast.expr) -> bool:
        """A call of a function of this file or of an imported name (a project class or
        factory, resolved as a ref): what it builds decides, not the arguments it gets."""
        if not isinstance(value, ast.Call):
            return False
        name = ast_dotted_name(value.func)
        return (
            name is not None
            and "." not in name
            and (name in self.functions or name in self.aliases)
        )

    def _read_parameters(self, nodes: _Nodes, holding_base: bool, parts: ClassModeParts) -> None:
        """A module handed in through a parameter (of any of the functions read) and
        kept: stored in an attribute the class calls, put into a torch.nn container or
        a list (with a method that puts a module into a container or a module, which a
        parameter of a list of numbers also meets: unknown is the cautious answer), or
        given to the torch.nn base class's `__init__`."""
        params = nodes.params - {"self", "cls"}
        if not params:
            return
        nodes.note_iterations_run()
        for assign in nodes.assigns:
            if self._built_by_a_known_call(assign.value):
                continue  # `self.act = _get_act(act)`: as what the function builds
            if _names_in(assign.value) & params and any(
                (ast_dotted_name(target) or "") in nodes.run_attributes for target in assign.targets
            ):
                parts.opaque = True
                return
        for call in nodes.calls:
            func = call.func
            last = func.attr if isinstance(func, ast.Attribute) else ast_dotted_name(func) or ""
            holder = (
                last in MODE_HOLDING_MODULES
                or last in MODULE_HOLDING_METHODS
                or (holding_base and last == "__init__")
            )
            if holder and any(_names_in(arg) & params for arg in (*call.args, *call.keywords)):
                parts.opaque = True
                return


class _Nodes:
    """What the reading needs of a class (and the functions of its file it calls),
    gathered in one walk each."""

    def __init__(self) -> None:
        self.calls: list[ast.Call] = []
        self.read: list[ast.Call] = []  # the calls read so far, a prefix of `calls`
        self.assigns: list[ast.Assign] = []
        self.params: set[str] = set()
        # names assigned (`act = nn.ReLU()`, a loop's target): a bare call of one calls
        # something the body built, which the reading sees where it is built
        self.stored: set[str] = set()
        # `self.<x>` run as a module: called (`self.x(h)`, `self.x[i](h)`,
        # `self.x.forward(h)`) or iterated (`for layer in self.x`)
        self.run_attributes: set[str] = set()
        # (what a loop iterates, the names its target binds)
        self.iterated: list[tuple[ast.expr, set[str]]] = []
        self.reads_training = False
        # names of mode-dependent torch.nn layers (`nn.Dropout`, `BatchNorm2d`)
        self.layer_names: list[ast.expr] = []

    def collect(self, body: ast.AST) -> None:
        for node in ast.walk(body):
            if isinstance(node, ast.Call):
                self.calls.append(node)
                self._note_run(node.func)
            elif isinstance(node, ast.Attribute):
                if node.attr == "training" and isinstance(node.ctx, ast.Load):
                    value = node.value
                    self.reads_training |= isinstance(value, ast.Name) and value.id == "self"
                elif node.attr in MODE_DEPENDENT_LAYERS:
                    self.layer_names.append(node)
            elif isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Store):
                    self.stored.add(node.id)
                elif node.id in MODE_DEPENDENT_LAYERS:
                    self.layer_names.append(node)
            elif isinstance(node, ast.Assign):
                self.assigns.append(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                args = node.args
                every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
                self.params.update(a.arg for a in every if a is not None)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                # `for layer in self.blocks: h = layer(h)` runs what it iterates; `for r
                # in self.pad_ratio` over numbers does not: decided once the calls are in
                targets = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
                self.iterated.append((node.iter, targets))

    def note_iterations_run(self) -> None:
        """The attributes a loop iterates whose elements it calls, run as modules."""
        called = {call.func.id for call in self.calls if isinstance(call.func, ast.Name)}
        for iterable, targets in self.iterated:
            if targets & called or not targets:
                self._note_run(iterable, called=False)

    def _note_run(self, target: ast.AST, called: bool = True) -> None:
        if called:
            if isinstance(target, ast.Attribute) and target.attr == "forward":
                target = target.value
            if isinstance(target, ast.Subscript):
                target = target.value
        name = ast_dotted_name(target)
        if name is not None and name.startswith("self.") and name.count(".") == 1:
            self.run_attributes.add(name)


def _names_in(node: ast.AST) -> set[str]:
    """The names an argument or a stored value is made of as it is: `m`, `*layers`,
    `[a, b]`, `name=m` (not those an expression computes with: `nn.Linear(d, d)`)."""
    if isinstance(node, ast.keyword):
        node = node.value
    if isinstance(node, ast.Starred):
        node = node.value
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, (ast.List, ast.Tuple)):
        found: set[str] = set()
        for element in node.elts:
            found |= _names_in(element)
        return found
    return set()
