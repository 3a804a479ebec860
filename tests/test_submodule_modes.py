"""A model's layers walked one by one (`for layer in vgg.features: x = layer(x)`, `for
m in net.children()`) are in the model's mode: after `vgg.eval()` their forwards are
an eval-mode model's (GL004), not a training-mode one's (GL012), and a walk whose
result is differentiated (style transfer's image) uses its graph."""

from __future__ import annotations

import textwrap

from gradlint.config import Config
from gradlint.engine import lint_source

FEATURES = """
import torch
import torchvision


def features(images):
    vgg = torchvision.models.vgg16(weights="DEFAULT")
    vgg.eval()
    feats = []
    for x in images:
        for layer in WALKED:
            x = layer(x)
        feats.append(x.flatten().cpu().numpy())
    return feats
"""


def findings(source: str) -> list[tuple[str, int]]:
    found = lint_source(textwrap.dedent(source), "t.py", Config(preview=True))
    return [(d.code, d.start.line) for d in found]


def test_the_layers_of_an_eval_mode_model_walked_one_by_one():
    for walked in ("vgg.features", "vgg.children()", "vgg.modules()"):
        assert findings(FEATURES.replace("WALKED", walked)) == [("GL004", 12)], walked


def test_named_submodules_walked():
    source = FEATURES.replace("for layer in WALKED:", "for _, layer in vgg.named_children():")
    assert findings(source) == [("GL004", 12)]


def test_a_walk_that_is_differentiated_uses_its_graph():
    source = """
    import torch
    import torchvision


    def stylise(target):
        vgg = torchvision.models.vgg16(weights="DEFAULT")
        vgg.eval()
        image = torch.rand(1, 3, 64, 64, requires_grad=True)
        opt = torch.optim.Adam([image])
        for step in range(100):
            x = image
            for layer in vgg.features:
                x = layer(x)
            loss = (x - target).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return image
    """
    assert findings(source) == []


def test_a_walk_over_something_not_in_eval_mode_says_nothing_of_eval_mode():
    source = FEATURES.replace("    vgg.eval()\n", "")
    assert all(code != "GL004" for code, _ in findings(source))


def test_a_list_of_bound_methods_walked_is_no_layer_chain():
    """`for gen_params in self.param_list: for n, p in gen_params():` after
    `self.eval()` (an EWC Fisher estimate): the elements are bound methods, called
    with nothing, not layers chained on an input."""
    source = """
    import torch
    from torch import nn


    class Learner(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)
            self.param_list = [self.named_parameters]

        def estimate(self, x):
            self.eval()
            out = self(x).sum()
            out.backward()
            total = 0.0
            for gen_params in self.param_list:
                for n, p in gen_params():
                    total += p.grad.pow(2).sum().item()
            return total
    """
    assert findings(source) == []


def test_a_list_of_functions_on_the_model_is_no_layer_chain():
    source = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            self.pre = [lambda t: t * 2, lambda t: t + 1]

        def forward(self, x):
            return self.features(x)


    net = Net()
    net.eval()
    y = torch.randn(2, 4)
    for f in net.pre:
        y = f(y)
    print(y.sum().item())
    """
    assert findings(source) == []
