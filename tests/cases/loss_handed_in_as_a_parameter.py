"""A loss handed to a function as a parameter is a torch.nn loss, computed from its
inputs, when its annotation says so (`criterion: nn.MSELoss`) or every call of the
function, all of them in this file, passes one (`valid(model, loader,
nn.CrossEntropyLoss())`, or a name bound to one). Its value then carries the forward's
graph: collected across a validation loop with no backward, every batch's graph stays
alive (GL015). A parameter some call fills with something else (a metric returning a
float) stays out of sight. Lint only: markers are the expected findings."""

import torch
import torch.nn as nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(10)]


def valid(classifier, batches, criterion):
    losses = []
    for x, y in batches:
        losses.append(criterion(classifier(x), y))  # error: GL015, GL012
    return torch.stack(losses).mean().item()


def valid_annotated(classifier, batches, criterion: nn.CrossEntropyLoss):
    losses = []
    for x, y in batches:
        losses.append(criterion(classifier(x), y))  # error: GL015, GL012
    return torch.stack(losses).mean().item()


def valid_with_any_metric(classifier, batches, metric):
    scores = []
    for x, y in batches:
        scores.append(metric(classifier(x), y))
    return sum(scores) / len(scores)


def accuracy(out, y):
    return (out.argmax(1) == y).float().mean().item()


loss_fn = nn.CrossEntropyLoss()
for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
    print(valid(model, loader, loss_fn), valid(model, loader, nn.CrossEntropyLoss()))
    print(valid_annotated(model, loader, loss_fn))
    print(valid_with_any_metric(model, loader, loss_fn))  # error: GL012
    print(valid_with_any_metric(model, loader, accuracy))  # error: GL012
