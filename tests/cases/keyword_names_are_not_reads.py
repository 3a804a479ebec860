"""A keyword argument's name is the callee's parameter, not a read of the caller's
variable of the same name: `Categorical(logits=logits)` reads `logits` once, as its
value. Before, the keyword counted as a second read that gradlint could not follow, so
the forward's result "escaped" and the finding was lost."""

import torch
import torch.nn as nn
from torch.distributions import Categorical, Normal

policy = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(policy.parameters())


def greedy_evaluation(env, episodes=10):
    total = 0.0
    for _ in range(episodes):
        obs, done = env.reset(), False
        while not done:
            logits = policy(torch.as_tensor(obs, dtype=torch.float32))  # error: GL012
            action = Categorical(logits=logits).sample().item()
            obs, reward, done, _ = env.step(action)
            total += reward
    return total / episodes


def summary_row(obs):
    out = policy(obs)  # error: GL012
    return int(out.argmax().item()), dict(out="logits")


# -- look-alikes that stay silent -------------------------------------------------------


def reinforce_step(env):
    obs, done = env.reset(), False
    log_probs = []
    while not done:
        logits = policy(torch.as_tensor(obs, dtype=torch.float32))
        dist = Categorical(logits=logits)
        action = dist.sample()
        log_probs.append(dist.log_prob(action))  # kept for the backward below
        obs, reward, done, _ = env.step(action.item())
    loss = -torch.stack(log_probs).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def reparameterised_action(obs):
    mean = policy(obs)
    return Normal(loc=mean, scale=1.0).rsample()  # returned with its history
