"""GL001 traps: a constant built once and kept across iterations carries no graph when
what it reads of the model's output is only the shape (`ones.expand_as(probs)`:
outlier-exposure's base rates), nor when it is made of a parameter that every call of
the function fills with a plain numpy array (context flows from the callers); built
from the output itself, it does. Lint only: markers are the expected findings."""

import numpy as np
import torch
import torch.nn.functional as F

model = torch.nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def rates():
    counts = np.zeros(3)
    return counts / 3


def train(base_rates):
    br = None
    for _ in range(10):
        probs = F.softmax(model(torch.randn(2, 3)), dim=-1)
        br = torch.FloatTensor(base_rates).unsqueeze(0).expand_as(probs) if br is None else br
        loss = -(probs.log() * br).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_with_ones():
    br = None
    for _ in range(10):
        probs = F.softmax(model(torch.randn(2, 3)), dim=-1)
        br = torch.ones(3).unsqueeze(0).expand_as(probs) if br is None else br
        loss = -(probs.log() * br).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_on_outputs():
    first = None
    for _ in range(10):
        probs = F.softmax(model(torch.randn(2, 3)), dim=-1)
        first = probs * 2 if first is None else first  # error: GL001
        loss = -(probs.log() * first).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


base = rates()
for epoch in range(3):
    train(base)
    train_with_ones()
    train_on_outputs()
