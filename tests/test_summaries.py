"""Function summaries: what a function of the file does with its parameters and grads."""

from __future__ import annotations

import sys
import textwrap

import libcst as cst

from gradlint.analysis.facts import FileFacts
from gradlint.analysis.index import FileIndex

TRAIN_STEP = """
    import torch


    def step(model, opt, w, x, lr):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
        w.data -= lr * w.grad
        w.grad = None
"""


def test_a_summary_walks_the_function_once_and_keeps_the_steps_before_manual_updates(
    monkeypatch,
):
    # The calls (forwards, backward, steps, callees) and the grad clears and manual
    # updates come from one walk of the body; the updates list the optimizer's steps
    # first, then the manual `.grad` updates, as two walks used to.
    facts = FileFacts(cst.parse_module(textwrap.dedent(TRAIN_STEP)))
    (func,) = facts.index.functions
    walked: list[cst.CSTNode] = []
    walk = FileIndex.walk

    def counting(self, root, **kwargs):
        if sys._getframe(1).f_code.co_name == "_summarise":  # not the binding tables'
            walked.append(root)
        return walk(self, root, **kwargs)

    monkeypatch.setattr(FileIndex, "walk", counting)
    summary = facts.summaries.of(func)
    assert walked == [func.body]
    code = cst.Module([]).code_for_node
    assert [code(node).strip() for node in summary.updates] == [
        "opt.step()",
        "w.data -= lr * w.grad",
    ]
    assert summary.clears_grads
    assert summary.forwarded_params == ["model"]
    assert summary.differentiates


def test_a_calls_event_is_worked_out_once(monkeypatch):
    # The summaries, the loops and several rules ask what the same calls are
    # (a backward, an optimizer step): each call's event is worked out once per file.
    from gradlint.analysis.autograd_calls import AutogradCalls

    facts = FileFacts(cst.parse_module(textwrap.dedent(TRAIN_STEP)))
    asked: list[cst.Call] = []
    work = AutogradCalls._event

    def counting(self, call):
        asked.append(call)
        return work(self, call)

    monkeypatch.setattr(AutogradCalls, "_event", counting)
    kinds = [[facts.autograd.event(call) for call in facts.index.calls] for _ in range(3)]
    assert len(asked) == len(facts.index.calls)
    assert [e.kind for e in kinds[0] if e is not None] == ["backward", "step"]
    assert all(a is b for a, b in zip(kinds[0], kinds[2], strict=True))
