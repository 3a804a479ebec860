"""GL013 shapes beyond the runnable fixtures: the findings that must stay (markers) and
the look-alikes that must stay silent (the traps of issue 22)."""

import copy

import torch
import torch.nn.functional as F
from torch import autograd, nn

q_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(q_net.parameters(), lr=1e-3)


# -- findings ---------------------------------------------------------------------------


def hand_written_online_target(s, a, r, s2, done, gamma=0.99):
    q = q_net(s).gather(1, a).squeeze(1)
    backup = r + gamma * (1 - done) * q_net(s2).max(1)[0]  # error: GL013
    loss = ((q - backup) ** 2).mean()
    loss.backward()


def weighted_squared_error(s, a, r, s2, weights):
    q = q_net(s).gather(1, a).squeeze(1)
    target = r + 0.9 * q_net(s2).max(1)[0]  # error: GL013
    loss = (weights * (q - target).pow(2)).mean()
    loss.backward()


def td_target(network, reward, next_state, gamma):
    return reward + gamma * network(next_state).max(1)[0]  # error: GL013


def target_from_a_helper_given_the_network(s, a, r, s2):
    q = q_net(s).gather(1, a).squeeze(1)
    loss = F.smooth_l1_loss(q, td_target(q_net, r, s2, 0.99))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


class DQNAgent:
    def __init__(self):
        self.dqn = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        self.dqn_target = copy.deepcopy(self.dqn)
        self.criterion = nn.MSELoss()
        self.optimizer = torch.optim.Adam(self.dqn.parameters())

    def compute_loss(self, s, a, r, s2):
        q = self.dqn(s).gather(1, a)
        next_q = self.dqn_target(s2).max(1, keepdim=True)[0]  # error: GL013
        return self.criterion(q, r + 0.99 * next_q)

    def update(self, batch):
        loss = self.compute_loss(*batch)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


class HandedDQNAgent:
    """The agent is handed its network and copies it for the target: every
    construction of the agent in this file hands a network with weights."""

    def __init__(self, q):
        self.q = q
        self.target = copy.deepcopy(q)
        self.optimizer = torch.optim.Adam(self.q.parameters())

    def update(self, s, a, r, s2):
        target = r + 0.99 * self.target(s2).max(1)[0]  # error: GL013
        q = self.q(s).gather(1, a).squeeze(1)
        loss = F.mse_loss(q, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


handed_agent = HandedDQNAgent(nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2)))


def perceptual_loss_through_an_unfrozen_extractor(x, optimizer):
    transformer = nn.Sequential(nn.Conv2d(3, 3, 3, padding=1))
    features = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 8, 3))
    y = transformer(x)
    loss = nn.MSELoss()(features(y), features(x))  # error: GL013
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


# -- traps --------------------------------------------------------------------------------


def ddpg_actor_loss_through_the_critic(actor, critic, actor_optimizer, s):
    actor_loss = -critic(torch.cat([s, actor(s)], 1)).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()


def target_under_no_grad(s, a, r, s2):
    q = q_net(s).gather(1, a).squeeze(1)
    with torch.no_grad():
        target = r + 0.99 * q_net(s2).max(1)[0]
    F.mse_loss(q, target).backward()


def target_detached_or_cut(s, a, r, s2):
    q = q_net(s).gather(1, a).squeeze(1)
    target = r + 0.99 * q_net(s2).max(1)[0].detach()
    other = r + 0.99 * q_net(s2).data.max(1)[0]
    (F.mse_loss(q, target) + F.mse_loss(q, other)).backward()


def teacher_frozen_by_a_loop(student, x):
    teacher = nn.Sequential(nn.Linear(8, 5))
    for p in teacher.parameters():
        p.requires_grad = False
    loss = F.kl_div(F.log_softmax(student(x), -1), F.softmax(teacher(x), -1))
    loss.backward()


def returns_on_the_left(value_net, states, returns):
    # PPO's value loss: the regression target is data, written first
    value_loss = 0.5 * (returns - value_net(states)).pow(2).mean()
    value_loss.backward()


def gradient_penalty(critic, interpolated):
    c = critic(interpolated)
    gradients = autograd.grad(c, interpolated, torch.ones_like(c), create_graph=True)[0]
    penalty = ((1 - gradients.norm(2, dim=1)) ** 2).mean()
    penalty.backward()


def gaussian_log_density(encoder, x, z):
    mu, log_var = encoder(x).chunk(2, dim=1)
    log_p = torch.sum(-0.5 * (log_var + (z - mu) ** 2) / log_var.exp(), dim=1)
    return log_p


def quantile_targets_used_for_their_shape(dqn, dqn_target, s, s2, r):
    current = dqn(s)
    with torch.no_grad():
        target = r + 0.99 * dqn_target(s2)
    td_errors = target.unsqueeze(1) - current.unsqueeze(2)
    loss = F.smooth_l1_loss(current.unsqueeze(2).expand_as(td_errors), target.unsqueeze(1).expand_as(td_errors))
    loss.backward()


def consistency_between_two_views(model, x1, x2):
    # the Pi-model: gradient through both branches may be meant
    loss = F.mse_loss(model(x1), model(x2))
    loss.backward()


def feature_matching_through_the_trained_discriminator(generator, discriminator, z, real):
    d_optimizer = torch.optim.Adam(discriminator.parameters())
    loss = F.mse_loss(discriminator(generator(z)), discriminator(real))
    loss.backward()
    d_optimizer.step()


def a_metric_never_differentiated(student, teacher, x):
    return F.mse_loss(student(x), teacher(x)).item()


def mixing_coefficients_onto_the_best_action(s, optimizer):
    # pmoe_ppo: the target is a one-hot of the indices of Q's maximum
    policy = nn.Linear(4, 2)
    _, best = q_net(s).max(-1)
    loss = F.mse_loss(policy(s), F.one_hot(best, 2).float())
    optimizer.zero_grad()
    loss.backward()
