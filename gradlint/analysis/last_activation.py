"""The torch.nn activation layer a module runs last on what it returns, when there is
one: `nn.Sigmoid()`, an `nn.Sequential` ending in `nn.ReLU(inplace=True)`, or a module
class whose `forward` returns what such a layer of its own gives (LinkNet's decoder
blocks ending in a conv-bn-relu unit). Sigmoid, tanh and relu save their output for
backward, so the module's result is a saved tensor (GL011: `d4 = self.decoder4(e4);
d4 += e3` raises at backward).

One recipe, read with `ast`, for the module classes of the linted file (from their
source, as LibCST prints it: analysis.saved) and of the project's other files
(ModuleSummary.last_activations): a class of another file counts the same way as one
of this file. A name the file imports is answered by the caller (through the project's
summaries for the linted file; unknown inside a summary, which depends on its own file
only). Apart from analysis.saved so that project.py, which summarises every file,
imports nothing of the linted file's analyses.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from gradlint.analysis.imports import ast_called_through, ast_dotted_name, ast_statements
from gradlint.analysis.module_state_summary import own_method
from gradlint.analysis.torch_api import (
    ACTIVATION_FUNCTIONS,
    MODULE_WRAPPING_METHODS,
    PARAMETRIC_LAYERS,
    is_torch_module_base,
)

# How deep module constructions are followed for the activation a module ends in.
_NESTING = 4


@dataclass(frozen=True)
class LastActivation:
    """The activation layer a module runs last on what it returns."""

    # the function of the saved-tensor table the layer runs: `torch.sigmoid`
    function: str
    # a layer with parameters runs before it, so its input has history whatever the
    # module is given
    after_parameters: bool


def merged(found: Iterable[LastActivation | None]) -> LastActivation | None:
    """One answer for a module bound in several places (`self.unit` built on both
    branches of an `if`, with and without a batch norm): the same activation in each,
    behind parameters only where every one is; None when one is unknown or none is."""
    functions: set[str] = set()
    after_parameters = True
    for last in found:
        if last is None:
            return None
        functions.add(last.function)
        after_parameters = after_parameters and last.after_parameters
    if len(functions) != 1:
        return None
    return LastActivation(functions.pop(), after_parameters)


class LastActivations:
    """What the modules one file builds run last.

    `qualify`: a dotted name as the file's imports resolve it (`nn.ReLU` ->
    `torch.nn.ReLU`); `class_named`: the class of the file a plain name builds, if one
    (not one an import binds); `imported` and `imported_holds_parameters`: the same
    answers for a name the file imports from the project (unknown by default)."""

    def __init__(
        self,
        qualify: Callable[[str], str],
        class_named: Callable[[str], ast.ClassDef | None],
        imported: Callable[[str], LastActivation | None] = lambda name: None,
        imported_holds_parameters: Callable[[str], bool] = lambda name: False,
    ) -> None:
        self._qualify = qualify
        self._class_named = class_named
        self._imported = imported
        self._imported_holds_parameters = imported_holds_parameters
        # class -> _stored_in_self's answer: a class is asked again for each module
        # that holds it, and for its parameters
        self._stored: dict[ast.ClassDef, dict[str, list[ast.expr]]] = {}

    def of_module(self, built: ast.expr, depth: int = 0) -> LastActivation | None:
        """The activation the module `built` constructs runs last on what it returns;
        None when unknown or not an activation."""
        construction = self._construction(built, depth)
        if construction is None:
            return None
        built, written, qualified = construction
        if qualified.startswith("torch.nn."):
            name = qualified.rpartition(".")[2]
            if name in ACTIVATION_FUNCTIONS:
                return LastActivation(ACTIVATION_FUNCTIONS[name], False)
            layers = built.args
            if name != "Sequential" or not layers or built.keywords:
                return None
            if any(isinstance(layer, ast.Starred) for layer in layers):
                return None
            last = self.of_module(layers[-1], depth + 1)
            if last is None:
                return None
            before = any(self._holds_parameters(layer, depth + 1) for layer in layers[:-1])
            return LastActivation(last.function, last.after_parameters or before)
        cls = self._class_named(written) if "." not in written else None
        if cls is None:
            return self._imported(written)
        return self.of_class(cls, depth)

    def of_class(self, cls: ast.ClassDef, depth: int = 0) -> LastActivation | None:
        """The activation an instance of the file's class `cls` runs last, when it is a
        module: the one whose result its `forward` returns."""
        returned = _returned_layer(cls)
        if returned is None or not self._is_module(cls, depth):
            return None
        values = self._stored_in(cls).get(returned, ())
        last = merged(self.of_module(value, depth + 1) for value in values) if values else None
        if last is None:
            return None
        # a layer with parameters anywhere in the class is taken to run before it
        return LastActivation(
            last.function, last.after_parameters or self._class_holds_parameters(cls, depth)
        )

    def _construction(self, built: ast.expr, depth: int) -> tuple[ast.Call, str, str] | None:
        """(the call, its callee as written, qualified) when `built` constructs something
        by a dotted name, not deeper than the nesting followed."""
        built = ast_called_through(built, MODULE_WRAPPING_METHODS)  # `nn.ReLU().to(d)`
        written = ast_dotted_name(built.func) if isinstance(built, ast.Call) else None
        if written is None or depth > _NESTING:
            return None
        assert isinstance(built, ast.Call)
        return built, written, self._qualify(written)

    def _holds_parameters(self, built: ast.expr, depth: int) -> bool:
        """Does the module `built` constructs hold parameters (a torch layer that has
        them, a Sequential of one, a module class that builds one)?"""
        construction = self._construction(built, depth)
        if construction is None:
            return False
        built, written, qualified = construction
        if qualified.startswith("torch.nn."):
            name = qualified.rpartition(".")[2]
            if name == "Sequential":
                return any(self._holds_parameters(layer, depth + 1) for layer in built.args)
            return name in PARAMETRIC_LAYERS
        cls = self._class_named(written) if "." not in written else None
        if cls is None:
            return self._imported_holds_parameters(written)
        return self._is_module(cls, depth) and self._class_holds_parameters(cls, depth)

    def _class_holds_parameters(self, cls: ast.ClassDef, depth: int) -> bool:
        return any(
            self._holds_parameters(value, depth + 1)
            for values in self._stored_in(cls).values()
            for value in values
        )

    def _stored_in(self, cls: ast.ClassDef) -> dict[str, list[ast.expr]]:
        found = self._stored.get(cls)
        if found is None:
            found = self._stored[cls] = _stored_in_self(cls)
        return found

    def _is_module(self, cls: ast.ClassDef, depth: int) -> bool:
        """Does the class subclass a torch module (directly or through classes of the
        file)? A plain class's `forward` is not what calling an instance runs."""
        if depth > _NESTING:
            return False
        for base in cls.bases:
            name = ast_dotted_name(base)
            if name is None:
                continue
            if is_torch_module_base(self._qualify(name)):
                return True
            inner = self._class_named(name) if "." not in name else None
            if inner is not None and self._is_module(inner, depth + 1):
                return True
        return False


