"""A tracker whose update method keeps what it is given scaled by the batch size
(`self.sum += val * n`, the ImageNet example's AverageMeter) keeps its history just the
same: handed the loss itself every iteration, it chains every iteration's graph. Before,
only a value added unchanged (`self.sum += val`) counted as kept."""

import torch
import torch.nn as nn

model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.MSELoss()


class AverageMeter:
    def __init__(self):
        self.val = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n


def train(loader):
    losses = AverageMeter()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.update(loss, x.size(0))  # error: GL006
    return losses.sum / losses.count


# -- numbers kept: silent ---------------------------------------------------------------


def train_logged(loader):
    losses = AverageMeter()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.update(loss.item(), x.size(0))
    return losses.sum / losses.count
