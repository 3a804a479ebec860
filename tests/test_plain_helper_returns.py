"""What a helper hands back when it makes numbers of a tensor, or when the object it
is called on is only known through the callers: the seventh census batch's GL006 false
positives (imaml's `utils.to_numpy(tloss)`, a GNN course's `net.accuracy(scores,
labels)` on the `net` a notebook passes to `train_one_epoch`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from test_project import findings, write

from gradlint.config import Config
from gradlint.engine import lint_source

TO_NUMPY = """
import numpy as np


def to_numpy(x):
    if type(x) == np.ndarray:
        return x
    else:
        try:
            return x.data.numpy()
        except:
            return x.cpu().data.numpy()
"""

TRAIN = """
import torch
from pkg import utils


def train(model, opt, x, y, steps):
    train_loss = []
    for i in range(steps):
        opt.zero_grad()
        tloss = ((model(x) - y) ** 2).mean()
        tloss.backward()
        opt.step()
        train_loss.append(ACCUMULATED)
    return train_loss
"""


def _codes(source: str) -> list[tuple[int, str]]:
    source = textwrap.dedent(source).lstrip()
    return [(d.start.line, d.code) for d in lint_source(source, "train.py", Config())]


def _project(tmp_path: Path, accumulated: str, helper: str = TO_NUMPY) -> list[tuple[int, str]]:
    (tmp_path / ".git").mkdir(parents=True)
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/utils.py": helper,
            "pkg/learner.py": TRAIN.replace("ACCUMULATED", accumulated),
        },
    )
    return findings(tmp_path / "pkg" / "learner.py")


def test_a_helper_of_another_file_that_makes_numpy_of_its_argument(tmp_path: Path):
    # the array handed back as it came (`type(x) == np.ndarray`), every other return
    # `.numpy()`, one of them in an `except:` block
    assert _project(tmp_path, "utils.to_numpy(tloss)") == []


def test_the_tensor_itself_is_still_accumulated_with_its_graph(tmp_path: Path):
    assert _project(tmp_path, "tloss") == [(12, "GL006")]


def test_a_helper_that_hands_back_a_tensor_unless_it_is_an_array_keeps_the_graph(
    tmp_path: Path,
):
    # the test shows the argument is a tensor, not an array: handed back with its graph
    keeps = TO_NUMPY.replace("type(x) == np.ndarray", "isinstance(x, torch.Tensor)").replace(
        "import numpy as np", "import numpy as np\nimport torch"
    )
    assert _project(tmp_path, "utils.to_numpy(tloss)", keeps) == [(12, "GL006")]


def test_a_helper_of_the_same_file_with_an_isinstance_guard():
    source = """
    import numpy as np
    import torch


    def to_np(x):
        if isinstance(x, (np.ndarray, float)):
            return x
        return x.detach().cpu().numpy()


    def train(model, opt, x, y, steps):
        history = []
        for i in range(steps):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            history.append(to_np(loss))
        return history
    """
    assert _codes(source) == []
    # a tuple of types with a tensor in it proves nothing
    assert _codes(source.replace("(np.ndarray, float)", "(np.ndarray, torch.Tensor)")) == [
        (18, "GL006")
    ]


NOTEBOOK_MODEL = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)

    def accuracy(self, scores, targets):
        scores = scores.detach().argmax(dim=1)
        acc = (scores == targets).float().sum().item()
        return acc

    def margin(self, scores, targets):
        return scores.max(dim=1).values - scores.gather(1, targets[:, None])[:, 0]


def train_one_epoch(net, optimizer, loader):
    net.train()
    epoch_acc = 0
    for x, y in loader:
        scores = net(x)
        loss = nn.functional.cross_entropy(scores, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_acc += net.METHOD(scores, y)
    return epoch_acc


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
train_one_epoch(net, opt, [(torch.randn(2, 4), torch.tensor([0, 1]))])
"""


