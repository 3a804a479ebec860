"""Is a module in evaluation mode at a given point?

`model.eval()` and `model.train(flag)` are treated as bindings of a pseudo-variable, the
module's mode, and answered with the same reaching-definitions query as any variable:
after `if training: net.train() else: net.eval()` both switches reach the next line, so
the mode there is not known to be eval. Switches that are not statements
(`m = Net().eval()`, `[n.eval() for n in nets]`) are followed where their result is
bound to a name.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.arguments import (
    Signature,
    collected,
    library_argument,
    passed_or_default,
    shape_of,
)
from gradlint.analysis.bindings import ASSIGNMENTS, BindingKind, ScopeBindings
from gradlint.analysis.caller_arguments import path_in_caller
from gradlint.analysis.index import (
    FileIndex,
    bool_literal,
    dotted_name,
    every_element_path,
    module_path,
    own_method,
    path_root,
)
from gradlint.analysis.project import MethodCall, MethodQuery, ModeManager
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.summary_facts import Mode, mode_switch, reaching
from gradlint.analysis.tensors import all_params, called_through
from gradlint.analysis.torch_api import (
    MODE_CARRYING_MODULE_METHODS,
    MODULE_API,
    SELF_RETURNING_MODULE_METHODS,
    called_implicitly,
)


@dataclass(frozen=True)
class ModeSwitch:
    call: cst.Call
    model: str  # the dotted name whose mode is set
    to_eval: bool
    anchor: cst.CSTNode  # the statement that counts as the binding
    # For a model a helper returns in eval mode: the switch inside a helper of this
    # file, or (path, line, column, end line, end column) of the one in another file.
    inner: cst.CSTNode | None = None
    external: tuple[str, int, int, int, int] | None = None
    # For an attribute in eval mode when a method is entered: one of the project's calls
    # of the method, all of which run after another method switched it.
    entered_from: MethodCall | None = None
    # For a model an eval-mode manager of the project switches (`with eval_mode(m):`):
    # the block, which alone runs in eval mode (the manager restores the mode on exit).
    within: cst.With | None = None
    # For `model.train(training)` with `training` a parameter of the function: the
    # parameter, whose value at each call of the function picks the mode (to_eval is
    # then False: within the function the mode is not known to be eval).
    flag: str | None = None

    def to_eval_at(self, call: cst.Call, func: cst.FunctionDef, *, method: bool) -> bool | None:
        """Does the switch put the model in eval mode in the run of its function `func`
        that `call` makes? A switch by a flag parameter (`model.train(training)`) does
        when the call gives the flag `False` (its default included), not when `True`;
        None when the call gives it anything else. `method`: `func` is defined in a
        class's body."""
        if self.flag is None:
            return self.to_eval
        bound = passed_or_default(call, func, self.flag, method=method)
        flag = bool_literal(bound[0]) if bound is not None else None
        return None if flag is None else not flag


def switch_arguments(call: cst.Call) -> list[tuple[str | None, bool | None]]:
    """A call's arguments as summary_facts.mode_switch reads them."""
    return [
        (arg.keyword.value if arg.keyword is not None else None, bool_literal(arg.value))
        for arg in call.args
    ]


def switch_of(call: cst.Call) -> tuple[str | None, bool] | None:
    """(receiver, to_eval) for `x.eval()` / `x.train(flag)` with a literal flag. The
    receiver is looked through the module methods that return the module itself:
    `model.cuda().eval()` switches `model`."""
    func = call.func
    if type(func) is not cst.Attribute:
        return None
    mode = mode_switch(func.attr.value, switch_arguments(call))
    if mode is None or mode is Mode.SET:
        return None
    return module_path(called_through(func.value, MODE_CARRYING_MODULE_METHODS)), mode is Mode.EVAL


