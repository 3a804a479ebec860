"""A shared train/eval epoch whose flag picks the mode (`model.train(train)`) and guards
the backward, called from a loop over constants (analysis/path_conditions.py): one way
through the function per iteration, with the mode that iteration's flag sets. The loop
may unpack tuples (`for train, loader in [(True, a), (False, b)]:`), whose constant
place is the flag."""

import torch
from torch import nn

model = nn.Linear(4, 2)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_batches = [(torch.randn(8, 4), torch.randint(0, 2, (8,)))] * 3
val_batches = [(torch.randn(8, 4), torch.randint(0, 2, (8,)))] * 3


def run_epoch(net, batches, train):
    net.train(train)
    total = 0.0
    for x, y in batches:
        loss = criterion(net(x), y)  # error: GL004
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total


def run_phase(net, batches, train):
    net.train(train)
    total = 0.0
    for x, y in batches:
        loss = criterion(net(x), y)  # error: GL004
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total


def run_training(net, batches, train):
    net.train(train)
    for x, y in batches:
        loss = criterion(net(x), y)  # only ever called to train: every way backpropagates
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


for epoch in range(2):
    for is_train, batches in [(True, train_batches), (False, val_batches)]:
        print(run_epoch(model, batches, is_train))
    for training in [True, False]:
        print(run_phase(model, train_batches if training else val_batches, training))
    for fit, batches in [(True, train_batches), (True, val_batches)]:
        run_training(model, batches, fit)
