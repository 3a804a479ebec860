"""A module's autoregressive method other than `forward` (a decoder's `inference`, a
`sample` or `beam_search` loop): GL015 reported nothing in it, since what a module's
method returns may be trained through. It now says so only where that may be: the
method is `forward`, its calls are out of sight, or one of them here sits in a
computation that may be differentiated. A decoder's `inference` called only from a
synthesis helper builds a graph that grows with every step and is never used."""

from __future__ import annotations

import textwrap

from gradlint.config import Config
from gradlint.engine import lint_source

DECODER = """
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.prenet = nn.Linear(8, 8)
        self.rnn = nn.GRUCell(8, 8)
        self.proj = nn.Linear(8, 8)

    def forward(self, memory, targets):
        h = torch.zeros(memory.size(0), 8)
        outs = []
        for t in range(targets.size(1)):
            h = self.rnn(self.prenet(targets[:, t]), h)
            outs.append(self.proj(h))
        return torch.stack(outs, 1)

    def inference(self, memory, steps=200):
        h = torch.zeros(memory.size(0), 8)
        inp = torch.zeros(memory.size(0), 8)
        outs = []
        for t in range(steps):
            h = self.rnn(self.prenet(inp), h)
            inp = self.proj(h)
            outs.append(inp)
        return torch.stack(outs, 1)


"""

SYNTHESIS = """
def synthesise(decoder, memory):
    mel = decoder.inference(memory)
    return mel.cpu().numpy()


decoder = Decoder()
opt = torch.optim.Adam(decoder.parameters())
for step in range(10):
    memory, targets = torch.randn(4, 8), torch.randn(4, 20, 8)
    loss = (decoder(memory, targets) - targets).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
decoder.eval()
print(synthesise(decoder, torch.randn(1, 8)).shape)
"""


def findings(source: str) -> list[tuple[str, int]]:
    found = lint_source(textwrap.dedent(source), "t.py", Config(preview=True))
    return [(d.code, d.start.line) for d in found]


def test_an_inference_loop_called_only_for_synthesis():
    assert findings(DECODER + SYNTHESIS) == [("GL015", 26), ("GL015", 27), ("GL004", 47)]


def test_an_inference_loop_trained_through_by_its_caller():
    """Self-critical training differentiates what `sample` returns."""
    source = (
        DECODER
        + """
decoder = Decoder()
opt = torch.optim.Adam(decoder.parameters())
for step in range(10):
    out = decoder.inference(torch.randn(4, 8), steps=5)
    loss = -(out * torch.randn_like(out)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
    )
    assert findings(source) == []


def test_an_inference_loop_handed_back_to_a_differentiating_caller():
    source = (
        DECODER
        + """
def train_loss(model, memory):
    out = model.inference(memory, steps=5)
    return out.pow(2).mean()


decoder = Decoder()
opt = torch.optim.Adam(decoder.parameters())
for step in range(10):
    loss = train_loss(decoder, torch.randn(4, 8))
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
    )
    assert findings(source) == []


def test_an_inference_loop_run_by_another_modules_forward():
    source = (
        DECODER
        + """
class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = Decoder()

    def forward(self, memory):
        return self.decoder.inference(memory, steps=5)


model = Wrapper()
opt = torch.optim.Adam(model.parameters())
for step in range(10):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
    )
    assert findings(source) == []


def test_an_inference_loop_called_from_other_files_only():
    """No call in sight: what the callers do with it is not known."""
    assert findings(DECODER) == []
