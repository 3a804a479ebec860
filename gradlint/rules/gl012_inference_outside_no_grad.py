from __future__ import annotations

import re

import libcst as cst

from gradlint.analysis.grad_mode import GradMode
from gradlint.analysis.impact import CostSource
from gradlint.analysis.index import dotted_name, module_path
from gradlint.analysis.result_uses import NumberUses
from gradlint.analysis.torch_api import (
    COMMON_TENSOR_METHODS,
    GRADLESS_RESULTS,
    LIBRARY_ROOTS,
    MODULE_API,
    MODULE_RUNNING_FUNCTIONS,
    NEVER_FORWARD_BUILTINS,
    OPTIMIZER_METHODS,
    PYTHON_OBJECT_METHODS,
    SUMMARY_WRITER_METHODS,
    TRACKER_LOGGING_FUNCTIONS,
)
from gradlint.analysis.values import is_graph_free
from gradlint.diagnostics import Group, Related
from gradlint.fix_builders import wrap_inference_in_no_grad
from gradlint.rules.base import Rule
from gradlint.rules.explain import number_reads, numbers_elsewhere

_REBINDS = re.compile(
    r"\b(" + "|".join(sorted(NEVER_FORWARD_BUILTINS)) + r")\s*(?:=[^=]|\.parameters)"
)
_ASSIGNED_ATTRIBUTES = re.compile(r"\.(\w+)\s*=[^=]")
# Methods of tensors, modules, optimizers and plain objects: never a module's forward.
# (Not `backward` or in-place-named methods: a flow's `net.backward(y)` is its inverse
# pass, and `flow.sample_(n)` runs its layers.)
_PLAIN_METHODS = PYTHON_OBJECT_METHODS | COMMON_TENSOR_METHODS | MODULE_API | OPTIMIZER_METHODS

_NUMBERS = "its result is only read as numbers"
_UNUSED = "its result is never used"
_KEPT = (
    "its result is only read as numbers, and every call's graph stays alive in `{kept}` "
    "until the list is emptied"
)
_HANDED_BACK = "what it hands back here is only read as numbers or detached"
_RAISES = (
    "its result is only read as numbers, and `.numpy()` on it raises \"Can't call "
    'numpy() on Tensor that requires grad"'
)


