"""The one binding table: what each statement binds, and a region's bindings read off
its scope's table."""

from __future__ import annotations

import libcst as cst

from gradlint.analysis.bindings import (
    BindingKind,
    ScopeBindings,
    assigned_names,
    bindings_of_node,
    bound_names,
)
from gradlint.analysis.index import FileIndex

K = BindingKind

SOURCE = """\
import torch.nn as nn, os.path
from m import a as b, c
x, (y, z) = 1, (2, 3)
p, q = pair
out["loss"] = f(x)
n: int = 3
bare: int
w += 1
for i, (j, k) in enumerate(data):
    losses.append(w)
    w.requires_grad_()
    v.requires_grad_(False)
    if (m := g(i)):
        pass
with ctx() as h, other() as (s, t):
    pass
def fn(a, *args, k=1, **kw):
    inner = 1
    for e in a:
        total = e
        def nested():
            hidden = 2
class C:
    attr = 1
    for cls_loop in range(3):
        cls_bound = cls_loop
squares = [r * r for r in range(3)]
f2 = lambda u, *more: u
"""


def _index():
    return FileIndex(cst.parse_module(SOURCE))


def _by_name(records):
    return [(r.name, r.kind) for r in records]


def test_what_each_statement_binds():
    index = _index()
    table = ScopeBindings(index).of_scope(index.module)
    assert _by_name(table) == [
        ("nn", K.IMPORT),
        ("os", K.IMPORT),
        ("b", K.IMPORT),
        ("c", K.IMPORT),
        ("x", K.UNPACKED),
        ("y", K.UNPACKED),
        ("z", K.UNPACKED),
        ("p", K.UNPACKED),
        ("q", K.UNPACKED),
        ('out["loss"]', K.KEYED),
        ("n", K.ANNOTATED),
        ("w", K.AUGMENTED),
        ("i", K.FOR),
        ("j", K.FOR),
        ("k", K.FOR),
        ("losses", K.STORE),
        ("w", K.REQUIRES_GRAD),
        ("m", K.WALRUS),
        ("h", K.WITH),
        ("s", K.WITH),
        ("t", K.WITH),
        ("fn", K.DEF),
        ("C", K.CLASS),
        ("squares", K.ASSIGN),
        ("r", K.COMPREHENSION),
        ("f2", K.ASSIGN),
    ]
    by_name = {r.name: r for r in table}
    # paired element-wise where the value is a tuple too, else the whole value, unpacked
    assert cst.Module([]).code_for_node(by_name["z"].value) == "3" and by_name["z"].whole
    assert not by_name["q"].whole and cst.ensure_type(by_name["q"].value, cst.Name).value == "pair"
    assert [r.position for r in table if r.kind is K.FOR] == [0, 1, 2]


def test_a_function_scope_has_its_parameters_first_and_not_its_nested_scopes():
    index = _index()
    fn = next(f for f in index.functions if f.name.value == "fn")
    records = ScopeBindings(index).of_scope(fn)
    assert _by_name(records) == [
        ("a", K.PARAM),
        ("args", K.PARAM),
        ("k", K.PARAM),
        ("kw", K.PARAM),
        ("inner", K.ASSIGN),
        ("e", K.FOR),
        ("total", K.ASSIGN),
        ("nested", K.DEF),
    ]
    lam = next(n for n in index.nodes if type(n) is cst.Lambda)
    assert _by_name(ScopeBindings(index).of_scope(lam)) == [
        ("u", K.LAMBDA_PARAM),
        ("more", K.LAMBDA_PARAM),
    ]


def test_a_regions_bindings_are_its_share_of_the_scope_table():
    index = _index()
    bindings = ScopeBindings(index)
    module_loop, fn_loop, class_loop = index.loops
    assert _by_name(bindings.in_region(module_loop.body)) == [
        ("losses", K.STORE),
        ("w", K.REQUIRES_GRAD),
        ("m", K.WALRUS),
    ]
    assert _by_name(bindings.in_region(fn_loop.body)) == [("total", K.ASSIGN), ("nested", K.DEF)]
    # a class body is in no scope's table: its loop is read on its own
    assert _by_name(bindings.in_region(class_loop.body)) == [("cls_bound", K.ASSIGN)]


