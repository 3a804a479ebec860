"""Methods reached through a class hierarchy of one file, lint only: markers are the
expected findings.

A trainer's base class switches the model to eval mode and calls `self.evaluation()`,
which a subclass overrides (few_shot_meta_learning's MLBaseClass and its Maml, Abml,
Simpa); or a subclass calls a prediction helper its base class defines. The mode at the
call site reaches the method that runs (the traps below keep it from reaching what does
not run)."""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


# -- shape: the base class's eval switch reaches the subclass's MAML evaluation --------


class MetaLearner:
    def evaluation(self, net, x_t, y_t, x_v, y_v):
        raise NotImplementedError

    def evaluate(self, net, tasks):
        net.eval()
        scores = [self.evaluation(net, *task) for task in tasks]
        net.train()
        return scores


class Maml(MetaLearner):
    def evaluation(self, net, x_t, y_t, x_v, y_v):
        loss = nn.functional.cross_entropy(net(x_t), y_t)
        grads = torch.autograd.grad(loss, list(net.parameters()))
        logits = net(x_v)  # error: GL004
        return (logits.argmax(1) == y_v).float().mean().item(), len(grads)


# -- shape: the base class's eval switch reaches the subclass's prediction --------------


class Trainer:
    def predict(self, net, x):
        raise NotImplementedError

    def validate(self, net, batches):
        net.eval()
        outputs = [self.predict(net, x) for x in batches]  # error: GL004
        net.train()
        return [o.argmax(1).tolist() for o in outputs]


class Classifier(Trainer):
    def predict(self, net, x):
        return net(x)


# -- shape: the subclass's eval switch reaches the base class's helper -----------------


class Predictor:
    def predict(self, net, x):
        return net(x).argmax(1)


class Scorer(Predictor):
    def score(self, net, x, y):
        net.eval()
        correct = (self.predict(net, x) == y).sum().item()  # error: GL004
        net.train()
        return correct


# -- traps -----------------------------------------------------------------------------


class Regressor(Trainer):
    # overrides the caller too: Trainer.validate never runs on a Regressor, and its own
    # validate trains on what predict returns
    def validate(self, net, batches):
        net.eval()
        outputs = [self.predict(net, x) for x in batches]
        torch.stack(outputs).sum().backward()
        return outputs

    def predict(self, net, x):
        return net(x)


class Validator:
    def predict(self, net, x):
        raise NotImplementedError

    def validate(self, net, batches):
        net.eval()
        outputs = [self.predict(net, x) for x in batches]
        net.train()
        return [o.argmax(1).tolist() for o in outputs]


class Labeller(Validator):
    def predict(self, net, x):
        return net(x)


class Tuner(Validator):
    # inherits validate, and its predict adapts first: the call must keep recording
    # (for a Labeller too, whose forward alone could go under no_grad)
    def predict(self, net, x):
        grads = torch.autograd.grad(net(x).sum(), list(net.parameters()))
        return net(x) - grads[0].sum()


class GuardedScorer(Predictor):
    # the inherited helper is called under no_grad
    def score(self, net, x, y):
        net.eval()
        with torch.no_grad():
            correct = (self.predict(net, x) == y).sum().item()
        net.train()
        return correct


# -- a base class's call decides the grad mode its subclass's override runs in --------


class Learner:
    def fit(self, x):
        self.loss(x).backward()
        with torch.no_grad():
            self.update(0.1)


class Linear(Learner, nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(3))

    def loss(self, x):
        return (self.w * x).sum()

    def update(self, lr):
        # trap: Learner.fit, the only caller, runs it under no_grad
        self.w -= lr * self.w.grad


class EagerLearner:
    def fit(self, x):
        self.loss(x).backward()
        self.update(0.1)


class EagerLinear(EagerLearner, nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(3))

    def loss(self, x):
        return (self.w * x).sum()

    def update(self, lr):
        self.w -= lr * self.w.grad  # error: GL002
