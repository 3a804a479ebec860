"""Values rebound in every arm of an `if` (reaching definitions, analysis/index.py): what
was bound before the `if` does not reach past it. A rollout that turns each output of
the policy into numpy on both arms of a device test records a graph for nothing; where
one arm keeps the tensor, the graph may be kept and nothing is said."""

import numpy as np
import torch
from torch import nn


class Evaluator:
    """JunhongXu/ppo-pytorch's distributed evaluator, reduced."""

    def __init__(self, cuda):
        self.net = nn.Linear(4, 3)
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.cuda = cuda

    def sample(self, env, obs, steps):
        values, logprobs = [], []
        for _ in range(steps):
            value, logprob, action = self.net.forward(torch.as_tensor(obs))  # error: GL012
            action = action.cpu().data.numpy() if self.cuda else action.data.numpy()
            obs = env.step(action)
            if self.cuda:
                value, logprob = value.data.cpu().numpy(), logprob.data.cpu().numpy()
            else:
                value, logprob = value.data.numpy(), logprob.data.numpy()
            values.append(value)
            logprobs.append(logprob)
        return np.asarray(values), np.asarray(logprobs)

    def sample_kept(self, env, obs, steps):
        # one arm keeps the tensors, graph and all: they may be differentiated later
        logprobs = []
        for _ in range(steps):
            value, logprob, action = self.net.forward(torch.as_tensor(obs))
            obs = env.step(action.data.numpy())
            if self.cuda:
                logprob = logprob.data.cpu().numpy()
            logprobs.append(logprob)
        return logprobs
