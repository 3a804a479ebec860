"""A loss module built where it is called, `nn.BCEWithLogitsLoss(reduction="none")(out,
x)`, computes from its input as `criterion(out, x)` does after `criterion =
nn.BCEWithLogitsLoss()`: a VAE's test loop that only turns that loss into floats
records the forward for nothing. Before, the call of a call was a callable out of
sight, where the walk stopped."""

from collections import defaultdict

import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(784, 10)
        self.decoder = nn.Linear(5, 784)

    def forward(self, x):
        mean, log_var = self.encoder(x).chunk(2, dim=-1)
        q_z = torch.distributions.Normal(mean, log_var.exp())
        p_z = torch.distributions.Normal(torch.zeros_like(mean), torch.ones_like(mean))
        z = q_z.rsample()
        return (q_z, p_z), self.decoder(z)


def train(model, optimizer, loader):
    for x, _ in loader:
        (q_z, p_z), x_ = model(x)  # trained: silent
        loss = nn.BCEWithLogitsLoss(reduction="none")(x_, x).sum(-1).mean()
        loss = loss + torch.distributions.kl.kl_divergence(q_z, p_z).sum(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test(model, loader):
    logs = defaultdict(list)
    for x, _ in loader:
        (q_z, p_z), x_ = model(x)  # error: GL012
        logs["recon"].append(float(nn.BCEWithLogitsLoss(reduction="none")(x_, x).sum(-1).mean()))
        logs["KL"].append(float(torch.distributions.kl.kl_divergence(q_z, p_z).sum(-1).mean()))
    print({k: sum(v) / len(v) for k, v in logs.items()})


def test_under_no_grad(model, loader):
    with torch.no_grad():
        for x, _ in loader:
            _, x_ = model(x)
            print(nn.MSELoss()(x_, x).item())


model = VAE()
optimizer = torch.optim.Adam(model.parameters())
train(model, optimizer, [])
test(model, [])
test_under_no_grad(model, [])
