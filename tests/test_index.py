"""The file index's walks: what each root's walk gives, nested scopes left out or not."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from gradlint.analysis.index import (
    FileIndex,
    child_nodes,
    every_element_path,
    loop_element_sources,
    module_path,
    path_root,
)

REPO = Path(__file__).resolve().parent.parent
CASES = sorted(REPO.glob("tests/cases/*.py"))[:6]

NESTED = """
import torch

f = lambda x: (lambda y: y + x)(x)


class A:
    w = [lambda: 1 for _ in range(2)]

    def m(self, x):
        def inner(y):
            class B:
                def n(self):
                    return y
            return B
        return inner(x) + (lambda z: z)(x)


def g(x=lambda: 0):
    return [h for h in range(3) if (lambda: h)()]
"""


def reference_walk(root: cst.CSTNode, into_functions: bool) -> list[cst.CSTNode]:
    """Pre-order, the root included; a nested def, lambda or class is itself walked,
    its inside only with into_functions."""
    out: list[cst.CSTNode] = []
    stack = [root]
    while stack:
        node = stack.pop()
        out.append(node)
        nested = type(node) in (cst.FunctionDef, cst.Lambda, cst.ClassDef)
        if node is not root and nested and not into_functions:
            continue
        stack.extend(reversed(child_nodes(node)))
    return out


@pytest.mark.parametrize("source", [NESTED, *(p.read_text(encoding="utf-8") for p in CASES)])
def test_every_roots_walk_is_its_subtree_less_the_nested_scopes(source):
    # walk() builds each answer from slices of the pre-order list, leaving out the
    # insides of the nested scopes found by position: the same nodes, in the same
    # order, as walking the tree node by node.
    index = FileIndex(cst.parse_module(source))
    for root in index.nodes:
        for into_functions in (False, True):
            found = list(index.walk(root, into_functions=into_functions))
            expected = reference_walk(root, into_functions)
            assert len(found) == len(expected)
            assert all(a is b for a, b in zip(found, expected, strict=True))


@pytest.mark.parametrize("source", [NESTED, *(p.read_text(encoding="utf-8") for p in CASES)])
def test_scopes_and_classes_read_off_the_parent_chain(source):
    # scope_of and enclosing_class climb the parent table themselves: the same answer
    # as the first function-like ancestor (or the module), and the class a def sits in.
    index = FileIndex(cst.parse_module(source))
    for node in index.nodes:
        scope = next(
            (a for a in index.ancestors(node) if type(a) in (cst.FunctionDef, cst.Lambda)),
            index.module,
        )
        assert index.scope_of(node) is scope
    for func in index.functions:
        first = next(
            (a for a in index.ancestors(func) if type(a) in (cst.ClassDef, cst.FunctionDef)),
            None,
        )
        expected = first if type(first) is cst.ClassDef else None
        assert index.enclosing_class(func) is expected
    methods = {f.name.value for f in index.functions if index.enclosing_class(f) is not None}
    if source is NESTED:
        assert methods == {"m", "n"}


@pytest.mark.parametrize(
    ("source", "path"),
    [
        ("model.f_base_net", "model.f_base_net"),
        ('model["f_base_net"]', "model['f_base_net']"),
        ("model['f_base_net']", "model['f_base_net']"),
        ("nets[0]", "nets[0]"),
        ('self.nets["G"].enc', "self.nets['G'].enc"),
        ("nets[key]", None),
        ("nets[0:2]", None),
        ('d["a", "b"]', None),
        ('nets[f"{k}"]', None),
        ("make()[0]", None),
    ],
)
def test_module_path_spells_constant_subscripts_like_attributes(source, path):
    assert module_path(cst.parse_expression(source)) == path
    if path is not None:
        assert path_root(path) == source.split(".")[0].split("[")[0]


@pytest.mark.parametrize("source", [NESTED, *(p.read_text(encoding="utf-8") for p in CASES)])
def test_the_nodes_of_some_types_are_a_pass_over_every_node(source):
    # of_types replaces the analyses' passes over every node that test each node's
    # type: the same nodes, in the same (source) order; the walk's own lists too
    index = FileIndex(cst.parse_module(source))
    groups = [
        (cst.Call,),
        (cst.For, cst.While),
        (cst.Name, cst.Global, cst.Nonlocal),
        (cst.Attribute, cst.Comparison),
        (cst.Import, cst.ImportFrom),
        (cst.Yield,) if "yield" not in source else (cst.Lambda,),
        tuple(index.node_types()),
    ]
    for types in groups:
        expected = [n for n in index.nodes if type(n) in types]
        found = index.of_types(*types)
        assert len(found) == len(expected)
        assert all(a is b for a, b in zip(found, expected, strict=True))
    assert set(index.node_types()) == {type(n) for n in index.nodes}
    assert index.calls == [n for n in index.nodes if type(n) is cst.Call]
    assert index.loops == [n for n in index.nodes if type(n) in (cst.For, cst.While)]
    assert index.functions == [n for n in index.nodes if type(n) is cst.FunctionDef]
    assert index.classes == [n for n in index.nodes if type(n) is cst.ClassDef]


@pytest.mark.parametrize("source", [NESTED, *(p.read_text(encoding="utf-8") for p in CASES)])
def test_the_walk_finds_every_node_libcsts_own_children_hold(source):
    # _fields leaves out the fields that only ever hold text (`Name.value`, `Arg.star`):
    # every node LibCST's `children` gives, less the trivia, is still walked (in the
    # index's own field order, which puts `Arg.value` before its keyword)
    from gradlint.analysis.index import _kind

    module = cst.parse_module(source)
    expected: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        expected.append(node)
        stack.extend(reversed([c for c in node.children if _kind(type(c)) == 2]))
    found = FileIndex(module).nodes
    assert len(found) == len(expected)
    assert {id(n) for n in found} == {id(n) for n in expected}


@pytest.mark.parametrize("source", [NESTED, *(p.read_text(encoding="utf-8") for p in CASES)])
def test_a_single_binding_before_its_use_reaches_it_as_the_whole_analysis_says(source):
    # reaching answers a name bound once, before the use, without the loop analysis:
    # the same list as the analysis gives for every single binding and use in the file
    from gradlint.analysis.bindings import BindingKind, ScopeBindings

    index = FileIndex(cst.parse_module(source))
    bindings = ScopeBindings(index)
    checked = 0
    for scope in [index.module, *index.functions, *index.of_types(cst.Lambda)]:
        uses = bindings.uses(scope)
        for name, records in bindings.records(scope, frozenset(BindingKind)).items():
            if len(records) != 1:
                continue
            for use in uses.get(name, ()):
                nodes = [records[0].node]
                own = index.comprehension_variable(use)
                if own is not None:  # a comprehension's own variable: its clause only
                    assert index.reaching(nodes, use) == [n for n in nodes if n is own]
                    continue
                outside = index.outside_comprehensions(nodes)
                assert index.reaching(nodes, use) == index._reaching(outside, use)
                checked += 1
    assert checked


# Every kind of field the generated children functions read: decorators, optional
# annotations and defaults, relative-import dots, sequences of mixed element types,
# `match`, `try`/`except*`, f-strings, comprehensions, walrus, star arguments.
MANY_KINDS = """
from ..pkg import (a as b, c)
from . import d
import os.path as osp, sys
@decorate(1)
@other
async def f(x: int = 1, /, y=2, *args: str, z, **kw) -> "T":
    global g
    async with open(x) as h, lock:
        async for i, *j in aiter(y):
            await h.send(i)
    try:
        k = [m for m in range(3) if m if m > 0]
    except* (ValueError, TypeError) as err:
        raise RuntimeError("no") from err
    else:
        pass
    finally:
        del k[0], k[1:2:3]
    match x:
        case {"a": 1, **rest} if rest:
            return f"{x!r:>{y}} {z=}"
        case [1, 2, *others] | (3, *others):
            return others
        case Point(x=0, y=_) as p:
            return p
        case _:
            n = lambda q=1, *r, s=None, **t: (q, *r, {**t})
    return {k: v for k, v in kw.items()}, {e for e in args}, (w := 3), -x if y else ~x
