"""GL016 where the fixtures do not reach: an evaluation helper imported from another
file of the project, and where the fix puts `model.train()`."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradlint.config import Config
from gradlint.engine import lint_file
from gradlint.fixes import fix_source

ONLY_GL016 = Config(select=("GL016",), preview=True)

INLINE_EVAL_UNDER_COMMENT = """\
import torch


def fit(model, optimizer, batches, x_val):
    for step, (x, y) in enumerate(batches):
        # one optimisation step
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            model.eval()
            with torch.no_grad():
                print(model(x_val))
"""


def test_inline_eval_gets_train_above_the_loop_bodys_leading_comment() -> None:
    outcome = fix_source(INLINE_EVAL_UNDER_COMMENT, "train.py", ONLY_GL016, unsafe=True)
    assert outcome.source == INLINE_EVAL_UNDER_COMMENT.replace(
        "        # one optimisation step\n",
        "        model.train()\n        # one optimisation step\n",
    )


HELPER_IN_ONE_LINE_BRANCH = """\
import torch


def evaluate(model, x):
    model.eval()
    with torch.no_grad():
        return model(x)


def fit(model, optimizer, batches, x_val):
    for step, (x, y) in enumerate(batches):
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0: evaluate(model, x_val)
"""


def test_no_fix_when_the_evaluation_shares_its_line() -> None:
    outcome = fix_source(HELPER_IN_ONE_LINE_BRANCH, "train.py", ONLY_GL016, unsafe=True)
    assert [d.code for d in outcome.remaining] == ["GL016"]  # reported, without a fix
    assert outcome.source == HELPER_IN_ONE_LINE_BRANCH


EVALUATE = """
    import torch


    def evaluate(model, x):
        {body}
        with torch.no_grad():
            score = model(x).mean().item()
        {after}
        return score
"""

TRAIN = """
    from utils import evaluate


    def fit(model, optimizer, batches, x_val):
        for _ in range(10):
            for x, y in batches:
                loss = (model(x) - y).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            evaluate(model, x_val)
"""


@pytest.mark.parametrize(
    ("body", "after", "expected"),
    [
        ("model.eval()", "pass", [(7, "GL016")]),
        ("model.eval()", "model.train()", []),
        ("was = model.training; model.eval()", "model.train(was)", []),
        ("pass", "pass", []),
    ],
    ids=["leaves-eval", "ends-in-train", "restores", "never-switches"],
)
def test_an_evaluation_helper_imported_from_another_file(tmp_path: Path, body, after, expected):
    helper = textwrap.dedent(EVALUATE).format(body=body, after=after).lstrip()
    (tmp_path / "utils.py").write_text(helper, encoding="utf-8")
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN).lstrip(), encoding="utf-8")
    result = lint_file(tmp_path / "train.py", ONLY_GL016)
    assert result.error is None, result.error
    assert [(d.start.line, d.code) for d in result.diagnostics] == expected
