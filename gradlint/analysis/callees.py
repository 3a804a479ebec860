"""Which function of this file a call runs, and which calls reach a function: the one
callee resolver every analysis and rule uses.

A method is looked up through the class's bases of this file, left to right and depth
first (Python's order for single inheritance and for simple mixins): `self.helper()` in
a subclass runs the base class's `helper`. A base the file cannot see (imported, or an
expression) may define any name, so a lookup that reaches one before finding the name
answers nothing; `super().m()` looks in the bases after the enclosing class. And
`self.m()` in a base class's method may run a subclass's override of `m`: that call is
one of the override's callers too (`runs` gives every function a call may run). A base
imported from the project is named for its summary (`inherited_import`), and for the
caller search in its file (`base_names`)."""

from __future__ import annotations

import libcst as cst

from gradlint.analysis.bindings import PYTHON_BINDINGS, BindingKind, ScopeBindings
from gradlint.analysis.index import FileIndex, dotted_name
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
        # class -> its own methods by name (None: defined twice, no one can be named)
        self._methods: dict[cst.ClassDef, dict[str, cst.FunctionDef | None]] | None = None
        # class -> (its classes of this file in lookup order, up to the first base the
        # file cannot see; that base, as written, if any): where a method is looked up
        self._lineages: dict[
            cst.ClassDef, tuple[list[cst.ClassDef], cst.BaseExpression | None]
        ] = {}
        # class -> the classes of this file that derive from it, nearest first
        self._subclasses: dict[cst.ClassDef, list[cst.ClassDef]] | None = None
        self._names_of_methods: set[str] | None = None
        # id of a call -> (the call, what resolve answered): the analyses ask again of
        # the same calls (summaries, loops, modes, rules), and the answer depends only on
        # this file. Keyed by id, as LibCST's __hash__ runs in Python; the entry holds the
        # call, so its id is not reused while it is here.
        self._resolved: dict[int, tuple[cst.Call, cst.FunctionDef | None]] = {}
        self._runs: dict[int, tuple[cst.Call, list[cst.FunctionDef]]] = {}  # the same, for runs

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
        function by name, or a method of the enclosing class (its own, else one its bases
        in this file define) through `self.`/`cls.`. A subclass's override that `self.m()`
        may also run is not the answer: callers_of counts the call for it."""
        known = self._resolved.get(id(call))
        if known is not None and known[0] is call:
            return known[1]
        found = self._resolve(call)
        self._resolved[id(call)] = (call, found)
        return found

    def runs(self, call: cst.Call) -> list[cst.FunctionDef]:
        """Every function of this file the call may run: resolve's answer, and for
        `self.m(...)` in a base class's method, the overrides of `m` in the subclasses
        that inherit that method (on an instance of one, the override runs)."""
        known = self._runs.get(id(call))
        if known is not None and known[0] is call:
            return known[1]
        method = self.resolve(call)
        found = [method] if method is not None else []
        self._runs[id(call)] = (call, found)
        target = call.func
        if (
            type(target) is cst.Attribute
            and type(target.value) is cst.Name
            and target.value.value in ("self", "cls")
            and target.attr.value in self._method_names()
        ):
            cls = self._class_of_node(call)
            if cls is not None:
                found.extend(self._overrides_run(call, cls, target.attr.value, method))
        return found

    def _method_names(self) -> set[str]:
        if self._names_of_methods is None:
            self._names_of_methods = {
                name for own in self._methods_by_class().values() for name in own
            }
        return self._names_of_methods

    def _resolve(self, call: cst.Call) -> cst.FunctionDef | None:
        target = call.func
        if type(target) is cst.Name:
            candidates = [
                f
                for f in self._by_name().get(target.value, ())
                if self.index.enclosing_class(f) is None
            ]
            if len(candidates) > 1:
                return self._reaching_definition(call, target.value, candidates)
            if candidates:
                return candidates[0]
            return self._instance_called(call, target)
        if type(target) is cst.Attribute:
            named = self._by_name().get(target.attr.value)
            if not named:
                return None  # no function of that name here: its receiver does not matter
            return self._method_called(call, target)
        return None

    def _reaching_definition(
        self, call: cst.Call, name: str, candidates: list[cst.FunctionDef]
    ) -> cst.FunctionDef | None:
        """Of a module-level function defined more than once (a notebook's cells each
        define their own `normalize`), the definition a call runs: the one that reaches
        it, for a call at module level; for a call in a module-level function, the one
        that reaches every call of that function, which all run at module level. None
        when the name is bound some other way too, or the definitions disagree."""
        module = self.index.module
        if any(self.index.scope_of(f) is not module for f in candidates):
            return None
        if len(self.bindings.records(module, _EVERY_BINDING).get(name, ())) != len(candidates):
            return None  # also imported or assigned: not only these definitions
        scope = self.index.scope_of(call)
        if scope is module:
            sites = [call]
        elif type(scope) is cst.FunctionDef and self.index.scope_of(scope) is module:
            if name in self.bindings.records(scope, _EVERY_BINDING) or self.handed_on(scope):
                return None  # a local of the function, or it runs from where we cannot see
            own = scope.name.value
            same = [f for f in self._by_name().get(own, ()) if self.index.scope_of(f) is module]
            sites = [
                c
                for c in self.index.calls
                if type(c.func) is cst.Name
                and c.func.value == own
                and self.index.scope_of(c) is module
                and self.index.reaching(list(same), c) == [scope]
            ]
        else:
            return None
        answer: cst.CSTNode | None = None
        for site in sites:
            reaching = self.index.reaching(list(candidates), site)
            if len(reaching) != 1 or (answer is not None and reaching[0] is not answer):
                return None  # two definitions may run, here or across the calls
            answer = reaching[0]
        return answer if type(answer) is cst.FunctionDef else None

    def _method_called(self, call: cst.Call, target: cst.Attribute) -> cst.FunctionDef | None:
        """The method `receiver.m(...)` runs: looked up from the receiver's class, or,
        for `super().m(...)`, from the bases after the enclosing class."""
        receiver = target.value
        if type(receiver) is cst.Call:
            if type(receiver.func) is not cst.Name or receiver.func.value != "super":
                return None
            if receiver.args:
                return None  # `super(Other, self)`: rare in a class's own methods
            cls = self._class_of_node(call)
            if cls is None:
                return None
            methods = self._methods_by_class()
            for known in self.lineage(cls)[1:]:
                own = methods.get(known)
                if own is not None and target.attr.value in own:
                    return own[target.attr.value]
            return None
        cls = self._receiver_class(call, target)
        return None if cls is None else self.method_of(cls, target.attr.value)

    def method_of(self, cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
        """The method `name` an instance of `cls` runs: the class's own, else the first
        of its bases of this file that defines it; None when a base out of sight comes
        first, or a class defines the name twice."""
        methods = self._methods_by_class()
        for known in self.lineage(cls):
            own = methods.get(known)
            if own is not None and name in own:
                return own[name]
        return None  # an unseen base may define it, or none does

    def lineage(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        """`cls` and its bases of this file in the order Python looks methods up (depth
        first, left to right, a class shared by two bases after both: the MRO of
        single inheritance, simple mixins and diamonds), up to the first base this file
        cannot see (`nn.Module`, an imported class), which may define any name."""
        return self._lookup_order(cls)[0]

    def base_names(self, cls: cst.ClassDef) -> frozenset[str]:
        """The names of the class's bases and of theirs in this file (`MLBaseClass` for
        `class Maml(MLBaseClass)`, whether defined here or imported): what a caller
        search in another file knows the base classes by."""
        order: list[cst.ClassDef | tuple[str, cst.BaseExpression]] = []
        self._depth_first(cls, order, [])
        names = {
            entry[0].rsplit(".", 1)[-1] if isinstance(entry, tuple) else entry.name.value
            for entry in order[1:]
        }
        names.discard(cls.name.value)
        return frozenset(names)

    def inherited_import(self, call: cst.Call) -> tuple[str, int, str] | None:
        """For `self.m(...)` whose class and bases of this file define no `m`: the
        (module, relative level, `Base.m`) of the imported base class the lookup reaches
        next (`class Maml(MLBaseClass)` after `from MLBaseClass import MLBaseClass`),
        for the project index to summarise."""
        target = call.func
        if (
            type(target) is not cst.Attribute
            or type(target.value) is not cst.Name
            or target.value.value not in ("self", "cls")
        ):
            return None
        cls = self._class_of_node(call)
        if cls is None:
            return None
        methods = self._methods_by_class()
        name = target.attr.value
        if any(name in methods.get(known, ()) for known in self.lineage(cls)):
            return None
        base = self.imported_base(cls)
        return (base[0], base[1], f"{base[2]}.{name}") if base is not None else None

    def imported_base(self, cls: cst.ClassDef) -> tuple[str, int, str] | None:
        """(module, relative level, class) of the imported base class that the lookup
        of a name on `cls`'s instances reaches after its bases of this file (`class
        Maml(MLBaseClass)` after `from MLBaseClass import MLBaseClass`); None where that
        base is not imported by name (`nn.Module` is, and the project has no such
        module)."""
        unseen = self._lookup_order(cls)[1]
        imported = self.index.imported_from
        if type(unseen) is cst.Name:
            origin = imported.get(unseen.value)
            if origin is None or origin[2] is None:
                return None  # not imported, or `import m` then `class C(m)`
            return origin[0], origin[1], origin[2]
        if type(unseen) is cst.Attribute and type(unseen.value) is cst.Name:
            origin = imported.get(unseen.value.value)  # `class C(models.Base)`
            if origin is None:
                return None
            module, level, inner = origin
            if inner is not None:  # `from . import models`
                module = f"{module}.{inner}" if module else inner
            return module, level, unseen.attr.value
        return None

    def _lookup_order(
        self, cls: cst.ClassDef
    ) -> tuple[list[cst.ClassDef], cst.BaseExpression | None]:
        found = self._lineages.get(cls)
        if found is None:
            order: list[cst.ClassDef | tuple[str, cst.BaseExpression]] = []
            self._depth_first(cls, order, [])
            # a class met twice is looked up where it is met last (after every class
            # that derives from it)
            keys = [entry[0] if type(entry) is tuple else id(entry) for entry in order]
            last = {key: i for i, key in enumerate(keys)}
            classes: list[cst.ClassDef] = []
            unseen: cst.BaseExpression | None = None
            for i, entry in enumerate(order):
                if last[keys[i]] != i:
                    continue
                if isinstance(entry, tuple):
                    unseen = entry[1]
                    break
                classes.append(entry)
            found = self._lineages[cls] = (classes, unseen)
        return found

    def _depth_first(
        self,
        cls: cst.ClassDef,
        order: list[cst.ClassDef | tuple[str, cst.BaseExpression]],
        stack: list[cst.ClassDef],
    ) -> None:
        order.append(cls)
        stack.append(cls)
        for arg in cls.bases:
            if arg.keyword is not None or arg.star:
                continue  # `metaclass=ABCMeta`; `*bases` is out of sight, but rare
            base = self._module_class(arg.value)
            if base is None or base in stack:
                # out of sight: named by its spelling, so that `nn.Module` under two
                # bases is met last where Python meets it
                order.append((dotted_name(arg.value) or f"?{id(arg)}", arg.value))
                continue
            self._depth_first(base, order, stack)
        stack.pop()

    def _module_class(self, expr: cst.BaseExpression) -> cst.ClassDef | None:
        """The one module-level class of this file a name refers to."""
        if type(expr) is not cst.Name:
            return None
        classes = self._module_classes().get(expr.value, ())
        return classes[0] if len(classes) == 1 else None

    def _module_classes(self) -> dict[str, list[cst.ClassDef]]:
        if self._classes is None:
            self._classes = {}
            for cls in self.index.classes:
                if self.index.scope_of(cls) is self.index.module:
                    self._classes.setdefault(cls.name.value, []).append(cls)
        return self._classes

    def method_names(self, cls: cst.ClassDef) -> frozenset[str]:
        """The names the class defines as methods (`self.<name>(...)` calls one)."""
        return frozenset(self._methods_by_class().get(cls, ()))

    def _methods_by_class(self) -> dict[cst.ClassDef, dict[str, cst.FunctionDef | None]]:
        if self._methods is None:
            self._methods = {}
            for func in self.index.functions:
                cls = self.index.enclosing_class(func)
                if cls is not None:
                    own = self._methods.setdefault(cls, {})
                    own[func.name.value] = None if func.name.value in own else func
        return self._methods

    def family(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        """`cls`, its bases (lineage) and its subclasses of this file: the classes whose
        methods' `self` may be one object with it, sharing its attributes. A sibling (a
        subclass of a base) is not one: it may keep something else under a name."""
        lineage = self.lineage(cls)
        return lineage + [c for c in self.subclasses(cls) if c not in lineage]

    def subclasses(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        """The classes of this file whose method lookup passes through `cls` (itself
        left out)."""
        if self._subclasses is None:
            self._subclasses = {}
            for other in self.index.classes:
                for base in self.lineage(other)[1:]:
                    self._subclasses.setdefault(base, []).append(other)
        return self._subclasses.get(cls, [])

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
        method_names: set[str] = set()
        for func in self.index.functions:
            if self.index.enclosing_class(func) is None:
                by_plain_name.setdefault(func.name.value, []).append(func)
            else:
                method_names.add(func.name.value)
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
                for method in self.runs(call):
                    callers.setdefault(method, []).append(call)
        # A bare reference (callback, decorator argument) hides other call sites. Only
        # the names of this file's functions are asked about (here and by handed_on):
        # the other names, most of a file's, are not looked at.
        escaped: set[str] = set()
        parents = self.index.parent
        function_names = by_plain_name.keys() | method_names
        for node in self.index.of_types(cst.Name):
            if node.value in function_names and id(node) not in called_funcs:
                parent = parents.get(node)
                if (type(parent) is cst.FunctionDef or type(parent) is cst.ClassDef) and (
                    parent.name is node
                ):
                    continue
                if (type(parent) is cst.Arg and parent.keyword is node) or (
                    type(parent) is cst.Param and parent.name is node
                ):
                    continue  # `model.eval(inference=False)`: a keyword, not the function
                if (
                    type(parent) is not cst.Attribute
                    and node.value not in by_plain_name
                    and type(self.index.scope_of(node)) is not cst.ClassDef
                ):
                    # `if inference:` reads a variable: a bare name can mean a function
                    # outside classes, not a method (reached through its object, or by
                    # name in its class's body)
                    continue
                if type(parent) is cst.Attribute and parent.attr is node:
                    # `self.step` stored away is a bound method of this file's classes;
                    # `corpus.train` names no module-level function of the file
                    if id(parent) not in called_funcs and node.value in method_names:
                        escaped.add(node.value)
                    continue
                scope = self.index.scope_of(node)
                if (
                    scope is not self.index.module
                    and node.value in self.bindings.nodes(scope, PYTHON_BINDINGS)
                    and not any(
                        self.index.scope_of(f) is scope for f in by_plain_name.get(node.value, ())
                    )
                ):
                    # `def label_data(train, valid): for x in valid:` reads its own
                    # parameter, not the module's `valid` function
                    continue
                escaped.add(node.value)
        self._escaped = escaped
        return {func: calls for func, calls in callers.items() if func.name.value not in escaped}

    def _overrides_run(
        self,
        call: cst.Call,
        cls: cst.ClassDef,
        name: str,
        method: cst.FunctionDef | None,
    ) -> list[cst.FunctionDef]:
        """The subclasses' methods `self.name(...)` in a method of `cls` may run besides
        `method`: on an instance of a subclass that overrides `name` (or defines what the
        base left to it) and inherits the calling method."""
        subclasses = self.subclasses(cls)
        if not subclasses:
            return []
        caller = self.index.scope_of(call)
        while type(caller) is not cst.FunctionDef or self.index.enclosing_class(caller) is not cls:
            if caller is self.index.module:
                return []  # not in a method of cls (a class body's own statement)
            caller = self.index.scope_of(caller)
        found: list[cst.FunctionDef] = []
        for sub in subclasses:
            override = self.method_of(sub, name)
            if override is None or override is method or override in found:
                continue
            if self.method_of(sub, caller.name.value) is caller:
                found.append(override)
        return found

    def _class_of_node(self, node: cst.CSTNode) -> cst.ClassDef | None:
        parent = self.index.parent.by_id
        anc = parent.get(id(node))
        while anc is not None:
            if type(anc) is cst.ClassDef:
                return anc
            anc = parent.get(id(anc))
        return None

    def _instance_called(self, call: cst.Call, target: cst.Name) -> cst.FunctionDef | None:
        """`detector(x)` with `detector = Detector(model)`: the `__call__` of the class
        of this file every binding of the name constructs."""
        if not self._by_name().get("__call__"):
            return None  # no class of this file defines one: cheap and sure
        cls = self._class_of_receiver(call, target)
        return None if cls is None else self.method_of(cls, "__call__")

    def _receiver_class(self, call: cst.Call, target: cst.Attribute) -> cst.ClassDef | None:
        """The class of this file whose method `receiver.m(...)` runs: the enclosing one
        for `self.`/`cls.`, or the one every binding of a local name constructs
        (`learner = MetaLearner(device)`, `.to(device)` looked through)."""
        return self._class_of_receiver(call, target.value)

    def _class_of_receiver(
        self, call: cst.Call, receiver: cst.BaseExpression
    ) -> cst.ClassDef | None:
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
        return self._module_class(value.func)
