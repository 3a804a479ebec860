"""GL013 on the development half's new repositories: a symmetric loss written target
first, a network that carries its own loss module and optimizer, a loss module built at
the top of the file. The findings that were missed or put on the wrong operand there."""

import torch
import torch.nn.functional as F
from torch import nn, optim

criterion = nn.MSELoss()


class Critic(nn.Module):
    """A network that builds its own optimizer and loss, as many RL tutorials do."""

    def __init__(self, lr):
        super().__init__()
        self.fc = nn.Linear(6, 1)
        self.optimizer = optim.Adam(self.parameters(), lr=lr)
        self.loss = nn.MSELoss()

    def forward(self, state, action):
        return self.fc(torch.cat([state, action], 1))


class Actor(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.optimizer = optim.Adam(self.parameters(), lr=lr)

    def forward(self, state):
        return torch.tanh(self.fc(state))


class QNetwork(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.optimizer = optim.Adam(self.parameters(), lr=lr)
        self.loss = nn.MSELoss()

    def forward(self, state):
        return self.fc(state)


class TD3Agent:
    def __init__(self):
        self.critic_1 = Critic(1e-3)
        self.target_critic_1 = Critic(1e-3)
        self.target_actor = Actor(1e-3)

    def learn(self, state, action, reward, state_):
        # the target is the first operand: `mse_loss(target, q1)` regresses q1 onto it
        target_actions = self.target_actor(state_)  # error: GL013
        q1_ = self.target_critic_1(state_, target_actions)
        q1 = self.critic_1(state, action)
        target = reward + 0.99 * q1_
        self.critic_1.optimizer.zero_grad()
        q1_loss = F.mse_loss(target, q1)
        q1_loss.backward()
        self.critic_1.optimizer.step()


class DQNAgent:
    def __init__(self):
        self.q_eval = QNetwork(1e-3)

    def learn(self, states, actions, rewards, states_):
        # the network's own `loss`, target first, the target from the online network
        idx = torch.arange(states.shape[0])
        q_pred = self.q_eval(states)[idx, actions]
        q_next = self.q_eval(states_)  # error: GL013
        q_target = rewards + 0.99 * q_next.max(1)[0]
        self.q_eval.optimizer.zero_grad()
        loss = self.q_eval.loss(q_target, q_pred)
        loss.backward()
        self.q_eval.optimizer.step()


class DuelingDoubleDQNAgent:
    def __init__(self):
        self.q_eval = QNetwork(1e-3)
        self.q_next = QNetwork(1e-3)

    def learn(self, states, actions, rewards, states_):
        # both operands join values; only `q_eval`'s optimizer is stepped: `q_next`'s
        # output is the target, run with autograd recording for nothing
        idx = torch.arange(states.shape[0])
        v_s = self.q_eval(states)
        q_pred = (v_s - v_s.mean(dim=1, keepdim=True))[idx, actions]
        v_next = self.q_next(states_)  # error: GL013
        q_next = v_next - v_next.mean(dim=1, keepdim=True)
        q_target = rewards + 0.99 * q_next.max(1)[0]
        self.q_eval.optimizer.zero_grad()
        loss = self.q_eval.loss(q_target, q_pred)
        loss.backward()
        self.q_eval.optimizer.step()


class DDPGAgent:
    def __init__(self):
        self.critic = Critic(1e-3)
        self.critic_target = Critic(1e-3)
        self.actor_target = Actor(1e-3)
        self.critic_optim = optim.Adam(self.critic.parameters())

    def update_policy(self, state, action, reward, next_state):
        # a loss module built at the top of the file, called in a method
        next_q = self.critic_target(next_state, self.actor_target(next_state))  # error: GL013
        target_q = reward + 0.99 * next_q
        self.critic.zero_grad()
        value_loss = criterion(self.critic(state, action), target_q)
        value_loss.backward()
        self.critic_optim.step()


class ClonedTargetDQNAgent:
    def __init__(self):
        self.q_eval = QNetwork(1e-3)

    def learn(self, states, actions, rewards, states_):
        # the target is the prediction's clone with the chosen actions' values written in
        idx = torch.arange(states.shape[0])
        q_pred = self.q_eval(states)
        q_target = q_pred.clone()
        q_next = self.q_eval(states_)  # error: GL013
        q_target[idx, actions] = rewards + 0.99 * q_next.max(1)[0]
        self.q_eval.optimizer.zero_grad()
        loss = self.q_eval.loss(q_target, q_pred)
        loss.backward()
        self.q_eval.optimizer.step()


# -- traps: the same shapes, right ---------------------------------------------------


class DetachedTD3Agent:
    def __init__(self):
        self.critic_1 = Critic(1e-3)
        self.target_critic_1 = Critic(1e-3)
        self.target_actor = Actor(1e-3)

    def learn(self, state, action, reward, state_):
        with torch.no_grad():
            target_actions = self.target_actor(state_)
            q1_ = self.target_critic_1(state_, target_actions)
            target = reward + 0.99 * q1_
        q1 = self.critic_1(state, action)
        self.critic_1.optimizer.zero_grad()
        q1_loss = F.mse_loss(target, q1)
        q1_loss.backward()
        self.critic_1.optimizer.step()


class DetachedDQNAgent:
    def __init__(self):
        self.q_eval = QNetwork(1e-3)

    def learn(self, states, actions, rewards, states_):
        idx = torch.arange(states.shape[0])
        q_pred = self.q_eval(states)[idx, actions]
        q_next = self.q_eval(states_).detach()
        q_target = rewards + 0.99 * q_next.max(1)[0]
        self.q_eval.optimizer.zero_grad()
        loss = self.q_eval.loss(q_target, q_pred)
        loss.backward()
        self.q_eval.optimizer.step()


class ClonedTargetUnderNoGrad:
    def __init__(self):
        self.q_eval = QNetwork(1e-3)

    def learn(self, states, actions, rewards, states_):
        idx = torch.arange(states.shape[0])
        q_pred = self.q_eval(states)
        q_target = q_pred.clone().detach()
        with torch.no_grad():
            q_target[idx, actions] = rewards + 0.99 * self.q_eval(states_).max(1)[0]
        self.q_eval.optimizer.zero_grad()
        loss = self.q_eval.loss(q_target, q_pred)
        loss.backward()
        self.q_eval.optimizer.step()


def distillation_target_first(student, teacher, x, opt):
    # `mse_loss(teacher_out, student_out)` with a frozen teacher: nothing to report
    teacher.requires_grad_(False)
    loss = F.mse_loss(teacher(x), student(x))
    opt.zero_grad()
    loss.backward()
    opt.step()
