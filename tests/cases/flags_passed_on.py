"""A flag handed on by a wrapper: `eval_step` calls `process(x, y, do_train=False)`,
which calls `run(x, y, do_train=do_train)`, whose backward is under `if do_train:`.
The evaluating call of the wrapper fixes the way through `run`: its forward records a
graph nobody differentiates (GL004 when `run` switches to eval on that way, GL012 when
it stays in training mode), and the fix wraps that outer call. A wrapper whose callers
all train, or pass a variable, says nothing. Lint only: markers are the expected
findings."""

import torch
from torch import nn


class Runner:
    def __init__(self):
        self.net = nn.Linear(4, 2)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def train_step(self, x, y):
        return self.process(x, y, do_train=True)

    def eval_step(self, x, y):
        return self.process(x, y, do_train=False)

    def process(self, x, y, do_train):
        return self.run(x, y, do_train=do_train)

    def run(self, x, y, do_train=True):
        if do_train:
            self.net.train()
        else:
            self.net.eval()
        loss = nn.functional.cross_entropy(self.net(x), y)  # error: GL004
        if do_train:
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        return loss.item()


class PhaseRunner:
    def __init__(self):
        self.net = nn.Linear(4, 2)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def fit(self, x, y):
        return self.epoch(x, y, train=True)

    def score(self, x, y):
        return self.epoch(x, y, train=False)

    def epoch(self, x, y, train):
        return self.step(x, y, train)

    def step(self, x, y, train):
        loss = nn.functional.mse_loss(self.net(x), y)  # error: GL012
        if train:
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        return loss.item()


class OnlyTraining:
    def __init__(self):
        self.net = nn.Linear(4, 2)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def fit(self, x, y, flag):
        self.epoch(x, y, True)
        return self.epoch(x, y, flag)

    def epoch(self, x, y, train):
        return self.step(x, y, train)

    def step(self, x, y, train):
        loss = nn.functional.mse_loss(self.net(x), y)
        if train:
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        return loss.item()
