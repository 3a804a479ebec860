"""GL013's message says what steps the networks the target runs through."""

from __future__ import annotations

import textwrap

from gradlint.config import Config
from gradlint.engine import lint_source

GL013 = Config(preview=True, select=("GL013",))

SAC_VALUE_UPDATE = textwrap.dedent(
    """\
    import torch
    import torch.nn.functional as F
    from torch import nn
    from helpers import make_optimizer


    class CriticNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 1)
            self.optimizer = make_optimizer(self)

        def forward(self, state, action):
            return self.fc(torch.cat([state, action], 1))


    class ValueNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 1)
            self.optimizer = make_optimizer(self)

        def forward(self, state):
            return self.fc(state)


    class Agent:
        def __init__(self):
            self.value = ValueNetwork()
            self.critic = CriticNetwork()

        def learn(self, state, action):
            value = self.value(state)
            value_target = self.critic(state, action) - 0.1
            self.value.optimizer.zero_grad()
            value_loss = F.mse_loss(value, value_target)
            value_loss.backward()
            self.value.optimizer.step()
            self.critic.optimizer.zero_grad()
            critic_loss = F.mse_loss(self.critic(state, action), value.detach())
            critic_loss.backward()
            self.critic.optimizer.step()
    """
)


def test_a_network_whose_own_optimizer_steps_it_elsewhere_is_not_said_to_have_none():
    # the critic's optimizer (built by a helper out of sight) is cleared and stepped on
    # the critic's own loss: the value loss's backward through it is waste,
    # but "no optimizer steps it" would be false
    (finding,) = lint_source(SAC_VALUE_UPDATE, "sac.py", GL013)
    assert finding.start.line == 34
    assert "its own optimizer steps it on another loss" in finding.message
    assert "no optimizer" not in finding.message
