"""GL001 across calls: a model that keeps its recurrent state on itself in `forward`
(`out, self.hidden = self.rnn(x, self.hidden)`) carries each iteration's graph into
the next one when a loop calls it and backpropagates every iteration; the second
backward raises (checked on torch). Not when the forward detaches what it stores,
resets it first thing (itself or through a method), the loop resets or detaches it
between calls (an assignment, a method of the class, a helper handed the model), the
forward runs under no_grad, or what the attribute keeps is a count."""

import torch
from torch import nn


class CharRNN(nn.Module):
    def __init__(self, vocab=10, width=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.rnn = nn.LSTM(width, width, batch_first=True)
        self.out = nn.Linear(width, vocab)
        self.hidden = None
        self.calls = 0

    def forward(self, x):
        self.calls = self.calls + 1
        out, self.hidden = self.rnn(self.embed(x), self.hidden)
        return self.out(out)

    def init_hidden(self):
        self.hidden = None

    def detach_hidden(self):
        if self.hidden is not None:
            self.hidden = tuple(h.detach() for h in self.hidden)


class ThroughAName(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 4)
        self.h = torch.zeros(1, 4)

    def forward(self, x):
        h = self.h
        h = self.cell(x, h)
        self.h = h
        return h


class ResetFirst(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 4, batch_first=True)
        self.hidden = None

    def reset(self, batch):
        self.hidden = torch.zeros(1, batch, 4)

    def forward(self, x):
        self.reset(x.size(0))
        out, self.hidden = self.rnn(x, self.hidden)
        return out


class DetachedWhereStored(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 4, batch_first=True)
        self.hidden = None

    def forward(self, x):
        out, hidden = self.rnn(x, self.hidden)
        self.hidden = hidden.detach()
        return out


def fit(batches, epochs=2):
    model = CharRNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        model.init_hidden()  # once an epoch: the second batch still crosses into the first
        for x, y in batches:
            logits = model(x)  # error: GL001
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()


def fit_through_a_name(xs):
    model = ThroughAName()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in xs:
        loss = model(x).sum()  # error: GL001
        opt.zero_grad()
        loss.backward()
        opt.step()


def fit_reset_each_batch(batches):
    model = CharRNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        model.hidden = None
        loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()


def fit_detach_each_batch(batches):
    model = CharRNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        model.detach_hidden()
        loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()


def repackage(model):
    model.hidden = None


def fit_reset_by_a_helper(batches):
    model = CharRNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        repackage(model)
        loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()


def fit_reset_first(xs):
    model = ResetFirst()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in xs:
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


def fit_detached(xs):
    model = DetachedWhereStored()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in xs:
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


def generate(model: CharRNN, x, steps=5):
    with torch.no_grad():
        for _ in range(steps):
            x = model(x).argmax(-1)
    return x


class RunningStatistics(nn.Module):
    """Running statistics kept with history only sit on the module (a leak, not the
    crash this finding claims): what the forward returns does not read them."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.running = torch.zeros(4)

    def forward(self, x):
        h = self.fc(x)
        self.running = 0.9 * self.running + 0.1 * h.mean(0)
        return h


def fit_running_statistics(xs):
    model = RunningStatistics()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in xs:
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


class ForgetsByDeletion(CharRNN):
    hidden = None  # what `self.hidden` reads once the instance's own is deleted


def fit_delete_each_batch(batches):
    model = ForgetsByDeletion()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        del model.hidden
        logits = model(x)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()


class Trainer:
    """A trainer that keeps the model its construction hands it: the model's class is
    the one every construction of the trainer in this file builds it from."""

    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self, batches):
        for x, y in batches:
            logits = self.model(x)  # error: GL001
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()


def fit_with_a_trainer(batches):
    Trainer(CharRNN()).fit(batches)
