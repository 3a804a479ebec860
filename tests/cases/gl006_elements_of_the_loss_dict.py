"""GL006 on the elements of what the loop backpropagates, iterated over inside it: a
model that returns a dict of losses (detection models, VAEs with their terms), whose
entries are logged one by one (`for k, v in loss_dict.items(): sums[k] += v`,
`log[k].append((step, v))`) keeps every step's graph. Not when the entries are read as
numbers, nor when what is iterated over is not what the loop differentiates."""

from collections import defaultdict

import torch
from torch import nn


class TwoLosses(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        out = self.fc(x)
        return {"fit": out.pow(2).mean(), "reg": out.abs().mean()}


model = TwoLosses()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sums = {"fit": 0.0, "reg": 0.0}
log = defaultdict(list)
items = defaultdict(list)
lrs = []
seen = []
for step, (x, y) in enumerate([(torch.randn(8, 4), torch.randn(8))] * 3):
    x, y = x.to("cpu"), y.to("cpu")
    loss_dict = model(x)
    total = sum(loss_dict.values()) + (loss_dict["fit"] - y.mean()).abs()
    opt.zero_grad()
    total.backward()
    opt.step()
    for k, v in loss_dict.items():
        sums[k] += v  # error: GL006
        log[k].append((step, v))  # error: GL006
        items[k].append(v.item())
    for group in opt.param_groups:
        lrs.append(group["lr"])
    for label in y:  # the batch's labels, moved to the device: no graph
        seen.append(label)
    for row in x:
        seen.append(row)
