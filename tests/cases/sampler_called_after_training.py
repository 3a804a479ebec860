"""A sampling loop in a function that hands its carried tensor back, called at the end
of a training function: the training loop's backward ran before the call, so nothing
differentiates what the sampler returns, and its graph grows with every step. Before,
any backward in the caller's function counted as differentiating it."""

import torch
import torch.nn as nn
from torchvision.utils import save_image


class NoisePredictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)

    def forward(self, x, t):
        return self.net(x)


model = NoisePredictor()
optimizer = torch.optim.Adam(model.parameters())
betas = torch.linspace(1e-4, 0.02, 1000)


def sample(n):
    x = torch.randn(n, 4)
    for t in reversed(range(1000)):
        eps = model(x, t)  # error: GL012
        x = (x - betas[t] * eps) / (1 - betas[t]).sqrt()  # error: GL015
    return x


def train(loader):
    for x0 in loader:
        t = torch.randint(0, 1000, (1,))
        noise = torch.randn_like(x0)
        loss = ((model(x0 + noise, t) - noise) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    save_image(sample(16).view(16, 1, 2, 2), "samples.png")


# -- the returned history differentiated after the call: silent --------------------------


def unroll(x, steps):
    for _ in range(steps):
        x = x + 0.1 * model(x, 0)
    return x


def train_through_unroll(loader):
    for x0, target in loader:
        loss = ((unroll(x0, 8) - target) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
