"""What an agent collects from its environment is plain data, not graph (census, dev half:
udacity/deep-reinforcement-learning REINFORCE.ipynb). `gym.make(...)` builds an
environment whose `step(action)` hands back numpy observations and float rewards; a
method of a plain value given plain arguments hands back a plain value; the action is
the `.item()` at its place of the tuple the policy's method returns; a list holds what
is appended to it. None may be flagged, except where marked."""
from collections import deque

import gym
import torch
import torch.nn as nn
from torch.distributions import Categorical

env = gym.make("CartPole-v0")


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=1)

    def act(self, state):
        state = torch.from_numpy(state).float().unsqueeze(0)
        m = Categorical(self.forward(state))
        action = m.sample()
        return action.item(), m.log_prob(action)

    def act_keeping_graph(self, state):
        probs = self.forward(torch.from_numpy(state).float().unsqueeze(0))
        return probs.sum(), probs


policy = Policy()
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)


# REINFORCE.ipynb: the episode's score is the sum of the environment's float rewards,
# though the rewards also scale the loss (the return R) that is backpropagated.
def reinforce(n_episodes=1000, max_t=1000, gamma=1.0):
    scores_deque = deque(maxlen=100)
    scores = []
    for i_episode in range(1, n_episodes + 1):
        saved_log_probs = []
        rewards = []
        state = env.reset()
        for t in range(max_t):
            action, log_prob = policy.act(state)
            saved_log_probs.append(log_prob)
            state, reward, done, _ = env.step(action)
            rewards.append(reward)
            if done:
                break
        scores_deque.append(sum(rewards))
        scores.append(sum(rewards))
        discounts = [gamma**i for i in range(len(rewards) + 1)]
        R = sum([a * b for a, b in zip(discounts, rewards)])
        policy_loss = []
        for log_prob in saved_log_probs:
            policy_loss.append(-log_prob * R)
        policy_loss = torch.cat(policy_loss).sum()
        optimizer.zero_grad()
        policy_loss.backward()
        optimizer.step()
    return scores


# A list holds what is appended to it: here the graph-carrying place of the tuple, so
# the sum kept across episodes keeps every episode's graph.
def reinforce_kept_values(n_episodes=1000):
    scores = []
    for i_episode in range(n_episodes):
        values = []
        state = env.reset()
        value, probs = policy.act_keeping_graph(state)
        values.append(value)
        loss = -(probs.sum() * sum(values))
        scores.append(sum(values))  # error: GL006
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return scores


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.pi = nn.Linear(4, 2)
        self.states = []

    def forward(self, state):
        return self.pi(state)

    def remember(self, state):
        self.states.append(state)

    def choose_action(self, observation):
        pi = self.forward(torch.tensor([observation], dtype=torch.float))  # error: GL012
        probs = torch.softmax(pi, dim=1)
        action = Categorical(probs).sample().numpy()[0]
        return action

    def calc_loss(self, done):
        states = torch.tensor(self.states, dtype=torch.float)
        return self.forward(states).pow(2).mean() * (1 - int(done))


# philtabor a3c.py: the worker's environment and network are attributes set in
# `__init__`; the next observation is the environment's, whatever the network computed.
class Worker:
    def __init__(self, env_id):
        self.local_actor_critic = ActorCritic()
        self.env = gym.make(env_id)
        self.optimizer = torch.optim.Adam(self.local_actor_critic.parameters())

    def run(self):
        t_step = 1
        while True:
            done = False
            observation = self.env.reset()
            score = 0
            while not done:
                action = self.local_actor_critic.choose_action(observation)
                observation_, reward, done, info = self.env.step(action)
                score += reward
                self.local_actor_critic.remember(observation)
                if t_step % 5 == 0 or done:
                    loss = self.local_actor_critic.calc_loss(done)
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
                t_step += 1
                observation = observation_


# jingweiz/pytorch-rl dqn.py: a hand-written environment wrapper hands back a record
# object (`experience.reward`, `experience.terminal1`), not a tuple to unpack; the same
# attribute holds what `reset()` and `step(action)` give, so it is the environment's
# data. The replay memory the update samples from holds those rewards too: what the
# episode adds up is still plain numbers.
class RecordAgent:
    def __init__(self, env, model, memory):
        self.env = env
        self.model = model
        self.memory = memory
        self.optimizer = torch.optim.Adam(model.parameters())

    def _backward(self, reward, terminal):
        self.memory.append(reward, terminal)
        loss = self.model(self.memory.sample(32)).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def fit(self, steps):
        episode_reward = 0.0
        self.experience = self.env.reset()
        for step in range(steps):
            reward = 0.0
            # the action's forward records a graph the `.item()` throws away: the
            # constructor hands the model's parameters to an optimizer, so it has some
            self.experience = self.env.step(self.model(self.experience.state1).argmax().item())  # error: GL012
            reward += self.experience.reward
            self._backward(reward, self.experience.terminal1)
            episode_reward += reward
        return episode_reward
