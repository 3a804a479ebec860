"""Mode switches made by the project's own helpers, and the module role of an object
whose class is out of sight (issue "Generalise", section 2: roles inferred from use,
context from callers to callees)."""

from __future__ import annotations

import libcst as cst
from test_project import findings, write

from gradlint.analysis.facts import FileFacts
from gradlint.engine import lint_file

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

    def fit(self, x):
        loss = self.body(x).pow(2).mean()
        loss.backward()
        return loss
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
    fitted = policy.fit(obs)
    return action, z, inferred, text, fitted
"""


def test_a_method_of_an_object_built_out_of_sight_is_a_forward(tmp_path):
    # `registry.make(cfg)` builds a class nobody here can name; the object is put in
    # eval mode, so it is a module. `predict` is a forward: every class of the project
    # that defines it (the abstract one aside) runs its layers with autograd on.
    # Traps: `noise` makes a tensor without layers, `infer` runs them under no_grad,
    # `generate` no class of the project defines (a library's may run under no_grad),
    # `fit` differentiates what its layers compute.
    # the registry imports the nets it builds: that links nets.py to run.py
    registry = "from nets import Policy\n\n\ndef make(cfg):\n    return Policy()\n"
    write(tmp_path, {".git/HEAD": "", "nets.py": NETS, "run.py": RUN, "registry.py": registry})
    assert findings(tmp_path / "run.py") == [(7, "GL004")]


def test_without_the_defining_class_the_method_is_no_forward(tmp_path):
    # trap: the same script with no class of the project defining `predict`
    write(tmp_path, {".git/HEAD": "", "run.py": RUN})
    assert findings(tmp_path / "run.py") == []


HELPERS = """
import torch
from torch import nn

net = nn.Linear(4, 2)


def set_mode(model, training):
    model.train(training)


def predict(x, training):
    set_mode(net, False)
    greedy = net(x).argmax().item()
    set_mode(net, True)
    sampled = net(x).argmax().item()
    set_mode(net, training)
    unknown = net(x).argmax().item()
    return greedy, sampled, unknown


class Agent:
    def __init__(self):
        self.actor = nn.Linear(4, 2)

    def train(self, training=True):
        self.actor.train(training)

    def act(self, obs):
        return self.actor(obs)

    def switch(self, mode):
        self.actor.train(mode)

    def evaluate(self, obs):
        self.switch(False)
        return self.actor(obs).argmax().item()


def rollout(obs):
    agent = Agent()
    agent.train(False)
    return agent.act(obs).argmax().item()
"""


def test_a_helper_switches_with_the_flag_its_call_passes(tmp_path):
    # `set_mode(net, False)` and `self.switch(False)` put the model in eval mode in the
    # caller: `model.train(training)` takes the flag the call binds (GL004, the helper's
    # switch related); with True or an unknown flag the forward is GL012's, in training
    # mode or either. `Agent`, of no torch base, is a module by its `train`, which
    # switches its actor: `agent.act(obs)` is a forward of it.
    write(tmp_path, {"run.py": HELPERS})
    result = lint_file(tmp_path / "run.py")
    assert [(d.start.line, d.code) for d in result.diagnostics] == [
        (13, "GL004"),
        (15, "GL012"),
        (17, "GL012"),
        (36, "GL004"),
        (42, "GL004"),
    ]
    first = result.diagnostics[0]
    assert [(r.message, r.start.line) for r in first.related] == [
        ("`net` comes back in eval mode from this call", 12),
        ("put in eval mode here, inside the helper", 8),
    ]


RUN_EPOCH = """
import torch
from torch import nn


def run_epoch(model, batches, opt, train):
    model.train(train)
    total = 0.0
    for x, y in batches:
        loss = (model(x) - y).pow(2).mean()
        if train:
            opt.zero_grad()
            loss.backward()
            opt.step()
        total += loss.item()
    return total


def main(batches):
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    run_epoch(model, batches, opt, True)
    run_epoch(model, batches, opt, False)
"""


def test_one_function_for_both_phases_switched_by_its_flag(tmp_path):
    # `model.train(train)`: the call with train=False runs the forward in eval mode and
    # no backward, so it is GL004's, with that call related
    write(tmp_path, {"run.py": RUN_EPOCH})
    result = lint_file(tmp_path / "run.py")
    assert [(d.start.line, d.code) for d in result.diagnostics] == [(9, "GL004")]
    assert [(r.message, r.start.line) for r in result.diagnostics[0].related] == [
        ("`model` is put in eval mode here", 6),
        ("called here with train=False, outside no_grad", 22),
    ]


OWN_MANAGER = """
import contextlib

from torch import nn

policy = nn.Linear(4, 2)


class frozen:
    def __init__(self, *nets):
        self.nets = nets

    def __enter__(self):
        for net in self.nets:
            net.train(False)

    def __exit__(self, *args):
        for net in self.nets:
            net.train(True)


@contextlib.contextmanager
def sampling(net):
    net.train()
    yield net


def act(obs):
    with frozen(policy):
        action = policy(obs).argmax().item()
    with sampling(policy):
        sampled = policy(obs).argmax().item()
    return action, sampled
"""


def test_an_eval_mode_manager_of_the_file_itself(tmp_path):
    # the manager beside its use, as one imported from utils.py is read: eval mode in
    # its block (GL004); one that switches to train mode is no eval manager (GL012)
    write(tmp_path, {".git/HEAD": "", "run.py": OWN_MANAGER})
    assert findings(tmp_path / "run.py") == [(29, "GL004"), (31, "GL012")]


TORCH_CLASS_METHODS = """
import torch
from torch import nn
from agents import make_agent


def evaluate(obs):
    attn = nn.MultiheadAttention(8, 2)
    agent = make_agent()
    attn.eval()
    agent.eval()
    query = torch.randn(4, 2, 8)
    padding = torch.zeros(2, 4, dtype=torch.bool)
    mask = attn.merge_masks(None, padding, query)
    action = agent.act(query)
    return mask, action
"""


def test_a_torch_class_is_in_sight_for_every_forward_question():
    """Whether the receiver's class is out of sight is one predicate: a module built
    from torch's own class (`nn.MultiheadAttention`) is in sight, so its
    `merge_masks(...)` (a mask helper, no layers) is not taken for a forward by its
    use, as a method of an object from a factory (`make_agent()`) still is."""
    facts = FileFacts(cst.parse_module(TORCH_CLASS_METHODS))
    calls = {
        call.func.attr.value: call
        for call in facts.index.calls
        if type(call.func) is cst.Attribute and call.func.attr.value in ("merge_masks", "act")
    }
    modules = {"attn", "agent"}
    assert facts.forwards.method_forward(calls["merge_masks"], modules) is None
    assert facts.forwards.method_forward(calls["act"], modules) == "agent"
