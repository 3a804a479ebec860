"""Does the model a name holds depend on train/eval mode?

The answer for a value, at a use: what every binding of the name builds (`model =
Net().to(device)`, `self.net = nn.Sequential(...)`), or, for a parameter, what every
caller in this file hands in; a class of this file or of the project's other files is
decided by what it holds (analysis.mode_layers), a torch.nn layer by the vocabulary
(torch_api.MODE_DEPENDENT_LAYERS), a container by its elements. True: eval mode changes
what the model computes; False: it is known not to (no dropout, no batch norm, nothing
that reads the mode); None: unknown (a library's model, one loaded from a file, one whose
construction is out of sight).
"""

from __future__ import annotations

import ast

import libcst as cst

from gradlint.analysis.grad_mode import GradModeAnalysis
from gradlint.analysis.index import FileIndex, dotted_name
from gradlint.analysis.mode_layers import ClassModeParts, class_mode_parts, decide
from gradlint.analysis.project import ProjectIndex, parse_quietly
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.tensors import TensorFacts, built_module_call
from gradlint.analysis.torch_api import (
    CONTAINER_MODULES,
    MODE_DEPENDENT_FUNCTIONS,
    MODE_HOLDING_MODULES,
    MODEL_ZOO_MODE_FREE,
    MODEL_ZOO_NAMESPACES,
    MODEL_ZOO_NON_MODELS,
    NOT_CONSTANT,
    UNPACKED,
    built_mode_dependent,
)
from gradlint.analysis.values import ValueAnalysis


def combine(verdicts: set[bool | None]) -> bool | None:
    """Several possible values (bindings, callers, a container's elements): True when
    one may depend on the mode, False when none does, else unknown."""
    if True in verdicts:
        return True
    if not verdicts or None in verdicts:
        return None
    return False


