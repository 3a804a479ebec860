"""A loader that freezes the model it hands back (`for p in model.parameters():
p.requires_grad = False`): a forward of it on inputs without history records nothing,
so reading its output as numbers neither wastes a graph nor raises. A loader that only
puts its model in eval mode hands back one that still records (dino's video_generation
keeps its frozen ViT in `self.model`)."""

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def load_frozen(path):
    frozen = Net()
    frozen.load_state_dict(torch.load(path))
    for p in frozen.parameters():
        p.requires_grad = False
    return frozen.eval()


def load_switched(path):
    model = Net()
    model.load_state_dict(torch.load(path))
    return model.eval()


class Visualiser:
    def __init__(self, path):
        self.model = self._load(path)

    def _load(self, path):
        backbone = Net()
        backbone.requires_grad_(False)
        backbone.load_state_dict(torch.load(path))
        return backbone

    def attention(self, x):
        return self.model(x).numpy()


def frozen_features(path, x):
    return load_frozen(path)(x).numpy()


def switched_features(path, x):
    model = load_switched(path)
    return model(x).numpy()  # error: GL004
