"""A container module built empty and filled afterwards holds what it is filled with
(census, dev half: yandexdataschool/Practical_RL week04_approx_rl, whose seminar builds
its Q-network as `network = nn.Sequential()` then `network.add_module(...)`). A policy's
greedy action read as a number from such a network records a graph for nothing; one
filled only with parameterless layers holds no weights. None may be flagged, except
where marked."""
import torch
import torch.nn as nn

network = nn.Sequential()
network.add_module("layer1", nn.Linear(4, 16))
network.add_module("relu1", nn.ReLU())
network.add_module("layer2", nn.Linear(16, 2))

activations = nn.Sequential()
activations.add_module("relu", nn.ReLU())
activations.append(nn.Tanh())

encoder = nn.Sequential()
encoder.extend([nn.Linear(4, 8), nn.Tanh()])


def get_action(state):
    q_values = network(torch.tensor(state)).detach().numpy()  # error: GL012
    return int(q_values.argmax())


def squash(state):
    return activations(torch.tensor(state)).argmax().item()


def encode(state):
    return encoder(torch.tensor(state)).argmax().item()  # error: GL012