def last_activations_of_classes(
    classes: dict[str, ast.ClassDef], qualify: Callable[[str], str]
) -> dict[str, LastActivation]:
    """The module classes of one file (by name) whose `forward` ends in an activation,
    answered within the file: what its summary says of them."""
    reader = LastActivations(qualify, classes.get)
    found: dict[str, LastActivation] = {}
    for name, cls in classes.items():
        last = reader.of_class(cls)
        if last is not None:
            found[name] = last
    return found


def _returned_layer(cls: ast.ClassDef) -> str | None:
    """`unit` when what the class's `forward` returns is what its own layer `self.unit`
    gives: its one `return` is `return self.unit(...)`, or `return y` right after `y =
    self.unit(...)` (pytorch-semseg's blocks)."""
    forward = own_method(cls, "forward")
    if forward is None:
        return None
    returns = [
        node
        for node in ast_statements(forward.body, into_definitions=False)
        if isinstance(node, ast.Return)
    ]
    if len(returns) != 1 or returns[0].value is None:
        return None
    (returned,) = returns
    value = returned.value
    if isinstance(value, ast.Name):
        # `y = self.unit(x)` as the statement before a `return y` that ends the body:
        # the one binding that reaches it
        body = forward.body
        before = body[-2] if len(body) > 1 and body[-1] is returned else None
        if not (
            isinstance(before, ast.Assign)
            and len(before.targets) == 1
            and isinstance(before.targets[0], ast.Name)
            and before.targets[0].id == value.id
        ):
            return None
        value = before.value
    if not isinstance(value, ast.Call):
        return None
    called = ast_dotted_name(value.func) or ""
    owner, _, attribute = called.partition(".")
    return attribute if owner == "self" and attribute and "." not in attribute else None


def _stored_in_self(cls: ast.ClassDef) -> dict[str, list[ast.expr]]:
    """What the class assigns to each `self.x` anywhere in it (`x` as key), as
    tensors.TensorFacts.attribute_values reads a class of the linted file."""
    found: dict[str, list[ast.expr]] = {}
    for node in ast_statements(cls.body, into_definitions=True):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                found.setdefault(target.attr, []).append(node.value)
    return found
