"""GL015's guess from the recurrent shape (`y, h = f(x, h)` with `f` out of sight) and a
method of an object the code builds from a class out of sight: a network is called
(`net(x, h)`), not asked for a named method, so `scheduler.step(out, t, sample)` says
nothing about weights. Called directly, the same kind of object is still guessed."""

import torch
from somewhere import DDPMScheduler, Decoder


def dummy_model(sample, t):
    return sample * t / (t + 1)


def full_loop(num_steps):
    scheduler = DDPMScheduler(num_train_timesteps=num_steps)
    sample = torch.rand(4, 3, 8, 8)
    for t in range(num_steps):
        sample = scheduler.step(dummy_model(sample, t), t, sample)
    return sample


def full_loop_by_output(num_steps):
    scheduler = DDPMScheduler(num_train_timesteps=num_steps)
    sample = torch.rand(4, 3, 8, 8)
    for t in range(num_steps):
        output = scheduler.step(dummy_model(sample, t), t, sample)
        sample = output
    return sample


def decode(num_steps):
    decoder = Decoder()
    h = torch.zeros(1, 8)
    x = torch.zeros(1, 4)
    for _ in range(num_steps):
        out, h = decoder(x, h)  # error: GL015
    return out
