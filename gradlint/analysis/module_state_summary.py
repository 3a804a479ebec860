"""What a class of another project file keeps on itself from one forward call to the
next, read with `ast` for the project summaries (ModuleSummary.carried_state), as
module_state.ModuleState reads a class of the linted file: the stored attribute, the
names that carry its value, the detaches that cut it, the reset a forward starts with.
Apart from module_state so that project.py, which summarises every file, imports
nothing of the linted file's analyses."""

from __future__ import annotations

import ast

from gradlint.analysis.imports import ast_dotted_name
from gradlint.analysis.torch_api import (
    DETACHING_ATTRIBUTES,
    DETACHING_HELPER_WORDS,
    DETACHING_METHODS,
    GRAD_DISABLERS,
    PYTHON_VALUE_BUILTINS,
)


def own_method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The method of that name defined in the class's own body."""
    return next(
        (
            item
            for item in cls.body
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name
        ),
        None,
    )


def carried_attributes_of_class(cls: ast.ClassDef) -> list[tuple[str, int]]:
    """(attribute, line) for each attribute the class's own `forward` carries from one
    call to the next, read as ModuleState.carried_attributes reads a class of the
    linted file: what the project summary of another file says of its classes (a
    library's EvolveGCN keeps its evolving weight on itself)."""
    forward = own_method(cls, "forward")
    if forward is None:
        return []
    stores = [
        (node, parts[0], parts[1])
        for node in _ast_walk(forward.body)
        if (parts := _ast_store_parts(node)) is not None
    ]
    stored = sorted(
        {name for _, targets, _ in stores for name in targets if _is_self_attribute(name)}
    )
    found: list[tuple[str, int]] = []
    for attribute in stored:
        if _ast_reset_on_entry(cls, forward, attribute):
            continue
        tainted = {attribute: False}
        carrying: ast.stmt | None = None
        for node, targets, value in stores:
            reads = _ast_reads(value) & tainted.keys()
            if not reads:
                continue
            if _ast_cuts(value):
                for target in targets:
                    tainted.pop(target, None)
                continue
            computed = _ast_computes(value) or any(tainted[r] for r in reads)
            tainted.update(dict.fromkeys(targets, computed))
            if (
                attribute in targets
                and computed
                and carrying is None
                and not _ast_outside_training(forward, node)
            ):
                carrying = node
        if carrying is not None and any(
            isinstance(node, ast.Return)
            and node.value is not None
            and _ast_reads(node.value) & tainted.keys()
            for node in _ast_walk(forward.body)
        ):
            found.append((attribute.split(".", 1)[1], carrying.lineno))
    return found


def _is_self_attribute(name: str) -> bool:
    return name.startswith("self.") and name.count(".") == 1


def _ast_reset_on_entry(
    cls: ast.ClassDef, forward: ast.FunctionDef | ast.AsyncFunctionDef, attribute: str
) -> bool:
    storing = {
        item.name
        for item in cls.body
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
        and item.name != "forward"
        and any(
            isinstance(a, ast.Assign)
            and attribute in _ast_stored(a)
            and (attribute not in _ast_reads(a.value) or _ast_detaches(a.value))
            for a in _ast_walk(item.body)
        )
    }
    for statement in forward.body:
        if isinstance(statement, ast.Assign) and attribute in _ast_stored(statement):
            return attribute not in _ast_reads(statement.value)
        if (
            isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Attribute)
            and ast_dotted_name(statement.value.func.value) == "self"
            and statement.value.func.attr in storing
        ):
            return True
        if attribute in _ast_reads(statement):
            return False
    return False


def _ast_walk(body: list[ast.stmt]):
    """The nodes of a function body, nested functions and classes left out."""
    pending: list[ast.AST] = list(reversed(body))
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        pending.extend(reversed(list(ast.iter_child_nodes(node))))


def _ast_stored(assign: ast.Assign) -> list[str]:
    names: list[str] = []
    pending: list[ast.AST] = list(assign.targets)
    while pending:
        target = pending.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            pending.extend(target.elts)
            continue
        name = ast_dotted_name(target)
        if name is not None:
            names.append(name)
    return names


