"""What the callers of a function of the linted file pass for one of its parameters.

One fact, asked by every analysis that reads a parameter as what its callers hand in:
the constant a flag gets (`run_epoch(train=False)`, analysis.path_conditions), the
callable a `net` parameter is (`evaluate_accuracy(test_iter, net)`,
analysis.summaries.passed_in), whether a `model` parameter holds parameters
(analysis.forwards), whether it depends on the mode (analysis.mode_dependence), whether
it is in training mode (GL012). Two reaches:

- in this file, each call site (the resolver's callers, or the sites an asker knows
  better, such as the calls of a closure its factory returned) with the expression it
  binds the parameter to, or the parameter's default where it passes none;
- in the project's other files, the calls the caller search finds (ProjectIndex
  .method_calls, for a module-level function or a method), each with what the search
  records of its arguments: the literal keyword arguments, and, asked of the trees it
  just parsed (project.caller_contexts), the arguments that show themselves as modules
  with parameters in the caller's scope.

Which argument binds the parameter is told by analysis.arguments, on both sides. And
what a helper does to what it is handed (switches its mode, runs its forward) is seen
from the call site through one translation of the helper's paths into the caller's,
path_in_caller.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.arguments import passed_or_default, signature_of
from gradlint.analysis.bindings import all_params
from gradlint.analysis.callees import CalleeResolver
from gradlint.analysis.grad_mode import callers_query
from gradlint.analysis.index import FileIndex, module_path, named_like_a_test_file, path_root
from gradlint.analysis.project import MethodCall, MethodQuery, ProjectIndex, caller_contexts


@dataclass(frozen=True)
class ArgumentHere:
    """What one call of the function in this file binds the parameter to."""

    site: cst.Call
    # the argument expression, or the parameter's default; None when that is out of
    # sight (a star argument may bind it) or nothing binds it (a TypeError at run time)
    value: cst.BaseExpression | None
    default: bool = False  # `value` is the parameter's default: the call passes none

    @property
    def passed(self) -> cst.BaseExpression | None:
        """The expression the call itself writes for the parameter (not a default)."""
        return None if self.default else self.value

    @property
    def path(self) -> str | None:
        """The caller's module path the call hands over for the parameter (`model`,
        `self.nets[0]`), as path_in_caller reads it; None for anything else."""
        return module_path(self.passed) if self.passed is not None else None


class CallerArguments:
    """The arguments at a function's call sites, in this file and elsewhere."""

    def __init__(
        self, index: FileIndex, callees: CalleeResolver, project: ProjectIndex | None
    ) -> None:
        self.index = index
        self.callees = callees
        self.project = project

    # -- in this file --------------------------------------------------------------

    def here(
        self,
        func: cst.FunctionDef,
        param: str,
        sites: list[cst.Call] | None = None,
        *,
        constructed: bool = False,
    ) -> list[ArgumentHere]:
        """What each call of `func` in this file binds `param` to: at `sites` when the
        asker knows them, else at the resolver's callers (CalleeResolver.callers_of).
        `constructed`: `func` is a class's `__init__` and `sites` build the class."""
        if sites is None:
            sites = self.callees.callers_of(func)
        method = self.index.enclosing_class(func) is not None
        found = []
        for site in sites:
            bound = passed_or_default(site, func, param, method=method, constructed=constructed)
            if bound is None:
                found.append(ArgumentHere(site, None))
            else:
                found.append(ArgumentHere(site, bound[0], bound[1]))
        return found

    # -- in the project's other files ----------------------------------------------

    def called_elsewhere(self, func: cst.FunctionDef) -> bool:
        """May a file of the project other than this one call `func` (or is that out of
        sight)? False only when the caller search ran and found no call."""
        project = self.project
        if project is None or not project.enabled:
            return False  # one file linted alone (stdin, a notebook): nothing else calls
        found = self._calls_elsewhere(func)
        if found is None:
            return True
        here = os.path.realpath(project.path)
        return any(os.path.realpath(call.path) != here for call in found[1])

    def _calls_elsewhere(self, func: cst.FunctionDef, *, unknown_receivers: bool = False):
        """(the caller search's query, its calls) for `func`; None when no search can
        be made (no project, a nested function, a pytest function of a file pytest
        collects: pytest fills its parameters with fixtures, and no call does) or its
        answer is unknown. With `unknown_receivers`, for a question every call must
        answer the same way: a method's calls on objects whose class cannot be told
        (`logger.log(x, model)` with `logger` a parameter) count as its calls too,
        instead of making the answer unknown."""
        project = self.project
        if project is None or not project.enabled:
            return None
        if self.index.is_pytest_function(func) and named_like_a_test_file(project.path):
            return None
        query = callers_query(self.callees, project, func)
        if query is None:
            return None
        if unknown_receivers:
            return project.method_calls_counting_unknown(query)
        calls = project.method_calls(query)
        return (query, calls) if calls is not None else None

    def literals_elsewhere(self, func: cst.FunctionDef, param: str) -> list[tuple[MethodCall, str]]:
        """(call, source) for each call of `func` in the project's other files that
        passes `param` a literal keyword argument (`train=False`); a call that passes
        anything else says nothing and is left out."""
        found = self._calls_elsewhere(func)
        if found is None:
            return []
        return [
            (call, text)
            for call in found[1]
            if (text := dict(call.keyword_constants).get(param)) is not None
        ]

    def models_elsewhere(
        self, func: cst.FunctionDef, param: str, *, containers: bool = False
    ) -> bool:
        """Is `func` called in the project's other files (once at least), and does every
        one of those calls pass, for `param`, a module that shows its parameters in the
        caller's scope (project.CallerContext.model_arguments: `generate_image(aG, z)`
        after `Adam(aG.parameters())`)? With `containers`, a dict or list of such modules
        instead (CallerContext.model_containers: `evaluate(models, loader)`)."""
        found = self._calls_elsewhere(func, unknown_receivers=True)
        if found is None or not found[1] or self.project is None:
            return False
        contexts = caller_contexts(self.project, found[0])
        if not contexts:
            return False
        method = self.index.enclosing_class(func) is not None
        # the calls found elsewhere are made through an object (`obj.method(...)`)
        position, keyword = signature_of(func, method=method).slots(param, receiver_passed=method)
        return all(
            (position is not None and position in held) or (keyword is not None and keyword in held)
            for c in contexts
            for held in [c.model_containers if containers else c.model_arguments]
        )

    def constructed_only_here(self, cls: cst.ClassDef, init: cst.FunctionDef) -> bool:
        """Is the module-level class built nowhere in the project's other files, as far
        as the caller search can tell (no project: only this file runs)? A class
        another file builds may be handed other arguments there (a `__main__` demo
        here, the real run in main.py)."""
        project = self.project
        if project is None or not project.enabled:
            return True
        if self.index.scope_of(cls) is not self.index.module:
            return False
        here = os.path.realpath(project.path)
        calls = project.method_calls(self._construction_query(cls, init, project))
        return calls is not None and all(os.path.realpath(c.path) == here for c in calls)

    def _construction_query(
        self, cls: cst.ClassDef, init: cst.FunctionDef, project: ProjectIndex
    ) -> MethodQuery:
        """The caller search's question for the constructions of a module-level class:
        the calls of its name, as for a module-level function's."""
        return MethodQuery(
            project.path,
            "",
            cls.name.value,
            "",
            frozenset(),
            frozenset(),
            frozenset(),
            signature=signature_of(init, method=True),
        )

    def models_constructed_elsewhere(
        self, cls: cst.ClassDef, init: cst.FunctionDef, param: str
    ) -> bool:
        """Is the module-level class `cls` built in the project's other files (once at
        least), and does every one of those constructions pass, for its `__init__`'s
        `param`, a module that shows its parameters in the caller's scope (`Agent(net)`
        after `Adam(net.parameters())`)? The search asks for calls of the class's name
        as it asks for a module-level function's. A subclass of another file that hands
        its `__init__`'s arguments up (`super().__init__(QNet())`) is a construction too."""
        project = self.project
        if (
            project is None
            or not project.enabled
            or self.index.scope_of(cls) is not self.index.module
        ):
            return False
        query = self._construction_query(cls, init, project)
        calls = project.method_calls(query)
        if calls is None:
            return False
        assert query.signature is not None
        position, keyword = query.signature.slots(param, receiver_passed=True)

        def hands_a_model(places: frozenset[int | str]) -> bool:
            return (position is not None and position in places) or (
                keyword is not None and keyword in places
            )

        if calls:
            contexts = caller_contexts(project, query)
            if not contexts or not all(hands_a_model(c.model_arguments) for c in contexts):
                return False  # the subclasses' search would not change the answer
        # a subclass of another file hands its model up (`super().__init__(QNet())`):
        # the base class's methods run it
        inherited = project.subclass_init_arguments(cls.name.value) or []
        return bool(calls or inherited) and all(hands_a_model(places) for places in inherited)


