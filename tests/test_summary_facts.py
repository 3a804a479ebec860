"""The function summaries' shared facts (gradlint/analysis/summary_facts.py): the linted
file's summary (LibCST, analysis.summaries) and another file's (`ast`, analysis.project)
say the same of the same function: which parameters it runs a forward of, which it adds
to the object's state, and whether it differentiates (itself, or through the functions
of its file that it calls)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from test_project import findings, write

from gradlint.analysis import project
from gradlint.analysis.facts import FileFacts

FUNCTIONS = """
import torch
import torch.autograd as ag
from torch.autograd import grad as take_grad


def forward_of(model, x):
    return model(x)


def forward_method_of(model, x):
    return model.forward(x)


class Tracker:
    def update(self, val, n):
        self.total += val
        self.items.append(n)
        self.seen.append(self)

    def __call__(self, x):
        return x

    def again(self, x):
        return self(x)


def backward_of(loss):
    loss.backward()


def wrapped_backward(accelerator, loss):
    accelerator.backward(loss)


def optimizer_step(opt):
    opt.step()


def amp_step(scaler, optimizer):
    scaler.step(optimizer)


def scheduler_step(scheduler):
    scheduler.step()


def aliased_autograd(x, y):
    return ag.grad(y, x)


def renamed_grad(x, y):
    return take_grad(y, x)


def grad_parameter(grad, x):
    return grad(x)


def a_function_named_backward(loss):
    return backward(loss)


def through_a_helper(model, x):
    loss = model(x).sum()
    backward_of(loss)


class Learner:
    def fit(self, loss):
        self.step_all(loss)

    def step_all(self, loss):
        loss.backward()

    def peek(self, model, x):
        return through_a_helper(model, x)
"""


def _libcst_facts(text: str) -> dict[str, tuple]:
    module = cst.parse_module(text)
    facts = FileFacts(module)
    out = {}
    for func in facts.index.functions:
        summary = facts.summaries.of(func)
        cls = facts.index.enclosing_class(func)
        name = f"{cls.name.value}.{func.name.value}" if cls is not None else func.name.value
        out[name] = (
            sorted(summary.forwarded_params),
            sorted(summary.accumulated_params),
            # itself or through the functions of the file it calls
            facts.forwards.differentiates(func),
        )
    return out


def _ast_facts(text: str) -> dict[str, tuple]:
    summary = project.summarise_source(text, "helpers.py")
    return {
        name: (sorted(f.forwards), sorted(f.accumulated_params), f.differentiates)
        for name, f in summary.functions.items()
    }


def test_both_summaries_state_the_same_facts():
    text = textwrap.dedent(FUNCTIONS)
    expected = {
        "forward_of": (["model"], [], False),
        "forward_method_of": (["model"], [], False),
        "Tracker.update": ([], ["n", "val"], False),
        "Tracker.__call__": ([], [], False),
        "Tracker.again": ([], [], False),  # `self(x)`: no forward of an argument
        "backward_of": ([], [], True),
        "wrapped_backward": ([], [], True),
        "optimizer_step": ([], [], True),
        "amp_step": ([], [], True),  # AMP's scaler steps the optimizer it is given
        "scheduler_step": ([], [], False),
        "aliased_autograd": ([], [], True),  # resolved through `import ... as ag`
        "renamed_grad": ([], [], True),
        "grad_parameter": (["grad"], [], False),  # a parameter named grad: no autograd.grad
        "a_function_named_backward": ([], [], False),  # a call, not a method of a tensor
        "through_a_helper": (["model"], [], True),  # calls backward_of
        "Learner.fit": ([], [], True),  # calls self.step_all
        "Learner.step_all": ([], [], True),
        "Learner.peek": ([], [], True),  # through_a_helper, through backward_of
    }
    assert _libcst_facts(text) == expected
    assert _ast_facts(text) == expected


AMP_STEP = """
    def train_step(model, batch, scaler, optimizer):
        loss = model(batch).mean()
        scaler.step(optimizer)
        return loss.item()
"""

TRAIN = """
    import torch
    from helpers import train_step


    def finetune(model, loader, scaler, optimizer):
        model.eval()
        for batch in loader:
            loss = train_step(model, batch, scaler, optimizer)
            print(loss)
"""


def test_a_helper_of_another_file_that_steps_through_amp_trains(tmp_path):
    # `scaler.step(optimizer)` is an optimizer step in the linted file's summaries; the
    # other files' summaries did not count it, took the helper for inference, and
    # reported its forward of the eval-mode model as wasted recording.
    write(tmp_path, {"helpers.py": AMP_STEP, "train.py": TRAIN})
    assert findings(tmp_path / "train.py") == []


@pytest.mark.parametrize(
    "import_line",
    ["import torch.autograd as ag", "from torch import autograd as ag"],
)
def test_a_helper_of_another_file_that_differentiates_through_an_alias(tmp_path, import_line):
    helper = f"""
        {import_line}


        def penalty(model, x):
            out = model(x)
            return ag.grad(out.sum(), x, create_graph=True)[0].norm().item()
    """
    train = """
        import torch
        from helpers import penalty


        def check(model, loader):
            model.eval()
            for x in loader:
                value = penalty(model, x)
                print(value)
    """
    write(tmp_path, {"helpers.py": helper, "train.py": train})
    assert findings(tmp_path / "train.py") == []
