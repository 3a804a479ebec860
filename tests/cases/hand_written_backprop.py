"""A course's backpropagation written by hand in numpy (dataflowr's Module 2): layers and a
composition whose own `backward` returns the gradient it passes on. Neither is autograd's,
so nothing here is a loop that differentiates; torch's `loss.backward()` below still is."""

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
