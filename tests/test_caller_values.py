"""A parameter's value at a call is read from the callers' arguments (issue "Generalise",
section 2, "context flows from callers to callees"): constants and flags, from the
calls of this file and of the project's other files. pytorch-ddpg's `util.to_tensor(x,
volatile=False)` wraps `Variable(x, volatile=volatile)`, and `ddpg.py` calls it with
`volatile=True` expecting no graph (a no-op since torch 0.4: GL008)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from test_project import write

from gradlint.analysis.facts import FileFacts
from gradlint.config import Config
from gradlint.engine import lint_file, lint_source

HELPER = """
import torch
from torch.autograd import Variable


def to_tensor(x, volatile=False, requires_grad=False):
    return Variable(torch.from_numpy(x), volatile=volatile, requires_grad=requires_grad)
"""

CALLERS = """

def target(net, batch):
    return net(to_tensor(batch, volatile=True))


def quiet_target(net, batch):
    with torch.no_grad():
        return net(to_tensor(batch, volatile=True))


def plain(net, batch, evaluating):
    return net(to_tensor(batch)) + net(to_tensor(batch, volatile=evaluating))
"""


def test_the_constants_callers_give_a_parameter():
    facts = FileFacts(cst.parse_module(textwrap.dedent(HELPER + CALLERS)))
    (helper,) = [f for f in facts.index.functions if f.name.value == "to_tensor"]
    found = facts.path_conditions.caller_values(helper, "volatile", facts.grad_mode)
    module = facts.module
    # `volatile=evaluating` is no constant: that caller says nothing
    assert [
        (module.code_for_node(c.site), c.value.describe("volatile"), c.recording) for c in found
    ] == [
        ("to_tensor(batch, volatile=True)", "volatile=True", True),
        ("to_tensor(batch, volatile=True)", "volatile=True", False),
        ("to_tensor(batch)", "volatile=False (its default)", True),
    ]


def test_gl008_flags_the_helper_s_variable_and_the_callers_volatile_true():
    source = textwrap.dedent(HELPER + CALLERS)
    found = [d for d in lint_source(source, "t.py", Config()) if d.code == "GL008"]
    # the helper's Variable (line 7), shown with the recording caller (line 11), and
    # that caller's own `volatile=True`; the one under no_grad is no finding
    assert [(d.start.line, [r.start.line for r in d.related]) for d in found] == [
        (7, [11]),
        (11, []),
    ]


def test_no_caller_passes_true_nothing_is_flagged():
    source = textwrap.dedent(HELPER + CALLERS.replace("volatile=True", "volatile=False"))
    assert [d for d in lint_source(source, "t.py", Config()) if d.code == "GL008"] == []


def test_callers_in_another_file(tmp_path):
    # pytorch-ddpg: the helper in `util.py`, star-imported by `ddpg.py`
    write(
        tmp_path,
        {
            "util.py": HELPER,
            "ddpg.py": "import torch\nfrom util import *\n" + textwrap.dedent(CALLERS),
        },
    )
    variable = _line_of(tmp_path / "util.py", "return Variable(")
    target = _line_of(tmp_path / "ddpg.py", "def target(") + 1
    (helper,) = [d for d in lint_file(tmp_path / "util.py").diagnostics if d.code == "GL008"]
    assert helper.start.line == variable and "a caller makes it `True`" in helper.message
    (caller,) = helper.related
    assert caller.path.endswith("ddpg.py") and caller.start.line == target
    callers = [d for d in lint_file(tmp_path / "ddpg.py").diagnostics if d.code == "GL008"]
    assert [(d.start.line, "hands it to a `Variable`" in d.message) for d in callers] == [
        (target, True)
    ]


def _line_of(path, text: str) -> int:
    lines = path.read_text().splitlines()
    (found,) = [n for n, line in enumerate(lines, start=1) if text in line]
    return found


TRAIN_CH10 = """
import torch
from torch.autograd import Variable


def linreg(X, w, b):
    return torch.mm(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.view(y_hat.shape)).pow(2) / 2


