"""Which attributes of this file's `nn.Module` classes hold parameters that the module
never registers: submodules (or `nn.Parameter`s) kept in a plain list, tuple or dict, and
tensors made with `requires_grad=True` kept as plain attributes.

`nn.Module.__setattr__` registers a value only when it is itself a Module or a Parameter;
a list of layers is stored as an ordinary attribute, so `parameters()`, `state_dict()`,
`.to(device)`, `train()`/`eval()` and an optimizer built from `model.parameters()` never
see what is inside it.

An attribute is held unregistered only when nothing else in the file can have registered
or trained its contents (each trap below is a shape real code uses on purpose):
- the elements are built right there (`nn.Linear(...)`, a local module class that holds
  parameters), not references to modules registered under another name
  (`self.layers = [self.fc1, self.fc2]`);
- the class registers nothing by name at run time (`add_module`, `register_module`,
  `register_parameter`, `setattr(self, ...)`): those loops register the list's elements;
- the attribute is not passed into another container or returned (`nn.Sequential(*self.
  blocks)`, `return self.nets[name]` to `self.backbone = ...`): a view of modules that
  are registered where they end up;
- no optimizer is built from it, no `.parameters()` is taken of it, and no `.grad` of it
  is read (a tensor the code updates by hand), in the whole file;
- the class does not define its own `parameters()`.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.index import FileIndex, bool_literal, dotted_name
from gradlint.analysis.tensors import TensorFacts, built_module_call
from gradlint.analysis.torch_api import (
    MODULE_DICT_METHODS,
    MODULE_LIST_METHODS,
    MODULE_WRAPPING_METHODS,
    PARAMETER_CLASSES,
    PARAMETER_HOLDING_METHODS,
    REGISTERING_METHODS,
    REQUIRES_GRAD_METHOD,
    SEQUENCE_BUILTINS,
    UNREGISTERED_WRAPPERS,
    torch_base_holds_weights,
)

# What an unregistered attribute holds.
MODULES = "modules"
PARAMETERS = "parameters"
TENSOR = "tensor"

_SEQUENCE_CALLS = frozenset({"list", "tuple"})


@dataclass(frozen=True)
class UnregisteredAttribute:
    cls: cst.ClassDef
    attribute: str  # `layers` of `self.layers`
    assign: cst.Assign  # `self.layers = ...`
    value: cst.BaseExpression  # what the fix wraps
    holds: str  # MODULES, PARAMETERS or TENSOR
    container: str  # "list", "tuple", "dict" or "tensor"
    element: cst.CSTNode  # a constructor of what is held (shown as related)
    # Every use of the attribute is iteration, indexing or a container method the
    # registering wrapper has too (for a tensor: assigned once): wrapping it is safe.
    wrappable: bool

    @property
    def wrapper(self) -> str:
        return UNREGISTERED_WRAPPERS[(self.holds, self.container)]


class ParameterRegistration:
    def __init__(self, index: FileIndex, tensors: TensorFacts) -> None:
        self.index = index
        self.tensors = tensors
        self._found: list[UnregisteredAttribute] | None = None
        self._holding: dict[str, bool] = {}
        self._attribute_uses: dict[str, list[cst.Attribute]] | None = None

    def unregistered(self) -> list[UnregisteredAttribute]:
        if self._found is None:
            found: list[UnregisteredAttribute] = []
            module_classes = self.tensors.local_module_classes()
            for cls in self.index.classes:
                if cls.name.value in module_classes:
                    found.extend(self._in_class(cls))
            self._found = found
        return self._found

    # -- one class ----------------------------------------------------------------------

    def _in_class(self, cls: cst.ClassDef):
        assigns: dict[str, list[cst.Assign]] = {}
        # `self.inp, self.layers, self.loss = build(blocks)`: the place of each attribute
        # in a tuple that a function of this file returns
        places: dict[int, dict[str, int]] = {}
        for node in self.index.walk(cls, into_functions=True):
            if type(node) is cst.FunctionDef and node.name.value in PARAMETER_HOLDING_METHODS:
                if self.index.enclosing_class(node) is cls:
                    return  # the class says itself what its parameters are
            if type(node) is cst.Call:
                func = node.func
                if type(func) is cst.Attribute and func.attr.value in REGISTERING_METHODS:
                    return  # registers by name at run time: maybe the list's elements
                if type(func) is cst.Name and func.value == "setattr" and node.args:
                    if dotted_name(node.args[0].value) == "self":
                        return
            if type(node) is cst.Assign and len(node.targets) == 1:
                target = node.targets[0].target
                name = dotted_name(target)
                if name is not None and name.startswith("self.") and name.count(".") == 1:
                    assigns.setdefault(name[5:], []).append(node)
                elif type(target) is cst.Tuple and self._file_function(node.value) is not None:
                    for place, element in enumerate(target.elements):
                        name = dotted_name(element.value)
                        if name is not None and name.startswith("self.") and name.count(".") == 1:
                            assigns.setdefault(name[5:], []).append(node)
                            places.setdefault(id(node), {})[name[5:]] = place
        for attribute, nodes in assigns.items():
            kinds = [
                self._held(cls, node, attribute, places.get(id(node), {}).get(attribute))
                for node in nodes
            ]
            if any(kind is None for kind in kinds):
                continue  # some assignment registers it (nn.ModuleList, nn.Parameter)
            real = [(node, kind) for node, kind in zip(nodes, kinds, strict=True) if kind]
            if not real or self._escapes(cls, attribute, real[0][1][0] == TENSOR):
                continue
            node, (holds, container, element) = real[0]
            wrappable = (
                len(nodes) == 1
                and id(node) not in places  # one place of a tuple: no value of its own to wrap
                and self._only_container_uses(attribute, container)
            )
            yield UnregisteredAttribute(
                cls, attribute, node, node.value, holds, container, element, wrappable
            )

    def _held(
        self, cls: cst.ClassDef, assign: cst.Assign, attribute: str, place: int | None = None
    ):
        """(holds, container, element) when the assignment stores unregistered
        parameters; () when it stores something harmless (None, numbers, views of other
        attributes); None when it registers (a Module or a Parameter). `place`: the
        attribute's place in the tuple the assigned call returns."""
        value = assign.value
        if place is not None:
            return self._returned_container(value, place)
        built = built_module_call(value)
        if type(built) is cst.Call:
            qualified = self.index.qualified_name(built.func) or ""
            if qualified in PARAMETER_CLASSES or self._is_module(qualified):
                return None
        tensor = self._grad_tensor(value)
        if tensor is not None:
            return (TENSOR, "tensor", tensor)
        container = _container_of(value, self.index)
        if container is None:
            if type(value) is cst.Name:
                return self._local_container(assign, value.value, assign.value)
            return self._returned_container(value, None)
        elements = list(_elements(value, self.index))
        if not elements:
            elements = list(self._added_elements(cls, attribute))
        return self._classify_elements(elements, container)

    def _classify_elements(self, elements, container: str):
        for element in elements:
            held = self._element_kind(element)
            if held is not None:
                return (held, container, element)
        return ()

    def _element_kind(self, element: cst.CSTNode) -> str | None:
        built = built_module_call(_without_requires_grad(element))
        if type(built) is cst.Name:
            # `layer = nn.Linear(...)` in the same function, used for nothing else
            value = self._single_local_value(built.value, built, allowed=built)
            if value is None:
                return None
            built = built_module_call(value)
        if type(built) is not cst.Call:
            return None
        qualified = self.index.qualified_name(built.func) or ""
        if qualified in PARAMETER_CLASSES:
            return PARAMETERS
        if self._holds_parameters(qualified):
            return MODULES
        return None

    def _grad_tensor(self, value: cst.CSTNode) -> cst.CSTNode | None:
        """The torch call behind `torch.zeros(3, requires_grad=True)` (`.to(device)`
        after it included) or `torch.randn(3).requires_grad_()`."""
        node = value
        while type(node) is cst.Call and type(node.func) is cst.Attribute:
            method = node.func.attr.value
            if method == REQUIRES_GRAD_METHOD:
                if node.args and bool_literal(node.args[0].value) is False:
                    return None
                inner = node.func.value
                if type(inner) is cst.Call and self._is_torch_call(inner):
                    return inner
                return None
            if method not in MODULE_WRAPPING_METHODS:
                break
            node = node.func.value
        if type(node) is cst.Call and self._is_torch_call(node):
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "requires_grad":
                    if bool_literal(arg.value) is True:
                        return node
        return None

    def _is_torch_call(self, call: cst.Call) -> bool:
        qualified = self.index.qualified_name(call.func) or ""
        return qualified.startswith("torch.") and qualified not in PARAMETER_CLASSES

    # -- what a class holds ---------------------------------------------------------------

    def _is_module(self, qualified: str) -> bool:
        if qualified.startswith("torch.nn."):
            return qualified.rsplit(".", 1)[-1][:1].isupper()
        return qualified in self.tensors.local_module_classes()

    def _holds_parameters(self, qualified: str) -> bool:
        """A torch.nn layer that holds parameters as built by default, a container, or a
        class of this file that holds one of those (an imported class is unknown)."""
        if qualified.startswith("torch.nn."):
            return torch_base_holds_weights(qualified)
        if qualified not in self.tensors.local_module_classes():
            return False
        known = self._holding.get(qualified)
        if known is not None:
            return known
        self._holding[qualified] = False  # a class holding itself holds nothing more
        holds = False
        for cls in self.index.classes:
            if cls.name.value != qualified:
                continue
            for base in cls.bases:
                base_name = self.index.qualified_name(base.value) or ""
                if base_name != "torch.nn.Module" and self._holds_parameters(base_name):
                    holds = True
            for node in self.index.walk(cls, into_functions=True):
                if holds:
                    break
                if type(node) is cst.Call:
                    called = self.index.qualified_name(node.func) or ""
                    if called in PARAMETER_CLASSES or (
                        called != qualified and self._holds_parameters(called)
                    ):
                        holds = True
                    elif dotted_name(node.func) == "self.register_parameter":
                        holds = True
        self._holding[qualified] = holds
        return holds

    # -- containers filled elsewhere -------------------------------------------------------

    def _added_elements(self, cls: cst.ClassDef, attribute: str):
        """What `self.x.append(...)`, `.extend([...])`, `.insert(i, ...)` and
        `self.x[k] = ...` put in the attribute, anywhere in the class."""
        target = f"self.{attribute}"
        for node in self.index.walk(cls, into_functions=True):
            if type(node) is cst.Call and type(node.func) is cst.Attribute:
                if dotted_name(node.func.value) != target or not node.args:
                    continue
                method = node.func.attr.value
                if method == "append":
                    yield node.args[0].value
                elif method == "insert" and len(node.args) == 2:
                    yield node.args[1].value
                elif method == "extend":
                    yield from _elements(node.args[0].value, self.index)
            elif type(node) is cst.Assign and len(node.targets) == 1:
                subscript = node.targets[0].target
                if type(subscript) is cst.Subscript and dotted_name(subscript.value) == target:
                    yield node.value

    def _file_function(self, value: cst.CSTNode) -> cst.FunctionDef | None:
        """The module-level function of this file that `value` calls by name
        (`make_layers(cfg)`), when exactly one has that name."""
        if type(value) is not cst.Call or type(value.func) is not cst.Name:
            return None
        name = value.func.value
        found = [
            f
            for f in self.index.functions
            if f.name.value == name and self.index.scope_of(f) is self.index.module
        ]
        return found[0] if len(found) == 1 else None

    def _returned_container(self, value: cst.CSTNode, place: int | None):
        """What a function of this file hands back to be stored (`self.layers =
        make_layers(cfg)`, or one `place` of its tuple): a list of constructors it
        builds and returns, which reaches `self` without any container registering it.
        Every return must hand back such a container; () otherwise."""
        func = self._file_function(value)
        if func is None:
            return ()
        found = None
        for statement in self.index.of_types_in(func.body, cst.Return, into_functions=False):
            returned = statement.value
            if place is not None:
                if type(returned) is not cst.Tuple or len(returned.elements) <= place:
                    return ()
                returned = returned.elements[place].value
            if returned is None:
                return ()
            if type(returned) is cst.Name:
                held = self._local_container(statement, returned.value, returned)
            elif (container := _container_of(returned, self.index)) is not None:
                held = self._classify_elements(list(_elements(returned, self.index)), container)
            else:
                return ()
            if not held:
                return ()
            found = found or held
        return found or ()

    def _local_container(self, at: cst.CSTNode, name: str, allowed: cst.CSTNode):
        """`self.layers = layers` (or `return layers`, `at`) of a local list of
        constructors, used for nothing else (passed to `nn.Sequential(*layers)` it is a
        view of registered modules). `allowed`: the read of the name at `at`."""
        value = self._single_local_value(name, at, allowed=allowed)
        if value is None:
            return ()
        container = _container_of(value, self.index)
        if container is None:
            return ()
        elements = list(_elements(value, self.index))
        if not elements:
            scope = self.index.scope_of(at)
            for node in self.index.walk(scope):
                if (
                    type(node) is cst.Call
                    and type(node.func) is cst.Attribute
                    and dotted_name(node.func.value) == name
                    and node.func.attr.value == "append"
                    and node.args
                ):
                    elements.append(node.args[0].value)
        return self._classify_elements(elements, container)

    def _single_local_value(
        self, name: str, at: cst.CSTNode, *, allowed: cst.CSTNode
    ) -> cst.BaseExpression | None:
        """The value of the one assignment of `name` in the function of `at`, when the
        name is otherwise only read for its attributes and methods (`layer.weight`,
        `layers.append(...)`) and at `allowed`: a name also handed elsewhere may be
        registered there."""
        scope = self.index.scope_of(at)
        if scope is self.index.module:
            return None
        value: cst.BaseExpression | None = None
        count = 0
        for node in self.index.walk(scope):
            if type(node) is not cst.Name or node.value != name:
                continue
            parent = self.index.parent.get(node)
            if type(parent) is cst.Attribute and parent.attr is node:
                continue  # `self.experts`: another name
            if type(parent) is cst.AssignTarget:
                assign = self.index.parent.get(parent)
                if type(assign) is not cst.Assign or len(assign.targets) != 1:
                    return None
                value = assign.value
                count += 1
            elif node is allowed or (type(parent) is cst.Attribute and parent.value is node):
                continue
            else:
                return None
        return value if count == 1 else None

    # -- uses of the attribute in the whole file ------------------------------------------

    def _uses(self, attribute: str) -> list[cst.Attribute]:
        if self._attribute_uses is None:
            uses: dict[str, list[cst.Attribute]] = {}
            for node in self.index.nodes:
                if type(node) is cst.Attribute:
                    uses.setdefault(node.attr.value, []).append(node)
            self._attribute_uses = uses
        return self._attribute_uses.get(attribute, [])

    def _escapes(self, cls: cst.ClassDef, attribute: str, tensor: bool) -> bool:
        """Is the attribute's content registered or trained some other way: handed to a
        call that is not plain iteration, returned or stored (itself or an element) where
        it may be registered, given to an optimizer, asked for its `.parameters()`, or
        its `.grad` read?"""
        for use in self._uses(attribute):
            if self._of_another_object(use, cls):
                continue
            parent = self.index.parent.get(use)
            if type(parent) is cst.Attribute and parent.value is use:
                if parent.attr.value == "grad" or parent.attr.value in PARAMETER_HOLDING_METHODS:
                    return True
            # the container, or one element of it (`self.nets[name]`)
            carrier: cst.CSTNode = use
            if type(parent) is cst.Subscript and parent.value is use:
                carrier = parent
            if tensor:
                # a tensor is computed with everywhere; only registering it counts
                if type(parent) is cst.Arg and self._registers(parent):
                    return True
            elif self._handed_on(carrier):
                return True
            for anc in self.index.ancestors(use):
                if type(anc) is cst.Call:
                    called = self.index.qualified_name(anc.func) or ""
                    if called.startswith("torch.optim."):
                        return True
                    if (
                        type(anc.func) is cst.Attribute
                        and anc.func.attr.value in PARAMETER_HOLDING_METHODS
                        and self.index.is_inside(use, anc.func.value)
                    ):
                        return True
                if type(anc) in (cst.For, cst.CompFor):
                    if self._iterates_for_parameters(anc, use):
                        return True
                if type(anc) in (cst.SimpleStatementLine, cst.FunctionDef, cst.ClassDef):
                    break
        return False

    def _of_another_object(self, use: cst.Attribute, cls: cst.ClassDef) -> bool:
        """`self.weight` in another class, or `conv.weight` of a `conv = nn.Conv2d(...)`:
        the same attribute name on an object that is visibly not of this class."""
        owner = dotted_name(use.value)
        if owner == "self":
            for anc in self.index.ancestors(use):
                if type(anc) is cst.ClassDef:
                    return anc is not cls
            return False
        built = self.tensors.module_class(use.value, use)
        return built is not None and built != cls.name.value

    def _registers(self, arg: cst.Arg) -> bool:
        """`nn.Parameter(self.w)`, `self.register_parameter("w", ...)`, a buffer."""
        call = self.index.parent.get(arg)
        if type(call) is not cst.Call:
            return False
        if (self.index.qualified_name(call.func) or "") in PARAMETER_CLASSES:
            return True
        return type(call.func) is cst.Attribute and call.func.attr.value in (
            REGISTERING_METHODS | {"register_parameter", "register_buffer"}
        )

    def _handed_on(self, carrier: cst.CSTNode) -> bool:
        """The container or element passed as an argument (not to iteration builtins),
        returned, or assigned to another attribute or to a local that is returned."""
        parent = self.index.parent.get(carrier)
        if type(parent) is cst.Return:
            return True
        if type(parent) is cst.Arg and parent.value is carrier:
            return self._hands_over(parent)
        if type(parent) is cst.Assign and parent.value is carrier:
            for target in parent.targets:
                name = dotted_name(target.target)
                if name is None:
                    continue
                if name.startswith("self.") or self._returned(name, parent):
                    return True
        return False

    def _returned(self, name: str, at: cst.CSTNode) -> bool:
        scope = self.index.scope_of(at)
        if scope is self.index.module:
            return False
        for node in self.index.walk(scope):
            if type(node) is cst.Return and node.value is not None:
                if dotted_name(node.value) == name:
                    return True
        return False

    def _iterates_for_parameters(self, loop: cst.CSTNode, use: cst.Attribute) -> bool:
        """`for layer in self.layers: params += layer.parameters()` (or a comprehension
        over it) collects the parameters by hand."""
        iterable = loop.iter if type(loop) is cst.For or type(loop) is cst.CompFor else None
        if iterable is None or not self.index.is_inside(use, iterable):
            return False
        body = loop.body if type(loop) is cst.For else self.index.parent.get(loop)
        if body is None:
            return False
        for node in self.index.walk(body):
            if type(node) is cst.Call and type(node.func) is cst.Attribute:
                if node.func.attr.value in PARAMETER_HOLDING_METHODS:
                    return True
        return False

    def _hands_over(self, arg: cst.Arg) -> bool:
        """An argument that hands the container to a call that may keep or register it:
        anything but the iteration builtins (`len`, `enumerate`, `zip`, ...)."""
        call = self.index.parent.get(arg)
        if type(call) is not cst.Call:
            return False
        if type(call.func) is cst.Name and call.func.value in SEQUENCE_BUILTINS:
            return bool(arg.star)  # `zip(*self.heads)` is iteration too
        if type(call.func) is cst.Attribute and call.func.attr.value in MODULE_LIST_METHODS:
            return False  # `self.layers.append(m)`: the argument is the module
        return True

    def _only_container_uses(self, attribute: str, container: str) -> bool:
        """Is every use of the attribute one the registering wrapper supports as the
        plain container did: iteration, indexing, `len`, and the list or dict methods
        nn.ModuleList / nn.ModuleDict have? (A tensor only needs a single assignment.)"""
        if container == "tensor":
            targets = 0
            for use in self._uses(attribute):
                parent = self.index.parent.get(use)
                if type(parent) in (cst.AssignTarget, cst.AugAssign):
                    targets += 1
            return targets == 1
        methods = MODULE_DICT_METHODS if container == "dict" else MODULE_LIST_METHODS
        for use in self._uses(attribute):
            parent = self.index.parent.get(use)
            if type(parent) is cst.AssignTarget:
                continue  # the assignment itself (a second one makes it unwrappable)
            if type(parent) is cst.Attribute and parent.value is use:
                if parent.attr.value in methods:
                    continue
                return False
            if type(parent) is cst.SubscriptElement or type(parent) is cst.Subscript:
                if type(parent) is cst.Subscript and parent.value is use:
                    if container == "dict" or not _has_slice(parent):
                        continue
                return False
            if (type(parent) is cst.For or type(parent) is cst.CompFor) and parent.iter is use:
                continue
            if type(parent) is cst.Arg:
                call = self.index.parent.get(parent)
                if (
                    type(call) is cst.Call
                    and type(call.func) is cst.Name
                    and call.func.value in SEQUENCE_BUILTINS
                    and not parent.star
                ):
                    continue
                return False
            if type(parent) is cst.ComparisonTarget and container == "dict":
                continue  # `key in self.heads`
            return False
        return True


