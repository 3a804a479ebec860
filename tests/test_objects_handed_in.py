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
  number that carries no graph; the same for an agent a runner keeps
  (`self.agent = agent`, every construction handing it an Agent);
- a model an agent keeps (`self.policy = policy`) while its constructor hands the
  model's `.parameters()` to an optimizer: the constructor shows that what it keeps
  holds parameters, whoever builds the agent."""

from __future__ import annotations

from test_project import findings, preview_findings, write

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


# -- what a call on an object of unknown class may be instead (review of the change) ----

PROBE = """
    class LinearProbe:
        def __init__(self):
            self.scores = []

        def evaluate(self, score_fn, x, y):
            self.scores.append(score_fn(x).argmax(1).eq(y).float().mean().item())
"""

METRICS = """
    import torch


    @torch.no_grad()
    def evaluate(model, x, y):
        return model(x).argmax(1).eq(y).float().mean().item()
"""

TRAIN_WITH_METRICS = """
    import torch
    import torch.nn as nn

    import metrics
    from probe import LinearProbe

    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    model = nn.Linear(4, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(metrics.evaluate(model, x, y))
    probe = LinearProbe()
"""


def test_a_function_of_an_imported_module_is_no_call_of_the_method(tmp_path):
    # `metrics.evaluate(model, ...)` is a module's function: no call of
    # `LinearProbe.evaluate` passes it a model
    write(tmp_path, {"probe.py": PROBE, "metrics.py": METRICS, "train.py": TRAIN_WITH_METRICS})
    assert findings(tmp_path / "probe.py") == []


TRAINER = """
    import torch
    import torch.nn as nn

    from probe import LinearProbe


    class Trainer:
        @torch.no_grad()
        def evaluate(self, model, x, y):
            return model(x).argmax(1).eq(y).float().mean().item()


    def fit(trainer, x, y):
        model = nn.Linear(4, 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(10):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            trainer.evaluate(model, x, y)


    fit(Trainer(), torch.randn(8, 4), torch.randint(0, 3, (8,)))
    probe = LinearProbe()
"""


def test_another_class_with_a_method_of_that_name_leaves_the_calls_unknown(tmp_path):
    # `trainer.evaluate(model, ...)` may be Trainer's own method, as it is here
    write(tmp_path, {"probe.py": PROBE, "trainer.py": TRAINER})
    assert findings(tmp_path / "probe.py") == []


RANDOM_AGENT = """
    import random


    class RandomAgent:
        def eval_mode(self):
            pass

        def act(self, obs):
            return random.randrange(2)
"""

BASELINE = """
    import torch

    from agent import Agent
    from baselines import RandomAgent


    def evaluate(agent, episodes=5):
        agent.eval_mode()
        return sum(agent.act(torch.randn(4)) for _ in range(episodes))


    agent = Agent()
    print("random baseline", evaluate(RandomAgent()))
"""


def test_an_eval_switch_of_another_class_puts_no_agent_in_eval_mode(tmp_path):
    write(tmp_path, {"agent.py": AGENT, "baselines.py": RANDOM_AGENT, "main.py": BASELINE})
    assert (14, "GL004") not in findings(tmp_path / "agent.py")


DISTILLER = """
    import torch


    class Distiller:
        def __init__(self, student, teacher):
            self.student = student
            self.teacher = teacher
            for p in teacher.parameters():
                p.requires_grad = False
            self.opt = torch.optim.Adam(student.parameters(), lr=1e-3)

        def teacher_accuracy(self, x, y):
            return self.teacher(x).argmax(1).eq(y).float().mean().item()
"""


def test_a_model_the_constructor_freezes_is_not_trained_by_it(tmp_path):
    write(tmp_path, {"distiller.py": DISTILLER})
    assert findings(tmp_path / "distiller.py") == []


RUNNER = """
    import torch
    import torch.nn as nn


    class Runner:
        def __init__(self, policy):
            self.policy = policy
            if isinstance(policy, nn.Module):
                self.opt = torch.optim.Adam(policy.parameters(), lr=1e-3)

        def act(self, obs):
            return self.policy(obs).argmax().item()


    def heuristic(obs):
        return torch.stack([-obs[2], obs[2]])


    print(Runner(heuristic).act(torch.randn(4)))
"""


def test_the_constructions_in_sight_decide_before_the_constructor(tmp_path):
    write(tmp_path, {"runner.py": RUNNER})
    assert findings(tmp_path / "runner.py") == []


RUNNER_OF_AGENT = """
    import torch

    from agent import Agent


    class Runner:
        def __init__(self, agent, steps):
            self.agent = agent
            self.steps = steps

        def evaluate(self):
            self.agent.eval_mode()
            total = 0
            for _ in range(self.steps):
                total += self.agent.act(torch.randn(4))
            return total


    print(Runner(Agent(), 5).evaluate())
"""


def test_an_agent_kept_by_a_runner_runs_its_own_method(tmp_path):
    # `self.agent = agent`, and every construction hands an Agent: `act` returns a
    # number, so the sum carries no graph (GL015, a preview rule, said it did)
    write(tmp_path, {"agent.py": AGENT, "runner.py": RUNNER_OF_AGENT})
    assert preview_findings(tmp_path / "runner.py") == []


def test_an_agent_named_before_the_runner_is_built_is_the_same(tmp_path):
    named = RUNNER_OF_AGENT.replace(
        "print(Runner(Agent(), 5).evaluate())",
        "agent = Agent()\n    print(Runner(agent, 5).evaluate())",
    )
    write(tmp_path, {"agent.py": AGENT, "runner.py": named})
    assert preview_findings(tmp_path / "runner.py") == []


TD3 = """
    import torch
    import torch.nn as nn


    class TD3:
        def __init__(self):
            self.actor = nn.Linear(3, 1)
            self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=3e-4)

        def select_action(self, state):
            state = torch.FloatTensor(state.reshape(1, -1))
            return self.actor(state).cpu().data.numpy().flatten()
"""

EVAL_POLICY = """
    import numpy as np

    from td3 import TD3


    def eval_policy(policy, episodes=10):
        total = 0.0
        for _ in range(episodes):
            state = np.random.randn(3)
            for _ in range(20):
                action = policy.select_action(np.array(state))
                state = np.random.randn(3) + action.sum()
                total += float(state.sum())
        return total / episodes


    policy = TD3()
    print(eval_policy(policy))
"""


def test_a_method_that_returns_an_array_hands_back_no_graph(tmp_path):
    # `.numpy().flatten()`: an array's method gives an array. The forward inside
    # `select_action` is the finding; its caller only ever holds arrays (before, it was
    # told that `np.array(state)` raises on a tensor that requires grad)
    write(tmp_path, {"td3.py": TD3, "main.py": EVAL_POLICY})
    assert findings(tmp_path / "main.py") == []
    assert findings(tmp_path / "td3.py") == [(12, "GL012")]


# -- what the two changes above must not hide (review of them) ---------------------------

AGENTS = """
    import torch
    import torch.nn as nn


    class Agent:
        def __init__(self):
            self.net = nn.Linear(4, 2)
            self.opt = torch.optim.Adam(self.net.parameters())

        def eval_mode(self):
            self.net.eval()

        def act(self, obs):
            return self.net(obs).max().item()


    class ValueAgent(Agent):
        def act(self, obs):
            return self.net(obs).max()
"""

RUNNERS = """
    import torch

    from agents import Agent, ValueAgent


    class Runner:
        def __init__(self, agent, steps):
            self.agent = agent
            self.steps = steps

        def evaluate(self):
            total = 0
            for _ in range(self.steps):
                total += self.agent.act(torch.randn(4))
            return total


    class ValueRunner(Runner):
        pass


    print(Runner(Agent(), 5).evaluate())
    print(ValueRunner(ValueAgent(), 5).evaluate())
"""


def test_a_subclass_may_be_built_with_another_agent(tmp_path):
    write(tmp_path, {"agents.py": AGENTS, "runner.py": RUNNERS})
    assert (14, "GL015") in preview_findings(tmp_path / "runner.py")


def test_a_construction_in_another_file_may_hand_another_agent(tmp_path):
    demo = RUNNERS.replace("class ValueRunner(Runner):\n        pass\n", "").replace(
        "print(Runner(Agent(), 5).evaluate())\n    print(ValueRunner(ValueAgent(), 5).evaluate())",
        'if __name__ == "__main__":\n        print(Runner(Agent(), 5).evaluate())',
    )
    main = """
        from agents import ValueAgent
        from runner import Runner

        print(Runner(ValueAgent(), 5).evaluate())
    """
    write(tmp_path, {"agents.py": AGENTS, "runner.py": demo, "main.py": main})
    assert (14, "GL015") in preview_findings(tmp_path / "runner.py")


HELD_IN_A_DICT = """
    import torch
    import torch.nn as nn


    class Policy:
        def __init__(self):
            self.actor = nn.Linear(3, 1)
            self.opt = torch.optim.Adam(self.actor.parameters())

        def select_action(self, state):
            actions = {}
            actions["mean"] = self.actor(torch.FloatTensor(state.reshape(1, -1)))
            return actions["mean"]
"""

FEEDS_IT_TO_NUMPY = """
    import numpy as np

    from policy import Policy


    def eval_policy(policy, episodes=10):
        total = 0.0
        for _ in range(episodes):
            state = np.random.randn(3)
            for _ in range(20):
                action = policy.select_action(np.array(state))
                state = np.random.randn(3) + action.numpy()
                total += float(state.sum())
        return total / episodes


    print(eval_policy(Policy()))
"""


def test_an_entry_of_a_container_a_method_fills_is_no_plain_value(tmp_path):
    # `actions = {}` holds only what is put in it: here a forward's output, on which
    # `.numpy()` raises
    write(tmp_path, {"policy.py": HELD_IN_A_DICT, "main.py": FEEDS_IT_TO_NUMPY})
    assert (11, "GL012") in findings(tmp_path / "main.py")