class C(Base, metaclass=Meta):
    attr: int = 0
    def method(self):
        nonlocal_free = 1
        assert self.attr, "msg"
        self.attr += 1
        return not self.attr and x[..., None] or b"bytes" b"more"
"""


@pytest.mark.parametrize("source", [MANY_KINDS, NESTED])
def test_the_walk_reads_each_nodes_children_and_parents_as_child_nodes_does(source):
    # _walk takes each node's children from a function generated for its type, which
    # reads a field annotated to hold only nodes that matter without testing its value
    index = FileIndex(cst.parse_module(source))
    expected = reference_walk(index.module, into_functions=True)
    assert len(index.nodes) == len(expected)
    assert all(a is b for a, b in zip(index.nodes, expected, strict=True))
    for node in index.nodes:
        for child in child_nodes(node):
            assert index.parent[child] is node
    assert len(index.parent) == len(index.nodes) - 1


@pytest.mark.parametrize(
    "source", [MANY_KINDS, NESTED, *(p.read_text(encoding="utf-8") for p in CASES)]
)
def test_the_nodes_of_some_types_under_a_root_are_its_whole_walk_filtered(source):
    # of_types_in replaces walks that test each node's type, into nested scopes or
    # not (nested defs, lambdas and classes in one another: NESTED)
    from gradlint.analysis.bindings import _BINDING_NODE_TYPES

    index = FileIndex(cst.parse_module(source))
    groups = [
        (cst.Call,),
        (cst.Assign, cst.Call),
        (cst.FunctionDef,),
        (cst.Call, cst.Assign, cst.AugAssign),
        (cst.Lambda, cst.ClassDef, cst.Name),
        tuple(_BINDING_NODE_TYPES),
    ]
    for root in index.nodes:
        for into_functions in (True, False):
            whole = list(index.walk(root, into_functions=into_functions))
            for types in groups:
                found = index.of_types_in(root, *types, into_functions=into_functions)
                expected = [n for n in whole if type(n) in types]
                assert len(found) == len(expected)
                assert all(a is b for a, b in zip(found, expected, strict=True))
    built = cst.parse_statement("x = f(y)\n")  # a node the index has not seen
    assert index.of_types_in(built, cst.Call) == [
        n for n in index.walk(built, into_functions=True) if type(n) is cst.Call
    ]


def test_the_order_and_parent_tables_answer_by_node_identity():
    # they are stored by id (LibCST's node hash is a Python call): a node is found only
    # as itself, and a copy that deep-equals an indexed node, or one built by a fix,
    # is not, as with the dicts keyed by node they replace
    index = FileIndex(cst.parse_module(NESTED))
    for position, node in enumerate(index.nodes):
        assert index.order[node] == position
        assert index.order.get(node) == position
        assert node in index.order
    assert index.module not in index.parent
    assert index.parent.get(index.module) is None
    call = index.calls[0]
    copy = call.deep_clone()
    assert copy.deep_equals(call)
    for table in (index.order, index.parent):
        assert copy not in table
        assert table.get(copy) is None
        assert table.get(copy, -1) == -1
        with pytest.raises(KeyError):
            table[copy]
    assert index.parent[call.func] is call
    assert index.scope_of(copy) is index.module  # not indexed: no parent chain


def test_the_classes_tested_by_exact_type_have_no_subclasses():
    # the analyses test `type(node) is cst.Name` or `type(node) in (...)` in their hot
    # loops instead of isinstance (a failing isinstance on LibCST's ABCs runs ABCMeta's
    # check in Python): the same answer only while no class below derives from these
    from gradlint.analysis.dataflow import ELEMENTWISE_COMPARISONS

    exact = [
        cst.Name, cst.Attribute, cst.Call, cst.Arg, cst.Subscript, cst.Index,
        cst.SubscriptElement, cst.Slice, cst.Element, cst.StarredElement, cst.List,
        cst.Tuple, cst.Set, cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp,
        cst.If, cst.While, cst.For, cst.With, cst.Assign, cst.AnnAssign, cst.AugAssign,
        cst.SimpleStatementLine, cst.IndentedBlock, cst.Module, cst.FunctionDef,
        cst.ClassDef, cst.Lambda, cst.Integer, cst.Float, cst.Imaginary,
        cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
        cst.MatrixMultiply, cst.Return, cst.Yield, cst.Param, cst.Continue, cst.Break,
        cst.Raise, cst.SimpleStatementSuite, *ELEMENTWISE_COMPARISONS,
    ]  # fmt: skip
    assert [cls.__name__ for cls in exact if cls.__subclasses__()] == []


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("for p in model.parameters(): pass", ["model.parameters()"]),
        ("for p in list(model.parameters()): pass", ["model.parameters()"]),
        ("for p in reversed(tuple(ps)): pass", ["ps"]),
        ("for i, p in enumerate(ps, start=1): pass", [None, "ps"]),
        (
            "for t, p in zip(a.parameters(), list(b.parameters())): pass",
            ["a.parameters()", "b.parameters()"],
        ),
        (
            "for i, (n, p) in enumerate(m.named_parameters()): pass",
            [None, None, "m.named_parameters()"],
        ),
        ("for a, b in zip(xs, ys, zs): pass", [None, "zip(xs, ys, zs)"]),
        ("for p in sorted(ps): pass", ["sorted(ps)"]),
    ],
)
def test_loop_element_sources_reads_each_name_off_its_own_iterable(header, expected):
    """Each name of a loop's target takes the elements of one iterable: zip's own
    argument, enumerate's after the count, through `list`/`tuple`/`reversed`, which
    walk the same elements; `sorted` is left as it is written."""
    loop = cst.parse_module(header).body[0]
    assert isinstance(loop, cst.For)
    sources = loop_element_sources(loop.target, loop.iter)
    written = [None if s is None else cst.Module([]).code_for_node(s) for s in sources]
    assert written == expected


def test_what_a_loop_walks_in_turn():
    source = (
        "import itertools\n"
        "for p in list(G.parameters()) + list(D.parameters()):\n    pass\n"
        "for p in itertools.chain(E.parameters(), F.parameters(), [w]):\n    pass\n"
        "for p in H.parameters():\n    pass\n"
    )
    index = FileIndex(cst.parse_module(source))
    loops = [n for n in index.nodes if type(n) is cst.For]
    code = cst.Module([]).code_for_node
    assert [code(p) for p in index.walked_in_turn(loops[0].iter)] == [
        "G.parameters()",
        "D.parameters()",
    ]
    assert [code(p) for p in index.walked_in_turn(loops[1].iter)] == [
        "E.parameters()",
        "F.parameters()",
        "[w]",
    ]
    assert [code(p) for p in index.walked_in_turn(loops[2].iter)] == ["H.parameters()"]


# Reaching definitions across the arms of an `if`: a binding in one arm does not reach a
# use in another (except round a loop), and an `if` whose every arm rebinds the name
# kills what was bound before it. `# <- N` marks a use and the lines of the bindings
# that reach it.
ARMS = """
x = 1
if a:
    x = 2
