"""A backward's roots are the values it differentiates, its operands, not every object
whose attribute they are: `(loss / self.cfg.steps).backward()` differentiates `loss` and
`self.cfg.steps`, so an int counter beside it (`self.seen += self.cfg.batch`) keeps no
graph. An attribute of an object the loop binds to a forward's result (`out.loss` of
`out = model(x)`) still carries that forward's graph."""

from __future__ import annotations

import textwrap

import libcst as cst

from gradlint.analysis.facts import FileFacts
from gradlint.config import Config
from gradlint.engine import lint_source

PREVIEW = Config(preview=True)


def facts_of(source: str) -> FileFacts:
    return FileFacts(cst.parse_module(textwrap.dedent(source)))


def codes_at(source: str) -> list[tuple[int, str]]:
    found = lint_source(textwrap.dedent(source), "t.py", PREVIEW)
    return sorted((d.start.line, d.code) for d in found)


def operands(expr: str) -> set[str]:
    facts = facts_of("pass\n")
    return facts.flow.operands(cst.parse_expression(expr))


def test_operands_are_whole_names_not_their_objects():
    assert operands("loss / self.cfg.accum_steps") == {"loss", "self.cfg.accum_steps"}
    assert operands("out.loss") == {"out.loss"}
    assert operands("batch['loss'] * weight") == {"batch", "weight"}


def test_a_method_calls_receiver_is_an_operand():
    found = operands("self.h.pow(2).sum()")
    assert "self.h" in found
    assert "self" not in found
    assert operands("scale * model(x, y=z)") >= {"scale", "model", "x", "z"}


def test_operands_behind_a_graph_cut_are_left_out():
    assert operands("pred.detach() * target + float(self.cfg.scale)") == {"target"}


# The shape of direct-preference-optimization trainers.py: micro-batches scaled by a
# config value, and an example counter advanced by another config value (an int).
SCALED_BY_CONFIG = """
    class Trainer:
        def fit(self, batches):
            for batch in batches:
                for micro in range(self.cfg.accum_steps):
                    loss = self.policy(batch[micro]).mean()
                    (loss / self.cfg.accum_steps).backward()
                self.opt.step()
                self.opt.zero_grad()
                self.seen += self.cfg.examples_per_batch
    """


def test_a_backward_scaled_by_a_config_value_has_that_value_as_root():
    facts = facts_of(SCALED_BY_CONFIG)
    (backward,) = [
        event
        for loop in facts.index.loops
        for event in facts.loops.facts(loop).events
        if event.kind == "backward"
    ][:1]
    assert backward.roots == {"loss", "self.cfg.accum_steps"}


def test_an_int_counter_beside_a_loss_scaled_by_config_is_no_accumulated_graph():
    assert codes_at(SCALED_BY_CONFIG) == []


def test_a_helper_handed_a_scaled_loss_differentiates_the_operands():
    source = """
        class Learner:
            def learn(self, loss):
                self.optim.zero_grad()
                loss.backward()
                self.optim.step()

            def fit(self, loader):
                for x in loader:
                    loss = self.net(x).mean()
                    self.learn(loss * self.hp.weight)
                    self.steps_done += self.hp.unroll
        """
    assert codes_at(source) == []


def test_an_attribute_of_a_forwards_result_still_carries_its_graph():
    source = """
        def fit(model, loader, opt):
            total = 0
            kept = []
            for x in loader:
                opt.zero_grad()
                out = model(x)
                out.loss.backward()
                opt.step()
                total += out.loss
                kept.append(out.logits)
        """
    assert codes_at(source) == [(10, "GL006"), (11, "GL006")]


def test_a_loss_read_off_a_forwards_result_keeps_it_a_graph_variable():
    source = """
        def fit(model, loader, opt):
            total = 0
            for x in loader:
                opt.zero_grad()
                out = model(x)
                loss = out.loss / out.n_tokens
                loss.backward()
                opt.step()
                total += out.loss
        """
    assert codes_at(source) == [(10, "GL006")]
