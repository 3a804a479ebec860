"""A custom autograd Function (`class LossFn(torch.autograd.Function)` with its own
`forward` and `backward`: a hand-written loss, a gradient reversal, a straight-through
estimator) is run by `LossFn.apply(x, ...)`, one recorded operation whose result is
computed from its tensor arguments, with their graph. A value handed to it is followed
on through what it returns, as through a torch function: a model's output that only
reaches numbers through such a loss still built its graph for nothing (GL012), and one
whose loss is backpropagated is used. Found in this file, and in another project file
(ModuleSummary.autograd_functions), also behind a module whose `forward` returns
`LossFn.apply(...)` (its summary carries its parameters)."""

from __future__ import annotations

import ast
from pathlib import Path

from test_project import findings, write

from gradlint.analysis import project
from gradlint.analysis.imports import ast_import_map

SQUARE = """
import torch
from torch import nn


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


model = nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(10):
    loss = Square.apply(model(torch.randn(2, 3))).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
out = model(torch.randn(5, 3))
value = Square.apply(out)
print(value.mean().item())
"""

EVALUATION_LINE = 24  # out = model(torch.randn(5, 3))

LOSSES = """
import torch
from torch import nn


class CrossEntropyFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y, labels):
        probs = torch.softmax(y, dim=0)
        ctx.save_for_backward(probs, labels)
        return -torch.log(probs[labels, range(y.size(1))]).mean()

    @staticmethod
    def backward(ctx, grad_output):
        probs, labels = ctx.saved_tensors
        return probs, None


class CrossEntropyModule(nn.Module):
    def forward(self, y, labels):
        return CrossEntropyFn.apply(y, labels)
"""

TRAIN = """
import numpy as np
import torch
from torch import nn

from losses import CrossEntropyModule

model = nn.Linear(4, 3)
criterion = CrossEntropyModule()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
X, Y = torch.randn(3, 8), torch.randint(0, 3, (8,))
for _ in range(10):
    loss = criterion(model(X.T).T, Y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
logits = model(X.T).T
loss = criterion(logits, Y)
print(np.argmax(logits.detach().numpy(), axis=0), loss.detach().numpy())
"""

FINAL_LINE = 16  # logits = model(X.T).T


def test_a_forward_read_as_numbers_through_a_custom_function(tmp_path: Path):
    write(tmp_path, {"square.py": SQUARE})
    assert findings(tmp_path / "square.py") == [(EVALUATION_LINE, "GL012")]


def test_a_custom_functions_result_backpropagated_uses_the_graph(tmp_path: Path):
    used = SQUARE.replace("print(value.mean().item())", "value.sum().backward()")
    write(tmp_path, {"square.py": used})
    assert findings(tmp_path / "square.py") == []


def test_an_apply_of_a_class_that_is_no_autograd_function(tmp_path: Path):
    # a class of the file with an `apply` of its own: what it does is not known
    plain = SQUARE.replace("class Square(torch.autograd.Function):", "class Square:")
    write(tmp_path, {"square.py": plain})
    assert findings(tmp_path / "square.py") == []


def test_a_function_derived_from_another_of_the_file(tmp_path: Path):
    derived = SQUARE.replace(
        "model = nn.Linear(3, 3)",
        "class Cube(Square):\n    pass\n\n\nmodel = nn.Linear(3, 3)",
    ).replace("value = Square.apply(out)", "value = Cube.apply(out)")
    write(tmp_path, {"square.py": derived})
    assert findings(tmp_path / "square.py") == [(EVALUATION_LINE + 4, "GL012")]


def test_a_loss_module_of_another_file_running_a_custom_function(tmp_path: Path):
    write(tmp_path, {"losses.py": LOSSES, "train.py": TRAIN})
    assert findings(tmp_path / "train.py") == [(FINAL_LINE, "GL012")]


