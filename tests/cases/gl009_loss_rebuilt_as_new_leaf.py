"""GL009 on a loss rebuilt as a new leaf from data with no history
(`torch.tensor(loss.item(), requires_grad=True)`, `Variable(loss.data,
requires_grad=True)`) in a function that steps an optimizer: the backward stops at the
leaf and the step applies nothing. Not a leaf backpropagated in a demo that steps
nothing, not a leaf made from plain data (an input to optimise), and not a loss
computed from such a leaf through the model. Lint only: the markers are the expected
findings."""

import numpy as np
import torch
from torch import nn
from torch.autograd import Variable

model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def train_step(x, y):
    opt.zero_grad()
    value = nn.functional.mse_loss(model(x), y)  # error: GL012
    loss = torch.tensor(value.item(), requires_grad=True)
    loss.backward()  # error: GL009
    opt.step()


def train_step_variable(x, y):
    opt.zero_grad()
    out = model(x)
    loss = Variable((out - y).pow(2).mean().data, requires_grad=True)
    loss.backward()  # error: GL009
    opt.step()


def demo():
    out = model(torch.randn(2, 3))  # error: GL012
    leaf = torch.tensor(out.sum().item(), requires_grad=True)
    leaf.backward()
    return leaf.grad


def optimise_input(target):
    x = torch.tensor(np.zeros((1, 3), dtype=np.float32), requires_grad=True)
    step = torch.optim.SGD([x], lr=0.1)
    loss = (model(x) - target).pow(2).sum()
    loss.backward()
    step.step()


def fit_a_constant(data):
    c = torch.tensor(float(np.mean(data)), requires_grad=True)
    step = torch.optim.SGD([c], lr=0.1)
    c.backward()
    step.step()
