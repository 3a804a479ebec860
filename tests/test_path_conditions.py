"""Path conditions for simple flags (analysis.path_conditions): the conditions a statement
is under inside its function, the constant a call site gives a parameter, and whether the
condition holds, fails or is unknown there."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from gradlint.analysis.facts import FileFacts
from gradlint.analysis.path_conditions import Condition, Constant, constant_of, evaluate
from gradlint.config import Config
from gradlint.engine import lint_source


def _facts(source: str) -> FileFacts:
    return FileFacts(cst.parse_module(textwrap.dedent(source)))


def _call(facts: FileFacts, text: str) -> cst.Call:
    """The one call whose source is `text`."""
    module = facts.module
    found = [c for c in facts.index.calls if module.code_for_node(c) == text]
    assert len(found) == 1, (text, len(found))
    return found[0]


def _conditions(source: str, call_text: str) -> list[tuple[str, str, str | None, bool]]:
    facts = _facts(source)
    found = facts.path_conditions.conditions(_call(facts, call_text))
    return [(c.param, c.op, c.constant.text if c.constant else None, c.expected) for c in found]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("if train:\n        go()", [("train", "truth", None, True)]),
        ("if not train:\n        go()", [("train", "truth", None, False)]),
        ("if train:\n        pass\n    else:\n        go()", [("train", "truth", None, False)]),
        (
            "if phase == Phase.A:\n        pass\n    elif phase != Phase.B:\n        go()",
            [("phase", "==", "Phase.B", False), ("phase", "==", "Phase.A", False)],
        ),
        ("if Phase.A == phase:\n        go()", [("phase", "==", "Phase.A", True)]),
        ("if phase is None:\n        go()", [("phase", "is", "None", True)]),
        ("if train and ready():\n        go()", [("train", "truth", None, True)]),
        (
            "if train or ready():\n        pass\n    else:\n        go()",
            [("train", "truth", None, False)],
        ),
        # the other side of `and` and `or` is a disjunction: no condition
        ("if train and ready():\n        pass\n    else:\n        go()", []),
        ("if not train:\n        return\n    go()", [("train", "truth", None, True)]),
        (
            "for x in xs:\n        if train:\n            continue\n        go()",
            [("train", "truth", None, False)],
        ),
        ("x = go() if train else None", [("train", "truth", None, True)]),
        # not a parameter, not a simple test, a comparison with a variable
        ("if ready:\n        go()", []),
        ("if train > 1:\n        go()", []),
        ("if phase == other:\n        go()", []),
    ],
)
def test_the_conditions_a_statement_is_under(body, expected):
    source = f"def f(train, phase, other):\n    {body}\n"
    assert _conditions(source, "go()") == expected


@pytest.mark.parametrize(
    ("alias", "body", "expected"),
    [
        # gidariss/FewShotWithoutForgetting: `do_train_feat = do_train and ...`
        ("train and ready()", "if alias:\n        go()", [("train", "truth", None, True)]),
        ("ready() and train", "if alias:\n        go()", [("train", "truth", None, True)]),
        ("not train and ready()", "if alias:\n        go()", [("train", "truth", None, False)]),
        ("train or ready()", "if not alias:\n        go()", [("train", "truth", None, False)]),
        # the other side says nothing of the flag
        ("train and ready()", "if not alias:\n        go()", []),
        ("train or ready()", "if alias:\n        go()", []),
    ],
)
def test_a_local_bound_to_a_conjunction_with_a_flag(alias, body, expected):
    source = f"def f(train, phase, other):\n    alias = {alias}\n    {body}\n"
    assert _conditions(source, "go()") == expected


def test_a_rebound_flag_is_no_flag():
    source = """
    def f(train, frozen):
        train = train and not frozen
        if train:
            go()
    """
    assert _conditions(source, "go()") == []


def test_an_outer_function_s_flag_is_not_read():
    source = """
    def outer(train):
        def inner():
            if train:
                go()
        return inner
    """
    assert _conditions(source, "go()") == []


def _value(source: str, function: str, call_text: str, param: str) -> str | None:
    facts = _facts(source)
    (func,) = [f for f in facts.index.functions if f.name.value == function]
    found = facts.path_conditions.value_at(_call(facts, call_text), func, param)
    return found.describe(param) if found is not None else None


SITES = """
class Runner:
    def run(self, loader, train=True):
        pass

    def use(self, loader, args, options):
        self.run(loader, False)
        self.run(loader)
        self.run(loader, train=args.train)
        self.run(loader, **options)

def run_epoch(model, loader, phase=Phase.TRAIN, scale=-1):
    pass