def test_the_same_loss_module_backpropagated_at_the_end(tmp_path: Path):
    trained = TRAIN.replace(
        "print(np.argmax(logits.detach().numpy(), axis=0), loss.detach().numpy())",
        "loss.backward()",
    )
    write(tmp_path, {"losses.py": LOSSES, "train.py": trained})
    assert findings(tmp_path / "train.py") == []


def test_the_summary_lists_the_functions_and_carries_through_them():
    source = (
        LOSSES
        + """
class Reversed(CrossEntropyFn):
    pass


class NotAFunction:
    @staticmethod
    def apply(y, labels):
        return y
"""
    )
    summary = project.summarise_source(source, "losses.py")
    assert summary.autograd_functions == ["CrossEntropyFn", "Reversed"]
    forward = summary.functions["CrossEntropyModule.forward"]
    assert forward.carried_params == ["y", "labels"]
    tree = ast.parse(source)
    assert project._autograd_function_classes(tree, ast_import_map(tree)) == {
        "CrossEntropyFn",
        "Reversed",
    }


COUNTED = """
import torch
from torch import nn


class CountCorrect(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, labels):
        correct = (logits.argmax(1) == labels).sum()
        ctx.mark_non_differentiable(correct)
        return correct

    @staticmethod
    def backward(ctx, g):
        return None, None


model = nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
correct = 0
for _ in range(10):
    x, y = torch.randn(2, 3), torch.randint(0, 3, (2,))
    out = model(x)
    loss = nn.functional.cross_entropy(out, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    correct += CountCorrect.apply(out, y)
print(correct)
"""


def test_no_graph_is_claimed_for_what_a_custom_function_returns(tmp_path: Path):
    # a Function may return what has no history (a count marked non-differentiable, an
    # argmax): its result is followed for where a value goes, but the value analysis
    # does not claim it holds a graph, so keeping it across iterations is no finding
    write(tmp_path, {"count.py": COUNTED})
    assert findings(tmp_path / "count.py") == []


def test_a_custom_function_run_under_a_name_the_module_gives_it(tmp_path: Path):
    # `square = Square.apply` at the top of the module, then `square(out)`
    aliased = SQUARE.replace(
        "model = nn.Linear(3, 3)", "square = Square.apply\nmodel = nn.Linear(3, 3)"
    ).replace("value = Square.apply(out)", "value = square(out)")
    write(tmp_path, {"square.py": aliased})
    assert findings(tmp_path / "square.py") == [(EVALUATION_LINE + 1, "GL012")]
    # a function's own `square` (a parameter) is not the module's
    shadowed = aliased.replace(
        "out = model(torch.randn(5, 3))", "def show(square):\n    out = model(torch.randn(5, 3))"
    ).replace(
        "value = square(out)\nprint(value.mean().item())",
        "    value = square(out)\n    print(value.mean().item())",
    )
    write(tmp_path, {"square.py": shadowed})
    assert findings(tmp_path / "square.py") == []


def test_an_alias_the_module_also_binds_otherwise_is_not_the_function(tmp_path: Path):
    # `f = Square.apply`, then `for f in [keep]:` at the top level of a script: the call
    # `f(out)` there runs `keep`, which keeps the output for a later backward
    rebound = SQUARE.replace(
        "model = nn.Linear(3, 3)",
        "f = Square.apply\nkept = []\n\n\ndef keep(t):\n    kept.append(t)\n    return t\n\n\n"
        "model = nn.Linear(3, 3)",
    ).replace(
        "value = Square.apply(out)\nprint(value.mean().item())",
        "for f in [keep]:\n    print(f(out).mean().item())\ntorch.stack(kept).sum().backward()",
    )
    write(tmp_path, {"square.py": rebound})
    assert findings(tmp_path / "square.py") == []
    # the same call where `f` is the module's alias alone is the Function
    alias = rebound.replace("for f in [keep]:\n    print(", "if True:\n    print(")
    write(tmp_path, {"square.py": alias})
    assert [code for _, code in findings(tmp_path / "square.py")] == ["GL012"]
