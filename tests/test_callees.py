"""The one callee resolver: which function of the file a call runs."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from gradlint.analysis.callees import CalleeResolver
from gradlint.analysis.index import FileIndex
from gradlint.engine import lint_source

LEARNER = """
    import torch
    from torch import nn


    class Learner(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(4))

        def step(self, lr):
            with torch.no_grad():
                self.w -= lr * self.w.grad


    class Other:
        def step(self, lr):
            return lr
"""


def _resolved(main: str) -> str | None:
    module = cst.parse_module(textwrap.dedent(LEARNER) + textwrap.dedent(main))
    index = FileIndex(module)
    resolver = CalleeResolver(index)
    (call,) = [
        n
        for n in index.walk(module, into_functions=True)
        if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "step"
    ]
    func = resolver.resolve(call)
    if func is None:
        return None
    cls = index.enclosing_class(func)
    return f"{cls.name.value}.{func.name.value}" if cls is not None else func.name.value


@pytest.mark.parametrize(
    ("main", "expected"),
    [
        ("def main():\n    m = Learner()\n    m.step(0.1)\n", "Learner.step"),
        ("def main(d):\n    m = Learner().to(d)\n    m.step(0.1)\n", "Learner.step"),
        ("def main():\n    m = Other()\n    m.step(0.1)\n", "Other.step"),
        # two classes, or a value of unknown class: no one method can be named
        ("def main(c):\n    m = Learner() if c else Other()\n    m.step(0.1)\n", None),
        (
            "def main(c):\n    m = Learner()\n    if c:\n        m = Other()\n    m.step(0.1)\n",
            None,
        ),
        ("def main(m):\n    m.step(0.1)\n", None),
        ("def main(a, b):\n    m, n = a, b\n    m.step(0.1)\n", None),
    ],
    ids=["built", "moved", "other", "either", "rebound", "parameter", "unpacked"],
)
def test_a_method_called_through_a_local_instance(main, expected):
    assert _resolved(main) == expected


def test_an_update_method_called_through_a_local_instance_is_followed():
    # the update runs in Learner.step, reached through `m = Learner()`: the loop never
    # clears the gradient, so every step adds the old ones again (GL007)
    source = textwrap.dedent(LEARNER) + (
        "def main(x):\n"
        "    m = Learner()\n"
        "    for _ in range(5):\n"
        "        (m.w * x).sum().backward()\n"
        "        m.step(0.1)\n"
    )
    assert "GL007" in [d.code for d in lint_source(source, "train.py")]
    cleared = source.replace(
        "self.w -= lr * self.w.grad", "self.w -= lr * self.w.grad\n            self.w.grad = None"
    )
    assert "GL007" not in [d.code for d in lint_source(cleared, "train.py")]


def test_a_call_is_resolved_once_and_a_name_no_function_has_needs_no_receiver(monkeypatch):
    # The analyses ask the resolver about the same calls many times (summaries, loops,
    # modes, rules): the receiver's class, the costly part, is worked out once per call,
    # and not at all for a method name no function of the file has (`opt.zero_grad()`).
    source = textwrap.dedent(LEARNER) + textwrap.dedent(
        """
        learner = Learner()
        opt = make_optimizer()
        learner.step(0.1)
        opt.zero_grad()
        """
    )
    module = cst.parse_module(source)
    index = FileIndex(module)
    resolver = CalleeResolver(index)
    asked: list[str] = []
    receiver_class = CalleeResolver._receiver_class

    def counting(self, call, target):
        asked.append(target.attr.value)
        return receiver_class(self, call, target)

    monkeypatch.setattr(CalleeResolver, "_receiver_class", counting)
    calls = {
        n.func.attr.value: n
        for n in index.calls
        if type(n.func) is cst.Attribute and type(n.func.value) is cst.Name
    }
    for _ in range(3):
        assert resolver.resolve(calls["step"]) is not None
        assert resolver.resolve(calls["zero_grad"]) is None
    assert asked == ["step"]
