"""GL001: a module function that subtracts a constant it builds itself (`mean =
batch.data.new(...)`, `batch -= mean`) hands back the history of what it is given, no
more: an input re-centred every step (a style-transfer script's `x = subtract_mean(x)`)
carries no graph, and an output of the model re-centred and carried does. Lint only:
markers are the expected findings."""

import torch
from torch.autograd import Variable

net = torch.nn.Conv2d(3, 3, 1)
optimizer = torch.optim.Adam(net.parameters())


def subtract_mean(batch):
    mean = batch.data.new(batch.data.size())
    mean[:, 0, :, :] = 103.939
    batch -= Variable(mean)
    return batch


def centred(batch):
    mean = torch.full((1, 3, 1, 1), 0.5)
    return batch - mean


x = Variable(torch.FloatTensor(4, 3, 8, 8))
for step in range(10):
    optimizer.zero_grad()
    x.data.copy_(torch.randn(4, 3, 8, 8))
    styled = net(x)
    x = subtract_mean(x)
    loss = (styled - x).pow(2).mean()
    loss.backward()
    optimizer.step()

state = torch.zeros(4, 3, 8, 8)
for step in range(10):
    optimizer.zero_grad()
    out = net(torch.randn(4, 3, 8, 8))
    state = centred(state + out)  # error: GL001
    state.pow(2).mean().backward()
    optimizer.step()
