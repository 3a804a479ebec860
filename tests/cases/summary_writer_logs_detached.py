"""TensorBoard's SummaryWriter turns what it logs into a numpy array with `make_np`,
which detaches it first: a forward whose result is only logged (`add_images`,
`add_histogram`, `add_scalar`) records a graph for nothing. Before, a value handed to a
writer's method escaped out of sight."""

import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter

writer = SummaryWriter()
G = nn.Sequential(nn.Linear(100, 784), nn.Tanh())
optimizer = torch.optim.Adam(G.parameters())
fixed_z = torch.randn(16, 100)


def log_samples(step):
    fake = G(fixed_z).view(-1, 1, 28, 28)  # error: GL012
    writer.add_images("fake", fake, step)


def log_output_histogram(step, z):
    out = G(z)  # error: GL012
    writer.add_histogram("generator/out", out, step)
    writer.add_scalar("generator/mean", out.mean(), step)


# -- the same value also trained: silent --------------------------------------------------


def train_step(step, z, target):
    out = G(z)
    writer.add_histogram("generator/out", out, step)
    loss = ((out - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
