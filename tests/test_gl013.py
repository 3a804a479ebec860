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


PERCEPTUAL = """
import torch
import torch.nn.functional as F
from torch import nn


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = nn.Linear(4, 4)
        self.vgg = nn.Sequential(nn.Linear(4, 8), nn.ReLU())

    def forward(self, img, z):
        fmap = self.decoder(z)
        img_feats = self.vgg(img)
        recon_feats = self.vgg(fmap)
        return F.mse_loss({first}, {second})


def train(vae, batches, optimizer):
    for img, z in batches:
        loss = vae(img, z)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_a_perceptual_loss_written_reconstruction_second_trains_the_decoder():
    """lucidrains/DALLE2-pytorch's VQGAN: `mse_loss(vgg(img), vgg(fmap))`. The second
    operand is no target: the decoder that made `fmap` is what the loss trains, and
    `self.vgg` on that side passes its gradient on."""
    source = PERCEPTUAL.format(first="img_feats", second="recon_feats")
    assert lint_source(source, "vqgan.py", GL013) == []


def test_a_perceptual_loss_written_target_second_runs_the_extractor_for_its_target():
    # the features of the real image are the target; the extractor's weights require
    # grad and nothing steps them, so the target's branch is backpropagated for nothing
    source = PERCEPTUAL.format(first="recon_feats", second="img_feats")
    assert [(d.code, d.start.line) for d in lint_source(source, "vqgan.py", GL013)] == [
        ("GL013", 15)
    ]


TD_ERROR = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Agent:
        def __init__(self):
            self.critic = nn.Linear(4, 1)
            self.opt = torch.optim.SGD(self.critic.parameters(), lr=0.1)

        def learn(self, s, r, s2):
            v_next = self.critic(s2)
            v = self.critic(s)
            delta = r + 0.9 * v_next - v
            {loss}
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
    """
)


def test_a_td_error_bound_to_a_name_and_squared_is_a_loss_whose_target_moves():
    """philtabor's actor-critic: `delta = r + gamma * V(s') - V(s)`, `critic_loss =
    delta ** 2` (fixtures/GL013/bad_actor_critic_td_error.py runs it)."""
    for loss in ("loss = delta ** 2", "loss = delta.pow(2).mean()", "loss = (delta**2).sum()"):
        found = lint_source(TD_ERROR.format(loss=loss), "agent.py", GL013)
        assert [(d.code, d.start.line) for d in found] == [("GL013", 11)], loss


def test_a_bound_difference_inside_a_density_term_is_no_loss():
    """`-0.5 * delta ** 2 / var + log_norm` is a term of a log-density, not a squared
    error pulling a prediction towards a target (and an unsquared difference is
    neither)."""
    for loss in ("loss = -(-0.5 * delta ** 2 / 0.1 - v.abs()).mean()", "loss = delta.mean()"):
        assert not lint_source(TD_ERROR.format(loss=loss), "agent.py", GL013), loss
