"""GL001's buffer written in place with the forward's graph (BigGAN's hand-written batch
norm, `self.stored_mean[:] = ... + mean * m`): every shape of in-place write, and the traps
that record nothing: a write through `.data`, of a detached value or a number, under
`no_grad`, into an attribute that is no registered buffer, and a count."""

import torch
from torch import nn


class ManualNorm(nn.Module):
    def __init__(self, channels, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("stored_mean", torch.zeros(channels))
        self.register_buffer("stored_var", torch.ones(channels))
        self.register_buffer("counter", torch.zeros(1))
        self.register_buffer("ema", torch.zeros(channels))
        self.plain = torch.zeros(channels)
        self.accumulate = False

    def forward(self, x):
        if self.training:
            mean, var = x.mean(0), x.var(0)
            if self.accumulate:
                self.stored_mean[:] = self.stored_mean + mean.data
                self.stored_var[:] = self.stored_var + var.detach()
                self.counter += 1.0
            else:
                self.stored_mean[:] = self.stored_mean * (1 - self.momentum) + mean * self.momentum  # error: GL001
                self.stored_var += var  # error: GL001
            self.ema.mul_(0.9).add_(mean)  # error: GL001
            self.ema.copy_(mean)  # error: GL001
            self.ema.data.mul_(0.9).add_(mean)
            self.plain[:] = mean
            self.counter[:] = mean.sum().item()
            steps = 3
            self.counter[:] = steps
            with torch.no_grad():
                self.stored_mean.copy_(mean)
            return (x - mean) / (var + 1e-5).sqrt()
        return (x - self.stored_mean) / (self.stored_var + 1e-5).sqrt()


class NormUnderNoGrad(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.register_buffer("running", torch.zeros(channels))

    @torch.no_grad()
    def update(self, x):
        self.running[:] = x.mean(0)

    def forward(self, x):
        self.update(x)
        return x - x.mean(0)
