"""GL015 and loops over the steps of one input: an RNN cell stepped through the time steps
of a sequence (by index over one of its dimensions, or over its slices) is one forward of
a depth the input fixes, as `nn.GRU` over the whole sequence is; nothing grows from one
call to the next. A count the run chooses (`range(n)`) walks as many steps as it asks."""

import torch
from torch import nn

cell = nn.GRUCell(4, 8)


def encode_by_size(x):
    h = torch.zeros(1, 8)
    for t in range(x.size(0)):
        h = cell(x[t], h)
    return h


def encode_by_shape(x):
    h = torch.zeros(1, 8)
    for t in range(x.shape[1]):
        h = cell(x[:, t], h)
    return h


def encode_by_len_of_a_tensor():
    x = torch.randn(20, 1, 4)
    h = torch.zeros(1, 8)
    for t in range(len(x)):
        h = cell(x[t], h)
    return h


def encode_unbound(x):
    h = torch.zeros(1, 8)
    for x_t in x.unbind(0):
        h = cell(x_t, h)
    return h


def encode_split(x):
    h = torch.zeros(1, 8)
    for x_t in torch.split(x, 1):
        h = cell(x_t.squeeze(0), h)
    return h


def integrate_on_a_grid(field, n):
    # the steps of a grid of time points are as many as the run asks: still flagged
    ts = torch.linspace(0, 1, n)
    x = torch.zeros(1, 8)
    for i in range(ts.size(0)):
        x = x + 0.1 * cell(torch.zeros(1, 4), x)  # error: GL015
    return x


def generate(n):
    h = torch.zeros(1, 8)
    x = torch.zeros(1, 4)
    for t in range(n):
        h = cell(x, h)  # error: GL015
    return h


def generate_as_long_as_the_input(x):
    # the indices of the input's dimension, never read: no step of the input is walked,
    # the loop feeds its own output back as many times as the input is long
    h = torch.zeros(1, 8)
    inp = x[0]
    for _ in range(x.shape[0]):
        h = cell(inp, h)  # error: GL015
        inp = h[:, :4]  # error: GL015
    return h


def read_only_on_the_first_step(x):
    # the index read in the body: the steps of the input, as above
    h = torch.zeros(1, 8)
    for t in range(x.size(0)):
        h = cell(x[t] if t == 0 else h[:, :4], h)
    return h
