"""Issue 19: a helper whose callers hand it a model just switched to eval() is an
evaluation function, and its finding belongs at the forward inside it, once, with the
evaluating calls and their eval switches as related locations. When every call of the
helper is such a call, the fix wraps the forward; when its callers disagree, the
finding still sits at the forward, and the fix wraps the evaluating call, since the
forward must keep recording for the call that trains through it."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from gradlint.config import Config
from gradlint.edits import apply_edits
from gradlint.engine import lint_file, lint_source

PREVIEW = Config(preview=True)

# a sampler shown every few hundred steps and once at the end: every call eval()s first
EVERY_CALL = """
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

# the same helper also trains: the loss of one call goes into backward()
DISAGREE = """
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


def _gl004(source: str, path: str = "sampler.py"):
    return [d for d in lint_source(textwrap.dedent(source), path, PREVIEW) if d.code == "GL004"]


def _line(source: str, number: int) -> str:
    return textwrap.dedent(source).splitlines()[number - 1].strip()


def test_every_caller_in_eval_mode_reports_once_at_the_helpers_forward():
    found = _gl004(EVERY_CALL)
    assert [_line(EVERY_CALL, d.start.line) for d in found] == [
        "grid = decoder(codes).reshape(count, 4, 4)"
    ]
    related = [(_line(EVERY_CALL, r.start.line), r.message) for r in found[0].related]
    assert related == [
        ("decoder.eval()", "`decoder` is put in eval mode here"),
        ("frame = render_grid(decoder, 9)", "called here, while `decoder` is in eval mode"),
        ("decoder.eval()", "`decoder` is put in eval mode here"),
        ("poster = render_grid(decoder, 36)", "called here, while `decoder` is in eval mode"),
    ]
    # the sampling call in the training loop runs it again and again
    assert found[0].impact is not None and found[0].impact.value != "once"


def test_every_caller_in_eval_mode_fixes_the_forward_inside_the_helper():
    source = textwrap.dedent(EVERY_CALL)
    (finding,) = _gl004(source)
    assert finding.fix is not None
    fixed = apply_edits(source, finding.fix.edits)
    ast.parse(fixed)
    assert "    with torch.no_grad():\n        grid = decoder(codes)" in fixed
    assert "frame = render_grid(decoder, 9)\n" in fixed  # the calls are left as they were
    assert _gl004(fixed) == []


def test_callers_that_disagree_report_at_the_forward_and_fix_the_evaluating_call():
    found = _gl004(DISAGREE)
    assert [_line(DISAGREE, d.start.line) for d in found] == ["return head(feats).softmax(-1)"]
    related = [(_line(DISAGREE, r.start.line), r.message) for r in found[0].related]
    assert related == [
        ("head.eval()", "`head` is put in eval mode here"),
        (
            "ranking = project(head, torch.randn(30, 5)).argmax(-1).tolist()",
            "called here, while `head` is in eval mode (not every call of the function is)",
        ),
    ]
    source = textwrap.dedent(DISAGREE)
    fixed = apply_edits(source, found[0].fix.edits)
    ast.parse(fixed)
    # the training call keeps its graph: only the evaluating call is wrapped
    assert "    return head(feats).softmax(-1)\n" in fixed
    assert "with torch.no_grad():\n    ranking = project(" in fixed
    assert _gl004(fixed) == []


def test_a_method_helper_called_twice_after_eval_is_one_finding():
    source = """
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
            first = self.scores(self.policy, obs)
            second = self.scores(self.policy, obs * 2)
            return first + second
    """
    found = _gl004(source, "runner.py")
    assert [_line(source, d.start.line) for d in found] == ["logits = policy(obs)"]
    calls = [r for r in found[0].related if r.message.startswith("called here")]
    assert len(calls) == 2


def test_a_helper_another_file_also_calls_fixes_the_evaluating_call(tmp_path: Path):
    (tmp_path / "setup.py").write_text("", encoding="utf-8")
    (tmp_path / "sampler.py").write_text(textwrap.dedent(EVERY_CALL), encoding="utf-8")
    (tmp_path / "train_more.py").write_text(
        "from sampler import render_grid, decoder\n\nloss = render_grid(decoder, 4).sum()\n",
        encoding="utf-8",
    )
    result = lint_file(tmp_path / "sampler.py", PREVIEW)
    assert result.error is None, result.error
    (finding,) = [d for d in result.diagnostics if d.code == "GL004"]
    source = textwrap.dedent(EVERY_CALL)
    assert _line(source, finding.start.line) == "grid = decoder(codes).reshape(count, 4, 4)"
    assert finding.fix is not None
    fixed = apply_edits(source, finding.fix.edits)
    ast.parse(fixed)
    assert "        with torch.no_grad():\n            frame = render_grid(decoder, 9)" in fixed
    assert "    grid = decoder(codes)" in fixed  # the forward is left recording