def _switched_on_the_way_out(value: cst.CSTNode) -> cst.Call | None:
    """The eval switch a returned chain of the module's self-returning methods ends in
    (`model.to(device).eval()`, `model.eval().half()`); None when the chain has none,
    or its last switch is to training."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute:
        switch = switch_of(value)
        if switch is not None:
            return value if switch[1] else None
        if value.func.attr.value not in MODE_CARRYING_MODULE_METHODS:
            return None
        value = value.func.value
    return None


# What gives a model's variable a new value whose mode this scope never set.
MODEL_REBINDINGS = ASSIGNMENTS | {BindingKind.FOR, BindingKind.WITH}


def same_module_again(binding: cst.CSTNode, name: str) -> bool:
    """`model = model.cuda()`, `net = net.to(device).float()`: the name is bound to the
    module it held, which those methods return, so its mode is the one it had."""
    if type(binding) is not cst.Assign or len(binding.targets) != 1:
        return False
    value: cst.BaseExpression = binding.value
    moved = False
    while type(value) is cst.Call and type(value.func) is cst.Attribute:
        if value.func.attr.value not in SELF_RETURNING_MODULE_METHODS:
            return False
        moved = True
        value = value.func.value
    target = binding.targets[0].target
    return moved and dotted_name(value) == name and dotted_name(target) == name


class TrainModeAnalysis:
    def __init__(
        self,
        index: FileIndex,
        summaries: FunctionSummaries | None = None,
        bindings: ScopeBindings | None = None,
    ) -> None:
        self.index = index
        self.summaries = summaries
        self.bindings = bindings
        self._switches: list[ModeSwitch] | None = None
        self._direct: list[ModeSwitch] | None = None
        self._by_scope: dict[tuple[cst.CSTNode, str], list[ModeSwitch]] = {}
        self._local_returns_eval: dict[cst.CSTNode, tuple[cst.CSTNode | None, None] | None] = {}

    def switches(self) -> list[ModeSwitch]:
        """Every switch: the calls themselves, and bindings of a helper's result that
        returns a model in eval mode (`model = load_model(path)`)."""
        if self._switches is None:
            direct = self.direct_switches()
            self._switches = (
                direct
                + self._returned_models(direct)
                + self._entry_states(direct)
                + self._constructor_states(direct)
                + self._managed_switches()
                + self._helper_switches(direct)
            )
        return self._switches

    def _helper_switches(self, direct: list[ModeSwitch]) -> list[ModeSwitch]:
        """`set_mode(net, False)`, `self.training_mode(False)`: a call, as a statement, of
        a function of this file that switches what it is handed (a parameter, a loop
        over one, `self.<attr>` of a method called on `self`) switches it in the caller,
        to eval mode when every switch of it in the function does so with the flags the
        call gives (`net.train(mode)` with `mode=False`: analysis.arguments binds
        them), else out of eval mode. Anchored at the call's statement, with the last
        switch inside as `inner`."""
        if self.summaries is None:
            return []
        by_function: dict[cst.CSTNode, list[ModeSwitch]] = {}
        for switch in direct:
            scope = self.index.scope_of(switch.anchor)
            if type(scope) is cst.FunctionDef:
                by_function.setdefault(scope, []).append(switch)
        found: list[ModeSwitch] = []
        if not by_function:
            return found  # most files: no function switches anything
        for call in self.index.calls:
            statement = self.index.parent.get(call)
            if type(statement) is not cst.Expr:
                continue
            callee = self.summaries.resolve(call)
            if callee is None or callee not in by_function:
                continue
            method = self.index.enclosing_class(callee) is not None
            decided: dict[str, list[tuple[ModeSwitch, bool | None]]] = {}
            for switch in by_function[callee]:
                path = self._caller_path(call, callee, switch, method)
                if path is None:
                    continue
                to_eval = switch.to_eval_at(call, callee, method=method)
                decided.setdefault(path, []).append((switch, to_eval))
            for path, switches in decided.items():
                to_eval = all(mode is True for _, mode in switches)
                inner = switches[-1][0].call
                found.append(ModeSwitch(call, path, to_eval, statement, inner=inner))
        return found

    def _caller_path(
        self, call: cst.Call, callee: cst.FunctionDef, switch: ModeSwitch, method: bool
    ) -> str | None:
        """The path, in the caller, of what `switch` inside `callee` switches."""
        model = switch.model
        loop = self._loop_over(switch)
        if loop is not None:  # `for net in nets: net.train(mode)`: every element
            model = loop + "[]"
        return path_in_caller(call, callee, model, method=method)

    def _loop_over(self, switch: ModeSwitch) -> str | None:
        """For a switch of a `for` loop's variable (`for net in self.nets:
        net.train(mode)`): the path the loop walks."""
        if "." in switch.model or "[" in switch.model:
            return None
        for loop in self.index.enclosing_loops(switch.anchor):
            if type(loop) is cst.For:
                container = walked_container(loop.target, loop.iter, switch.model)
                if container is not None:
                    return module_path(container)
        return None

    def _managed_switches(self) -> list[ModeSwitch]:
        """`with eval_mode(agent):` where `eval_mode` is one of the project's context
        managers, in this file or imported, that puts its arguments in eval mode
        (analysis.project.ModeManager):
        each argument it switches is in eval mode inside the block, anchored at the
        manager's call in the `with` line."""
        project = self.summaries.project if self.summaries is not None else None
        if project is None or not project.enabled:
            return []
        own = {
            statement.name.value
            for statement in self.index.module.body
            if (type(statement) is cst.ClassDef or type(statement) is cst.FunctionDef)
        }
        if not self.index.imported_from and not own:
            return []
        found: list[ModeSwitch] = []
        for node in self.index.of_types(cst.With):
            if type(node) is not cst.With:
                continue
            for item in node.items:
                call = item.item
                if type(call) is not cst.Call:
                    continue
                if type(call.func) is cst.Name and call.func.value in own:
                    # a manager of this file (`class evaluating:` beside its use)
                    manager = project.own_mode_manager(call.func.value)
                else:
                    manager = self._imported_manager(call)
                if manager is None:
                    continue
                for name in _managed_arguments(call, manager):
                    found.append(ModeSwitch(call, name, True, call, within=node))
        return found

    def _imported_manager(self, call: cst.Call) -> ModeManager | None:
        """The eval-mode manager an imported name of the call is (`eval_mode(m)` after
        `from utils import eval_mode`, `utils.eval_mode(m)`), if it is one."""
        assert self.summaries is not None and self.summaries.project is not None
        func = call.func
        imported = self.index.imported_from
        if type(func) is cst.Name:
            origin = imported.get(func.value)
            if origin is None or origin[2] is None:
                return None
            module, level, name = origin[0], origin[1], origin[2]
        elif type(func) is cst.Attribute and type(func.value) is cst.Name:
            origin = imported.get(func.value.value)
            if origin is None:
                return None
            module, level, owner = origin
            if owner is not None:  # `from pkg import utils`: the module is pkg.utils
                module = f"{module}.{owner}" if module else owner
            name = func.attr.value
        else:
            return None
        return self.summaries.project.mode_manager(module, level, name)

    def _entry_states(self, direct: list[ModeSwitch]) -> list[ModeSwitch]:
        """An attribute put in eval mode by one method and run by another
        (`def evaluate(self): self.G.eval()`, `def sample(self): self.G(z)`): in eval mode
        when the second is entered if every call of it in the project runs after a call
        of the first on the same object, with nothing between that switches it back.
        Such a switch is anchored at the method's first parameter."""
        project = self.summaries.project if self.summaries is not None else None
        if project is None or not project.enabled:
            return []
        assert self.summaries is not None
        callees = self.summaries.callees
        found: list[ModeSwitch] = []
        for cls, attribute, switches in self._attribute_switches(direct):
            if not any(s.to_eval for s in switches):
                continue
            model = f"self.{attribute}"
            methods = [m for m in cls.body.body if type(m) is cst.FunctionDef]
            switching = {self.index.scope_of(s.anchor) for s in switches}
            evals = {m.name.value for m in methods if self._ends_in_eval(m, switches)}
            resets = {m.name.value for m in methods if m in switching} - evals
            resets |= {m.name.value for m in methods if self._assigns(m, model)}
            resets |= self._calling_any(methods, resets | evals) - evals
            names = frozenset(m.name.value for m in methods)
            for method in methods:
                if method in switching or called_implicitly(method.name.value):
                    continue
                if not self._runs(method, model):
                    continue
                params = list(all_params(method.params))
                if not params or self._called_in_file(method):
                    continue
                query = MethodQuery(
                    project.path,
                    cls.name.value,
                    method.name.value,
                    attribute,
                    frozenset(evals),
                    frozenset(resets),
                    names,
                    callees.base_names(cls),
                )
                # every call must follow an eval switch: one on an object whose class
                # cannot be told (`agent` a parameter) counts as one of its calls
                answered = project.method_calls_counting_unknown(query)
                calls = answered[1] if answered is not None else None
                if not calls or not all(c.after_eval for c in calls):
                    continue
                if not any(c.recording for c in calls):
                    continue  # every caller runs it under no_grad
                eval_switch = next(s for s in reversed(switches) if s.to_eval)
                found.append(
                    ModeSwitch(eval_switch.call, model, True, params[0], entered_from=calls[0])
                )
        return found

    def _constructor_states(self, direct: list[ModeSwitch]) -> list[ModeSwitch]:
        """An attribute the constructor leaves in eval mode (`self.model.eval()` in
        `__init__`, or in a base's `__init__` the subclass's runs) is in eval mode in
        every other method of the object, as a module-level switch is in the file's
        functions: every method runs after the constructor. It holds when nothing in the
        class, its bases or its subclasses switches the attribute again or builds it
        anew, and none of them may be a module itself (every base is in this file or
        `object`): a module's `train()` switches its submodules with it. Anchored at the
        first parameter of each method that calls the attribute; the methods' callees
        are reached from there, as from any scope where the model is in eval mode."""
        if self.summaries is None:
            return []
        found: list[ModeSwitch] = []
        for cls, attribute, switches in self._attribute_switches(direct):
            init = own_method(cls, "__init__")
            if init is None or not self._ends_in_eval(init, switches):
                continue
            family = self._plain_family(cls)
            if family is None:
                continue
            model = f"self.{attribute}"
            eval_switch = [s for s in switches if self.index.scope_of(s.anchor) is init][-1]
            methods = [
                (member, m)
                for member in family
                for m in member.body.body
                if type(m) is cst.FunctionDef
            ]
            if self._switched_or_rebuilt(methods, model, init, eval_switch, direct):
                continue
            for member, method in methods:
                if method.name.value == "__init__" or _not_an_instance_method(method):
                    continue
                if member is not cls and not self._runs_constructor_of(member, init):
                    continue
                params = list(all_params(method.params))
                if params and self._calls_model(method, model):
                    found.append(ModeSwitch(eval_switch.call, model, True, params[0]))
        return found

    def _plain_family(self, cls: cst.ClassDef) -> list[cst.ClassDef] | None:
        """The class, its bases and its subclasses of this file, when every base of
        each is one of them or `object` (none can be a module); else None."""
        assert self.summaries is not None
        family = self.summaries.callees.family(cls)
        names = {c.name.value for c in family}
        for member in family:
            for base in member.bases:
                if base.keyword is not None:
                    continue  # `metaclass=ABCMeta`
                name = dotted_name(base.value)
                if name != "object" and name not in names:
                    return None
        return family

    def _switched_or_rebuilt(
        self,
        methods: list[tuple[cst.ClassDef, cst.FunctionDef]],
        model: str,
        init: cst.FunctionDef,
        eval_switch: ModeSwitch,
        direct: list[ModeSwitch],
    ) -> bool:
        """Does the family switch the attribute (or the object) anywhere but in the
        constructor up to its eval switch, or build it anew after that switch? Or does
        code outside it switch an attribute of that name on some object
        (`tagger.net.train()`), which could be an instance?"""
        after = self.index.order[eval_switch.anchor]
        family = list(dict.fromkeys(cls for cls, _ in methods))
        attribute = model.partition(".")[2]
        for switch in direct:
            inside = any(self.index.is_inside(switch.anchor, cls) for cls in family)
            if not inside:
                # another object's switch may be of an instance (`tagger.net.train()`),
                # unless it puts it in eval mode too, or it is another class's own
                # attribute (`self.model.eval()` in a sibling explainer class)
                if (
                    switch.model.endswith(f".{attribute}")
                    and not switch.to_eval
                    and not (switch.model == model and self._in_a_method(switch.anchor))
                ):
                    return True
                continue
            if switch.model not in (model, "self"):
                continue
            in_init = self.index.scope_of(switch.anchor) is init
            if not in_init or self.index.order[switch.anchor] > after:
                return True
        if self.bindings is None:
            return True
        bindings = self.bindings.family_attribute_bindings(family, model)
        if bindings is None:
            return True  # code outside the classes may bind it on this object
        for binding in bindings:
            if binding.kind not in MODEL_REBINDINGS:
                continue
            node = binding.node
            if self.index.scope_of(node) is not init or self.index.order[node] > after:
                return True
        return False

    def _in_a_method(self, node: cst.CSTNode) -> bool:
        """Is the node in a method's body (where `self` is that class's instance)?"""
        scope = self.index.scope_of(node)
        return type(scope) is cst.FunctionDef and self.index.enclosing_class(scope) is not None

    def _runs_constructor_of(self, cls: cst.ClassDef, init: cst.FunctionDef) -> bool:
        """Does building a `cls` run `init`: inherited, or called from its own
        `__init__` (`super().__init__(...)`, `Base.__init__(self, ...)`)?"""
        assert self.summaries is not None
        own = own_method(cls, "__init__")
        if own is None:
            return self.summaries.callees.method_of(cls, "__init__") is init
        return any(
            type(node) is cst.Call
            and type(node.func) is cst.Attribute
            and node.func.attr.value == "__init__"
            for node in self.index.walk(own.body)
        )

    def _calls_model(self, method: cst.FunctionDef, model: str) -> bool:
        """Does the method call the attribute, a method of it outside nn.Module's API
        (`self.model(x)`, `self.model.encode(src)`), or hand it to a function that may
        (`embed(self.model, batch)`)?"""
        for node in self.index.of_types_in(method.body, cst.Call):
            if type(node) is not cst.Call:
                continue
            func = node.func
            if dotted_name(func) == model:
                return True
            if (
                type(func) is cst.Attribute
                and func.attr.value not in MODULE_API
                and dotted_name(func.value) == model
            ):
                return True
            if any(dotted_name(arg.value) == model for arg in node.args):
                return True
        return False

    def _attribute_switches(self, direct: list[ModeSwitch]):
        """(class, attribute, its switches in the class's methods) for each `self.<attr>`
        switched in a method; `self.eval()` / `self.train()` count for every attribute."""
        by_class: dict[cst.ClassDef, dict[str, list[ModeSwitch]]] = {}
        whole: dict[cst.ClassDef, list[ModeSwitch]] = {}
        for switch in direct:
            scope = self.index.scope_of(switch.anchor)
            if type(scope) is not cst.FunctionDef:
                continue
            cls = self.index.enclosing_class(scope)
            if cls is None:
                continue
            if switch.model == "self":
                whole.setdefault(cls, []).append(switch)
            elif switch.model.startswith("self.") and switch.model.count(".") == 1:
                by_class.setdefault(cls, {}).setdefault(switch.model[5:], []).append(switch)
        for cls, attributes in by_class.items():
            for attribute, switches in attributes.items():
                merged = sorted(
                    switches + whole.get(cls, []), key=lambda s: self.index.order[s.anchor]
                )
                yield cls, attribute, merged

    def _ends_in_eval(self, method: cst.FunctionDef, switches: list[ModeSwitch]) -> bool:
        """Does every way out of the method leave the attribute in eval mode? Its last
        switch is an eval switch directly in its body."""
        own = [s for s in switches if self.index.scope_of(s.anchor) is method]
        if not own or not own[-1].to_eval:
            return False
        line = self.index.parent.get(own[-1].anchor)  # the anchor's statement line
        return line is not None and self.index.parent.get(line) is method.body

    def _calling_any(self, methods: list[cst.FunctionDef], names: set[str]) -> set[str]:
        """The methods that reach one of `names` through `self.` calls, however deep
        (`fit` calling `_train_loop` calling `self.G.train()`): they may switch too."""
        assert self.summaries is not None
        calls = {
            m.name.value: {callee.name.value for _, callee in self.summaries.of(m).calls}
            for m in methods
        }
        return reaching(names, calls) - names

    def _runs(self, method: cst.FunctionDef, model: str) -> bool:
        """Does the method run a forward of `self.<attr>` (`self.G(z)`, `.forward(z)`)?"""
        for node in self.index.walk(method.body):
            if type(node) is cst.Call:
                name = dotted_name(node.func)
                if name == model or name == f"{model}.forward":
                    return True
        return False

    def _assigns(self, method: cst.FunctionDef, model: str) -> bool:
        """Does the method build the attribute anew (`self.G = Generator()`)?"""
        for node in self.index.walk(method.body):
            if type(node) is cst.Assign:
                if any(dotted_name(t.target) == model for t in node.targets):
                    return True
        return False

    def _called_in_file(self, method: cst.FunctionDef) -> bool:
        """Is the method called by the class itself, or handed on without a call
        (`self.sample` as a callback)? Then its callers are not all in sight."""
        assert self.summaries is not None
        callees = self.summaries.callees
        return bool(callees.callers_of(method)) or callees.handed_on(method)

    def _returned_models(self, direct: list[ModeSwitch]) -> list[ModeSwitch]:
        if self.summaries is None:
            return []
        found: list[ModeSwitch] = []
        parents = self.index.parent.by_id  # read for every call of the file
        for call in self.index.calls:
            parent = parents.get(id(call))
            if type(parent) is not cst.Assign or parent.value is not call:
                continue
            returned = self._returns_eval_model(call, direct)
            if returned is None:
                continue
            inner, external = returned
            for target in parent.targets:
                name = dotted_name(target.target)
                if name is not None:
                    found.append(ModeSwitch(call, name, True, parent, inner, external))
        return found

    def _returns_eval_model(
        self, call: cst.Call, direct: list[ModeSwitch]
    ) -> tuple[cst.CSTNode | None, tuple[str, int, int, int, int] | None] | None:
        """When the call returns a model in eval mode: (the switch inside this file's
        helper, or None; where it is in another file, or None). None otherwise."""
        assert self.summaries is not None
        local = self.summaries.resolve(call)
        if local is not None:
            if local not in self._local_returns_eval:
                self._local_returns_eval[local] = self._returns_eval(local, direct)
            return self._local_returns_eval[local]
        external = self.summaries.resolve_external(call, returning_eval_model=True)
        if external is None or not external.returns_eval_model:
            return None
        where = external.eval_switch
        if len(where) != 5:
            return None, None
        path, line, column, end_line, end_column = where
        return None, (path, line, column, end_line, end_column)

    def _returns_eval(
        self, local: cst.FunctionDef, direct: list[ModeSwitch]
    ) -> tuple[cst.CSTNode | None, None] | None:
        """When every `return` of this helper hands back a name in eval mode: (the last
        of those switches, None); else None."""
        returns = self.index.value_returns(local)
        if not returns:
            return None
        inner = None
        for ret, value in returns:
            # `return model.eval()`, `return model.to(device).eval()`: switched on the
            # way out; `return model.to(device)`: the module it holds, in its mode
            handed_back = _switched_on_the_way_out(value)
            if handed_back is not None:
                inner = handed_back
                continue
            name = dotted_name(called_through(value, MODE_CARRYING_MODULE_METHODS))
            switch = self._eval_at(name, ret, direct) if name is not None else None
            if switch is None:
                return None
            inner = switch.call
        return inner, None

    def direct_switches(self) -> list[ModeSwitch]:
        if self._direct is None:
            found: list[ModeSwitch] = []
            for call in self.index.calls:
                switch = switch_of(call)
                if switch is None:
                    flagged = self._flag_switch(call)
                    if flagged is not None:
                        found.append(flagged)
                    continue
                receiver, to_eval = switch
                whole = self._carried_on(call)
                parent = self.index.parent.get(whole)
                if type(parent) is cst.Expr and receiver is not None:
                    found.append(ModeSwitch(call, receiver, to_eval, parent))
                    for model, loop in self._loop_elements(parent, receiver):
                        found.append(ModeSwitch(call, model, to_eval, loop))
                    continue
                # `net.train() if is_train else net.eval()` as a statement: each branch
                # switches on its own path (path_conditions reads the IfExp's test)
                statement = self.index.parent.get(parent) if type(parent) is cst.IfExp else None
                if (
                    type(statement) is cst.Expr
                    and receiver is not None
                    and whole in (parent.body, parent.orelse)  # type: ignore[union-attr]
                ):
                    found.append(ModeSwitch(call, receiver, to_eval, statement))
                    continue
                # `m = Net().eval()` / `m = m.eval()`: the bound name is in that mode;
                # `_ = model.cuda().eval().half()`: so is the module switched
                if type(parent) is cst.Assign and parent.value is whole:
                    names = [dotted_name(target.target) for target in parent.targets]
                    if receiver is not None and receiver not in names:
                        names.append(receiver)
                    for name in names:
                        if name is not None:
                            found.append(ModeSwitch(call, name, to_eval, parent))
                elif isinstance(parent, (cst.ListComp, cst.GeneratorExp)) and parent.elt is call:
                    # `[net.eval() for net in nets]`: every element of `nets`
                    walked = (
                        walked_container(parent.for_in.target, parent.for_in.iter, receiver)
                        if receiver is not None
                        else None
                    )
                    container = dotted_name(walked) if walked is not None else None
                    if container is not None:
                        statement = self.index.statement_of(parent)
                        found.append(ModeSwitch(call, f"{container}[]", to_eval, statement))
            self._direct = found
        return self._direct

    def _loop_elements(self, statement: cst.Expr, receiver: str) -> list[tuple[str, cst.For]]:
        """(model, loop) for each model a `for` loop switches through its variable, the
        switch a statement of the loop's own body (`for net in (G, D): net.eval()`):
        each name of a literal list or tuple, or every element of a container the loop
        walks (`for net in self.nets:`, `nets[]`). The loop is the switch's anchor: after
        it, each of them is in that mode. A switch under a condition in the loop
        (`if isinstance(m, nn.BatchNorm2d): m.eval()`) switches only some."""
        line = self.index.parent.get(statement)
        block = self.index.parent.get(line) if line is not None else None
        loop = self.index.parent.get(block) if block is not None else None
        if type(loop) is not cst.For or loop.body is not block:
            return []
        walked = walked_container(loop.target, loop.iter, receiver)
        if walked is None or self._leaves_early(loop):
            return []
        if walked is not loop.iter:  # `models.values()`, `enumerate(nets)`: its elements
            container = dotted_name(walked)
            return [(f"{container}[]", loop)] if container is not None else []
        if isinstance(loop.iter, (cst.List, cst.Tuple)):
            elements = loop.iter.elements
            if any(type(element) is cst.StarredElement for element in elements):
                return []  # `(*nets, head)`: what else it walks is out of sight
            paths = [module_path(element.value) for element in elements]
            return [(path, loop) for path in paths if path is not None] if None not in paths else []
        container = dotted_name(loop.iter)
        return [(f"{container}[]", loop)] if container is not None else []

    def _leaves_early(self, loop: cst.For) -> bool:
        """Can an iteration of the loop skip the rest of its body, or the loop stop
        before its last element (`if k == "G": continue`, `break`)? Then a switch in
        its body may miss some elements."""
        return any(
            next(self.index.enclosing_loops(node), None) is loop
            for node in self.index.of_types_in(loop.body, cst.Continue, cst.Break)
        )

    def _carried_on(self, call: cst.Call) -> cst.BaseExpression:
        """The whole chain of module methods that return the module itself, called on the
        result of `call` (`model.eval().half()` around `model.eval()`): its value is the
        same module, in the mode `call` set."""
        node: cst.BaseExpression = call
        while True:
            attribute = self.index.parent.get(node)
            above = self.index.parent.get(attribute) if attribute is not None else None
            if not (
                type(attribute) is cst.Attribute
                and attribute.value is node
                and type(above) is cst.Call
                and above.func is attribute
                and attribute.attr.value in MODE_CARRYING_MODULE_METHODS
            ):
                return node
            node = above

    def _flag_switch(self, call: cst.Call) -> ModeSwitch | None:
        """`model.train(training)`, a statement, with `training` a parameter of the
        function that it never rebinds: its callers pick the mode."""
        func = call.func
        if type(func) is not cst.Attribute or func.attr.value != "train":
            return None
        arg = library_argument(call, "mode", 0)  # nn.Module.train(mode=True)
        if arg is None or type(arg.value) is not cst.Name:
            return None
        parent = self.index.parent.get(call)
        receiver = module_path(func.value)
        scope = self.index.scope_of(call)
        if type(parent) is not cst.Expr or receiver is None or type(scope) is not cst.FunctionDef:
            return None
        flag = arg.value.value
        if flag not in {p.name.value for p in all_params(scope.params)}:
            return None
        if self.bindings is None or self.bindings.nodes(scope, MODEL_REBINDINGS).get(flag):
            return None  # rebound in the body: not the caller's value
        return ModeSwitch(call, receiver, False, parent, flag=flag)

    def has_eval_switch(self) -> bool:
        return any(s.to_eval for s in self.switches())

    def eval_models_in(self, scope: cst.CSTNode) -> set[str]:
        return {
            s.model for s in self.switches() if s.to_eval and self.index.scope_of(s.anchor) is scope
        }

    def _scope_switches(self, scope: cst.CSTNode, model: str) -> list[ModeSwitch]:
        key = (scope, model)
        found = self._by_scope.get(key)
        if found is None:
            found = [
                s
                for s in self.switches()
                if s.model == model and self.index.scope_of(s.anchor) is scope
            ]
            self._by_scope[key] = found
        return found

    def eval_switch_at(self, model: str, use: cst.CSTNode) -> ModeSwitch | None:
        """The switch that puts `model` in eval mode at `use`, when every switch of it in
        the use's scope that can reach the use is an eval switch; else None (training
        mode, unknown, or both possible)."""
        scope = self.index.scope_of(use)
        switches = self._scope_switches(scope, model)
        element = every_element_path(model)
        if element is not None and not self._element_stored(model, scope):
            # `models["G"]` after `for m in models.values(): m.eval()`: every element
            switches = switches + self._scope_switches(scope, element)
        if not switches:
            return self._closure_eval_switch(model, scope) or self._global_eval_switch(model, scope)
        return self._decide(switches, use)

    def _element_stored(self, model: str, scope: cst.CSTNode) -> bool:
        """Does the scope store into the element `model` names, or read it into a name
        (`nets["G"] = Net()`, `g = nets["G"]`, which may then be switched on its own)?
        A switch of every element then says nothing of it."""
        for node in self.index.of_types_in(scope, cst.Subscript, into_functions=False):
            if module_path(node) != model:
                continue
            above = self.index.parent.get(node)
            if type(above) in (cst.AssignTarget, cst.AugAssign, cst.Assign, cst.Del):
                return True
        return False

    def _closure_eval_switch(self, model: str, scope: cst.CSTNode) -> ModeSwitch | None:
        """A nested function reading its enclosing function's model runs where it is
        called (pytorch-wgan's `get_pred(x)` inside `inception_score`, after
        `inception_model.eval()`): the model is in eval mode there when every call of
        it in the enclosing function (one at least) is; a lambda, where it is made."""
        index = self.index
        if type(scope) not in (cst.FunctionDef, cst.Lambda) or self.summaries is None:
            return None
        outer = index.scope_of(scope)
        if type(outer) is not cst.FunctionDef:
            return None
        root = model.split(".")[0].split("[")[0]
        if self.bindings is not None and self.bindings.binds(scope, root):
            return None  # its own name, not the enclosing function's model
        sites: list[cst.CSTNode]
        if not isinstance(scope, cst.FunctionDef):
            # a lambda, made to be handed on and run there: the mode where it is made
            sites = [scope]
        else:
            sites = [
                c for c in self.summaries.callees.callers_of(scope) if index.scope_of(c) is outer
            ]
        found = [self.eval_switch_at(model, site) for site in sites]
        if not found or any(f is None for f in found):
            return None
        return found[-1]

    def _eval_at(self, model: str, use: cst.CSTNode, direct: list[ModeSwitch]):
        scope = self.index.scope_of(use)
        switches = [
            s for s in direct if s.model == model and self.index.scope_of(s.anchor) is scope
        ]
        return self._decide(switches, use) if switches else None

    def _decide(self, switches: list[ModeSwitch], use: cst.CSTNode) -> ModeSwitch | None:
        anchors = [s.anchor for s in switches]
        rebinds = self._rebindings(switches[0].model, use, set(anchors))
        reaching = self.index.reaching(anchors + rebinds, use)
        if not reaching or any(node in rebinds for node in reaching):
            return None  # `model = {...}` after the switch: a new object, mode unknown
        chosen = [s for s in switches if s.anchor in reaching]
        # a manager's switch holds inside its block only: after it, the mode it restored
        if all(
            s.to_eval and (s.within is None or self.index.is_inside(use, s.within.body))
            for s in chosen
        ):
            return chosen[-1]
        return None

    def _rebindings(
        self, model: str, use: cst.CSTNode, anchors: set[cst.CSTNode]
    ) -> list[cst.CSTNode]:
        """The statements of the use's scope that bind the variable the model's path
        starts from (`model` of `model['f_base_net']`) after a switch of it, other than
        a switch's own (`m = Net().eval()`). The binding that made the model, before any
        switch, is no rebinding: it reaches a use after a loop only along the path that
        never entered the loop (`model = Net()`, `for epoch ...: model.train() ...
        model.eval()`, then a test loop), which says nothing against the eval mode the
        loop leaves."""
        if self.bindings is None:
            return []
        scope = self.index.scope_of(use)
        found = self.bindings.nodes(scope, MODEL_REBINDINGS).get(path_root(model), [])
        switches = list(anchors)
        return [
            node
            for node in found
            if node not in anchors
            and not same_module_again(node, path_root(model))
            and self.index.reaching(switches, node)
        ]

    def _global_eval_switch(self, model: str, scope: cst.CSTNode) -> ModeSwitch | None:
        """A function that reads a module-level model it never switches (a web route's
        handler, a callback): it runs after the module's code, so the model is in eval
        mode there when every switch of it in the file is an eval switch at module
        level."""
        if scope is self.index.module or "." in model or "[" in model:
            return None
        everywhere = [s for s in self.switches() if s.model == model]
        if not everywhere or not all(
            s.to_eval and self.index.scope_of(s.anchor) is self.index.module for s in everywhere
        ):
            return None
        return everywhere[-1]


def _not_an_instance_method(method: cst.FunctionDef) -> bool:
    """`@staticmethod` / `@classmethod`: the first parameter is not the object."""
    return any(
        type(d.decorator) is cst.Name and d.decorator.value in ("staticmethod", "classmethod")
        for d in method.decorators
    )


def _managed_arguments(call: cst.Call, manager: ModeManager) -> list[str]:
    """The dotted names of the call's arguments the manager switches to eval mode, in
    the call's order (analysis.arguments binds them; `eval_mode(*nets)` hides which is
    which)."""
    signature = Signature(positional=tuple(manager.params))  # `self` left out already
    shape = shape_of(call)
    indices: set[int] = set()
    for param in manager.to_eval:
        if param == manager.vararg:
            indices.update(collected(shape, len(manager.params)))
            continue
        bound = signature.bind(shape, param, receiver_passed=False)
        if bound is not None and bound.index is not None:
            indices.add(bound.index)
    names = [dotted_name(call.args[i].value) for i in sorted(indices)]
    return [name for name in names if name is not None]


def walked_container(
    target: cst.BaseExpression, iterable: cst.BaseExpression, receiver: str
) -> cst.BaseExpression | None:
    """The container whose elements the loop variable `receiver` takes in turn: `nets`
    of `for net in nets`, `for net in nets.values()`, `for name, net in nets.items()`
    and `for i, net in enumerate(nets)`; `iterable` itself for a plain name target (a
    literal list or tuple among them). None for any other loop."""
    if type(target) is cst.Name:
        if target.value != receiver:
            return None
        return _dict_walked(iterable, "values") or iterable
    if type(target) is not cst.Tuple or len(target.elements) != 2:
        return None
    value = target.elements[1].value
    if type(value) is not cst.Name or value.value != receiver:
        return None
    if (
        type(iterable) is cst.Call
        and dotted_name(iterable.func) == "enumerate"
        and iterable.args
        and iterable.args[0].keyword is None
        and not iterable.args[0].star
    ):
        return iterable.args[0].value
    return _dict_walked(iterable, "items")


def _dict_walked(iterable: cst.BaseExpression, method: str) -> cst.BaseExpression | None:
    """`nets` of `nets.values()` (or `nets.items()`, with `method`); else None."""
    if (
        type(iterable) is cst.Call
        and not iterable.args
        and type(iterable.func) is cst.Attribute
        and iterable.func.attr.value == method
    ):
        return iterable.func.value
    return None


def among_switched(model: str | None, models: set[str]) -> bool:
    """Is `model` one of the paths a scope switches (`eval_models_in`), or an element by
    a constant key of a container whose every element it switches (`nets["G"]` after
    `for m in nets.values(): m.eval()`)?"""
    return model is not None and (model in models or every_element_path(model) in models)
