"""General capabilities behind the census's development-half misses (issue "Generalise",
section 2): real pitfalls carry their expected code on the flagged line; the traps carry
none."""

import numpy as np
import torch
from torch import nn

critic = nn.Linear(4, 1)
generator = nn.Linear(8, 4)
classifier = nn.Linear(4, 1)
opt_d = torch.optim.Adam(critic.parameters())
opt_g = torch.optim.Adam(generator.parameters())


# 1. requires_grad switches are read in order in the forward's own function: a GAN
# freezes its critic for the generator's step and unfreezes it for its own step, so a
# validation forward after the unfreeze records a graph nobody uses.
def train_gan(loader, val_loader, noise):
    for real in loader:
        for p in critic.parameters():
            p.requires_grad_(False)  # freeze the critic for the generator's step
        frozen_score = critic(real).mean().item()  # records nothing: frozen, plain input
        fake = generator(noise)
        g_loss = -critic(fake).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        for p in critic.parameters():
            p.requires_grad_(True)
        d_loss = critic(real).mean() - critic(fake.detach()).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        costs = []
        for images in val_loader:
            with torch.no_grad():
                images_v = images  # the block covers only this alias
            score = critic(images_v)  # error: GL012
            costs.append(-score.mean().cpu().data.numpy())
        print(np.mean(costs), frozen_score)


# 2. a model wrapped in nn.DataParallel holds the parameters of the module it wraps.
def validate(net, loader):
    parallel = nn.DataParallel(nn.Linear(4, 2))
    total = 0
    for x, y in loader:
        total += (parallel(x).argmax(1) == y).sum().item()  # error: GL012
    return total


# 3. a forward whose result is only compared: the bool tensor has no history.
def accuracy(inputs, labels):
    return torch.mean(((classifier(inputs) > 0.5) == labels).float())  # error: GL012


# Traps.
# A forward compared inside a loss that is differentiated: its graph is used.
def hinge_step(x):
    out = classifier(x)
    loss = (out * (out > 0).float()).mean()
    loss.backward()


# `x is None` is no comparison of values: nothing here reads the forward as numbers.
def maybe_forward(x):
    if x is None:
        return None
    return classifier(x)


# A forward after a freeze in the same function, with no unfreeze before it.
def frozen_eval(x):
    probe = nn.Linear(4, 1)
    probe.requires_grad_(False)
    value = probe(x).sum().item()
    probe.requires_grad_()
    return value
