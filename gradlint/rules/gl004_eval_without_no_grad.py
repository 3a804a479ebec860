from __future__ import annotations

import libcst as cst

from gradlint.analysis.grad_mode import GradMode
from gradlint.analysis.impact import CostSource
from gradlint.analysis.index import dotted_name, module_path
from gradlint.analysis.train_mode import ModeSwitch, among_switched
from gradlint.diagnostics import Confidence, Group, Related
from gradlint.fix_builders import wrap_inference_in_no_grad
from gradlint.rules.base import Rule
from gradlint.rules.explain import at_call_elsewhere, elsewhere, number_reads, numbers_elsewhere

_RAISES = ', and `.numpy()` on its output raises "Can\'t call numpy() on Tensor that requires grad"'


class EvalWithoutNoGrad(Rule):
    """
    ## What it does
    Flags a forward pass of a model that was put in evaluation mode (`model.eval()` or
    `model.train(False)`) while autograd is still recording, when the result is never
    differentiated in that function.

    ## Why is this bad?
    `eval()` only switches layers such as dropout and batch norm to inference
    behaviour; it does not turn off autograd. Every evaluation forward still builds a
    graph and keeps its activations alive as long as the outputs live: one batch of
    activations of extra peak memory, and unbounded growth when outputs or losses are
    kept across batches (`preds.append(model(x))`). PyTorch's autograd notes: "Evaluation
    mode is not a mechanism to locally disable gradient computation." Where the output
    goes straight to `.numpy()` (`model(x).cpu().numpy()`, a scikit-learn style
    `predict`), the read does not even run: `RuntimeError: Can't call numpy() on Tensor
    that requires grad`; that finding is an error (a crash), the others waste.

    The eval switch may be in another function than the forward: a caller that passes
    the model in, a loader (in this file or another) that returns it in eval mode, a
    helper of this file that switches what it is handed, with the flag its call passes
    (`set_mode(net, False)` with `def set_mode(m, training): m.train(training)`,
    `self.training_mode(False)` switching `self.policy`), the module's own code for a
    route handler or a helper other functions call (when the file never switches the
    model back), a context manager of the project (this file included) that switches its
    arguments for the block (`with utils.eval_mode(agent):`, a generator that calls
    `m.eval()` before it yields or a class whose `__enter__` calls `m.train(False)`), or
    a sibling method (`def evaluate(self): self.G.eval()`, then `def sample(self):
    self.G(z)`) when every call of the method in the project runs after a call of that
    sibling on the same object, with nothing in between that switches it back. A switch
    in the constructor (`self.net.eval()` in `__init__`, or in a base's `__init__` the
    subclass's runs) holds in every method of the object, since each runs after it, when
    nothing in the class, its bases or its subclasses switches the attribute again or
    builds it anew, no code of the file switches an attribute of that name on another
    object, and no class of them may be a module (every base is in the file or
    `object`): a module's `train()` switches its submodules back.

    A forward is a call of the model (`model(x)`, `model.forward(x)`), a method of a
    module class of this file that computes with its layers (`model.encode(x)`; a class
    of no torch base counts as a module when its own `train` switches its attributes:
    `def train(self, training): self.actor.train(training)`), or, for a model whose
    class is out of sight (handed in, another file's, built by a factory such as
    `hydra.utils.instantiate(cfg.agent)`): a method outside nn.Module's API given a
    tensor whose output is kept (`state = self.model.encode(src)` with `src =
    img.unsqueeze(0).to(device)`), or a method given an input that every class of the
    project defining it runs its layers in with autograd on (`agent.act(obs)`). Not one
    whose name a class of the project defines with a grad mode of its own (a GAN
    wrapper's `test` under `with torch.no_grad():`) or that makes a tensor without
    layers (`model.get_z_random(n, nz)`), nor a library method the project does not
    define (transformers' `generate`, which runs under `no_grad` itself). A forward that
    is a statement of its own (a warm-up `model(x)`) is flagged too, its impact the
    statement's (`once` in a script): its output is dropped at once, but every
    activation was saved for a backward while it ran, a peak the same forward under
    `no_grad` never reaches; unless its function differentiates something, into which
    a loss module or hook inside the model may carry that graph (neural style
    transfer). An output handed to a call out of sight and dropped (`compare(model(x),
    ref)`) is not flagged; one a test's assertion reads (`self.assertEqual(model(x),
    ref)`, `torch.testing.assert_close`) is, a hint at the `test` impact. In a
    notebook, the last expression of a cell is not dropped: IPython shows it and keeps
    it in `Out[n]`, so `loss_fn(model(x), y)` there holds the forward's graph for the
    session (no fix is offered there: inside `with torch.no_grad():` the cell would show
    nothing). The layers of an eval-mode model walked one by one (`for layer in
    vgg.features: x = layer(x)`, `net.children()`) are in its mode, and so is a trainer
    module whose forward backpropagates only under `if self.training:`.

    One function may serve both phases, picked by a flag: `if train: model.train()
    else: model.eval()` or `model.train(train)`, the backward under `if train:`. Each
    call of it in the file
    is then read with the flag it gives (a literal or a constant such as
    `LoopPhase.TEST`, passed or left to its default): a call in which the model is in
    eval mode (switched by the function on that path, or by the caller before the
    call), that runs no backward of the result and is not under `no_grad`, is reported
    at the forward, with that call as a related location ("called here with
    train=False, outside no_grad"), and the fix wraps that call. The training call and
    a call under `no_grad` are fine; a flag whose value cannot be read there
    (`train=args.train`), or that the function reassigns, says nothing. The calls of a
    closure its factory returns (`main_loop = get_main_loop(...)`, then
    `main_loop(phase=...)`) count as its calls. A loop over the phases (`for phase in
    ["train", "val"]:`) is read the same way, one iteration at a time, with the
    `"val"` element as the related location (no fix: one statement serves both).

    A helper that runs the forward of the model it is handed (`evaluate(model,
    loader)`, in this file or another) is reported at its call, whatever the caller does
    with what it returns (`print(evaluate(model, loader))`: the accuracy is a number,
    the graph was built inside), with the forward inside a helper of this file as a
    related location; each call that hands it a model in eval mode is its own finding,
    and its fix wraps that call, never the forward another caller may train through.
    Elsewhere the finding also names, as GL012 does, where the result ends as numbers
    (the first two such reads beyond the reported statement, and the calls in other
    files a function hands it back to): why its history is never used.
    Its impact is its forward's, per batch when the helper walks a loader. So is a
    method of this file's class that runs a module its object holds (`agent.sample(state)`
    runs `self.network`, after `agent.network.eval()` or a method that switches it), when
    the caller does not differentiate what it hands back. A model kept in a dict or list under a constant key
    (`model["f_base_net"].eval()` then `model["f_base_net"](x)`, `nets[0]`,
    `self.nets["G"]`) is followed as an attribute is; under a key that is not a
    constant (`nets[name]`), or after the container is rebound, its mode is unknown and
    nothing is reported.

    Not flagged: forwards inside `torch.no_grad()` / `torch.inference_mode()` (blocks,
    decorators, a helper whose every caller in the module is guarded, or a function
    whose every call in the project's other files is, or sits in a function every call
    of which is: `model.sample(16)` in a plotting helper main.py calls only under
    `no_grad`), and forwards whose result flows into `backward()` or
    `torch.autograd.grad`, itself or through a helper of this file or another that
    differentiates what it is handed (eval mode used on purpose to freeze batch norm
    while fine-tuning, adversarial examples, saliency, a PINN's `gradients(u, x)`), and
    a model frozen as a whole (`model.requires_grad_(False)`) on inputs without
    history; a frozen backbone leaves the rest recording.

    A function that differentiates is judged forward by forward. A MAML evaluation
    that adapts on the support set with `autograd.grad` and then runs the query forward
    only to read an accuracy is flagged at the query forward (also inside a helper
    the evaluation calls with the eval'd model: the fix wraps that forward, never the
    call that must differentiate), when its result ends as numbers. Not flagged: a
    forward whose result a function that differentiates returns or yields (the query
    logits of an adaptation, differentiated by the caller's meta-loss), and, inside such
    a helper, one whose result is stored or handed to a function out of sight.

    ## Example
    ```python
    import torch
    from torch import nn

    model = nn.Linear(4, 2)
    model.eval()
    logits = model(torch.randn(8, 4))
    accuracy = (logits.argmax(1) == 0).float().mean().item()
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn

    model = nn.Linear(4, 2)
    model.eval()
    with torch.no_grad():
        logits = model(torch.randn(8, 4))
    accuracy = (logits.argmax(1) == 0).float().mean().item()
    ```

    ## Fix safety
    The fix wraps the statement in `with torch.no_grad():` (for a function picked by a
    flag, the evaluating call of it). It is unsafe: if the result is differentiated
    somewhere gradlint cannot see (returned to a caller that calls `backward()`), that
    gradient disappears.

    ## References
    - [Autograd mechanics: evaluation mode](https://pytorch.org/docs/stable/notes/autograd.html#evaluation-mode-nn-module-eval)
    - [`torch.inference_mode`](https://pytorch.org/docs/stable/generated/torch.autograd.grad_mode.inference_mode.html)
    """

    code = "GL004"
    name = "eval-without-no-grad"
    message = "`{model}` is in eval mode but this forward pass records autograd history that is never used{consequence}; run inference under `torch.no_grad()` or `torch.inference_mode()`"
    fix_title = "Wrap the inference in `with torch.no_grad():`"
    trigger_tokens = (".eval()", ".train(False", ".train(mode=False")
    # `with utils.eval_mode(agent):`: the switch is inside a manager of another file
    triggers_may_be_imported = True
    low_confidence = (
        "low when the model is put in eval mode at module level and the forward runs in a "
        "function that never switches it (a route handler, a callback): that the function "
        "runs after the module's code is assumed."
    )

    def leave_Module(self, original_node: cst.Module) -> None:
        facts = self.facts
        modes = facts.train_mode
        flagged = [s for s in modes.switches() if s.flag is not None]
        if not modes.has_eval_switch() and not flagged:
            return
        index = facts.index
        self._flag_checked: set[cst.Call] = set()
        for scope in {index.scope_of(s.anchor) for s in modes.switches() if s.to_eval}:
            models = modes.eval_models_in(scope)
            for call, model, at in self._forwards(scope, models):
                self._check(call, model, at)
            # a helper picked by a flag, handed the model this scope switched to eval
            for forward, param in facts.flag_paths.forwards_of_arguments(scope, models):
                self._check_flag_paths(forward, param)
        # `model.train(train)` in a shared epoch: the ways its callers take through it
        for switch in flagged:
            for call, model, at in self._forwards(index.scope_of(switch.anchor), {switch.model}):
                if at is call:
                    self._check_flag_paths(call, model)

    def _forwards(self, scope: cst.CSTNode, models: set[str]):
        """(call, model, point) for each forward of an eval'd model in scope: direct
        calls, calls of this file's helpers that run a forward of the model they are
        passed (inside a helper that differentiates, the forward itself), and forwards
        inside closures defined here (judged where they are called)."""
        facts = self.facts
        index = facts.index
        body = scope.body if type(scope) is cst.FunctionDef else scope
        for node in index.walk(body, into_functions=True):
            if type(node) is not cst.Call:
                continue
            model = facts.forwards.forward_target(node, models)
            inner = index.scope_of(node)
            if among_switched(model, models):
                if inner is scope:
                    yield node, model, node
                elif type(inner) is cst.FunctionDef and index.is_inside(inner, body):
                    if not facts.bindings.binds(inner, model):
                        callers = facts.grad_mode.callers_of(inner)
                        here = [site for site in callers if index.scope_of(site) is scope]
                        for site in here:
                            yield node, model, site
                        if not here and scope is index.module:
                            # an entry point (a route handler, a callback), or a helper
                            # of other functions, reading the module's model: judged
                            # where it runs, inside itself (a module-level eval switch
                            # counts there only when the file never switches it back)
                            yield node, model, node
                elif type(inner) is cst.Lambda and index.is_inside(inner, body):
                    # `policy = lambda x: model(x)` run by `evaluate(env, policy)`: judged
                    # at the calls here during which it runs
                    if not facts.bindings.binds(inner, model.split(".")[0]):
                        for site in facts.path_conditions.lambda_entries(inner, scope):
                            yield node, model, site
                continue
            if inner is not scope:
                continue
            for argument in facts.forwards.inference_arguments(node):
                passed = module_path(argument)
                if among_switched(passed, models):
                    yield node, passed, node
            # `agent.sample(state)` after `agent.network.eval()`: the method runs it
            for held in facts.forwards.inference_receivers(node):
                if among_switched(held, models):
                    yield node, held, node
            # a helper that differentiates (a MAML evaluation): its forwards whose result
            # it only reads as numbers, judged at the forward
            for argument, forward in facts.forwards.inference_forwards(node):
                passed = module_path(argument)
                if among_switched(passed, models):
                    yield forward, passed, node

    def _check(self, call: cst.Call, model: str, at: cst.Call) -> None:
        """`call` runs a forward of `model`; `at` is where that happens in the scope
        where the mode was switched (the call itself, or the call of the closure)."""
        facts = self.facts
        switch = facts.train_mode.eval_switch_at(model, at)
        if switch is None:
            if at is call:
                self._check_flag_paths(call, model)  # `if train: ... else: m.eval()`
            return
        if facts.mode_at(call) is not GradMode.RECORDING or facts.mode_at(at) is not (
            GradMode.RECORDING
        ):
            return
        if facts.frameworks.is_foreign(call):
            return
        if facts.forwards.records_nothing(call, model) or facts.forwards.is_frozen(
            model, at, whole=True
        ):
            return  # a parameterless or frozen module on inputs without history: no graph
        forwards = facts.forwards
        # A helper's own forwards were asked whether they keep their output
        # (inference_arguments); what the helper returns, an accuracy printed at once
        # (`print(evaluate(model, loader))`), says nothing of the graph inside it.
        helper = at is call and forwards.forward_target(call, {model}) != model
        inside = forwards.helper_forwards(call, model) if helper else []
        # another file's helper: its summary says whether its forward is in its loop
        looped_elsewhere = helper and not inside and forwards.external_forward_in_loop(call, model)
        if (
            not helper
            and not forwards.output_is_kept(call)
            and not forwards.output_is_kept(at)
            and (at is not call or not forwards.run_for_nothing(call, model))
            # read as numbers where it is made (`print(model(x).argmax(1))`): the graph
            # was recorded for that, as GL012 says of a model in training mode
            and (at is not call or facts.result_uses.numbers_only(call) is None)
        ):
            return
        if at is call and forwards.graph_is_used(call, model, in_eval_mode=True):
            self._check_flag_paths(call, model)  # the backward under `if train:`
            return
        if at is not call and forwards.is_differentiated(at, facts.index.scope_of(at)):
            return
        # `model(x).cpu().numpy()`: the same recording makes the read itself raise. Only
        # the model's own call is known to hand back a tensor (a method such as
        # `tile_predict` may return a numpy array made under `.data`), and only where
        # its forward is not seen to return a detached one (`.argmax(1)`, `.detach()`)
        uses = facts.result_uses.numbers_only(call)
        own_call = dotted_name(call.func) in (model, f"{model}.forward")
        forward = forwards.forward_of(call) if own_call else None
        hands_back_history = own_call and not (
            forward is not None and facts.values.returns_graph_free(forward)
        )
        raises = list(uses.numpy_raises) if uses is not None and hands_back_history else []
        reported = call if facts.index.scope_of(call) is not facts.index.scope_of(at) else at
        if reported is call and at is not call:
            if not facts.forwards.output_is_kept(call) or facts.forwards.graph_is_used(
                call, model, in_eval_mode=True
            ):
                return
        if facts.grad_mode.guarded_by_every_caller_elsewhere(reported):
            return  # every call of the function, in other files, is under no_grad
        # a lambda's body is no statement: the call here that runs it is what to wrap
        wrapped = at if type(facts.index.scope_of(call)) is cst.Lambda else reported
        statement = facts.index.statement_of(wrapped)
        cost = None
        if inside:  # a helper's batch loop makes its forward run per batch, whatever its call
            cost = CostSource.in_helper(reported, inside[0])
        elif looped_elsewhere:
            cost = CostSource.in_loop_elsewhere()
        # why the history is never used, unless that is inside a helper, whose returned
        # value says nothing of the graph inside it
        evidence: list[tuple[cst.CSTNode, str] | Related] = []
        if uses is not None and not raises and not helper:
            evidence += number_reads(self.context, uses, statement)
            evidence += numbers_elsewhere(uses, 2)
        self.report(
            reported,
            self.message_for(model=model, consequence=_RAISES if raises else ""),
            fix=wrap_inference_in_no_grad(
                self.context, statement, self.fix_title, self.fix_applicability
            ),
            related=[
                *self._related(switch, model, call, at, reported),
                *((node, "`.numpy()` raises here") for node in raises[:2]),
                # where the graph is built: the helper's forward (issue 19)
                *(
                    (
                        forward,
                        f"the forward of `{param}` inside the helper, where the graph is built",
                    )
                    for param, forward in (
                        forwards.helper_inference_forwards(call, model) if inside else ()
                    )
                ),
                *evidence,
            ],
            # A module-level switch seen from a function that never switches the model
            # (a route handler, a callback) assumes the function runs after the module.
            confidence=Confidence.LOW
            if facts.index.scope_of(switch.anchor) is not facts.index.scope_of(at)
            else Confidence.HIGH,
            cost=cost,
            group=Group.CRASH if raises else None,
        )

    def _check_flag_paths(self, call: cst.Call, model: str) -> None:
        """One function for both phases, picked by a flag (`run_epoch(train=False)`):
        reported at the forward when a call of its function, with autograd on there,
        gives flags under which the model is put in eval mode and no differentiation of
        the result runs, or an iteration of a loop over phases does. The fix wraps that
        call, not the forward the training call needs (a loop's iteration has none)."""
        facts = self.facts
        if call in self._flag_checked:
            return
        self._flag_checked.add(call)
        paths = [p for p in facts.flag_paths.unused_paths(call, model) if p.switch is not None]
        if not paths or not facts.forwards.output_is_kept(call):
            return
        if facts.frameworks.is_foreign(call) or facts.forwards.records_nothing(call, model):
            return
        if facts.forwards.graph_used_beyond_its_result(call, model, in_eval_mode=True):
            return
        first = paths[0]
        assert first.switch is not None
        fix = None
        statement = facts.index.statement_of(first.call) if first.call is not None else None
        if isinstance(statement, cst.BaseSmallStatement):
            fix = wrap_inference_in_no_grad(
                self.context, statement, self.fix_title, self.fix_applicability
            )
        related: list[tuple[cst.CSTNode, str]] = [
            (first.switch.call, f"`{model}` is put in eval mode here")
        ]
        related += [(p.site, p.label) for p in paths]
        # the evaluating calls pay the graph, not every call of the function
        sites = [p.site for p in paths]
        self.report(
            call,
            self.message_for(model=model, consequence=""),
            fix=fix,
            related=related,
            cost=CostSource.paid_by(sites),
        )

    def _related(self, switch: ModeSwitch, model: str, call, at, reported):
        """Where the model was put in eval mode (through a helper, maybe in another
        file), and the other end of a closure: where it runs, or the forward in it."""
        if switch.inner is None and switch.external is None:
            yield switch.call, f"`{model}` is put in eval mode here"
        else:
            yield switch.call, f"`{model}` comes back in eval mode from this call"
        if switch.inner is not None:
            yield switch.inner, "put in eval mode here, inside the helper"
        caller = switch.entered_from
        if caller is not None:
            yield at_call_elsewhere(
                "called here after that switch, as at every call of this method in the project",
                caller,
            )
        if switch.external is not None:
            yield elsewhere("put in eval mode here, inside the helper", switch.external)
        if at is not call:
            if reported is at:
                yield call, f"the forward of `{model}` inside the function"
            else:
                # the finding is on the forward, once: every call here that runs it in
                # eval mode (a notebook's per-epoch sample grid and its last cell's)
                for site in self._evaluating_calls(call, model, at):
                    yield site, f"called here, while `{model}` is in eval mode"

    def _evaluating_calls(self, call: cst.Call, model: str, at: cst.Call) -> list[cst.Call]:
        """The calls, in the scope of `at`, of the function holding `call` that run it
        while `model` is in eval mode and autograd records; `at` among them."""
        facts = self.facts
        index = facts.index
        scope = index.scope_of(at)
        inner = index.scope_of(call)
        sites = [
            site
            for site in facts.grad_mode.callers_of(inner)
            if site is at
            or (
                type(site) is cst.Call
                and index.scope_of(site) is scope
                and facts.train_mode.eval_switch_at(model, site) is not None
                and facts.mode_at(site) is GradMode.RECORDING
            )
        ]
        return sites if at in sites else [at, *sites]
