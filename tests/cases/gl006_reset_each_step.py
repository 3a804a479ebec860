"""GL006: a sum re-created on every step of the loop around a counted inner loop (a GAN's
`loss_d_sum = 0.0`, then `for _ in range(n_critic):` steps of the discriminator) keeps
at most that count of graphs, whatever the run's length: silent. The same sum re-created
once per epoch around the loop over the data keeps a graph per batch of the epoch, and
one re-created only once keeps the whole run's: both are reported. The loop around may
be the caller's: a step function whose local sum is re-created on each call, called
only from inside a loop (pytorch-lr-finder's `_train_batch` over `accumulation_steps`
micro-batches), holds one step's; called once, its counted loop is the whole run.
Lint only: markers are the expected findings."""

import torch

critic = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(critic.parameters(), lr=0.1)
loader = [torch.randn(8, 4) for _ in range(100)]
n_critic = 5

for epoch in range(10):
    for batch in loader:
        loss_sum = 0.0
        for _ in range(n_critic):
            optimizer.zero_grad()
            loss = critic(batch).pow(2).mean()
            loss.backward()
            optimizer.step()
            loss_sum += loss
        print(loss_sum.item() / n_critic)

for epoch in range(10):
    epoch_loss = 0.0
    for batch in loader:
        optimizer.zero_grad()
        loss = critic(batch).pow(2).mean()
        loss.backward()
        optimizer.step()
        epoch_loss += loss  # error: GL006
    print(epoch_loss.item())

run_loss = 0.0
for batch in loader:
    for _ in range(n_critic):
        optimizer.zero_grad()
        loss = critic(batch).pow(2).mean()
        loss.backward()
        optimizer.step()
        run_loss += loss  # error: GL006
print(run_loss.item())


def train_batch(batches, accumulation_steps):
    total_loss = None
    optimizer.zero_grad()
    for i in range(accumulation_steps):
        loss = critic(next(batches)).pow(2).mean() / accumulation_steps
        loss.backward()
        if total_loss is None:
            total_loss = loss
        else:
            total_loss += loss
    optimizer.step()
    return total_loss.item()


def train_run(batches, steps):
    total_loss = 0.0
    for i in range(steps):
        optimizer.zero_grad()
        loss = critic(next(batches)).pow(2).mean()
        loss.backward()
        optimizer.step()
        total_loss += loss  # error: GL006
    return total_loss.item()


def range_test(batches):
    for iteration in range(100):
        print(train_batch(batches, 4))


train_run(iter(loader), len(loader))
