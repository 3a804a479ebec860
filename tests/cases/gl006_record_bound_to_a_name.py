"""GL006 on a forward run for the record and bound to a name first: `val_loss =
crit(model(xv), yv)`, then `val_losses.append(val_loss)` in a training loop keeps every
epoch's validation graph, as appending the expression itself does. Not a name bound
before the loop (computed once), nor one bound to a detached or `.item()` value, nor the
loss the loop backpropagates."""

import torch
from torch import nn

model = nn.Linear(3, 1)
opt = torch.optim.Adam(model.parameters())
x_val, y_val = torch.randn(4, 3), torch.randn(4, 1)
baseline = (model(x_val) - y_val).pow(2).mean()
val_losses, val_items, train_losses, baselines = [], [], [], []
for epoch in range(10):
    for x, y in [(torch.randn(4, 3), torch.randn(4, 1))]:
        opt.zero_grad()
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        opt.step()
    val_out = model(x_val)
    val_loss = (val_out - y_val).pow(2).mean()
    val_losses.append(val_loss)  # error: GL006
    val_item = (model(x_val) - y_val).pow(2).mean().item()  # error: GL012
    val_items.append(val_item)
    detached = (model(x_val) - y_val).pow(2).mean().detach()  # error: GL012
    val_items.append(detached)
    train_losses.append(loss.item())
    baselines.append(baseline)


def metrics_with_the_loss(model, loader, opt):
    accuracies = []
    for x, y in loader:
        loss, acc = model(x, y)  # the model returns its loss and a metric
        opt.zero_grad()
        loss.backward()
        opt.step()
        accuracies.append(acc)


def rollout_buffer(policy, critic, states, opt):
    for state in states:
        log_prob = policy(state).log()
        value = critic(state)
        policy.saved_log_probs.append(log_prob)  # backpropagated by another function
        critic.saved_values.append(value)
        loss = critic(state + 1).pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
