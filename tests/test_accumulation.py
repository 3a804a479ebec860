"""The accumulation facts (gradlint.analysis.accumulation) that GL014 reads."""

from __future__ import annotations

import textwrap

import libcst as cst

from gradlint.analysis.facts import FileFacts


def facts_of(source: str) -> FileFacts:
    return FileFacts(cst.parse_module(textwrap.dedent(source)))


def loop_sites(facts: FileFacts, index: int = 0):
    loop = facts.index.loops[index]
    return loop, facts.accumulation.sites(loop.body)


def test_a_skipped_step_and_a_clear_on_every_pass():
    facts = facts_of(
        """
        for i, x in enumerate(loader):
            opt.zero_grad()
            model(x).sum().backward()
            if (i + 1) % k == 0:
                opt.step()
        """
    )
    loop, sites = loop_sites(facts)
    acc = facts.accumulation
    by_kind = {s.kind: s for s in sites}
    assert set(by_kind) == {"clear", "backward", "step"}
    assert by_kind["clear"].owner == "opt" and by_kind["step"].owner == "opt"
    assert acc.runs_every_pass(by_kind["clear"].anchor, loop.body)
    assert not acc.runs_every_pass(by_kind["step"].anchor, loop.body)
    (guard,) = acc.guards(by_kind["step"].anchor, loop.body)
    assert acc.counts_micro_batches(guard.test)


def test_a_continue_before_a_site_makes_it_skippable_and_its_test_a_guard():
    facts = facts_of(
        """
        for i, x in enumerate(loader):
            model(x).sum().backward()
            if (i + 1) % accumulation_steps:
                continue
            opt.step()
            opt.zero_grad()
        """
    )
    loop, sites = loop_sites(facts)
    acc = facts.accumulation
    for site in sites:
        expected = site.kind == "backward"
        assert acc.runs_every_pass(site.anchor, loop.body) is expected, site.kind
    step = next(s for s in sites if s.kind == "step")
    assert [acc.counts_micro_batches(g.test) for g in acc.guards(step.anchor, loop.body)] == [True]


def test_a_test_that_does_not_count_micro_batches():
    facts = facts_of("if torch.isfinite(loss):\n    opt.step()\n")
    test = facts.index.module.body[0].test
    assert not facts.accumulation.counts_micro_batches(test)


def test_a_helper_site_is_anchored_at_the_call_and_knows_whether_it_always_runs():
    facts = facts_of(
        """
        def backward_micro(x):
            opt.zero_grad()
            model(x).sum().backward()
            if done():
                opt.step()

        for x in loader:
            backward_micro(x)
        """
    )
    loop, sites = loop_sites(facts)
    call = facts.index.statement_of(sites[0].anchor)
    assert all(facts.index.statement_of(s.anchor) is call for s in sites)
    assert {s.kind: s.always for s in sites} == {"clear": True, "backward": True, "step": False}


def test_reads_of_the_gradient_and_what_is_not_one():
    facts = facts_of(
        """
        for x in loader:
            for p in params:
                if p.grad is not None:
                    p.grad = None
            g = torch.autograd.grad(loss, params)
            norms.append(w.grad.norm())
        """
    )
    loop, sites = loop_sites(facts)
    kinds = [s.kind for s in sites]
    # the parameter loop is one clear on every pass, its `p.grad = None` another (inside
    # it); `torch.autograd.grad` and `p.grad is not None` read nothing; `w.grad` does
    assert kinds == ["clear", "clear", "read"]
    assert facts.accumulation.runs_every_pass(sites[0].anchor, loop.body)
    assert not facts.accumulation.runs_every_pass(sites[1].anchor, loop.body)


def test_accelerate_accumulate_is_the_frameworks_window():
    facts = facts_of(
        """
        for x in loader:
            with accelerator.accumulate(model):
                opt.zero_grad()
        """
    )
    _, sites = loop_sites(facts)
    assert facts.accumulation.framework_accumulates(sites[0].anchor)
