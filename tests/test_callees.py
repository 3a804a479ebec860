"""The one callee resolver: which function of the file a call runs."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from gradlint.analysis.callees import CalleeResolver
from gradlint.analysis.index import FileIndex
from gradlint.engine import lint_file, lint_source

LEARNER = """
    import torch
    from torch import nn


    class Learner(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(4))

        def step(self, lr):
            with torch.no_grad():
                self.w -= lr * self.w.grad


    class Other:
        def step(self, lr):
            return lr
"""


def _resolved(main: str) -> str | None:
    module = cst.parse_module(textwrap.dedent(LEARNER) + textwrap.dedent(main))
    index = FileIndex(module)
    resolver = CalleeResolver(index)
    (call,) = [
        n
        for n in index.walk(module, into_functions=True)
        if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "step"
    ]
    func = resolver.resolve(call)
    if func is None:
        return None
    cls = index.enclosing_class(func)
    return f"{cls.name.value}.{func.name.value}" if cls is not None else func.name.value


@pytest.mark.parametrize(
    ("main", "expected"),
    [
        ("def main():\n    m = Learner()\n    m.step(0.1)\n", "Learner.step"),
        ("def main(d):\n    m = Learner().to(d)\n    m.step(0.1)\n", "Learner.step"),
        ("def main():\n    m = Other()\n    m.step(0.1)\n", "Other.step"),
        # two classes, or a value of unknown class: no one method can be named
        ("def main(c):\n    m = Learner() if c else Other()\n    m.step(0.1)\n", None),
        (
            "def main(c):\n    m = Learner()\n    if c:\n        m = Other()\n    m.step(0.1)\n",
            None,
        ),
        ("def main(m):\n    m.step(0.1)\n", None),
        ("def main(a, b):\n    m, n = a, b\n    m.step(0.1)\n", None),
    ],
    ids=["built", "moved", "other", "either", "rebound", "parameter", "unpacked"],
)
def test_a_method_called_through_a_local_instance(main, expected):
    assert _resolved(main) == expected


def test_an_update_method_called_through_a_local_instance_is_followed():
    # the update runs in Learner.step, reached through `m = Learner()`: the loop never
    # clears the gradient, so every step adds the old ones again (GL007)
    source = textwrap.dedent(LEARNER) + (
        "def main(x):\n"
        "    m = Learner()\n"
        "    for _ in range(5):\n"
        "        (m.w * x).sum().backward()\n"
        "        m.step(0.1)\n"
    )
    assert "GL007" in [d.code for d in lint_source(source, "train.py")]
    cleared = source.replace(
        "self.w -= lr * self.w.grad", "self.w -= lr * self.w.grad\n            self.w.grad = None"
    )
    assert "GL007" not in [d.code for d in lint_source(cleared, "train.py")]


def test_a_call_is_resolved_once_and_a_name_no_function_has_needs_no_receiver(monkeypatch):
    # The analyses ask the resolver about the same calls many times (summaries, loops,
    # modes, rules): the receiver's class, the costly part, is worked out once per call,
    # and not at all for a method name no function of the file has (`opt.zero_grad()`).
    source = textwrap.dedent(LEARNER) + textwrap.dedent(
        """
        learner = Learner()
        opt = make_optimizer()
        learner.step(0.1)
        opt.zero_grad()
        """
    )
    module = cst.parse_module(source)
    index = FileIndex(module)
    resolver = CalleeResolver(index)
    asked: list[str] = []
    receiver_class = CalleeResolver._receiver_class

    def counting(self, call, target):
        asked.append(target.attr.value)
        return receiver_class(self, call, target)

    monkeypatch.setattr(CalleeResolver, "_receiver_class", counting)
    calls = {
        n.func.attr.value: n
        for n in index.calls
        if type(n.func) is cst.Attribute and type(n.func.value) is cst.Name
    }
    for _ in range(3):
        assert resolver.resolve(calls["step"]) is not None
        assert resolver.resolve(calls["zero_grad"]) is None
    assert asked == ["step"]


HIERARCHY = """
    import torch
    from torch import nn
    from elsewhere import Imported


    class Base(nn.Module):
        def helper(self, x):
            return x

        def evaluate(self, x):
            raise NotImplementedError

        def run(self, x):
            self.eval()
            return self.evaluate(x)


    class Sub(Base):
        def evaluate(self, x):
            return self.helper(x)


    class Grand(Sub):
        def run(self, x):
            return super().run(x)


    class Mixin:
        def helper(self, x):
            return -x


    class Mixed(Mixin, Base):
        def forward(self, x):
            return self.helper(x)


    class Unseen(Imported, Base):
        def forward(self, x):
            return self.helper(x)


    class Left(Base):
        pass


    class Right(Base):
        def helper(self, x):
            return 2 * x


    class Diamond(Left, Right):
        def forward(self, x):
            return self.helper(x)
