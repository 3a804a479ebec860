"""Gradients handed from one module to another's parameters (gradlint.analysis.grad_sharing)
and GL007's check that the source's own gradients are cleared: A3C's
`shared_param._grad = local_param.grad` after an `optimizer.zero_grad()` that, since torch
2.0, only sets the shared `.grad` to None (measured on torch 2.13: the local gradient goes
1, 2, 3 over three updates)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from gradlint.analysis.facts import FileFacts
from gradlint.engine import lint_source


def facts_of(source: str) -> FileFacts:
    return FileFacts(cst.parse_module(textwrap.dedent(source)))


def handoffs(source: str) -> list[tuple[str, str, bool | None]]:
    facts = facts_of(source)
    found = []
    for node in facts.index.nodes:
        if type(node) in (cst.Assign, cst.Call):
            for h in facts.grad_sharing.handoffs_at(node):
                found.append((h.source, h.target, h.shares))
    return found


@pytest.mark.parametrize(
    ("loop", "expected"),
    [
        (
            "for lp, gp in zip(local.parameters(), shared.parameters()):\n    gp._grad = lp.grad",
            [("local", "shared", True)],
        ),
        (  # the other order, `.grad =`
            "for gp, lp in zip(shared.parameters(), local.parameters()):\n    gp.grad = lp.grad",
            [("local", "shared", True)],
        ),
        (
            "for (_, lp), (_, gp) in zip(local.named_parameters(), shared.named_parameters()):\n"
            "    gp.grad = lp.grad.data",
            [("local", "shared", True)],
        ),
        (
            "for lp, gp in zip(local.parameters(), shared.parameters()):\n"
            "    gp._grad = lp.grad.clone()",
            [("local", "shared", False)],
        ),
        (
            "for lp, gp in zip(local.parameters(), shared.parameters()):\n"
            "    gp.grad = lp.grad.to(gp.device)",
            [("local", "shared", None)],
        ),
        (  # parameter lists bound first
            "lps = list(local.parameters())\n"
            "for lp, gp in zip(lps, shared.parameters()):\n"
            "    gp._grad = lp.grad",
            [("local", "shared", True)],
        ),
        # not a handoff: a clear, an accumulation of statistics, an unknown list
        ("for p in local.parameters():\n    p.grad = None", []),
        (
            "for lp, gp in zip(local.parameters(), shared.parameters()):\n"
            "    gp.grad = torch.zeros_like(gp)",
            [],
        ),
        ("for lp, gp in zip(params, shared.parameters()):\n    gp._grad = lp.grad", []),
    ],
)
def test_a_handoff_is_a_grad_assignment_across_zipped_parameters(loop, expected):
    body = textwrap.indent(loop, "    ")
    assert handoffs(f"def f(local, shared, params):\n{body}\n") == expected


ENSURE = """
def ensure_shared_grads(model, shared_model):
    for param, shared_param in zip(model.parameters(), shared_model.parameters()):
        if shared_param.grad is not None:
            return
        shared_param._grad = param.grad
"""


def test_a_helper_hands_on_between_the_modules_its_call_passes():
    source = ENSURE + "\ndef train(net, shared):\n    ensure_shared_grads(net, shared)\n"
    # the helper's own assignment, in its names, and the call's, in the caller's
    assert handoffs(source) == [("model", "shared_model", True), ("net", "shared", True)]


def test_a_helper_that_also_clears_is_not_taken_for_a_bare_handoff():
    source = (
        "def sync(model, shared_model):\n"
        "    for p, sp in zip(model.parameters(), shared_model.parameters()):\n"
        "        sp._grad = p.grad.clone()\n"
        "        p.grad = None\n"
        "\ndef train(net, shared):\n    sync(net, shared)\n"
    )
    assert handoffs(source) == [("model", "shared_model", False)]


# -- GL007 --------------------------------------------------------------------------

A3C_WORKER = """
import torch
from torch import nn


class Agent:
    def __init__(self, global_model, optimizer):
        self.local_model = ActorCritic()
        self.global_model = global_model
        self.optimizer = optimizer

    def run(self):
        while True:
            loss = self.local_model.calc_loss()
            {clear}
            loss.backward()
            for local_param, global_param in zip(
                self.local_model.parameters(), self.global_model.parameters()
            ):
                global_param._grad = {value}
            self.optimizer.step()
            self.local_model.load_state_dict(self.global_model.state_dict())


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.v = nn.Linear(4, 1)

    def forward(self, state):
        return self.v(state)

    def calc_loss(self):
        return self.forward(torch.randn(2, 4)).pow(2).mean()
