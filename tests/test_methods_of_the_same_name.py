"""A method's result followed out to its callers (analysis/result_uses.py): calls in the
same file of another class's method of the same name (`self.encoder.inference(x)`
beside `Model.inference`), whose receivers' classes are known, are not calls of it, so
what `Model.inference` returns is followed to its caller in another file."""

from __future__ import annotations

from test_project import preview_findings, write

MODEL = """
    from torch import nn


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 8)

        def forward(self, x):
            return self.fc(x)

        def inference(self, x):
            return self.fc(x)


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.out = nn.Linear(8, 2)

        def forward(self, h):
            return self.out(h)

        def inference(self, h):
            return self.out(h).softmax(-1)


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()
            self.decoder = Decoder()

        def inference(self, x):
            h = self.encoder.inference(x)
            return self.decoder.inference(h)
"""

RUN = """
    import torch
    from model import Model

    model = Model()
    model.load_state_dict(torch.load("model.pt"))
    model.eval()
    print(model.inference(torch.randn(2, 4)).argmax(-1).tolist())
"""


def test_another_classs_method_of_the_same_name_is_not_a_caller(tmp_path):
    write(tmp_path, {"model.py": MODEL, "run.py": RUN})
    assert preview_findings(tmp_path / "model.py") == [(36, "GL012")]


def test_a_call_on_an_object_of_unknown_class_may_be_a_caller(tmp_path):
    unknown = MODEL + "\n\n    def score(net, x):\n        return net.inference(x).sum()\n"
    write(tmp_path, {"model.py": unknown, "run.py": RUN})
    assert preview_findings(tmp_path / "model.py") == []