"""


def _hierarchy() -> tuple[FileIndex, CalleeResolver]:
    index = FileIndex(cst.parse_module(textwrap.dedent(HIERARCHY)))
    return index, CalleeResolver(index)


def _qualified(index: FileIndex, func: cst.FunctionDef | None) -> str | None:
    if func is None:
        return None
    cls = index.enclosing_class(func)
    return f"{cls.name.value}.{func.name.value}" if cls is not None else func.name.value


def _calls_in(index: FileIndex, qualified: str) -> list[cst.Call]:
    """The calls of the file's own functions in the method `Class.name`."""
    (func,) = [f for f in index.functions if _qualified(index, f) == qualified]
    return [
        c
        for c in index.calls
        if index.is_inside(c, func)
        and type(c.func) is cst.Attribute
        and c.func.attr.value in ("helper", "evaluate", "run")
    ]


@pytest.mark.parametrize(
    ("caller", "expected"),
    [
        # a subclass calls a helper its base class defines
        ("Sub.evaluate", "Base.helper"),
        # the base class's own method, for an instance of the base
        ("Base.run", "Base.evaluate"),
        # `super().run(x)`: the first base after the class that defines it
        ("Grand.run", "Base.run"),
        # left to right: the mixin's helper comes before the base's
        ("Mixed.forward", "Mixin.helper"),
        # a base the file cannot see comes first: it may define `helper`
        ("Unseen.forward", None),
        # a diamond: Right (a base of Diamond through Left's sibling) before Base
        ("Diamond.forward", "Right.helper"),
    ],
)
def test_a_method_is_looked_up_through_the_bases_of_this_file(caller, expected):
    index, resolver = _hierarchy()
    (call,) = _calls_in(index, caller)
    assert _qualified(index, resolver.resolve(call)) == expected


def test_callers_of_an_inherited_method_and_of_an_override():
    index, resolver = _hierarchy()
    by_name = {_qualified(index, f): f for f in index.functions}
    (in_sub,) = _calls_in(index, "Sub.evaluate")
    (in_base,) = _calls_in(index, "Base.run")
    # Sub.evaluate's `self.helper(x)` runs Base.helper
    assert in_sub in resolver.callers_of(by_name["Base.helper"])
    # Base.run's `self.evaluate(x)` runs Sub.evaluate on an instance of Sub (or Grand,
    # which inherits Base.run through super()), and Base.evaluate on one of Base
    assert resolver.callers_of(by_name["Sub.evaluate"]) == [in_base]
    assert resolver.callers_of(by_name["Base.evaluate"]) == [in_base]


def test_an_override_of_the_calling_method_hides_the_call_from_the_subclass():
    source = textwrap.dedent(
        """
        class Base:
            def run(self):
                return self.step()

            def step(self):
                return 1


        class Own(Base):
            def run(self):
                return 2

            def step(self):
                return 3
        """
    )
    index = FileIndex(cst.parse_module(source))
    resolver = CalleeResolver(index)
    by_name = {_qualified(index, f): f for f in index.functions}
    # an Own instance never runs Base.run, so Base.run's call never runs Own.step
    assert resolver.callers_of(by_name["Own.step"]) == []
    assert len(resolver.callers_of(by_name["Base.step"])) == 1


BASE_FILE = """
    class Predictor:
        def predict(self, net, x):
            return net(x)
"""

SUBCLASS_FILE = """
    import torch
    {import_line}


    class Scorer({base}):
        def score(self, net, x, y):
            net.eval()
            correct = (self.predict(net, x) == y).sum().item()
            net.train()
            return correct
"""


