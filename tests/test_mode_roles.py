"""Mode switches made by the project's own helpers, and the module role of an object
whose class is out of sight (issue "Generalise", section 2: roles inferred from use,
context from callers to callees)."""

from __future__ import annotations

from test_project import findings, write

NETS = """
import abc

import torch
from torch import nn


class Base:
    @abc.abstractmethod
    def predict(self, x):
        \"\"\"What every policy answers.\"\"\"


class Policy(Base):
    def __init__(self):
        self.body = nn.Linear(4, 2)

    def train(self, training=True):
        self.body.train(training)

    def predict(self, x):
        return self.body(x)

    def noise(self, n):
        return torch.randn(n, 2)

    def infer(self, x):
        with torch.no_grad():
            return self.body(x)
"""

RUN = """
import registry


def rollout(cfg, obs):
    policy = registry.make(cfg)
    policy.eval()
    action = policy.predict(obs).argmax().item()
    z = policy.noise(obs)
    inferred = policy.infer(obs).argmax().item()
    text = policy.generate(obs)
    return action, z, inferred, text
"""


def test_a_method_of_an_object_built_out_of_sight_is_a_forward(tmp_path):
    # `registry.make(cfg)` builds a class nobody here can name; the object is put in
    # eval mode, so it is a module. `predict` is a forward: every class of the project
    # that defines it (the abstract one aside) runs its layers with autograd on.
    # Traps: `noise` makes a tensor without layers, `infer` runs them under no_grad,
    # `generate` no class of the project defines (a library's may run under no_grad).
    write(tmp_path, {".git/HEAD": "", "nets.py": NETS, "run.py": RUN})
    assert findings(tmp_path / "run.py") == [(7, "GL004")]


def test_without_the_defining_class_the_method_is_no_forward(tmp_path):
    # trap: the same script with no class of the project defining `predict`
    write(tmp_path, {".git/HEAD": "", "run.py": RUN})
    assert findings(tmp_path / "run.py") == []
