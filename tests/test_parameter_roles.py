"""Parameters known by their use (issue "Generalise", section 2, "roles inferred from use"):
course code keeps its weights in plain names and lists made out of sight (`params =
get_params()`), so nothing at the binding says "parameter". A tensor whose `.grad` is
read is a leaf that requires grad; an iterable whose elements are read so, or that is
handed to an optimizer or to a function that reads them so, holds parameters; a
function's parameter that every caller fills with one holds them too."""

from __future__ import annotations

import textwrap

import libcst as cst

from gradlint.analysis.facts import FileFacts
from gradlint.config import Config
from gradlint.engine import lint_source

PREVIEW = Config(preview=True)


def findings(source: str) -> list[tuple[str, int]]:
    found = lint_source(textwrap.dedent(source), "t.py", PREVIEW)
    return [(d.code, d.start.line) for d in found]


def _facts(source: str) -> FileFacts:
    return FileFacts(cst.parse_module(textwrap.dedent(source)))


def _name_at(facts: FileFacts, name: str, line: int) -> cst.Name:
    """The first read of `name` on that line (1-based, of the dedented source)."""
    wrapper = cst.MetadataWrapper(facts.module, unsafe_skip_copy=True)
    positions = wrapper.resolve(cst.metadata.PositionProvider)
    for node in facts.index.nodes:
        if type(node) is cst.Name and node.value == name and positions[node].start.line == line:
            return node
    raise AssertionError(f"no {name} on line {line}")


# -- GL002: a leaf by its `.grad` ---------------------------------------------------------

HAND_WRITTEN_UPDATES = """
import torch


def heavy_ball(weights, buffers, cfg):
    for w, buf in zip(weights, buffers):
        buf.mul_(cfg["beta"]).add_(w.grad)
        w -= cfg["lr"] * buf


def adagrad(tensors, sums, cfg):
    for k, (theta, acc) in enumerate(zip(tensors, sums)):
        acc += theta.grad ** 2
        theta[:] = theta - cfg["lr"] * theta.grad / acc.sqrt()


def signed(tensors, lr):
    for i, theta in enumerate(tensors):
        theta.sub_(lr * theta.grad.sign())
"""


def test_a_tensor_whose_grad_is_read_is_a_leaf_updated_in_place():
    found = findings(HAND_WRITTEN_UPDATES)
    assert [line for code, line in found if code == "GL002"] == [
        8,  # `w -= ...` beside `w.grad` (zip's first element)
        14,  # `theta[:] = ...`, unpacked from enumerate(zip(...))
        19,  # `theta.sub_(...)` (enumerate's element)
    ]  # not `buf` nor `acc`: state buffers, whose gradient is never read


CORRECT_UPDATES = """
import torch


def under_no_grad(weights, lr):
    with torch.no_grad():
        for w in weights:
            w -= lr * w.grad
            w.grad.zero_()


def through_data(weights, lr):
    for w in weights:
        w.data.sub_(lr * w.grad)


def rebound(weights, lr):
    for w in weights:
        step = w.grad
        w = w.detach().clone()
        w -= lr * step


def kept_by_a_non_leaf(x):
    y = x * 2
    y.retain_grad()
    y.sum().backward()
    y += y.grad


def stepped(weights, lr):
    with torch.no_grad():
        update(weights, lr)


def update(weights, lr):
    for w in weights:
        w -= lr * w.grad
"""


def test_a_gradient_read_says_nothing_where_the_update_is_correct():
    # under no_grad (here or in every caller), through `.data`, on a rebinding the read
    # does not reach, on a non-leaf asked to retain its gradient
    assert [f for f in findings(CORRECT_UPDATES) if f[0] == "GL002"] == []


# -- the roles, asked directly -------------------------------------------------------------

