"""GL012 in a helper of this file that a module calls with itself (`eval_np(self, obs)`,
rail-berkeley/rlkit's policies): `self` in a method of a class with weights is a model
with parameters, as it is for `self(x)`; a parameterless module's is not. Lint only:
markers are the expected findings."""

from torch import nn


def eval_np(module, obs):
    outputs = module(obs)  # error: GL012
    return outputs.detach().cpu().numpy()


def eval_scaled(module, obs):
    outputs = module(obs)  # a parameterless module's forward records nothing
    return outputs.detach().cpu().numpy()


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)

    def get_actions(self, obs):
        return eval_np(self, obs)


class Scale(nn.Module):
    def forward(self, x):
        return 2 * x

    def get_actions(self, obs):
        return eval_scaled(self, obs)
