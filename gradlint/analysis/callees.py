"""Which function of this file a call runs, and which calls reach a function: the one
callee resolver every analysis and rule uses."""

from __future__ import annotations

import libcst as cst

from gradlint.analysis.bindings import BindingKind, ScopeBindings
from gradlint.analysis.index import FileIndex
from gradlint.analysis.tensors import built_module_call

_EVERY_BINDING = frozenset(BindingKind)


class CalleeResolver:
    def __init__(self, index: FileIndex, bindings: ScopeBindings | None = None) -> None:
        self.index = index
        self.bindings = bindings if bindings is not None else ScopeBindings(index)
        self._classes: dict[str, list[cst.ClassDef]] | None = None
        self._callers: dict[cst.FunctionDef, list[cst.Call]] | None = None
        self._escaped: set[str] = set()
        self._names: dict[str, list[cst.FunctionDef]] | None = None
        # id of a call -> (the call, what resolve answered): the analyses ask again of
        # the same calls (summaries, loops, modes, rules), and the answer depends only on
        # this file. Keyed by id, as LibCST's __hash__ runs in Python; the entry holds the
        # call, so its id is not reused while it is here.
        self._resolved: dict[int, tuple[cst.Call, cst.FunctionDef | None]] = {}

    def callers_of(self, func: cst.FunctionDef) -> list[cst.Call]:
        """Calls in this module that reach `func`: `f(...)` for a module-level or nested
        function, `self.f(...)` / `cls.f(...)` for a method. A function that is also
        referenced without being called (passed as a callback) has callers we cannot see,
        so it is treated as having none visible."""
        if self._callers is None:
            self._callers = self._collect_callers()
        return self._callers.get(func, [])

    def handed_on(self, func: cst.FunctionDef) -> bool:
        """Is the function's name also used without being called (a callback, a bound
        method stored away)? Then it has callers nobody can see."""
        if self._callers is None:
            self._callers = self._collect_callers()
        return func.name.value in self._escaped

    def resolve(self, call: cst.Call) -> cst.FunctionDef | None:
        """The function of this file a call runs, when exactly one can be: a module-level
        function by name, or a method of the enclosing class through `self.`/`cls.`."""
        known = self._resolved.get(id(call))
        if known is not None and known[0] is call:
            return known[1]
        found = self._resolve(call)
        self._resolved[id(call)] = (call, found)
        return found

    def _resolve(self, call: cst.Call) -> cst.FunctionDef | None:
        target = call.func
        if type(target) is cst.Name:
            candidates = [
                f
                for f in self._by_name().get(target.value, ())
                if self.index.enclosing_class(f) is None
            ]
            return candidates[0] if len(candidates) == 1 else None
        if type(target) is cst.Attribute:
            named = self._by_name().get(target.attr.value)
            if not named:
                return None  # no function of that name here: its receiver does not matter
            cls = self._receiver_class(call, target)
            if cls is None:
                return None
            methods = [f for f in named if self.index.enclosing_class(f) is cls]
            return methods[0] if len(methods) == 1 else None
        return None

    def named(self, name: str) -> list[cst.FunctionDef]:
        """Every function of this file with that name (methods of any class included)."""
        return list(self._by_name().get(name, ()))

    def _by_name(self) -> dict[str, list[cst.FunctionDef]]:
        if self._names is None:
            self._names = {}
            for func in self.index.functions:
                self._names.setdefault(func.name.value, []).append(func)
        return self._names

    def _collect_callers(self) -> dict[cst.FunctionDef, list[cst.Call]]:
        by_plain_name: dict[str, list[cst.FunctionDef]] = {}
        by_method: dict[tuple[cst.ClassDef, str], cst.FunctionDef] = {}
        for func in self.index.functions:
            cls = self.index.enclosing_class(func)
            if cls is None:
                by_plain_name.setdefault(func.name.value, []).append(func)
            else:
                by_method[(cls, func.name.value)] = func
        method_names = {name for _, name in by_method}
        callers: dict[cst.FunctionDef, list[cst.Call]] = {}
        # ids of what each call calls (the tree holds them for the whole lint): a set of
        # nodes would hash each one through LibCST's __hash__, a Python call
        called_funcs: set[int] = set()
        for call in self.index.calls:
            called_funcs.add(id(call.func))
            target = call.func
            if type(target) is cst.Name:
                for func in by_plain_name.get(target.value, ()):
                    callers.setdefault(func, []).append(call)
            elif type(target) is cst.Attribute:
                if target.attr.value not in method_names:
                    continue  # no method of that name: its receiver does not matter
                cls = self._receiver_class(call, target)
                method = by_method.get((cls, target.attr.value)) if cls is not None else None
                if method is not None:
                    callers.setdefault(method, []).append(call)
        # A bare reference (callback, decorator argument) hides other call sites.
        escaped: set[str] = set()
        parents = self.index.parent
        for node in self.index.nodes:
            if type(node) is cst.Name and id(node) not in called_funcs:
                parent = parents.get(node)
                if (type(parent) is cst.FunctionDef or type(parent) is cst.ClassDef) and (
                    parent.name is node
                ):
                    continue
                if type(parent) is cst.Attribute and parent.attr is node:
                    if id(parent) not in called_funcs:
                        escaped.add(node.value)
                    continue
                escaped.add(node.value)
        self._escaped = escaped
        return {func: calls for func, calls in callers.items() if func.name.value not in escaped}

    def _class_of_node(self, node: cst.CSTNode) -> cst.ClassDef | None:
        parent = self.index.parent
        anc = parent.get(node)
        while anc is not None:
            if type(anc) is cst.ClassDef:
                return anc
            anc = parent.get(anc)
        return None

    def _receiver_class(self, call: cst.Call, target: cst.Attribute) -> cst.ClassDef | None:
        """The class of this file whose method `receiver.m(...)` runs: the enclosing one
        for `self.`/`cls.`, or the one every binding of a local name constructs
        (`learner = MetaLearner(device)`, `.to(device)` looked through)."""
        receiver = target.value
        if type(receiver) is not cst.Name:
            return None
        if receiver.value in ("self", "cls"):
            return self._class_of_node(call)
        records = self.bindings.records(self.index.scope_of(call), _EVERY_BINDING)
        found: cst.ClassDef | None = None
        for record in records.get(receiver.value, ()):
            if record.kind is not BindingKind.ASSIGN or not record.whole:
                return None
            built = self._constructed(record.value)
            if built is None or (found is not None and built is not found):
                return None
            found = built
        return found

    def _constructed(self, value: cst.CSTNode | None) -> cst.ClassDef | None:
        """The module-level class of this file that `Name(...)` constructs, if one."""
        if value is not None:
            value = built_module_call(value)
        if type(value) is not cst.Call or type(value.func) is not cst.Name:
            return None
        if self._classes is None:
            self._classes = {}
            for cls in self.index.classes:
                if self.index.scope_of(cls) is self.index.module:
                    self._classes.setdefault(cls.name.value, []).append(cls)
        classes = self._classes.get(value.func.value, ())
        return classes[0] if len(classes) == 1 else None