CHAIN = """
def clip(tensors, limit):
    total = 0.0
    for t in tensors:
        total += (t.grad ** 2).sum()
    return total


def fit(make, model_fn, batches, lr):
    weights = make()
    for xb, yb in batches:
        loss = model_fn(xb, weights).sum()
        loss.backward()
        clip(weights, 1.0)
    show(model_fn, weights)


def show(model_fn, ws):
    return model_fn(None, ws)


def lonely(model_fn, ws):
    return model_fn(None, ws)


def plain(items):
    for t in items:
        print(t)
    return clip
"""


def test_an_iterable_holds_parameters_by_its_elements_gradients_and_by_its_callers():
    facts = _facts(CHAIN)
    roles = facts.parameter_roles
    assert roles.holds_parameters("tensors", _name_at(facts, "tensors", 4))
    # handed to `clip`, whose parameter holds parameters
    assert roles.holds_parameters("weights", _name_at(facts, "weights", 12))
    # filled by its only caller with `weights`
    assert roles.holds_parameters("ws", _name_at(facts, "ws", 19))
    # no caller, no use that shows it
    assert not roles.holds_parameters("ws", _name_at(facts, "ws", 23))
    assert not roles.holds_parameters("items", _name_at(facts, "items", 27))


def test_an_optimizer_is_handed_parameters():
    facts = _facts(
        """
        import torch

        def setup(make):
            tensors = make()
            opt = torch.optim.Adam(tensors, lr=0.1)
            return tensors, opt
        """
    )
    assert facts.parameter_roles.holds_parameters("tensors", _name_at(facts, "tensors", 7))


# -- GL012: a callable out of sight handed parameters --------------------------------------

GENERATE = """
import torch


def fit(step_fn, init_weights, batches, lr, seeds):
    weights = init_weights()
    for xb, yb in batches:
        out, _ = step_fn(xb, None, weights)
        loss = ((out - yb) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for w in weights:
                w -= lr * w.grad
                w.grad.zero_()
    for seed in seeds:
        print(generate(step_fn, weights, seed, 20))


def generate(step_fn, weights, seed, n):
    hidden = None
    tokens = [seed]
    for _ in range(n):
        scores, hidden = step_fn(torch.tensor([tokens[-1]]), hidden, weights)
        tokens.append(int(scores.argmax(dim=1).item()))
    return tokens


def sampled_grad(step_fn, weights, x):
    out, _ = step_fn(x, None, weights)
    out.sum().backward()
    return out.detach().argmax(dim=1).item()


def counted(count_fn, weights):
    return float(count_fn(weights))
"""


def test_a_call_handed_parameters_whose_result_is_only_read_as_numbers():
    found = findings(GENERATE)
    gl012 = [line for code, line in found if code == "GL012"]
    # the generator's step: `weights` are stepped by its only caller
    assert 23 in gl012
    # not the training step (differentiated), not a differentiated result read later,
    # not a call whose result may be a plain number
    assert 8 not in gl012 and 30 not in gl012 and 36 not in gl012


# -- a factory's parameters, and a function of this file handed them ----------------------

FROM_SCRATCH = """
import torch


def make_weights(n_in, n_hidden):
    layers = [torch.randn(n_in, n_hidden) * 0.01, torch.zeros(n_hidden)]
    for t in layers:
        t.requires_grad_(True)
    return layers


def cell(x, h, layers):
    w, b = layers
    h = torch.tanh(x @ w + b + h)
    return h, h


def frozen_maker(n_in, n_hidden):
    layers = [torch.randn(n_in, n_hidden), torch.zeros(n_hidden)]
    for t in layers:
        t.requires_grad_(False)
    return layers


def decode(start, steps, layers):
    h = torch.zeros(1, 4)
    picks = []
    for _ in range(steps):
        y, h = cell(start, h, layers)
        picks.append(y.argmax(dim=1).item())
    return picks


def count(layers):
    return sum(t.numel() for t in layers)


weights = make_weights(4, 4)
print(decode(torch.randn(1, 4), 3, weights))
plain = frozen_maker(4, 4)
y, h = cell(torch.randn(1, 4), torch.zeros(1, 4), plain)
print(y.argmax(dim=1).item())
print(count(weights))
"""


