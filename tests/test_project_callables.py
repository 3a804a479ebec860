"""A state threaded through a callable whose class is out of sight (`actions, states =
self.agent(obs, states)`) is a recurrent step only when nothing says otherwise: a
project whose callables run their `__call__` under a grad mode of their own (ptan's
agents, `@torch.no_grad()`) records nothing there (issue "Generalise", a development-half
false GL015)."""

from __future__ import annotations

from test_project import write

from gradlint.config import Config
from gradlint.engine import lint_file

GL015 = Config(preview=True, select=("GL015",))


def findings(path):
    result = lint_file(path, GL015)
    assert result.error is None, result.error
    return [(d.start.line, d.code) for d in result.diagnostics]


AGENT = """
    import torch


    class Agent:
        def __init__(self, model):
            self.model = model

        @torch.no_grad()
        def __call__(self, states, agent_states):
            return self.model(states).argmax(1), agent_states
"""

SOURCE = """
    import torch


    class ExperienceSource:
        def __init__(self, env, agent):
            self.env = env
            self.agent = agent
            self.agent_states = [agent.initial_state()]

        def __iter__(self):
            states = [self.env.reset()]
            while True:
                actions, self.agent_states = self.agent(states, self.agent_states)
                states = [self.env.step(actions[0])]
                yield states
"""


# the training script hands an Agent to the ExperienceSource: what links their files
TRAIN = "from agent import Agent\nfrom experience import ExperienceSource\n"


def test_a_project_callable_under_no_grad_carries_no_graph(tmp_path):
    write(tmp_path, {"agent.py": AGENT, "experience.py": SOURCE, "train.py": TRAIN})
    assert findings(tmp_path / "experience.py") == []


def test_without_such_a_callable_the_recurrent_shape_is_reported(tmp_path):
    agent = AGENT.replace("@torch.no_grad()", "")
    write(tmp_path, {"agent.py": agent, "experience.py": SOURCE, "train.py": TRAIN})
    assert findings(tmp_path / "experience.py") == [(13, "GL015")]


def test_a_callable_no_import_links_to_the_loop_is_not_its_agent(tmp_path):
    write(tmp_path, {"agent.py": AGENT, "experience.py": SOURCE})
    assert findings(tmp_path / "experience.py") == [(13, "GL015")]
