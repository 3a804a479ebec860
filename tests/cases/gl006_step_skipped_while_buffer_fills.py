"""GL006: a training step that returns early with literals while its replay buffer fills
(`return 0, 0`) still hands back, once it runs, the loss it backpropagated: summing that
across the episode keeps every step's graph. A return of literals carries no graph, so
it says nothing about what the other returns hand back. A step that returns a detached
copy at its other return is silent. Lint only: markers are the expected findings."""

import torch
import torch.nn.functional as F

net = torch.nn.Linear(4, 2)
opt = torch.optim.Adam(net.parameters())
buffer: list = []
batch_size = 32


def fit_batch():
    if len(buffer) < batch_size:
        return 0, 0
    x = torch.stack(buffer[-batch_size:])
    loss = F.mse_loss(net(x), torch.zeros(batch_size, 2))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss, x.sum()


def fit_batch_detached():
    if len(buffer) < batch_size:
        return -1.0, None
    x = torch.stack(buffer[-batch_size:])
    loss = F.mse_loss(net(x), torch.zeros(batch_size, 2))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.detach(), x.sum()


total = 0
total_detached = 0
for step in range(1000):
    buffer.append(torch.randn(4))
    loss_n, _ = fit_batch()
    total += loss_n  # error: GL006
    kept, _ = fit_batch_detached()
    total_detached += kept
print(total, total_detached)
