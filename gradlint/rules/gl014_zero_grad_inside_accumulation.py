from __future__ import annotations

import libcst as cst

from gradlint.analysis.accumulation import GradSite, runs_once
from gradlint.analysis.bindings import bound_names
from gradlint.analysis.loops import LoopNode
from gradlint.fix_builders import render
from gradlint.rules.base import Rule
from gradlint.rules.explain import loop_header

# One pass of a window: a loop's iteration, or a call of a function run per micro-batch.
_Pass = cst.For | cst.While | cst.FunctionDef


def _own_loop(region: _Pass) -> LoopNode | None:
    """The loop whose iteration is the pass (None for a function's call)."""
    return region if isinstance(region, (cst.For, cst.While)) else None


class ZeroGradInsideAccumulation(Rule):
    """
    ## What it does
    Flags a gradient clear (`optimizer.zero_grad()`, `model.zero_grad()`, `p.grad =
    None`, or a helper of this file that does one) that runs on every micro-batch of a
    gradient-accumulation window, so that the step at the end of the window applies
    only the last micro-batch's gradient. Two shapes:

    - a loop that backpropagates every iteration and steps only every `k`
      (`if (i + 1) % k == 0: optimizer.step()`, or a `continue` under such a test
      before the step), but clears on every iteration, before or after the backward;
    - an inner loop that clears and backpropagates on every pass (`for _ in
      range(k): model.zero_grad(); loss.backward()`), followed by one step after it;
    - a function that a framework calls once per micro-batch (ignite's `update_fn`,
      Lightning's `training_step` with manual optimization) and that clears on every
      call but steps only under such a test;
    - a window of one: the clear between the backward and the step, one after the
      other in one block (`loss.backward()`, `optimizer.zero_grad()`,
      `optimizer.step()`), which throws away the only gradient there is.

    ## Why is this bad?
    Accumulation relies on `backward()` *adding* into `.grad`: after `k` micro-batches
    `.grad` holds their sum, and one step applies the gradient of the whole window. A
    clear inside the window throws away every micro-batch before it. Nothing raises:
    the model trains on an effective batch `k` times smaller than intended (with the
    loss still divided by `k`, on a gradient `k` times smaller too), and `k - 1` of
    every `k` forward and backward passes are wasted. Measured by `python -m
    runtime_check fixtures/GL014` on the four bad fixtures (windows of 2, 3 and 4
    micro-batches, SGD, Adam and AdamW): the gradient every step applies equals the
    last micro-batch's own gradient (`torch.autograd.grad` of that micro-batch's loss)
    and differs from the window's sum that accumulation intends.

    With the clear between the backward and the step, the step applies nothing: the
    gradients are zero, or None under `zero_grad(set_to_none=True)` (the default since
    torch 2.0), and the optimizer skips every parameter whose `.grad` is None. The loss
    never goes down, and nothing raises.

    Not flagged: the clear right after the step in the same branch (`if (i + 1) % k
    == 0: optimizer.step(); optimizer.zero_grad()`), or under its own test (`if i % k
    == 0: optimizer.zero_grad()`); a step and a clear on every iteration (no
    accumulation); a clear before an inner accumulation loop; a step skipped by a test
    that does not count micro-batches (`if torch.isfinite(loss): optimizer.step()`:
    dropping a bad batch is what the clear is for); a branch that clears, backpropagates
    and steps by itself (a generator updated every `n_critic` iterations); loops that
    read `.grad` per micro-batch (per-sample gradients, a Fisher estimate, an
    adversarial perturbation); a model's clear when the loop also steps another
    optimizer (it may be that one's); and `with accelerator.accumulate(model):`, where
    the prepared optimizer's `zero_grad()` waits for the window's end itself.

    An inner loop that runs once as written (`for _ in range(GEN_ITERS)` with the module
    constant `GEN_ITERS = 1`, or `range(1)`) loses nothing until its count grows: it is
    still reported, as a warning rather than an error, and the message says so.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    accumulation = 4
    for i in range(16):
        optimizer.zero_grad()
        loss = model(torch.randn(8, 4)).pow(2).mean() / accumulation
        loss.backward()
        if (i + 1) % accumulation == 0:
            optimizer.step()
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    accumulation = 4
    for i in range(16):
        loss = model(torch.randn(8, 4)).pow(2).mean() / accumulation
        loss.backward()
        if (i + 1) % accumulation == 0:
            optimizer.step()
            optimizer.zero_grad()
    ```

    With an inner loop over micro-batches, clear once before it:
    `optimizer.zero_grad()` then `for chunk in batch.chunk(k): ...backward()`, then
    `optimizer.step()`.

    ## On real code
    In preview. The census's development half (`bench/real-code/`, `census.py score
    --half dev`) has two labelled sites of this pitfall, both in one repository
    (jalola/improved-wgan-pytorch: `aG.zero_grad()` inside the generator's inner loop,
    `optimizer_g.step()` after it; latent while that loop runs once), and the rule finds
    both, with no other finding there: precision 2/2, recall 2/2. Run over every file
    of the half's 42 repositories, not only the census's sampled ones, it reports the
    same two and nothing else (none in yolov5's, litgpt's, diffusers' or peft's
    accumulation loops, which clear after the step or leave it to Accelerate). Two
    findings are too few to show a precision of 0.90, so the rule stays in preview
    until more are judged.

    A grep for steps taken every k iterations (`if i % k == 0: opt.step()`) and for steps
    after an inner loop that runs backward finds 31 candidate sites on the dev half
    (`bench/real-code/newrules-dev.tsv`); the only positives are the two above: recall
    2/2. The GAN critic loops, yolov5's accumulation and pytorch-book's `d_every` /
    `g_every` branches clear with their own step and stay silent.

    The 25 repositories since added to the dev half (67 in all) add no finding, and
    the same grep finds no positive site in them.

    On the held-back test half there is no labelled site and no finding.

    ## References
    - [`torch.Tensor.backward` (gradients are accumulated in leaves)](https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html)
    - [`torch.optim.Optimizer.zero_grad`](https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html)
    - [AMP examples: gradient accumulation](https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-accumulation)
    """

    code = "GL014"
    name = "zero-grad-inside-accumulation"
    message = "`{clear}` clears the gradients {where}, but `{step}` steps only {when}: every clear throws away the micro-batches before it, so the step applies only the last one's gradient, not the window's sum. {advice}"

    _cleared_before_step = (
        "`{clear}` clears the gradients that `{backward}` just computed, before `{step}` "
        "applies them: the step applies nothing (with `set_to_none`, the default, it skips "
        "every parameter), so the model does not train. Clear before the backward, or "
        "after the step"
    )

    trigger_tokens = (".step(",)
    also_needs_tokens = ("zero_grad", ".grad", "clear_grad", "cleargrads", "reset_grad")

    def leave_Module(self, original_node: cst.Module) -> None:
        facts = self.facts
        index = facts.index
        self._reported: set[cst.CSTNode] = set()
        # helpers whose clear was reported where a loop calls them
        self._reported_helpers: set[cst.CSTNode] = set()
        for loop in index.loops:
            sites = facts.accumulation.sites(loop.body)
            kinds = {site.kind for site in sites}
            if "clear" not in kinds or "backward" not in kinds:
                continue
            if facts.frameworks.is_foreign(loop):
                continue
            if "step" in kinds:
                self._check_skipped_steps(loop, sites)
            else:
                self._check_inner_loop(loop, sites)
        # A function a framework calls once per micro-batch (ignite's `update_fn`,
        # Lightning's `training_step` with manual optimization) is the loop's body: the
        # loop itself is out of sight, the window in plain view.
        for func in index.functions:
            if func in self._reported_helpers or facts.frameworks.is_foreign(func):
                continue
            sites = facts.accumulation.sites(func.body)
            kinds = {site.kind for site in sites}
            if "step" in kinds and "clear" in kinds and "backward" in kinds:
                self._check_skipped_steps(func, sites)
        # each function's body and the module's code once (a walk leaves nested
        # functions out), so every block is read in one of them
        for region in (index.module, *index.functions):
            body = region if type(region) is cst.Module else region.body
            sites = facts.accumulation.sites(body)
            kinds = {site.kind for site in sites}
            if "step" in kinds and "clear" in kinds and "backward" in kinds:
                self._check_cleared_before_step(sites)

    # -- a clear between the backward and the step ----------------------------------------

    def _check_cleared_before_step(self, sites: list[GradSite]) -> None:
        """`loss.backward()`, `opt.zero_grad()`, `opt.step()` one after the other in one
        block: the step applies what the clear left, nothing. Only sites whose
        statements share a block are read, so every one of them runs whenever the step
        does, in this order."""
        index = self.facts.index
        order = index.order
        for step in sites:
            if step.kind != "step" or step.closure or not step.always:
                continue
            block = _block_of(index, step.anchor)
            before = sorted(
                (
                    s
                    for s in sites
                    if order[s.anchor] < order[step.anchor]
                    and s.always  # a helper's clear under its own `if` may not run
                    and _block_of(index, s.anchor) is block
                    and index.scope_of(s.anchor) is index.scope_of(step.anchor)
                ),
                key=lambda s: (order[s.anchor], order[s.node]),
                reverse=True,
            )
            clear = next((s for s in before if s.kind != "clear" or self._empties(s, step)), None)
            if clear is None or clear.kind != "clear":
                continue
            earlier = before[before.index(clear) + 1 :]
            backward = next((s for s in earlier if s.kind != "clear"), None)
            if backward is None or backward.kind != "backward":
                continue
            statement = index.statement_of(clear.anchor)
            if statement in self._reported:
                continue
            self._reported.add(statement)
            backward_statement = index.statement_of(backward.anchor)
            step_statement = index.statement_of(step.anchor)
            self.report(
                statement,
                self._cleared_before_step.format(
                    clear=_short(statement),
                    backward=_short(backward_statement),
                    step=_short(step_statement),
                ),
                related=[
                    (backward_statement, "the gradients are computed here"),
                    (step_statement, "and applied here, after the clear"),
                ],
            )

    def _empties(self, clear: GradSite, step: GradSite) -> bool:
        """Does the clear empty the gradients this step applies: its own optimizer's,
        those of a model that optimizer is built from, or (`p.grad = None`, a model of
        unknown optimizer) the only ones stepped here?"""
        if clear.owner is None or step.owner is None:
            return clear.owner == step.owner
        if clear.owner == step.owner:
            return True
        optimizer, _closure = self.facts.autograd.step_parts(step.node)
        # the clear must cover every module the optimizer holds: clearing the encoder
        # of an encoder-decoder optimizer leaves the decoder's gradients to apply
        return self.facts.optimizers.held_modules(optimizer, step.node) == {clear.owner}

    # -- a step skipped on most iterations ----------------------------------------------

    def _check_skipped_steps(self, loop: _Pass, sites: list[GradSite]) -> None:
        acc = self.facts.accumulation
        index = self.facts.index
        steps = [s for s in sites if s.kind == "step" and not s.closure]
        every = [s for s in steps if self._every_pass(s, loop.body)]
        for step in steps:
            if step in every or any(s.owner == step.owner for s in every):
                continue  # this optimizer steps on every iteration: no window
            if next(index.enclosing_loops(step.anchor), None) is not _own_loop(loop):
                continue  # a step of an inner loop: its window is that loop's
            guards = acc.guards(step.anchor, loop.body)
            if step.node is not step.anchor:
                helper = index.scope_of(step.node)
                if type(helper) is cst.FunctionDef:
                    around = next(index.enclosing_loops(step.node), None)
                    if around is not None and index.is_inside(around, helper):
                        # mask-rcnn's `train_epoch`: its own loop counts the window
                        continue
                    guards += acc.guards(step.node, helper.body)
            if not any(acc.counts_micro_batches(g.test) for g in guards):
                continue  # a bad batch skipped, not a window counted
            if acc.framework_accumulates(step.anchor):
                continue
            outside = [s for s in sites if not self._guarded(s, guards)]
            if any(s.kind == "read" for s in outside):
                continue  # each micro-batch's gradient is used on its own
            backwards = [s for s in outside if s.kind == "backward"]
            if not backwards:
                continue
            if self._branch_restarts(step, sites, guards, steps):
                continue
            for clear in outside:
                if (
                    clear.kind == "clear"
                    and self._every_pass(clear, loop.body)
                    and self._clears_the_same(clear, loop)
                    and self._covers(clear, step, steps)
                    and not acc.framework_accumulates(clear.anchor)
                ):
                    self._report(clear, step, loop, inner=False)

    def _guarded(self, site: GradSite, guards: list[cst.If]) -> bool:
        index = self.facts.index
        return any(index.is_inside(site.anchor, g) or index.is_inside(site.node, g) for g in guards)

    def _branch_restarts(
        self, step: GradSite, sites: list[GradSite], guards: list[cst.If], steps: list[GradSite]
    ) -> bool:
        """Does the step's own branch backpropagate (or clear) before it (a generator
        updated every `n_critic` iterations on a loss of its own): a step of its own, not
        the end of a window of micro-batches?"""
        order = self.facts.index.order

        def before(site: GradSite) -> bool:
            if site.anchor is step.anchor:
                return order[site.node] < order[step.node]
            return order[site.anchor] < order[step.anchor]

        return any(
            before(s)
            and (s.kind == "backward" or (s.kind == "clear" and self._covers(s, step, steps)))
            for s in sites
            if self._guarded(s, guards)
        )

    # -- an inner loop that clears on every pass -----------------------------------------

    def _check_inner_loop(self, loop: LoopNode, sites: list[GradSite]) -> None:
        """`loop` clears and backpropagates on every pass and never steps: the step after
        it, before any other clear, applies the last pass's gradient only."""
        facts = self.facts
        acc = facts.accumulation
        index = facts.index
        if any(s.kind == "read" for s in sites) or acc.framework_accumulates(loop):
            return
        clears = [
            s
            for s in sites
            if s.kind == "clear"
            and self._every_pass(s, loop.body)
            and self._clears_the_same(s, loop)
        ]
        if not clears:
            return
        outer = next(index.enclosing_loops(loop), None)
        region: cst.CSTNode
        if outer is not None:
            region = outer.body
        else:
            scope = index.scope_of(loop)
            region = scope.body if type(scope) is cst.FunctionDef else index.module
        order = index.order
        after = [
            s
            for s in acc.sites(region)
            if order[s.anchor] > order[loop]
            and not index.is_inside(s.anchor, loop)
            and not self.facts.index.in_exclusive_branches(s.anchor, loop)
        ]
        for site in after:
            if site.kind == "clear":
                return  # cleared again before the next step: a new window starts
            if site.kind != "step" or site.closure:
                continue
            # No step runs inside the loop, so a model's clear there is this step's.
            if any(self._covers(c, site, [site]) for c in clears):
                self._report(clears[-1], site, loop, inner=True)
            return

    # -- shared ---------------------------------------------------------------------------

    def _every_pass(self, site: GradSite, region: cst.CSTNode) -> bool:
        return site.always and self.facts.accumulation.runs_every_pass(site.anchor, region)

    @staticmethod
    def _clears_the_same(clear: GradSite, loop: _Pass) -> bool:
        """Does the clear clear the same gradients on every pass? Not `opt.zero_grad()`
        in `for model, opt in zip(models, opts)`: each pass clears another optimizer."""
        if clear.owner is None or type(loop) is not cst.For:
            return True
        return clear.owner.split(".")[0] not in bound_names(loop)

    @staticmethod
    def _covers(clear: GradSite, step: GradSite, steps: list[GradSite]) -> bool:
        """Can this clear throw away what the step applies? One of the step's own
        optimizer can; one of another stepped optimizer cannot; a model's (or a
        `.grad = None`) can when no other optimizer steps here, else it may be the
        other one's."""
        if clear.owner is not None and clear.owner == step.owner:
            return True
        stepped = {s.owner for s in steps}
        if clear.owner is not None and clear.owner in stepped:
            return False
        return stepped <= {step.owner}

    def _report(self, clear: GradSite, step: GradSite, loop: _Pass, *, inner: bool) -> None:
        index = self.facts.index
        statement = index.statement_of(clear.anchor)
        if statement in self._reported:
            return
        self._reported.add(statement)
        step_statement = index.statement_of(step.anchor)
        # `range(GEN_ITERS)` with GEN_ITERS = 1: nothing is lost until the count grows
        latent = inner and runs_once(loop, self.facts.bindings)
        if inner:
            where = "on every pass of this loop"
            when = "once, after it"
            advice = "Clear once, before the loop."
            label = "clears on every pass of this loop"
            if latent:
                advice += " (The loop runs once as configured, so nothing is lost yet.)"
        else:
            where = "on every iteration"
            when = "every few iterations"
            advice = "Clear right after the step, in its branch."
            label = "clears on every iteration of this loop"
        if clear.node is not clear.anchor:
            self._reported_helpers.add(index.scope_of(clear.node))
        if isinstance(loop, (cst.For, cst.While)):
            related: list = [loop_header(self.context, loop, label)]
        else:
            where = "on every call"
            when = "on some calls"
            related = [(loop.name, "called once per micro-batch")]
        related.append((step_statement, "steps here, once per window"))
        if clear.node is not clear.anchor:
            related.append((index.statement_of(clear.node), "the helper clears here"))
        self.report(
            statement,
            self.message.format(
                clear=_short(statement if clear.node is clear.anchor else clear.anchor),
                where=where,
                step=_short(step_statement),
                when=when,
                advice=advice,
            ),
            related=related,
            latent=latent,
        )


def _short(node: cst.CSTNode) -> str:
    """The node's code on one line (a loop's header), cut to 40 characters."""
    if isinstance(node, cst.BaseCompoundStatement):
        text = render(node).strip().splitlines()[0].split("#")[0].rstrip() + " ..."
    else:
        text = render(node).strip().rstrip(";").rstrip()
    return text if len(text) <= 40 else text[:37] + "..."


def _block_of(index, node: cst.CSTNode) -> cst.CSTNode | None:
    """The block (an indented body, or the module) whose statement holds `node`."""
    for anc in index.ancestors(node):
        if type(anc) is cst.IndentedBlock or type(anc) is cst.Module:
            return anc
        if type(anc) is cst.SimpleStatementSuite:
            return anc
    return None
