"""A helper that differentiates is judged forward by forward, lint only: markers are the
expected findings.

A MAML evaluation adapts on the support set with `autograd.grad`, which needs grad, and
then runs the query forward only to read an accuracy: that forward's graph is thrown
away. Its siblings whose result is differentiated, returned, stored or handed on keep
recording (the traps below)."""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def adapt(net, x, y):
    loss = nn.functional.cross_entropy(net(x), y)
    return torch.autograd.grad(loss, list(net.parameters()))


# -- shapes: the query forward of a helper that differentiates ------------------------


def evaluation(net, x_t, y_t, x_v, y_v):
    loss = nn.functional.cross_entropy(net(x_t), y_t)
    grads = torch.autograd.grad(loss, list(net.parameters()))
    logits = net(x_v)  # error: GL004
    accuracy = (logits.argmax(1) == y_v).float().mean().item()
    return accuracy, [g.norm().item() for g in grads]


def evaluate(net, tasks):
    net.eval()
    scores = []
    for x_t, y_t, x_v, y_v in tasks:
        scores.append(evaluation(net, x_t, y_t, x_v, y_v))
    net.train()
    return scores


def evaluation_through_helper(net, x_t, y_t, x_v, y_v):
    adapt(net, x_t, y_t)
    loss = nn.functional.cross_entropy(net(x_v), y_v)  # error: GL004
    return loss.item()


def evaluate_through_helper(net, tasks):
    net.eval()
    losses = [evaluation_through_helper(net, *task) for task in tasks]
    net.train()
    return sum(losses) / len(losses)


class Learner:
    def evaluation(self, net, x_t, y_t, x_v, y_v):
        adapt(net, x_t, y_t)
        return (net(x_v).argmax(1) == y_v).sum().item()  # error: GL004

    def validate(self, net, tasks):
        net.eval()
        correct = 0
        for task in tasks:
            correct += self.evaluation(net, *task)
        net.train()
        return correct


def evaluate_inline(net, x_t, y_t, x_v, y_v):
    net.eval()
    loss = nn.functional.cross_entropy(net(x_t), y_t)
    grads = torch.autograd.grad(loss, list(net.parameters()))
    correct = (net(x_v).argmax(1) == y_v).sum().item()  # error: GL004
    net.train()
    return correct, len(grads)


# -- traps: the forward's graph is, or may be, used -----------------------------------


def adapted_query(net, x_t, y_t, x_v):
    # a function that differentiates returns the query logits: the caller's meta-loss
    # differentiates them
    net.eval()
    adapt(net, x_t, y_t)
    logits = net(x_v)
    net.train()
    return logits


def meta_train(net, optimizer, tasks):
    for x_t, y_t, x_v, y_v in tasks:
        loss = nn.functional.cross_entropy(adapted_query(net, x_t, y_t, x_v), y_v)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def meta_step(net, x_t, y_t, x_v, y_v):
    # the query loss is differentiated: the meta-gradient
    grads = adapt(net, x_t, y_t)
    query_loss = nn.functional.cross_entropy(net(x_v), y_v)
    query_loss.backward()
    return query_loss.item(), grads


def meta_train_frozen_bn(net, tasks):
    net.eval()  # batch norm frozen while meta-training
    return [meta_step(net, *task) for task in tasks]


def attack(net, x, y):
    # the output is differentiated with respect to the input
    x = x.clone().requires_grad_()
    loss = nn.functional.cross_entropy(net(x), y)
    (grad,) = torch.autograd.grad(loss, x)
    return grad.sign()


def attack_all(net, batches):
    net.eval()
    return [attack(net, x, y) for x, y in batches]


def finetune(net, optimizer, x, y):
    # eval() freezes batch norm; the forward's loss is backpropagated
    loss = nn.functional.cross_entropy(net(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def finetune_frozen_bn(net, optimizer, batches):
    net.eval()
    return [finetune(net, optimizer, x, y) for x, y in batches]


def query_loss_of(logits, y):
    return nn.functional.cross_entropy(logits, y)


def meta_grads(net, x_t, y_t, x_v, y_v):
    # the query result flows, through a helper of this file, into autograd.grad
    adapt(net, x_t, y_t)
    logits = net(x_v)
    loss = query_loss_of(logits, y_v)
    print(loss.item())
    return torch.autograd.grad(loss, list(net.parameters()))


def meta_grads_frozen_bn(net, tasks):
    net.eval()
    return [meta_grads(net, *task) for task in tasks]


def adapted_logits(net, x_t, y_t, x_v):
    # returned: the caller may differentiate the query logits
    adapt(net, x_t, y_t)
    logits = net(x_v)
    print(logits.shape)
    return logits


def outer_loss(net, tasks):
    net.eval()
    total = 0
    for x_t, y_t, x_v, y_v in tasks:
        total = total + nn.functional.cross_entropy(adapted_logits(net, x_t, y_t, x_v), y_v)
    total.backward()


def adapted_ensemble(net, x_t, y_t, x_v):
    # kept in a list the function returns, with the adapted gradients
    net.eval()
    grads = adapt(net, x_t, y_t)
    outputs = []
    for _ in range(3):
        outputs.append(net(x_v))
    net.train()
    return outputs, grads


class Recorder:
    def evaluation(self, net, x_t, y_t, x_v):
        # stored: something else may use the graph
        adapt(net, x_t, y_t)
        self.last = net(x_v)
        return self.last.argmax(1).tolist()

    def run(self, net, tasks):
        net.eval()
        return [self.evaluation(net, *task) for task in tasks]


def probe(net, x_t, y_t, x_v):
    # returned by a function that differentiates, but every caller reads it as a number
    net.eval()
    adapt(net, x_t, y_t)
    return net(x_v)  # error: GL004


def probe_all(net, tasks):
    return [probe(net, x_t, y_t, x_v).mean().item() for x_t, y_t, x_v, _ in tasks]


# -- the same helper without eval(): GL012's, judged at the same forward --------------


def evaluation_in_train_mode(net, x_t, y_t, x_v, y_v):
    adapt(net, x_t, y_t)
    return (net(x_v).argmax(1) == y_v).sum().item()  # error: GL012


def validate_in_train_mode(net, tasks):
    return sum(evaluation_in_train_mode(net, *task) for task in tasks)


def main():
    net = Net()
    validate_in_train_mode(net, [])

