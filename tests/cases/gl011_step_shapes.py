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
