"""A loop that trains inputs, not the model: an adversarial patch, a style-transfer
image, a latent; and a loop that trains on the batches it iterates, whatever hands it
the loader. Lint only: markers are the expected findings."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def patch_attack(model, loader, target, epochs):
    # the optimizer holds only the patch: the model stays in eval mode on purpose
    patch = nn.Parameter(torch.zeros(3, 32, 32), requires_grad=True)
    optimizer = torch.optim.SGD([patch], lr=0.1)
    for _ in range(epochs):
        for img, _ in loader:
            pred = model(img + patch)
            loss = F.cross_entropy(pred, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(evaluate(model, loader))


def style_transfer(model, content, steps):
    image = content.clone().requires_grad_(True)
    optimizer = torch.optim.LBFGS([image])
    for _ in range(steps):

        def closure():
            optimizer.zero_grad()
            loss = F.mse_loss(model(image), model(content).detach())
            loss.backward()
            return loss

        optimizer.step(closure)
        print(evaluate(model, [(image, torch.zeros(1))]))


def fine_tune(model, loader, epochs):
    # the same loop training the model itself: eval mode from the evaluation stays on
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        for img, y in loader:
            loss = F.cross_entropy(model(img), y)  # error: GL016
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(evaluate(model, loader))


def train_with_previous_batch(model, optimizer, loader):
    # a batch of the loader it trains on has no history, nor has what is built of it
    previous = None
    for x, y in loader:
        if previous is not None:
            x = torch.cat([x, previous])
        loss = F.cross_entropy(model(x)[: len(y)], y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        previous = x


def train_recurrent(model, optimizer, loader):
    # the state the model computes does carry its graph into the next batch
    h = torch.zeros(1, 8)
    for x, y in loader:
        out, h = model(x, h)  # error: GL001
        loss = F.cross_entropy(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_checkpointed(block, head, optimizer, loader):
    for x, y in loader:
        loss = F.mse_loss(head(checkpoint(block, x, use_reentrant=True)), y)  # error: GL010
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