def _ast_reads(node: ast.AST) -> set[str]:
    return {
        name
        for sub in ast.walk(node)
        if isinstance(sub, (ast.Name, ast.Attribute)) and (name := ast_dotted_name(sub)) is not None
    }


def _ast_store_parts(node: ast.AST) -> tuple[list[str], ast.AST] | None:
    """(the dotted names stored, the value read) of an assignment, an annotated one
    with a value, or an augmented one (which reads its target too)."""
    if isinstance(node, ast.Assign):
        return _ast_stored(node), node.value
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        name = ast_dotted_name(node.target)
        return ([name] if name is not None else []), node.value
    if isinstance(node, ast.AugAssign):
        name = ast_dotted_name(node.target)
        if name is None:
            return None
        return [name], ast.BinOp(node.target, ast.Add(), node.value)
    return None


def _ast_cuts(value: ast.AST) -> bool:
    """module_state.ModuleState._cuts: the value as a whole is detached, not an input
    inside it (`self.rnn(x.detach(), self.h)`)."""
    if isinstance(value, ast.Call):
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in DETACHING_METHODS:
            return True
        if isinstance(func, ast.Name) and func.id in ("tuple", "list") and len(value.args) == 1:
            return _ast_cuts(value.args[0])
        name = ast_dotted_name(func) or ""
        last = name.rsplit(".", 1)[-1].lower()
        return any(word in last for word in DETACHING_HELPER_WORDS)
    if isinstance(value, ast.Attribute):
        return value.attr in DETACHING_ATTRIBUTES
    if isinstance(value, (ast.Tuple, ast.List)):
        return bool(value.elts) and all(_ast_cuts(e) for e in value.elts)
    if isinstance(value, (ast.GeneratorExp, ast.ListComp)):
        return _ast_cuts(value.elt)
    return False


def _ast_outside_training(forward: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.AST) -> bool:
    """Is the store under `with torch.no_grad():`, on the eval-mode branch of an `if`
    on `self.training`, or after `if self.training: return ...`?"""
    parents: dict[ast.AST, ast.AST] = {}
    for parent in ast.walk(forward):
        for child in ast.iter_child_nodes(parent):
            parents[child] = parent
    child = node
    while child is not forward and child in parents:
        parent = parents[child]
        if isinstance(parent, ast.With) and any(
            isinstance(item.context_expr, ast.Call)
            and (ast_dotted_name(item.context_expr.func) or "").rsplit(".", 1)[-1] in GRAD_DISABLERS
            for item in parent.items
        ):
            return True
        if isinstance(parent, ast.If):
            test = parent.test
            negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
            tested = test.operand if isinstance(test, ast.UnaryOp) else test
            if ast_dotted_name(tested) == "self.training" and (child in parent.body) == negated:
                return True
        for _, value in ast.iter_fields(parent):
            if isinstance(value, list) and child in value:
                before = value[: value.index(child)]
                if any(_ast_training_returns(statement) for statement in before):
                    return True
        child = parent
    return False


def _ast_training_returns(statement: ast.AST) -> bool:
    """`if self.training: ... return x` with no `else`: the training call ends there."""
    return (
        isinstance(statement, ast.If)
        and not statement.orelse
        and ast_dotted_name(statement.test) == "self.training"
        and isinstance(statement.body[-1], (ast.Return, ast.Raise))
    )


def _ast_detaches(value: ast.AST) -> bool:
    return any(
        isinstance(node, ast.Attribute)
        and (node.attr in DETACHING_METHODS or node.attr in DETACHING_ATTRIBUTES)
        for node in ast.walk(value)
    )


def _ast_computes(value: ast.AST) -> bool:
    return any(
        isinstance(node, ast.Call)
        and not (isinstance(node.func, ast.Name) and node.func.id in PYTHON_VALUE_BUILTINS)
        for node in ast.walk(value)
    )
