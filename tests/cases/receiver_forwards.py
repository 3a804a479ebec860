"""A method runs the forward of a module its object holds (`agent.sample(state)` runs
`self.network`): a switch of `agent.network` in the caller reaches it. Lint only:
markers are the expected findings."""

import gym
import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions import Categorical


class PolicyNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, state):
        return torch.softmax(self.fc2(self.drop(torch.tanh(self.fc1(state)))), dim=-1)


class PolicyGradientAgent:
    def __init__(self, network):
        self.network = network
        self.optimizer = optim.SGD(self.network.parameters(), lr=0.001)

    def learn(self, log_probs, rewards):
        loss = (-log_probs * rewards).sum()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def sample(self, state):
        action_prob = self.network(torch.FloatTensor(state))
        action_dist = Categorical(action_prob)
        action = action_dist.sample()
        return action.item(), action_dist.log_prob(action)


env = gym.make("LunarLander-v2")
agent = PolicyGradientAgent(PolicyNetwork())

agent.network.train()
for batch in range(100):
    log_probs, rewards = [], []
    state = env.reset()
    done = False
    while not done:
        action, log_prob = agent.sample(state)  # trained on below: no finding
        state, reward, done, _ = env.step(action)
        log_probs.append(log_prob)
        rewards.append(reward)
    agent.learn(torch.stack(log_probs), torch.tensor(rewards))

agent.network.eval()
action_list = []
for episode in range(5):
    actions = []
    state = env.reset()
    done = False
    while not done:
        action, _ = agent.sample(state)  # error: GL004
        actions.append(action)
        state, reward, done, _ = env.step(action)
    action_list.append(actions)

# the actions taken are counted: what the environment hands back after one of them
# carries nothing of it, so the training loop above does not differentiate them
distribution = {}
for actions in action_list:
    for action in actions:
        distribution[action] = distribution.get(action, 0) + 1

with torch.no_grad():
    state = env.reset()
    action, _ = agent.sample(state)
