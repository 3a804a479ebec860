"""GL006: a sum re-created on every step of the loop around a counted inner loop (a GAN's
`loss_d_sum = 0.0`, then `for _ in range(n_critic):` steps of the discriminator) keeps
at most that count of graphs, whatever the run's length: silent. The same sum re-created
once per epoch around the loop over the data keeps a graph per batch of the epoch, and
one re-created only once keeps the whole run's: both are reported. Lint only: markers
are the expected findings."""

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