class ModeDependence:
    def __init__(
        self,
        index: FileIndex,
        tensors: TensorFacts,
        values: ValueAnalysis,
        summaries: FunctionSummaries,
        grad_mode: GradModeAnalysis,
        project: ProjectIndex | None,
    ) -> None:
        self.index = index
        self.tensors = tensors
        self.values = values
        self.summaries = summaries
        self.grad_mode = grad_mode
        self.project = project
        self._parts: dict[str, ClassModeParts] | None = None
        self._asking: set[object] = set()  # what is being decided, against cycles

    def of_model(self, model: str, use: cst.CSTNode) -> bool | None:
        """Does the model `model` (a dotted name read at `use`) depend on the mode?"""
        key = (model, self.index.scope_of(use))
        if key in self._asking:
            return None
        self._asking.add(key)
        try:
            return self._of_model(model, use)
        finally:
            self._asking.discard(key)

    def _of_model(self, model: str, use: cst.CSTNode) -> bool | None:
        if model == "self":
            cls = self.index.class_around(use)
            return self.local_class(cls.name.value) if cls is not None else None
        try:
            expr = cst.parse_expression(model)
        except cst.ParserSyntaxError:
            return None
        head, _, rest = model.partition(".")
        if rest and head != "self":
            return None  # `trainer.model`: built where this file does not show
        if not rest:
            bindings = self.values.bindings_of(head, use)
            if not bindings:
                return None
            if all(type(b) is cst.Param for b in bindings):
                return self._from_callers(head, use)
            if not all(type(b) is cst.Assign for b in bindings):
                return None  # a loop target, an import, a `with` target...
            if self.index.scope_of(bindings[0]) is self.index.module:
                use = bindings[0]  # a global read in a function: built at module level
        constructors = self.tensors.module_constructors(expr, use)
        if not constructors:
            return None
        return combine({self.of_value(value) for value in constructors})

    def _from_callers(self, name: str, use: cst.CSTNode) -> bool | None:
        """A parameter: what every call of its function in this file hands in."""
        scope = self.index.scope_of(use)
        if type(scope) is not cst.FunctionDef:
            return None
        verdicts: set[bool | None] = set()
        for argument in self.summaries.caller_arguments.here(scope, name):
            passed = argument.passed
            verdicts.add(self.of_value(passed) if passed is not None else None)
        return combine(verdicts)

    def of_value(self, value: cst.CSTNode) -> bool | None:
        """Does the module this expression (a node of the file) evaluates to depend on
        the mode? A name in it is read where the expression is (`self.net = net` in
        `__init__`: `net` is `__init__`'s parameter)."""
        value = built_module_call(value)
        name = dotted_name(value)
        if name is not None:
            return self.of_model(name, value)
        if type(value) is not cst.Call:
            return None
        func = value.func
        qualified = self.index.qualified_name(func) or ""
        last = qualified.rsplit(".", 1)[-1]
        if qualified.startswith("torch.nn.") and last in MODE_HOLDING_MODULES:
            return self._held(value)
        if qualified.startswith("torch.nn.") and last[:1].isupper():
            return built_mode_dependent(last, *_constant_arguments(value))
        if qualified in MODE_DEPENDENT_FUNCTIONS:
            return True
        if qualified.startswith(MODEL_ZOO_NAMESPACES):
            if last.startswith(MODEL_ZOO_MODE_FREE) or last.startswith(MODEL_ZOO_NON_MODELS):
                return None
            return True
        if type(func) is cst.Name:
            if func.value in self._local_parts() and func.value not in self.index.imported_from:
                return self.local_class(func.value)
            imported = self._imported_class(func.value)
            if imported is not None:
                return imported
        return self._factory(value)

    def _held(self, call: cst.Call) -> bool | None:
        """`nn.Sequential(a, b)`, `nn.ModuleList([...])`, `DataParallel(net)`,
        `nn.TransformerEncoder(layer, n)`: as what they hold."""
        qualified = self.index.qualified_name(call.func) or ""
        last = qualified.rsplit(".", 1)[-1]
        arguments = [a for a in call.args if a.keyword is None]
        if last not in CONTAINER_MODULES:
            arguments = arguments[:1]  # the layer or module it is built around
        elements: list[cst.CSTNode] = []
        for arg in arguments:
            element = arg.value
            if arg.star:
                return None  # `nn.Sequential(*layers)`: built elsewhere
            if isinstance(element, (cst.List, cst.Tuple)):
                if any(type(e) is cst.StarredElement for e in element.elements):
                    return None
                elements.extend(e.value for e in element.elements)
            elif isinstance(element, (cst.ListComp, cst.GeneratorExp)):
                elements.append(element.elt)
            elif type(element) is cst.Dict:
                return None
            else:
                elements.append(element)
        return combine({self.of_value(element) for element in elements} or {False})

    def _factory(self, call: cst.Call) -> bool | None:
        """A function of this file that builds the model (`def make_model(): return
        Net()`): as every value it returns."""
        callee = self.summaries.resolve(call)
        if callee is None or callee in self._asking:
            return None
        self._asking.add(callee)
        try:
            returned = [value for _, value in self.index.value_returns(callee)]
            return combine({self.of_value(value) for value in returned})
        finally:
            self._asking.discard(callee)

    # -- classes ------------------------------------------------------------------------

    def local_class(self, name: str) -> bool | None:
        """Does the class of this file named so depend on the mode?"""
        parts = self._local_parts().get(name)
        if parts is None:
            return None
        key = ("class", name)
        if key in self._asking:
            return None
        self._asking.add(key)
        try:
            return decide(parts, self._resolve_ref)
        finally:
            self._asking.discard(key)

    def _resolve_ref(self, name: str) -> bool | None:
        if name in self._local_parts() and name not in self.index.imported_from:
            return self.local_class(name)
        return self._imported_class(name)

    def _imported_class(self, name: str) -> bool | None:
        """A class imported from the project's own code (`from models import Net`)."""
        origin = self.index.imported_from.get(name)
        if origin is None or self.project is None:
            return None
        module, level, original = origin
        if original is None:
            return None  # `import models`: a module, not a class
        return self.project.class_mode(module, level, original)

    def _local_parts(self) -> dict[str, ClassModeParts]:
        """This file's classes, read as the project index reads other files."""
        if self._parts is None:
            try:
                tree = parse_quietly(self.index.module.code)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = ast.Module(body=[], type_ignores=[])
            self._parts = class_mode_parts(tree)
        return self._parts


def _constant_arguments(call: cst.Call) -> tuple[list[object], dict[str, object]]:
    """A call's arguments as built_mode_dependent reads them."""
    positional: list[object] = []
    named: dict[str, object] = {}
    for arg in call.args:
        if arg.star == "**":
            named[UNPACKED] = NOT_CONSTANT
        elif arg.star:
            positional.append(UNPACKED)
        elif arg.keyword is not None:
            named[arg.keyword.value] = _constant(arg.value)
        else:
            positional.append(_constant(arg.value))
    return positional, named


def _constant(expr: cst.BaseExpression) -> object:
    if isinstance(expr, (cst.Integer, cst.Float)):
        return expr.evaluated_value
    if type(expr) is cst.Name and expr.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[expr.value]
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        inner = _constant(expr.expression)
        return -inner if isinstance(inner, (int, float)) else NOT_CONSTANT
    return NOT_CONSTANT
