"""Where the parts of a forward's result go (analysis/result_uses.py): names unpacked
through nested tuples (`out, (h, c) = lstm(x)`), a list returned place by place, a loss
module built where it is called, a buffer made in the function and written element by
element (a numpy array copies the values out; a fresh tensor goes where it is read),
a `global` declared by another function, which says nothing of this function's own
local name, and a function's own `global` that no other scope reads."""

import numpy as np
import torch
from torch import nn

lstm = nn.LSTM(4, 8)
actor = nn.Linear(4, 2)
action_probs = None


def last_hidden_norm(x):
    out, (h, c) = lstm(x)  # error: GL012
    return out.mean().item() + h.norm().item()


def kept_state(x):
    out, (h, c) = lstm(x)
    return out.mean().item(), (h, c)  # the state goes back to the caller, graph and all


def predictions(x):
    logits, (h, c) = lstm(x)  # error: GL012
    return [logits.argmax(-1), h.detach()]


def inline_loss(model, x, y):
    model.eval()
    out = model(x)  # error: GL004
    return nn.CrossEntropyLoss()(out, y).item()


def predictions_into_a_tensor(xs):
    preds = torch.zeros(len(xs))
    for i in range(len(xs)):
        preds[i] = actor(xs[i]).sum()  # error: GL012
    return preds.mean().item()


def predictions_into_an_array(xs):
    grid = np.zeros(len(xs))
    for i in range(len(xs)):
        grid[i] = actor(xs[i]).sum()  # error: GL012
    return grid.sum()


def td_targets_into_a_buffer(states, next_states, rewards, mask):
    q = actor(states).max(1)[0]
    next_values = torch.zeros(len(rewards))
    next_values[mask] = actor(next_states).max(1)[0].detach()  # error: GL012
    target = rewards + 0.99 * next_values
    torch.nn.functional.smooth_l1_loss(q, target).backward()


def losses_into_a_tensor_then_trained(xs):
    losses = torch.zeros(len(xs))
    for i in range(len(xs)):
        losses[i] = actor(xs[i]).pow(2).sum()
    losses.mean().backward()


def sample(state):
    action_probs = actor(state)  # error: GL012
    return action_probs.multinomial(1).item()


def remember(state):
    global action_probs
    action_probs = actor(state).softmax(-1)


def greedy_episode(states):
    global last_probs  # no other scope reads the module's `last_probs`
    for state in states:
        last_probs = actor(state).softmax(-1)  # error: GL012
        print(last_probs.argmax().item())


def shown_elsewhere(state):
    global shown_probs
    shown_probs = actor(state).softmax(-1)  # read by show(), graph and all
    print(shown_probs.max().item())


def show():
    return shown_probs


for step in range(3):
    print(last_hidden_norm(torch.randn(5, 1, 4)))
    print(kept_state(torch.randn(5, 1, 4)))
    chosen, hidden = predictions(torch.randn(5, 1, 4))
    print(chosen.tolist(), hidden.sum().item())
    print(inline_loss(actor, torch.randn(3, 4), torch.tensor([0, 1, 0])))
    print(sample(torch.randn(4)))
    remember(torch.randn(4))
    greedy_episode([torch.randn(4)])
    shown_elsewhere(torch.randn(4))
    print(show())
