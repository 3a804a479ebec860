"""GL012 at the call of a helper that runs a model's forward and hands its output back,
where this caller only detaches it while another caller trains through it (PPO for
beginners' `V, _ = self.evaluate(obs, acts)`). Lint only: markers are the expected
findings."""

import torch
from torch import nn
from torch.distributions import Categorical


class PPO:
    def __init__(self):
        self.actor = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
        self.critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
        self.actor_optim = torch.optim.Adam(self.actor.parameters())
        self.critic_optim = torch.optim.Adam(self.critic.parameters())

    def evaluate(self, obs, acts):
        V = self.critic(obs).squeeze()
        log_probs = Categorical(logits=self.actor(obs)).log_prob(acts)
        return V, log_probs

    def learn(self, obs, acts, rtgs, old_log_probs, epochs):
        V, _ = self.evaluate(obs, acts)  # error: GL012
        A = rtgs - V.detach()
        A = (A - A.mean()) / (A.std() + 1e-10)
        for _ in range(epochs):
            V, log_probs = self.evaluate(obs, acts)  # trained through: no finding
            ratios = torch.exp(log_probs - old_log_probs)
            actor_loss = -torch.min(ratios * A, torch.clamp(ratios, 0.8, 1.2) * A).mean()
            critic_loss = nn.functional.mse_loss(V, rtgs)
            self.actor_optim.zero_grad()
            actor_loss.backward()
            self.actor_optim.step()
            self.critic_optim.zero_grad()
            critic_loss.backward()
            self.critic_optim.step()


def hessian_ratio(model, x, y, hessian_of):
    # the output goes to a function out of sight that differentiates it: not thrown away
    output = model(x)
    return hessian_of(output, nn.functional.mse_loss(output, y))


def report(model, x, y, hessian_of):
    print(hessian_ratio(model, x, y, hessian_of))
