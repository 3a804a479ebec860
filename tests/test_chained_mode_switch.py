"""A mode switch read through the module methods that return the module itself:
`model.cuda().eval().half()` (tacotron2's inference notebook), `net.to(device).eval()`
and `net.cpu().train()` switch the module they start from, whatever the statement
binds."""

from __future__ import annotations

import textwrap

import pytest

from gradlint.config import Config
from gradlint.engine import lint_source

PREVIEW = Config(preview=True)

SCRIPT = """
import torch
from torch import nn

ranker = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.3), nn.Linear(6, 1))
SWITCH
scores = ranker(torch.randn(12, 6))
print(scores.squeeze(1).numpy())
"""


def _found(source: str, path: str = "rank.py") -> list[tuple[int, str]]:
    return [(d.start.line, d.code) for d in lint_source(textwrap.dedent(source), path, PREVIEW)]


@pytest.mark.parametrize(
    "switch",
    [
        'ranker.to("cpu").eval()',
        "_ = ranker.float().eval().double()",
        "frozen = ranker.cpu().eval()",
        "ranker.train(False).float()",
    ],
)
def test_a_switch_inside_a_chain_puts_the_module_in_eval_mode(switch):
    assert _found(SCRIPT.replace("SWITCH", switch)) == [(7, "GL004")]


def test_a_switch_back_inside_a_chain_ends_eval_mode():
    source = """
    import torch
    from torch import nn

    ranker = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.3), nn.Linear(6, 1))
    ranker.eval()
    with torch.no_grad():
        print(ranker(torch.randn(2, 6)).sum().item())
    ranker.cpu().train()
    scores = ranker(torch.randn(12, 6))
    print(scores.detach().numpy())
    """
    # in training mode again: a forward whose graph is thrown away (GL012), not one of
    # a model in eval mode (GL004)
    assert _found(source) == [(10, "GL012")]


def test_a_method_forward_after_a_chained_switch_in_a_notebook_like_script():
    # the shape of an inference notebook: a loader builds the model out of sight, the
    # switch is chained, the forward is a method given a tensor
    source = """
    import torch
    from loaders import restore

    synth = restore("ckpt.pt")
    _ = synth.cuda().eval().half()
    tokens = torch.autograd.Variable(torch.zeros(1, 9)).cuda().long()
    mel, post, gates, align = synth.infer(tokens)
    print(post.float().data.cpu().numpy())
    """
    assert _found(source, "speak.py") == [(8, "GL004")]
