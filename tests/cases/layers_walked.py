"""Models whose layers are reached another way than by a name bound to a constructor
(analysis/forwards.py): a Sequential built from an `OrderedDict` of named layers, a
`ModuleDict` display, the layers handed out by `children()` / `named_children()`, a
checkpoint loader's result the code calls (a pickled model; a loaded tensor is never
called; a TorchScript file may be frozen), and a legacy tensor constructor's output handed to a held model's method."""

from collections import OrderedDict

import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Sequential(OrderedDict([("fc", nn.Linear(4, 8)), ("act", nn.ReLU())]))
        self.heads = nn.ModuleDict({"a": nn.Linear(8, 2)})

    def forward(self, x):
        return self.heads["a"](self.hidden(x))

    def shapes(self, xs):
        for layer in self.hidden:
            xs = layer.forward(xs)  # error: GL012
        print(xs.shape)


def layer_norms(net, x):
    norms = []
    for layer in net.children():
        x = layer(x)  # error: GL012
        norms.append(x.norm().item())
    return norms


def first_layer_sum(net, x):
    for name, module in net.named_children():
        if name == "0":
            return module(x).sum().item()  # error: GL012
    return None


def accuracy_of_checkpoint(path, batches):
    net = torch.load(path, map_location="cpu")
    correct = 0
    for x, y in batches:
        correct += (net(x).argmax(1) == y).sum().item()  # error: GL012
    return correct


def segment(image):
    seg_model = torch.jit.load("segmenter.ts")  # often frozen for inference: weights constants
    return seg_model(image).argmax(1).cpu().numpy()


def nearest(q):
    embeddings = torch.load("embeddings.pt")
    return embeddings.mm(q).argmax(1).tolist()


def translate(model, ids):
    device = next(model.parameters()).device
    src = torch.LongTensor(ids).view(1, -1)
    out = model.greedy_decode(src, device)  # error: GL012
    return out.argmax(-1).tolist()


stack = nn.Sequential(OrderedDict([("fc1", nn.Linear(4, 8)), ("fc2", nn.Linear(8, 2))]))
print(stack(torch.randn(2, 4)).sum().item())  # error: GL012
Encoder().shapes(torch.randn(2, 4))
print(layer_norms(stack, torch.randn(2, 4)), first_layer_sum(stack, torch.randn(2, 4)))
