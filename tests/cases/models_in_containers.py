"""Models kept in dicts and lists, lint only: markers are the expected findings.

A constant-keyed subscript (`model["f_base_net"]`, `nets[0]`, `self.nets["G"]`) names one
module as a dotted name does, so its eval switch, its forward, its `.parameters()` and its
freezing are facts about the same module. A key that is not a constant, or a container
rebound between the switch and the forward, leaves the mode unknown: silent."""

import copy

import torch
from torch import nn


class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Linear(4, 2)


# -- shapes: a forward of an eval'd module held in a container ------------------------


def validate_dict(loader):
    model = dict.fromkeys(["f_base_net", "optimizer"])
    model["f_base_net"] = nn.Linear(4, 2)
    model["optimizer"] = torch.optim.SGD(model["f_base_net"].parameters(), lr=0.1)
    model["f_base_net"].eval()
    total = 0.0
    for x, _ in loader:
        out = model['f_base_net'].forward(x)  # error: GL004
        total += out.sum().item()
    return total


def validate_list(loader, nets):
    opt = torch.optim.SGD(nets[0].parameters(), lr=0.1)
    nets[0].eval()
    outs = []
    for x in loader:
        outs.append(nets[0](x))  # error: GL004
    return outs, opt


class Trainer:
    def __init__(self):
        self.nets = {"G": nn.Linear(4, 4), "D": nn.Linear(4, 1)}
        self.opt = torch.optim.Adam(self.nets["G"].parameters())

    def sample(self, z):
        self.nets["G"].eval()
        fake = self.nets["G"](z)  # error: GL004
        return fake


def run(net, loader):
    total = 0.0
    for x in loader:
        total += net(x).sum().item()
    return total


def validate_through_helper(loader):
    model = {"f": nn.Linear(4, 2)}
    opt = torch.optim.SGD(model["f"].parameters(), lr=0.1)
    model["f"].eval()
    print(run(model["f"], loader))  # error: GL004
    return opt


def evaluate(net, loader):
    net.eval()
    with torch.no_grad():
        return sum(net(x).sum().item() for x in loader)


def train_then_evaluate(loader, epochs):
    nets = {"G": nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))}
    opt = torch.optim.SGD(nets["G"].parameters(), lr=0.1)
    nets["G"].train()
    for _ in range(epochs):
        for x in loader:
            loss = nets["G"](x).pow(2).mean()  # error: GL016
            opt.zero_grad()
            loss.backward()
            opt.step()
        evaluate(nets["G"], loader)


# -- traps -----------------------------------------------------------------------------


def key_not_constant(loader, nets, key):
    opt = torch.optim.SGD(nets[key].parameters(), lr=0.1)
    nets[key].eval()
    return [nets[key](x) for x in loader], opt


def other_key(loader):
    nets = {"G": nn.Linear(4, 4), "D": nn.Linear(4, 4)}
    opt = torch.optim.SGD(nets["D"].parameters(), lr=0.1)
    nets["G"].eval()
    return [nets["D"](x) for x in loader], opt


def dict_rebound(loader):
    model = {"f": nn.Linear(4, 2)}
    opt = torch.optim.SGD(model["f"].parameters(), lr=0.1)
    model["f"].eval()
    model = {"f": nn.Linear(4, 2)}
    return [model["f"](x) for x in loader], opt


def holder_rebound(loader):
    model = Holder()
    opt = torch.optim.SGD(model.f.parameters(), lr=0.1)
    model.f.eval()
    model = Holder()
    return [model.f(x) for x in loader], opt


def frozen_in_dict(loader):
    model = {"frozen": nn.Linear(4, 2)}
    opt = torch.optim.SGD(model["frozen"].parameters(), lr=0.1)
    model["frozen"].requires_grad_(False)
    model["frozen"].eval()
    return [model["frozen"](x) for x in loader], opt


def switched_back(loader):
    nets = [nn.Linear(4, 2)]
    opt = torch.optim.SGD(nets[0].parameters(), lr=0.1)
    nets[0].eval()
    nets[0].train()
    return [nets[0](x) for x in loader], opt


def evaluate_other_key(loader, epochs, key):
    nets = {"G": nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))}
    opt = torch.optim.SGD(nets["G"].parameters(), lr=0.1)
    nets["G"].train()
    for _ in range(epochs):
        for x in loader:
            loss = nets["G"](x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        evaluate(nets[key], loader)


# -- an element picked by any key: which one may be unknown, but every element holds
# weights (suraj-nair-1's MADDPG: `self.actors = [Actor(...) for i in
# range(n_agents)]`, then `self.actors[i](state)` and `self.critics[i](s)` for logging)


class Agents:
    def __init__(self, n_agents):
        self.actors = [Holder() for _ in range(n_agents)]
        self.critics = nn.ModuleList([nn.Linear(4, 1), nn.Linear(4, 1)])
        self.actors_target = copy.deepcopy(self.actors)
        self.mixed = [nn.Linear(4, 2), nn.ReLU()]

    def act(self, state, i):
        return self.actors[i](state).argmax().item()  # error: GL012

    def log_values(self, state, i):
        q = self.critics[i](state)  # error: GL012
        return q.mean().item()

    def log_target(self, state, i):
        return self.actors_target[i].forward(state).max().item()  # error: GL012

    def mixed_output(self, state, i):
        return self.mixed[i](state).sum().item()  # one element has no weights: silent

    # a constant key picks one element, which holds weights as each of them does
    def log_first_value(self, state):
        return self.critics[0](state).mean().item()  # error: GL012

    def first_actor(self, state):
        return self.actors[0].forward(state).argmax().item()  # error: GL012

    def mixed_first(self, state):
        return self.mixed[1](state).sum().item()  # the ReLU, or any of them: silent
