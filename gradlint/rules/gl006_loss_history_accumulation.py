from __future__ import annotations

import libcst as cst

from gradlint.analysis.bindings import assigned_names
from gradlint.analysis.grad_mode import GradMode
from gradlint.analysis.index import dotted_name
from gradlint.analysis.loops import LoopFacts, LoopNode
from gradlint.analysis.values import Kind, may_carry_graph
from gradlint.diagnostics import Confidence, Edit, Fix, Group
from gradlint.rules.base import Rule
from gradlint.rules.explain import loop_header

_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


class LossHistoryAccumulation(Rule):
    """
    ## What it does
    Flags a graph-carrying tensor (a loss, a model output) accumulated across the
    iterations of a training loop that calls `backward()` or `optimizer.step()`:
    `total_loss += loss`, `losses.append(loss)`, `running = running + loss`; also a
    forward run in the loop only to be recorded (`history.append(loss_fn(model(X_all),
    y_all))`), whose graph is its own and is never backpropagated, also when it is
    bound to a name first in the loop (`val_loss = crit(model(xv), yv)`, then
    `val_losses.append(val_loss)`), or handed to a tracker whose update method keeps
    it, as it is or scaled (`meter.update(loss, n)` with `self.sum += val * n`); also
    the loss a step in a method, here or in another file, backpropagates and returns
    (`losses.append(agent.update(batch))`). Not
    through the outputs that come with the loss
    the loop backpropagates (`loss, acc = model(x, y)`: `acc` may be a number), nor
    into a container on an object (`agent.saved_log_probs`), a rollout buffer that
    another function may backpropagate.

    The step may be a method of an agent the code is handed (`self.agent = agent`, a
    parameter), whose class it cannot tell, when every class of the project defining
    the method backpropagates and returns the loss.

    The value kept may be an entry of what the loop backpropagates, iterated over in
    the loop: `for k, v in loss_dict.items(): sums[k] += v`, a detection model's or a
    VAE's dict of loss terms, summed for the backward and logged term by term.

    ## Why is this bad?
    The accumulator keeps a reference to every iteration's autograd graph, so the
    history grows for as long as the loop runs: the PyTorch FAQ's "Don't accumulate
    history across your training loop". With a backward in the loop that frees the
    graph, the saved activations are gone but every graph node stays alive: 8 nodes and
    about 6 KB of host memory per iteration for a small MLP's loss (measured over 50,000
    iterations on torch 2.13), a `waste` finding: cheap per step, growing until the
    accumulator is reset. Where nothing frees the graph (`retain_graph=True`, or a
    forward of its own that no backward runs through), every iteration's activations
    stay alive too: a `leak`. Either way it looks like a logging line.

    Not flagged: `.item()` and `.detach()` accumulations, accumulators that are
    themselves backpropagated and reset (micro-batch sums, truncated BPTT losses,
    `torch.stack(losses).sum().backward()` then `losses.clear()`), a list that numpy
    alone reads (`np.mean(actions)`, which raises on a tensor that requires grad, so
    code that runs keeps none there; the loss the loop backpropagates, kept so, is still
    reported, as the crash it is: the numpy call raises), and sums re-created
    on every step right around a counted inner loop (`loss_d_sum = 0.0`, then
    `for _ in range(n_critic):`), which hold a fixed number of graphs (not a list made
    per epoch and filled in every step of every episode, with a loop between: a
    history); the step may be
    a function's call, when the function re-creates its local sum before the counted
    loop and every call of it in the file is inside a loop (a `train_batch` summing
    its `accumulation_steps` micro-batches).

    ## Example
    ```python
    import torch

    w = torch.zeros(3, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    total_loss = 0.0
    for step in range(10):
        loss = ((w - 1.0) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        total_loss += loss
    ```

    ## Use instead
    ```python
    import torch

    w = torch.zeros(3, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    total_loss = 0.0
    for step in range(10):
        loss = ((w - 1.0) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        total_loss += loss.item()
    ```

    `float(loss)` also works, but on torch 2.x it warns when the tensor requires grad.

    ## Fix safety
    The fix accumulates `loss.detach()` instead of `loss`: the value is kept as a tensor
    (so later `.item()` or arithmetic still works) without its graph. It is unsafe: code
    that later differentiates the accumulator would stop getting gradients (gradlint
    does not flag accumulators it sees being backpropagated). A forward of its own gets
    no fix: detached, it would still be built for nothing (GL012), and whether `.item()`
    or `torch.no_grad()` fits is the author's call.

    ## References
    - [PyTorch FAQ: accumulating history](https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory)
    - [`torch.Tensor.detach`](https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html)
    """

    code = "GL006"
    name = "loss-history-accumulation"
    message = "`{acc}` accumulates `{value}` with its autograd graph on every iteration of a training loop; {consequence}. Accumulate `.item()` or `.detach()`"
    fix_title = "Accumulate the detached value"
    _fix_title_for = "Accumulate `{value}.detach()`"
    trigger_tokens = ("backward", ".step(")
    # `losses.append(agent.update(batch))`, the step's backward in `agent.py`
    triggers_may_be_imported = True
    low_confidence = (
        "low when the accumulated value is neither seen to carry a graph nor computed "
        "from the tensor the loop backpropagates, only from intermediates assumed to keep "
        "their graph."
    )

    def leave_Module(self, original_node: cst.Module) -> None:
        for loop in self.facts.loops.differentiating_loops():
            self._check_loop(loop)

    def _check_loop(self, loop: LoopFacts[LoopNode]) -> None:
        facts = self.facts
        index = facts.index
        flow = facts.flow
        if loop.unrolled:
            return  # every graph here is kept on purpose, to be differentiated later
        consumed = loop.closure(loop.roots)
        graph_vars = {var for var in consumed if var in loop.roots} | {
            b.var for b in loop.bindings if b.var in consumed and b.tensor_op
        }
        for node in index.walk(loop.loop.body):
            found = facts.accumulators.accumulation(node)
            if found is None:
                continue
            accumulator, value = found
            # `criteria(model(x), y)` computes the loss backpropagated; what its forward
            # keeps (`self.cum_loss += l`) is the object's state, never backpropagated
            keeps_own_state = type(node) is cst.Call and dotted_name(node.func) == accumulator
            if accumulator in consumed and not keeps_own_state:
                continue  # backpropagated itself: a micro-batch or TBPTT accumulator
            if all(event.kind == "grad" for event in loop.events) and (
                facts.carried_graph.reaches_differentiation(accumulator, loop)
            ):
                # a meta-objective's per-task losses: each task's inner step is an
                # `autograd.grad`, and the sum is backpropagated once, after the loop
                continue
            # the graph kept is the one the loop backpropagates, or one of its own: a
            # forward run for the record (`losses.append(loss_fn(net(X_all), y_all))`),
            # which nothing ever frees
            own = None
            computed_from = reads = flow.reads(value)
            reads = reads | self._iterated_graph(reads, loop, graph_vars)
            if keeps_own_state:
                # what the forward keeps is what the call hands back (`loss = criteria(...)`)
                reads = reads | set(assigned_names(index.statement_of(node)))
            if not reads & graph_vars:
                carried = facts.carried_graph
                statement = index.statement_of(node)
                # a container on an object (`agent.saved_log_probs`) outlives the loop
                # by design, a rollout buffer another function may backpropagate: only
                # a forward in the appended expression itself is seen as a record
                own = (
                    carried.trainable_part(value, statement)
                    if "." in accumulator
                    else carried.trainable_part_per_iteration(value, statement, loop)
                )
                if own is None:
                    continue
            accumulated = facts.values.of_expr(value)
            if not may_carry_graph(accumulated):
                continue  # a number, or a tensor proven to have no history
            if not facts.accumulators.carried(accumulator, node, loop):
                continue
            if facts.accumulators.bounded_by_outer_reset(accumulator, loop):
                continue  # re-created every outer step: at most `range(n)` values kept
            if facts.mode_at(node) is not GradMode.RECORDING:
                continue
            later_reads = facts.accumulators.reads_of(accumulator, node)
            numpy_alone = facts.result_uses.read_by_numpy_alone(later_reads)
            # the value is the graph itself: a tensor with history and nothing else, or
            # what the loop backpropagates (`losses.append(loss)`)
            graph_itself = accumulated == {Kind.GRAPH} or (
                type(value) is cst.Name and value.value in loop.roots
            )
            if numpy_alone and not graph_itself:
                # a value computed some way from the graph (`f1_score(logits, y)`,
                # `g.item() if learned else g`) kept for `np.mean(...)`, which would
                # raise on a graph: the code that runs keeps none
                continue
            rendered = _short(value)
            freed = own is None and self._graph_freed(reads, loop)
            if numpy_alone:
                # the loss the loop backpropagates, kept for `np.mean(losses)`: the numpy
                # call raises on the first list it reads
                line = self.context.positions[later_reads[0]].start.line
                consequence = _NUMPY_RAISES.format(line=line)
                group = Group.CRASH
            else:
                consequence = _NODES_ONLY if freed else _ACTIVATIONS
                group = Group.WASTE if freed else Group.LEAK
            self.report(
                index.statement_of(node),
                self.message_for(
                    acc=accumulator,
                    value=rendered,
                    consequence=consequence,
                ),
                # a forward of its own, detached, would still be built for nothing
                # (GL012): `.item()` or `torch.no_grad()` is the author's call
                # the total is kept inside the module: `.item()` goes there, not here
                fix=self._fix(value, rendered) if own is None and not keeps_own_state else None,
                related=[
                    *self._related(loop, accumulator, computed_from),
                    *([(later_reads[0], "numpy reads the list here")] if numpy_alone else []),
                ],
                confidence=Confidence.HIGH
                if own is not None
                else self._confidence(accumulated, value, loop),
                group=group,
            )

    def _iterated_graph(
        self, reads: set[str], loop: LoopFacts[LoopNode], graph_vars: set[str]
    ) -> set[str]:
        """The names of what the loop backpropagates that a loop variable read here
        iterates over (`for k, v in loss_dict.items(): sums[k] += v`): an element of it
        holds part of its graph. Not when what is iterated holds no graph (`for label
        in y`, the batch's labels moved to the device)."""
        found: set[str] = set()
        for binding in loop.bindings:
            if binding.kind != "for" or binding.var not in reads or binding.value is None:
                continue
            iterated = self.facts.flow.reads(binding.value) & graph_vars
            if iterated and may_carry_graph(self.facts.values.of_expr(binding.value)):
                found |= iterated
        return found

    def _graph_freed(self, reads: set[str], loop: LoopFacts[LoopNode]) -> bool:
        """Is the accumulated value computed from what the loop backpropagates, with
        backwards that free the graph? Then they have already dropped the tensors the
        graph saved, and the accumulator keeps only the graph's nodes (a few KB per
        iteration, docs/consequences.md); with `retain_graph=True` (or a flag that is
        not a literal) it keeps every activation. `reads`: what the value is computed from."""
        walked = [
            event
            for event in loop.events
            if event.kind != "step" and reads & (event.roots | loop.closure(event.roots))
        ]
        return bool(walked) and all(
            self.facts.autograd.retains_graph(event) is False for event in walked
        )

    def _confidence(self, accumulated, value: cst.BaseExpression, loop: LoopFacts[LoopNode]):
        """HIGH when the value is seen to carry a graph: it is one, or it is computed from
        the very tensor the loop backpropagates (backward on a tensor without one
        raises). LOW when it only reads intermediates that feed the loss through
        something the analysis cannot see through, assumed to keep their graph."""
        if Kind.GRAPH in accumulated or self.facts.flow.reads(value) & loop.roots:
            return Confidence.HIGH
        return Confidence.LOW

    def _related(self, loop: LoopFacts[LoopNode], accumulator: str, reads: set[str]):
        """Where the accumulator starts, the loop that adds to it, and the backward whose
        graph it keeps."""
        index = self.facts.index
        scope = self.facts.loops.scope_facts(index.scope_of(loop.loop))
        start = index.order[loop.loop]
        before = [
            b for b in scope.bindings if b.var == accumulator and index.order[b.statement] < start
        ]
        if before:
            yield before[-1].statement, f"`{accumulator}` is created here, outside the loop"
        yield loop_header(
            self.context, loop.loop, "every iteration of this loop keeps one more graph alive"
        )
        for event in loop.events:
            if event.kind != "step" and loop.closure(event.roots) & reads:
                yield event.call, "the graph that is kept is the one backpropagated here"
                break

    def _fix(self, value: cst.BaseExpression, rendered: str) -> Fix | None:
        start, end = self.context.position_of(value)
        if start.line != end.line:
            return None
        text = rendered if isinstance(value, _ATOMS) else f"({rendered})"
        return self.fix(
            self._fix_title_for.format(value=text),
            (Edit(end, end, ".detach()"),)
            if isinstance(value, _ATOMS)
            else (
                Edit(start, start, "("),
                Edit(end, end, ").detach()"),
            ),
        )


_NODES_ONLY = (
    "the backward already freed what it saved, so each iteration keeps only the graph's "
    "nodes (one per operation: a few KB for a small model, hundreds for a deep one), and "
    "the run's memory grows by that"
)
_ACTIVATIONS = "nothing frees its graph, so every iteration's activations stay alive"
_NUMPY_RAISES = (
    "numpy reads the list (line {line}) and raises \"Can't call numpy() on Tensor that "
    'requires grad" on it'
)


def _short(node: cst.CSTNode) -> str:
    text = cst.Module([]).code_for_node(node)
    return text if len(text) <= 40 else text[:37] + "..."
