"""GL016 shapes and traps, lint only: markers are the expected findings."""

import copy

import torch
from torch import nn


def evaluate(model, x):
    model.eval()
    with torch.no_grad():
        return model(x).mean().item()


def evaluate_restoring(model, x):
    was = model.training
    model.eval()
    with torch.no_grad():
        out = model(x).mean().item()
    model.train(was)
    return out


def evaluate_then_train(model, x):
    model.eval()
    with torch.no_grad():
        out = model(x).mean().item()
    model.train()
    return out


def evaluate_through(model, x):
    return evaluate(model, x)


def step(model, optimizer, x, y):
    loss = nn.functional.mse_loss(model(x), y)  # error: GL016
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def step_in_train_mode(model, optimizer, x, y):
    model.train()
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def train_flow(model, optimizer, batches, save_every):
    # Glow's train_epoch: the training forward is a method of the model
    # (`model.log_prob(x)`), which runs in the mode the sampling helper left it in
    model.train()
    for i, x in enumerate(batches):
        loss = -model.log_prob(x).mean()  # error: GL016
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % save_every == 0:
            evaluate(model, x)


# -- traps: silent -----------------------------------------------------------------


def train_top_of_epoch(model, optimizer, batches, x_val):
    for epoch in range(10):
        model.train()
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, evaluate(model, x_val))


def train_top_of_step(model, optimizer, batches, x_val):
    for i, (x, y) in enumerate(batches):
        model.train()
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % 10 == 0:
            evaluate(model, x_val)


def train_with_restoring_helper(model, optimizer, batches, x_val):
    for _ in range(10):
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        evaluate_restoring(model, x_val)
        evaluate_then_train(model, x_val)


def train_evaluating_copies(model, ema, optimizer, batches, x_val):
    for _ in range(10):
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        evaluate(copy.deepcopy(model), x_val)
        evaluate(ema, x_val)
        evaluate(ema.module, x_val)


def train_with_step_function(model, optimizer, batches, x_val):
    for _ in range(10):
        for x, y in batches:
            step_in_train_mode(model, optimizer, x, y)
        evaluate(model, x_val)


def train_then_switch_back(model, optimizer, batches, x_val):
    for i, (x, y) in enumerate(batches):
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % 10 == 0:
            evaluate(model, x_val)
            model.train()


def finetune_with_frozen_batch_norm(model, optimizer, batches):
    for x, y in batches:
        model.eval()  # before the forward of the same step: on purpose
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def final_test_after_training(model, optimizer, batches, x_val):
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return evaluate(model, x_val)


class SelfTrainingTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def train_epoch(self, batches):
        self.model.train()
        for x, y in batches:
            loss = nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def validate(self, x):
        self.model.eval()
        with torch.no_grad():
            return self.model(x)

    def fit(self, batches, x, epochs):
        for _ in range(epochs):
            self.train_epoch(batches)
            self.validate(x)


# -- shapes that are flagged ----------------------------------------------------------


def train_with_plain_step(model, optimizer, batches, x_val):
    for _ in range(10):
        for x, y in batches:
            step(model, optimizer, x, y)
        evaluate(model, x_val)


def train_eval_through_two_helpers(model, optimizer, batches, x_val):
    for _ in range(10):
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y)  # error: GL016
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        evaluate_through(model, x_val)


def train_switch_back_in_one_branch(model, optimizer, batches, x_val, sample):
    for i, (x, y) in enumerate(batches):
        loss = nn.functional.mse_loss(model(x), y)  # error: GL016
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % 10 == 0:
            model.eval()
            with torch.no_grad():
                out = model(x_val)
            if sample:
                print(out)
                model.train()


class StepTrainer:
    def __init__(self, net, optimizer):
        self.net = net
        self.optimizer = optimizer

    def sample(self, x):
        self.net.eval()
        with torch.no_grad():
            return self.net(x)

    def fit(self, batches, x_val):
        for i, (x, y) in enumerate(batches):
            loss = nn.functional.mse_loss(self.net(x), y)  # error: GL016
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if i % 100 == 0:
                self.sample(x_val)


# -- a script's own loop, at module level ---------------------------------------------

NET = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))
OPTIMIZER = torch.optim.SGD(NET.parameters(), lr=0.1)
for _ in range(3):
    for x, y in [(torch.randn(2, 4), torch.randn(2, 1))]:
        loss = nn.functional.mse_loss(NET(x), y)  # error: GL016
        OPTIMIZER.zero_grad()
        loss.backward()
        OPTIMIZER.step()
    NET.eval()
    with torch.no_grad():
        NET(torch.randn(2, 4))


# -- restores in a `finally` ------------------------------------------------------------


def evaluate_with_finally(model, x):
    model.eval()
    try:
        with torch.no_grad():
            return model(x).mean().item()
    finally:
        model.train()


def train_with_finally_helper(model, optimizer, batches, x_val):
    for _ in range(10):
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        evaluate_with_finally(model, x_val)


def train_with_finally_in_loop(model, optimizer, batches, x_val):
    for _ in range(10):
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        try:
            evaluate(model, x_val)
        finally:
            model.train()


def train_flow_restored(model, optimizer, batches, save_every):
    for i, x in enumerate(batches):
        model.train()
        loss = -model.log_prob(x).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % save_every == 0:
            evaluate(model, x)


# A periodic evaluation at the top of the epoch, before the training steps (MelGAN's
# `if epoch % validation_interval == 0: validate(...)`), with `train()` called once
# before the loop: from the first evaluation on, every step trains in eval mode.
def train_validating_first(model, optimizer, batches, x_val, interval):
    model.train()
    for epoch in range(100):
        if epoch % interval == 0:
            evaluate(model, x_val)
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y)  # error: GL016
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


# The same evaluation with `train()` at the top of the training steps: restored.
def train_validating_first_restored(model, optimizer, batches, x_val, interval):
    for epoch in range(100):
        if epoch % interval == 0:
            evaluate(model, x_val)
        model.train()
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


# fcn-instances' validate_split: the mode is saved before the evaluation and put back
# under the saved flag (`if training: model.train()`), which is `model.train(training)`.
def evaluate_restoring_under_flag(model, x):
    training = model.training
    model.eval()
    with torch.no_grad():
        out = model(x).mean().item()
    if training:
        model.train()
    return out


# The flag is another model's mode: it says nothing of `model`'s.
def evaluate_restoring_another_flag(model, other, x):
    training = other.training
    model.eval()
    with torch.no_grad():
        out = model(x).mean().item()
    if training:
        model.train()
    return out


# fcn-instances' train_iteration: an evaluation on some steps only, switched back in the
# same block.
def step_logging_in_eval(model, optimizer, x, y, log):
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if log:
        model.eval()
        with torch.no_grad():
            print(model(x).mean().item())
        model.train()


def train_with_flag_restoring_helpers(model, optimizer, batches, x_val):
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        evaluate_restoring_under_flag(model, x_val)


def train_with_logging_steps(model, optimizer, batches):
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step_logging_in_eval(model, optimizer, x, y, log=True)


def train_with_another_flag(model, other, optimizer, batches, x_val):
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)  # error: GL016
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        evaluate_restoring_another_flag(model, other, x_val)


# The flag read after the switch is the eval mode itself: the `if` never restores.
def evaluate_reading_the_flag_late(model, x):
    model.eval()
    training = model.training
    with torch.no_grad():
        out = model(x).mean().item()
    if training:
        model.train()
    return out


def train_with_a_late_flag(model, optimizer, batches, x_val):
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)  # error: GL016
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        evaluate_reading_the_flag_late(model, x_val)
