"""A helper that hands back a torch.distributions object built from a model's output
(`return Categorical(logits=logits)`, spinningup's policy-gradient examples) computes
from parameters: the distribution keeps the output's graph for its `log_prob`. A caller
that only samples it (`get_policy(obs).sample().item()` to step the environment) builds
that graph for nothing; a caller that takes `log_prob` trains through it."""

from __future__ import annotations

import textwrap

import pytest

from gradlint.config import Config
from gradlint.engine import lint_source

POLICY_GRADIENT = """
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical


def mlp(sizes):
    layers = []
    for j in range(len(sizes) - 1):
        layers += [nn.Linear(sizes[j], sizes[j + 1]), nn.Tanh()]
    return nn.Sequential(*layers)


def train(steps=3):
    logits_net = mlp([4, 8, 2])

    def get_policy(obs):
        logits = logits_net(obs)
        return Categorical(logits=logits)

    def get_action(obs):
        return ACT

    def compute_loss(obs, act, weights):
        logp = get_policy(obs).log_prob(act)
        return -(logp * weights).mean()

    optimizer = torch.optim.Adam(logits_net.parameters(), lr=1e-2)
    for _ in range(steps):
        obs = torch.randn(5, 4)
        acts = torch.tensor([get_action(o) for o in obs])
        optimizer.zero_grad()
        loss = compute_loss(obs, acts, torch.ones(5))
        loss.backward()
        optimizer.step()
    return loss.item()
"""


def findings(source: str) -> list[tuple[str, str]]:
    source = textwrap.dedent(source)
    lines = source.splitlines()
    return [
        (d.code, lines[d.start.line - 1].strip())
        for d in lint_source(source, "pg.py", Config(select=["GL012"]))
    ]


def test_a_sampled_distribution_of_a_forward_wastes_its_graph():
    source = POLICY_GRADIENT.replace("ACT", "get_policy(obs).sample().item()")
    assert findings(source) == [("GL012", "return get_policy(obs).sample().item()")]


def test_the_call_that_takes_the_log_probability_is_not_reported():
    # REINFORCE keeps the log-probability of the sampled action for the backward
    source = POLICY_GRADIENT.replace("ACT", "keep(get_policy(obs))").replace(
        "def compute_loss",
        "def keep(dist):\n        kept.append(dist.log_prob(dist.sample()))\n        return 0\n\n    kept = []\n\n    def compute_loss",
    )
    assert findings(source) == []


def test_a_distribution_of_constants_computes_from_no_parameters():
    source = POLICY_GRADIENT.replace("ACT", "get_policy(obs).sample().item()").replace(
        "logits = logits_net(obs)", "logits = torch.zeros(2)"
    )
    assert findings(source) == []


def test_the_sampled_forward_records_a_graph_under_torch():
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    source = textwrap.dedent(POLICY_GRADIENT.replace("ACT", "get_policy(obs).sample().item()"))
    exec(compile(source, "pg.py", "exec"), namespace)
    namespace["train"]()  # the program runs
    net = namespace["mlp"]([4, 8, 2])
    dist = torch.distributions.Categorical(logits=net(torch.randn(4)))
    # what the sampling call throws away: a graph back to the weights
    assert dist.logits.grad_fn is not None
    assert dist.sample().grad_fn is None


# A review's programs (each run under torch 2.13): the forward inside the helper records
# nothing (under no_grad, or of a frozen model), or is in eval mode, GL004's finding there.
NO_GRAD_INSIDE = """
    def get_policy(obs):
        with torch.no_grad():
            logits = logits_net(obs)
        return Categorical(logits=logits)
"""
FROZEN = """
    logits_net.requires_grad_(False)

    def get_policy(obs):
        logits = logits_net(obs)
        return Categorical(logits=logits)
"""
EVAL_MODE = """
    logits_net.eval()

    def get_policy(obs):
        logits = logits_net(obs)
        return Categorical(logits=logits)
"""


@pytest.mark.parametrize(
    "helper", [NO_GRAD_INSIDE, FROZEN, EVAL_MODE], ids=["no_grad", "frozen", "eval"]
)
def test_a_helper_whose_forward_records_nothing_or_is_evaluated_is_no_gl012(helper):
    sampler = (
        """
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical

logits_net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
"""
        + textwrap.dedent(helper)
        + """

for _ in range(3):
    print(get_policy(torch.randn(4)).sample().item())
"""
    )
    assert findings(sampler) == []
