"""GL016 through a helper that reads the module's own model (`model = Net()` at module
level, `def evaluate(): model.eval()` with no argument): the helper switches the same
object the training loop trains. Not when the helper restores the mode, when the loop's
own training helper sets it again, or when the loop's `model` is a parameter of its
function (another object). Lint only: markers are the expected findings."""

import torch
from torch import nn

model = nn.Sequential(nn.Linear(3, 2), nn.Dropout(0.5))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 3), torch.zeros(4, dtype=torch.long))]
criterion = nn.CrossEntropyLoss()


def evaluate():
    model.eval()
    with torch.no_grad():
        return model(loader[0][0]).argmax(1).tolist()


def evaluate_and_restore():
    model.eval()
    with torch.no_grad():
        scores = model(loader[0][0]).argmax(1).tolist()
    model.train()
    return scores


def train_epoch():
    model.train()
    for x, y in loader:
        opt.zero_grad()
        criterion(model(x), y).backward()
        opt.step()


def main():
    for epoch in range(10):
        for x, y in loader:
            opt.zero_grad()
            criterion(model(x), y).backward()  # error: GL016
            opt.step()
        evaluate()


def main_restoring():
    for epoch in range(10):
        for x, y in loader:
            opt.zero_grad()
            criterion(model(x), y).backward()
            opt.step()
        evaluate_and_restore()


def main_with_helpers():
    for epoch in range(10):
        train_epoch()
        evaluate()


def main_of_another_model(model):
    for epoch in range(10):
        for x, y in loader:
            opt.zero_grad()
            criterion(model(x), y).backward()
            opt.step()
        evaluate()