@pytest.mark.parametrize(
    ("import_line", "base"),
    [
        ("from base import Predictor", "Predictor"),
        ("from models.base import Predictor as Base", "Base"),
        ("import base", "base.Predictor"),
        ("from models import base", "base.Predictor"),
    ],
    ids=["from-import", "alias", "module", "from-package"],
)
def test_a_method_inherited_from_a_base_class_of_another_project_file(tmp_path, import_line, base):
    # Scorer.score runs Predictor.predict, defined in another file of the project: the
    # forward it runs is recorded in eval mode, its result read only as numbers (GL004)
    where = "models/base.py" if "models" in import_line else "base.py"
    (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
    if where != "base.py":
        (tmp_path / "models" / "__init__.py").write_text("")
    (tmp_path / where).write_text(textwrap.dedent(BASE_FILE).lstrip())
    train = tmp_path / "train.py"
    train.write_text(
        textwrap.dedent(SUBCLASS_FILE).lstrip().format(import_line=import_line, base=base)
    )
    result = lint_file(train)
    assert result.error is None, result.error
    assert [(d.start.line, d.code) for d in result.diagnostics] == [(8, "GL004")]
    # a subclass that defines predict itself runs its own, which runs no forward
    own = train.read_text().replace(
        "    def score(", "    def predict(self, net, x):\n        return x\n\n    def score("
    )
    train.write_text(own)
    assert lint_file(train).diagnostics == []


LEARNER_BASE = """
    import torch


    class Learner:
        def fit(self, x):
            self.loss(x).backward()
            {update}
"""

LEARNER_SUBCLASS = """
    import torch
    from torch import nn

    from base import Learner


    class Linear(Learner, nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(3))

        def loss(self, x):
            return (self.w * x).sum()

        def update(self, lr):
            self.w -= lr * self.w.grad
"""


@pytest.mark.parametrize(
    ("update", "expected"),
    [
        ("with torch.no_grad():\n            self.update(0.1)", []),
        ("self.update(0.1)", [(16, "GL002")]),
    ],
    ids=["under-no-grad", "recording"],
)
def test_a_base_class_of_another_file_calls_the_subclass_override(tmp_path, update, expected):
    # Linear.update has no caller in its file; Learner.fit in base.py calls it on
    # itself: the caller search counts that call (a base class's `self.update()`), so
    # the in-place update is covered when fit runs it under no_grad
    (tmp_path / "base.py").write_text(textwrap.dedent(LEARNER_BASE).lstrip().format(update=update))
    sub = tmp_path / "linear.py"
    sub.write_text(textwrap.dedent(LEARNER_SUBCLASS).lstrip())
    result = lint_file(sub)
    assert result.error is None, result.error
    assert [(d.start.line, d.code) for d in result.diagnostics] == expected


def test_a_caller_query_with_bases_is_recorded_and_read_back():
    from gradlint.analysis.project import MethodQuery

    plain = MethodQuery("a.py", "Linear", "update", "", frozenset(), frozenset(), frozenset())
    based = MethodQuery(
        "a.py", "Linear", "update", "", frozenset(), frozenset(), frozenset(), frozenset({"B"})
    )
    for query in (plain, based):
        assert MethodQuery.from_key(query.key("/root")) == (query, "/root")
    # a key recorded before queries had bases still reads back
    assert '"B"' not in plain.key("/root") and plain.key("/root").count("[]") == 3


def test_a_method_of_an_instance_held_in_an_attribute_is_looked_up_through_its_bases():
    from gradlint.analysis.facts import FileFacts

    source = textwrap.dedent(LEARNER) + textwrap.dedent(
        """
        class Sub(Learner):
            pass


        class Trainer:
            def __init__(self):
                self.learner = Sub()

            def fit(self):
                self.learner.step(0.1)
        """
    )
    facts = FileFacts(cst.parse_module(source))
    (call,) = [
        c
        for c in facts.index.calls
        if type(c.func) is cst.Attribute and c.func.attr.value == "step"
    ]
    found = facts.summaries.method_of_instance(call)
    assert _qualified(facts.index, found) == "Learner.step"


def test_an_inherited_update_method_of_a_tracker_is_summarised():
    from gradlint.analysis.facts import FileFacts

    source = textwrap.dedent(
        """
        class Meter:
            def __init__(self):
                self.sum = 0

            def update(self, val):
                self.sum += val


        class LossMeter(Meter):
            pass


        def run(losses):
            meter = LossMeter()
            for loss in losses:
                meter.update(loss)
        """
    )
    facts = FileFacts(cst.parse_module(source))
    (call,) = [
        c
        for c in facts.index.calls
        if type(c.func) is cst.Attribute and c.func.attr.value == "update"
    ]
    assert facts.summaries.accumulated_argument(call) is call.args[0].value


ATTRIBUTE_OF_THE_SAME_NAME = """
def train(rates):
    return rates

data = batchify(corpus.train)
train(data)


class Trainer:
    def step(self):
        return 1

    def run(self):
        hook = self.step
        return self.step()
"""


def test_an_attribute_of_another_object_does_not_hide_a_functions_callers():
    # `corpus.train` names no function of this file; `self.step` stored away is the
    # method itself, whose other callers are then out of sight
    index = FileIndex(cst.parse_module(ATTRIBUTE_OF_THE_SAME_NAME))
    resolver = CalleeResolver(index)
    functions = {f.name.value: f for f in index.functions}
    assert len(resolver.callers_of(functions["train"])) == 1
    assert not resolver.handed_on(functions["train"])
    assert resolver.callers_of(functions["step"]) == []
    assert resolver.handed_on(functions["step"])


def _caller_counts(source: str) -> dict[str, int]:
    index = FileIndex(cst.parse_module(textwrap.dedent(source)))
    resolver = CalleeResolver(index)
    return {f.name.value: len(resolver.callers_of(f)) for f in index.functions}


def test_a_parameter_named_like_a_function_is_not_a_reference_to_it():
    # `label_data`'s `valid` is its own parameter: `valid`'s call in `one_epoch` is seen
    counts = _caller_counts(
        """
        def valid(model, loader):
            return [model(x) for x in loader]

        def one_epoch(model, loader):
            return valid(model, loader)

        def label_data(train, valid):
            return [v for v in valid]
        """
    )
    assert counts["valid"] == 1


def test_a_nested_function_handed_on_hides_its_callers():
    # `pred_func.dump(...)` hands the function itself on (a tracer): callers unseen
    counts = _caller_counts(
        """
        def dump(model, data):
            def pred_func(data):
                return model(data)

            pred_func(data)
            pred_func.dump("model.mge")
        """
    )
    assert counts["pred_func"] == 0