def path_in_caller(
    call: cst.Call, callee: cst.FunctionDef, path: str, *, method: bool
) -> str | None:
    """The path, in the caller, of the object `path` names inside `callee`, a function
    of this file that `call` runs: a parameter, or a path under one, is the argument's
    path (`net.encoder` in `set_mode(net)` called as `set_mode(model)` is
    `model.encoder`); `self.<attr>` of a method called on `self` is the caller's own,
    and of a method called on an object the caller names (`agent.sample(s)`) that
    object's (`agent.network`). None when the call hands no object of a path over (a
    default, a built value, a star argument). `method`: `callee` is defined in a class's body. What a helper does
    to what it is handed is seen from the call site through this one translation: the
    mode switches of analysis.train_mode, the mode summaries of analysis.mode_flow,
    the forwards of analysis.forwards."""
    root = path_root(path)
    rest = path[len(root) :]
    if root == "self":
        func = call.func
        if not method or not rest or type(func) is not cst.Attribute:
            return None
        receiver = module_path(func.value)
        return receiver + rest if receiver is not None else None
    params = {p.name.value for p in all_params(callee.params)}
    if root not in params:
        return None
    bound = passed_or_default(call, callee, root, method=method)
    if bound is None or bound[1]:
        return None
    passed = module_path(bound[0])
    return passed + rest if passed is not None else None
