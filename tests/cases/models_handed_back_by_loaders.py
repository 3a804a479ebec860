"""A loader that builds the model, loads its weights and hands it back: as the name
bound in the loader (`return model`), moved on the way out (`return model.to(device)`),
or switched to eval mode on the way out (`return model.eval()`). What the caller runs
is that model, with its weights and in the mode the loader left it in; before, only a
loader that returned the model's call itself was known to build weights, and only a
bare `return model` carried the loader's `eval()` to the caller."""

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(x)


def load_model(path):
    model = Net()
    model.load_state_dict(torch.load(path))
    return model


def load_on(path, device):
    model = Net()
    model.load_state_dict(torch.load(path))
    return model.to(device)


def load_for_inference(path):
    model = Net()
    model.load_state_dict(torch.load(path))
    return model.eval()


def load_moved_for_inference(path, device):
    model = Net()
    model.eval()
    return model.to(device)


def load_for_training(path):
    model = Net()
    model.eval()
    return model.train()


def predict(path, x):
    model = load_model(path)
    return model(x).numpy()  # error: GL012


def predict_on(path, x):
    model = load_on(path, "cpu")
    return model(x).numpy()  # error: GL012


def infer(path, x):
    model = load_for_inference(path)
    return model(x).numpy()  # error: GL004


def infer_on(path, x):
    model = load_moved_for_inference(path, "cpu")
    return model(x).numpy()  # error: GL004


def finetune(path, x):
    model = load_for_training(path)
    return model(x).pow(2).mean()
