from __future__ import annotations

import libcst as cst

from gradlint.analysis.mode_flow import Mode, ModeWrite, TrainingUse
from gradlint.analysis.torch_api import MODULE_MODE_METHODS
from gradlint.diagnostics import Edit, Fix, Position, Related
from gradlint.edits import split_lines
from gradlint.fix_builders import own_line
from gradlint.rules.base import Rule
from gradlint.rules.explain import elsewhere


class TrainModeNotRestored(Rule):
    """
    ## What it does
    Flags the training forward of a loop that comes back to it in eval mode: an
    evaluation in the loop (`model.eval()` inline, in an evaluation helper the loop
    calls, or in a trainer method) runs every N steps or at the end of each epoch, and
    no `model.train()` runs before the next training step. The finding is on the
    forward (inside the training helper when the loop calls one); the evaluation that
    switched the model is its related place, and where the fix goes. Also training that
    resumes after an evaluation outside its loop (`model.eval()`, a test, then more
    epochs: a notebook's cells run in order) with an optimizer that holds the model,
    and no `model.train()` in between; and training that resumes from a checkpoint in
    eval mode (`if resume: model.load_state_dict(ckpt["model"]); model.eval()`, copied
    from inference code, then the epochs): a resumed run trains with dropout off and
    batch norm frozen, where a fresh start, which skips the branch, trains as meant.

    ## Why is this bad?
    `eval()` is a switch that stays on. After the first evaluation every later
    training step runs with dropout disabled and batch norm normalising with its running
    statistics (and no longer updating them): the model trains as a different network
    than the one intended, without regularisation, and nothing raises. Only the first
    epoch (or the first N steps) trains as written.

    The switch is usually in another function than the loop: an `evaluate(model,
    loader)` helper, a `validate()` method of the trainer, with the training forward in
    a `train_one_epoch(model, ...)` helper. gradlint follows the model into the functions
    of the file the loop calls (as an argument, as `self.<attr>` into a method called
    through `self.`, or into the methods of a trainer object the loop runs:
    `trainer.validation()` switches `trainer.model`), through a helper whose result the
    step differentiates (`loss = self.compute_loss(x)`, then `loss.backward()`), and
    into evaluation helpers imported from the project's other files (`from utils import
    evaluate`: a parameter whose last switch there is `eval()`).

    Measured (fixtures/GL016, CPU): after the first evaluation `model.training` is
    `False` at every later training step, and a dropout layer's output on a batch equals
    its input at those steps, where in training mode it zeroes about `p` of it.

    What that costs depends on the model. Eval mode changes only what dropout, batch
    norm (with running statistics), RReLU, a recurrent or attention layer built with
    `dropout`, spectral norm or a forward that reads `self.training` compute. When
    gradlint can see that the model has none of these (its class, in this file or in
    the project's other files, builds only layers like Linear, convolutions and
    activations, recursively through its own classes and `nn.Sequential`), the finding
    is latent: the message says eval mode changes nothing yet, and the level is at
    most a warning, because the model trains wrong as soon as a dropout layer is
    added. A model whose layers are out of sight (a library's class, one handed in by
    a caller gradlint does not see, one loaded from a file) is reported as an error.

    Not flagged: a `model.train()` (or `self.train()`) at the top of each epoch or
    inside the step function; a train switch after the evaluation on every path; an
    evaluation helper that restores the mode it found (`was = model.training ...
    model.train(was)`, or `if was: model.train()`) or ends with `model.train()`, also
    inside the block that switched it (`if log: model.eval(); ...; model.train()`); evaluating another object (a deep
    copy, an EMA model); an `eval()` that runs before the forward on every iteration
    (frozen batch norm while fine-tuning, on purpose), or right before a training loop
    with no evaluation after it, on every run or under a flag of its own that loads no
    checkpoint (`if freeze_bn: model.eval()`); a model differentiated after an evaluation while the
    optimizer steps only tensors (an adversarial attack, a GAN inversion). An
    evaluation that runs on some
    iterations only before the training steps (`if epoch % n == 0: validate(model)` at
    the top of the epoch) is flagged: from its first run on, every step trains in eval
    mode.

    ## Example
    ```python
    import torch
    from torch import nn


    def evaluate(model, x):
        model.eval()
        with torch.no_grad():
            return model(x).mean().item()


    def train(model, optimizer, batches, x_val):
        for epoch in range(10):
            for x, y in batches:
                loss = nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            print(epoch, evaluate(model, x_val))
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn


    def evaluate(model, x):
        model.eval()
        with torch.no_grad():
            return model(x).mean().item()


    def train(model, optimizer, batches, x_val):
        for epoch in range(10):
            model.train()
            for x, y in batches:
                loss = nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            print(epoch, evaluate(model, x_val))
    ```

    ## Fix safety
    The fix adds `model.train()` on the line after the evaluation call (after a call of
    an evaluation helper), or at the top of the loop body when the `eval()` is inline.
    It is unsafe: a model kept in eval mode on purpose (a frozen feature extractor
    fine-tuned with fixed batch-norm statistics) would change behaviour.

    ## On real code
    In preview. On the census's development half (42 repositories, `bench/real-code/`)
    it catches the one labelled site (d2l's `train_ch3`, whose `evaluate_accuracy`
    helper calls `net.eval()` every epoch) and reports nothing else in the census's
    files: precision 1/1, recall 1/1. Over every file of those repositories it reports
    two more findings, both true (PEFT's BOFT and HRA DreamBooth examples put the UNet
    in eval mode for validation inside the step loop and switch it back only at the top
    of the next epoch): 3 true of 3. Three findings are too few to show a precision of
    0.90, so the rule stays in preview until the held-back half is scored. A training
    forward inside a helper imported from another file is not followed yet.

    A grep for `.eval()` in a training loop or in a function such a loop calls, without
    a `train()` in that loop, finds one more positive site on the dev half
    (`bench/real-code/newrules-dev.tsv`), missed: pytorch_geometric's metapath2vec
    example calls a nested `test()` every `eval_steps` inside a nested `train()` (a
    model without dropout or batch norm, so it changes nothing there; its class comes
    from torch_geometric, out of sight, so a finding there would still be an error).
    Recall 3/4; the
    traps it met (EMA models in denoising-diffusion, moco's deliberate `eval()` for
    linear probing, NoisyNet agents that switch only when testing) stay silent.

    The 25 repositories since added to the dev half (67 in all) add no finding, and
    the same grep finds no positive site in them.

    On the held-back test half it catches both labelled sites, with 2 findings, both true.

    ## References
    - [`nn.Module.train`](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.train)
    - [`nn.Module.eval`](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval)
    - [Autograd mechanics: evaluation mode](https://pytorch.org/docs/stable/notes/autograd.html#evaluation-mode-nn-module-eval)
    """

    code = "GL016"
    name = "train-mode-not-restored"
    message = "`{model}` is in eval mode at this training forward once the loop comes round: an evaluation calls `eval()` and nothing calls `{model}.train()` before the next step, {consequence}"
    fix_title = "Switch the model back with `.train()` after the evaluation"
    # A finding needs an `eval()` (or `train(False)`), in this file or in an evaluation
    # helper it imports from the project, and a training step in this file.
    trigger_tokens = (".eval()", ".train(False", ".train(mode=False")
    triggers_may_be_imported = True
    also_needs_tokens = ("backward", "step(", "grad(")

    def leave_Module(self, original_node: cst.Module) -> None:
        facts = self.facts
        index = facts.index
        if not index.loops:
            return
        flow = facts.mode_flow
        scopes: list[cst.CSTNode] = []
        for loop in index.loops:
            scope = index.scope_of(loop)
            if scope not in scopes:
                scopes.append(scope)
        reported: set[cst.CSTNode] = set()
        for scope in scopes:
            for model in sorted(flow.eval_paths(scope)):
                writes = flow.writes(scope, model)
                if not any(w.mode is Mode.EVAL for w in writes):
                    continue
                evals = [w for w in writes if w.mode is Mode.EVAL]
                # One finding per evaluation: at the first training forward it reaches
                # (a GAN's loop runs several; they share the one missing `train()`).
                for write in evals:
                    for use in flow.training_uses(scope, model):
                        resumed = False
                        if flow.eval_carried_round(write, use, writes):
                            evaluation = None
                        else:
                            evaluation = flow.trained_after_evaluation(
                                write, use, writes, scope, model
                            )
                            if evaluation is None:
                                resumed = flow.eval_on_resume(write, use, writes, scope, model)
                                if not resumed:
                                    continue
                        forward = use.inner or use.anchor
                        if forward not in reported:
                            reported.add(forward)
                            self._report(write, use, model, evaluation, resumed=resumed)
                        break

    def _report(
        self,
        write: ModeWrite,
        use: TrainingUse,
        model: str,
        evaluation: cst.Call | None = None,
        *,
        resumed: bool = False,
    ) -> None:
        """Reported at the training forward that runs in eval mode (inside the training
        helper when the loop calls one): the line that behaves differently from what
        it says. The evaluation that switched the model is the related place, and
        where the fix goes. `evaluation`: for training that resumes after an
        evaluation outside its loop (a notebook's test cell, then more epochs), the
        evaluation's forward. `resumed`: the `eval()` is part of resuming from a
        checkpoint, which a fresh start skips."""
        related: list[tuple[cst.CSTNode, str] | Related] = [
            (write.anchor, f"`{model}` is put in eval mode here, and nothing switches it back"),
        ]
        if evaluation is not None and evaluation is not write.anchor:
            related.append((evaluation, "the evaluation it was switched for"))
        if write.inner is not None:
            related.append((write.inner, "the `eval()` inside that call"))
        else:
            switched = self.facts.mode_flow.external_eval_switch(write.anchor, model)
            if switched is not None:
                related.append(elsewhere("the `eval()` inside that call", switched))
        if use.inner is not None:
            related.append((use.anchor, "the loop runs the training forward through this call"))
        # A model without dropout, batch norm or anything else that reads the mode
        # computes the same in eval mode: true of the code, harmless until one is added.
        latent = self.facts.mode_dependence.of_model(model, use.anchor) is False
        consequence = _LATENT if latent else _CONSEQUENCE
        if resumed:
            message = _ON_RESUME.format(model=model, consequence=consequence)
        elif evaluation is not None:
            message = _AFTER_EVALUATION.format(model=model, consequence=consequence)
        else:
            message = self.message_for(model=model, consequence=consequence)
        self.report(
            use.inner or use.anchor,
            message,
            fix=self._fix(write, use, model),
            related=related,
            latent=latent,
        )

    def _fix(self, write: ModeWrite, use: TrainingUse, model: str) -> Fix | None:
        """`model.train()` after the evaluation call, or, for an inline `model.eval()`
        (whose evaluation forwards follow it), at the top of the loop body that carries
        the eval round to the training forward."""
        index = self.facts.index
        lines = split_lines(self.context.source)
        inline = write.inner is None and _is_switch(write)
        if not inline:
            line = own_line(self.context, index.statement_of(write.anchor))
            if line is None:
                return None
            start, end = self.context.position_of(line)
            first = lines[start.line - 1]
            indent = first[: len(first) - len(first.lstrip(" \t"))]
            last = lines[end.line - 1]
            newline = _newline(last)
            column = len(last.rstrip("\r\n"))
            text = f"{newline}{indent}{model}.train()"
            return self.fix(
                self.fix_title,
                (Edit(Position(end.line, column), Position(end.line, column), text),),
            )
        holding = [
            loop
            for loop in index.enclosing_loops(use.anchor)
            if index.is_inside(write.anchor, loop)
        ]
        if not holding:
            return self._train_before(use, model, lines)
        body = holding[0].body
        if type(body) is not cst.IndentedBlock or not body.body:
            return None
        return self._train_above(body.body[0], model, lines)

    def _train_above(self, statement: cst.CSTNode, model: str, lines: list[str]) -> Fix:
        """`model.train()` on a line of its own above `statement`, with its indentation,
        above the comments and blank lines that lead into it."""
        start, _ = self.context.position_of(statement)
        first = lines[start.line - 1]
        indent = first[: len(first) - len(first.lstrip(" \t"))]
        above = start.line - len(getattr(statement, "leading_lines", ()))
        at = Position(above, 0)
        return self.fix(
            self.fix_title, (Edit(at, at, f"{indent}{model}.train(){_newline(first)}"),)
        )

    def _train_before(self, use: TrainingUse, model: str, lines: list[str]) -> Fix | None:
        """`model.train()` on a line of its own above the statement that starts the
        training after an evaluation: its outermost loop in the scope, or the forward's
        own statement."""
        index = self.facts.index
        scope = index.scope_of(use.anchor)
        loops = [
            loop for loop in index.enclosing_loops(use.anchor) if index.scope_of(loop) is scope
        ]
        line: cst.CSTNode | None
        if loops:
            line = loops[-1]
            if not isinstance(index.parent.get(line), (cst.IndentedBlock, cst.Module)):
                return None
        else:
            line = own_line(self.context, index.statement_of(use.anchor))
        if line is None:
            return None
        return self._train_above(line, model, lines)


_AFTER_EVALUATION = (
    "`{model}` is in eval mode at this training forward: an evaluation before it called "
    "`eval()` and nothing calls `{model}.train()` before training resumes, {consequence}"
)
_ON_RESUME = (
    "`{model}` is in eval mode at this training forward when training resumes from a "
    "checkpoint: the resume calls `eval()` after loading its weights and nothing calls "
    "`{model}.train()`, while a fresh start trains in training mode, {consequence}"
)
_CONSEQUENCE = "so dropout and batch norm stay in inference mode for the rest of training"
_LATENT = (
    "which changes nothing yet: the model has no dropout, batch norm or other layer that "
    "behaves differently in eval mode, but it trains wrong as soon as one is added"
)


def _is_switch(write: ModeWrite) -> bool:
    func = write.anchor.func
    return type(func) is cst.Attribute and func.attr.value in MODULE_MODE_METHODS


def _newline(line: str) -> str:
    for ending in ("\r\n", "\n", "\r"):
        if line.endswith(ending):
            return ending
    return "\n"