run_epoch(model, loader, Phase.TEST)
run_epoch(model, loader, scale=2)
run_epoch(model, *rest)
"""


@pytest.mark.parametrize(
    ("function", "call_text", "param", "expected"),
    [
        ("run", "self.run(loader, False)", "train", "train=False"),
        ("run", "self.run(loader)", "train", "train=True (its default)"),
        ("run", "self.run(loader, train=args.train)", "train", None),
        ("run", "self.run(loader, **options)", "train", None),
        ("run_epoch", "run_epoch(model, loader, Phase.TEST)", "phase", "phase=Phase.TEST"),
        (
            "run_epoch",
            "run_epoch(model, loader, scale=2)",
            "phase",
            "phase=Phase.TRAIN (its default)",
        ),
        ("run_epoch", "run_epoch(model, loader, scale=2)", "scale", "scale=2"),
        ("run_epoch", "run_epoch(model, *rest)", "phase", None),
    ],
)
def test_the_value_a_call_site_gives(function, call_text, param, expected):
    assert _value(SITES, function, call_text, param) == expected


def test_constants_and_variables():
    def parse(text):
        return constant_of(cst.parse_expression(text))

    assert parse("False").literal is False
    assert parse("'val'").literal == "val"
    assert parse("-1").literal == -1
    assert parse("LoopPhase.TRAIN").text == "LoopPhase.TRAIN"
    assert parse("TRAIN").text == "TRAIN"
    for variable in ("args.train", "self.training", "train", "f(x)", "f'{x}'"):
        assert parse(variable) is None, variable


@pytest.mark.parametrize(
    ("condition", "value", "expected"),
    [
        (Condition("t", "truth", None, True), Constant("False", False), False),
        (Condition("t", "truth", None, False), Constant("False", False), True),
        (Condition("t", "truth", None, True), Constant("Phase.TEST"), None),  # IntEnum 0?
        (Condition("p", "==", Constant("Phase.TRAIN"), True), Constant("Phase.TEST"), False),
        (Condition("p", "==", Constant("Phase.TRAIN"), True), Constant("Phase.TRAIN"), True),
        (Condition("p", "==", Constant("Phase.TRAIN"), True), Constant("Other.TRAIN"), None),
        (Condition("p", "==", Constant("TRAIN"), True), Constant("TEST"), None),
        (Condition("p", "==", Constant("'train'", "train"), True), Constant("'val'", "val"), False),
        (Condition("p", "==", Constant("'train'", "train"), False), Constant("'val'", "val"), True),
        (Condition("p", "==", Constant("'train'", "train"), True), Constant("Phase.TRAIN"), None),
        (Condition("p", "is", Constant("None", None), True), Constant("False", False), False),
        (Condition("p", "is", Constant("1", 1), True), Constant("1", 1), None),
    ],
)
def test_whether_a_condition_holds_for_a_value(condition, value, expected):
    assert evaluate(condition, value) is expected


FACTORY = """
def get_loop(model):
    def loop(phase):
        if phase == Phase.TRAIN:
            model.train()
    return loop

def main(model):
    loop = get_loop(model)
    loop(Phase.TRAIN)
    loop(Phase.TEST)
