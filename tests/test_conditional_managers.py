"""A grad-mode manager picked by a condition (`with torch.no_grad() if frozen else
nullcontext():`) records or not as the condition says: where the arms disagree the mode
is unknown and the rules that ask it stay silent; where they agree it is that mode
(train-procgen's `predict(policy, obs, with_grad=False)`, a false GL013 on the
development half)."""

from __future__ import annotations

import textwrap

import libcst as cst

from gradlint.analysis.facts import FileFacts
from gradlint.analysis.grad_mode import GradMode
from gradlint.config import Config
from gradlint.engine import lint_source

PREVIEW = Config(preview=True)

SOURCE = """
from contextlib import nullcontext

import torch


def picked(policy, obs, with_grad=False):
    with torch.no_grad() if not with_grad else nullcontext():
        return policy(obs)


def agreeing(policy, obs, eval_only):
    with torch.no_grad() if eval_only else torch.inference_mode():
        return policy(obs)


def neither(policy, obs, fast):
    with nullcontext() if fast else nullcontext():
        return policy(obs)
"""


def _mode(facts: FileFacts, function: str) -> GradMode:
    (call,) = [
        n
        for n in facts.index.nodes
        if type(n) is cst.Call
        and facts.module.code_for_node(n) == "policy(obs)"
        and facts.index.scope_of(n).name.value == function
    ]
    return facts.grad_mode.mode_at(call)


def test_a_manager_the_condition_picks_is_unknown_where_its_arms_disagree():
    facts = FileFacts(cst.parse_module(textwrap.dedent(SOURCE)))
    assert _mode(facts, "picked") is GradMode.UNKNOWN
    assert _mode(facts, "agreeing") is GradMode.NOT_RECORDING
    assert _mode(facts, "neither") is GradMode.RECORDING


def test_a_target_made_under_a_picked_no_grad_is_no_bootstrap_finding():
    source = """
    from contextlib import nullcontext

    import torch
    from torch import nn


    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, h, c):
            return torch.distributions.Categorical(logits=self.fc(x)), x, h


    def predict(policy, obs, hidden, with_grad=False):
        with torch.no_grad() if policy.training or not with_grad else nullcontext():
            dist, value, hidden = policy(obs, hidden, hidden)
            act = dist.sample()
        return dist.logits, act.cpu().numpy()


    def predict_in_batches(policy, obs, hidden, batch_size=256):
        n = int(len(obs) / batch_size)
        for i in range(n):
            y, _ = predict(policy, obs[i * batch_size : (i + 1) * batch_size], hidden)
            if i == 0:
                total = y
            else:
                total = torch.cat((total, y), dim=0)
        return total


    def distill(obs, hidden, epochs, batch_size):
        policy = Policy()
        policy.load_state_dict(torch.load('p.pt'))
        policy.eval()
        student = Policy()
        criterion = torch.nn.MSELoss()
        optimizer = torch.optim.Adam(student.parameters())
        target = predict_in_batches(policy, obs, hidden)
        for epoch in range(epochs):
            for i in range(10):
                optimizer.zero_grad()
                y_batch = target[i * batch_size : (i + 1) * batch_size]
                dist, value, _ = student(obs, hidden, hidden)
                loss = criterion(dist.logits.squeeze(), y_batch.squeeze())
                loss.backward()
                optimizer.step()
    """
    found = lint_source(textwrap.dedent(source), "t.py", PREVIEW)
    assert [d.code for d in found if d.code == "GL013"] == []
