"""A language model's own `step` method, `out, h, c = self.step(x, h, c)`, hands back
the LSTM's state with its history: it is no environment's `step` (whose records are
data), whatever the three names. And a sampler that returns only `torch.multinomial`
draws returns none of the graph its loop carried, so nothing it hands back can be
trained through: the hidden state grown over the whole sequence is built for nothing.
Before, the call was read as an environment's step and the draws as the carried
state leaving the function (a LeakGAN target LSTM, fresh dev batch)."""

import torch
import torch.nn as nn


class TargetLSTM(nn.Module):
    def __init__(self, vocab_size, hidden_dim):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.embed = nn.Embedding(vocab_size, hidden_dim)
        self.lstm = nn.LSTM(hidden_dim, hidden_dim, batch_first=True)
        self.fc = nn.Linear(hidden_dim, vocab_size)

    def forward(self, x):
        out, _ = self.lstm(self.embed(x))
        return self.fc(out).log_softmax(-1)

    def step(self, x, h, c):
        out, (h, c) = self.lstm(self.embed(x), (h, c))
        return self.fc(out.view(-1, self.hidden_dim)).log_softmax(-1), h, c

    def sample(self, batch_size, seq_len):
        samples = []
        h = torch.zeros(1, batch_size, self.hidden_dim)
        c = torch.zeros(1, batch_size, self.hidden_dim)
        x = torch.zeros(batch_size, 1, dtype=torch.int64)
        for _ in range(seq_len):
            out, h, c = self.step(x, h, c)  # error: GL012, GL015
            x = torch.multinomial(torch.exp(out), 1)
            samples.append(x)
        out = torch.cat(samples, dim=1)
        return out

    def unroll(self, x, steps):
        """Hands back the logits, which a caller out of sight may train through."""
        h = torch.zeros(1, x.size(0), self.hidden_dim)
        c = torch.zeros(1, x.size(0), self.hidden_dim)
        outs = []
        for _ in range(steps):
            out, h, c = self.step(x, h, c)
            outs.append(out)
        return torch.stack(outs, 1)
