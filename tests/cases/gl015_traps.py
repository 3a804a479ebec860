"""GL015's shapes beyond the runnable fixtures: loops without backward that carry a graph
carry the code on the flagged line; the traps of issue 22 and of the real-code census
carry none."""

import re

import torch
import torch.nn as nn

net = nn.Linear(4, 4)
cell = nn.GRUCell(4, 4)


# 1. greedy decoding through a decoder handed in as a parameter: out of sight, the
# recurrent shape `y, h = f(x, h)` is what says it computes with weights (low confidence).
def translate(decoder, enc_state, bos, max_len):
    state, token, words = enc_state, bos, []
    for _ in range(max_len):
        logits, state = decoder(token, state)  # error: GL015
        token = logits.argmax(-1)
        words.append(token.item())
    return words


# 2. trap: the same decoding under `torch.inference_mode()`.
def translate_quietly(decoder, enc_state, bos, max_len):
    state, token, words = enc_state, bos, []
    with torch.inference_mode():
        for _ in range(max_len):
            logits, state = decoder(token, state)
            token = logits.argmax(-1)
            words.append(token.item())
    return words


# 3. trap: a forward through a stack of layers: each iteration a different layer, a
# forward of fixed depth, not a history that grows with the run.
def through_layers(layers, x):
    for layer in layers:
        x = layer(x)
    return x.sum().item()


# 4. trap: an environment loop: the next observation comes from `env.step`, whatever
# the action was computed from.
def rollout(env, policy, steps):
    obs = env.reset()
    total = 0.0
    for _ in range(steps):
        action = policy(torch.as_tensor(obs)).argmax().item()
        obs, reward, done, _ = env.step(action)
        total += reward
    return total


# 5. trap: strings and Python numbers rebuilt through library calls.
def clean_names(names):
    for pattern in ("_a", "_b"):
        names = [re.sub(pattern, "", n) for n in names]
    return names


def optimise_2d(trainer, steps):
    x1, x2, s1, s2 = -5, -2, 0, 0
    for _ in range(steps):
        x1, x2, s1, s2 = trainer(x1, x2, s1, s2)
    return x1, x2


# 6. trap: the state detached through a helper named for it, every iteration.
def repackage_hidden(h):
    return h.detach()


def sample_detached(steps):
    h = torch.zeros(1, 4)
    x = torch.zeros(1, 4)
    for _ in range(steps):
        h = repackage_hidden(cell(x, h))  # error: GL012
        x = h.argmax(-1, keepdim=True).float().expand(1, 4)
    return h


# 7. trap: a plain function that hands the unrolled graph back to a caller in this
# file that backpropagates it.
def unroll(xs, h):
    for x in xs:
        h = cell(x, h)
    return h


def train_step(xs, opt):
    h = unroll(xs, torch.zeros(1, 4))
    loss = h.pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()


# 8. an ensemble average of outputs over a loader, never differentiated, kept as a tensor.
def average_prediction(loader):
    mean = torch.zeros(4)
    for x in loader:
        mean = mean + net(x).mean(0) / 10  # error: GL015
    return mean


# 9. trap: five steps of a cell fixed in the code, compared and dropped (a test).
def five_steps_match(other):
    seq_length = 5
    state = other_state = None
    for _ in range(seq_length):
        inputs = torch.randn(3, 4)
        state = cell(inputs, state)  # error: GL012
        other_state = other(inputs, other_state)
    return bool((state - other_state).abs().max() < 1e-6)


# 10. trap: the observation handed to the policy inside the environment's step, and a
# normaliser that takes only the state.
def evaluate_policy(env, agent, normalise):
    s, done, ret = env.reset(), False, 0.0
    while not done:
        s = normalise(s)
        s, r, done, _ = env.step(agent.choose_action(s, True))
        ret += r
    return ret


# 11. accuracy from a helper that computes under no_grad, summed as tensors: no graph.
def accuracy(output, target):
    with torch.no_grad():
        return (output.argmax(1) == target).float().mean()


def test_accuracy(loader):
    top1 = 0
    for x, y in loader:
        logits = net(x)  # error: GL012
        top1 += accuracy(logits, y)
    return top1
