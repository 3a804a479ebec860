"""The sequence a method runs through its object's methods, and what a value stored on
`self` reaches there (gradlint.analysis.method_sequence), as GL011's optimizer form
reads them across methods."""

from __future__ import annotations

import textwrap

import libcst as cst

from gradlint.analysis.facts import FileFacts


def facts_of(source: str) -> FileFacts:
    return FileFacts(cst.parse_module(textwrap.dedent(source)))


def function(facts: FileFacts, name: str) -> cst.FunctionDef:
    return next(f for f in facts.index.functions if f.name.value == name)


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def run_names(source: str, caller: str) -> list[tuple[str, int]]:
    facts = facts_of(source)
    return [
        (run.method.name.value, len(run.path))
        for run in facts.method_sequences.runs(function(facts, caller))
    ]


def reached(source: str, caller: str, method: str, forward: str) -> list[tuple[str, str]]:
    """(method, differentiation) for every differentiation in `caller`'s sequence that
    the call `forward` in `method` reaches."""
    facts = facts_of(source)
    sequences = facts.method_sequences
    runs = sequences.runs(function(facts, caller))
    run = next(r for r in runs if r.method.name.value == method)
    call = next(
        node
        for node in facts.index.walk(run.method.body)
        if type(node) is cst.Call and code(node) == forward
    )
    return [
        (r.method.name.value, code(e.call))
        for r, e in sequences.reached_from(function(facts, caller), run, call)
    ]


BICYCLE = """
class Model:
    def forward(self):
        self.fake = self.netG(self.real)
        self.mu2 = self.netE(self.fake)

    def backward_EG(self):
        self.loss_G = self.fake.abs().mean()
        self.loss_G.backward(retain_graph=True)

    def backward_G_alone(self):
        self.loss_z = (self.mu2 - self.z).abs().mean()
        self.loss_z.backward()

    def update(self):
        self.backward_EG()
        self.optimizer_G.step()
        if self.lambda_z > 0:
            self.backward_G_alone()

    def optimize_parameters(self):
        self.forward()
        self.update()
"""


def test_the_runs_follow_the_order_of_the_calls_through_the_methods():
    assert run_names(BICYCLE, "optimize_parameters") == [
        ("optimize_parameters", 0),
        ("forward", 1),
        ("update", 1),
        ("backward_EG", 2),
        ("backward_G_alone", 2),
    ]


def test_a_method_calling_itself_and_other_objects_are_not_followed():
    source = """
    class Agent:
        def act(self, obs):
            return self.policy.act(obs)

        def loop(self, n):
            if n:
                self.loop(n - 1)
            self.act(None)
            helper.loop(n)
    """
    assert run_names(source, "loop") == [("loop", 0), ("act", 1)]


def test_a_function_outside_a_class_has_no_sequence():
    source = """
    def train(model):
        model.fit()
    """
    assert run_names(source, "train") == []


def test_a_value_stored_on_self_reaches_the_backwards_of_the_methods_run_after():
    assert reached(BICYCLE, "optimize_parameters", "forward", "self.netG(self.real)") == [
        ("backward_EG", "self.loss_G.backward(retain_graph=True)"),
        ("backward_G_alone", "self.loss_z.backward()"),
    ]
    assert reached(BICYCLE, "optimize_parameters", "forward", "self.netE(self.fake)") == [
        ("backward_G_alone", "self.loss_z.backward()"),
    ]


def test_a_method_run_before_the_value_is_stored_does_not_see_it():
    source = """
    class Model:
        def forward(self):
            self.out = self.net(self.x)

        def backward(self):
            self.out.mean().backward()

        def step(self):
            self.backward()
            self.forward()
    """
    assert reached(source, "step", "forward", "self.net(self.x)") == []


def test_another_value_bound_to_the_attribute_ends_the_way():
    source = """
    class Model:
        def forward(self):
            self.out = self.net(self.x)

        def refresh(self):
            self.out = self.other(self.x)

        def backward(self):
            self.out.mean().backward()

        def step(self):
            self.forward()
            self.refresh()
            self.backward()
    """
    assert reached(source, "step", "forward", "self.net(self.x)") == []


def test_a_value_passed_on_from_attribute_to_attribute_is_followed():
    source = """
    class Model:
        def forward(self):
            self.out = self.net(self.x)

        def losses(self):
            self.loss = self.out.pow(2).mean()

        def backward(self):
            self.loss.backward()

        def step(self):
            self.forward()
            self.losses()
            self.backward()
    """
    assert reached(source, "step", "forward", "self.net(self.x)") == [
        ("backward", "self.loss.backward()")
    ]


def test_a_value_stored_detached_reaches_nothing():
    source = """
    class Model:
        def forward(self):
            self.out = self.net(self.x).detach()

        def backward(self):
            self.out.mean().backward()

        def step(self):
            self.forward()
            self.backward()
    """
    assert reached(source, "step", "forward", "self.net(self.x)") == []


def test_a_method_reading_what_it_bound_itself_does_not_read_the_stored_value():
    source = """
    class Model:
        def forward(self):
            self.out = self.net(self.x)

        def backward(self):
            self.out = self.x * 2
            self.out.mean().backward()

        def step(self):
            self.forward()
            self.backward()
    """
    assert reached(source, "step", "forward", "self.net(self.x)") == []
