"""What the callers of a function pass for one of its parameters
(analysis.caller_arguments): at its call sites in the linted file, and the one
translation of a helper's paths into its caller's."""

from __future__ import annotations

import libcst as cst
import pytest

from gradlint.analysis.caller_arguments import path_in_caller
from gradlint.analysis.facts import FileFacts

SOURCE = """
def evaluate(model, loader, train=False, *rest):
    pass


class Runner:
    def switch(self, net):
        self.head.eval()

    def run(self, other):
        self.switch(self.nets[0])
        other.switch(self.body)


def main(nets, args):
    evaluate(nets[0].encoder, loader)
    evaluate(model=net, loader=loader, train=True)
    evaluate(*args)
    evaluate(build(), loader)
"""


def _facts() -> FileFacts:
    return FileFacts(cst.parse_module(SOURCE))


def _function(facts: FileFacts, name: str) -> cst.FunctionDef:
    return next(f for f in facts.index.functions if f.name.value == name)


def _source(node: cst.CSTNode | None) -> str | None:
    return None if node is None else cst.Module([]).code_for_node(node)


def test_what_each_call_in_the_file_binds_a_parameter_to():
    facts = _facts()
    evaluate = _function(facts, "evaluate")
    model = [
        (_source(a.value), a.default, a.path)
        for a in facts.caller_arguments.here(evaluate, "model")
    ]
    assert model == [
        ("nets[0].encoder", False, "nets[0].encoder"),
        ("net", False, "net"),
        (None, False, None),  # `*args` may hold it: out of sight
        ("build()", False, None),  # a value built for the call: no caller's path
    ]
    train = [(_source(a.value), a.default) for a in facts.caller_arguments.here(evaluate, "train")]
    assert train[0] == ("False", True)  # omitted: the default binds it
    assert train[1] == ("True", False)


@pytest.mark.parametrize(
    ("function", "call", "path", "expected"),
    [
        ("evaluate", "evaluate(nets[0].encoder, loader)", "model", "nets[0].encoder"),
        ("evaluate", "evaluate(nets[0].encoder, loader)", "model.fc", "nets[0].encoder.fc"),
        ("evaluate", "evaluate(nets[0].encoder, loader)", "train", None),  # a default
        ("evaluate", "evaluate(build(), loader)", "model", None),
        ("evaluate", "evaluate(nets[0].encoder, loader)", "rest", None),  # `*rest`
        ("switch", "self.switch(self.nets[0])", "net", "self.nets[0]"),
        ("switch", "self.switch(self.nets[0])", "self.head", "self.head"),  # on self
        ("switch", "other.switch(self.body)", "self.head", "other.head"),  # another object: its own
    ],
)
def test_a_helpers_path_as_its_caller_names_it(function, call, path, expected):
    facts = _facts()
    callee = _function(facts, function)
    site = next(c for c in facts.index.calls if _source(c) == call)
    method = facts.index.enclosing_class(callee) is not None
    assert path_in_caller(site, callee, path, method=method) == expected
