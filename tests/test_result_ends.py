"""Where a forward's result ends without its graph being used (analysis.result_uses):
reads that are no escape."""

from __future__ import annotations

import pytest

from gradlint.config import Config
from gradlint.engine import lint_source

GL012 = Config(select=("GL012",))

DELETED = """
import torch
from torch import nn


def show(model, inputs):
    pred, aux = model(inputs)
    print(pred[0].data.mean())
    {after}


net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
show(net, torch.randn(3, 4))
"""


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        ("del pred, aux", ["GL012"]),  # Atcold/pytorch-PPUU's test_actions frees them
        ("del pred", ["GL012"]),
        ("pred.sum().backward()", []),
    ],
    ids=["del-both", "del-one", "differentiated"],
)
def test_a_deleted_result_is_dropped_not_kept(after, expected):
    source = DELETED.format(after=after)
    assert [d.code for d in lint_source(source, "show.py", GL012)] == expected


LAYER_BY_LAYER = """
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        {layers}

    def forward(self, x):
        return self.hidden(x)

    def shapes(self):
        xs = torch.randn(10, 4)
        for layer in self.hidden:
            xs = layer(xs)
            print(xs.shape)


Encoder().shapes()
"""


@pytest.mark.parametrize(
    ("layers", "expected"),
    [
        ("self.hidden = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))", ["GL012"]),
        # jinserk/pytorch-asr: a list written out, then `nn.Sequential(*layers)`
        (
            "layers = [nn.Linear(4, 8), nn.ReLU()]\n        layers.append(nn.Softmax(1))"
            "\n        self.hidden = nn.Sequential(*layers)",
            ["GL012"],
        ),
        ("self.hidden = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])", ["GL012"]),
        # no layer has weights: nothing is recorded
        ("self.hidden = nn.Sequential(nn.ReLU(), nn.Tanh())", []),
    ],
    ids=["sequential", "starred-list", "module-list", "parameterless"],
)
def test_a_container_walked_layer_by_layer_runs_the_layers_with_weights(layers, expected):
    source = LAYER_BY_LAYER.format(layers=layers)
    assert [d.code for d in lint_source(source, "encoder.py", GL012)] == expected


HISTORY_FREE = """
import torch
from torch import nn


def evaluate(classifier, loader):
    preds = []
    for x, y in loader:
        pred = classifier(x)
        preds.append({ranked})
    return torch.cat(preds)


net = nn.Linear(4, 3)
ranks = evaluate(net, [(torch.randn(2, 4), 0)])
"""


@pytest.mark.parametrize(
    ("ranked", "expected"),
    [
        # clara-gdef's evaluate: ranks kept, the scores' graph thrown away
        ("torch.argsort(pred, dim=-1, descending=True)", ["GL012"]),
        ("pred.argsort(dim=-1)", ["GL012"]),
        ("torch.eq(pred.argmax(1), y)", ["GL012"]),
        ("pred.gt(0)", ["GL012"]),
        ("pred", []),  # the scores themselves go back to the caller
    ],
    ids=["torch-argsort", "argsort-method", "torch-eq", "gt-method", "kept"],
)
def test_a_value_ends_at_an_operation_whose_result_has_no_history(ranked, expected):
    source = HISTORY_FREE.format(ranked=ranked)
    assert [d.code for d in lint_source(source, "rank.py", GL012)] == expected


# clara-gdef's evaluate_job_enc: the models are moved where they are named
# (`enc = encoder.cuda()`), handed through two functions, and the decoder's scores go
# through a softmax layer before only their argmax is read.
THROUGH_A_LAYER = """
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 4)

    def forward(self, token, hidden):
        return self.cell(token, hidden), hidden


def greedy(dec, hidden, steps):
    softmax = torch.nn.Softmax(dim=0)
    tokens = []
    token = torch.zeros(1, 4)
    for _ in range(steps):
        output, hidden = dec(token, hidden)
        tokens.append({read})
    return tokens


def test(dec, hidden):
    return greedy(dec, hidden, 5)


def main():
    decoder = Decoder()
    dec = decoder{moved}
    {use}
"""


_PRINTED = "print(test(dec, torch.zeros(1, 4)))"
_TRAINED = "torch.stack(test(dec, torch.zeros(1, 4))).sum().backward()"


@pytest.mark.parametrize(
    ("read", "moved", "use", "expected"),
    [
        ("softmax(output).argmax(-1).item()", ".cuda()", _PRINTED, ["GL012"]),
        ("softmax(output).argmax(-1).item()", ".to('cpu')", _PRINTED, ["GL012"]),
        ("softmax(output).argmax(-1).item()", "", _PRINTED, ["GL012"]),
        # the probabilities go back to a caller that differentiates them
        ("softmax(output)", ".cuda()", _TRAINED, []),
    ],
    ids=["cuda", "to", "not-moved", "trained"],
)
def test_a_model_moved_where_it_is_named_and_a_weightless_layer_carry_the_forward(
    read, moved, use, expected
):
    source = THROUGH_A_LAYER.format(read=read, moved=moved, use=use)
    assert [d.code for d in lint_source(source, "dec.py", GL012)] == expected


# A PINN's attention selector keeps what its method hands back in the object's state,
# and its loss regularises that attribute: the caller's copy is not the only one.
KEPT_BY_THE_METHOD = """
import torch
from torch import nn


class Selector(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(4, 4)
        self.latest = None

    def weighted_features(self, x):
        {body}

    def forward(self, x):
        return (self.weighted_features(x) > 0.5).float()


def show(model, x):
    print(model.weighted_features(x).argmax().item())


show(Selector(), torch.randn(3, 4))
"""


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("self.latest = torch.sigmoid(self.linear1(x)).mean(0)\n        return self.latest", []),
        ("out = torch.sigmoid(self.linear1(x))\n        self.latest = out\n        return out", []),
        ("return torch.sigmoid(self.linear1(x)).mean(0)", ["GL012", "GL012"]),
    ],
    ids=["returns-the-attribute", "returns-what-it-stored", "keeps-nothing"],
)
def test_what_a_method_keeps_in_its_object_is_not_only_read_by_the_caller(body, expected):
    source = KEPT_BY_THE_METHOD.format(body=body)
    assert [d.code for d in lint_source(source, "sel.py", GL012)] == expected
