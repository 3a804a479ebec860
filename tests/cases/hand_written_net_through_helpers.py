"""d2l's softmax regression from scratch: weights built requiring grad
(`torch.normal(..., requires_grad=True)`), a `net` function that calls the file's own
`softmax`, and an evaluation that hands `net(X)` to an `accuracy` helper. The forward
records a graph that only becomes an accuracy. Before, a torch factory other than the
usual ones did not make a leaf with `requires_grad=True`, and a call of a function that
computes from parameters was only asked about where its own scope made the number."""

import torch

W = torch.normal(0, 0.01, size=(784, 10), requires_grad=True)
b = torch.zeros(10, requires_grad=True)


def softmax(X):
    X_exp = torch.exp(X)
    return X_exp / X_exp.sum(1, keepdim=True)


def net(X):
    return softmax(torch.matmul(X.reshape((-1, W.shape[0])), W) + b)


def cross_entropy(y_hat, y):
    return -torch.log(y_hat[range(len(y_hat)), y])


def accuracy(y_hat, y):
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())


class Accumulator:
    def __init__(self, n):
        self.data = [0.0] * n

    def add(self, *args):
        self.data = [a + float(b) for a, b in zip(self.data, args)]

    def __getitem__(self, idx):
        return self.data[idx]


def evaluate_accuracy(net, data_iter):
    metric = Accumulator(2)
    for X, y in data_iter:
        metric.add(accuracy(net(X), y), y.numel())  # error: GL012
    return metric[0] / metric[1]


def batch_accuracy(X, y):
    return accuracy(net(X), y)  # error: GL012


# -- trained through the same helpers: silent ---------------------------------------------


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


def train_epoch(net, train_iter, loss, lr):
    metric = Accumulator(3)
    for X, y in train_iter:
        y_hat = net(X)
        l = loss(y_hat, y)
        l.sum().backward()
        sgd([W, b], lr, X.shape[0])
        metric.add(float(l.sum()), accuracy(y_hat, y), y.numel())
    return metric[0] / metric[2], metric[1] / metric[2]


def batch_loss(X, y):
    return cross_entropy(net(X), y).sum()


def train(train_iter, test_iter, num_epochs, lr):
    for epoch in range(num_epochs):
        print(train_epoch(net, train_iter, cross_entropy, lr))
        print(evaluate_accuracy(net, test_iter))
    for X, y in train_iter:
        batch_loss(X, y).backward()
        sgd([W, b], lr, X.shape[0])