"""


def line_of(source: str, text: str) -> int:
    lines = textwrap.dedent(source).splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.strip() == text)


def gl007(source: str) -> list[tuple[int, str]]:
    return [
        (d.start.line, d.message)
        for d in lint_source(textwrap.dedent(source), "train.py")
        if d.code == "GL007"
    ]


def worker(clear: str = "self.optimizer.zero_grad()", value: str = "local_param.grad") -> str:
    return A3C_WORKER.replace("{clear}", clear).replace("{value}", value)


def test_the_a3c_worker_whose_optimizer_clears_only_the_shared_grads_is_reported():
    found = gl007(worker())
    assert [line for line, _ in found] == [line_of(worker(), "loss.backward()")]
    message = found[0][1]
    assert "`self.local_model`'s gradients" in message
    assert "`self.optimizer.zero_grad()`" in message
    assert "`self.local_model.zero_grad()`" in message


@pytest.mark.parametrize(
    "clear",
    [
        "self.local_model.zero_grad()",
        "self.optimizer.zero_grad(set_to_none=False)",  # zeroes the shared tensor in place
        "self.optimizer.zero_grad(False)",
        "self.optimizer.zero_grad(set_to_none=args.none)",  # unknown: taken to clear
        "self.zero_grad()",  # an object that may hold the local model
        "[p.grad.zero_() for p in self.local_model.parameters()]",
    ],
)
def test_a_clear_that_reaches_the_local_gradients_keeps_it_silent(clear):
    assert gl007(worker(clear)) == []


@pytest.mark.parametrize(
    ("clear", "value"),
    [
        # a copy is not zeroed with the shared `.grad`
        ("self.optimizer.zero_grad(set_to_none=False)", "local_param.grad.clone()"),
        ("self.global_model.zero_grad()", "local_param.grad"),
        ("pass", "local_param.grad"),
    ],
)
def test_a_clear_of_the_shared_side_only_is_reported(clear, value):
    source = worker(clear, value)
    assert [line for line, _ in gl007(source)] == [line_of(source, "loss.backward()")]


IKOSTRIKOV = (
    ENSURE
    + """

def train(shared_model, optimizer, model, env):
    while True:
        model.load_state_dict(shared_model.state_dict())
        values = []
        for step in range(20):
            value = model(env.state())
            values.append(value)
        loss = 0
        for value in values:
            loss = loss + value.pow(2).sum()
        {clear}
        loss.backward()
        ensure_shared_grads(model, shared_model)
        optimizer.step()
"""
)


def test_ensure_shared_grads_with_its_early_return_is_reported_on_torch_2():
    # the guard never returns: the default zero_grad() set the shared `.grad` to None
    source = IKOSTRIKOV.replace("{clear}", "optimizer.zero_grad()")
    found = gl007(source)
    assert [line for line, _ in found] == [line_of(source, "loss.backward()")]
    assert "`model`'s gradients" in found[0][1]


def test_ensure_shared_grads_with_an_in_place_clear_is_silent():
    source = IKOSTRIKOV.replace("{clear}", "optimizer.zero_grad(set_to_none=False)")
    assert gl007(source) == []


def test_a_fresh_local_model_each_update_accumulates_nothing():
    source = """
    import copy
    import torch

    def train(shared, optimizer, batches):
        for x in batches:
            local = copy.deepcopy(shared)
            loss = local(x).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            for lp, sp in zip(local.parameters(), shared.parameters()):
                sp._grad = lp.grad
            optimizer.step()
    """
    assert gl007(source) == []


def test_a_handoff_no_step_reads_is_not_judged():
    source = """
    import torch

    def train(local, shared, batches):
        optimizer = torch.optim.SGD(local.parameters(), lr=0.1)
        for x in batches:
            loss = local(x).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            for lp, sp in zip(local.parameters(), shared.parameters()):
                sp.grad = lp.grad
    """
    assert gl007(source) == []


def test_the_fix_clears_the_local_model_before_the_backward():
    from gradlint.config import Config
    from gradlint.fixes import fix_source

    fixed = fix_source(textwrap.dedent(worker()), "train.py", Config(), unsafe=True).source
    assert "            self.local_model.zero_grad()\n            loss.backward()\n" in fixed
    assert gl007(fixed) == []


def test_a_loop_that_clears_nothing_is_reported_at_its_backward_even_out_of_sight():
    # the loss comes from another file's function: which modules it runs is unknown,
    # but with no clear at all in the loop, what is handed on is a sum either way; the
    # advice is the source's clear, not the optimizer's (which would not mend it)
    source = """
    import torch
    from project.losses import compute_loss

    def train(local, shared, batches):
        optimizer = torch.optim.SGD(shared.parameters(), lr=0.1)
        for x in batches:
            loss = compute_loss(local, x)
            loss.backward()
            for lp, sp in zip(local.parameters(), shared.parameters()):
                sp._grad = lp.grad
            optimizer.step()
    """
    found = gl007(source)
    assert [line for line, _ in found] == [line_of(source, "loss.backward()")]
    assert "Call `local.zero_grad()`" in found[0][1]


def test_an_unknown_loss_behind_a_shared_clear_is_not_guessed_at():
    source = """
    import torch
    from project.losses import compute_loss

    def train(local, shared, batches):
        optimizer = torch.optim.SGD(shared.parameters(), lr=0.1)
        for x in batches:
            loss = compute_loss(local, x)
            optimizer.zero_grad()
            loss.backward()
            for lp, sp in zip(local.parameters(), shared.parameters()):
                sp._grad = lp.grad
            optimizer.step()
    """
    assert gl007(source) == []
