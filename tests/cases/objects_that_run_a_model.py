"""Objects that are not modules but run one (analysis/callees.py, forwards.py): an
instance of a class of this file, called, runs the class's `__call__`; a function
that returns what another function of the file computes from parameters computes from
them too. A callable object that runs no model records nothing."""

import torch
from torch import nn


class Detector:
    def __init__(self, model):
        self.model = model

    def predict(self, x):
        return self.model(x).softmax(-1)

    def __call__(self, x):
        return self.predict(x)


class Counter:
    def __init__(self):
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        return x.sum()


model = nn.Linear(4, 3)
detector = Detector(model)
scores = detector(torch.randn(2, 4))  # error: GL012
print(scores.max(1)[0].tolist())
print(detector.predict(torch.randn(2, 4)).argmax(1).tolist())  # error: GL012
counter = Counter()
print(counter(torch.randn(2, 4)).item())