def test_statement_helpers():
    module = cst.parse_module("a, b = f()\nfor i in x: pass\nx: int\nc += 1\n")
    assign, loop, bare, aug = (
        module.body[0].body[0],  # type: ignore[attr-defined]
        module.body[1],
        module.body[2].body[0],  # type: ignore[attr-defined]
        module.body[3].body[0],  # type: ignore[attr-defined]
    )
    assert assigned_names(assign) == ["a", "b"] and bound_names(assign) == ["a", "b"]
    assert assigned_names(loop) == [] and bound_names(loop) == ["i"]
    assert assigned_names(bare) == [] and bindings_of_node(bare) == []
    assert assigned_names(aug) == ["c"]


def test_an_item_assignment_stores_into_its_container_and_a_string_key_is_a_variable():
    module = cst.parse_module('out[:, k] = state\nself.grid[0] = x\nlogs["loss"] = v\n')
    found = [(b.name, b.kind) for stmt in module.body for b in bindings_of_node(stmt.body[0])]
    assert found == [
        ("out", BindingKind.ITEM),
        ("self.grid", BindingKind.ITEM),
        ('logs["loss"]', BindingKind.KEYED),
    ]


def test_a_scopes_tables_are_its_own_when_asked_of_nodes_the_index_has_not_seen():
    # the tables are keyed by id(scope): a scope asked about is kept alive with them,
    # so a later scope cannot take its id and be answered with its bindings
    bindings = ScopeBindings(FileIndex(cst.parse_module("x = 1\n")))
    for round_ in range(50):
        built = cst.parse_statement(f"def f(a):\n    v{round_} = a\n    return v{round_}\n")
        assert [r.name for r in bindings.of_scope(built)] == ["a", f"v{round_}"]
        assert list(bindings.uses(built)) == ["a", f"v{round_}"]
        del built


def test_a_scope_binds_its_parameters_assignments_and_attributes_not_its_inner_ones():
    source = (
        "def outer(model, x):\n"
        "    self.G = make()\n"
        "    for batch in x:\n"
        "        pass\n"
        "    def inner(y):\n"
        "        z = model(y)\n"
        "        return z\n"
        "    f = lambda w: model(w)\n"
    )
    index = FileIndex(cst.parse_module(source))
    bindings = ScopeBindings(index)
    outer = next(n for n in index.nodes if type(n) is cst.FunctionDef and n.name.value == "outer")
    inner = next(n for n in index.nodes if type(n) is cst.FunctionDef and n.name.value == "inner")
    lam = next(n for n in index.nodes if type(n) is cst.Lambda)
    assert all(bindings.binds(outer, n) for n in ("model", "x", "self.G", "batch", "inner", "f"))
    assert not bindings.binds(outer, "z") and not bindings.binds(outer, "y")
    assert bindings.binds(inner, "z") and bindings.binds(inner, "y")
    assert not bindings.binds(inner, "model")
    assert bindings.binds(lam, "w") and not bindings.binds(lam, "model")


def test_a_keyword_arguments_name_is_no_read_of_the_variable_it_spells():
    source = (
        "def act(policy, obs):\n"
        "    logits = policy(obs)\n"
        "    action = Categorical(logits=logits).sample()\n"
        "    return dict(action=action.item(), obs=3)\n"
    )
    index = FileIndex(cst.parse_module(source))
    act = next(n for n in index.nodes if type(n) is cst.FunctionDef)
    uses = ScopeBindings(index).uses(act)
    # each variable is read once, as the argument's value; `obs=3` reads nothing
    assert len(uses["logits"]) == 1 and index.parent[uses["logits"][0]].keyword is not None
    assert len(uses["action"]) == 1
    assert len(uses["obs"]) == 1 and type(index.parent[uses["obs"][0]]) is cst.Arg