def _without_requires_grad(element: cst.CSTNode) -> cst.CSTNode:
    """`nn.Parameter(w).requires_grad_(flag)` is still the Parameter (the call returns
    it), kept out of `parameters()` and `state_dict()` by the plain list whatever the
    flag."""
    while (
        type(element) is cst.Call
        and type(element.func) is cst.Attribute
        and element.func.attr.value == REQUIRES_GRAD_METHOD
    ):
        element = element.func.value
    return element


def _container_of(value: cst.CSTNode, index: FileIndex) -> str | None:
    if type(value) in (cst.List, cst.ListComp):
        return "list"
    if type(value) is cst.Tuple:
        return "tuple"
    if type(value) in (cst.Dict, cst.DictComp):
        return "dict"
    if type(value) is cst.Call and type(value.func) is cst.Name:
        name = value.func.value
        if name in _SEQUENCE_CALLS and index.qualified_name(value.func) == name:
            if len(value.args) <= 1:
                return name
        if name == "dict" and not value.args:
            return "dict"
    return None


def _elements(value: cst.CSTNode, index: FileIndex):
    """The element expressions a display or comprehension puts in its container."""
    if type(value) is cst.List or type(value) is cst.Tuple:
        for element in value.elements:
            yield element.value
    elif type(value) is cst.Dict:
        for entry in value.elements:
            if type(entry) is cst.DictElement:
                yield entry.value
    elif type(value) is cst.ListComp or type(value) is cst.GeneratorExp:
        yield value.elt
    elif type(value) is cst.DictComp:
        yield value.value
    elif type(value) is cst.Call and value.args:
        yield from _elements(value.args[0].value, index)


def _has_slice(subscript: cst.Subscript) -> bool:
    return any(type(element.slice) is cst.Slice for element in subscript.slice)
