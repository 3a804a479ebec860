"""A local name for a module an object holds (`policy = self.policy` in a method, `net =
agent.policy`): built where the held module is built (analysis/tensors.py), so a call
of it is a forward of that model."""

import torch
from torch import nn


class Agent:
    def __init__(self):
        self.policy = nn.Linear(4, 2)
        self.optimizer = torch.optim.SGD(self.policy.parameters(), lr=0.1)

    def act(self, obs):
        policy = self.policy
        return policy(obs)

    def greedy(self, obs):
        policy = self.policy
        return policy(obs).argmax().item()  # error: GL012

    def learn(self, obs):
        policy = self.policy
        loss = policy(obs).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


agent = Agent()
for step in range(3):
    print(agent.act(torch.randn(4)).argmax().item())  # error: GL012
    print(agent.greedy(torch.randn(4)))
    agent.learn(torch.randn(8, 4))
net = agent.policy
print(net(torch.randn(4)).sum().item())  # error: GL012
