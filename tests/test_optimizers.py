"""Which modules an optimizer holds, and which steps a scope runs
(gradlint.analysis.optimizers), as GL011's optimizer-step form reads them."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from gradlint.analysis.facts import FileFacts


def facts_of(source: str) -> FileFacts:
    return FileFacts(cst.parse_module(textwrap.dedent(source)))


def function(facts: FileFacts, name: str) -> cst.FunctionDef:
    return next(f for f in facts.index.functions if f.name.value == name)


def held_by_steps(source: str, name: str = "f") -> list[tuple[str, set[str]]]:
    facts = facts_of(source)
    return [
        (step.optimizer, set(step.modules))
        for step in facts.optimizers.steps_in(function(facts, name))
    ]


@pytest.mark.parametrize(
    ("built", "held"),
    [
        ("torch.optim.Adam(qf.parameters(), lr=1e-3)", {"qf"}),
        ("torch.optim.SGD(params=qf.named_parameters())", {"qf"}),
        ("Adam(list(enc.parameters()) + list(dec.parameters()))", {"enc", "dec"}),
        ("Adam(itertools.chain(enc.parameters(), dec.parameters()))", {"enc", "dec"}),
        (
            'SGD([{"params": enc.parameters()}, {"params": dec.parameters(), "lr": 1}])',
            {"enc", "dec"},
        ),
        ("Adam(filter(lambda p: p.requires_grad, qf.parameters()))", {"qf"}),
        ("make_optimizer(qf.parameters(), cfg)", {"qf"}),
        # parameters gathered out of sight prove nothing
        ("Adam(params)", set()),
        ("Adam(get_params(qf))", set()),
        ("Adam(lr=1e-3, *groups)", set()),
    ],
)
def test_the_modules_an_optimizer_is_built_from(built, held):
    source = f"""
    def f(qf, enc, dec, params, cfg, groups):
        opt = {built}
        loss.backward()
        opt.step()
    """
    expected = [("opt", held)] if held else []
    assert held_by_steps(source) == expected


def test_an_optimizer_built_in_init_with_a_class_handed_in():
    source = """
    class SAC:
        def __init__(self, qf, optimizer_class):
            self.qf = qf
            self.qf_optimizer = optimizer_class(self.qf.parameters(), lr=3e-4)

        def train(self, loss):
            loss.backward()
            self.qf_optimizer.step()
    """
    assert held_by_steps(source, "train") == [("self.qf_optimizer", {"self.qf"})]


def test_two_bindings_hold_only_what_both_hold():
    source = """
    def f(a, b, fine_tune):
        opt = Adam(list(a.parameters()) + list(b.parameters()))
        if fine_tune:
            opt = Adam(b.parameters())
        loss.backward()
        opt.step()
    """
    assert held_by_steps(source) == [("opt", {"b"})]


def test_a_module_level_optimizer_read_in_a_function():
    source = """
    net = Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)

    def f(loss):
        loss.backward()
        optimizer.step()
    """
    assert held_by_steps(source) == [("optimizer", {"net"})]


def test_amp_scaler_steps_the_optimizer_it_is_given():
    source = """
    def f(model, scaler, loss):
        opt = Adam(model.parameters())
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    """
    assert held_by_steps(source) == [("opt", {"model"})]


def test_a_helper_steps_as_its_caller_names_it():
    source = """
    def update(optimizer, loss):
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    class Agent:
        def update_critic(self, loss):
            self.critic_opt.zero_grad()
            loss.backward()
            self.critic_opt.step()

        def sometimes(self, loss, it):
            loss.backward()
            if it % 2:
                self.critic_opt.step()

        def f(self, loss, q):
            q_opt = Adam(q.parameters())
            self.critic_opt = Adam(self.critic.parameters())
            update(q_opt, loss)
            self.update_critic(loss)
            self.sometimes(loss, 3)
            other.update_critic(loss)
    """
    facts = facts_of(source)
    steps = facts.optimizers.steps_in(function(facts, "f"))
    shown = [
        (cst.Module([]).code_for_node(s.call), s.optimizer, set(s.modules), s.differentiates_first)
        for s in steps
    ]
    # a conditional step in the helper, and another object's method, are not followed
    assert shown == [
        ("update(q_opt, loss)", "q_opt", {"q"}, True),
        ("self.update_critic(loss)", "self.critic_opt", {"self.critic"}, True),
    ]


def test_a_scheduler_and_a_differentiable_step_are_not_parameter_steps():
    source = """
    def f(model, diffopt, loss):
        opt = Adam(model.parameters())
        scheduler = StepLR(opt, 10)
        scheduler.step()
        diffopt.step(loss)
    """
    assert held_by_steps(source) == []
