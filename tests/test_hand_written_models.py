"""A plain class that keeps tensors requiring grad in `self` is a hand-written model: its
`self.forward(x)` runs with weights (issue "Generalise": the fresh development
repository deeplearning-models' logistic regression, a course's class without
nn.Module)."""

from __future__ import annotations

import textwrap

from gradlint.config import Config
from gradlint.engine import lint_source

LOGISTIC = """
    import torch


    class LogisticRegression:
        def __init__(self, num_features):
            self.weights = torch.zeros(num_features, 1, requires_grad=KEEP)
            self.bias = torch.zeros(1, requires_grad=KEEP)

        def forward(self, x):
            return torch.sigmoid(torch.mm(x, self.weights) + self.bias)

        def predict_labels(self, x):
            probas = self.forward(x)
            return (probas >= 0.5).float()

        def train(self, x, y, epochs):
            for e in range(epochs):
                cost = torch.nn.functional.binary_cross_entropy(self.forward(x), y)
                cost.backward()
                with torch.no_grad():
                    self.weights -= 0.1 * self.weights.grad
                    self.bias -= 0.1 * self.bias.grad
                self.weights.grad.zero_()
                self.bias.grad.zero_()
                print("acc %.2f" % self.predict_labels(x).eq(y).float().mean())
    """


def _found(source: str) -> list[tuple[str, int]]:
    found = lint_source(textwrap.dedent(source), "t.py", Config(preview=True))
    return [(d.code, d.start.line) for d in found]


def test_a_plain_class_with_weights_that_require_grad_runs_a_forward():
    assert _found(LOGISTIC.replace("KEEP", "True")) == [("GL012", 14)]


def test_a_plain_class_with_constant_tensors_is_no_model():
    assert _found(LOGISTIC.replace("KEEP", "False")) == []
