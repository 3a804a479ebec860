"""`loss = train_loss = train()`: a chained assignment binds every name to the loss the
helper backpropagated and hands back, graph and all. A char-RNN script keeps it in
`train_losses` every iteration (and pickles the list into its checkpoints). Before,
only a statement with one target said which name held the helper's result."""

import torch
import torch.nn as nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def train():
    optimizer.zero_grad()
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
    return loss


train_losses = []
logged = []
for i in range(100):
    loss = train_loss = train()
    train_losses.append(train_loss)  # error: GL006
    first = second = train()
    logged.append(first.item())
print(train_losses[-1], logged[-1])
