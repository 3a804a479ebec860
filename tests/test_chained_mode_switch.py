"""A mode switch read through the module methods that return the module itself:
`model.cuda().eval().half()` (tacotron2's inference notebook), `net.to(device).eval()`
and `net.cpu().train()` switch the module they start from, whatever the statement
binds."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradlint.config import Config
from gradlint.engine import lint_file, lint_source

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


# -- the project's other files: their summaries and the caller search read it too -------


def _lint_in(tmp_path: Path, files: dict[str, str], linted: str) -> list[tuple[int, str]]:
    (tmp_path / "setup.py").write_text("", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    result = lint_file(tmp_path / linted, PREVIEW)
    assert result.error is None, result.error
    return [(d.start.line, d.code) for d in result.diagnostics]


@pytest.mark.parametrize("switch", ['net.to("cpu").eval()', "net.cpu().eval().float()"])
def test_a_loader_of_another_file_returns_a_model_a_chain_switched(tmp_path, switch):
    loaders = f"""
    import torch
    from torch import nn


    def restore(path):
        net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.2))
        net.load_state_dict(torch.load(path))
        {switch}
        return net
    """
    main = """
    import torch
    from loaders import restore

    model = restore("weights.pt")
    out = model(torch.randn(3, 4))
    print(out.numpy())
    """
    assert _lint_in(tmp_path, {"loaders.py": loaders, "main.py": main}, "main.py") == [(5, "GL004")]


def test_a_caller_in_another_file_that_chain_switches_the_attribute(tmp_path):
    # every call of `paint` in the project runs after `p.G` is put in eval mode, here
    # through `.cpu()`: the method's forward runs in eval mode (not a plain GL012)
    painter = """
    import torch
    from torch import nn


    class Painter:
        def __init__(self):
            self.G = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.1))

        def freeze(self):
            self.G.eval()

        def paint(self, z):
            img = self.G(z)
            return img.tolist()
    """
    main = """
    import torch
    from painter import Painter

    p = Painter()
    p.G.cpu().eval()
    pic = p.paint(torch.randn(2, 4))
    """
    assert _lint_in(tmp_path, {"painter.py": painter, "main.py": main}, "painter.py") == [
        (13, "GL004")
    ]
