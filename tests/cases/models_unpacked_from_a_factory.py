"""`G, D = build_models()`, `model, optimizer = setup(lr)`: a name unpacked from a call
of the file's own function, each of whose returns is a tuple that has, at the name's
place, a module with weights (built there, or a name bound to one). Before, only a name
bound to the whole call was asked of what the function returns."""

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def build_models():
    return Net(), Net()


def setup(lr):
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    return model, optimizer


def sample():
    generator, discriminator = build_models()
    return generator(torch.randn(1, 4)).numpy()  # error: GL012


def predict(x):
    model, _ = setup(0.1)
    return model(x).argmax(1).tolist()  # error: GL012


def step(x):
    _, optimizer = setup(0.1)
    return optimizer
