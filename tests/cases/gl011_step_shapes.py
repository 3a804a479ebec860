"""GL011's optimizer-step form beyond the runnable fixtures: a backward through a
module's forward after an optimizer holding the module's parameters stepped (markers),
and the look-alikes that must stay silent (no marker)."""

import itertools

import torch
import torch.nn.functional as F
from torch import nn


def mlp(n_in, n_out):
    return nn.Sequential(nn.Linear(n_in, 16), nn.ReLU(), nn.Linear(16, n_out))


def retain_graph_then_step(x):
    model = mlp(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(x).mean()
    loss.backward(retain_graph=True)
    opt.step()
    loss.backward()  # error: GL011


def chained_parameters(x):
    encoder, head = mlp(4, 8), mlp(8, 1)
    opt = torch.optim.Adam(itertools.chain(encoder.parameters(), head.parameters()))
    aux = head(encoder(x)).pow(2).mean()
    main = head(encoder(x)).mean()
    main.backward()
    opt.step()
    aux.backward()  # error: GL011


def param_groups_and_submodule(x):
    model = nn.Module()
    model.body = mlp(4, 1)
    opt = torch.optim.SGD([{"params": model.parameters(), "lr": 0.1}], momentum=0.9)
    first = model.body(x).mean()
    second = model.body(x).abs().mean()
    first.backward()
    opt.step()
    second.backward()  # error: GL011


def update(optimizer, loss):
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def step_in_a_helper_function(obs, actions, target):
    qf, policy = mlp(6, 1), mlp(4, 2)
    q_opt = torch.optim.Adam(qf.parameters())
    policy_loss = -qf(torch.cat([obs, policy(obs)], 1)).mean()
    q_loss = F.mse_loss(qf(torch.cat([obs, actions], 1)), target)
    update(q_opt, q_loss)
    policy_loss.backward()  # error: GL011


def backward_in_a_helper_function(obs, actions, target):
    # sac-discrete's learn(): each loss goes to one helper that backpropagates and steps
    qf, actor = mlp(6, 1), mlp(4, 2)
    critic_opt = torch.optim.Adam(qf.parameters())
    actor_opt = torch.optim.Adam(actor.parameters())
    actor_loss = -qf(torch.cat([obs, actor(obs)], 1)).mean()
    critic_loss = F.mse_loss(qf(torch.cat([obs, actions], 1)), target)
    update(critic_opt, critic_loss)
    update(actor_opt, actor_loss)  # error: GL011


def update_params(optim, loss, retain_graph=False):
    # sac-discrete's utils.update_params: the backward may keep the graph
    optim.zero_grad()
    loss.backward(retain_graph=retain_graph)
    optim.step()


def backward_in_a_helper_that_may_retain(obs, actions, target):
    qf, actor = mlp(6, 1), mlp(4, 2)
    critic_opt = torch.optim.Adam(qf.parameters())
    actor_opt = torch.optim.Adam(actor.parameters())
    actor_loss = -qf(torch.cat([obs, actor(obs)], 1)).mean()
    critic_loss = F.mse_loss(qf(torch.cat([obs, actions], 1)), target)
    update_params(critic_opt, critic_loss)
    update_params(actor_opt, actor_loss)  # error: GL011


def helper_backward_before_the_step(obs, actions, target):
    qf, actor = mlp(6, 1), mlp(4, 2)
    critic_opt = torch.optim.Adam(qf.parameters())
    actor_opt = torch.optim.Adam(actor.parameters())
    actor_loss = -qf(torch.cat([obs, actor(obs)], 1)).mean()
    critic_loss = F.mse_loss(qf(torch.cat([obs, actions], 1)), target)
    update(actor_opt, actor_loss)
    update(critic_opt, critic_loss)


def helper_backward_of_another_loss(obs, actions, target):
    qf, actor = mlp(6, 1), mlp(4, 2)
    critic_opt = torch.optim.Adam(qf.parameters())
    actor_opt = torch.optim.Adam(actor.parameters())
    critic_loss = F.mse_loss(qf(torch.cat([obs, actions], 1)), target)
    update(critic_opt, critic_loss)
    actor_loss = -qf(torch.cat([obs, actor(obs)], 1)).mean()
    update(actor_opt, actor_loss)


def amp_scaler_step(x, scaler):
    model = mlp(4, 1)
    opt = torch.optim.Adam(model.parameters())
    first = model(x).mean()
    second = model(x).pow(2).mean()
    scaler.scale(first).backward()
    scaler.step(opt)
    scaler.scale(second).backward()  # error: GL011


class SAC:
    """rlkit's shape: the optimizer class is handed in, and built in `__init__`."""

    def __init__(self, qf, policy, optimizer_class=torch.optim.Adam):
        self.qf = qf
        self.policy = policy
        self.qf_optimizer = optimizer_class(self.qf.parameters(), lr=3e-4)
        self.policy_optimizer = optimizer_class(self.policy.parameters(), lr=3e-4)

    def train(self, obs, actions, target):
        new_actions = self.policy(obs)
        policy_loss = -self.qf(obs, new_actions).mean()
        qf_loss = F.mse_loss(self.qf(obs, actions), target)
        self.qf_optimizer.zero_grad()
        qf_loss.backward()
        self.qf_optimizer.step()
        self.policy_optimizer.zero_grad()
        policy_loss.backward()  # error: GL011
        self.policy_optimizer.step()


class LossesStoredThenCriticStepped:
    """The actor's loss stored on the object by one method, the critic stepped by a
    second, the loss backpropagated by a third: `update` runs them in that order."""

    def __init__(self):
        self.actor, self.critic = mlp(4, 2), mlp(6, 1)
        self.actor_opt = torch.optim.Adam(self.actor.parameters())
        self.critic_opt = torch.optim.Adam(self.critic.parameters())

    def compute_losses(self, obs, actions, target):
        self.actor_loss = -self.critic(torch.cat([obs, self.actor(obs)], 1)).mean()
        self.critic_loss = F.mse_loss(self.critic(torch.cat([obs, actions], 1)), target)

    def update_critic(self):
        self.critic_opt.zero_grad()
        self.critic_loss.backward()
        self.critic_opt.step()

    def update_actor(self):
        self.actor_opt.zero_grad()
        self.actor_loss.backward()  # error: GL011
        self.actor_opt.step()

    def update(self, obs, actions, target):
        self.compute_losses(obs, actions, target)
        self.update_critic()
        self.update_actor()


class ForwardInTheCallerStepInAHelper:
    """The forward in the caller, stored on the object; the step two methods down."""

    def __init__(self):
        self.net = mlp(4, 1)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def first_update(self):
        self.first.backward(retain_graph=True)
        self.opt.step()

    def step_all(self):
        self.first_update()

    def second_update(self):
        self.second.backward()  # error: GL011

    def train_step(self, x):
        out = self.net(x)
        self.first = out.mean()
        self.second = out.pow(2).mean()
        self.step_all()
        self.second_update()


# -- traps ---------------------------------------------------------------------------


def step_after_the_backward(x):
    model = mlp(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(x).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()


def step_without_gradients(x):
    """No backward before the step in this function: with gradients cleared to None the
    step changes nothing (measured: no error)."""
    model = mlp(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(x).mean()
    opt.zero_grad()
    opt.step()
    loss.backward()


def step_only_sometimes(x, it):
    model = mlp(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    first = model(x).mean()
    second = model(x).abs().mean()
    first.backward()
    if it % 4 == 0:
        opt.step()
    second.backward()


def step_in_a_loop_between(x, n):
    model = mlp(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    first = model(x).mean()
    second = model(x).abs().mean()
    first.backward()
    for _ in range(n):
        opt.step()
    second.backward()


def step_in_the_other_branch(x, warm):
    model = mlp(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    first = model(x).mean()
    second = model(x).abs().mean()
    first.backward(retain_graph=True)
    if warm:
        opt.step()
    else:
        second.backward()


def optimizer_over_other_modules(z, real):
    generator, discriminator = mlp(2, 4), mlp(4, 1)
    g_opt = torch.optim.Adam(generator.parameters())
    fake = generator(z)
    g_loss = -discriminator(fake).mean()
    d_loss = discriminator(fake.detach()).mean() - discriminator(real).mean()
    g_loss.backward()
    g_opt.step()
    d_loss.backward()


def parameters_built_elsewhere(x, params):
    model = mlp(4, 1)
    opt = torch.optim.SGD(params, lr=0.1)
    first = model(x).mean()
    second = model(x).abs().mean()
    first.backward()
    opt.step()
    second.backward()


def forward_under_no_grad(x, actor):
    critic = mlp(4, 1)
    critic_opt = torch.optim.SGD(critic.parameters(), lr=0.1)
    with torch.no_grad():
        baseline = critic(x)
    critic_loss = critic(x).pow(2).mean()
    actor_loss = (actor(x) - baseline).pow(2).mean()
    critic_loss.backward()
    critic_opt.step()
    actor_loss.backward()


def frozen_critic(x, actor):
    critic = mlp(4, 1)
    critic.requires_grad_(False)
    critic_opt = torch.optim.SGD(critic.parameters(), lr=0.1)
    actor_loss = -critic(actor(x)).mean()
    actor(x).mean().backward()
    critic_opt.step()
    actor_loss.backward()


def loss_recomputed_after_step(x):
    model = mlp(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(x).mean()
    loss.backward()
    opt.step()
    loss = model(x).abs().mean()
    loss.backward()


def graph_freed_first(x):
    """The second backward raises "Trying to backward through the graph a second time"
    first: not this rule's message."""
    model = mlp(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(x).mean()
    loss.backward()
    opt.step()
    loss.backward()


def single_layer_on_data(x):
    layer = nn.Linear(4, 1)
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    first = layer(x).mean()
    second = layer(x).abs().mean()
    first.backward()
    opt.step()
    second.backward()


def differentiable_optimizer_step(x, diffopt):
    model = mlp(4, 1)
    inner = model(x).pow(2).mean()
    outer = model(x).mean()
    diffopt.step(inner)
    outer.backward()


def scheduler_step(x):
    model = mlp(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, 10)
    first = model(x).mean()
    second = model(x).abs().mean()
    first.backward(retain_graph=True)
    scheduler.step()
    second.backward()
    opt.step()


class ActorUpdatedBeforeCritic:
    """The fix of the shape above: the actor's loss is backpropagated before the critic
    steps."""

    def __init__(self):
        self.actor, self.critic = mlp(4, 2), mlp(6, 1)
        self.actor_opt = torch.optim.Adam(self.actor.parameters())
        self.critic_opt = torch.optim.Adam(self.critic.parameters())

    def compute_losses(self, obs, actions, target):
        self.actor_loss = -self.critic(torch.cat([obs, self.actor(obs)], 1)).mean()
        self.critic_loss = F.mse_loss(self.critic(torch.cat([obs, actions], 1)), target)

    def update_critic(self):
        self.critic_opt.zero_grad()
        self.critic_loss.backward()
        self.critic_opt.step()

    def update_actor(self):
        self.actor_opt.zero_grad()
        self.actor_loss.backward()
        self.actor_opt.step()

    def update(self, obs, actions, target):
        self.compute_losses(obs, actions, target)
        self.update_actor()
        self.update_critic()

    def update_recomputed(self, obs, actions, target):
        """The losses are computed again after the critic's step: a new graph."""
        self.compute_losses(obs, actions, target)
        self.update_critic()
        self.compute_losses(obs, actions, target)
        self.update_actor()

    def update_critic_sometimes(self, obs, actions, target, it):
        self.compute_losses(obs, actions, target)
        if it % 2 == 0:
            self.update_critic()
        self.update_actor()


class Pix2Pix:
    """pix2pix's order: D is stepped on a detached fake, then G's loss goes through a
    forward of D run after that step, and through G, which has not stepped."""

    def __init__(self):
        self.netG, self.netD = mlp(4, 4), mlp(8, 1)
        self.optimizer_G = torch.optim.Adam(self.netG.parameters())
        self.optimizer_D = torch.optim.Adam(self.netD.parameters())

    def forward(self):
        self.fake_B = self.netG(self.real_A)

    def backward_D(self):
        fake_AB = torch.cat((self.real_A, self.fake_B), 1)
        pred_fake = self.netD(fake_AB.detach())
        pred_real = self.netD(torch.cat((self.real_A, self.real_B), 1))
        self.loss_D = (pred_fake.mean() - pred_real.mean()) * 0.5
        self.loss_D.backward()

    def backward_G(self):
        fake_AB = torch.cat((self.real_A, self.fake_B), 1)
        pred_fake = self.netD(fake_AB)
        self.loss_G = -pred_fake.mean() + F.l1_loss(self.fake_B, self.real_B)
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()


class GraphFreedInAnotherMethod:
    """The first backward frees the graph the second needs: that one raises "backward
    through the graph a second time" first, not this rule's error."""

    def __init__(self):
        self.net = mlp(4, 1)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def forward(self, x):
        out = self.net(x)
        self.first = out.mean()
        self.second = out.pow(2).mean()

    def first_update(self):
        self.first.backward()
        self.opt.step()

    def second_update(self):
        self.second.backward()

    def train_step(self, x):
        self.forward(x)
        self.first_update()
        self.second_update()


class DetachedWhereRead:
    """The critic's value is detached where the actor's loss reads it: nothing of the
    critic's graph, kept by `retain_graph=True`, reaches the actor's backward."""

    def __init__(self):
        self.actor, self.critic = mlp(4, 1), mlp(4, 1)
        self.critic_opt = torch.optim.SGD(self.critic.parameters(), lr=0.1)

    def evaluate(self, x):
        self.baseline = self.critic(x)
        self.critic_loss = self.baseline.pow(2).mean()

    def update_critic(self):
        self.critic_loss.backward(retain_graph=True)
        self.critic_opt.step()

    def update_actor(self, x):
        (self.actor(x) - self.baseline.detach()).pow(2).mean().backward()

    def train_step(self, x):
        self.evaluate(x)
        self.update_critic()
        self.update_actor(x)


class LossesReturned:
    """The losses come back from a method of the object (`policy_loss, q_loss =
    self.losses(...)`), the critic's backward and step follow, then the actor's
    backward through the critic's forward in `losses`."""

    def __init__(self):
        self.qf, self.actor = mlp(6, 1), mlp(4, 2)
        self.q_opt = torch.optim.Adam(self.qf.parameters())
        self.actor_opt = torch.optim.Adam(self.actor.parameters())

    def losses(self, obs, actions, target):
        actor_loss = -self.qf(torch.cat([obs, self.actor(obs)], 1)).mean()
        q_loss = F.mse_loss(self.qf(torch.cat([obs, actions], 1)), target)
        return actor_loss, q_loss

    def actor_loss(self, obs):
        return -self.qf(torch.cat([obs, self.actor(obs)], 1)).mean()

    def learn(self, obs, actions, target):
        actor_loss, q_loss = self.losses(obs, actions, target)
        self.q_opt.zero_grad()
        q_loss.backward()
        self.q_opt.step()
        actor_loss.backward()  # error: GL011

    def learn_through_a_helper(self, obs, actions, target):
        actor_loss = self.actor_loss(obs)
        q_loss = F.mse_loss(self.qf(torch.cat([obs, actions], 1)), target)
        update(self.q_opt, q_loss)
        actor_loss.backward()  # error: GL011

    def learn_in_helpers(self, obs, actions, target):
        # sac-discrete's learn() before commit 88508ac, its helper in this file
        actor_loss, q_loss = self.losses(obs, actions, target)
        update(self.q_opt, q_loss)
        update(self.actor_opt, actor_loss)  # error: GL011

    def learn_in_helpers_actor_first(self, obs, actions, target):
        actor_loss, q_loss = self.losses(obs, actions, target)
        update(self.actor_opt, actor_loss)
        update(self.q_opt, q_loss)

    def learn_actor_first(self, obs, actions, target):
        actor_loss, q_loss = self.losses(obs, actions, target)
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        self.q_opt.zero_grad()
        q_loss.backward()
        self.q_opt.step()

    def learn_recomputed(self, obs, actions, target):
        _, q_loss = self.losses(obs, actions, target)
        self.q_opt.zero_grad()
        q_loss.backward()
        self.q_opt.step()
        self.actor_loss(obs).backward()