def evaluate_loss(net, data_iter, loss):
    total = 0.0
    for X, y in data_iter:
        total += loss(net(X), y).sum().detach().numpy().item()
    return total


def train_ch10(data_iter):
    w = Variable(torch.zeros(3, 1), requires_grad=True)
    b = Variable(torch.zeros(1), requires_grad=True)
    optimizer = torch.optim.SGD([w, b], lr=0.1)
    net, loss = lambda X: linreg(X, w, b), squared_loss
    for X, y in data_iter:
        optimizer.zero_grad()
        l = loss(net(X), y).mean()
        l.backward()
        optimizer.step()
        print(evaluate_loss(net, data_iter, loss))
"""


def test_the_callable_every_caller_hands_a_parameter():
    facts = FileFacts(cst.parse_module(textwrap.dedent(TRAIN_CH10)))
    module = facts.module
    calls: dict[str, cst.Call] = {}
    for call in facts.index.calls:  # the first of each text: evaluate_loss's
        calls.setdefault(module.code_for_node(call), call)
    # `loss` is bound to `squared_loss` by the caller's tuple assignment, `net` to a lambda
    passed = facts.summaries.passed_in(calls["loss(net(X), y)"])
    assert type(passed) is cst.FunctionDef and passed.name.value == "squared_loss"
    assert type(facts.summaries.passed_in(calls["net(X)"])) is cst.Lambda


def test_a_result_handed_through_a_helper_comes_back_to_that_call_only():
    # d2l's evaluate_loss: the training loop also calls squared_loss (and hands it on),
    # but what it returns of `net(X)` here comes back here, where it is only read as
    # numbers
    found = lint_source(textwrap.dedent(TRAIN_CH10), "t.py", Config())
    assert [(d.code, d.start.line) for d in found] == [("GL012", 17)]


def test_a_helper_that_keeps_the_value_is_no_way_back():
    # the helper stores what it is given: the graph may be used elsewhere
    source = TRAIN_CH10.replace(
        "    return (y_hat - y.view(y_hat.shape)).pow(2) / 2\n",
        "    HISTORY.append(y_hat)\n    return (y_hat - y.view(y_hat.shape)).pow(2) / 2\n",
    )
    found = lint_source(textwrap.dedent(source), "t.py", Config())
    assert [d for d in found if d.code == "GL012"] == []


NEGATED_FLAG = """
import torch
from torch.autograd import Variable


class Agent:
    def __init__(self, model):
        self.model = model

    def _reset_hidden(self, training=True):
        not_training = not training
        self.hidden = Variable(torch.zeros(1, 8), volatile=not_training)

    def train_episode(self):
        self._reset_hidden()

    def evaluate(self):
        self._reset_hidden(CALLED_WITH)
        return self.model(self.hidden).argmax().item()
"""


def test_gl008_follows_a_local_that_negates_the_callers_flag():
    # jingweiz/pytorch-rl a3c_single_process.py: `not_training = not training`, then
    # `volatile=not_training`; the evaluator calls with `training=False`
    source = textwrap.dedent(NEGATED_FLAG.replace("CALLED_WITH", "False"))
    found = [d for d in lint_source(source, "t.py", Config()) if d.code == "GL008"]
    assert [(d.start.line, [r.start.line for r in d.related]) for d in found] == [(12, [18])]
    assert "`training=False`" in found[0].related[0].message


@pytest.mark.parametrize("called_with", ["False", "True"])
def test_gl008_reads_a_flag_negated_in_the_keyword_itself(called_with):
    # gidariss/FewShotWithoutForgetting: `Variable(images, volatile=(not do_train))`
    source = NEGATED_FLAG.replace("        not_training = not training\n", "").replace(
        "volatile=not_training", "volatile=(not training)"
    )
    source = textwrap.dedent(source.replace("CALLED_WITH", called_with))
    found = [d for d in lint_source(source, "t.py", Config()) if d.code == "GL008"]
    lines = [(d.start.line, [r.start.line for r in d.related]) for d in found]
    assert lines == ([(11, [17])] if called_with == "False" else [])


PASSED_ON_FLAG = """
import torch
from torch.autograd import Variable


