"""GL003 with the gradients `autograd.grad` hands back: `p = p - lr * g` over
`zip(params, grads)` rebinds the loop's name, and the model never moves, as with
`p.grad`. A rebinding whose new value is read afterwards (`fast.append(p)`) makes fast
weights on purpose, and is not reported."""

import torch
from torch import nn

model = nn.Linear(3, 1)
params = list(model.parameters())


def sgd_step(loss, lr=0.1):
    grads = torch.autograd.grad(loss, params)
    for p, g in zip(params, grads):
        p = p - lr * g  # error: GL003


def sgd_step_model(loss, lr=0.1):
    for p, g in zip(model.parameters(), torch.autograd.grad(loss, model.parameters())):
        p = p - lr * g  # error: GL003


def fast_weights(loss, lr=0.1):
    grads = torch.autograd.grad(loss, params, create_graph=True)
    fast = []
    for p, g in zip(params, grads):
        p = p - lr * g
        fast.append(p)
    return fast


def fast_weights_from_grad(lr=0.1):
    fast = {}
    for name, p in model.named_parameters():
        p = p - lr * p.grad
        fast[name] = p
    return fast


def scaled(values, scale):
    noise = torch.randn(3)
    for v, g in zip(values, noise):
        v = v - scale * g
    return values


def rebinding_then_logged(lr=0.1):
    for p in model.parameters():
        p = p - lr * p.grad  # error: GL003
        print(p.norm())
