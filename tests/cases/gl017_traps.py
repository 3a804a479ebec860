"""GL017 on shapes beyond the runnable fixtures: what must be found (markers) and the
look-alikes that must stay silent (no marker)."""

import copy

import torch
import torch.nn as nn
from torch.autograd import Variable


class Tuple(nn.Module):
    def __init__(self):
        super().__init__()
        self.pair = nn.Linear(2, 2), nn.Linear(2, 2)  # error: GL017
        self.params = [nn.Parameter(torch.zeros(2)) for _ in range(3)]  # error: GL017
        self.old_style = Variable(torch.zeros(2), requires_grad=True)  # error: GL017
        self.grown = torch.zeros(2).requires_grad_()  # error: GL017


class Inserted(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.by_key = {}  # error: GL017
        self.by_key["enc"] = nn.GRU(d, d)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


class NoParams(nn.Module):
    def forward(self, x):
        return x * 2


class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = [Block() for _ in range(2)]  # error: GL017
        self.shapes = [NoParams() for _ in range(2)]


# -- traps --------------------------------------------------------------------------


class ConvertedLater(nn.Module):
    """AWD-LSTM: the plain list becomes a ModuleList a few lines later."""

    def __init__(self):
        super().__init__()
        self.rnns = [nn.LSTM(2, 2) for _ in range(2)]
        self.rnns = nn.ModuleList(self.rnns)


class OwnParameters(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(2, 2)]

    def parameters(self, recurse=True):
        return [p for layer in self.layers for p in layer.parameters()]


class SetattrLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(2, 2) for _ in range(2)]
        for i, layer in enumerate(self.layers):
            setattr(self, f"layer{i}", layer)


class RegisteredTensor(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.zeros(2, requires_grad=True)
        self.register_parameter("weight", nn.Parameter(self.w))
        self.frozen = torch.zeros(2, requires_grad=False)


class NotAModule:
    """An agent: a plain class holding networks and a log-alpha is no nn.Module."""

    def __init__(self):
        self.critics = [nn.Linear(2, 1) for _ in range(2)]
        self.log_alpha = torch.zeros(1, requires_grad=True)


class TargetCopies(nn.Module):
    """Copies kept out of the module's parameters on purpose (EMA, target networks)."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.targets = [copy.deepcopy(net)]


class GivenToOptimizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = [nn.Linear(2, 2) for _ in range(2)]
        params = [p for expert in self.experts for p in expert.parameters()]
        self.optimizer = torch.optim.SGD(params, lr=0.1)


class ChoiceByIndex(nn.Module):
    """A list of parameterless activations, indexed: nothing to register."""

    def __init__(self, use_tanh):
        super().__init__()
        self.activate = [nn.ReLU(), nn.Tanh()][use_tanh]
        self.sizes = (2, 4, 8)


# Census, dev half (pykan's `expand_depth`): a method that grows the model appends new
# Parameters, their trainability set by a flag, to a plain list; `requires_grad_`
# returns the Parameter, which the list leaves out of `parameters()` and `state_dict()`.
class Grown(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.width = width
        self.node_bias = []  # error: GL017

    def expand_depth(self, trainable):
        self.node_bias.append(nn.Parameter(torch.zeros(self.width)).requires_grad_(trainable))

    def forward(self, x):
        for bias in self.node_bias:
            x = x + bias
        return x
