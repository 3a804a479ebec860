"""Which argument of a call binds a parameter (analysis.arguments): Python's binding
rules at their edges, the same for the linted file's functions (LibCST), the project's
other files (`ast`) and library calls, and the analyses that read it."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from gradlint.analysis.arguments import (
    argument_of,
    ast_signature,
    bound_at,
    library_argument,
    signature_of,
)

DEFAULT = "<default>"

# (definition, call, parameter, what binds it: the argument's source, DEFAULT for the
# parameter's default, None for nothing in sight). A definition indented under
# `class C:` is a method; `on_class` calls (`C.m(obj, x)`) say so after `|`.
CASES = [
    # positional and keyword
    ("def f(a, b): ...", "f(x, y)", "b", "y"),
    ("def f(a, b): ...", "f(x, b=y)", "b", "y"),
    ("def f(a, b): ...", "f(b=y, a=x)", "a", "x"),
    ("def f(a, b): ...", "f(x)", "b", None),  # missing: a TypeError, nothing binds it
    ("def f(a, b): ...", "f(x, y)", "c", None),  # no such parameter
    # defaults
    ("def f(a, b=1): ...", "f(x)", "b", DEFAULT),
    ("def f(a, b=1): ...", "f(x, y)", "b", "y"),
    ("def f(a, *, b=2): ...", "f(x)", "b", DEFAULT),
    # star arguments: what they bind is out of sight, what comes before them is not
    ("def f(a, b=1): ...", "f(*xs)", "a", None),
    ("def f(a, b=1): ...", "f(x, *rest)", "a", "x"),
    ("def f(a, b=1): ...", "f(x, *rest)", "b", None),
    ("def f(a, b=1): ...", "f(*xs, b=y)", "b", "y"),
    ("def f(a, b=1): ...", "f(x, **kw)", "b", None),
    ("def f(a, b=1): ...", "f(x, **kw)", "a", "x"),
    ("def f(a, b=1): ...", "f(b=y, **kw)", "b", "y"),
    # keyword-only parameters: a `*args` of the call never binds one
    ("def f(a, *, b): ...", "f(x, b=y)", "b", "y"),
    ("def f(a, *, b=2): ...", "f(x, *rest)", "b", DEFAULT),
    ("def f(a, *, b=2): ...", "f(x, **kw)", "b", None),
    ("def f(a, *args, b): ...", "f(x, y, b=z)", "b", "z"),
    ("def f(a, *args, b=2): ...", "f(x, y)", "b", DEFAULT),  # `y` goes to *args
    ("def f(a, *args, b=2): ...", "f(x, y)", "args", None),  # a container, not one
    # positional-only parameters: a keyword of that name goes to **kwargs
    ("def f(a, /, b): ...", "f(x, y)", "a", "x"),
    ("def f(a, /, b, **kw): ...", "f(b=y, a=x)", "a", None),
    ("def f(a=0, /, **kw): ...", "f(a=x)", "a", DEFAULT),
    # a function called by its name binds no receiver, whatever its first parameter
    ("def f(self, a): ...", "f(x, y)", "a", "y"),
    # methods: the call through an attribute binds the receiver
    ("class C:\n    def m(self, a): ...", "self.m(x)", "a", "x"),
    ("class C:\n    def m(self, a): ...", "obj.m(x)", "a", "x"),
    ("class C:\n    def m(self, a): ...", "super().m(x)", "a", "x"),
    ("class C:\n    def m(self, a): ...", "obj.m(x)", "self", None),
    ("class C:\n    def m(this, a): ...", "obj.m(x)", "a", "x"),  # any name
    # ... but not when it is made on the class
    ("class C:\n    def m(self, a): ...", "cls.m(obj, x)", "a", "x"),
    ("class C:\n    def m(self, a): ...", "C.m(obj, x)|on_class", "a", "x"),
    ("class C:\n    def m(self, a): ...", "C.m(obj, x)|on_class", "self", "obj"),
    # a classmethod binds `cls` through its class or an instance
    ("class C:\n    @classmethod\n    def c(cls, a): ...", "cls.c(x)", "a", "x"),
    ("class C:\n    @classmethod\n    def c(cls, a): ...", "C.c(x)|on_class", "a", "x"),
    ("class C:\n    @classmethod\n    def c(cls, a): ...", "self.c(x)", "a", "x"),
    # a staticmethod binds none
    ("class C:\n    @staticmethod\n    def s(a, b): ...", "self.s(x, y)", "a", "x"),
    ("class C:\n    @staticmethod\n    def s(a, b): ...", "C.s(x, y)|on_class", "b", "y"),
]


def _definition(source: str) -> tuple[cst.FunctionDef, ast.FunctionDef, bool]:
    module = cst.parse_module(source)
    tree = ast.parse(source)
    node, syntax = module.body[0], tree.body[0]
    if isinstance(node, cst.ClassDef):
        assert isinstance(syntax, ast.ClassDef)
        method = node.body.body[0]
        assert isinstance(method, cst.FunctionDef)
        ast_method = syntax.body[0]
        assert isinstance(ast_method, ast.FunctionDef)
        return method, ast_method, True
    assert isinstance(node, cst.FunctionDef) and isinstance(syntax, ast.FunctionDef)
    return node, syntax, False


@pytest.mark.parametrize(("definition", "call", "param", "expected"), CASES)
def test_the_argument_that_binds_a_parameter(definition, call, param, expected):
    func, syntax, method = _definition(definition)
    text, _, how = call.partition("|")
    site = cst.parse_expression(text)
    assert isinstance(site, cst.Call)
    signature = signature_of(func, method=method)
    # the other files' summaries read the same signature off `ast`
    assert ast_signature(syntax, method=method) == signature
    found = bound_at(site, signature, param, on_class=how == "on_class")
    if found is None:
        got = None
    elif found.index is None:
        got = DEFAULT
    else:
        got = cst.Module([]).code_for_node(site.args[found.index].value)
    assert got == expected
    passed = argument_of(site, signature, param, on_class=how == "on_class")
    assert (passed is not None) == (expected not in (None, DEFAULT))


@pytest.mark.parametrize(
    ("call", "keyword", "position", "expected"),
    [
        ("F.mse_loss(p, t)", "target", 1, "t"),
        ("F.mse_loss(p, target=t)", "target", 1, "t"),
        ("F.mse_loss(target=t, input=p)", "input", 0, "p"),
        ("F.mse_loss(p)", "target", 1, None),
        ("F.mse_loss(*pair)", "input", 0, None),  # which is which is out of sight
        ("F.mse_loss(*pair, t)", "target", 1, None),
        ("F.mse_loss(p, *rest)", "input", 0, "p"),
        ("opt.step(closure=c)", "closure", None, "c"),
        ("opt.step(c)", "closure", None, None),  # keyword-only asked: no position
    ],
)
def test_the_argument_of_a_library_call(call, keyword, position, expected):
    site = cst.parse_expression(call)
    assert isinstance(site, cst.Call)
    found = library_argument(site, keyword, position)
    got = cst.Module([]).code_for_node(found.value) if found is not None else None
    assert got == expected


# -- the analyses read it ---------------------------------------------------------------


def _facts(source: str, path: str | None = None):
    from gradlint.analysis.facts import FileFacts
    from gradlint.analysis.project import ProjectIndex

    module = cst.parse_module(textwrap.dedent(source))
    project = ProjectIndex(path) if path is not None else None
    return FileFacts(module, None, project) if project is not None else FileFacts(module)


def _call(facts, text: str) -> cst.Call:
    (found,) = [c for c in facts.index.calls if facts.module.code_for_node(c) == text]
    return found


def test_a_keyword_only_parameter_after_star_args_is_bound_by_its_keyword():
    # `model` is keyword-only: the second positional argument goes to *extra
    facts = _facts(
        """
        def evaluate(loader, *extra, model):
            for x in loader:
                model(x)

        evaluate(loader, other, model=net)
        """
    )
    call = _call(facts, "evaluate(loader, other, model=net)")
    (func,) = [f for f in facts.index.functions if f.name.value == "evaluate"]
    argument = facts.summaries.of(func).forwarded_argument(call, "model")
    assert argument is not None and facts.module.code_for_node(argument) == "net"


def test_a_flag_passed_by_keyword_after_star_args_is_known():
    facts = _facts(
        """
        def run_epoch(model, *loaders, train=True):
            if train:
                model.train()

        run_epoch(net, *loaders, train=False)
        """
    )
    call = _call(facts, "run_epoch(net, *loaders, train=False)")
    (func,) = [f for f in facts.index.functions if f.name.value == "run_epoch"]
    value = facts.path_conditions.value_at(call, func, "train")
    assert value is not None and value.constant.text == "False" and not value.default


def test_another_files_keyword_only_parameter_after_star_args(tmp_path: Path):
    # the summary of helpers.py binds `model` by its keyword, not by the position it
    # has among the parameters' names
    (tmp_path / "helpers.py").write_text(
        textwrap.dedent(
            """
            def evaluate(loader, *extra, model):
                outs = []
                for x in loader:
                    outs.append(model(x))
                return outs
            """
        )
    )
    source = "from helpers import evaluate\nevaluate(loader, other, model=net)\n"
    (tmp_path / "train.py").write_text(source)
    facts = _facts(source, str(tmp_path / "train.py"))
    call = _call(facts, "evaluate(loader, other, model=net)")
    passed = facts.forwards.inference_arguments(call)
    assert [facts.module.code_for_node(a) for a in passed] == ["net"]


def test_a_tracker_given_the_loss_by_keyword_keeps_it():
    from gradlint.engine import lint_source

    source = textwrap.dedent(
        """
        import torch.nn.functional as F

        class AverageMeter:
            def __init__(self):
                self.sum = 0

            def update(self, val, n=1):
                self.sum += val

        def tracked(model, batches, opt):
            meter = AverageMeter()
            for x, y in batches:
                loss = F.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                meter.update(n=x.size(0), val=loss)
        """
    )
    found = [(d.code, d.start.line) for d in lint_source(source, "train.py")]
    assert found == [("GL006", 18)]
    # the count alone is kept: no loss in the tracker
    plain = source.replace("meter.update(n=x.size(0), val=loss)", "meter.update(n=1, val=0.0)")
    assert [d.code for d in lint_source(plain, "train.py")] == []


@pytest.mark.parametrize(
    ("call", "count", "expected"),
    [
        ("eval_mode(a, b, c)", 0, ["a", "b", "c"]),
        ("eval_mode(a, b, c)", 1, ["b", "c"]),
        ("eval_mode(a, *rest, c)", 0, ["a"]),  # from the star on, out of sight
        ("eval_mode(a, b, flag=c)", 1, ["b"]),  # a keyword is never collected
        ("eval_mode(a, b, **kw)", 1, ["b"]),
    ],
)
def test_what_star_args_collects(call, count, expected):
    from gradlint.analysis.arguments import collected, shape_of

    site = cst.parse_expression(call)
    assert isinstance(site, cst.Call)
    got = [
        cst.Module([]).code_for_node(site.args[i].value) for i in collected(shape_of(site), count)
    ]
    assert got == expected


@pytest.mark.parametrize(
    ("definition", "param", "receiver_passed", "expected"),
    [
        ("def f(a, b): ...", "b", False, (1, "b")),
        ("def f(a, /, b): ...", "a", False, (0, None)),  # positional-only: no keyword
        ("def f(a, *, b): ...", "b", False, (None, "b")),  # keyword-only: no position
        ("def f(a): ...", "c", False, (None, None)),
        ("class C:\n    def m(self, a): ...", "a", True, (0, "a")),  # `obj.m(x)`
        ("class C:\n    def m(self, a): ...", "self", True, (None, None)),
        ("class C:\n    def m(self, a): ...", "a", False, (1, "a")),  # `C.m(obj, x)`
    ],
)
def test_where_a_callers_record_can_pass_a_parameter(definition, param, receiver_passed, expected):
    func, _, method = _definition(definition)
    signature = signature_of(func, method=method)
    assert signature.slots(param, receiver_passed=receiver_passed) == expected