def test_a_factory_returns_parameters_and_a_function_of_this_file_computes_from_them():
    facts = _facts(FROM_SCRATCH)
    roles = facts.parameter_roles
    assert roles.holds_parameters("weights", _name_at(facts, "weights", 39))
    assert not roles.holds_parameters("plain", _name_at(facts, "plain", 41))
    gl012 = [line for code, line in findings(FROM_SCRATCH) if code == "GL012"]
    # `cell(...)` in `decode`, filled by its one caller with `make_weights()`; not the
    # call with weights that require no grad, nor `count`, which returns a number
    assert gl012 == [29]


def test_a_callable_out_of_sight_may_return_a_plain_number_of_the_parameters():
    source = """
    import torch


    def fit(norm_fn, model_fn, weights, batches, lr):
        for xb, yb in batches:
            model_fn(xb, weights).sum().backward()
            with torch.no_grad():
                for w in weights:
                    w -= lr * w.grad
            size = float(norm_fn(weights))
            print(size > 1.0, model_fn(xb, weights).mean().item())
    """
    gl012 = [line for code, line in findings(source) if code == "GL012"]
    # `norm_fn(weights)` is only turned into a float: it may be one already; the
    # forward read with `.mean().item()` is a tensor's
    assert gl012 == [12]


LISTED_LEAVES = """
import torch

W_in = torch.normal(0, 0.01, (4, 8), requires_grad=True)
W_rec = torch.normal(0, 0.01, (8, 8), requires_grad=True)
bias = torch.zeros(8, requires_grad=True)
weights = [W_in, W_rec, bias]
saliency = torch.randn(1, 4, requires_grad=True)


def unit(X, H, weights):
    W_in, W_rec, bias = weights
    H = torch.tanh(X @ W_in + H @ W_rec + bias)
    return H, H


def roll(n, net, weights):
    H = torch.zeros(1, 8)
    out = []
    for _ in range(n):
        Y, H = net(torch.randn(1, 4), H, weights)
        out.append(Y.argmax(dim=1).item())
    return out


print(roll(5, unit, weights))
print(unit(torch.randn(1, 4), torch.zeros(1, 8), [W_in, W_rec, bias])[0].argmax().item())
print(unit(saliency, torch.zeros(1, 8), weights)[0].argmax().item())
"""


def test_a_list_of_leaves_is_a_hand_written_models_parameters_not_an_input():
    gl012 = [line for code, line in findings(LISTED_LEAVES) if code == "GL012"]
    # the sampling step, a call handed the list itself, and the call whose input
    # requires grad: its result ends as a number on the spot, so no gradient can reach
    # the input through it
    assert gl012 == [21, 27, 28]


# -- a loaded whole model, handed to a function that calls it ----------------------------


def test_a_loaded_model_handed_to_an_evaluation_holds_weights():
    """`torch.load` of a whole pickled model, called only inside the helper it is handed
    to: the call there says it is a model (a loaded state dict or tensor is never
    called), so the helper's forward, read only as numbers, is a finding."""
    source = """
        import torch


        def evaluate(model, loader):
            correct = 0
            for x, y in loader:
                correct += model(x).argmax(1).eq(y).sum().item()
            return correct


        if __name__ == "__main__":
            model = torch.load("model.pt")
            print(evaluate(model, []))
    """
    assert findings(source) == [("GL012", 8)]


def test_a_loaded_value_handed_to_a_function_that_does_not_call_it():
    source = """
        import torch


        def evaluate(weights, loader):
            correct = 0
            for x, y in loader:
                correct += (x @ weights).argmax(1).eq(y).sum().item()
            return correct


        if __name__ == "__main__":
            weights = torch.load("w.pt")
            print(evaluate(weights, []))
    """
    assert findings(source) == []
