"""Objects handed to a function as parameters (issue "Generalise": context flows from
callers to callees). A tracker or agent is built in one place and handed to the code
that uses it, so the class of the parameter, and what its methods are called with,
come from the callers:

- a logger's method that runs the model it is handed, called through a logger that is
  itself a parameter (`logger.log_accuracy(x, y, model)` in `fit(logger, ...)`): the
  caller search counts a call on an object whose class cannot be told as one of the
  method's calls when every call must pass a model, which only makes the question
  stricter;
- an agent built at the call (`rollout(Agent(), 5)`): the parameter is an instance of
  that class, so `agent.act(obs)` runs `Agent.act`, whose `.item()` hands back a plain
  number that carries no graph;
- a model an agent keeps (`self.policy = policy`) while its constructor hands the
  model's `.parameters()` to an optimizer: the constructor shows that what it keeps
  holds parameters, whoever builds the agent."""

from __future__ import annotations

from test_project import findings, write

LOGGER = """
    class Logger:
        def __init__(self):
            self.history = []

        def log_accuracy(self, x, y, model):
            predictions = model(x)
            self.history.append(predictions.argmax(1).eq(y).float().mean().item())
"""

FIT = """
    import torch
    import torch.nn as nn

    from logger import Logger


    def fit(logger, x, y):
        model = nn.Linear(4, 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(10):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            logger.log_accuracy(x, y, model)


    fit(Logger(), torch.randn(8, 4), torch.randint(0, 3, (8,)))
"""


def test_a_method_handed_a_model_through_an_object_of_unknown_class(tmp_path):
    write(tmp_path, {"logger.py": LOGGER, "main.py": FIT})
    assert findings(tmp_path / "logger.py") == [(6, "GL012")]


def test_a_caller_that_hands_something_else_keeps_it_silent(tmp_path):
    # one call passes a plain function, not a module with weights
    mixed = (
        FIT
        + """

    def plain(x):
        return x


    Logger().log_accuracy(torch.randn(2, 4), 0, plain)
"""
    )
    write(tmp_path, {"logger.py": LOGGER, "main.py": mixed})
    assert findings(tmp_path / "logger.py") == []


AGENT = """
    import torch
    import torch.nn as nn


    class Agent:
        def __init__(self):
            self.net = nn.Linear(4, 2)
            self.opt = torch.optim.Adam(self.net.parameters())

        def eval_mode(self):
            self.net.eval()

        def act(self, obs):
            return self.net(obs).argmax().item()
"""

ROLLOUT = """
    import torch

    from agent import Agent


    def rollout(agent, steps):
        agent.eval_mode()
        total = 0
        for _ in range(steps):
            total += agent.act(torch.randn(4))
        return total


    print(rollout(Agent(), 5))
"""


def test_an_agent_built_at_the_call_runs_its_own_method(tmp_path):
    write(tmp_path, {"agent.py": AGENT, "run.py": ROLLOUT})
    # `act` hands back a number: the rollout keeps no graph; the waste is inside `act`,
    # where the agent's network is in eval mode whenever a caller runs it
    assert findings(tmp_path / "run.py") == []
    assert findings(tmp_path / "agent.py") == [(14, "GL004")]


def test_an_agent_named_before_the_call_is_the_same(tmp_path):
    named = ROLLOUT.replace(
        "print(rollout(Agent(), 5))", "agent = Agent()\n    print(rollout(agent, 5))"
    )
    write(tmp_path, {"agent.py": AGENT, "run.py": named})
    assert findings(tmp_path / "run.py") == []


KEEPER = """
    import torch
    import torch.nn as nn


    class Agent:
        def __init__(self, policy):
            self.policy = policy
            self.opt = torch.optim.Adam(policy.parameters(), lr=1e-3)

        def greedy(self, obs):
            return self.policy(obs).argmax().item()
"""


def test_a_kept_model_whose_parameters_the_constructor_asks_for(tmp_path):
    # no construction of the agent in sight: the constructor's own `.parameters()`
    # says that what it keeps holds parameters
    write(tmp_path, {"agent.py": KEEPER})
    assert findings(tmp_path / "agent.py") == [(11, "GL012")]


def test_a_kept_callable_whose_parameters_nobody_asks_for(tmp_path):
    kept = KEEPER.replace("self.opt = torch.optim.Adam(policy.parameters(), lr=1e-3)", "pass")
    write(tmp_path, {"agent.py": kept})
    assert findings(tmp_path / "agent.py") == []
