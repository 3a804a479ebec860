"""Where a model's eval mode holds, and what a forward in it costs (issue 19, section 2):
a forward whose output its statement drops, and a mode set by a constructor."""

from __future__ import annotations

import textwrap

import pytest

from gradlint.config import Config
from gradlint.diagnostics import Impact
from gradlint.engine import lint_source

PREVIEW = Config(preview=True)


def findings(source: str, path: str = "infer.py") -> list[tuple[int, str, Impact | None]]:
    result = lint_source(textwrap.dedent(source), path, PREVIEW)
    return sorted((d.start.line, d.code, d.impact) for d in result)


# -- a forward whose output is dropped at once ---------------------------------------

WARM_UP = """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
net.eval()
net(torch.zeros(1, 8))
with torch.no_grad():
    scores = net(torch.randn(16, 8))
"""


def test_a_warm_up_forward_whose_output_is_dropped_records_its_graph_once():
    # Every activation is saved for a backward while the forward runs: a peak that the
    # same warm-up under no_grad never reaches, paid once.
    assert findings(WARM_UP) == [(7, "GL004", Impact.ONCE)]


PER_BATCH = """
import torch

def extract(backbone, loader, store):
    backbone.eval()
    for images, _ in loader:
        backbone(images)  # a hook of the backbone keeps the features in `store`
        store.flush()
"""


def test_a_bare_forward_in_a_loader_loop_is_paid_per_batch():
    assert findings(PER_BATCH) == [(7, "GL004", Impact.PER_BATCH)]


def test_an_output_handed_to_a_tests_assertion_is_read_there_and_paid_once_per_test():
    # torch's own DDP test compares the eval-mode forwards: the assertion reads them
    # (analysis.torch_api.is_test_assertion); in a test, the waste is a hint
    source = """
    import unittest

    import torch

    class DDPTest(unittest.TestCase):
        def check(self, model, local_model, x):
            model.eval()
            local_model.eval()
            self.assertEqual(model(x), local_model(x))
    """
    assert findings(source, "test_ddp.py") == [(10, "GL004", Impact.TEST)] * 2


def test_an_output_handed_to_a_call_out_of_sight_and_dropped_is_read_by_that_call():
    source = """
    import torch
    from checks import compare

    def check(model, local_model, x):
        model.eval()
        local_model.eval()
        compare(model(x), local_model(x))
    """
    assert findings(source, "ddp.py") == []


# A model whose loss modules store what they compute (neural style transfer): the bare
# forward's graph is differentiated through those losses, so it is not dropped.
STYLE_TRANSFER = """
import torch

def transfer(model, style_losses, image, optimizer):
    model.eval()
    def closure():
        optimizer.zero_grad()
        model(image)
        loss = sum(sl.loss for sl in style_losses)
        loss.backward()
        return loss
    optimizer.step(closure)

def run(model, style_losses, image):
    model.eval()
    model(image)
    score = sum(sl.loss for sl in style_losses)
    score.backward()
"""


def test_a_dropped_forward_in_a_function_that_differentiates_is_not_reported():
    assert findings(STYLE_TRANSFER) == []


def test_a_dropped_forward_beside_a_helper_that_differentiates_is_not_reported():
    source = """
    import torch

    def fit(losses):
        sum(losses).backward()

    def warm(model, x, losses):
        model.eval()
        model(x)
        fit(losses)
    """
    assert findings(source) == []


def test_a_dropped_forward_beside_a_helper_that_trains_another_model_is_reported():
    # a notebook: a bare forward of one model in an early cell, a training helper of
    # the project handed another model in a later one (mandubian/pytorch-neural-ode)
    source = """
    import torch

    def train(model, loader, optimizer):
        for x in loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()

    node_trans.eval()
    node_trans(torch.zeros(1, 8))
    optimizer = torch.optim.Adam(model.parameters())
    train(model, loader, optimizer)
    """
    assert findings(source) == [(11, "GL004", Impact.ONCE)]
    # handed the same model, or something bound from it, the helper may read what the
    # forward stored: not reported
    call = "\n    train(model, loader, optimizer)\n"
    assert findings(source.replace(call, call.replace("model", "node_trans"))) == []
    stored = source.replace(
        call, "\n    losses = attach_losses(node_trans)" + call.replace("model", "losses")
    )
    assert findings(stored) == []


