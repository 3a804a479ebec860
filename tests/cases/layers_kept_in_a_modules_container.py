"""A layer kept in a module's container and called through it (`net.heads[1](x)`) runs
in the mode of the module that holds it: after `net.eval()`, that forward is an
evaluation's, as `net.encoder(x)` already was."""

import torch
import torch.nn as nn


class MultiHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(4, 2) for _ in range(3)])
        self.blocks = nn.ModuleDict({"first": nn.Linear(4, 4)})

    def forward(self, x):
        return self.heads[0](self.blocks["first"](x))


net = MultiHead()
net.eval()
x = torch.randn(2, 4)
print(net.heads[1](x).numpy())  # error: GL004
print(net.blocks["first"](x).numpy())  # error: GL004
