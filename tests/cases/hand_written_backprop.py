"""A course's backpropagation written by hand in numpy (dataflowr's Module 2): layers and a
composition whose own `backward` returns the gradient it passes on. Neither is autograd's,
so nothing here is a loop that differentiates; torch's `loss.backward()` below still is.
An nn.Module whose weights are plain tensors updated by hand (omarsar's logistic
regression) holds no parameters: its forward records nothing."""

import numpy as np
import torch


class AddBias(object):
    def __init__(self, b):
        self.b = b

    def forward(self, x):
        return x + self.b

    def backward(self, grad):
        self.grad_b = grad.sum()
        return grad

    def step(self, learning_rate):
        self.b -= learning_rate * self.grad_b


class Composition:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def backward(self, loss_grad):
        current_grad = loss_grad
        for layer in reversed(self.layers):
            current_grad = layer.backward(current_grad)

    def step(self, learning_rate):
        for layer in self.layers:
            layer.step(learning_rate)


def fit(xx, yy):
    my_fit = Composition([AddBias(1.0), AddBias(0.0)])
    losses, bs = [], []
    for i in range(5000):
        j = np.random.randint(1, len(xx))
        y_est = my_fit.forward(xx[j])
        losses.append((yy[j] - y_est) ** 2)
        my_fit.backward(2 * (y_est - yy[j]))
        my_fit.step(1e-4)
        bs.append(my_fit.layers[0].b)
    return losses, bs


def fit_with_autograd(model, optimizer, loader):
    losses = []
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss)  # error: GL006
    return losses


class HandWrittenRegression(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w = torch.zeros(dim, 1)
        self.b = torch.scalar_tensor(0)

    def forward(self, x):
        return self.sigmoid(torch.mm(self.w.T, x) + self.b)

    def sigmoid(self, z):
        return 1 / (1 + torch.exp(-z))

    def backward(self, x, yhat, y):
        self.dw = torch.mm(x, (yhat - y).T) / x.shape[1]

    def optimize(self, lr):
        self.w = self.w - lr * self.dw


class Scaled(torch.nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body

    def forward(self, x):
        return self.run(x)

    def run(self, x):
        return self.body(x) * 2


def accuracy(yhat, y):
    return 100 - torch.mean(torch.abs(yhat - y)) * 100


def fit_by_hand(x, y):
    model = HandWrittenRegression(4)
    for _ in range(100):
        yhat = model.forward(x)
        model.backward(x, yhat, y)
        model.optimize(0.01)
    print(accuracy(model.forward(x), y))
    scaled = Scaled(torch.nn.Linear(4, 1))
    print(accuracy(scaled(x), y))  # error: GL012
