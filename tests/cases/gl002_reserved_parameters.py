"""GL002 trap and positive: `register_parameter(name, None)` only reserves the name (a
batch norm without running statistics, dnn-mode-connectivity's curve BatchNorm), so the
buffers registered under the same names on the other branch are what an in-place update
changes, and nothing raises; a parameter registered with a tensor does."""

import torch
from torch import nn
from torch.nn import Parameter


class CurveBatchNorm(nn.Module):
    def __init__(self, num_features, track_running_stats=True):
        super().__init__()
        self.track_running_stats = track_running_stats
        self.register_parameter("weight", Parameter(torch.ones(num_features)))
        if self.track_running_stats:
            self.register_buffer("running_mean", torch.zeros(num_features))
            self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))
        else:
            self.register_parameter("running_mean", None)
            self.register_parameter("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.num_batches_tracked.zero_()

    def forward(self, x):
        if self.training and self.track_running_stats:
            self.num_batches_tracked += 1
        return x * self.weight

    def reset_weight(self):
        self.weight.fill_(1.0)  # error: GL002