"""


def test_the_calls_of_a_closure_its_factory_returns():
    facts = _facts(FACTORY)
    (loop,) = [f for f in facts.index.functions if f.name.value == "loop"]
    sites = facts.path_conditions.call_sites(loop)
    assert [facts.module.code_for_node(s) for s in sites] == [
        "loop(Phase.TRAIN)",
        "loop(Phase.TEST)",
    ]
    switch = _call(facts, "model.train()")
    assert facts.path_conditions.runs_at(switch, sites[0])
    assert not facts.path_conditions.runs_at(switch, sites[1])


def test_a_closure_handed_on_again_has_calls_out_of_sight():
    facts = _facts(FACTORY + "    register(loop)\n")
    (loop,) = [f for f in facts.index.functions if f.name.value == "loop"]
    assert facts.path_conditions.call_sites(loop) == []


def test_gl004_names_the_call_site_the_finding_comes_from():
    source = textwrap.dedent(
        """
        import torch
        import torch.nn.functional as F

        def run_epoch(model, loader, optimizer, train=True):
            if train:
                model.train()
            else:
                model.eval()
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                if train:
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                print(loss.item())

        def fit(model, loader, opt):
            run_epoch(model, loader, opt)
            run_epoch(model, loader, opt, train=False)
        """
    )
    lines = source.splitlines()
    (finding,) = lint_source(source, "fit.py", Config(preview=True))
    assert finding.code == "GL004"
    assert lines[finding.start.line - 1].strip() == "loss = F.cross_entropy(model(x), y)"
    related = [(lines[r.start.line - 1].strip(), r.message) for r in finding.related]
    assert related == [
        ("model.eval()", "`model` is put in eval mode here"),
        (
            "run_epoch(model, loader, opt, train=False)",
            "called here with train=False, outside no_grad",
        ),
    ]
    # the fix wraps the evaluation call, not the forward the training call needs
    assert finding.fix is not None
    (edit,) = finding.fix.edits
    assert "with torch.no_grad():" in edit.content
    assert "run_epoch(model, loader, opt, train=False)" in edit.content


def test_a_call_of_a_name_two_functions_share_is_a_site_of_the_one_that_reaches_it():
    source = """
    def run(train):
        pass

    run(True)

    def run(train):
        pass

    run(False)
    """
    facts = _facts(source)
    first, second = facts.index.functions
    sites = [facts.path_conditions.call_sites(f) for f in (first, second)]
    assert [[site.args[0].value.value for site in found] for found in sites] == [
        ["True"],
        ["False"],
    ]


def test_whether_a_function_tests_a_flag_at_all():
    source = """
    def picks(model, train):
        x = model(1) if not train else None

    def plain(model, train):
        if model.training:
            go()

    def rebinds(model, train):
        train = not train
        if train:
            go()
    """
    facts = _facts(source)
    tested = {f.name.value: facts.path_conditions.tests_a_flag(f) for f in facts.index.functions}
    assert tested == {"picks": True, "plain": False, "rebinds": False}


PHASES = """
def fit(model, loaders, phases):
    for phase in ["train", "val"]:
        if phase == "train":
            go()
    for phase2 in phases:
        if phase2 == "train":
            go2()
    for phase3 in ("train", Split.VAL):
        phase3 = phase3.lower()
        if phase3 == "train":
            go3()
"""


def test_a_loop_over_constants_fixes_its_variable_per_iteration():
    facts = _facts(PHASES)
    paths = facts.path_conditions
    go = _call(facts, "go()")
    (loop,) = paths.flag_loops(go)
    values = [constant_of(e.value) for e in loop.iter.elements]
    assert [bool(paths.failing_in_loop(go, loop, v)) for v in values] == [False, True]
    # a loop over a variable, and a variable the body rebinds, fix nothing
    assert paths.flag_loops(_call(facts, "go2()")) == []
    assert paths.flag_loops(_call(facts, "go3()")) == []


_PHASES = """
import torch
import torch.nn.functional as F

def main(model, data, optimizer, epochs):
    def step(phase):
        if phase == "train":
            model.train()
        else:
            model.eval()
        for x, y in data:
            loss = F.cross_entropy(model(x), y)
            if phase == "train":
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        return loss.item()

    for epoch in range(epochs):
        step("train")
        with torch.no_grad():
            step("val")
    return step("test")

net = torch.nn.Linear(3, 2)
main(net, [(torch.randn(4, 3), torch.tensor([0, 1, 0, 1]))], torch.optim.SGD(net.parameters(), 0.1), 3)
"""


def test_the_evaluating_call_sets_how_often_the_waste_is_paid():
    # `step` runs every epoch, but only the test call after training wastes a graph: with
    # one batch per call that costs once (a hint), not per epoch
    one_batch = _PHASES.replace("for x, y in data:", "if data:")
    one_batch = one_batch.replace("model(x), y)", "model(data[0][0]), data[0][1])")
    (finding,) = lint_source(one_batch, "fit.py", Config(preview=True))
    assert finding.code == "GL004"
    assert finding.impact is not None and finding.impact.value == "once"
    assert finding.severity.value == "hint"
    # a batch loop inside the function still runs per batch, whichever call runs it
    (finding,) = lint_source(_PHASES, "fit.py", Config(preview=True))
    assert finding.impact is not None and finding.impact.value == "per-batch"


PHASE_ALIAS = """
import torch
from torch import nn
import torch.nn.functional as F


def process(model, x, y, opt, do_train):
    train_feat = do_train and opt is not None
    out = model(x)
    loss = F.mse_loss(out, y)
    if train_feat:
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
for epoch in range(3):
    model.train()
    process(model, x, y, opt, do_train=True)
    model.eval()
    print(process(model, x, y, opt, do_train=False))
"""


def test_gl004_reads_a_flag_through_a_conjunction():
    """The evaluating call passes `do_train=False`: `train_feat` is false there, so the
    backward under `if train_feat:` never runs on that call."""
    found = lint_source(PHASE_ALIAS, "phase.py", Config(select=("GL004",)))
    assert [(d.code, d.start.line) for d in found] == [("GL004", 9)]