class FewShot:
    def __init__(self, model):
        self.model = model

    def train_step(self, images):
        return self.process_batch(images, do_train=True)

    def evaluation_step(self, images):
        return self.process_batch(images, do_train=EVAL_WITH)

    def process_batch(self, images, do_train):
        return self.classify(images, do_train=do_train)

    def classify(self, images, do_train=True):
        images_var = Variable(images, volatile=(not do_train))
        return self.model(images_var).argmax().item()
"""


@pytest.mark.parametrize("eval_with", ["False", "True"])
def test_gl008_follows_a_flag_a_caller_passes_on_to_its_own_callers(eval_with):
    # gidariss/FewShotWithoutForgetting: evaluation_step -> process_batch(do_train=False)
    # -> process_batch_base_category_classification(do_train=do_train) -> volatile
    source = textwrap.dedent(PASSED_ON_FLAG.replace("EVAL_WITH", eval_with))
    found = [d for d in lint_source(source, "t.py", Config()) if d.code == "GL008"]
    lines = [(d.start.line, [r.start.line for r in d.related]) for d in found]
    assert lines == ([(20, [14])] if eval_with == "False" else [])


def test_gl008_a_negated_flag_no_caller_turns_true_is_no_finding():
    source = textwrap.dedent(NEGATED_FLAG.replace("CALLED_WITH", "True"))
    assert [d for d in lint_source(source, "t.py", Config()) if d.code == "GL008"] == []


CLASS_FLAG = """
import torch
from torch.autograd import Variable


class Worker:
    def __init__(self, model):
        self.model = model

    def _reset_hidden(self, training=True):
        not_training = not training
        self.hidden = Variable(torch.zeros(1, 8), volatile=not_training)


class Learner(Worker):
    def __init__(self, model):
        super().__init__(model)
        self.training = True

    def run(self):
        self._reset_hidden(self.training)


class Evaluator(Worker):
    def __init__(self, model):
        super().__init__(model)
        self.training = False

    def run(self):
        self._reset_hidden(self.training)
        return self.model(self.hidden).argmax().item()
"""


def _gl008_lines(source: str) -> list[tuple[int, list[int]]]:
    found = [d for d in lint_source(textwrap.dedent(source), "t.py", Config()) if d.code == "GL008"]
    return [(d.start.line, [r.start.line for r in d.related]) for d in found]


def test_gl008_an_attribute_the_callers_class_sets_once_is_its_constant():
    # jingweiz/pytorch-rl: the evaluator sets `self.training = False` in `__init__` and
    # passes `self.training` on; the learner, a sibling, sets True on other objects
    assert _gl008_lines(CLASS_FLAG) == [(12, [30])]


def test_gl008_an_attribute_set_from_outside_the_classes_is_no_constant():
    outside = CLASS_FLAG + "\nevaluator = Evaluator(None)\nevaluator.training = True\n"
    assert _gl008_lines(outside) == []


def test_gl008_an_attribute_a_method_rebinds_is_no_constant():
    rebinding = CLASS_FLAG.replace(
        "    def run(self):\n        self._reset_hidden(self.training)\n        return",
        "    def toggle(self):\n        self.training = not self.training\n\n"
        "    def run(self):\n        self._reset_hidden(self.training)\n        return",
    )
    assert "def toggle" in rebinding
    assert _gl008_lines(rebinding) == []


def test_gl008_a_torch_modules_training_attribute_is_no_constant():
    # `train()` and `eval()` rebind it on a module, out of this file's sight
    module = CLASS_FLAG.replace("class Worker:", "class Worker(torch.nn.Module):").replace(
        "    def __init__(self, model):\n        self.model = model",
        "    def __init__(self, model):\n        super().__init__()\n        self.model = model",
    )
    assert "class Worker(torch.nn.Module)" in module
    assert _gl008_lines(module) == []
