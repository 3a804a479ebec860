"""The legacy `Variable(t)` wrapper hands back a new leaf holding `t`'s data, without its
history and not requiring grad (measured on torch 2.13, below): it cuts the graph as
`.detach()` does. Old code wraps model outputs in it (`Variable(G(z))` to show a sample,
`h = Variable(out)` to carry a state), so a forward wrapped at once records a graph that
is thrown away, a loss computed from the wrapper has nothing to backpropagate, and a
state carried through it keeps no graph across iterations."""

from __future__ import annotations

import textwrap

import pytest

from gradlint.config import Config
from gradlint.engine import lint_source

HEADER = """
import torch
from torch import nn
from torch.autograd import Variable

net = nn.Linear(3, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
"""

LOSS_OF_THE_WRAPPER = (
    HEADER
    + """
for _ in range(3):
    x = torch.randn(4, 3)
    out = Variable(net(x))
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
)

SAMPLE_SHOWN = (
    HEADER
    + """
for _ in range(3):
    x = torch.randn(4, 3)
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    sample = Variable(net(torch.randn(2, 3)))
    print(sample.data.numpy())
"""
)

STATE_CARRIED = (
    HEADER
    + """
h = torch.zeros(4, 3)
for _ in range(3):
    x = torch.randn(4, 3)
    out = torch.tanh(net(x) + h)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    h = Variable(out)
"""
)


def findings(source: str) -> list[tuple[str, str]]:
    source = textwrap.dedent(source)
    lines = source.splitlines()
    return [
        (d.code, lines[d.start.line - 1].strip())
        for d in lint_source(source, "train.py", Config(preview=True))
    ]


def run(source: str) -> None:
    exec(compile(textwrap.dedent(source), "train.py", "exec"), {})


def test_the_wrapper_is_a_new_leaf_without_history():
    torch = pytest.importorskip("torch")
    from torch.autograd import Variable

    out = torch.nn.Linear(3, 1)(torch.randn(2, 3))
    assert out.grad_fn is not None
    wrapped = Variable(out)
    assert wrapped.grad_fn is None and not wrapped.requires_grad and wrapped.is_leaf
    asked = Variable(out, requires_grad=True)
    assert asked.grad_fn is None and asked.requires_grad and asked.is_leaf


def test_a_loss_of_the_wrapper_has_nothing_to_backpropagate():
    assert findings(LOSS_OF_THE_WRAPPER) == [("GL009", "loss.backward()")]
    pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="does not require grad"):
        run(LOSS_OF_THE_WRAPPER)


def test_a_forward_wrapped_at_once_records_a_graph_for_nothing():
    assert findings(SAMPLE_SHOWN) == [("GL012", "sample = Variable(net(torch.randn(2, 3)))")]
    pytest.importorskip("torch")
    run(SAMPLE_SHOWN)


def test_a_state_carried_through_the_wrapper_keeps_no_graph():
    assert findings(STATE_CARRIED) == []
    pytest.importorskip("torch")
    run(STATE_CARRIED)  # no "backward through the graph a second time"
