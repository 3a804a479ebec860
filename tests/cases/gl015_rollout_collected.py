"""GL015 on rollouts: a recurrent state carried through a segment whose outputs are
collected and differentiated after it (truncated backpropagation through time, an
actor-critic update over the segment) grows a graph on purpose, one segment long. The
collection may go through a loop over the containers themselves, and the backward may
sit two helpers away; a segment whose collected outputs nobody differentiates still
leaks."""

import torch
from torch import nn

core = nn.LSTMCell(5, 8)
heads = nn.Linear(8, 3)
optim = torch.optim.RMSprop(list(core.parameters()) + list(heads.parameters()))


def apply_gradients(objective):
    optim.zero_grad()
    objective.backward()
    optim.step()


def learn_from(scores, baselines):
    objective = torch.zeros(())
    for score, baseline in zip(scores, baselines):
        objective = objective + (score - baseline).pow(2).mean()
    apply_gradients(objective)


# 1. trap: outputs stored by walking zip((containers), (values)); the update two calls
# away backpropagates them
def segments(observations, horizon, rounds):
    for _ in range(rounds):
        memory, cell_state = torch.zeros(1, 8), torch.zeros(1, 8)
        scores, baselines = [], []
        step = 0
        while step < horizon:
            memory, cell_state = core(observations[step], (memory, cell_state))
            out = heads(memory)
            for bucket, item in zip((scores, baselines), (out[:, :2], out[:, 2:])):
                bucket.append(item)
            step += 1
        learn_from(scores, baselines)


# 2. trap: each output stored into every list a literal tuple names, then their stack
# handed after the segment to the helper that backpropagates it
def segment_loss(observations, horizon):
    hx, cx = torch.zeros(1, 8), torch.zeros(1, 8)
    kept, shown = [], []
    for t in range(horizon):
        hx, cx = core(observations[t], (hx, cx))
        for sink in (kept, shown):
            sink.append(heads(hx).sum())
    apply_gradients(torch.stack(kept).sum())
    return shown


def summarise(scores):
    return [score.mean().item() for score in scores]


# 3. the same collection, handed to a helper that only reads numbers: nothing ever
# differentiates the segment, whose graph grows every step
def watch(observations, horizon):
    memory, cell_state = torch.zeros(1, 8), torch.zeros(1, 8)
    scores, baselines = [], []
    for step in range(horizon):
        memory, cell_state = core(observations[step], (memory, cell_state))  # error: GL015
        out = heads(memory)
        for bucket, item in zip((scores, baselines), (out[:, :2], out[:, 2:])):
            bucket.append(item)
    return summarise(scores)
