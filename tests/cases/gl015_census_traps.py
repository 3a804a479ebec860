"""GL015 on the census's development half: the false findings it had there, as traps, and
the true shape beside each."""

import torch
import torch.nn as nn


# 1. trap (census, dev half): a pooling model's forward returns, beside its output, a
# Python ratio (`keep.size(0) / x.size(0)`); summing the ratios over an evaluation
# carries no graph, whatever the forward's other outputs hold.
class Pooler(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        out = self.lin(x)
        keep = out[out.sum(-1) > 0]
        ratio = keep.size(0) / x.size(0)
        return keep, out.sum(), ratio


pooler = Pooler()


def pooled_ratio(loader):
    pooler.eval()
    total_ratio, kept = 0, []
    for x in loader:
        out, score, ratio = pooler(x)  # error: GL004
        kept.append(out.argmax(-1))
        total_ratio += ratio
    return kept, total_ratio / len(loader)


# 2. the same forward's score, a tensor with the model's graph, summed over the loop.
def pooled_score(loader):
    total = 0
    for x in loader:
        out, score, ratio = pooler(x)
        total += score  # error: GL015
    return total


# 3. trap (census, dev half): an LSTM cell stepped through the time steps of one input
# tensor, its states collected and stacked: one forward over a sequence the tensor's
# length fixes, like a batched forward, not a history that grows with the run.
lstm_cell = nn.LSTMCell(4, 3)
sequence = torch.randn(2, 3, 4).float()
hx, cx = torch.randn(3, 3), torch.randn(3, 3)
states = []
for x_t in sequence:
    hx, cx = lstm_cell(x_t, (hx, cx))
    states.append(hx)
unrolled = torch.stack(states)


# 4. a learned vector field integrated over a grid of time points for a plot: the grid
# is a number of steps the code chooses (as `range(n)`), not the steps of an input, so
# the graph grows with it.
field = nn.Linear(2, 2)


def integrate(x, steps):
    times = torch.linspace(0.0, 1.0, steps).flip(0)
    path = []
    for t in times:
        x = x + 0.01 * t * field(x)  # error: GL012, GL015
        path.append(x.detach().numpy())
    return path


def integrate_inline(x, steps):
    for t in torch.arange(steps).float():
        x = x - 0.01 * field(x) * t  # error: GL012, GL015
    return x.sum().item()
