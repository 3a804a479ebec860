"""GL006 on a loss module that keeps a running total of what its forward computes
(bj1123/seq2seq's PlainLoss: `self.cum_loss += l` in `forward`), called in a training
loop: each call adds the loss it hands back, graph and all, to the object's state."""

from __future__ import annotations

import pytest

from gradlint.config import Config
from gradlint.engine import lint_source
from gradlint.fixes import fix_source

GL006 = Config(select=("GL006",))

LOSS_MODULE = """
import torch
from torch import nn
import torch.nn.functional as F


class PlainLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.cum_loss = 0

    def forward(self, out, y):
        l = F.cross_entropy(out, y)
        self.cum_loss += {kept}
        return l


model = nn.Linear(4, 2)
criteria = PlainLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(1000):
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    loss = criteria(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 100 == 0:
        print(criteria.cum_loss / 100)
        criteria.cum_loss = 0
"""


@pytest.mark.parametrize(
    ("kept", "expected"),
    [
        ("l", ["GL006"]),
        ("l * 2", ["GL006"]),
        ("l.item()", []),  # a number: nothing kept
        ("l.detach()", []),
    ],
    ids=["loss", "scaled", "item", "detached"],
)
def test_a_loss_module_that_keeps_a_running_total_of_its_graph(kept, expected):
    source = LOSS_MODULE.format(kept=kept)
    found = lint_source(source, "train.py", GL006)
    assert [d.code for d in found] == expected
    if found:
        # the backward has freed the activations; the nodes stay, a few KB a step
        assert "only the graph's nodes" in found[0].message


def test_no_fix_is_offered_at_the_call_the_loss_comes_from():
    # `.item()` belongs inside the module; on the call it would break the backward
    outcome = fix_source(LOSS_MODULE.format(kept="l"), "train.py", GL006, unsafe=True)
    assert [d.code for d in outcome.remaining] == ["GL006"]
