"""The function summaries' shared facts (gradlint/analysis/summary_facts.py): the linted
file's summary (LibCST, analysis.summaries) and another file's (`ast`, analysis.project)
say the same of the same function: which parameters it runs a forward of, which it adds
to the object's state, and whether it differentiates (itself, or through the functions
of its file that it calls)."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest
from test_project import CALLERS, MEASURE, findings, write

from gradlint.analysis import project
from gradlint.analysis.facts import FileFacts
from gradlint.analysis.grad_mode import GradMode
from gradlint.analysis.mode_flow import Mode, _mode_of_switch
from gradlint.analysis.train_mode import switch_of

FUNCTIONS = """
import torch
import torch.autograd as ag
from torch.autograd import grad as take_grad


def forward_of(model, x):
    class Probe:  # a class body of its own: no forward of this function's
        seen = x(model)

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


GRAD_MODES = """
import torch
import torch as th
from torch import no_grad


@torch.no_grad()
def decorated(model, x):
    return model(x)


@th.inference_mode()
def decorated_inference(model, x):
    return model(x)


@no_grad_if(True)
def home_made(model, x):
    return model(x)


def blocks(model, x, flag):
    a = model(x)
    with no_grad():
        b = model(x)
        with torch.enable_grad():
            c = model(x)
    with torch.inference_mode(False):
        d = model(x)
    with torch.set_grad_enabled(flag):
        e = model(x)
    torch.set_grad_enabled(False)
    f = model(x)
    torch.set_grad_enabled(True)
    g = model(x)
    return a, b, c, d, e, f, g


def nested_setter(model, x, ok):
    if ok:
        torch.set_grad_enabled(False)
        h = model(x)
    i = model(x)
    for _ in range(2):
        torch.set_grad_enabled(False)
        j = model(x)
    return h, i, j
"""


def test_both_summaries_read_grad_mode_managers_alike():
    text = textwrap.dedent(GRAD_MODES)
    module = cst.parse_module(text)
    facts = FileFacts(module)
    libcst = {}
    for func in facts.index.functions:
        forwards = facts.summaries.of(func).forwards["model"]
        libcst[func.name.value] = [
            facts.grad_mode.mode_at(call) is GradMode.RECORDING for call in forwards
        ]
    summary = project.summarise_source(text, "helpers.py")
    from_ast = {
        name: [fact.recording for fact in function.forwards["model"]]
        for name, function in summary.functions.items()
    }
    expected = {
        "decorated": [False],
        "decorated_inference": [False],
        "home_made": [False],  # may switch grad mode: not known to record
        # a, b under no_grad, c under enable_grad inside it, d under inference_mode(False),
        # e under a flag, f after set_grad_enabled(False), g after set_grad_enabled(True)
        "blocks": [True, False, True, True, False, False, True],
        # a set_grad_enabled statement holds for the rest of its own block only
        "nested_setter": [False, True, False],
    }
    assert libcst == from_ast == expected
    assert {name: f.no_grad for name, f in summary.functions.items()} == {
        "decorated": True,
        "decorated_inference": True,
        "home_made": True,
        "blocks": False,
        "nested_setter": False,
    }


@pytest.mark.parametrize(
    ("guard", "expected"),
    [
        ("with torch.set_grad_enabled(False):", []),
        ("with th.no_grad():", []),
        ("with torch.inference_mode(False):", [(10, "GL012"), (16, "GL002")]),
        ("if True:\n            torch.set_grad_enabled(False)", []),
    ],
    ids=["set-grad-enabled-false", "aliased-no-grad", "inference-mode-false", "setter-in-a-block"],
)
def test_the_caller_search_reads_grad_mode_managers_as_the_linted_file_does(
    tmp_path, guard, expected
):
    # The caller search took only a manager whose last name was `no_grad` or
    # `inference_mode` for one that stops recording: `set_grad_enabled(False)` did not
    # count and `inference_mode(False)` did.
    callers = textwrap.dedent(CALLERS.format(guard=guard)).replace(
        "import torch\n", "import torch\nimport torch as th\n", 1
    )
    write(tmp_path, {"utils.py": MEASURE, "train.py": callers})
    assert findings(tmp_path / "utils.py") == expected


@pytest.mark.parametrize(
    ("call", "mode"),
    [
        ("m.eval()", Mode.EVAL),
        ("m.eval(True)", None),
        ("m.train()", Mode.TRAIN),
        ("m.train(True)", Mode.TRAIN),
        ("m.train(False)", Mode.EVAL),
        ("m.train(mode=False)", Mode.EVAL),
        ("m.train(flag)", Mode.SET),
        ("m.train(other=False)", None),  # not nn.Module.train's flag
        ("m.forward()", None),
    ],
)
def test_every_reading_of_a_mode_switch_is_the_one_definition(call, mode):
    # The mode flow, the train-mode switches (LibCST) and the other files' summaries
    # (`ast`) each read `x.eval()` / `x.train(...)` themselves; the ast one took
    # `train(other=False)` for a switch to training.
    node = cst.parse_expression(call)
    assert isinstance(node, cst.Call)
    assert _mode_of_switch(node, "m") is mode
    to_eval = None if mode is None or mode is Mode.SET else mode is Mode.EVAL
    assert switch_of(node) == (("m", to_eval) if to_eval is not None else None)
    tree = ast.parse(call, mode="eval").body
    assert isinstance(tree, ast.Call)
    assert project._mode_switch(tree) == (None if mode is None else mode is Mode.EVAL)


KEPT = """
def shapes(model, x, losses, log):
    model(x)
    print(model(x))
    log.info(model(x))
    losses.append(model(x))
    out = model(x)
    [model(x) for _ in range(2)]
    model(x).sum().item()
    losses.append(model(x).detach())
    yield model(x)
    return model(x)
"""


def test_both_summaries_say_alike_which_forward_outputs_are_kept():
    text = textwrap.dedent(KEPT)
    facts = FileFacts(cst.parse_module(text))
    func = facts.index.functions[0]
    libcst = [facts.forwards.output_is_kept(c) for c in facts.summaries.of(func).forwards["model"]]
    summary = project.summarise_source(text, "helpers.py")
    from_ast = [fact.kept for fact in summary.functions["shapes"].forwards["model"]]
    # dropped: a bare forward, one printed or logged, one in a dropped list, one whose
    # numbers are read and dropped; kept: stored, assigned, yielded, returned
    expected = [False, False, False, True, True, False, False, True, True, True]
    assert libcst == from_ast == expected
