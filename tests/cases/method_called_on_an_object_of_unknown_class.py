"""A method's result followed into its callers: `p.log_marginal(x)` on an instance the
resolver ties to the class is only printed, but `model.log_marginal(x)` on a parameter
(annotated with the class, or not) is the training loss. The resolver's callers are
not all the method's calls, so its forward is no graph thrown away. A method whose name
no other call in the file uses is still followed into the calls it has (reported at
`self.posterior(x)`, whose result map_estimate reads as numbers)."""

import torch
import torch.nn as nn


class Joint(nn.Module):
    def __init__(self, prior: nn.Module, likelihood: nn.Module):
        super().__init__()
        self.prior = prior
        self.likelihood = likelihood

    def log_marginal(self, x):
        scores = self.likelihood(x)
        return torch.logsumexp(scores, 0)

    def posterior(self, x):
        scores = self.likelihood(x)
        return torch.softmax(scores, -1)

    def map_estimate(self, x):
        return self.posterior(x).argmax(-1).tolist()  # error: GL012


def train(model: Joint, batches, optimiser):
    for x in batches:
        loss = -model.log_marginal(x).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()


def test_joint():
    p = Joint(nn.Linear(4, 4), nn.Linear(4, 4))
    print(p.log_marginal(torch.randn(2, 4)))
    print(p.map_estimate(torch.randn(2, 4)))
