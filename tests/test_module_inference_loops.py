"""A module's autoregressive method other than `forward` (a decoder's `inference`, a
`sample` or `beam_search` loop): GL015 reported nothing in it, since what a module's
method returns may be trained through. It now says so only where that may be: the
method is `forward`, its calls are out of sight, or one of them here sits in a
computation that may be differentiated. A decoder's `inference` called only from a
synthesis helper builds a graph that grows with every step and is never used."""

from __future__ import annotations

import tempfile
import textwrap
from pathlib import Path

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
    """Linted as a file of a project of its own (the caller searches read no other)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "t.py")
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        found = lint_source(path.read_text(encoding="utf-8"), str(path), Config(preview=True))
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


UNROLL = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRUCell(4, 4)
        self.fc = nn.Linear(4, 4)

    def unroll(self, x, steps):
        h = torch.zeros(1, 4)
        outs = []
        for _ in range(steps):
            h = self.rnn(x, h)
            outs.append(self.fc(h))
        return torch.stack(outs)

    def forward(self, x):
        return self.fc(x)
"""


def test_an_unroll_handed_back_through_two_helpers_to_a_backward():
    source = (
        UNROLL
        + """

model = Net()
opt = torch.optim.Adam(model.parameters())
crit = nn.MSELoss()


def predict(x):
    return model.unroll(x, 100)


def loss_fn(x, y):
    return crit(predict(x), y)


def train(x, y):
    opt.zero_grad()
    loss = loss_fn(x, y)
    loss.backward()
    opt.step()
"""
    )
    assert findings(source) == []


def test_an_unroll_handed_back_through_a_plain_class_to_a_backward():
    source = (
        UNROLL
        + """

class Trainer:
    def __init__(self):
        self.model = Net()
        self.opt = torch.optim.Adam(self.model.parameters())
        self.crit = nn.MSELoss()

    def run_model(self, x):
        preds = self.model.unroll(x, 100)
        return preds

    def compute_loss(self, x, y):
        preds = self.run_model(x)
        return self.crit(preds, y)

    def step(self, x, y):
        loss = self.compute_loss(x, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
"""
    )
    assert findings(source) == []


def test_a_smoke_test_at_the_bottom_of_a_model_file_says_nothing_of_training():
    """`if __name__ == "__main__":` runs the method once to print a shape; the model may
    be trained from another file. The loop is not reported (the forward there is, as
    GL012's cheap hint)."""
    source = (
        UNROLL
        + """

if __name__ == "__main__":
    net = Net()
    out = net.unroll(torch.randn(2, 4), 20)
    print(out.shape)
"""
    )
    assert [code for code, _ in findings(source)] == ["GL012"]


def test_a_method_called_twice_by_one_helper_is_asked_once():
    """The second call found the helper (a method of the module) already being asked
    about, and took that for "may be trained"."""
    source = """
import torch
import torch.nn as nn


class Dec(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRUCell(4, 4)
        self.fc = nn.Linear(4, 4)

    def inference(self, x, steps):
        h = torch.zeros(x.size(0), 4)
        outs = []
        for _ in range(steps):
            h = self.rnn(x, h)
            x = self.fc(h)
            outs.append(x)
        return torch.stack(outs, 1)

    def synthesize(self, x):
        a = self.inference(x, 50)
        b = self.inference(x, 60)
        return a.detach().cpu().numpy()

    def forward(self, x):
        return self.fc(x)


def demo():
    dec = Dec()
    print(dec.synthesize(torch.randn(2, 4)))
"""
    assert [code for code, _ in findings(source) if code == "GL015"] == ["GL015", "GL015"]