# -- a mode set by the constructor ----------------------------------------------------


def lint_in_project(tmp_path, source: str, **others: str):
    """GL004's findings in `source` linted as tagger.py of a project that also holds
    `others` (name -> text). (GL012 takes a forward whose mode is not known.)"""
    for name, text in others.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    path = tmp_path / "tagger.py"
    text = textwrap.dedent(source)
    path.write_text(text, encoding="utf-8")
    found = lint_source(text, str(path), PREVIEW)
    return sorted((d.start.line, d.code) for d in found if d.code == "GL004")


CONSTRUCTED = """
import torch


class Tagger:
    def __init__(self, net, device):
        self.net = net.to(device)
        self.device = device
        self.net.eval()

    def tag(self, tokens):
        scores = self.net(tokens)
        return scores.argmax(-1).tolist()


class Summariser(Tagger):
    def __init__(self, net, device, vocab):
        super().__init__(net, device)
        self.vocab = vocab

    def summarise(self, frame):
        batch = frame.unsqueeze(0).to(self.device)
        hidden = self.net.embed(batch)
        return [self.vocab[i] for i in hidden.argmax(-1).tolist()]
"""


def test_a_constructors_eval_switch_holds_in_every_method_of_the_class(tmp_path):
    # `tag` and the subclass's `summarise` run after the constructor, and nothing in the
    # classes switches `self.net` back: both forwards record a graph nobody uses.
    # `self.net.embed(batch)` is a forward: a method of a module out of sight, given a
    # tensor.
    assert lint_in_project(tmp_path, CONSTRUCTED) == [(12, "GL004"), (23, "GL004")]


def test_a_constructors_eval_switch_holds_in_the_helpers_its_methods_hand_the_model(tmp_path):
    # reported at the call, as for any model in eval mode handed to an inference helper
    source = """
    import torch


    def embed_all(net, batch):
        return net(batch)


    class Indexer:
        def __init__(self, net):
            self.net = net
            self.net.eval()

        def index(self, batch):
            vectors = embed_all(self.net, batch)
            return vectors.argmax(-1).tolist()
    """
    assert lint_in_project(tmp_path, source) == [(15, "GL004")]


def test_a_constructors_switch_does_not_hold_where_the_class_may_switch_it_back(tmp_path):
    switched = CONSTRUCTED.replace(
        "    def tag(self, tokens):",
        "    def fit(self, tokens, optimizer):\n"
        "        self.net.train()\n"
        "        self.net(tokens).sum().backward()\n"
        "        optimizer.step()\n\n"
        "    def tag(self, tokens):",
    )
    assert lint_in_project(tmp_path, switched) == []
    rebuilt = CONSTRUCTED.replace(
        "        self.vocab = vocab",
        "        self.vocab = vocab\n\n    def reload(self, net):\n        self.net = net",
    )
    assert lint_in_project(tmp_path, rebuilt) == []
    outside = (
        CONSTRUCTED + "\n\ntagger = Tagger(torch.nn.Linear(4, 4), 'cpu')\ntagger.net.train()\n"
    )
    assert lint_in_project(tmp_path, outside) == []


def test_a_module_class_or_an_unseen_base_does_not_keep_its_attributes_mode(tmp_path):
    # the wrapper's own `train()` switches its submodules back; an imported base may be
    # a module
    module = CONSTRUCTED.replace("class Tagger:", "class Tagger(torch.nn.Module):")
    assert lint_in_project(tmp_path, module) == []
    unseen = CONSTRUCTED.replace("class Tagger:", "class Tagger(Base):").replace(
        "import torch\n", "import torch\nfrom base import Base\n"
    )
    assert lint_in_project(tmp_path, unseen) == []


def test_a_method_of_an_unseen_class_is_a_forward_only_given_a_tensor(tmp_path):
    # numbers, a path, or an output dropped say nothing of a forward
    source = CONSTRUCTED.replace(
        "        hidden = self.net.embed(batch)\n",
        "        noise = self.net.sample_noise(3, 8)\n"
        "        self.net.load_weights(frame)\n"
        "        hidden = self.net.embed(frame)\n",
    ).replace("        batch = frame.unsqueeze(0).to(self.device)\n", "")
    assert lint_in_project(tmp_path, source) == [(12, "GL004")]


