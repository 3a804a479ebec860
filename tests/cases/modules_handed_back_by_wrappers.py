"""Functions that hand back the module they are given, still training: compiled
(`torch.compile`), scripted or traced, copied (`copy.deepcopy`), reparametrised
(`spectral_norm`, `weight_norm`). A forward of what they return, only read as numbers,
records a graph for nothing; before, only a rebinding of a name already known to hold
weights (`model = torch.compile(model)`) was."""

import copy

import torch
import torch.nn as nn
from torch.nn.utils import spectral_norm


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)


compiled = torch.compile(Net())
scripted = torch.jit.script(Net())
shadow = copy.deepcopy(Net())
critic = spectral_norm(nn.Linear(3, 1))
model = Net()
model = torch.compile(model)
activation = torch.jit.script(nn.ReLU())


def predictions(x):
    return compiled(x).argmax(1).tolist()  # error: GL012


def scripted_prediction(x):
    return scripted(x).argmax(1).item()  # error: GL012


def shadow_prediction(x):
    return shadow(x).argmax(1).item()  # error: GL012


def critic_score(x):
    return critic(x).mean().item()  # error: GL012


def rebound_prediction(x):
    return model(x).argmax(1).item()  # error: GL012


# -- a parameterless module, wrapped: silent ---------------------------------------------


def active_units(x):
    return activation(x).gt(0).sum().item()