else:
    x = 3
print(x)  # <- 4 6
y = 1
for i in range(3):
    print(y)  # <- 8 12 14
    if c:
        y = 2
    else:
        y = 3
    print(y)  # <- 12 14
def f(cuda):
    out = net(1)
    if cuda:
        out = out.cpu()
        print(out)  # <- 19
    else:
        print(out)  # <- 17
        out = out.numpy()
    return out  # <- 19 23
def g():
    z = 1
    if a:
        z = 2
    print(z)  # <- 26 28
    with torch.no_grad():
        z = 3
    print(z)  # <- 31
def h(items):
    w = 0
    for item in items:
        if item:
            print(w)  # <- 34 39
        else:
            w = 1
    return w  # <- 34 39
def k():
    v = 1
    if a:
        v = 2
    elif b:
        v = 3
    print(v)  # <- 42 44 46
    if a:
        v = 4
    elif b:
        return
    else:
        raise ValueError
    print(v)  # <- 49
def m(items):
    a = 0
    for item in items:
        if item:
            a = net(1)
            a = a.numpy()
        else:
            print(a)  # <- 56 60
"""


def test_bindings_in_the_arms_of_an_if_reach_uses_as_control_can_flow():
    from gradlint.analysis.bindings import BindingKind, ScopeBindings

    module = cst.parse_module(ARMS)
    index = FileIndex(module)
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    lines = wrapper.resolve(cst.metadata.PositionProvider)
    bindings = ScopeBindings(index)
    expected = {
        n: [int(x) for x in line.split("# <- ")[1].split()]
        for n, line in enumerate(ARMS.splitlines(), start=1)
        if "# <- " in line
    }
    seen = {}
    for scope in [index.module, *index.functions]:
        records = bindings.records(scope, frozenset(BindingKind))
        for name, uses in bindings.uses(scope).items():
            if name not in records:
                continue
            nodes = [r.node for r in records[name]]
            for use in uses:
                line = lines[use].start.line
                if line in expected and type(index.parent.get(use)) is cst.Arg:
                    seen[line] = sorted(lines[n].start.line for n in index.reaching(nodes, use))
                elif line in expected and type(index.parent.get(use)) is cst.Return:
                    seen[line] = sorted(lines[n].start.line for n in index.reaching(nodes, use))
    assert seen == expected


@pytest.mark.parametrize(
    ("path", "every"),
    [
        ("nets[0]", "nets[]"),
        ("self.nets['G']", "self.nets[]"),
        ("models['a[0]']", "models[]"),  # a bracket inside the key is the key's
        ("nets[0][1]", "nets[0][]"),
        ("nets[0].enc", None),  # a layer of the element, not an element
        ("nets", None),
    ],
)
def test_every_element_path(path, every):
    assert every_element_path(path) == every