def test_a_method_that_sets_its_own_grad_mode_in_the_project_records_nothing(tmp_path):
    models = """
    import torch

    class Wrapper:
        def embed(self, x):
            with torch.no_grad():
                return self.encoder(x)
    """
    # a script that builds the tagger around a wrapper: without it nothing links the two
    # files, and no Wrapper reaches the tagger
    script = "from models import Wrapper\nfrom tagger import Tagger\n"
    assert lint_in_project(tmp_path, CONSTRUCTED, models=models, run=script) == [(12, "GL004")]
    # transformers' `generate` runs under `@torch.no_grad()` itself
    generating = CONSTRUCTED.replace("self.net.embed(batch)", "self.net.generate(batch)")
    assert lint_in_project(tmp_path, generating) == [(12, "GL004")]


def test_the_search_for_a_methods_definitions_is_a_dependency(tmp_path):
    # a new class of the project that defines `embed` under no_grad makes the cached
    # finding at `self.net.embed(batch)` stale, as a new caller does a caller search's
    from gradlint.analysis import project

    assert lint_in_project(tmp_path, CONSTRUCTED) == [(12, "GL004"), (23, "GL004")]
    dependencies: dict[str, str] = {}
    path = tmp_path / "tagger.py"
    lint_source(path.read_text(encoding="utf-8"), str(path), PREVIEW, dependencies=dependencies)
    assert any(key.startswith(project.DEFINITIONS_PREFIX) for key in dependencies)
    assert project.dependencies_unchanged(dependencies)
    assert not project.affected_by(dependencies, str(tmp_path.parent / "elsewhere.py"))
    encoder = "import torch\n\nclass Encoder:\n    @torch.no_grad()\n    def embed(self, x):\n        return x\n"
    (tmp_path / "encoder.py").write_text(encoder, encoding="utf-8")
    assert project.affected_by(dependencies, str(tmp_path / "encoder.py"))
    # no file imports it yet: no Encoder can reach the tagger
    assert project.dependencies_unchanged(dependencies)
    script = "from encoder import Encoder\nfrom tagger import Summariser\n"
    (tmp_path / "run.py").write_text(script, encoding="utf-8")
    assert not project.dependencies_unchanged(dependencies)


# -- the binding that made the model is no rebinding after its switch -----------------

TEST_AFTER_THE_EPOCHS = """
import sys

import torch
from torch import nn


def evaluate(model, batch):
    logits = model(batch)
    loss = logits.logsumexp(1).mean()
    return loss, (logits.argmax(1) == 0).float().mean().item()


if __name__ == "__main__":
    train_batches = [(torch.randn(4, 8), torch.tensor([0, 1, 0, 1]))]
    test_batches = [torch.randn(4, 8)]
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(), nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(1, int(sys.argv[1]) + 1):
        model.train()
        for x, y in train_batches:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        model.eval()
    for batch in test_batches:
        loss, accuracy = evaluate(model, batch)
        print(accuracy)
"""

REBOUND_AFTER_THE_SWITCH = """
import torch
from torch import nn


def evaluate(model, batch):
    return model(batch).argmax(1).float().mean().item()


def main(test_batches, load):
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(), nn.Linear(8, 2))
    model.eval()
    model = load()
    for batch in test_batches:
        print(evaluate(model, batch))
"""


def test_a_test_loop_after_the_epoch_loop_runs_in_the_eval_mode_the_loop_left():
    # learn2learn's protonet example: `model = Net()` reaches the test loop only along
    # the path that never ran an epoch; the path through the epochs leaves it in eval mode.
    assert [code for _, code, _ in findings(TEST_AFTER_THE_EPOCHS)] == ["GL004"]


def test_a_model_rebound_after_its_switch_has_an_unknown_mode():
    assert [code for _, code, _ in findings(REBOUND_AFTER_THE_SWITCH) if code == "GL004"] == []


MOVED_AFTER_THE_SWITCH = """
import torch
from torch import nn

extractor = nn.Sequential(nn.Linear(8, 8), nn.Dropout())
extractor.eval()
if torch.cuda.is_available():
    extractor = extractor.cuda().float()
for batch in [torch.randn(4, 8)]:
    features = extractor(batch)
    print(features.norm().item())
"""


