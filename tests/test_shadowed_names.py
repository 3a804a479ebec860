"""A name a function binds itself (its parameter, a local) is not the module-level value
of the same name (issue "Generalise": the fresh development repositories' tutorial
notebooks hand `pred_probas = model(X)` to `def comp_accuracy(label_var, pred_probas)`)."""

from __future__ import annotations

import textwrap

from gradlint.config import Config
from gradlint.engine import lint_source

LOGGING_FORWARD = """
    import torch


    def comp_accuracy(label_var, pred_probas):
        pred_labels = (pred_probas > 0.5).float().view(-1)
        return torch.sum(pred_labels == label_var.view(-1)).float() / label_var.size(0)


    model = torch.nn.Linear(4, 1)
    cost_fn = torch.nn.BCELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    X, y = torch.randn(10, 4), torch.rand(10, 1)
    for epoch in range(10):
        cost = cost_fn(model(X).sigmoid(), y)
        optimizer.zero_grad()
        cost.backward()
        optimizer.step()
        pred_probas = model(X)
        print("acc %.3f" % comp_accuracy(y, pred_probas))
    """


def _codes_at(source: str) -> list[tuple[str, int]]:
    found = lint_source(textwrap.dedent(source), "t.py", Config(preview=True))
    return [(d.code, d.start.line) for d in found]


def test_a_parameter_of_the_same_name_does_not_read_the_module_level_result():
    assert ("GL012", 19) in _codes_at(LOGGING_FORWARD)


def test_a_function_that_reads_the_module_level_name_still_sees_the_result():
    reads_global = LOGGING_FORWARD.replace(
        "def comp_accuracy(label_var, pred_probas):",
        "def comp_accuracy(label_var, unused):",
    )
    assert not [c for c in _codes_at(reads_global) if c[0] == "GL012"]


NOISY_ACTION = """
    import numpy as np
    import torch
    from torch import nn


    class Noise:
        def get_action(self, action, t=0):
            return np.clip(action + np.random.normal(size=len(action)), -1, 1)


    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(3, 1)

        def forward(self, state):
            return torch.tanh(self.linear(state))

        def get_action(self, state):
            state = torch.FloatTensor(state).unsqueeze(0)
            action = self.forward(state)
            return action.detach().cpu().numpy()[0]


    policy_net = Policy()
    noise = Noise()
    state = np.zeros(3)
    for step in range(100):
        action = policy_net.get_action(state)
        action = noise.get_action(action, step)
    """


def test_a_method_that_hands_back_numpy_is_not_the_forward_whose_numpy_raises():
    # Once `action` is followed into `Noise.get_action` (its parameter shadows the
    # module-level name), np.clip meets it: the graph was dropped inside
    # `Policy.get_action`, so the finding is its forward's, with no `.numpy()` crash.
    found = [
        d
        for d in lint_source(textwrap.dedent(NOISY_ACTION), "t.py", Config(preview=True))
        if d.code == "GL012"
    ]
    assert [d.start.line for d in found] == [22]
    assert "raises" not in found[0].message


PENALTY = """
    import torch
    from torch import autograd, nn

    G = nn.Linear(4, 4)
    D = nn.Linear(4, 1)
    opt_D = torch.optim.Adam(D.parameters())


    def compute_gradient_penalty(D, real_samples, fake_samples):
        alpha = torch.rand(real_samples.size(0), 1)
        interpolates = (alpha * real_samples + (1 - alpha) * fake_samples).requires_grad_(True)
        out = D(interpolates)
        grads = autograd.grad(out.sum(), interpolates, create_graph=True)[0]
        return ((grads.norm(2, dim=1) - 1) ** 2).mean()


    for step in range(10):
        real, z = torch.randn(8, 4), torch.randn(8, 4)
        opt_D.zero_grad()
        fake = G(z).detach()
        gp = compute_gradient_penalty(D, real.data, fake.data)
        loss_D = -D(real).mean() + D(fake).mean() + 10 * gp
        loss_D.backward()
        opt_D.step()
    """


def test_a_detached_result_made_a_new_leaf_is_not_its_graph_used():
    # dualgan's discriminator step: the generator's graph is recorded and dropped at
    # once; the penalty's `requires_grad_(True)` on interpolates made of the detached
    # fakes starts a graph of its own, and does not need the generator's
    assert ("GL012", 21) in _codes_at(PENALTY)