def test_a_method_of_the_instance_every_caller_passes_returns_a_number():
    assert _codes(NOTEBOOK_MODEL.replace("METHOD", "accuracy")) == []


def test_a_method_of_that_instance_returning_a_tensor_still_carries_the_graph():
    assert _codes(NOTEBOOK_MODEL.replace("METHOD", "margin")) == [(31, "GL006")]


def test_callers_passing_instances_of_two_classes_say_nothing_of_the_method():
    other = NOTEBOOK_MODEL.replace("METHOD", "accuracy") + textwrap.dedent(
        """

        class Other(Net):
            def accuracy(self, scores, targets):
                return scores.sum()


        other = Other()
        train_one_epoch(other, opt, [])
        """
    )
    assert _codes(other) == [(31, "GL006")]


# benchmarking-gnns' train/metrics.py, imported `as accuracy` by every training loop:
# numbers bound to a local name before they are returned, or a plain-value library's
# result (the eighth census batch's GL006 false positives).
METRICS = """
import numpy as np
import torch.nn.functional as F
from sklearn.metrics import f1_score


def accuracy_tu(scores, targets):
    scores = scores.detach().argmax(dim=1)
    acc = (scores == targets).float().sum().item()
    acc = acc / len(targets)
    return acc


def mae(scores, targets):
    MAE = F.l1_loss(scores, targets)
    MAE = MAE.detach().item()
    return MAE


def binary_f1(scores, targets):
    y_true = targets.cpu().numpy()
    y_pred = scores.argmax(dim=1).cpu().numpy()
    return f1_score(y_true, y_pred, average="binary")


def per_class(scores, targets):
    classes = np.zeros(3)
    return 100.0 * np.sum(classes) / float(len(targets))


def margin(scores, targets):
    out = F.l1_loss(scores, targets)
    out = out * 2
    return out
"""


def test_a_metric_of_another_file_returning_a_local_name_bound_to_numbers(tmp_path: Path):
    for metric in ("accuracy_tu", "mae", "binary_f1", "per_class"):
        accumulated = f"utils.{metric}(tloss, y)"
        assert _project(tmp_path / metric, accumulated, METRICS) == [], metric


def test_a_local_name_never_made_a_number_still_carries_the_graph(tmp_path: Path):
    assert _project(tmp_path, "utils.margin(tloss, y)", METRICS) == [(12, "GL006")]


# Image_Segmentation's evaluation.py, imported with `*` by the solver: `get_F1` is
# arithmetic of two other helpers of its file, each a `float(...)` ratio (the ninth
# census batch's GL006 false positive on `F1 += get_F1(SR, GT)`).
SEGMENTATION_METRICS = """
import torch


def get_sensitivity(SR, GT, threshold=0.5):
    SR = SR > threshold
    TP = (SR & (GT == 1)).sum()
    return RATIO


def get_precision(SR, GT, threshold=0.5):
    PC = get_sensitivity(GT, SR, threshold)
    return PC


def get_F1(SR, GT, threshold=0.5):
    SE = get_sensitivity(SR, GT, threshold=threshold)
    PC = get_precision(SR, GT, threshold=threshold)
    F1 = 2 * SE * PC / (SE + PC + 1e-6)
    return F1
"""


def test_a_helper_built_of_its_files_number_helpers_returns_a_number(tmp_path: Path):
    helper = SEGMENTATION_METRICS.replace("RATIO", "float(TP) / (float(SR.sum()) + 1e-6)")
    assert _project(tmp_path, "utils.get_F1(tloss, y)", helper) == []


def test_the_chain_keeps_the_graph_when_the_first_helper_returns_a_tensor(tmp_path: Path):
    helper = SEGMENTATION_METRICS.replace("RATIO", "TP / (SR.sum() + 1e-6) * GT.mean()")
    assert _project(tmp_path, "utils.get_F1(tloss, y)", helper) == [(12, "GL006")]
