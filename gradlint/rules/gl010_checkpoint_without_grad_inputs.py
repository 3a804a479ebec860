from __future__ import annotations

import libcst as cst

from gradlint.analysis.bindings import assigned_names
from gradlint.analysis.grad_mode import GradMode
from gradlint.analysis.index import bool_literal, dotted_name
from gradlint.analysis.torch_api import (
    CHECKPOINT_FUNCTIONS,
    CHECKPOINT_KEYWORDS,
    CHECKPOINT_SEQUENTIAL_FUNCTIONS,
    CHECKPOINT_SEQUENTIAL_KEYWORDS,
)
from gradlint.analysis.values import is_graph_free
from gradlint.diagnostics import Applicability, Edit, Fix
from gradlint.fix_builders import add_keyword_argument
from gradlint.rules.base import Rule

_MESSAGE = (
    "No tensor passed to this reentrant `{callee}` requires grad: {what} get no gradient "
    '(and a backward through nothing else raises "element 0 of tensors does not require '
    'grad"); pass `use_reentrant=False`'
)


class CheckpointWithoutGradInputs(Rule):
    """
    ## What it does
    Flags `torch.utils.checkpoint.checkpoint(fn, *args)` in its reentrant form
    (`use_reentrant=True`, or no `use_reentrant` at all: torch 2.13 still defaults to
    it, with a warning) when no tensor among `args` requires grad: raw data made with
    `torch.randn`/`torch.zeros`, a `.detach()`ed or `.data` value, or a tensor computed
    under `torch.no_grad()`. The same for `checkpoint_sequential(functions, segments,
    input)` with more than one segment.

    ## Why is this bad?
    The reentrant checkpoint is an `autograd.Function` of the tensors passed to it. It
    runs `fn` without recording, and its output requires grad only if one of those
    tensors does; the parameters that `fn` uses from its closure or its module do not
    count. With no such input the whole segment is cut out of the graph: its parameters
    silently get no gradient (torch only warns `None of the inputs have
    requires_grad=True. Gradients will be None`), and when nothing outside the segment
    requires grad, `backward()` raises `RuntimeError: element 0 of tensors does not
    require grad and does not have a grad_fn`. It bites the first checkpointed layer,
    whose input is the data batch, and a trainable head checkpointed after a frozen
    backbone run under `no_grad`. `checkpoint_sequential` checkpoints every segment but
    the last, so with an input that does not require grad all those segments lose their
    gradients. The non-reentrant variant (`use_reentrant=False`) records the segment
    like ordinary code and has none of this.

    Flagged only where gradlint can prove that no argument requires grad; an argument it
    cannot see through is assumed to. Inside a module's `forward`, a parameter of
    `forward` holds what the module's callers pass: `checkpoint(self.stem, images)` is
    flagged when the forward is trained (a class of the file that subclasses a torch
    module, its `forward` not under `no_grad`), the file calls the module at least once
    (`net = Net()`, `net(images)`), and every such call passes data without history: a
    tensor made with `torch.randn`, a batch of a `DataLoader` built in sight (also after
    `.to(device)`) or of whatever iterable a loop trains on (`for x, y in loader:` with a
    backward and an optimizer step each time, the loader handed in), or the parameter of
    another trained forward whose callers do. A
    helper method the forward calls (`self.features(images)`) passes its argument on
    the same way. A
    module no call of the file reaches, or one called with a layer's output or a value
    out of sight, has unknown inputs and is not flagged: precision first. The same
    holds for a case often
    reported, checkpointed layers behind a frozen embedding (LoRA fine-tuning, the reason
    for transformers' `enable_input_require_grads`): a layer frozen with
    `requires_grad_(False)` is out of sight. Not flagged either: calls under
    `no_grad` (no gradient is wanted there), `use_reentrant=False` or a flag computed at
    run time, calls with `*args` or `**kwargs`, an argument that requires grad
    (`x.requires_grad_()`, a parameter, another layer's output), a tensor changed in
    place (`x.copy_(y)` or `buf[i] = y` may give it history), a view of a parameter
    taken under `no_grad` (it still requires grad), and a loop whose statement feeds the
    checkpoint's own result back as its next input (`h = checkpoint(block, h)`).

    ## Example
    ```python
    import torch
    from torch import nn
    from torch.utils.checkpoint import checkpoint

    block = nn.Linear(8, 8)
    head = nn.Linear(8, 1)
    x = torch.randn(4, 8)
    loss = head(checkpoint(block, x)).sum()
    loss.backward()  # block.weight.grad is None
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn
    from torch.utils.checkpoint import checkpoint

    block = nn.Linear(8, 8)
    head = nn.Linear(8, 1)
    x = torch.randn(4, 8)
    loss = head(checkpoint(block, x, use_reentrant=False)).sum()
    loss.backward()
    ```

    ## Fix safety
    The fix passes `use_reentrant=False` (or turns `use_reentrant=True` into `False`),
    the variant PyTorch recommends. It is unsafe: it changes what trains, since the
    segment's parameters start receiving gradients, which is the point but changes
    the results. The non-reentrant variant also behaves differently in ways code may
    rely on: it checks that the recomputation saves tensors of the same shapes and
    raises if not (`determinism_check`), stops the recomputation early, runs
    saved-tensor hooks, supports `torch.autograd.grad` and tensors nested in
    containers, and does not exist before torch 1.11.

    ## References
    - [`torch.utils.checkpoint`](https://pytorch.org/docs/stable/checkpoint.html) (the reentrant variant "requires at least one input and output to have requires_grad=True")
    - [pytorch/pytorch#7617: checkpoint(function, *args) should have the same requires_grad as function(*args)](https://github.com/pytorch/pytorch/issues/7617)
    - [mlfoundations/open_clip#573: the warning, gone with `use_reentrant=False`, and better losses](https://github.com/mlfoundations/open_clip/issues/573)
    """

    code = "GL010"
    name = "checkpoint-without-grad-inputs"
    message = _MESSAGE
    fix_title = "Pass `use_reentrant=False`"
    trigger_tokens = ("checkpoint",)

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        qualified = facts.qualified_name(node.func)
        if qualified in CHECKPOINT_FUNCTIONS:
            sequential = False
            allowed = CHECKPOINT_KEYWORDS  # any other: left alone
        elif qualified in CHECKPOINT_SEQUENTIAL_FUNCTIONS:
            sequential = True
            allowed = CHECKPOINT_SEQUENTIAL_KEYWORDS
        else:
            return
        name = dotted_name(node.func)
        if name is None or not facts.values.bound_only_by_imports(name.split(".")[0], node):
            return  # a function of this file that shadows the import
        if any(arg.star for arg in node.args):
            return
        keywords = {a.keyword.value: a for a in node.args if a.keyword is not None}
        if set(keywords) - allowed:
            return
        reentrant = keywords.get("use_reentrant")
        if reentrant is not None and bool_literal(reentrant.value) is not True:
            return  # False, or decided at run time
        positional = [a.value for a in node.args if a.keyword is None]
        if sequential:
            inputs = self._sequential_input(positional, keywords)
            if inputs is None:
                return
        else:
            if not positional:
                return
            inputs = positional[1:]
        if facts.mode_at(node) is not GradMode.RECORDING:
            return
        if not all(self._graph_free(arg, node) for arg in inputs):
            return
        if sequential:
            what = "the parameters of every segment but the last"
        else:
            fn = dotted_name(positional[0])
            what = f"the parameters used inside `{fn}`" if fn else "the parameters it uses"
        self.report(
            node,
            _MESSAGE.format(callee=qualified.rsplit(".", 1)[-1], what=what),
            fix=self._fix(node, reentrant),
            related=self._origins(inputs, node),
        )

    def _origins(self, inputs: list[cst.BaseExpression], call: cst.Call):
        """Where each named input comes from, proven not to require grad."""
        for arg in inputs:
            name = dotted_name(arg)
            if name is None:
                continue
            for caller in self.facts.trained_forwards.callers_passing_data(name, call):
                yield caller, f"the module is called here with data without history as `{name}`"
            for origin in self.facts.tensors.origins(name, call):
                if type(origin) is cst.For:
                    origin = origin.iter
                yield origin, f"`{name}` comes from here, and does not require grad"

    def _sequential_input(
        self, positional: list[cst.BaseExpression], keywords: dict[str, cst.Arg]
    ) -> list[cst.BaseExpression] | None:
        """`checkpoint_sequential(functions, segments, input)`: the input, when more
        than one segment is checkpointed (the last segment always runs normally)."""
        segments = positional[1] if len(positional) > 1 else None
        if "segments" in keywords:
            segments = keywords["segments"].value
        value = positional[2] if len(positional) > 2 else None
        if "input" in keywords:
            value = keywords["input"].value
        if segments is None or value is None:
            return None
        if type(segments) is cst.Integer and int(segments.value, 0) <= 1:
            return None
        return [value]

    def _graph_free(self, arg: cst.BaseExpression, call: cst.Call) -> bool:
        """Proven to require no grad: its value is a number, None or a tensor without
        history, nothing it is read from is changed in place, and, in a loop, what the
        call's own statement binds to it for the next iteration is free of history too
        (`h = checkpoint(block, h) + bias` feeds a graph back into the call)."""
        facts = self.facts
        values = facts.values
        if not is_graph_free(values.of_expr(arg, call)) and not (
            # `checkpoint(self.stem, images)` in a module's forward: what its callers pass
            type(arg) is cst.Name and facts.trained_forwards.callers_passing_data(arg.value, call)
        ):
            return False
        names = facts.flow.reads(arg)
        if any(values.mutated_in_place(name, call) for name in names):
            return False
        statement = facts.index.statement_of(call)
        for name in names & set(assigned_names(statement)):
            if facts.index.loops_back(
                statement, call, values.bindings_of(name, call)
            ) and not is_graph_free(values.of_binding(statement, name)):
                return False
        return True

    def _fix(self, call: cst.Call, reentrant: cst.Arg | None) -> Fix:
        context = self.context
        if reentrant is not None:
            start, end = context.position_of(reentrant.value)
            edits: tuple[Edit, ...] = (Edit(start, end, "False"),)
        else:
            edits = add_keyword_argument(context, call, "use_reentrant", "False")
        return Fix(self.fix_title, edits, Applicability.UNSAFE)
