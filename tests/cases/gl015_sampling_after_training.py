"""GL015 after a training loop in the same scope: the training loop's backward runs
before the sampling loop starts, so it cannot differentiate what the sampling loop
carries (the scope's bindings alone, read without order, say it does: the same names,
`state` and `inp`, flow into the training loss). A backward that can run after the loop
still counts."""

import torch
from torch import nn

gru = nn.GRUCell(6, 6)
readout = nn.Linear(6, 6)
opt = torch.optim.SGD(list(gru.parameters()) + list(readout.parameters()), lr=0.1)
seq = torch.randn(12, 1, 6)

for epoch in range(50):
    opt.zero_grad()
    state = torch.zeros(1, 6)
    inp = seq[0]
    loss = 0
    for t in range(11):
        state = gru(inp, state)
        guess = readout(state)
        loss = loss + (guess - seq[t + 1]).pow(2).mean()
        inp = guess
    loss.backward()
    opt.step()

# 1. module level, after training: the generation carries `state` and `inp` with history
state = torch.zeros(1, 6)
inp = seq[0]
generated = []
while len(generated) < 40:
    state = gru(inp, state)  # error: GL015
    guess = readout(state)
    generated.append(guess.tolist())
    inp = guess  # error: GL015


# 2. the same in a function: a fit loop, then the rollout it returns numbers from
def fit_then_roll(cell, head, data, steps):
    optimiser = torch.optim.Adam(cell.parameters())
    for x, y in data:
        optimiser.zero_grad()
        h = cell(x, torch.zeros(1, 6))
        err = (head(h) - y).abs().sum()
        err.backward()
        optimiser.step()
    h = torch.zeros(1, 6)
    out = []
    for _ in range(steps):
        h = cell(data[0][0], h)  # error: GL015
        out.append(head(h).sum().item())
    return out


# 3. trap: the backward comes after the loop (full backpropagation through time)
def bptt(cell, x0, target, steps):
    h = torch.zeros(1, 6)
    for _ in range(steps):
        h = cell(x0, h)
    (h - target).pow(2).sum().backward()


# 4. trap: the backward sits before the unroll in the same epoch loop, whose next
# iteration runs it again after the unroll: order within the epoch does not settle it
def unroll_each_epoch(cell, x0, target, epochs, steps):
    err = torch.zeros(())
    for _ in range(epochs):
        if err.requires_grad:
            err.backward()
        h = torch.zeros(1, 6)
        for _ in range(steps):
            h = cell(x0, h)
        err = (h - target).pow(2).sum()
