"""Which expressions are leaf tensors that require grad (parameters, `requires_grad=True`
tensors), and which names hold modules.

Leafness is a property of a *binding*, so a use is a leaf only when every binding that can
reach it makes a leaf: `w = torch.zeros(3, requires_grad=True)` then `w = w * 2` is not.
Reaching bindings are found on the syntax tree: the last binding before the use that
dominates it (same or enclosing block), any earlier ones it does not dominate, and, inside
a loop, bindings later in the loop body that flow back to the use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import libcst as cst

from gradlint.analysis.bindings import (
    BindingKind,
    NameBinding,
    ScopeBindings,
    is_none,
    paired_value,
)

# Other modules still import these from here; the bindings module defines them.
from gradlint.analysis.bindings import all_params as all_params
from gradlint.analysis.bindings import is_false as is_false
from gradlint.analysis.index import (
    FileIndex,
    bool_literal,
    dotted_name,
    keyword_is_true,
    loop_element_sources,
    registered_name,
    target_names,
)
from gradlint.analysis.parameter_roles import ParameterRoles
from gradlint.analysis.torch_api import (
    CONTAINER_CLASSES,
    CONTAINER_MODULES,
    DETACH_IN_PLACE_METHOD,
    FRESH_PRESERVING_METHODS,
    FRESH_TENSOR_MAKERS,
    MODULE_COPYING_FUNCTIONS,
    MODULE_WRAPPING_METHODS,
    NOT_MODULE_NAMESPACES,
    NOT_TENSOR_NAMESPACES,
    PARAMETER_CLASSES,
    PARAMETER_ITERATORS,
    REQUIRES_GRAD_ATTRIBUTE,
    REQUIRES_GRAD_METHOD,
    SINGLE_STATE_RECURRENT,
    TRANSPOSE_ATTRIBUTES,
    TUPLE_MODULES,
    VIEW_METHODS,
    WEIGHTED_LAYERS,
    is_torch_module_base,
)

LEAF = "leaf"
PARAMS = "params"  # an iterable of parameters
MODULE = "module"
OTHER = "other"
_LOOP_TARGET = "loop-target"  # decided on demand from the loop's iterable
_UNCLASSIFIED = "unclassified"  # an assigned value, classified when first asked

K = BindingKind
# The bindings that decide what a name is to tensors. Not `x += y` (an update of the
# tensor x holds), comprehension targets, definitions and imports; `x.requires_grad_()`
# makes x a leaf. A lambda's parameters are not read either (a global of the same name
# is looked up instead), as before the one table.
_COMPREHENSION = frozenset({K.COMPREHENSION})
_TENSOR_BINDINGS = frozenset(
    {K.PARAM, K.ASSIGN, K.UNPACKED, K.ANNOTATED, K.FOR, K.WITH, K.WALRUS, K.REQUIRES_GRAD}
)


class TensorFacts:
    def __init__(
        self,
        index: FileIndex,
        *,
        bindings: ScopeBindings,
        roles: ParameterRoles | None = None,
        lineage: Callable[[cst.ClassDef], list[cst.ClassDef]] | None = None,
        subclasses: Callable[[cst.ClassDef], list[cst.ClassDef]] | None = None,
    ) -> None:
        self.index = index
        self.bindings = bindings
        # a class and its bases of this file in lookup order, and its subclasses of this
        # file: where `self.x` of a method may have been built
        self.lineage = lineage
        self.subclasses = subclasses
        # parameters known by their use (`p.grad` read), where no binding shows one
        self.roles = roles
        if roles is not None:
            roles.ask_built_with(self.built_as_parameters)
        self._classified: dict[tuple[cst.CSTNode, str], str] = {}
        self._class_attrs: dict[cst.ClassDef, dict[str, str]] = {}
        self._module_classes: set[str] | None = None
        self._resolving: set[cst.CSTNode] = set()
        self._resolving_names: set[str] = set()
        self._expanding: set[cst.CSTNode] = set()  # loops whose elements are being read
        self._aliases_followed: set[cst.Assign] = set()  # _through_alias asked again
        self._aliasing = False
        self._switch_cache: dict[cst.CSTNode, list[tuple[int, str, bool]]] = {}
        self._self_values: dict[cst.ClassDef, dict[str, list[cst.CSTNode]]] = {}

    # -- classification of values -----------------------------------------------------

    def local_module_classes(self) -> set[str]:
        """Classes in this file that subclass a torch module (directly or via each other)."""
        if self._module_classes is None:
            found: set[str] = set()
            changed = True
            while changed:
                changed = False
                for cls in self.index.classes:
                    if cls.name.value in found:
                        continue
                    for base in cls.bases:
                        name = self.index.qualified_name(base.value) or ""
                        if name in found or is_torch_module_base(name):
                            found.add(cls.name.value)
                            changed = True
                            break
            self._module_classes = found
        return self._module_classes

    def classify_value(self, value: cst.CSTNode | None, scope: cst.CSTNode) -> str:
        if value is None:
            return OTHER
        if self._is_parameter_alias(value):
            # `w = self.input.weight`, `b = conv.bias.view(n, -1)`: an alias or a view of
            # a parameter; in-place on it is in-place on the leaf
            return LEAF
        if type(value) is cst.Call:
            qualified = self.index.qualified_name(value.func) or ""
            if qualified in PARAMETER_CLASSES:
                return LEAF
            method = value.func.attr.value if type(value.func) is cst.Attribute else None
            if method == REQUIRES_GRAD_METHOD:
                if value.args and is_false(value.args[0].value):
                    return OTHER
                return LEAF
            if qualified.startswith("torch.") and keyword_is_true(value, "requires_grad"):
                # `torch.zeros(3, requires_grad=True)`; `.to(...)` after it is a
                # non-leaf and is a Call with another func, so it lands below.
                return LEAF
            if method in PARAMETER_ITERATORS:
                return PARAMS
            if method in MODULE_WRAPPING_METHODS and type(value.func) is cst.Attribute:
                # `Net().to(device)` is still the module; `tensor.to(device)` is a
                # new non-leaf tensor, so only a module survives.
                if self.classify_value(value.func.value, scope) == MODULE:
                    return MODULE
                return OTHER
            if qualified in ("list", "tuple") and value.args:
                inner = value.args[0].value
                if self.classify_value(inner, scope) == PARAMS:
                    return PARAMS
            if self._is_module_constructor(qualified):
                return MODULE
            return OTHER
        if (type(value) is cst.List or type(value) is cst.Tuple) and value.elements:
            # `params = [W_xh, W_hh, b_h]` of leaves that require grad: a hand-written
            # model's parameters
            if self._leaves_only(value):
                return PARAMS
            return OTHER
        if type(value) is cst.ListComp or type(value) is cst.GeneratorExp:
            if (
                self.classify_value(value.for_in.iter, scope) == PARAMS
                and type(value.elt) is cst.Name
                and dotted_name(value.for_in.target) == value.elt.value
            ):
                return PARAMS
        return OTHER

    def built_as_parameters(self, expr: cst.BaseExpression, use: cst.CSTNode) -> bool:
        """Is `expr` at `use` an iterable of parameters by how it is built?"""
        if type(expr) is cst.Name:
            return self.kind_of_name(expr.value, use) == PARAMS
        return self.classify_value(expr, self.index.scope_of(use)) == PARAMS

    def _leaves_only(self, literal: cst.List | cst.Tuple) -> bool:
        """Is every element of the literal a name that holds a leaf requiring grad?"""
        if literal in self._resolving:
            return False  # `a = [b]` and `b = [a]` in one loop
        self._resolving.add(literal)
        try:
            return all(
                type(element) is cst.Element
                and type(element.value) is cst.Name
                and self.kind_of_name(element.value.value, element.value) == LEAF
                for element in literal.elements
            )
        finally:
            self._resolving.discard(literal)

    def _is_module_constructor(self, qualified: str) -> bool:
        if qualified.startswith("torch.nn.") and not qualified.startswith(NOT_MODULE_NAMESPACES):
            last = qualified.rsplit(".", 1)[-1]
            return last[:1].isupper()
        return qualified in self.local_module_classes()

    # -- bindings per scope ------------------------------------------------------------

    def _tensor_bindings(self, scope: cst.CSTNode) -> dict[str, list[NameBinding]]:
        return self.bindings.records(scope, _TENSOR_BINDINGS)

    def _binding_nodes(self, scope: cst.CSTNode, name: str) -> list[cst.CSTNode]:
        return [b.node for b in self._tensor_bindings(scope).get(name, ())]

    @staticmethod
    def _binding_kind(binding: NameBinding) -> str:
        """What a binding makes of its name, before its value is classified."""
        kind = binding.kind
        if kind is K.ASSIGN or kind is K.UNPACKED or kind is K.ANNOTATED:
            return _UNCLASSIFIED if binding.whole else OTHER
        if kind is K.FOR:
            # Resolved lazily (see _kind): the iterable may be a name whose own
            # bindings live in this very table.
            return _LOOP_TARGET
        if kind is K.REQUIRES_GRAD:
            return LEAF
        return OTHER

    def _loop_target_kind(self, loop: cst.For, position: int, scope: cst.CSTNode) -> str:
        """What the name at `position` of the loop's target holds, read off the
        iterable it takes its elements from (one of `zip(...)`'s arguments: `for e, p
        in zip(ema.parameters(), model.parameters())`)."""
        sources = loop_element_sources(loop.target, loop.iter)
        iterable = sources[position] if position < len(sources) else None
        if iterable is None:
            return OTHER
        if type(iterable) is cst.Call and type(iterable.func) is cst.Attribute:
            if iterable.func.attr.value in PARAMETER_ITERATORS:
                return LEAF
        if type(iterable) is cst.Subscript:
            # `for p in group["params"]` over an optimizer's param_groups
            key = iterable.slice[0].slice if iterable.slice else None
            if type(key) is cst.Index and type(key.value) is cst.SimpleString:
                if key.value.evaluated_value == "params":
                    return LEAF
        name = dotted_name(iterable)
        if name is not None and self.kind_of_name(name, loop, scope) == PARAMS:
            return LEAF
        if name is not None and self.roles is not None and self.roles.holds_parameters(name, loop):
            return LEAF  # `for p in params` where `sgd(params, lr)` reads each `p.grad`
        return OTHER

    # -- reaching bindings ---------------------------------------------------------------

    def kind_of_name(self, name: str, use: cst.CSTNode, scope: cst.CSTNode | None = None) -> str:
        """LEAF / PARAMS / MODULE when every binding that can reach `use` agrees."""
        scope = scope or self.index.scope_of(use)
        bindings = self._tensor_bindings(scope).get(name)
        if not bindings:
            if "." not in name:
                for outer in self.index.outer_scopes(scope):
                    if name in self._tensor_bindings(outer):
                        return self.kind_of_name(name, use, outer)
            return OTHER
        if self.index.scope_of(use) is not scope:
            # A global or a closure's variable read inside a function runs when the
            # function is called: any binding of the outer scope may be the one it sees.
            reaching = bindings
        else:
            reaching = self._reaching(bindings, use)
        kinds = {self._kind(binding, scope) for binding in reaching}
        if len(kinds) == 1:
            return kinds.pop()
        return OTHER

    def origins(self, name: str, use: cst.CSTNode) -> list[cst.CSTNode]:
        """The bindings of `name` (or, for `model.fc.weight`, of the object it belongs
        to) that can reach `use`: where a finding's tensor comes from, to show it."""
        scope = self.index.scope_of(use)
        for candidate in (name, name.split(".")[0]):
            for region in (scope, self.index.module):
                bindings = self._tensor_bindings(region).get(candidate)
                if not bindings:
                    continue
                if region is scope:
                    bindings = self._reaching(bindings, use)
                found = [b.node for b in bindings if type(b.node) is not cst.Param]
                if found:
                    return found
        return []

    def _kind(self, binding: NameBinding, scope: cst.CSTNode) -> str:
        kind = self._binding_kind(binding)
        node = binding.node
        if kind == _UNCLASSIFIED:
            # Classified when first asked: most bindings of a scope never are, and
            # classifying every value up front was GL002's largest cost.
            key = (node, binding.name)
            known = self._classified.get(key)
            if known is None:
                # `x, x = a, b` binds x once, to its last value
                value = [
                    b.value for b in self._tensor_bindings(scope)[binding.name] if b.node is node
                ][-1]
                known = self._classified[key] = self.classify_value(value, scope)
            return known
        if kind != _LOOP_TARGET:
            return kind
        if node in self._resolving:
            return OTHER
        self._resolving.add(node)
        try:
            # Only `for` statements are recorded with the _LOOP_TARGET kind.
            return self._loop_target_kind(cast(cst.For, node), binding.position, scope)
        finally:
            self._resolving.discard(node)

    def _reaching(self, bindings: list[NameBinding], use: cst.CSTNode) -> list[NameBinding]:
        reaching = set(self.index.reaching([b.node for b in bindings], use))
        return [b for b in bindings if b.node in reaching]

    # -- expressions ------------------------------------------------------------------

    def leaf_requiring_grad(self, expr: cst.CSTNode, use: cst.CSTNode) -> str | None:
        """If expr is (a view of) a leaf tensor that requires grad, a short description
        of why we believe so; else None."""
        base = strip_views(expr, VIEW_METHODS, TRANSPOSE_ATTRIBUTES)
        name = dotted_name(base)
        if name is None:
            if self._is_container_layer_parameter(base, use):
                return cst.Module([]).code_for_node(base)
            return None
        last = name.rsplit(".", 1)[-1]
        if last in ("data", "grad") or ".grad." in f".{name}." or ".data." in f".{name}.":
            return None
        if self._requires_grad_switched_off(name, use):
            return None
        kind = self.kind_of_name(name, use)
        if kind == LEAF:
            return name
        if (
            kind == OTHER
            and self.roles is not None
            and self.roles.is_parameter(name, use)  # most names: no `.grad` read, asked no more
            and not self._made_fresh(name, use)
        ):
            return name  # its `.grad` is read: `for p, v in zip(params, states)`
        if "." in name:
            owner, attr = name.rsplit(".", 1)
            if self._is_parameter_attribute(owner, attr, use):
                return name
        return None

    def fresh_tensor(self, value: cst.CSTNode | None) -> bool:
        """Is this a tensor made right here, which no module or optimizer can hold yet:
        a torch factory's result, a `.clone()` or `.detach()`, with in-place initialisers
        and `requires_grad_()` chained on?"""
        while type(value) is cst.Call:
            func = value.func
            if (self.index.qualified_name(func) or "") in FRESH_TENSOR_MAKERS:
                return True
            if type(func) is not cst.Attribute:
                return False
            method = func.attr.value
            if method in ("clone", "detach"):
                return True
            if method not in FRESH_PRESERVING_METHODS:
                return False
            value = func.value
        return False

    def _made_fresh(self, name: str, use: cst.CSTNode) -> bool:
        """Is a binding of the plain `name` that reaches `use` a tensor made right there
        (fresh_tensor)? Then what it holds is known, and a later `.grad` read (after a
        `requires_grad = True`) says nothing of it at `use`."""
        if "." in name:
            return False
        scope = self.index.scope_of(use)
        bindings = self._tensor_bindings(scope).get(name)
        if not bindings:
            return False
        return any(
            b.value is not None and self.fresh_tensor(b.value)
            for b in self._reaching(bindings, use)
        )

    def _is_parameter_alias(self, value: cst.CSTNode) -> bool:
        if self._aliasing:
            return False  # asked again while deciding a class's own attributes
        self._aliasing = True
        try:
            return self._parameter_alias(value)
        finally:
            self._aliasing = False

    def _parameter_alias(self, value: cst.CSTNode) -> bool:
        base = value
        while (
            type(base) is cst.Call
            and type(base.func) is cst.Attribute
            and base.func.attr.value in VIEW_METHODS
        ):
            base = base.func.value
        if type(base) is not cst.Attribute:
            return False
        name = dotted_name(base)
        if name is not None and "." in name:
            owner, attr = name.rsplit(".", 1)
            return self._is_parameter_attribute(owner, attr, value)
        return self._is_container_layer_parameter(base, value)

    def _is_container_layer_parameter(self, expr: cst.CSTNode, use: cst.CSTNode) -> bool:
        """`self.layers[i].weight` where `self.layers` is an nn.ModuleList/Sequential of
        torch layers: the weight of one of them is a parameter."""
        if not (
            type(expr) is cst.Attribute
            and expr.attr.value in ("weight", "bias")
            and type(expr.value) is cst.Subscript
        ):
            return False
        container = dotted_name(expr.value.value)
        if container is None:
            return False
        constructors: list[cst.CSTNode] = []
        if container.startswith("self.") and container.count(".") == 1:
            cls = self.index.class_around(use)
            if cls is None:
                return False
            for node in self.index.of_types_in(cls, cst.Assign):
                if (
                    type(node) is cst.Assign
                    and len(node.targets) == 1
                    and dotted_name(node.targets[0].target) == container
                ):
                    constructors.append(node.value)
        if len(constructors) != 1 or type(constructors[0]) is not cst.Call:
            return False
        call = constructors[0]
        kind = self.index.qualified_name(call.func)
        if kind not in CONTAINER_CLASSES or not call.args:
            return False
        elements: list[cst.CSTNode] = []
        for arg in call.args:
            value = arg.value
            if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
                elements.append(value.elt)
            elif isinstance(value, (cst.List, cst.Tuple)):
                elements.extend(e.value for e in value.elements)
            else:
                elements.append(value)
        classes = {self._constructed_class(e) for e in elements}
        return all(
            c is not None and c.startswith("torch.nn.") and c.rsplit(".", 1)[-1] in WEIGHTED_LAYERS
            for c in classes
        )

    def _requires_grad_switched_off(self, name: str, use: cst.CSTNode) -> bool:
        """`p.requires_grad = False` (or `p.requires_grad_(False)`) earlier in the same
        scope, not switched back on before `use`: the in-place op is legal there, as in
        `w.requires_grad = False; w.copy_(src); w.requires_grad = True`."""
        at = self.index.order.get(use, 0)
        owner = self.parameter_owner(name, use)
        names = {name} if owner is None else {name, _all_parameters_of(owner)}
        state = None
        for order, switched, flag in self._requires_grad_switches(self.index.scope_of(use)):
            if order >= at:
                break
            if switched in names:
                state = flag
        return state is False

    def parameter_owner(self, name: str, node: cst.CSTNode) -> str | None:
        """`model` when `name` is what `for name in model.parameters()` (or the second of
        `for n, name in model.named_parameters()`, or its place in `for t, name in
        zip(target.parameters(), model.parameters())`) hands the loop around `node`."""
        iterable = self.index.loop_element_source(name, node)
        if (
            type(iterable) is cst.Call
            and type(iterable.func) is cst.Attribute
            and iterable.func.attr.value in PARAMETER_ITERATORS
        ):
            return dotted_name(iterable.func.value)
        return None

    def _freezing_helper(self, func: cst.FunctionDef) -> tuple[str, str | bool] | None:
        """(its model parameter, its flag parameter or the flag itself) when the function
        switches requires_grad on every parameter of one of its parameters: GAN code's
        `def toggle_grad(model, requires_grad): for p in model.parameters():
        p.requires_grad_(requires_grad)`."""
        params = {p.name.value for p in func.params.params}
        for node in self.index.of_types_in(func.body, cst.Assign, cst.Call, into_functions=False):
            switch = requires_grad_switch(node)
            receiver = dotted_name(switch.receiver) if switch is not None else None
            if switch is None or receiver is None:
                continue
            owner = self.parameter_owner(receiver, node)
            if owner not in params:
                continue
            if type(switch.flag) is cst.Name and switch.flag.value in params:
                return owner, switch.flag.value
            if switch.on is not None:
                return owner, switch.on
        return None

    def model_switched_by_helper(self, call: cst.Call) -> tuple[str, bool] | None:
        """`toggle_grad(generator, False)`, a helper of this file (_freezing_helper):
        the model whose parameters it switches, and to what."""
        if type(call.func) is not cst.Name:
            return None
        helpers = [
            f
            for f in self.index.module.body
            if type(f) is cst.FunctionDef and f.name.value == call.func.value
        ]
        if len(helpers) != 1:
            return None
        freezing = self._freezing_helper(helpers[0])
        if freezing is None:
            return None
        model_param, flag = freezing
        names = [p.name.value for p in helpers[0].params.params]
        passed: dict[str, cst.BaseExpression] = {}
        for position, arg in enumerate(call.args):
            if arg.star or (arg.keyword is None and position >= len(names)):
                return None  # `*rest` takes it: which parameter it binds is not read
            key = arg.keyword.value if arg.keyword is not None else names[position]
            passed[key] = arg.value
        model = dotted_name(passed[model_param]) if model_param in passed else None
        if model is None:
            return None
        if isinstance(flag, bool):
            return model, flag
        literal = bool_literal(passed[flag]) if flag in passed else None
        return (model, literal) if literal is not None else None

    def _requires_grad_switches(self, scope: cst.CSTNode) -> list[tuple[int, str, bool]]:
        """(order, name, flag) of each requires_grad switch in the scope, in source
        order: read once per scope instead of once per in-place operation."""
        found = self._switch_cache.get(scope)
        if found is not None:
            return found
        found = []
        index = self.index
        root = scope.body if type(scope) is cst.FunctionDef else scope
        for node in index.of_types_in(root, cst.Assign, cst.Call, into_functions=False):
            switch = requires_grad_switch(node)
            receiver = dotted_name(switch.receiver) if switch is not None else None
            if switch is not None and receiver is not None:
                if switch.on is None and type(node) is cst.Assign:
                    continue
                # a flag passed to `requires_grad_(flag)` is read as on: a freeze is
                # only taken where it is written out
                flag = switch.on is not False
                found.append((index.order[node], receiver, flag))
                # switched on each parameter a loop over the model hands out: all of them
                owner = self.parameter_owner(receiver, node)
                if owner is not None:
                    found.append((index.order[node], _all_parameters_of(owner), flag))
            elif type(node) is cst.Call:
                frozen = self.model_switched_by_helper(node)
                if frozen is not None:
                    found.append((index.order[node], _all_parameters_of(frozen[0]), frozen[1]))
        self._switch_cache[scope] = found
        return found

    def holds_leaf_attributes(self, cls: cst.ClassDef) -> bool:
        """Does the class keep a tensor that requires grad in `self` (a Parameter,
        `torch.zeros(..., requires_grad=True)`)?"""
        return LEAF in self._class_attributes(cls).values()

    def _is_parameter_attribute(self, owner: str, attr: str, use: cst.CSTNode) -> bool:
        """`self.w` assigned a Parameter in the class, or the `.weight`/`.bias` of a
        module whose class we can see holds them as Parameters (torch.nn's layers, or a
        local class that makes them Parameters or inherits them). A local class that
        registers `weight` as a buffer (frozen batch norm) does not count."""
        if owner == "self":
            cls = self.index.class_around(use)
            if cls is not None and self._class_attributes(cls).get(attr) == LEAF:
                return True
        if attr not in ("weight", "bias"):
            return False
        owner_class = self._owner_class(owner, use)
        return owner_class is not None and self._class_has_parameter(owner_class, attr, set())

    def _local_class(self, name: str) -> cst.ClassDef | None:
        for cls in self.index.classes:
            if cls.name.value == name:
                return cls
        return None

    def _owner_class(self, dotted: str, use: cst.CSTNode) -> str | None:
        """The qualified class of the module a dotted name refers to, following
        `self.fc` / `model.fc` through the constructors visible in this file."""
        parts = dotted.split(".")
        if parts[0] == "self":
            cls = self.index.class_around(use)
            if cls is None:
                return None
            current: str | None = cls.name.value
        else:
            scope = self.index.scope_of(use)
            values = [
                node.value
                for node in self._binding_nodes(scope, parts[0])
                if type(node) is cst.Assign
            ]
            if not values and scope is not self.index.module:
                values = [
                    node.value
                    for node in self._binding_nodes(self.index.module, parts[0])
                    if type(node) is cst.Assign
                ]
            classes = {self._constructed_class(v) for v in values}
            if len(classes) != 1:
                return None
            current = classes.pop()
        for attr in parts[1:]:
            if current is None:
                return None
            cls = self._local_class(current)
            if cls is None:
                return None
            current = self._attribute_class(cls, attr)
        return current

    def _attribute_class(self, cls: cst.ClassDef, attr: str) -> str | None:
        values = self._self_assignments(cls).get(f"self.{attr}", ())
        classes = {self._constructed_class(value) for value in values}
        return classes.pop() if len(classes) == 1 else None

    def _class_has_parameter(self, qualified: str, attr: str, seen: set[str]) -> bool:
        if qualified.startswith("torch.nn.") and qualified != "torch.nn.Module":
            return True
        cls = self._local_class(qualified)
        if cls is None or qualified in seen:
            return False
        seen.add(qualified)
        own = self._class_attributes(cls).get(attr)
        if own is not None:
            return own == LEAF
        return any(
            self._class_has_parameter(self.index.qualified_name(base.value) or "", attr, seen)
            for base in cls.bases
        )

    def _class_attributes(self, cls: cst.ClassDef) -> dict[str, str]:
        cached = self._class_attrs.get(cls)
        if cached is not None:
            return cached
        attrs: dict[str, str] = {}
        for node in self.index.of_types_in(cls, cst.Assign, cst.Call):
            if type(node) is cst.Assign and len(node.targets) == 1:
                name = dotted_name(node.targets[0].target)
                if name and name.startswith("self.") and name.count(".") == 1:
                    _record(attrs, name.split(".", 1)[1], self.classify_value(node.value, cls))
            elif type(node) is cst.Call and type(node.func) is cst.Attribute:
                key = registered_name(node, "register_parameter")
                if key is not None:
                    # `register_parameter("running_mean", None)` only reserves the name
                    # (BatchNorm without running stats): no tensor is made
                    value = node.args[1].value if len(node.args) > 1 else None
                    _record(attrs, key, OTHER if is_none(value) else LEAF)
                    continue
                key = registered_name(node, "register_buffer")
                if key is not None:
                    _record(attrs, key, OTHER)
        self._class_attrs[cls] = attrs
        return attrs

    # -- what a value is, for fixes that must produce code valid on it --------------------

    def module_class(self, expr: cst.CSTNode, use: cst.CSTNode) -> str | None:
        """The qualified class of the module `expr` names (`self.lstm`, `rnn`), when it
        is constructed visibly: `self.lstm = nn.LSTM(...)`, `rnn = nn.GRU(...).to(d)`, or
        built where it is called (`nn.BCEWithLogitsLoss(reduction="none")(out, x)`)."""
        if type(expr) is cst.Call:
            return self._constructed_class(expr)
        constructors = self.module_constructors(expr, use)
        classes = {self._constructed_class(value) for value in constructors}
        return classes.pop() if len(classes) == 1 else None

    def module_constructors(self, expr: cst.CSTNode, use: cst.CSTNode) -> list[cst.CSTNode]:
        """The values assigned to the name `expr` (`self.x` anywhere in the class, a
        local name in the scope of `use`): what `module_class` reads the class from."""
        name = dotted_name(expr)
        if name is None:
            return []
        constructors: list[cst.CSTNode] = []
        if name.startswith("self.") and name.count(".") == 1:
            cls = self.index.class_around(use)
            if cls is None:
                return []
            return self._family_assignments(cls, name)
        else:
            scope = self.index.scope_of(use)
            nodes = self._binding_nodes(scope, name) + [
                b.node for b in self.bindings.records(scope, _COMPREHENSION).get(name, ())
            ]
            if not nodes and type(scope) is cst.FunctionDef and "." not in name:
                root_bound = self._tensor_bindings(scope).get(name)
                if not root_bound:
                    # a global of the module read in a function (`model = Net()`, then
                    # `def test(): model.fc(x)`): the module's bindings of it
                    nodes = self._binding_nodes(self.index.module, name)
            for node in nodes:
                if type(node) is cst.Assign:
                    value = _value_bound_to(node, name)
                    if value is not None:
                        constructors.extend(self._through_alias(value, node))
                elif type(node) is cst.For or type(node) is cst.CompFor:
                    constructors.extend(self._element_constructors(node, name))
        if not constructors and type(expr) is cst.Attribute:
            return self._instance_attribute_values(expr, use)
        return constructors

    def _through_alias(self, value: cst.CSTNode, binding: cst.Assign) -> list[cst.CSTNode]:
        """`policy = self.policy` in a method (or `net = agent.net`): a local name for a
        module held elsewhere is built where that is; any other value is its own."""
        if type(value) is not cst.Attribute or dotted_name(value) is None:
            return [value]
        if binding in self._aliases_followed:
            return [value]
        self._aliases_followed.add(binding)
        try:
            held = self.module_constructors(value, binding)
        finally:
            self._aliases_followed.discard(binding)
        return held or [value]

    def _element_constructors(self, loop: cst.For | cst.CompFor, name: str) -> list[cst.CSTNode]:
        """What builds each element a loop hands `name`, where it walks a list or tuple
        written out (`for m in [G, D]`, `for m in ensemble` with `ensemble = [Net() for _
        in range(3)]`, `nn.ModuleList([...])`): the elements as written, or the
        comprehension's element. Empty where that cannot be told."""
        names = target_names(loop.target)
        sources = loop_element_sources(loop.target, loop.iter)
        if name not in names or names.index(name) >= len(sources) or loop in self._expanding:
            return []
        self._expanding.add(loop)  # `for m in [m]`: asked again, the loop hands nothing
        try:
            return self._elements_built(sources[names.index(name)], loop)
        finally:
            self._expanding.discard(loop)

    def elements_built(self, container: cst.BaseExpression, use: cst.CSTNode) -> list[cst.CSTNode]:
        """What builds each element of a container of modules read at `use` (`self.actors`
        of `self.actors = [Actor(n, m) for _ in range(k)]`, then `self.actors[i](s)`):
        the elements as written, or a comprehension's element. Empty where that cannot
        be told."""
        return self._elements_built(container, use, keyed=True)

    def _elements_built(
        self, iterable: cst.BaseExpression | None, loop: cst.CSTNode, *, keyed: bool = False
    ) -> list[cst.CSTNode]:
        """`keyed`: the elements a subscript picks, which for a dict are its values (a
        loop over a dict walks its keys)."""
        if iterable is None:
            return []
        held: list[cst.CSTNode] = [iterable]
        if dotted_name(iterable) is not None:
            held = self.module_constructors(iterable, loop)
        elements: list[cst.CSTNode] = []
        for value in held:
            value = built_module_call(value)
            if type(value) is cst.Call and value.args and not value.args[0].keyword:
                qualified = self.index.qualified_name(value.func) or ""
                copied = value.args[0].value
                if qualified in MODULE_COPYING_FUNCTIONS and dotted_name(copied) is not None:
                    # `self.actors_target = deepcopy(self.actors)`: copies of the same
                    if value in self._expanding:
                        return []
                    self._expanding.add(value)
                    try:
                        copies = self._elements_built(copied, value, keyed=keyed)
                    finally:
                        self._expanding.discard(value)
                    if not copies:
                        return []
                    elements.extend(copies)
                    continue
                if qualified.rsplit(".", 1)[-1] in CONTAINER_MODULES:
                    layers = self._container_layers(value, qualified)
                    if layers is None:
                        return []
                    elements.extend(layers)
                    continue
            if type(value) is cst.List or type(value) is cst.Tuple:
                for element in value.elements:
                    if type(element) is cst.StarredElement:
                        continue
                    if dotted_name(element.value) is not None:
                        # `for net in [G, D]`: what builds G and D (unknown: the name)
                        built = self.module_constructors(element.value, loop)
                        elements.extend(built or [element.value])
                    else:
                        elements.append(element.value)
            elif type(value) is cst.Dict and keyed:
                # `models = {"G": G, "D": D}`: the values, whichever key picks one
                for item in value.elements:
                    if type(item) is not cst.DictElement:
                        return []  # `**others`: elements out of sight
                    if dotted_name(item.value) is not None:
                        built = self.module_constructors(item.value, loop)
                        elements.extend(built or [item.value])
                    else:
                        elements.append(item.value)
            elif type(value) is cst.ListComp or type(value) is cst.GeneratorExp:
                elements.append(value.elt)
            else:
                return []
        return elements

    def _container_layers(self, built: cst.Call, qualified: str) -> list[cst.CSTNode] | None:
        """What a torch container built here holds: `nn.Sequential(a, b)`'s arguments,
        `nn.Sequential(*layers)` and `nn.ModuleList(layers)` with `layers` a list written
        out where the container is built (appended to or not: its elements are some of
        the layers); None where that cannot be told."""
        positional = [a for a in built.args if not a.keyword]
        if not qualified.endswith("Sequential"):
            positional = positional[:1]
            if positional and not positional[0].star:
                listed = positional[0].value
                if dotted_name(listed) is None:
                    return self._written_elements(listed)
                return self._elements_of_list_named(listed, built)
        layers: list[cst.CSTNode] = []
        for arg in positional:
            if not arg.star:
                layers.append(arg.value)
                continue
            found = self._elements_of_list_named(arg.value, built)
            if found is None:
                return None
            layers.extend(found)
        return layers

    def _elements_of_list_named(
        self, name: cst.BaseExpression, use: cst.CSTNode
    ) -> list[cst.CSTNode] | None:
        if dotted_name(name) is None:
            return None
        found: list[cst.CSTNode] = []
        for value in self.module_constructors(name, use):
            written = self._written_elements(value)
            if written is None:
                return None
            found.extend(written)
        return found or None

    @staticmethod
    def _written_elements(value: cst.CSTNode) -> list[cst.CSTNode] | None:
        if type(value) is cst.List or type(value) is cst.Tuple:
            return [e.value for e in value.elements if type(e) is not cst.StarredElement]
        if type(value) is cst.Dict:  # `nn.ModuleDict({"enc": Encoder(), ...})`
            return [e.value for e in value.elements if type(e) is cst.DictElement]
        if type(value) is cst.ListComp or type(value) is cst.GeneratorExp:
            return [value.elt]
        return None

    def _instance_attribute_values(
        self, expr: cst.Attribute, use: cst.CSTNode
    ) -> list[cst.CSTNode]:
        """`self.q_eval.loss` where `self.q_eval` is built from a class of this file that
        sets `self.loss = nn.MSELoss()`: the values the instance's class gives the
        attribute (a network that carries its own loss module or optimizer). A name
        bound to instances of several such classes (a notebook's `model = AE()`, then
        `model = DeepAE()`) may hold any of them: the values of every one, or none
        when one of them does not set the attribute or is not a class of this file."""
        owners = {
            self.index.qualified_name(built.func)
            for built in map(built_module_call, self.module_constructors(expr.value, use))
            if type(built) is cst.Call
        }
        if not owners or None in owners:
            return []
        classes: dict[str, cst.ClassDef] = {}
        for cls in self.index.classes:
            if self.index.scope_of(cls) is self.index.module:
                classes.setdefault(cls.name.value, cls)
        values: list[cst.CSTNode] = []
        for owner in owners:
            built = classes.get(owner or "")
            given = self._self_assignments(built).get(f"self.{expr.attr.value}") if built else None
            if not given:
                return []
            values.extend(given)
        return values

    def attribute_values(self, cls: cst.ClassDef) -> dict[str, list[cst.CSTNode]]:
        """What the class assigns to each `self.x`, anywhere in it (`self.x` as key)."""
        return self._self_assignments(cls)

    def _family_assignments(self, cls: cst.ClassDef, name: str) -> list[cst.CSTNode]:
        """`self.x = value` (name `self.x`) in the methods of any class whose instances a
        method of `cls` may be running on: a template method's `self.model(x)` in a
        subclass whose base builds the model (`class Algo(Base)`, `Base.__init__` with
        `self.model = Net()`), or the base's own method on a model its subclasses
        build. The nearest class of the lineage that assigns it decides (a subclass's
        `self.model = torch.sigmoid` after `super().__init__()` replaces the base's
        model), and what a subclass assigns may be there instead."""
        lineage = self.lineage(cls) if self.lineage is not None else [cls]
        values: list[cst.CSTNode] = []
        for c in lineage:
            values = list(self._self_assignments(c).get(name, ()))
            if values:
                break
        for c in self.subclasses(cls) if self.subclasses is not None else ():
            values.extend(self._self_assignments(c).get(name, ()))
        return values

    def _self_assignments(self, cls: cst.ClassDef) -> dict[str, list[cst.CSTNode]]:
        """`self.x = value` anywhere in the class, by name: read once per class."""
        found = self._self_values.get(cls)
        if found is None:
            found = {}
            for node in self.index.of_types_in(cls, cst.Assign):
                if type(node) is cst.Assign and len(node.targets) == 1:
                    name = dotted_name(node.targets[0].target)
                    if name is not None and name.startswith("self.") and name.count(".") == 1:
                        found.setdefault(name, []).append(node.value)
            self._self_values[cls] = found
        return found

    def _constructed_class(self, value: cst.CSTNode) -> str | None:
        value = built_module_call(value)
        if type(value) is cst.Call:
            return self.index.qualified_name(value.func)
        return None

    def value_shape(self, value: cst.CSTNode | None, position: int | None, use) -> str | None:
        """ "tensor", "tensors" (a tuple of tensors), "none", or None when unsure, for the
        value bound to a name (`position`: its index when unpacked from a tuple)."""
        if value is None:
            return None
        if position is None:
            if type(value) is cst.Name and value.value == "None":
                return "none"
            if isinstance(value, (cst.Tuple, cst.List)) and all(
                self.value_shape(e.value, None, use) == "tensor" for e in value.elements
            ):
                return "tensors"
            if self._is_tensor_expr(value):
                return "tensor"
            if type(value) is cst.Subscript:
                # `trajectory[0]` of a tensor (or of a list of tensors) is a tensor
                return "tensor" if self.value_shape(value.value, None, use) == "tensor" else None
            if type(value) is cst.Call:
                cls = self.module_class(value.func, use) or ""
                if cls.startswith("torch.nn.") and cls.rsplit(".", 1)[-1] not in TUPLE_MODULES:
                    return "tensor"  # a layer's output
            if type(value) is cst.Name and value.value not in self._resolving_names:
                # `state = next_state`: whatever every binding of next_state is
                self._resolving_names.add(value.value)
                try:
                    scope = self.index.scope_of(use)
                    shapes = {
                        self.value_shape(node.value, None, node)
                        for node in self._binding_nodes(scope, value.value)
                        if type(node) is cst.Assign
                        and len(node.targets) == 1
                        and type(node.targets[0].target) is cst.Name
                    }
                finally:
                    self._resolving_names.discard(value.value)
                return shapes.pop() if len(shapes) == 1 else None
            return None
        if type(value) is cst.Call:
            module = self.module_class(value.func, use)
            # nn.LSTM returns (output, (h, c)); nn.GRU / nn.RNN return (output, h); the
            # cell modules return h or (h, c), unpacked into tensors.
            if module == "torch.nn.LSTM":
                return "tensors" if position == 1 else "tensor"
            if module in SINGLE_STATE_RECURRENT:
                return "tensor"
        if isinstance(value, (cst.Tuple, cst.List)) and position < len(value.elements):
            return self.value_shape(value.elements[position].value, None, use)
        return None

    def _is_tensor_expr(self, value: cst.CSTNode) -> bool:
        """A torch function's result, or a method/index/arithmetic chain on one."""
        while True:
            if type(value) is cst.Subscript:
                value = value.value
            elif type(value) is cst.BinaryOperation:
                return self._is_tensor_expr(value.left) or self._is_tensor_expr(value.right)
            elif type(value) is cst.Call:
                qualified = self.index.qualified_name(value.func) or ""
                if qualified.startswith("torch.nn.functional.") or (
                    qualified.startswith("torch.")
                    and not qualified.startswith(NOT_TENSOR_NAMESPACES)
                ):
                    return True
                if type(value.func) is cst.Attribute and not qualified.startswith("torch."):
                    value = value.func.value  # `torch.randn(...).cumsum(0)`
                else:
                    return False
            else:
                return False


def strip_views(
    expr: cst.CSTNode, methods: frozenset[str], attributes: frozenset[str]
) -> cst.CSTNode:
    """Down through indexing, the given view methods and attributes to what they are
    taken of: `t` for `t.view(-1)[0]`. Which methods and attributes count is the
    asker's: views alone, views and `.detach()`, the calls that alias."""
    while True:
        if type(expr) is cst.Subscript:
            expr = expr.value
        elif (
            type(expr) is cst.Call
            and type(expr.func) is cst.Attribute
            and expr.func.attr.value in methods
        ):
            expr = expr.func.value
        elif type(expr) is cst.Attribute and expr.attr.value in attributes:
            expr = expr.value
        else:
            return expr


def built_module_call(value: cst.CSTNode) -> cst.CSTNode:
    """What `value` builds, seen through the device, dtype and mode calls it is wrapped
    in: `nn.Linear(4, 2)` of `nn.Linear(4, 2).to(device).train()`."""
    return called_through(value, MODULE_WRAPPING_METHODS)


def called_through(value: cst.CSTNode, methods: frozenset[str]) -> cst.CSTNode:
    """What a chain of calls of these methods is made on: `model` of
    `model.to(device).half()` through the module methods that return the module."""
    while (
        type(value) is cst.Call
        and type(value.func) is cst.Attribute
        and value.func.attr.value in methods
    ):
        value = value.func.value
    return value


def _record(attrs: dict[str, str], attr: str, kind: str) -> None:
    """Record what a class binds to `self.<attr>`: one kind where every binding agrees,
    OTHER where two disagree (a parameter on one branch, a buffer on the other)."""
    attrs[attr] = OTHER if attrs.get(attr, kind) != kind else kind


def _value_bound_to(assign: cst.Assign, name: str) -> cst.CSTNode | None:
    """The value `assign` binds to `name`: the whole value for `name = v`, the matching
    element for `a, name = A(), B()`; None when it cannot be told (`a, name = pair`)."""
    for target in assign.targets:
        paired = paired_value(target.target, assign.value, name)
        if paired is not None:
            value, unpacked_from = paired
            return value if unpacked_from is None else None
    return None


def _all_parameters_of(model: str) -> str:
    """The name a switch of every parameter of `model` is recorded under."""
    return f"{model}.parameters()"


@dataclass(frozen=True)
class RequiresGradSwitch:
    """A switch of `requires_grad` on one tensor or module: `p.requires_grad = flag`,
    `p.requires_grad_(flag)`, `m.requires_grad_()`, or `p.detach_()` (off: the tensor
    itself leaves autograd, DeepRL's target networks before their soft update)."""

    receiver: cst.BaseExpression  # what is switched
    flag: cst.BaseExpression | None  # the flag as written; None where the call has none
    on: bool | None  # what it sets; None where the flag is not a literal


def requires_grad_switch(node: cst.CSTNode) -> RequiresGradSwitch | None:
    """The requires_grad switch `node` is, if it is one. Every reader of these switches
    (a frozen model, a leaf switched off around an in-place copy, a freezing helper)
    reads them here."""
    if type(node) is cst.Assign and len(node.targets) == 1:
        target = node.targets[0].target
        if type(target) is cst.Attribute and target.attr.value == REQUIRES_GRAD_ATTRIBUTE:
            return RequiresGradSwitch(target.value, node.value, bool_literal(node.value))
    elif type(node) is cst.Call and type(node.func) is cst.Attribute:
        method = node.func.attr.value
        if method == REQUIRES_GRAD_METHOD:
            if not node.args:
                return RequiresGradSwitch(node.func.value, None, True)
            flag = node.args[0].value
            return RequiresGradSwitch(node.func.value, flag, bool_literal(flag))
        if method == DETACH_IN_PLACE_METHOD and not node.args:
            return RequiresGradSwitch(node.func.value, None, False)
    return None
