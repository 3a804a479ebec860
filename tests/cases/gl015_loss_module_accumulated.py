"""GL015 through a loss module called by a capitalised local name: `L1crit(pred, y)` of
`L1crit = nn.L1Loss()` computes from its inputs (a module of torch.nn, not a class being
instantiated), so an evaluation loop that sums it carries every batch's graph."""

import torch
from torch import nn

encoder = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))


# 1. a validation sum without `.item()` or no_grad: each batch's graph stays alive
def validate(batches):
    encoder.eval()
    L1crit = torch.nn.L1Loss()
    Total = 0.0
    for x, y in batches:
        Total += L1crit(encoder(x), y)  # error: GL004, GL015
    return Total / len(batches)


# 2. the same with a module-level criterion and `running = running + ...`
Huber = nn.HuberLoss()


def score(batches):
    running = torch.zeros(())
    for x, y in batches:
        running = running + Huber(encoder(x), y)  # error: GL012, GL015
    return running.item()


# 3. trap: summed under no_grad
def validate_quietly(batches):
    L1crit = nn.L1Loss()
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            total += L1crit(encoder(x), y)
    return total


# 4. trap: summed as a number
def validate_numbers(batches):
    L1crit = nn.L1Loss()
    total = 0.0
    for x, y in batches:
        total += L1crit(encoder(x), y).item()  # error: GL012
    return total