def test_a_model_moved_to_a_device_after_its_switch_keeps_its_mode():
    # `.cuda()`, `.to(device)`, `.float()` return the module itself (PyTorch-GAN's srgan:
    # `feature_extractor = feature_extractor.cuda()` after its `eval()`).
    assert [code for _, code, _ in findings(MOVED_AFTER_THE_SWITCH)] == ["GL004"]


def test_a_self_returning_call_on_the_same_name_is_no_new_module():
    import libcst as cst

    from gradlint.analysis.train_mode import same_module_again

    def statement(code: str) -> cst.CSTNode:
        return cst.parse_statement(code).body[0]

    assert same_module_again(statement("net = net.cuda()"), "net")
    assert same_module_again(statement("net = net.to(device).float()"), "net")
    assert not same_module_again(statement("net = other.cuda()"), "net")
    assert not same_module_again(statement("net = load(net)"), "net")
    assert not same_module_again(statement("net = net.module"), "net")
    assert not same_module_again(statement("net = net.fuse()"), "net")


SIBLING_EXPLAINERS = """
import torch


class LRP:
    def __init__(self, model):
        self.model = model
        self.model.eval()

    def relevance(self, x):
        out = self.model(x)
        out.max().backward()
        return x.grad


class Rollout:
    def __init__(self, model):
        self.model = model
        self.model.eval()

    def attention(self, x):
        self.model(x)
        return [blk.attn_map.detach() for blk in self.model.blocks]

{outside}
"""


@pytest.mark.parametrize(
    ("outside", "expected"),
    [
        # Transformer-Explainability: two explainers, each its own `self.model`
        ("", ["GL004"]),
        ("def tune(explainer):\n    explainer.model.train()", []),
        ("def swap(explainer, other):\n    explainer.model = other", []),
        ("def freeze(explainer):\n    explainer.model.eval()", ["GL004"]),
        # a third class trains its own `self.model`, not a Rollout's
        (
            "class Tuner:\n    def __init__(self, model):\n        self.model = model\n"
            "    def fit(self):\n        self.model.train()",
            ["GL004"],
        ),
    ],
    ids=["siblings", "trained-outside", "rebound-outside", "evaluated-outside", "sibling-trains"],
)
def test_a_sibling_class_s_own_attribute_is_not_this_one_s(outside, expected):
    source = SIBLING_EXPLAINERS.format(outside=outside)
    assert [code for _, code, _ in findings(source, "explain.py")] == expected


@pytest.mark.parametrize(("affine", "expected"), [("False", []), ("True", ["GL004"])])
def test_a_torch_layer_built_without_weights_records_nothing_in_eval_mode(affine, expected):
    # PyTorchStepByStep's chapter 7: a BatchNorm1d without affine weights, switched to
    # eval and applied to a batch of data, builds no graph
    source = textwrap.dedent(
        f"""\
        import torch
        import torch.nn as nn

        batch_normalizer = nn.BatchNorm1d(num_features=2, affine={affine}, momentum=None)
        x = torch.randn(8, 2)
        batch_normalizer.eval()
        normed = batch_normalizer(x)
        print(normed.mean().item())
        """
    )
    assert [d.code for d in lint_source(source, "chapter7.py", PREVIEW)] == expected


ALIASED_MODEL = """\
import torch


class ff(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.l1 = torch.nn.Linear(2, n)
        self.l2 = torch.nn.Linear(n, 1)

    def forward(self, *inputs):
        return self.l2(torch.tanh(self.l1(torch.cat(inputs, 1))))


net = ff(15)
model = {aliased}
x = torch.linspace(0, 1, 100).reshape(-1, 1)
pred = model(x, x).detach().reshape(10, 10)
print(pred.numpy())
"""


@pytest.mark.parametrize(
    ("aliased", "expected"),
    [("net", ["GL012"]), ("lambda x, y: x * y * net(x, y)", ["GL012"]), ("other", [])],
)
def test_a_model_under_another_name_is_the_same_model(aliased, expected):
    # BMadir's PINN notebooks: `model = net` in the cell after `net = ff(15)`, then the
    # error on the grid is measured on `model(x, y).detach()`; a lambda around the net
    # runs the net where it is called (a call computing from parameters); a name out of
    # sight says nothing
    source = ALIASED_MODEL.format(aliased=aliased)
    assert [d.code for d in lint_source(source, "pinn.py", PREVIEW)] == expected
