"""Issue 19: a helper of the file that its callers hand a model just switched to eval()
is an evaluation function. GL004 reports each such call (the dev census labels every
call site, and a finding at the forward would catch one site of three: see
bench/real-code/README.md), and points from it at the forward inside the helper where
the graph is built. The fix wraps the call, so a caller that trains through the same
helper keeps its graph."""

from __future__ import annotations

import ast
import textwrap

from gradlint.config import Config
from gradlint.edits import apply_edits
from gradlint.engine import lint_source

PREVIEW = Config(preview=True)

# a sampler shown every few hundred steps and once at the end: every call eval()s first
EVERY_CALL = textwrap.dedent(
    """
    import torch
    from torch import nn


    def render_grid(decoder, count):
        codes = torch.randn(count, 16)
        grid = decoder(codes).reshape(count, 4, 4)
        return grid.cpu().numpy()


    decoder = nn.Sequential(nn.Linear(16, 16), nn.Dropout(0.2))
    optim = torch.optim.SGD(decoder.parameters(), lr=0.01)
    for it in range(1000):
        recon = decoder(torch.randn(8, 16))
        optim.zero_grad()
        recon.pow(2).mean().backward()
        optim.step()
        if it % 250 == 0:
            decoder.eval()
            frame = render_grid(decoder, 9)
            decoder.train()
    decoder.eval()
    poster = render_grid(decoder, 36)
    """
)

# the same helper also trains: the loss of one call goes into backward()
DISAGREE = textwrap.dedent(
    """
    import torch
    from torch import nn


    def project(head, feats):
        return head(feats).softmax(-1)


    head = nn.Linear(5, 3)
    sgd = torch.optim.SGD(head.parameters(), lr=0.1)
    for _ in range(20):
        head.train()
        probs = project(head, torch.randn(4, 5))
        sgd.zero_grad()
        probs.log().mean().backward()
        sgd.step()
    head.eval()
    ranking = project(head, torch.randn(30, 5)).argmax(-1).tolist()
    """
)


def _gl004(source: str, path: str = "sampler.py"):
    return [d for d in lint_source(source, path, PREVIEW) if d.code == "GL004"]


def _line(source: str, number: int) -> str:
    return source.splitlines()[number - 1].strip()


def _related(source: str, finding) -> list[tuple[str, str]]:
    return [(_line(source, r.start.line), r.message) for r in finding.related]


FORWARD = (
    "grid = decoder(codes).reshape(count, 4, 4)",
    "the forward of `decoder` inside the helper, where the graph is built",
)


def test_each_evaluating_call_points_at_the_helpers_forward():
    found = _gl004(EVERY_CALL)
    assert [_line(EVERY_CALL, d.start.line) for d in found] == [
        "frame = render_grid(decoder, 9)",
        "poster = render_grid(decoder, 36)",
    ]
    assert [_related(EVERY_CALL, d) for d in found] == [
        [("decoder.eval()", "`decoder` is put in eval mode here"), FORWARD],
        [("decoder.eval()", "`decoder` is put in eval mode here"), FORWARD],
    ]


def test_the_fix_wraps_the_call_and_parses():
    first = _gl004(EVERY_CALL)[0]
    assert first.fix is not None
    fixed = apply_edits(EVERY_CALL, first.fix.edits)
    ast.parse(fixed)
    assert "        with torch.no_grad():\n            frame = render_grid(decoder, 9)" in fixed
    assert [_line(fixed, d.start.line) for d in _gl004(fixed)] == [
        "poster = render_grid(decoder, 36)"
    ]


def test_callers_that_disagree_report_only_the_evaluating_call():
    (finding,) = _gl004(DISAGREE)
    assert _line(DISAGREE, finding.start.line).startswith("ranking = project(head")
    assert _related(DISAGREE, finding) == [
        ("head.eval()", "`head` is put in eval mode here"),
        (
            "return head(feats).softmax(-1)",
            "the forward of `head` inside the helper, where the graph is built",
        ),
    ]
    assert finding.fix is not None
    fixed = apply_edits(DISAGREE, finding.fix.edits)
    ast.parse(fixed)
    # the training call keeps its graph: the helper's forward is left recording
    assert "    return head(feats).softmax(-1)\n" in fixed
    assert "with torch.no_grad():\n    ranking = project(" in fixed
    assert _gl004(fixed) == []


def test_a_method_helper_points_at_its_forward():
    source = textwrap.dedent(
        """
        import torch
        from torch import nn


        class Runner:
            def __init__(self):
                self.policy = nn.Sequential(nn.Linear(6, 2), nn.Dropout(0.1))

            def scores(self, policy, obs):
                logits = policy(obs)
                return logits.max(-1).values.tolist()

            def report(self, obs):
                self.policy.eval()
                return self.scores(self.policy, obs)
        """
    )
    (finding,) = _gl004(source, "runner.py")
    assert _line(source, finding.start.line) == "return self.scores(self.policy, obs)"
    assert (
        "logits = policy(obs)",
        "the forward of `policy` inside the helper, where the graph is built",
    ) in _related(source, finding)
