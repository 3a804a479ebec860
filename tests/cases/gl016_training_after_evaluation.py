"""GL016 where training resumes after an evaluation outside its loop (`model.eval()`, a
test, then more epochs, as a notebook's cells run): the optimizer that holds the model
steps in eval mode. Not an `eval()` right before training with no evaluation after it
(frozen batch norm, on purpose), not a `train()` before the training, and not an attack
or an inversion that differentiates through the model while stepping only tensors.
Lint only: markers are the expected findings."""

import torch
from torch import nn

model = nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.2), nn.Linear(8, 2))
opt = torch.optim.Adam(model.parameters())
X = torch.randn(64, 3)
Y = torch.randint(0, 2, (64,))


def fit(epochs):
    for _ in range(epochs):
        opt.zero_grad()
        nn.functional.cross_entropy(model(X), Y).backward()
        opt.step()


def evaluate_then_train_more():
    fit(5)
    model.eval()
    with torch.no_grad():
        print(model(X).argmax(1).eq(Y).float().mean().item())
    for _ in range(5):
        opt.zero_grad()
        nn.functional.cross_entropy(model(X), Y).backward()  # error: GL016
        opt.step()


def evaluate_then_switch_back():
    model.eval()
    with torch.no_grad():
        print(model(X).argmax(1).tolist())
    model.train()
    for _ in range(5):
        opt.zero_grad()
        nn.functional.cross_entropy(model(X), Y).backward()
        opt.step()


def frozen_norms_on_purpose():
    model.eval()
    for _ in range(5):
        opt.zero_grad()
        nn.functional.cross_entropy(model(X), Y).backward()
        opt.step()


def adversarial_inputs():
    model.eval()
    with torch.no_grad():
        print(model(X).argmax(1).tolist())
    delta = torch.zeros_like(X, requires_grad=True)
    attack = torch.optim.SGD([delta], lr=0.01)
    for _ in range(5):
        attack.zero_grad()
        (-nn.functional.cross_entropy(model(X + delta), Y)).backward()
        attack.step()
