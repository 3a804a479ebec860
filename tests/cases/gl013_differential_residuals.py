"""GL013 on physics-informed losses: a PDE residual written as a regression of one side
of the equation onto the other (`mse(u_t, nu * u_xx - u * u_x)`) has no target; every
term is meant to be differentiated. A TD target beside it still is one. Lint only:
markers are the expected findings."""

import torch
import torch.nn.functional as F
from torch import nn


class PINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x, t):
        return self.net(torch.cat([x, t], 1))


def derivative(u, x):
    return torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)[0]


def train_burgers(model, x, t, epochs, nu=0.01):
    optimizer = torch.optim.Adam(model.parameters())
    mse = nn.MSELoss()
    x.requires_grad_(True)
    t.requires_grad_(True)
    for _ in range(epochs):
        u = model(x, t)
        u_t = derivative(u, t)
        u_x = derivative(u, x)
        u_xx = derivative(u_x, x)
        residual_loss = mse(u_t, nu * u_xx - u * u_x)
        optimizer.zero_grad()
        residual_loss.backward()
        optimizer.step()


def train_poisson(model, x, t):
    optimizer = torch.optim.LBFGS(model.parameters())
    x.requires_grad = True

    def closure():
        optimizer.zero_grad()
        u = model(x, t)
        u_x = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
        loss = F.mse_loss(u_x, torch.cos(x) * u)
        loss.backward()
        return loss

    for _ in range(10):
        optimizer.step(closure)


def train_q(q_net, batches, gamma=0.99):
    optimizer = torch.optim.Adam(q_net.parameters())
    for s, a, r, s2 in batches:
        q = q_net(s).gather(1, a).squeeze(1)
        target = r + gamma * q_net(s2).max(1)[0]  # error: GL013
        loss = F.mse_loss(q, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
