"""GL012: a forward's result plotted with matplotlib (`plt.plot(x, net(x))`) or handed to
numpy (`np.asarray`) is made an array, which raises "Can't call numpy() on Tensor that
requires grad" (measured for plot, scatter, imshow, hist, contourf and fill_between on
torch 2.13 and matplotlib 3.11). A result detached before it is plotted does not raise,
but its graph was still built for nothing: reported without the crash. Silent: a result
under `no_grad`, and one whose graph a backward uses as well. Lint only: markers are the
expected findings."""

import matplotlib.pyplot as plt
import numpy as np
import torch

net = torch.nn.Sequential(torch.nn.Linear(1, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
opt = torch.optim.Adam(net.parameters())
x = torch.linspace(0, 1, 100)[:, None]
for step in range(100):
    loss = (net(x) - x**2).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()


def plot_fit():
    y = net(x)  # error: GL012
    plt.plot(x, y)
    plt.savefig("fit.png")


def plot_as_image():
    grid = net(x).reshape(10, 10)  # error: GL012
    plt.imshow(grid)


def mean_prediction():
    return np.asarray(net(x)).mean()  # error: GL012


def plot_detached():
    y = net(x).detach()  # error: GL012
    plt.plot(x, y)


def plot_without_grad():
    with torch.no_grad():
        y = net(x)
    plt.scatter(x, y)


def plot_and_train():
    y = net(x)
    plt.plot(x, y.detach())
    (y - x).pow(2).mean().backward()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

    def tile_predict(self, x):
        # run for its caller, which put the model in eval mode: GL004's, there
        return self.fc(x)


def predict_tiles(x):
    tiler = Net()
    tiler.eval()
    out = tiler.tile_predict(x)  # error: GL004
    return np.argmax(out, axis=1)
