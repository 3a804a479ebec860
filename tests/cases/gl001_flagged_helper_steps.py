"""GL001 through a helper whose backward runs only for one value of a flag: a loop that
calls it with another literal does not differentiate there (navneet-nmk/pytorch-rl's
`sample_goals(sampling_strategy="future")`, whose training step runs only for
"self_attention"), so what it carries is no graph to detach. Called with the value that
trains, the loop differentiates every iteration, and the carried state is reported."""

import torch
from torch import nn

scorer = nn.Linear(4, 1)
optimizer = torch.optim.SGD(scorer.parameters(), lr=0.1)


def train_scorer(experience):
    loss = scorer(torch.stack(experience)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def sample_goals(strategy, experience):
    goals = []
    if strategy == "self_attention":
        train_scorer(experience)
    elif strategy == "future":
        goals.extend(experience[-2:])
    return goals


def rollouts(steps):
    state = torch.zeros(4)
    experience = []
    for _ in range(steps):
        # no backward on this path: the graph grows, GL015's finding
        state = scorer(state).expand(4) + state  # error: GL015
        experience.append(state)
        sample_goals("future", experience)
    return experience


def trained_rollouts(steps):
    state = torch.zeros(4)
    experience = []
    for _ in range(steps):
        state = scorer(state).expand(4) + state  # error: GL001
        experience.append(state)
        sample_goals("self_attention", experience)
    return experience
