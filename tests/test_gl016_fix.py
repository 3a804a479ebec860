"""GL016's fix where the fixtures do not reach: where `model.train()` goes."""

from __future__ import annotations

from gradlint.config import Config
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
