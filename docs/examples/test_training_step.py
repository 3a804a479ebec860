"""Asserting that a training step keeps no autograd graph alive, with the pytest plugin
torch-gradlint installs. Run: pytest docs/examples/test_training_step.py (from a source
checkout without the install: add -p runtime_check.pytest_plugin)."""

import pytest
import torch
import torch.nn.functional as F


@pytest.fixture
def trainer():
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    return model, optimizer, {"loss": 0.0}


def train_step(trainer, log):
    model, optimizer, running = trainer
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    running["loss"] += log(loss)
    return running["loss"]  # what the loop carries: the plugin measures it


# The marker runs the body 1 + 4 times with the same fixtures: one training step each.
@pytest.mark.no_graph_growth(iterations=4)
def test_logging_the_number_keeps_no_graph(trainer):
    return train_step(trainer, log=lambda loss: loss.item())


# Fails: `running_loss += loss` keeps every step's graph alive.
@pytest.mark.no_graph_growth
def test_logging_the_tensor_grows_the_graph(trainer):
    return train_step(trainer, log=lambda loss: loss)


# The same check as a fixture, for a step written as a function.
def test_with_the_fixture(trainer, assert_no_graph_growth):
    assert_no_graph_growth(lambda: train_step(trainer, log=lambda loss: loss.item()))