class InferenceOutsideNoGrad(Rule):
    """
    ## What it does
    Flags a forward pass of a model that holds parameters (or a call of a function that
    computes from parameters) run while autograd records, in training mode, whose result
    is only ever read as numbers: `.item()`, `.tolist()`, `float()`, an `argmax` that
    picks an action or a class, the indices of `max(dim)`, a comparison, `.numpy()` (or
    numpy, or a matplotlib plot), an image written with torchvision's `save_image` /
    `make_grid` (which run under
    `no_grad` themselves), a value logged by TensorBoard's `SummaryWriter`
    (`add_images`, `add_histogram`, `add_scalar`, which detach it). Each element
    counts when every one is read so (`[x.item() for x in out]`, `map(lambda x:
    x.detach(), out)`). A model handed to an
    object that asks its parameters (`self.model = model`, then
    `next(self.model.parameters())`) runs its forward through any method or submodule
    outside nn.Module's API given a tensor (`self.model.decoder(z)`), unless a class of
    the project defines that method without running its layers.

    A result kept on the instance (`self.q_history.append(q.max())`, `self.last_q = q`)
    is read where the class's own methods read that attribute again, when nothing else
    can: no other file of the project has the name, no property, base class outside
    torch or `getattr` reaches it, and a list is one the class makes empty itself. Such
    a list holds every call's graph until the class empties it: memory that grows with
    the run (group `leak`), not the bounded waste of one call.

    This is a warning-level rule: the cost is time and memory, not wrong results (except
    for `.numpy()`, which raises).

    ## Why is this bad?
    While grad mode is on, every operation on a parameter records a node and saves the
    tensors its backward would need. A result that only becomes a number (an accuracy
    count, a greedy action, a numerical integral of a learned density on a grid, points
    for a plot) is never differentiated, so all of that is built and thrown away on every
    call: the forward runs slower and holds one batch of activations more than it needs.
    `.numpy()` (and `np.asarray`, or a matplotlib plot of it) on such a result does not
    even run: `RuntimeError: Can't call numpy() on Tensor that requires grad`.

    The model is in training mode here. A model in eval mode (`model.eval()`) without
    `no_grad` is reported by GL004 instead, never by both; another model's forward in
    the same statement or loop as the eval'd one's (a loss module's after `model(x)`)
    is left to GL004's fix too, but one elsewhere in the scope is not (a notebook's
    generator sampled cells after a classifier's `eval()`).

    A function that serves both phases, the backward under a flag (`if train:
    loss.backward()`), is judged per call of it in the file, with the flag each call
    gives (a literal or a constant, passed or its default, or a flag of a wrapper of
    the file passed on, `process(x, do_train=do_train)`, then each call of the wrapper
    that gives it one): a call that runs no
    backward, keeps the model in training mode and is not under `no_grad`, whose
    result is then only read as numbers, is reported at the forward with that call as
    a related location, and the fix wraps that call. So is an iteration of a loop over
    the phases (`for phase in ["train", "val"]:`, the backward under `if phase ==
    "train":`). A flag whose value cannot be read there (`train=args.train`) says
    nothing.

    Not flagged, because the graph is, or may be, used: a result that reaches
    `backward()` or `torch.autograd.grad` (a loss), an action whose log-probability is
    kept for a later backward (REINFORCE, PPO rollouts that store it: the result goes
    into `torch.distributions`; one whose distribution is only sampled, or that is only
    ranked or compared, `torch.argsort(pred)`, `pred.eq(y)`, is read: what those give
    back has no history), and any result that escapes where gradlint cannot
    follow it (returned, yielded, stored in an attribute or a container, passed to a
    function of unknown effect, read by a nested function). A helper that only makes
    numbers of its argument counts as a number: one of this file's functions is followed
    into its body, and one of the project's other files (`to_np(t)`, imported or brought
    in by `from .utils import *`, with guards such as `if t is None: return None`) is
    read off its summary. A single value a function returns is followed into its callers
    when all of them are in sight (a nested function, a module-level function or a
    method, with its calls in the project's other files read by the caller search):
    `def sample(G, z): return G(z)` whose every caller only saves the image is reported
    at `G(z)`, with one caller in another file as a related location. Every call of a
    method's name counts there, on objects of unknown class too; a method called beside
    its class (`self.actor.act(s).detach()`) is reported at that call instead. When the
    callers disagree (PPO's `V, _ = self.evaluate(obs, acts)` only detaches what the
    helper hands back, while the update loop's call of the same helper trains through
    it), the call that throws the graph away is reported, with the forward inside as a
    related location; not when the helper puts the model in eval mode (GL004's) or
    consumes the output itself. A helper of another file that runs the forward of a
    model it is handed (a loss the training code differentiates: `error =
    compute_vae_error(encoder, decoder, x, a)`, then only `error.ndim` read) is reported
    at the call the same way, from the project summary of its forwards. A model
    may be a callable out of sight handed parameters known by their use (`rnn(X, state,
    params)` where the training code clips and steps each `params` element's `.grad`),
    when a tensor method is read off its result (`.argmax(dim=1).item()`). A model
    may come from the project's other files: a parameter that every caller there fills
    with a module showing its parameters (`generate_image(aG, z)` after
    `Adam(aG.parameters())`), or a method of an imported module class that runs its
    layers (`self.model.sample(144, 0)` with `sample` calling `self.decoder(z)`, or
    calling `self.decode(z)` that does), or a class whose weights are bare
    `nn.Parameter`s. A model may be built by another library: `timm.create_model`,
    `torch.hub.load`, or `from_pretrained` of a transformers, diffusers,
    efficientnet_pytorch or peft model class (a tokenizer, config, processor, scheduler
    or pipeline is no torch module), and so is what `torch.compile`,
    `torch.jit.script`/`trace`, `copy.deepcopy` or `spectral_norm`/`weight_norm` hand
    back of a module with weights, and each module a loop or comprehension walks in a
    list written out (`[m(x) for m in ensemble]`), or picked from it by any key
    (`self.actors[i](s)` of `self.actors = [Actor() for _ in range(n)]`), and a lambda
    bound to a name that wraps one (`model = lambda x, y: x * y * net(x, y)`). So is the model a loader of this file
    hands back (`model = Net(); model.load_state_dict(...); return model.to(device)`), one
    unpacked from a factory's tuple (`G, D = build_models()`), and one a wrapper is
    handed when built (`self.policy = policy` in `__init__`, and every construction,
    `Agent(Net())` here or `Agent(net)` in the project's other files, passes a model
    with weights). A helper file that runs a model its callers hand in is read even if
    it never names `torch.nn`, and a helper of another file that only computes with
    torch from the output (`distance(net(x), prototypes)`) is followed into what it
    returns. An ODE or SDE solver handed a module
    (`odeint(func, y0, t)`, torchdiffeq's, torchsde's, torchcde's) runs its forward. A
    function of this file that computes from weights built requiring grad (d2l's `net(X)`
    of `W = torch.normal(..., requires_grad=True)`) counts as a model also where its
    result goes to a helper that makes the number (`accuracy(net(X), y)`). A result
    unpacked into a method of its own model (`loss =
    model.loss_function(*result)`) is followed into what that method returns; a result
    bound to a name the function never reads, in a function that differentiates
    nothing, is thrown away too (a test's `y = self.model.sample(144, 0)`). Not flagged
    either: calls
    under `torch.no_grad()` or `torch.inference_mode()` (blocks, also entered through a
    name bound to one, `ctx = torch.no_grad()` then `with ctx:`; decorators, a helper
    whose every caller in the module disables grad, or a function whose every call in
    the project's other files does), a model whose parameters are
    switched off with `requires_grad_(False)` (or one by one in a loop, also over
    several models' parameters walked in turn, `itertools.chain(G.parameters(),
    D.parameters())`, also by the loader of this file that hands it back, or by the
    `__init__` of the class that holds it, in any file of the project: RND's
    `self.rnd.target(obs)` when `RNDModel.__init__` freezes `self.target` and no method
    switches it back on; read in order in the forward's own function: a GAN's critic
    unfrozen again for its own step records), inputs that require grad (saliency, adversarial examples;
    but not when the result ends as numbers on every path, which takes no gradient to
    them: a PINN's plot on collocation points made to require grad), and a model
    whose own forward differentiates.

    ## Example
    ```python
    import torch
    from torch import nn

    policy = nn.Linear(4, 2)
    obs = torch.randn(1, 4)
    action = policy(obs).argmax().item()
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn

    policy = nn.Linear(4, 2)
    obs = torch.randn(1, 4)
    with torch.no_grad():
        action = policy(obs).argmax().item()
    ```

    ## Fix safety
    The fix wraps the statement that runs the forward in `with torch.no_grad():` (for a
    function picked by a flag, the evaluating call of it; none for a loop's iteration,
    nor for a helper's call whose statement also runs a forward that is trained, as
    `mse(self.critic(s, a), self.td_target(r, s2).detach())`).
    It is unsafe: the statement may compute something else that should keep its graph,
    and a helper may be called from code that differentiates a result gradlint saw
    only as a number.

    ## On real code
    Stable. On the development corpus (29 public repositories, notebooks included;
    `bench/real-code/`) it reports 41 findings, all judged true (precision 1.00): DQN
    evaluation steps and epsilon-greedy `act()` forwards (18 of them in RL-Adventure's
    notebooks), DeepRL's rollout and evaluation steps whose actions go through `to_np()`
    in another file, PINN and KAN plots and L2 monitors (11 in pykan, added as code the
    analysis was not tuned on), a classifier's accuracy, a discriminator whose losses
    are only printed. 4 correct look-alikes stay silent; 3 of the 4 recorded misses are
    caught (the fourth hands the result to a loss function the caller may supply).

    ## References
    - [Autograd mechanics: locally disabling gradient computation](https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation)
    - [`torch.no_grad`](https://pytorch.org/docs/stable/generated/torch.no_grad.html)
    - [`torch.inference_mode`](https://pytorch.org/docs/stable/generated/torch.autograd.grad_mode.inference_mode.html)
    """

    code = "GL012"
    name = "inference-outside-no-grad"
    message = (
        "{what} records an autograd graph that is thrown away: {consequence}; run it "
        "under `torch.no_grad()`"
    )
    fix_title = "Wrap the statement in `with torch.no_grad():`"
    # Every result the rule can call "read as numbers" passes through one of these.
    trigger_tokens = (
        ".item(",
        ".tolist(",
        ".numpy(",
        "float(",
        "argmax",
        "argmin",
        ".max(",
        ".min(",
        # the graph dropped on purpose, or the value only read: `.data`, `print(y.size())`
        ".detach(",
        ".data",
        ".size(",
        ".shape",
        "print(",
        # compared in a test (`assert d < 1e-4`), formatted into its message
        "assert",
        ".format(",
        # plotted: matplotlib makes an array of it, which raises on a value with grad
        "matplotlib",
        # written out as an image, under torchvision's own no_grad
        "save_image(",
        "make_grid(",
        # tested for a condition: a bool tensor has no history (`torch.isnan(out).any()`)
        ".any(",
        ".all(",
        "isnan(",
        "isinf(",
        "isfinite(",
        # logged by TensorBoard's SummaryWriter, which detaches it, or by a tracker
        *(f".{method}" for method in sorted(SUMMARY_WRITER_METHODS)),
        *(f"{name}(" for name in sorted(TRACKER_LOGGING_FUNCTIONS)),
        # ranked, compared or counted: the result has no history (`torch.argsort(pred)`)
        *(f".{method}(" for method in sorted(GRADLESS_RESULTS)),
        *(f"torch.{method}(" for method in sorted(GRADLESS_RESULTS)),
    )

    # Evidence of a model with parameters or a tensor that requires grad: a torch.nn
    # layer or a Module subclass, parameters asked for, weights loaded or saved, a leaf
    # made to require grad.
    # Or a network another library builds (`timm.create_model`, `from_pretrained`).
    also_needs_tokens = (
        "nn.",
        "torch.nn",
        "Module",
        "parameters(",
        "Parameter",
        "requires_grad",
        "state_dict",  # weights loaded into it, or saved from it
        "create_model(",
        "from_pretrained(",
        "hub.load(",
    )

    triggers_may_be_imported = True  # `to_np(action)`, with `to_np` in `utils.py`
    models_may_be_imported = True  # `VAE()(x)`, with `class VAE(nn.Module)` in `models/`
    models_may_be_handed_in = True  # `def show(model, x): model(x)`, called from train.py

    def leave_Module(self, original_node: cst.Module) -> None:
        source = self.context.source
        # A file with the tokens runs, whether or not it shows a model itself (one may be
        # a class of an imported module, which forwards.has_parameters asks the project
        # about); one without them only when a helper it imports makes the numbers.
        if not self.has_trigger_tokens(source) and not (
            self.needs_tokens_only(source)
            and (
                self.facts.result_uses.calls_imported_number_helpers()
                or self.facts.result_uses.returns_to_other_files()
            )
        ):
            return  # parsed for another rule: no model here to run
        facts = self.facts
        forwards = facts.forwards
        index = facts.index
        reported: set[cst.CSTNode] = set()
        # builtins the file binds to something else (or asks the parameters of)
        rebound = set(_REBINDS.findall(self.context.source))
        assigned = set(_ASSIGNED_ATTRIBUTES.findall(self.context.source))  # `x.name = ...`
        for call in index.calls:
            # cheapest first: most calls are not forwards whose result ends as numbers
            # `self.actors[i](s)`: an element of a container of modules, named as written
            name = dotted_name(call.func) or _element_call(call, self.context.module)
            if name is None or self._library_call(call, name, rebound):
                continue
            if self._plain_call(call, name, assigned):
                continue
            scope = index.scope_of(call)
            direct = facts.result_uses.scope_may_make_numbers(scope, through_helpers=False)
            if not direct and not facts.result_uses.scope_may_make_numbers(scope):
                if not facts.result_uses.may_return_to_other_files(scope):
                    continue
            statement = index.statement_of(call)
            if statement in reported:
                continue
            model = model_forward = forwards.model_forward(call)
            handed = False
            what = f"This forward of `{model}`"
            if model is None:
                model = forwards.parameter_function(call)
                handed = model is None
                if handed:
                    if not direct:
                        continue  # through a helper: a callable out of sight is not asked about
                    model = forwards.handed_parameters(call)
                if model is None:
                    continue
                if self._reported_inside(call, reported):
                    continue
                if any(
                    facts.train_mode.eval_switch_at(inner_model, inner) is not None
                    for inner in forwards.parameter_function_forwards(call)
                    if (inner_model := forwards.model_forward(inner)) is not None
                ):
                    continue  # the model inside is in eval mode: GL004's finding, there
                what = f"This call of `{model}`, which computes from parameters,"
            # grad mode after the model: it asks about every caller of the function
            if not self._records(call):
                continue
            uses = facts.result_uses.numbers_only(call)
            path = None  # a call or a loop's iteration whose flags skip the backward
            if uses is None:
                uses, path = self._on_flag_path(call, model)
            if uses is None or facts.frameworks.is_foreign(call):
                continue
            if model is not None and handed and not _read_as_a_tensor(uses):
                continue  # out of sight, it may return a plain number made of them
            if uses.only_through_numpy and dotted_name(call.func) not in (
                model,
                f"{model}.forward",
            ):
                # `np.concatenate([sbs.predict(x)])`: a method may hand back an array
                # already (made under `.detach()` inside); only the model's own call is
                # known to hand back a tensor
                continue
            if is_graph_free(facts.values.of_expr(call)):
                # `policy.get_action(s)` whose body returns `action.detach().numpy()`:
                # the graph is thrown away inside, where its own forward is asked about
                continue
            if not self._not_in_eval_mode(call, model) or forwards.is_frozen(model, call):
                continue
            if path is None and forwards.graph_is_used(call, model, ends_as_numbers=True):
                continue
            if facts.grad_mode.guarded_by_every_caller_elsewhere(call):
                continue  # every call of the function, in other files, is under no_grad
            reported.add(statement)  # one report per statement: `critic(actor(s))`
            consequence = _RAISES if uses.numpy_raises else _NUMBERS
            if not (uses.numbers or uses.reads or uses.detaches or uses.elsewhere):
                consequence = _UNUSED
            # kept in a list of the instance: every call's graph stays alive in it
            kept = dotted_name(uses.kept[0]) if uses.kept and not uses.numpy_raises else None
            if kept is not None:
                consequence = _KEPT.format(kept=kept)
            related: list[tuple[cst.CSTNode, str] | Related]
            if uses.numpy_raises:
                related = [(node, "`.numpy()` raises here") for node in uses.numpy_raises[:2]]
            elif consequence is _UNUSED:
                related = [(node, "bound here and never read") for node in uses.unused[:2]]
            else:
                related = list(number_reads(self.context, uses))
            if not handed and model_forward is None:
                # the helper's forward, where the graph it hands back is built
                related += [
                    (forward, "the forward inside the helper, where the graph is built")
                    for forward in forwards.parameter_function_forwards(call)[:1]
                ]
            related += numbers_elsewhere(uses, 1)  # the function's callers in other files
            if kept is not None:
                related.append((uses.kept[0], "kept here, with its graph, across calls"))
            fix_at = statement
            if path is not None:  # wrap that call: the training call needs the graph
                related.append((path.site, path.label))
                fix_at = index.statement_of(path.call) if path.call is not None else None
            elif type(scope) is cst.Lambda:
                # a lambda's body is no statement: wrap the one call that runs it where
                # it is made (`rollout(env, act)`), if one
                entries = facts.path_conditions.lambda_entries(scope, index.scope_of(scope))
                fix_at = index.statement_of(entries[0]) if len(entries) == 1 else None
                related += [(entry, "the lambda runs during this call") for entry in entries[:2]]
            fix = None
            if (path is None and fix_at is statement) or isinstance(fix_at, cst.BaseSmallStatement):
                fix = wrap_inference_in_no_grad(
                    self.context, fix_at, self.fix_title, self.fix_applicability
                )
            self.report(
                call,
                self.message_for(what=what, consequence=consequence),
                fix=fix,
                related=related,
                group=Group.CRASH
                if uses.numpy_raises
                else (Group.LEAK if kept is not None else None),
                # on a flag path the evaluating call pays the graph, not every call
                cost=CostSource.paid_by([path.site]) if path is not None else None,
            )
        self._helper_calls(reported)

    def _reported_inside(self, call: cst.Call, reported: set[cst.CSTNode]) -> bool:
        """Is a forward inside the function the call runs already reported? Its result,
        followed out to this call, is that finding, not another one here."""
        helper = self.facts.summaries.resolve(call)
        return helper is not None and any(self.facts.index.is_inside(r, helper) for r in reported)

    def _helper_calls(self, reported: set[cst.CSTNode]) -> None:
        """A call of this file's function (or of another file's, from its summary) that
        runs a model's forward with its output kept (`V, _ = self.evaluate(obs, acts)`
        runs `self.critic`), where this caller
        only makes numbers of what it hands back or detaches it, while another caller
        trains through it (so the forward inside is no finding of its own): the graph
        is built for nothing at this call, which is what to wrap."""
        facts = self.facts
        forwards = facts.forwards
        index = facts.index
        for call in index.calls:
            statement = index.statement_of(call)
            if statement in reported or (dotted_name(call.func) or "").endswith(".forward"):
                continue  # a model's own forward is the pass above's
            # cheapest first: most calls run no helper that runs a forward
            models = list(forwards.inference_receivers(call))
            # only an argument that names something can be a model handed over
            if any(module_path(arg.value) is not None for arg in call.args):
                for argument in forwards.inference_arguments(call):
                    passed = module_path(argument)
                    if passed is not None and passed not in models:
                        models.append(passed)
            if not models or not self._records(call) or forwards.model_forward(call):
                continue
            helper = facts.summaries.resolve(call)
            if helper is not None and facts.result_uses.returns_to_a_decorator(helper):
                continue  # the decorator's wrapper gets the result (and may train on it)
            if self._reported_inside(call, reported):
                continue
            # only what is known to hold weights (a handed `env` or `key` is not)
            models = [m for m in models if forwards.has_parameters(cst.parse_expression(m), call)]
            if not models:
                continue
            # the module itself called inside (`self.critic(obs)`), not a method of it
            # that may run under its own no_grad (`agent.sample_actions(s)`)
            inside = [
                (param, f)
                for model in models
                for param, f in forwards.helper_inference_forwards(call, model)
                if (dotted_name(f.func) or "").removesuffix(".forward") == param
            ]
            if not inside:
                # another file's helper (`compute_vae_error(encoder, decoder, x, a)`),
                # trained through elsewhere: its forwards are summarised, not in sight
                if not forwards.external_inference_of(call, models):
                    continue
            elif any(index.statement_of(f) in reported for _, f in inside):
                continue  # the forward inside is the finding, at every call
            elif any(facts.train_mode.eval_switch_at(param, f) for param, f in inside):
                continue  # in eval mode inside the helper: GL004's finding, there
            elif not all(forwards.returns_its_result(f) for _, f in inside):
                continue  # consumed inside (an out-of-sight Hessian): not the caller's
            uses = facts.result_uses.numbers_only(call, detached_ends=True)
            if uses is None:
                continue
            if any(
                not self._not_in_eval_mode(call, model)
                or forwards.is_frozen(model, call)
                or forwards.graph_is_used(call, model)
                for model in models
            ):
                continue
            if facts.grad_mode.guarded_by_every_caller_elsewhere(call):
                continue
            reported.add(statement)
            name = dotted_name(call.func) or "the helper"
            # `loss = mse(self.critic(s, a), self.td_target(r, s2).detach())`: wrapping the
            # statement would stop the critic's own forward recording, so no fix is offered
            trains_beside = any(
                type(other) is cst.Call
                and other is not call
                and not index.is_inside(other, call)
                and forwards.model_forward(other) is not None
                for other in index.walk(statement)
            )
            self.report(
                call,
                self.message_for(
                    what=f"This call of `{name}`, which runs the forward of `{models[0]}`,",
                    consequence=_HANDED_BACK,
                ),
                fix=None
                if trains_beside
                else wrap_inference_in_no_grad(
                    self.context, statement, self.fix_title, self.fix_applicability
                ),
                related=[(inside[0][1], "the forward inside, which another call trains through")]
                if inside
                else [],
            )

    def _on_flag_path(self, call: cst.Call, model: str):
        """(how the result ends as numbers, the way through the function it does so on)
        when a call of the function, or an iteration of a loop over phases, fixes flags
        under which the model is in training mode and no differentiation of the result
        runs (`run_epoch(train=False)` without `model.eval()`); (None, None) otherwise.
        A path in eval mode is GL004's, and so then is the forward."""
        facts = self.facts
        paths = facts.flag_paths.unused_paths(call, model)
        if any(p.switch is not None for p in paths):
            return None, None
        if paths and facts.forwards.graph_used_beyond_its_result(call, model):
            return None, None
        for path in paths:
            uses = facts.result_uses.numbers_only(call, facts.flag_paths.runs_on(path))
            if uses is not None:
                return uses, path
        return None, None

    def _library_call(self, call: cst.Call, name: str, rebound: set[str]) -> bool:
        """A call of an imported library (`torch.cat`, `np.mean`) or of a builtin the file
        never rebinds (`len`, `print`): never a model's forward nor this file's function
        of parameters, and most calls are one."""
        head = name.partition(".")[0]
        if head in NEVER_FORWARD_BUILTINS:
            return head not in rebound
        resolved = self.facts.index.import_alias_at(call, head)  # real imports only
        if resolved is None or resolved.partition(".")[0] not in LIBRARY_ROOTS:
            return False
        # `nn.parallel.data_parallel(net, inputs)`: torch's own call of the module handed
        return self.facts.index.qualified_name(call.func) not in MODULE_RUNNING_FUNCTIONS

    def _plain_call(self, call: cst.Call, name: str, assigned: set[str]) -> bool:
        """Cheap and sure: a call that cannot be a model's forward or this file's function
        of parameters. A method every tensor, container or logger has (`x.view`,
        `log.info`), unless the file makes an attribute of that name (`self.view = ...`)
        or names it a forward; an imported class or function whose parameters are never
        asked for (`Path(p)`), since only this file's functions are followed."""
        func = call.func
        if type(func) is cst.Attribute:
            attr = func.attr.value
            return (
                attr in _PLAIN_METHODS
                and attr not in assigned
                and attr not in self.facts.forwards.forward_methods()
            )
        if self.facts.index.import_alias_at(call, name) is not None:
            if self.facts.index.qualified_name(func) in MODULE_RUNNING_FUNCTIONS:
                return False  # `odeint(func, y0, t)`: runs the module it is handed
            return f"{name}.parameters" not in self.context.source
        return False

    def _records(self, call: cst.Call) -> bool:
        facts = self.facts
        if facts.mode_at(call) is not GradMode.RECORDING:
            return False
        # a lambda runs where it is called, or handed to: its grad mode is that of those
        # calls (mode_at), and out of sight when they are
        scope = facts.index.scope_of(call)
        return type(scope) is not cst.Lambda or bool(facts.path_conditions.call_sites(scope))

    def _not_in_eval_mode(self, call: cst.Call, model: str) -> bool:
        """The model is not known to be in eval mode here, nor in any caller of this
        function that passes the model in (an eval'd model is GL004's finding). A mode
        that may be either (switched in a sibling method, or on one branch) still
        records a graph nobody uses: reported here, since GL004 reports only a forward
        known to run in eval mode."""
        facts = self.facts
        modes = facts.train_mode
        if modes.eval_switch_at(model, call) is not None:
            return False
        scope = facts.index.scope_of(call)
        evaluated = {m for m in modes.eval_models_in(scope) if modes.eval_switch_at(m, call)}
        if evaluated and facts.forwards.forward_target(call, evaluated) in evaluated:
            return False  # a layer of a module in eval mode (`net.heads[1](x)`): GL004's
        if evaluated and self._part_of_an_evaluation(call, evaluated):
            # an evaluation block (`model.eval()` then a loss module's forward): GL004
            # reports its forwards, and one fix covers both
            return False
        head = model.split(".")[0]
        if type(scope) is not cst.FunctionDef:
            return True
        if head == "self":
            # a method's forward, run for its callers: when each of them put the object
            # in eval mode first (`net.tile_predict(x)` after `net.eval()`), an
            # evaluation of it, GL004's; a caller in training mode makes it GL012's
            callers = facts.summaries.callees.callers_of(scope)
            return not callers or not all(
                type(caller.func) is cst.Attribute
                and (receiver := module_path(caller.func.value)) not in (None, "self")
                and modes.eval_switch_at(receiver, caller) is not None
                for caller in callers
            )
        summary = facts.summaries.of(scope)
        if head not in summary.params:
            return True
        for argument in facts.caller_arguments.here(scope, head):
            if type(argument.passed) is cst.Call:
                continue  # a module built for the call is in training mode
            passed = argument.path
            if passed is None or modes.eval_switch_at(passed, argument.site) is not None:
                return False
        return True

    def _part_of_an_evaluation(self, call: cst.Call, evaluated: set[str]) -> bool:
        """Does the statement of the call, or the innermost loop around it, also run a
        forward of a model in eval mode there (`out = model(x)`, then
        `perceptual(out, y)`)? Then the call is part of that evaluation. A model put in
        eval mode elsewhere in the scope (a notebook's earlier cell) says nothing about
        the forward of another one."""
        index = self.facts.index
        forwards = self.facts.forwards
        region = next(index.enclosing_loops(call), None) or index.statement_of(call)
        for other in index.of_types_in(region, cst.Call):
            if other is call:
                continue
            model = forwards.model_forward(other)
            if model in evaluated and self.facts.train_mode.eval_switch_at(model, other):
                return True
        return False


def _read_as_a_tensor(uses: NumberUses) -> bool:
    """Is the value shown to be a tensor where it ends as numbers: a method or an
    attribute read off it (`.item()`, `.argmax(dim=1)`, `.detach()`, `.data`), which a
    Python number would not have?"""
    return any(
        type(node) is cst.Attribute or (type(node) is cst.Call and type(node.func) is cst.Attribute)
        for node in (*uses.numbers, *uses.numpy_raises, *uses.detaches)
    )


def _element_call(call: cst.Call, module: cst.Module) -> str | None:
    """The callee of a call of a container's element (`nets[k](x)`, `nets[k].forward(x)`)
    as written; None for any other call that is no dotted name."""
    func = call.func
    if type(func) is cst.Attribute and func.attr.value == "forward":
        func = func.value
    return module.code_for_node(call.func) if type(func) is cst.Subscript else None
