"""GL001's state kept by a module, the traps a review of the first cut reproduced: a
reset by a method of a subclass, state stored only in eval mode or under no_grad inside
forward, a forward whose output is detached before the loss or whose model is frozen,
state repackaged in forward or detached tensor by tensor in the loop; each runs cleanly
on torch. And the shapes the first cut missed, each raising on torch: an input detached
inside the call (the state is not), a detached copy only logged, an augmented store."""

import torch
from torch import nn


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 4, batch_first=True)
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.rnn(x, self.hidden)
        return out


class Child(Base):
    def reset(self):
        self.hidden = None


def fit_child(xs):
    model = Child()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in xs:
        model.reset()
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


class EvalOnly(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 4, batch_first=True)
        self.hidden = None

    def forward(self, x):
        if self.training:
            return self.rnn(x)[0]
        out, self.hidden = self.rnn(x, self.hidden)
        return out


def fit_eval_only(xs):
    model = EvalOnly()
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in xs:
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


def fit_detached_features(xs):
    encoder = Base()
    head = nn.Linear(4, 1)
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    for x in xs:
        feats = encoder(x).detach()  # error: GL012
        loss = head(feats).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


def fit_frozen(xs):
    encoder = Base()
    encoder.requires_grad_(False)
    head = nn.Linear(4, 1)
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    for x in xs:
        loss = head(encoder(x)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


class NoGradInside(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 4)
        self.out = nn.Linear(4, 4)
        self.hidden = torch.zeros(2, 4)

    def forward(self, x):
        with torch.no_grad():
            self.hidden = self.cell(x, self.hidden)
        return self.out(x + self.hidden)


def fit_no_grad_inside(xs):
    model = NoGradInside()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in xs:
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


class RepackagedInForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 4, batch_first=True)
        self.hidden = None

    def forward(self, x):
        out, hidden = self.rnn(x, self.hidden)
        self.hidden = repackage_hidden(hidden)
        return out


def fit_repackaged_in_forward(xs):
    model = RepackagedInForward()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in xs:
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 4, batch_first=True)
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.rnn(x, self.hidden)
        return out


def fit_detach_elements(xs):
    model = LSTMModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for i, x in enumerate(xs):
        if model.hidden is not None:
            for h in model.hidden:
                h.detach_()
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


class DetachedInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 4, batch_first=True)
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.rnn(x.detach(), self.hidden)
        return out


def fit_detached_input(xs):
    model = DetachedInput()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in xs:
        loss = model(x).sum()  # error: GL001
        opt.zero_grad()
        loss.backward()
        opt.step()


def fit_logged_detach(xs):
    model = LSTMModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in xs:
        loss = model(x).sum()  # error: GL001
        if model.hidden is not None:
            print(model.hidden[0].detach().norm())  # a read, no reset
        opt.zero_grad()
        loss.backward()
        opt.step()


class Accumulating(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.h = torch.zeros(2, 4)

    def forward(self, x):
        self.h += self.lin(x)
        return self.h


def fit_accumulating(xs):
    model = Accumulating()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in xs:
        loss = model(x).sum()  # error: GL001
        opt.zero_grad()
        loss.backward()
        opt.step()


class Fitter:
    """A trainer built once with a model that keeps state and once with one that does
    not: which forward `self.model(x)` runs is not one class's, so nothing is said."""

    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self, xs):
        for x in xs:
            loss = self.model(x).sum()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()


def fit_two_fitters(xs):
    Fitter(LSTMModel()).fit(xs)
    Fitter(nn.Linear(4, 4)).fit(xs)


class DetachingFitter:
    """The trainer's loop detaches the model's state between calls."""

    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self, xs):
        for x in xs:
            loss = self.model(x).sum()
            self.model.hidden = tuple(h.detach() for h in self.model.hidden)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()


def fit_detaching_fitter(xs):
    DetachingFitter(LSTMModel()).fit(xs)
