"""Who calls a method from the project's other files, for "is every call of it under
no_grad?" (issue "Generalise", fifteenth census batch: a vocoder's `inference`). A
parameter or variable that shares the method's name is no reference to the method, and a
call on an object whose class cannot be told (a model from `torch.hub.load`) counts as
one of its calls: under no_grad it covers the method, outside it it does not."""

from __future__ import annotations

from test_project import findings, write

GENERATOR = """
    import torch
    from torch import nn


    class Generator(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.conv = nn.Conv1d(n, 1, 3)

        def eval(self, inference=False):
            super().eval()
            if inference:
                nn.utils.remove_weight_norm(self.conv)

        def inference(self, mel):
            audio = self.forward(mel)
            return audio.short()

        def forward(self, mel):
            return self.conv(mel)
"""

LOCAL = """
    import torch
    from generator import Generator

    model = Generator(80)
    model.eval(inference=False)
    with torch.no_grad():
        audio = model.inference(torch.randn(1, 80, 20))
"""

HUB = """
    import torch

    vocoder = torch.hub.load("someone/vocoder", "vocoder")
    with torch.no_grad():
        audio = vocoder.inference(torch.randn(1, 80, 20))
"""


def test_a_method_every_caller_runs_under_no_grad_records_nothing(tmp_path):
    write(tmp_path, {"generator.py": GENERATOR, "infer.py": LOCAL, "hubconf.py": HUB})
    assert findings(tmp_path / "generator.py") == []


def test_a_call_on_an_unknown_object_outside_no_grad_may_record(tmp_path):
    unguarded = HUB.replace("with torch.no_grad():\n        ", "")
    write(tmp_path, {"generator.py": GENERATOR, "infer.py": LOCAL, "hubconf.py": unguarded})
    assert findings(tmp_path / "generator.py") == [(16, "GL012")]
