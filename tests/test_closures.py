"""A name a nested function reads without binding it is its enclosing function's (Python's
LEGB rule), for the value model and the tensor facts alike (issue "Generalise": d2l's
`def eval_loss(): return loss(net(features, w, b), labels).mean()` inside the training
function that makes `w` and `b` require grad)."""

from __future__ import annotations

import textwrap

import libcst as cst

from gradlint.analysis.facts import FileFacts
from gradlint.analysis.tensors import LEAF
from gradlint.config import Config
from gradlint.engine import lint_source

TRAIN = """
    import torch
    import d2l


    def train(features, labels, num_epochs=2):
        net, loss = d2l.linreg, d2l.squared_loss
        w = torch.zeros((features.shape[1], 1), requires_grad=True)
        b = torch.zeros((1,), requires_grad=True)

        def eval_loss():
            return loss(net(features, w, b), labels).mean()

        ls = [eval_loss()]
        for _ in range(num_epochs):
            for X, y in zip(features, labels):
                l = loss(torch.mm(X, w) + b, y).mean()
                l.backward()
                with torch.no_grad():
                    w -= 0.1 * w.grad
                    b -= 0.1 * b.grad
                w.grad.zero_()
                b.grad.zero_()
                ls.append(eval_loss())
        return ls
    """


def _facts(source: str) -> FileFacts:
    return FileFacts(cst.parse_module(textwrap.dedent(source)))


def _read_in_closure(facts: FileFacts, name: str) -> cst.Name:
    closure = next(
        n for n in facts.index.nodes if type(n) is cst.FunctionDef and n.name.value == "eval_loss"
    )
    return next(
        n for n in facts.index.walk(closure.body) if type(n) is cst.Name and n.value == name
    )


def test_a_closure_s_variable_is_bound_in_the_enclosing_function():
    facts = _facts(TRAIN)
    w = _read_in_closure(facts, "w")
    assert [type(b) for b in facts.values.bindings_of("w", w)] == [cst.Assign, cst.AugAssign]
    assert facts.tensors.kind_of_name("w", w) == LEAF


def test_a_name_the_nested_function_binds_is_its_own():
    shadowed = TRAIN.replace(
        "def eval_loss():\n            return",
        "def eval_loss():\n            w = torch.zeros(3)\n            return",
    )
    facts = _facts(shadowed)
    closure_w = [
        n
        for n in facts.index.nodes
        if type(n) is cst.Name
        and n.value == "w"
        and facts.index.scope_of(n).name.value == "eval_loss"
    ][-1]
    assert facts.tensors.kind_of_name("w", closure_w) != LEAF


def test_the_closure_s_loss_kept_across_the_training_loop_is_reported():
    found = lint_source(textwrap.dedent(TRAIN), "t.py", Config(preview=True))
    assert [(d.code, d.start.line) for d in found] == [("GL006", 24)]
    assert "activations stay alive" in found[0].message


TIMED = """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)


    def test_forward_time():
        model = Net()
        x = torch.rand(8, 4)

        def get_time():
            out = model(x)
            return 1.0

        durations = [get_time() for _ in range(5)]
        assert durations
"""


def test_a_model_built_around_a_nested_function_is_its_model():
    # `model` is the enclosing test's `Net()`: the nested function runs its forward
    found = [
        (d.code, d.start.line)
        for d in lint_source(textwrap.dedent(TIMED), "t.py", Config(preview=True))
    ]
    assert found == [("GL012", 20)]
