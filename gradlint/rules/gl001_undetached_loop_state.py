from __future__ import annotations

import libcst as cst

from gradlint.analysis.grad_mode import GradMode
from gradlint.analysis.index import dotted_name
from gradlint.analysis.loops import LoopFacts, LoopNode
from gradlint.analysis.module_state import CarriedAttribute
from gradlint.analysis.values import MODULE
from gradlint.diagnostics import Confidence, Edit, Fix, Group, Position, Related
from gradlint.fix_builders import own_line
from gradlint.rules.base import Rule

_BUFFER_WRITTEN_WITH_GRAPH = (
    "`{buffer}` is written in place with a value that carries this forward's autograd "
    "graph; nothing raises, but the graph grows: each call chains its graph onto the one "
    "the buffer already holds, so the buffer keeps every training step's graph alive "
    "(memory grows with the run, and a backward that ever reaches it fails); write it "
    "under `torch.no_grad()`, or detach the value"
)
_KEPT_BY_MODULE = (
    "`{model}` keeps `{state}` from one call to the next with its autograd graph, and "
    "this loop calls it and backpropagates every iteration without resetting or "
    "detaching it; {consequence}. Detach `{state}` after each step, else reset it "
    "before each call"
)


class UndetachedLoopState(Rule):
    """
    ## What it does
    Flags a tensor carried from one loop iteration to the next (`h = h + f(h)`,
    `out, hidden = rnn(x, hidden)`, `h, c = cell(x, (h, c))`, `state = next_state`) in
    a loop that calls `backward()`, `torch.autograd.grad` or `optimizer.step()` every
    iteration (itself, or through a function or method of this file that backpropagates
    a value computed from its arguments: `h = learner.train_step(x, h)`), when nothing
    in the loop detaches it.

    Also state a model keeps on itself across its calls: a `forward` that stores what
    it computed from an attribute back into it (`out, self.hidden = self.rnn(x,
    self.hidden)`), itself or in a submodule it runs (a layer of another project file
    that keeps its evolving weight, as EvolveGCN does), when the model is called every
    iteration of such a loop that neither resets nor detaches the attribute between
    calls. The finding is on the loop's call, with where the state is stored beside it.

    Also a registered buffer that a `forward` writes in place, while autograd records,
    with a value that carries the call's graph (`self.stored_mean[:] = self.stored_mean *
    (1 - m) + mean * m`, `self.ema.mul_(d).add_(x)`, `self.buf.copy_(v)`), whichever loop
    calls the model: the finding is on the write.

    ## Why is this bad?
    The carried tensor drags the previous iterations' graph into the next one. The
    second `backward()` then fails with `RuntimeError: Trying to backward through the
    graph a second time`. The usual "fix", `backward(retain_graph=True)`, is worse: no
    error, but every step backpropagates through the entire history, so time per step
    and memory grow linearly (quadratic time overall), and with an optimizer step in
    between it fails with "modified by an inplace operation". The message says which
    of these the loop will do, read off its backward's `retain_graph` (both, when the
    flag is not a literal).

    An in-place write into a buffer records too (`CopySlices`, `AddBackward`), and its
    node keeps the buffer's previous history, whatever the write overwrites: the buffer
    holds every training call's graph and saved activations (measured on torch 2.13: 7
    more graph nodes per step for a one-line running mean), and a backward that ever
    reaches it raises on the second step. A leak, reported as a warning.

    Not flagged: state detached anywhere in the loop (top of the loop, after the step,
    every k steps for truncated BPTT, through a `repackage_hidden` helper), state
    re-created each iteration, one backward after the whole rollout (intentional full
    BPTT), loops without backward, loops under `no_grad`, Python numbers
    (`step += 1`, `running = 0.9 * running + 0.1 * loss.item()`), what an environment
    hands back (`obs = env.step(action)[0]` with `env = gym.make(...)`), and a
    meta-learner's inner loop that differentiates only with `autograd.grad` and returns
    what it carries to a caller that backpropagates it (the unroll is the meta-gradient).
    For state kept by a model: a forward that detaches what it stores (also through
    `repackage_hidden`), stores it afresh first thing (`self.init_hidden(x.size(0))`),
    stores it only under `no_grad` or only in eval mode, or whose stored state never
    reaches what it returns (running statistics); a model that is frozen, or whose
    output the loop detaches before its loss; a loop that assigns or deletes the
    attribute, detaches it (or each of its tensors) in place, calls a method of a class
    of this file that stores it afresh or detached (`model.detach_hidden()`,
    `model.core.reset()`), or hands the model to a function of the project, between
    calls; and a count (`self.calls = self.calls + 1`). For a buffer written in place:
    a write through `.data`, of a detached value, an `.item()` or a Python number, under
    `no_grad`, or into an attribute that is no registered buffer.

    ## Example
    ```python
    import torch

    W = torch.nn.Parameter(torch.randn(8, 8) * 0.1)
    opt = torch.optim.SGD([W], lr=0.01)
    h = torch.zeros(1, 8)
    for t in range(5):
        h = h + 0.1 * torch.tanh(h @ W + 1.0)
        loss = h.pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    ```

    ## Use instead
    ```python
    import torch

    W = torch.nn.Parameter(torch.randn(8, 8) * 0.1)
    opt = torch.optim.SGD([W], lr=0.01)
    h = torch.zeros(1, 8)
    for t in range(5):
        h = h.detach()
        h = h + 0.1 * torch.tanh(h @ W + 1.0)
        loss = h.pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    ```

    ## Fix safety
    The fix inserts `h = h.detach()` at the top of the loop body. It is offered only
    when `h` is known to be a tensor (made by a torch factory before the loop), and it
    is unsafe: it truncates backpropagation through time to one step, which is what a
    per-step backward needs, but not what code that meant full BPTT wants.

    ## References
    - [PyTorch FAQ: truncated BPTT and `repackage_hidden`](https://pytorch.org/docs/stable/notes/faq.html)
    - [`torch.Tensor.detach`](https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html)
    """

    code = "GL001"
    name = "undetached-loop-state"
    message = "{names} carried into the next iteration with {pronoun} autograd graph while this loop differentiates every iteration; {consequence}. Detach {them} at the top of the loop"
    fix_title = "Detach the carried state at the top of the loop"
    _fix_title_for = "Detach {names} at the top of the loop"
    trigger_tokens = ("backward", "autograd", ".step(", "register_buffer")
    # `update(optimizer, loss)`, its backward in `utils.py`
    triggers_may_be_imported = True
    low_confidence = (
        "low when every statement that carries the state calls a plain name that neither "
        "this file, the project nor torch defines (`h = step(h)`): that it returns a "
        "tensor with history is assumed, not seen."
    )

    def leave_Module(self, original_node: cst.Module) -> None:
        for loop in self.facts.loops.differentiating_loops():
            if loop.carried:
                self._check_loop(loop)
        self._check_state_kept_by_modules()
        self._check_buffers_written_with_graph()

    def _check_loop(self, loop: LoopFacts[LoopNode]) -> None:
        facts = self.facts
        if facts.mode_at(loop.loop.body) is not GradMode.RECORDING:
            return
        if loop.unrolled:
            return  # a differentiable unroll (MAML inner loop): the history is the point
        roots = loop.roots
        if not roots:
            # Only an optimizer step is visible: whether the carried value feeds the
            # graph being stepped is out of sight (HF's Trainer carries callback state
            # and a detached running loss there), so stay quiet.
            return
        consumed = loop.closure(roots)
        by_statement: dict[cst.CSTNode, list[str]] = {}
        # Carried names whose graph is assumed, not seen: their values are UNKNOWN.
        unsure: set[str] = set()
        carried = self.facts.carried_graph
        callables = carried.called_names(loop)
        for var in sorted(loop.carried - callables):
            if var not in consumed:
                continue  # never reaches what is differentiated (GL006's territory)
            if loop.differentiated_with_respect_to(var):
                continue  # functional fast weights: the gradient is taken through them
            if not carried.may_carry_graph(var, loop):
                continue  # a number, a module, a tensor that never had history
            if carried.unrolled_for_callers(var, loop):
                continue  # a meta-learner's inner loop: the caller differentiates the unroll
            carrying = carried.carrying_statements(var, loop)
            if carrying and all(self._through_unknown_function(s) for s in carrying):
                unsure.add(var)
            for statement in carrying:
                by_statement.setdefault(statement, []).append(var)
        for statement, names in by_statement.items():
            if facts.mode_at(statement) is not GradMode.RECORDING:
                continue
            quoted = ", ".join(f"`{n}`" for n in names)
            events = [
                e for e in loop.events if e.kind != "step" and loop.closure(e.roots) & set(names)
            ]
            consequence, group = self._consequence(loop, events)
            self.report(
                statement,
                self.message_for(
                    names=quoted,
                    pronoun="its" if len(names) == 1 else "their",
                    them="it" if len(names) == 1 else "them",
                    consequence=consequence,
                ),
                fix=self._fix(loop, names, quoted),
                related=self._related(loop, names),
                confidence=Confidence.LOW if unsure >= set(names) else Confidence.HIGH,
                group=group,
            )

    # -- state a module keeps on itself across its calls ---------------------------------

    def _check_state_kept_by_modules(self) -> None:
        """`out, self.hidden = self.rnn(x, self.hidden)` in the forward of a model that
        a loop calls, and backpropagates, every iteration without resetting or
        detaching `model.hidden` in between: the state is carried from one iteration
        to the next by the model, not by a loop variable."""
        facts = self.facts
        loops = facts.loops.differentiating_loops()
        differentiating = {f.loop for f in loops}
        reported: set[cst.CSTNode] = set()
        for loop in loops:
            node: LoopNode = loop.loop
            events = [e for e in loop.events if e.kind != "step"]
            if not events or loop.unrolled or facts.mode_at(node.body) is not GradMode.RECORDING:
                continue
            for call in facts.index.of_types_in(node.body, cst.Call, into_functions=False):
                innermost = next(
                    (lp for lp in facts.index.enclosing_loops(call) if lp in differentiating),
                    None,
                )
                if innermost is not node or facts.mode_at(call) is not GradMode.RECORDING:
                    continue
                forward = facts.forwards.forward_of(call)
                if forward is None:
                    continue
                func = call.func
                if type(func) is cst.Attribute and func.attr.value == "forward":
                    func = func.value
                model = dotted_name(func)
                if (
                    model is None
                    # a frozen model on inputs without history records nothing, and an
                    # output that never reaches a backward leaves the state unwalked
                    or facts.forwards.is_frozen(model, call, whole=True)
                    or not facts.forwards.graph_is_used(call, model)
                ):
                    continue
                state = facts.module_state
                statement = facts.index.statement_of(call)
                for carried in state.carried_attributes(forward):
                    if statement in reported:
                        continue
                    if state.cleared_in(node.body, model, carried.attribute):
                        continue
                    reported.add(statement)
                    consequence, group = self._consequence(loop, events)
                    kept = f"{model}.{carried.attribute.split('.', 1)[1]}"
                    self.report(
                        statement,
                        _KEPT_BY_MODULE.format(model=model, state=kept, consequence=consequence),
                        related=[
                            self._where_stored(carried),
                            *((e.call, "backpropagated here every iteration") for e in events),
                        ],
                        group=group,
                    )

    def _check_buffers_written_with_graph(self) -> None:
        """`self.stored_mean[:] = self.stored_mean * (1 - m) + mean * m` in a `forward`
        that records (BigGAN's batch norm): the buffer is carried from one call to the
        next by the module, and an in-place write keeps the previous call's history in
        the new one, whichever loop calls the model."""
        state = self.facts.module_state
        for cls in self.facts.index.classes:
            for write in state.buffers_written_with_graph(cls):
                self.report(
                    write.statement,
                    _BUFFER_WRITTEN_WITH_GRAPH.format(buffer=write.attribute),
                    group=Group.LEAK,
                )

    @staticmethod
    def _where_stored(carried: CarriedAttribute) -> tuple[cst.CSTNode, str] | Related:
        label = f"`{carried.attribute}` is stored from its own previous value here"
        if carried.elsewhere is None:
            return carried.statement, label
        path, line = carried.elsewhere
        return Related(label, path, Position(line, 0), Position(line, 0), None)

    def _consequence(self, loop: LoopFacts[LoopNode], events: list) -> tuple[str, Group]:
        """What happens at run time (measured on torch 2.13, /work/shared/pitfalls.md 1a):
        a backward that frees its graph raises on the second iteration; one that keeps
        it (`retain_graph=True`) raises too once an optimizer step has changed the
        weights in place, and otherwise silently re-walks a graph that grows: a leak,
        not a crash."""
        kept = {self.facts.autograd.retains_graph(e) for e in events}
        if kept == {False}:
            return (
                "the second iteration's backward raises \"Trying to backward through the "
                'graph a second time"',
                Group.CRASH,
            )
        if kept == {True}:
            if any(e.kind == "step" for e in loop.events) or self._updates_in_place(loop):
                return (
                    "the second iteration's backward raises \"modified by an inplace "
                    'operation": the step changed weights the kept graph saved',
                    Group.CRASH,
                )
            return (
                "nothing raises, but the graph grows every iteration and each backward "
                "walks the whole history (time and memory per step grow)",
                Group.LEAK,
            )
        return (
            "the next backward raises, or, where it retains the graph, the graph grows",
            Group.CRASH,
        )

    def _updates_in_place(self, loop: LoopFacts[LoopNode]) -> bool:
        """A manual update (`W -= lr * W.grad`) in the loop changes the weights in place."""
        clearing = self.facts.grad_clears
        return any(clearing.update_at(n) is not None for n in self.facts.index.walk(loop.loop.body))

    def _related(self, loop: LoopFacts[LoopNode], names: list[str]):
        """Where the state enters the loop, and each differentiation it reaches."""
        yield from self.facts.loops.entries(loop.loop, names)
        for event in loop.events:
            if event.kind == "step" or not loop.closure(event.roots) & set(names):
                continue
            what = "backpropagated" if event.kind == "backward" else "differentiated"
            yield event.call, f"{what} here every iteration"

    def _through_unknown_function(self, statement: cst.CSTNode) -> bool:
        """`h = step(h)` where `step` is a name this file and the project do not define
        and that is no torch function or module: that it hands back a tensor with history
        is assumed, not seen."""
        value = getattr(statement, "value", None)
        if type(value) is not cst.Call or type(value.func) is not cst.Name:
            return False
        facts = self.facts
        qualified = facts.qualified_name(value.func) or ""
        if qualified.startswith("torch.") or MODULE <= facts.values.of_expr(value.func, value):
            return False
        summaries = facts.summaries
        return summaries.resolve(value) is None and summaries.resolve_external(value) is None

    def _fix(self, loop: LoopFacts[LoopNode], names: list[str], quoted: str) -> Fix | None:
        body = loop.loop.body
        if type(body) is not cst.IndentedBlock or not body.body:
            return None
        first = body.body[0]
        if own_line(self.context, first) is None and not isinstance(
            first, cst.BaseCompoundStatement
        ):
            return None
        start, _ = self.context.position_of(first)
        indent = " " * start.column
        unit = self.context.module.default_indent
        lines = []
        for name in names:
            shape = self._shape(loop, name)
            if shape is None:
                return None
            detach = (
                f"{name} = {name}.detach()"
                if shape.startswith("tensor ")
                else f"{name} = tuple(t.detach() for t in {name})"
            )
            if shape.endswith("or none"):
                lines.append(f"{indent}if {name} is not None:\n{indent}{unit}{detach}\n")
            else:
                lines.append(f"{indent}{detach}\n")
        # Insert before the first statement's own line, after its leading comments.
        return self.fix(
            self._fix_title_for.format(names=quoted),
            (Edit(Position(start.line, 0), Position(start.line, 0), "".join(lines)),),
        )

    def _shape(self, loop: LoopFacts[LoopNode], name: str) -> str | None:
        """What `name` holds at the top of the loop, so the inserted detach is valid on
        it: "tensor [or none]" or "tensors [or none]" (an LSTM's (h, c)); None if unsure."""
        index = self.facts.index
        tensors = self.facts.tensors
        scope = index.scope_of(loop.loop)
        shapes: set[str] = set()
        before = [
            b
            for b in self.facts.loops.scope_facts(scope).bindings
            if b.var == name and index.order[b.statement] < index.order[loop.loop]
        ]
        if not before:
            return None
        for binding in before + loop.bindings_of(name):
            shapes.add(self._binding_shape(binding, name, tensors) or "unknown")
        concrete = shapes - {"none"}
        if len(concrete) != 1 or "unknown" in concrete:
            return None
        (kind,) = concrete
        return f"{kind} or none" if "none" in shapes else f"{kind} "

    @staticmethod
    def _binding_shape(binding, name: str, tensors) -> str | None:
        statement = binding.statement
        if binding.kind == "augassign":
            return "tensor"
        if type(statement) is not cst.Assign or len(statement.targets) != 1:
            return None
        target = statement.targets[0].target
        if isinstance(target, (cst.Tuple, cst.List)):
            names = [dotted_name(e.value) for e in target.elements]
            if name not in names:
                return None
            return tensors.value_shape(statement.value, names.index(name), statement)
        if type(statement.value) is cst.BinaryOperation:
            return "tensor"  # `h = h + f(h)`: arithmetic on the carried tensor
        return tensors.value_shape(statement.value, None, statement)
