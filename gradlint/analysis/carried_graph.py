"""What a loop carries *with its autograd history* from one iteration to the next.

A carried variable (loops.py) keeps the previous iteration's graph when the statements
that rebind it build the new value from the old one through tensor operations and no
path detaches it. Whether that graph reaches something trainable is a second question:
`x = x + torch.randn(3)` carries nothing autograd records, `out, h = rnn(x, h)` with a
module that holds parameters carries a graph of the module's activations, one more step
of it every iteration.

The answers here are shared by the rule about loops that backpropagate every iteration
(GL001 reads the same shape of evidence) and the rule about loops that never do (GL015).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import libcst as cst

from gradlint.analysis.arguments import passes_receiver, shape_of
from gradlint.analysis.bindings import BindingKind
from gradlint.analysis.dataflow import Binding, DataFlow
from gradlint.analysis.forwards import ForwardAnalysis
from gradlint.analysis.frameworks import FrameworkAnalysis
from gradlint.analysis.grad_mode import GradMode, GradModeAnalysis
from gradlint.analysis.index import FileIndex, dotted_name, positional_arguments, target_names
from gradlint.analysis.loops import LoopAnalysis, LoopFacts, LoopNode
from gradlint.analysis.summaries import FunctionSummaries
from gradlint.analysis.torch_api import (
    COMMON_TENSOR_METHODS,
    DETACHING_HELPER_WORDS,
    DETACHING_INPLACE_METHODS,
    DETACHING_METHODS,
    DIFFERENTIABLE_METHODS,
    GRADLESS_RESULTS,
    PARAMETER_HOLDING_METHODS,
    SLICING_FUNCTIONS,
    SLICING_METHODS,
    STEP_GRID_FACTORIES,
)
from gradlint.analysis.values import Kind, ValueAnalysis, is_graph_free, may_carry_graph

# Helpers named for what they do to a recurrent state (`repackage_hidden(h)`).
_TENSOR_METHODS = COMMON_TENSOR_METHODS | DIFFERENTIABLE_METHODS
# How many bindings trainable_part_per_iteration follows back from a value.
_BINDINGS_FOLLOWED = 8


@dataclass(frozen=True)
class Trainable:
    """What makes a carried value's graph reach parameters: `call` runs a forward of a
    model with parameters (or a function of this file computing from them), or `name` is
    a tensor that requires grad; `seen` is False when the callee is out of sight and
    only the recurrent shape (`y, h = f(x, h)`) suggests it computes with weights."""

    node: cst.CSTNode
    what: str
    seen: bool


class CarriedGraph:
    def __init__(
        self,
        index: FileIndex,
        flow: DataFlow,
        loops: LoopAnalysis,
        values: ValueAnalysis,
        forwards: ForwardAnalysis,
        grad_mode: GradModeAnalysis,
        summaries: FunctionSummaries,
        frameworks: FrameworkAnalysis | None = None,
    ) -> None:
        self.frameworks = frameworks if frameworks is not None else FrameworkAnalysis(index)
        self.index = index
        self.flow = flow
        self.loops = loops
        self.values = values
        self.forwards = forwards
        self.grad_mode = grad_mode
        self.summaries = summaries
        self._item_stores: dict[cst.FunctionDef, LoopFacts[cst.CSTNode]] = {}

    # -- the statements that carry a graph -------------------------------------------

    def called_names(self, loop: LoopFacts[LoopNode]) -> set[str]:
        """Names used as a callee (`m(x)`, `m.parameters()`) are models or functions
        fetched anew, not tensor state."""
        called: set[str] = set()
        for node in self.index.walk(loop.loop.body):
            if type(node) is cst.Call:
                func = node.func
                name = dotted_name(func)
                if name:
                    called.add(name)
                if type(func) is cst.Attribute and func.attr.value in PARAMETER_HOLDING_METHODS:
                    owner = dotted_name(func.value)
                    if owner:
                        called.add(owner)
        return called

    def may_carry_graph(self, var: str, loop: LoopFacts[LoopNode]) -> bool:
        """Can some binding of `var` in the loop hold a tensor with history?"""
        return any(
            may_carry_graph(self.values.of_binding(binding.statement, var))
            for binding in loop.bindings_of(var)
            if binding.kind in ("assign", "augassign")
        )

    def carrying_statements(self, var: str, loop: LoopFacts[LoopNode]) -> list[cst.CSTNode]:
        """The statements that rebind `var` to a value built from its previous value
        through tensor operations; empty when any path detaches it, re-creates it, or
        advances it under no_grad."""
        carrying = []
        for binding in loop.bindings_of(var):
            if binding.kind not in ("assign", "augassign"):
                continue
            if self.grad_mode.mode_at(binding.statement) is not GradMode.RECORDING:
                return []  # advanced under no_grad: no graph to carry
            if self.detaches(binding.value):
                return []
            sources = loop.closure(binding.deps)
            if var not in sources:
                return []  # re-created from scratch on this path
            if binding.tensor_op or any(
                b.tensor_op for b in loop.bindings if b.var in sources and b.var != var
            ):
                carrying.append(binding.statement)
        if self.detached_in_place(var, loop):
            return []
        return carrying

    def detaches(self, value: cst.CSTNode | None) -> bool:
        """`repackage_hidden(h)` or any helper named for detaching, or one of this
        module's functions whose body detaches."""
        if type(value) is not cst.Call:
            return False
        name = self.index.qualified_name(value.func) or ""
        last = name.rsplit(".", 1)[-1].lower()
        if any(word in last for word in DETACHING_HELPER_WORDS):
            return True
        callee = self.summaries.resolve(value)
        if callee is not None:
            return self._body_detaches(callee)
        # `obj.reset_state(h)`: any function of this file by that name that detaches
        candidates = self.summaries.callees.named(name.rsplit(".", 1)[-1])
        return bool(candidates) and all(self._body_detaches(f) for f in candidates)

    def _body_detaches(self, func: cst.FunctionDef) -> bool:
        for node in self.index.walk(func.body):
            if type(node) is cst.Attribute and node.attr.value in DETACHING_METHODS:
                return True
        return False

    def detached_in_place(self, var: str, loop: LoopFacts[LoopNode]) -> bool:
        """`h.detach_()` in the loop, or a helper of this file handed `h` that detaches
        it in place (`detach_hidden(h)`: `h.detach_()`, or `for t in h: t.detach_()`)."""
        for node in self.index.walk(loop.loop.body):
            if type(node) is not cst.Call:
                continue
            if (
                type(node.func) is cst.Attribute
                and node.func.attr.value in DETACHING_INPLACE_METHODS
                and dotted_name(node.func.value) == var
            ):
                return True
            helper = self.summaries.resolve(node)
            if helper is not None and self._detaches_argument_in_place(node, helper, var):
                return True
        return False

    def _detaches_argument_in_place(
        self, call: cst.Call, helper: cst.FunctionDef, var: str
    ) -> bool:
        params = [*helper.params.posonly_params, *helper.params.params]
        if self.index.enclosing_class(helper) is not None and type(call.func) is cst.Attribute:
            params = params[1:]  # called on an object: `self` is not among the arguments
        handed = {
            params[position].name.value
            for position, arg in enumerate(call.args)
            if arg.keyword is None
            and arg.star == ""
            and position < len(params)
            and dotted_name(arg.value) == var
        }
        if not handed:
            return False
        # the tensors of a handed tuple of states, one by one
        held = set(handed)
        for node in self.index.walk(helper.body):
            if type(node) is cst.For and type(node.iter) is cst.Name and node.iter.value in handed:
                if type(node.target) is cst.Name:
                    held.add(node.target.value)
        return any(
            type(node) is cst.Call
            and type(node.func) is cst.Attribute
            and node.func.attr.value in DETACHING_INPLACE_METHODS
            and dotted_name(node.func.value) in held
            for node in self.index.walk(helper.body)
        )

    def steps_through_a_tensor(self, loop: LoopNode) -> bool:
        """`for x_t in inputs: h = cell(x_t, h)` over a tensor (its first dimension, the
        time steps of a sequence): the loop is one forward over data whose length the
        tensor fixes, like a batched forward of it, not a history that grows with the
        run."""
        if type(loop) is not cst.For:
            return False
        stepped = self._stepped_tensor(loop.iter, loop)
        if stepped is None or self._step_grid(stepped, loop):
            return False
        return not self._counts_without_reading(loop)

    def _counts_without_reading(self, loop: cst.For) -> bool:
        """`for _ in range(x.shape[1]): out, h = model(inp, h); inp = out`: the indices
        of a tensor's dimension that the body never reads walk none of its steps. The
        loop feeds its own output back as many times as the tensor is long, a
        generation loop whose length the input happens to set."""
        iterable = loop.iter
        if not (
            type(iterable) is cst.Call
            and (self.index.qualified_name(iterable.func) or "") == "range"
        ):
            return False
        target = loop.target
        if type(target) is not cst.Name:
            return False
        # the reads the loop's own binding reaches (not an attribute named like it,
        # `stats.t`, nor a later rebinding's)
        return not any(
            self.index.is_inside(use, loop.body)
            for use in self.values.uses_reached(loop, target.value)
        )

    def _stepped_tensor(self, iterable: cst.BaseExpression, loop: LoopNode) -> cst.CSTNode | None:
        """The tensor whose steps the loop walks, one per iteration: the iterable itself
        (`for x_t in seq`), its slices (`seq.unbind(1)`, `torch.split(seq, 1)`,
        `enumerate(seq)`), or the indices of one of its dimensions (`range(seq.size(1))`,
        `range(seq.shape[0])`, `range(len(seq))` of a tensor). None otherwise: a count
        the run chooses (`range(max_len)`) walks as many steps as it asks."""
        node: cst.BaseExpression = iterable
        if type(node) is cst.Call and len(node.args) >= 1 and not node.args[0].star:
            qualified = self.index.qualified_name(node.func) or ""
            if qualified == "range" and len(node.args) == 1:
                return self._measured_tensor(node.args[0].value, loop)
            if qualified in SLICING_FUNCTIONS:
                return node.args[0].value  # a torch function: a tensor, whatever it was given
            if type(node.func) is cst.Attribute and node.func.attr.value in SLICING_METHODS:
                return node.func.value  # `seq.unbind(1)`, `sentence.split()`: one input's steps
            if qualified == "enumerate":
                node = node.args[0].value
        return node if self._is_tensor(node, loop) else None

    def _measured_tensor(self, count: cst.BaseExpression, loop: LoopNode) -> cst.CSTNode | None:
        """The tensor a loop count measures: `seq.size(1)`, `seq.shape[0]`,
        `seq.size()[0]`, `len(seq)` of a tensor."""
        measured: cst.BaseExpression | None = None
        if type(count) is cst.Call:
            func = count.func
            if type(func) is cst.Attribute and func.attr.value == "size" and count.args:
                measured = func.value
            elif (self.index.qualified_name(func) or "") == "len" and len(count.args) == 1:
                measured = count.args[0].value
        elif type(count) is cst.Subscript:
            shape = count.value
            if type(shape) is cst.Attribute and shape.attr.value == "shape":
                measured = shape.value
            elif (
                type(shape) is cst.Call
                and type(shape.func) is cst.Attribute
                and shape.func.attr.value == "size"
                and not shape.args
            ):
                measured = shape.func.value
        if measured is None:
            return None
        if type(count) is cst.Call and (self.index.qualified_name(count.func) or "") == "len":
            return measured if self._is_tensor(measured, loop) else None
        return measured  # `.size()` and `.shape`: a tensor's dimension, whatever it holds

    def _is_tensor(self, expr: cst.CSTNode, loop: LoopNode) -> bool:
        value = self.values.of_expr(expr, loop)
        return bool(value) and value <= {Kind.TENSOR, Kind.GRAPH, Kind.LEAF}

    def _step_grid(self, expr: cst.CSTNode, use: cst.CSTNode) -> bool:
        """Is the tensor a grid of steps (`torch.linspace(1, 0, n)`, through `.to(d)`,
        `.flip(0)` or a name bound to one): time points an ODE or a sampler walks, as
        many as the run asks, not the steps of an input?"""
        seen: set[cst.CSTNode] = set()
        work = [expr]
        while work:
            node = work.pop()
            while type(node) is cst.Call and type(node.func) is cst.Attribute:
                if self.index.qualified_name(node.func) in STEP_GRID_FACTORIES:
                    return True
                node = node.func.value  # a method of the tensor: `.to(d)`, `.flip(0)`
            if type(node) is cst.Call:
                if self.index.qualified_name(node.func) in STEP_GRID_FACTORIES:
                    return True
                continue
            if type(node) is cst.Name:
                for binding in self.values.reaching_bindings(node.value, use):
                    bound = self.values.bound_expression(binding, node.value)
                    if bound is not None and binding not in seen:
                        seen.add(binding)
                        work.append(bound)
        return False

    # -- does the carried graph reach parameters? -------------------------------------

    def trainable_source(
        self,
        statement: cst.CSTNode,
        var: str,
        loop: LoopFacts[LoopNode],
        value: cst.CSTNode | None = None,
    ) -> Trainable | None:
        """What, in computing the new value of `var` at `statement`, makes its graph
        reach parameters: a forward of a model with parameters, a function of this file
        that computes from them, a tensor that requires grad; else, weaker, a call out
        of sight handed the carried value whose result rebinds it (`y, h = f(x, h)`).
        None when nothing trainable is in sight (a random walk, arithmetic on data).

        The value is followed back, flow-sensitively, through the loop's bindings that
        reach each read, past tensor operations, torch functions and this file's
        functions, but not past a graph cut (`.data`, `.item()`, an argmax) nor a call
        out of sight (`env.step(action)` gives fresh observations, whatever `action`
        was). `value`: what the statement adds to `var` when it binds nothing
        (`values.append(critic(s))`)."""
        body = loop.loop.body
        driven = self._loop_driven(loop)
        visited: set[cst.CSTNode] = set()
        unseen: Trainable | None = None
        work: list[cst.CSTNode] = [statement]
        while work:
            stmt = work.pop()
            if stmt in visited:
                continue
            visited.add(stmt)
            bound = value if stmt is statement and value is not None else _bound_value(stmt)
            if bound is None:
                continue
            for node in self._graph_parts(bound, stmt, driven):
                if type(node) is cst.Call:
                    found = self._trainable_call(node)
                    if found is not None:
                        return found
                    if unseen is None and stmt is statement and node is bound:
                        unseen = self._recurrent_call_out_of_sight(node, var, loop)
                    continue
                name = dotted_name(node)
                if name is None:
                    continue
                reaching = self.index.reaching(self.values.bindings_of(name, node), node)
                inside = [
                    b
                    for b in reaching
                    if self.index.is_inside(b, body) and not self._unpacked_without_graph(b, name)
                ]
                work.extend(inside)
                if not inside and type(node) is cst.Name:
                    if self.values.of_expr(node, stmt) & {Kind.LEAF}:
                        return Trainable(node, f"`{name}`, which requires grad", True)
        return unseen

    def _unpacked_without_graph(self, binding: cst.CSTNode, name: str) -> bool:
        """`out, _, ratio = model(data)` where every `return` of the model's `forward`
        (a class of this file) gives, at `ratio`'s place, a value proven to hold no
        graph (`out.size(0) / x.size(0)`, a count, None): the name is read off a
        forward, but carries none of its history. Also `action, hidden =
        policy.get_action(s, a, hidden)` on an object whose class is out of sight,
        where every definition of the method in the project returns a tuple of that
        size with no graph at `action`'s place (`action.detach().cpu().numpy()`)."""
        if type(binding) is not cst.Assign or len(binding.targets) != 1:
            return False
        target, call = binding.targets[0].target, binding.value
        if not isinstance(target, (cst.Tuple, cst.List)) or type(call) is not cst.Call:
            return False
        elements = target.elements
        if any(type(e) is cst.StarredElement for e in elements):
            return False
        places = [i for i, e in enumerate(elements) if dotted_name(e.value) == name]
        forward = self.forwards.forward_of(call) if len(places) == 1 else None
        if forward is None:
            return len(places) == 1 and self._project_method_returns_no_graph_at(
                call, places[0], len(elements)
            )
        returns = [n for n in self.index.walk(forward.body) if type(n) is cst.Return]
        for ret in returns:
            value = ret.value
            if not isinstance(value, (cst.Tuple, cst.List)) or len(value.elements) != len(elements):
                return False
            element = value.elements[places[0]]
            if type(element) is cst.StarredElement:
                return False
            if not is_graph_free(self.values.of_expr(element.value, ret)):
                return False
        return bool(returns)

    def _project_method_returns_no_graph_at(self, call: cst.Call, place: int, size: int) -> bool:
        project = self.summaries.project
        if type(call.func) is not cst.Attribute or project is None:
            return False
        # only those a call with these arguments can run: `get_action(s, a, hidden)` is
        # not a feed-forward policy's `get_action(self, state)`
        shape = shape_of(call)
        definitions = [
            d
            for d in project.methods_named(call.func.attr.value) or ()
            if not d.placeholder
            and d.signature.admits(
                shape, receiver_passed=passes_receiver(call, d.signature.receiver)
            )
        ]
        return bool(definitions) and all(
            d.returned_tuple_size == size and place in d.graph_free_returned_places
            for d in definitions
        )

    def trainable_part(self, value: cst.CSTNode, stmt: cst.CSTNode) -> Trainable | None:
        """The call in `value` (not past a graph cut) that runs, with autograd recording,
        a forward of a model with parameters, a function of this file computing from
        them, or a callable handed tensors that require grad (`net(X, w, b)` of a
        from-scratch model): what gives the value a graph of its own, built where it is
        computed."""
        for node in self._graph_parts(value, stmt, set()):
            if type(node) is not cst.Call:
                continue
            found = self._trainable_call(node)
            if found is not None:
                return found
            if self.grad_mode.mode_at(node) is GradMode.RECORDING:
                handed = self.forwards.handed_parameters(node)
                if handed is not None:
                    return Trainable(node, f"`{handed}`, handed parameters", True)
        return None

    def trainable_part_per_iteration(
        self, value: cst.CSTNode, stmt: cst.CSTNode, loop: LoopFacts[LoopNode]
    ) -> Trainable | None:
        """trainable_part, also through the names `value` reads that the loop's body
        binds, each iteration, where they reach `stmt` (`val_out = model(xv)`, `val_loss
        = crit(val_out, yv)`, then `val_losses.append(val_loss)`): a forward run for
        the record, bound to a name first. Not through a name the loop backpropagates
        (a term of the loss: its graph is the one the backward frees)."""
        found = self.trainable_part(value, stmt)
        if found is not None:
            return found
        consumed = loop.closure(loop.roots)
        body = loop.loop.body
        work = [(value, stmt)]
        seen: set[cst.CSTNode] = set()
        while work and len(seen) < _BINDINGS_FOLLOWED:
            expr, at = work.pop()
            # only the names history flows through: not past a graph cut, nor into the
            # arguments of a call out of sight (`acc = compute_acc(logits, y)` may
            # hand back a float)
            names = {
                node.value
                for node in self._graph_parts(expr, self.index.statement_of(at), set())
                if type(node) is cst.Name
            }
            if names & consumed:
                return None
            for name in sorted(names):
                for binding in self.values.reaching_bindings(name, at):
                    if binding in seen or not self.index.is_inside(binding, body):
                        continue
                    seen.add(binding)
                    if type(binding) is cst.Assign and any(
                        set(target_names(t.target)) & consumed for t in binding.targets
                    ):
                        # `loss, acc = model(x, y)`: the loss is the output with the
                        # graph; what comes with it (a metric) may have none
                        continue
                    bound = self.values.bound_expression(binding, name)
                    if bound is None:
                        continue
                    statement = self.index.statement_of(binding)
                    found = self.trainable_part(bound, statement)
                    if found is not None:
                        return found
                    work.append((bound, binding))
        return None

    def _trainable_call(self, call: cst.Call) -> Trainable | None:
        if self.grad_mode.mode_at(call) is not GradMode.RECORDING:
            return None
        model = self.forwards.model_forward(call)
        if model is not None:
            if self.forwards.is_frozen(model, call, whole=True):
                return None  # `requires_grad_(False)`: its weights add nothing to record
            return Trainable(call, f"a forward of `{model}`", True)
        helper = self.forwards.parameter_function(call)
        if helper is not None:
            return Trainable(call, f"`{helper}`, computed from parameters", True)
        return None

    def _graph_parts(self, value: cst.CSTNode, stmt: cst.CSTNode, driven: set[str]):
        """The calls and the reads (names, dotted attributes) of `value` through which
        autograd history can flow into what it binds."""
        stack: list[cst.CSTNode] = [value]
        while stack:
            node = stack.pop()
            if self.flow.is_graph_cut(node):
                continue
            kind = type(node)
            if isinstance(node, cst.Call):
                root = self._callee_root(node)
                if root is not None and root in driven:
                    continue  # `for layer in layers: x = layer(x)`: a forward, once
                yield node
                if self._out_of_sight(node, stmt):
                    continue
                stack.extend(a.value for a in node.args)
                if type(node.func) is cst.Attribute:
                    stack.append(node.func.value)
                continue
            if kind is cst.Name or (kind is cst.Attribute and dotted_name(node) is not None):
                yield node
                continue
            if isinstance(node, (cst.Lambda, cst.FunctionDef)):
                continue
            stack.extend(self.index.kids(node))

    def _out_of_sight(self, call: cst.Call, stmt: cst.CSTNode) -> bool:
        """A call whose result says nothing gradlint can follow about its arguments'
        history: not torch, not a tensor method, not a builtin, not this file's function
        (a gym `env.step`, an agent's `choose_action`, a library call), or one whose
        result is proven to hold no graph."""
        if is_graph_free(self.values.of_expr(call, stmt)):
            return True
        qualified = self.index.qualified_name(call.func) or ""
        if qualified.startswith("torch.") or hasattr(builtins, qualified):
            return False
        if self.values.torch_loss_instance(call.func, stmt):
            return False  # `criterion(out, y)` of a `torch.nn.L1Loss()`: computed from its inputs
        helper = self.summaries.resolve(call)
        if helper is not None:
            return self._returns_without_recording(helper)
        func = call.func
        if type(func) is cst.Attribute and self.values.distributions_built(func.value, call):
            # `m.log_prob(a)` of `m = Categorical(logits)` computes from its parameters;
            # `m.sample()` runs without grad
            return func.attr.value in GRADLESS_RESULTS
        return not (type(func) is cst.Attribute and func.attr.value in _TENSOR_METHODS)

    def _returns_without_recording(self, func: cst.FunctionDef) -> bool:
        """Does every `return value` of this file's function sit under no_grad (an
        `accuracy(output, target)` helper whose body is a `with torch.no_grad():`)?"""
        returns = self.index.value_returns(func)
        return bool(returns) and all(
            self.grad_mode.mode_at(ret) is GradMode.NOT_RECORDING for ret, _ in returns
        )

    def _loop_driven(self, loop: LoopFacts[LoopNode]) -> set[str]:
        """The loop target and what the body computes from it."""
        if type(loop.loop) is not cst.For:
            return set()
        targets = set(target_names(loop.loop.target))
        driven = set(targets)
        for binding in loop.bindings:
            if binding.deps & targets and not binding.tensor_op:
                driven.add(binding.var)
        return driven

    @staticmethod
    def _callee_root(call: cst.Call) -> str | None:
        name = dotted_name(call.func)
        return name.split(".")[0] if name else None

    def _recurrent_call_out_of_sight(
        self, call: cst.Call, var: str, loop: LoopFacts[LoopNode]
    ) -> Trainable | None:
        """`out, h = decoder(inp, h)` where `decoder` is a local name or attribute (a
        parameter, `self.decoder`), not an import, not torch, not this file's function:
        a call handed an input and the carried value itself (or a tuple holding it) whose
        result rebinds it, the shape of a recurrent step, on a state that does not enter
        the loop as a plain number."""
        name = dotted_name(call.func)
        if name is None or not self._out_of_sight(call, call):
            return None
        if self.forwards.model_forward(call) is not None:
            return None  # a model in sight: `_trainable_call` has seen what it records
        if not self.frameworks.names_torch():
            return None  # no torch in the file: the recurrent shape is no evidence
        if self.frameworks.imports_foreign():
            return None  # `state, rng = p_train_step(state, batch, rng)` may be JAX's
        if is_graph_free(self.values.of_expr(call, call)):
            return None
        root = name.split(".")[0]
        if root in self.index.aliases or hasattr(builtins, root):
            return None  # a library's function (`re.sub(p, r, s)`, `cv2.addWeighted`)
        if type(call.func) is cst.Attribute and call.func.attr.value in PARAMETER_HOLDING_METHODS:
            return None
        if self.summaries.resolve_external(call) is not None:
            return None  # a project function gradlint summarises elsewhere
        if self._method_of_a_built_object(call):
            return None
        # the project's callables run under a grad mode of their own (ptan's agents:
        # `@torch.no_grad()` on `__call__`): the recurrent shape is no evidence of a graph
        if self.forwards.project_method_sets_grad_mode("__call__"):
            return None
        positional = positional_arguments(call)
        if len(positional) < 2 or not any(_names(arg, var) for arg in positional):
            return None  # not `f(x, h)`: `s = normalise(s)`, `env.step(policy(s))`
        if self._enters_as_plain_value(var, loop):
            return None
        return Trainable(call, f"`{name}`", False)

    def _method_of_a_built_object(self, call: cst.Call) -> bool:
        """`scheduler.step(residual, t, sample)` where every binding of `scheduler` that
        reaches the call builds it here, from a class out of sight (`scheduler =
        DDPMScheduler(...)`): a network is called (`net(x, h)`), not asked for a named
        method, so a method of an object this code builds says nothing about weights."""
        func = call.func
        if type(func) is not cst.Attribute:
            return False
        receiver = func.value
        bound: list[cst.CSTNode | None]
        if type(receiver) is cst.Name:
            bound = list(self.values.reaching_expressions(receiver.value, call))
        else:
            # `self.adj_t.sample_adj(n_id, size)` of `self.adj_t = SparseTensor(...).t()`:
            # the object built in the class's own methods, as a local one is
            bound = self._built_in_the_class(receiver, call)
        if not bound:
            return False
        for e in bound:
            if type(e) is not cst.Call or self.forwards.has_parameters(func.value, call):
                return False
        return True

    def _built_in_the_class(
        self, receiver: cst.BaseExpression, call: cst.Call
    ) -> list[cst.CSTNode | None]:
        """What the class's own methods bind to `self.<name>` (`receiver`), when the
        call is in one of them and none of the bindings is unpacked; [] otherwise."""
        name = dotted_name(receiver)
        if name is None or not name.startswith("self.") or name.count(".") != 1:
            return []
        cls = self.index.class_around(call)
        if cls is None:
            return []
        bindings = self.values.bindings.own_attribute_bindings(cls, name)
        if not all(b.whole for b in bindings):
            return []
        return [b.value for b in bindings]

    def _enters_as_plain_value(self, var: str, loop: LoopFacts[LoopNode]) -> bool:
        """Does `var` enter the loop as a Python number or string (`x1, s1 = -5, 0`)?"""
        index = self.index
        start = index.order[loop.loop]
        before = [
            b
            for b in self.values.bindings_of(var, loop.loop)
            if index.order.get(b, start) < start and not index.is_inside(b, loop.loop)
        ]
        return bool(before) and all(self.values.of_binding(b, var) <= {Kind.PYTHON} for b in before)

    # -- where the carried graph goes after the loop ------------------------------------

    def reaches_differentiation(self, var: str, loop: LoopFacts[LoopNode]) -> bool:
        """Is what the loop carries differentiated in its function: a backward, an
        `autograd.grad` or a step of a value computed from it (or stored from it into a
        list: a rollout's collected outputs), in the scope or in a loop around this one,
        directly or by a helper of this file it is handed to, and not only before the
        loop?"""
        index = self.index
        scope = index.scope_of(loop.loop)
        scope_facts = self.loops.scope_facts(scope)
        body = scope.body if type(scope) is cst.FunctionDef else scope
        # a helper of this file that backpropagates what it is handed counts as a backward
        # at its call (`update(losses)` after a rollout that collected them)
        for event in scope_facts.events + self.loops.helper_backwards(body):
            if self._runs_only_before(event.call, loop.loop):
                continue  # a training loop above a sampling one: it cannot see its graph
            if var in scope_facts.closure(event.roots):
                return True
        for outer in index.enclosing_loops(loop.loop):
            if index.scope_of(outer) is not scope:
                break
            facts = self.loops.facts(outer)
            for event in facts.events:
                if var in scope_facts.closure(event.roots) or var in facts.closure(event.roots):
                    return True
        return False

    def _runs_only_before(self, node: cst.CSTNode, loop: LoopNode) -> bool:
        """Does `node` come before the loop in its scope, with no loop around both to run
        it again after (`for epoch ...: loss.backward()` then a test loop that samples
        from the trained model)? The scope's bindings are followed flow-insensitively, so
        only the order says that such a backward never reaches what the loop builds."""
        index = self.index
        if index.order.get(node, 0) >= index.order[loop]:
            return False
        around_loop = set(index.enclosing_loops(loop))
        return not any(outer in around_loop for outer in index.enclosing_loops(node))

    def unrolled_for_callers(self, var: str, loop: LoopFacts[LoopNode]) -> bool:
        """Does the loop differentiate only functionally (`autograd.grad`: no backward,
        no optimizer step) and hand what it carries back to callers that differentiate
        it? A meta-learner's inner adaptation loop (MAML's fast weights, a hyper-
        network's adapted parameters returned by `adaptation()` and backpropagated by
        `train()`): the carried history is what the outer differentiation walks, the
        unroll's length is the algorithm's, and a detach would cut the meta-gradient."""
        if not loop.events or any(event.kind != "grad" for event in loop.events):
            return False
        if not self.leaves_scope(var, loop):
            return False
        index = self.index
        scope = index.scope_of(loop.loop)
        if type(scope) is not cst.FunctionDef:
            return False
        return any(self.loops.differentiated_around(s) for s in self.grad_mode.callers_of(scope))

    def leaves_scope(self, var: str, loop: LoopFacts[LoopNode]) -> bool:
        """Does a value built from what the loop carries leave its function: returned,
        yielded, or stored on an object (`self.h = h`)?"""
        index = self.index
        scope = index.scope_of(loop.loop)
        if type(scope) is not cst.FunctionDef:
            return False
        scope_facts = self._with_item_stores(scope)
        for binding in scope_facts.bindings:
            if "." in binding.var and var in scope_facts.closure(binding.deps):
                return True
        # written into item by item (`out[:, k] = state`): what the values analysis
        # reads off the container's own binding (`torch.zeros(...)`) is not all it holds
        filled = {
            b.var
            for b in scope_facts.bindings
            if b.kind == "store" and type(b.statement) in (cst.Assign, cst.AugAssign)
        }
        for node in index.walk(scope.body):
            if type(node) in (cst.Return, cst.Yield) and node.value is not None:
                reads = scope_facts.closure(self.flow.reads(node.value))
                if var in reads and (
                    reads & filled
                    # `return torch.cat(samples)` of `torch.multinomial` draws: built
                    # from what the loop carried, but holding none of its history
                    or not is_graph_free(self.values.of_expr(node.value, node))
                ):
                    return True
        return False

    def _with_item_stores(self, scope: cst.FunctionDef) -> LoopFacts[cst.CSTNode]:
        """The function's bindings, with each item assignment (`output[:, i::k] =
        preds[i]`) as a store into its container: a forward that assembles its unrolled
        steps into a preallocated tensor returns their history with it."""
        cached = self._item_stores.get(scope)
        if cached is None:
            base = self.loops.scope_facts(scope)
            cached = LoopFacts(scope, events=base.events)
            cached.bindings = list(base.bindings)
            for record in self.loops.bindings.in_region(scope.body):
                if record.kind is BindingKind.ITEM:
                    deps = self.flow.reads(record.value) | {record.name}
                    cached.bindings.append(
                        Binding(record.name, record.node, record.value, deps, kind="store")
                    )
            self._item_stores[scope] = cached
        return cached


def _bound_value(statement: cst.CSTNode) -> cst.CSTNode | None:
    """The expression a binding statement computes its value from (for `h += x`, the
    whole statement, which reads `h` too); None for loop targets, `with` and
    parameters, whose history is not computed here."""
    if isinstance(statement, (cst.Assign, cst.AnnAssign, cst.NamedExpr)):
        return statement.value
    if type(statement) is cst.AugAssign:
        return statement
    return None


def _names(arg: cst.CSTNode, var: str) -> bool:
    """Is the argument the variable itself, or a tuple literal holding it (`(h, c)`)?"""
    if dotted_name(arg) == var:
        return True
    if isinstance(arg, (cst.Tuple, cst.List)):
        return any(dotted_name(e.value) == var for e in arg.elements)
    return False
