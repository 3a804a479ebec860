"""A model kept in `self` by a base class and shown to be a module with weights by a
subclass of the same file (issue "Generalise", roles inferred from use): the base class
builds `self.model` through a factory whose class is out of sight, and only the
subclass hands `self.model.parameters()` to its optimizer (the shape of
adik993/ppo-pytorch's `Agent` and `PPO`, which sit in two files there: see
bench/real-code/DEV-MISSES.md). The base class's acting method runs that model's
forward, and its result is only read as numbers."""

from __future__ import annotations

from test_project import findings, write

AGENT = """
    import torch
    import torch.nn as nn


    class Agent:
        def __init__(self, model_factory, device):
            self.model = model_factory.create()
            self.device = device

        def act(self, state):
            logits = self.model.policy_logits(torch.tensor(state, device=self.device))
            return logits.argmax(-1).cpu().numpy()
"""

PPO = """
    from torch.optim import Adam

    from agent import Agent


    class PPO(Agent):
        def __init__(self, model_factory, device):
            super().__init__(model_factory, device)
            self.optimizer = Adam(self.model.parameters(), 1e-3)
"""

# the same subclass of another class: it says nothing of Agent's `self.model`
OTHER = PPO.replace("from agent import Agent", "from base import Base").replace(
    "PPO(Agent)", "PPO(Base)"
)


def test_a_subclass_of_another_class_shows_nothing(tmp_path):
    source = AGENT + OTHER.replace("from base import Base", "class Base:\n        pass")
    write(tmp_path, {"agent.py": source})
    assert findings(tmp_path / "agent.py") == []


def test_a_subclass_in_the_same_file_shows_the_base_classes_model(tmp_path):
    source = AGENT + PPO.replace("from agent import Agent", "")
    write(tmp_path, {"agent.py": source})
    assert findings(tmp_path / "agent.py") == [(11, "GL012")]
