"""A function that trains, then evaluates and returns only metrics: the MAML guard (a
differentiating function that returns what a forward computes keeps it recording) must
not follow the forward's result through a name the value analysis proves graph-free."""

from __future__ import annotations

import textwrap

from gradlint.config import Config
from gradlint.engine import lint_source

# learn2learn's protonet test, reduced: `acc` is an argmax comparison, the only result of
# the test loop that reaches the return
PROTONET = textwrap.dedent(
    """
    import torch.nn.functional as F


    def accuracy(predictions, targets):
        predictions = predictions.argmax(dim=1).view(targets.shape)
        return (predictions == targets).sum().float() / targets.size(0)


    def fast_adapt(model, data, labels):
        logits = model(data)
        loss = F.cross_entropy(logits, labels)
        acc = accuracy(logits, labels)
        return loss, acc


    def main(model, optimizer, tasks, epochs):
        for epoch in range(epochs):
            model.train()
            for data, labels in tasks:
                loss, acc = fast_adapt(model, data, labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        model.eval()
        n_acc = 0.0
        for data, labels in tasks:
            loss, acc = fast_adapt(model, data, labels)
            n_acc += acc
        test_accuracy = n_acc / len(tasks)
        return test_accuracy
    """
)


def _findings(source: str) -> list[tuple[str, str]]:
    lines = source.splitlines()
    found = lint_source(source, "protonet.py", Config(preview=True))
    return [(d.code, lines[d.start.line - 1].strip()) for d in found]


def test_a_graph_free_accuracy_does_not_carry_the_test_forward_to_the_return():
    assert _findings(PROTONET) == [("GL004", "loss, acc = fast_adapt(model, data, labels)")]


def test_returning_the_loss_still_keeps_the_test_forward_recording():
    # the test loop's loss is returned: a caller may differentiate it (a meta-objective)
    returns_loss = PROTONET.replace("n_acc += acc", "n_acc += loss")
    assert _findings(returns_loss) == []
