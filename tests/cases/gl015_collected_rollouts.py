"""GL015 on what a loop that never backpropagates collects into a list: a rollout's
critic values and old log-probabilities, read back only detached (Super Mario PPO's
`torch.cat(values).detach()`), keep every step's graph alive for nothing. Traps:
REINFORCE's log-probabilities, backpropagated after the episode; a list handed back
to the caller; one started afresh every step; a rollout under `no_grad`; a sample
drawn from a distribution, which carries no graph (but the forward that only feeds the
sample recorded one for nothing: GL012). Lint only: markers are the expected
findings."""

import torch
from torch import nn
from torch.distributions import Categorical

model = nn.Linear(4, 3)
optimizer = torch.optim.Adam(model.parameters())


def rollout(env, steps):
    values, old_log_probs = [], []
    state = env.reset()
    for _ in range(steps):
        # the forward's graph is only read detached (GL012), and the lists keep it (GL015)
        logits = model(state)  # error: GL012
        values.append(logits.sum(1))  # error: GL015
        m = Categorical(logits=logits)
        action = m.sample()
        old_log_probs.append(m.log_prob(action))  # error: GL015
        state = env.step(action)
    return torch.cat(values).detach(), torch.cat(old_log_probs).detach(), len(values)


def reinforce(env, steps, returns):
    log_probs = []
    state = env.reset()
    for _ in range(steps):
        m = Categorical(logits=model(state))
        action = m.sample()
        log_probs.append(m.log_prob(action))
        state = env.step(action)
    loss = -(torch.cat(log_probs) * returns).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def collect(env, steps):
    outputs = []
    state = env.reset()
    for _ in range(steps):
        outputs.append(model(state))
        state = env.step(0)
    return outputs


def per_step(env, steps):
    state = env.reset()
    for _ in range(steps):
        values = []
        # no growing list (GL015), but this step's forward is only read detached
        values.append(model(state))  # error: GL012
        print(torch.cat(values).detach().mean().item())
        state = env.step(0)


@torch.no_grad()
def quiet_rollout(env, steps):
    values = []
    state = env.reset()
    for _ in range(steps):
        values.append(model(state))
        state = env.step(0)
    return torch.cat(values).detach()


def sampled(env, steps):
    actions = []
    state = env.reset()
    for _ in range(steps):
        m = Categorical(logits=model(state))  # error: GL012
        actions.append(m.sample())
        state = env.step(actions[-1])
    return torch.stack(actions).tolist()
