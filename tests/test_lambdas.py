"""A lambda is a callable whose body runs where it is called (issue "Generalise", section 2,
"context flows from callers to callees"): bound to a name, or handed to a function that
calls its parameter, its forward runs in the grad mode and the model mode of the calls
that run it (pytorch-ddpg's `policy = lambda x: agent.select_action(x)` handed to
`evaluate(env, policy)`)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from gradlint.analysis.facts import FileFacts
from gradlint.analysis.grad_mode import GradMode
from gradlint.analysis.values import Kind
from gradlint.config import Config
from gradlint.engine import lint_source

PREVIEW = Config(preview=True)


def _facts(source: str) -> FileFacts:
    return FileFacts(cst.parse_module(textwrap.dedent(source)))


def _lambda(facts: FileFacts, line: int) -> cst.Lambda:
    """The lambda of the statement on that line (1-based, of the dedented source)."""
    text = facts.module.code.splitlines()[line - 1].strip()
    (lam,) = [
        n
        for n in facts.index.nodes
        if type(n) is cst.Lambda and facts.module.code_for_node(n) in text
    ]
    return lam


def _texts(facts: FileFacts, calls) -> list[str]:
    return [facts.module.code_for_node(c) for c in calls]


def findings(source: str) -> list[tuple[str, int]]:
    found = lint_source(textwrap.dedent(source), "t.py", PREVIEW)
    return [(d.code, d.start.line) for d in found]


SITES = """
def rollout(env, policy):
    obs = env.reset()
    for _ in range(10):
        obs = env.step(policy(obs))


def main(env, agent, evaluate):
    act = lambda x: agent.act(x)
    act(1)
    rollout(env, act)
    rollout(env, lambda x: agent.act(x, noise=0))
    evaluate(env, act)
    net, loss = lambda X: agent.net(X), None
    net(2)
    stored = lambda y: agent.act(y)
    agent.policy = stored
    returned = lambda x: x
    return returned
"""


@pytest.mark.parametrize(
    ("line", "sites"),
    [
        (9, ["act(1)", "policy(obs)", "evaluate(env, act)"]),  # name, parameter, out of sight
        (12, ["policy(obs)"]),  # handed as it is written
        (14, ["net(2)"]),  # one element of a tuple assignment
        (16, []),  # stored on an object: runs out of sight
        (18, []),  # returned
    ],
)
def test_the_calls_that_run_a_lambda(line, sites):
    facts = _facts(SITES)
    assert _texts(facts, facts.path_conditions.call_sites(_lambda(facts, line))) == sites


def test_the_calls_in_its_scope_during_which_a_lambda_runs():
    facts = _facts(SITES)
    lam = _lambda(facts, 9)
    scope = facts.index.scope_of(lam)
    assert _texts(facts, facts.path_conditions.lambda_entries(lam, scope)) == [
        "act(1)",
        "rollout(env, act)",
        "evaluate(env, act)",
    ]


GRAD = """
import torch


def rollout(env, policy):
    obs = env.reset()
    for _ in range(10):
        obs = env.step(policy(obs))


def loud(env, agent):
    act = lambda x: agent.act(x)
    rollout(env, act)


def quiet(env, agent):
    act = lambda y: agent.act(y)
    with torch.no_grad():
        rollout(env, act)


def called_quietly(agent, x):
    act = lambda z: agent.act(z)
    with torch.no_grad():
        return act(x)
"""


@pytest.mark.parametrize(
    ("line", "mode"),
    [
        (12, GradMode.RECORDING),
        # `rollout` is also called with autograd on (by `loud`): this lambda is not
        (17, GradMode.NOT_RECORDING),
        (23, GradMode.NOT_RECORDING),
    ],
)
def test_a_lambda_s_body_runs_in_the_grad_mode_of_its_calls(line, mode):
    facts = _facts(GRAD)
    lam = _lambda(facts, line)
    forward = next(n for n in facts.index.walk(lam.body) if type(n) is cst.Call)
    assert facts.mode_at(forward) is mode


ACTING = """
import torch
from torch import nn

model = nn.Linear(3, 2)


def rollout(env, policy):
    obs = env.reset()
    for _ in range(10):
        obs = env.step(policy(obs))


def main(env):
    act = lambda x: model(x).argmax().item()
    rollout(env, act)


def main_quietly(env):
    act = lambda x: model(x).argmax().item()
    with torch.no_grad():
        rollout(env, act)


def stored(agent):
    agent.policy = lambda x: model(x).argmax().item()
"""


def test_gl012_reports_a_forward_inside_a_lambda_run_with_autograd_on():
    # main_quietly's rollout runs it under no_grad; the stored one runs out of sight
    assert findings(ACTING) == [("GL012", 15)]


def test_gl012_s_fix_wraps_the_call_that_runs_the_lambda():
    (finding,) = lint_source(textwrap.dedent(ACTING), "t.py", PREVIEW)
    assert finding.fix is not None
    (edit,) = finding.fix.edits
    assert "with torch.no_grad():" in edit.content and "rollout(env, act)" in edit.content
    assert "lambda" not in edit.content


EVALUATING = """
import torch
from torch import nn


def run(env, policy):
    obs = env.reset()
    for _ in range(10):
        obs = env.step(policy(obs))


def run_quietly(env, policy):
    obs = env.reset()
    with torch.no_grad():
        for _ in range(10):
            obs = env.step(policy(obs))


def test(env):
    model = nn.Linear(3, 1)
    model.eval()
    policy = lambda x: model(x).numpy()
    run(env, policy)


def test_quietly(env):
    model = nn.Linear(3, 1)
    model.eval()
    policy = lambda x: model(x).numpy()
    run_quietly(env, policy)


def test_direct(model, obs):
    model.eval()
    act = lambda x: model(x).argmax().item()
    with torch.no_grad():
        a = act(obs)
    return a


def own_model(model, obs):
    model.eval()
    act = lambda model: model(obs).argmax().item()
    return act(nn.Linear(3, 1))
"""


def test_gl004_follows_an_eval_model_into_a_lambda_run_by_a_helper():
    found = lint_source(textwrap.dedent(EVALUATING), "t.py", PREVIEW)
    assert [(d.code, d.start.line) for d in found] == [("GL004", 22)]
    (finding,) = found
    # the call that runs it is named, and it is what the fix wraps; `.numpy()` of the
    # recorded output raises, which the finding says, with where
    assert [r.start.line for r in finding.related] == [21, 23, 22]
    assert "`.numpy()` on its output raises" in finding.message
    assert finding.fix is not None
    (edit,) = finding.fix.edits
    assert "run(env, policy)" in edit.content and "lambda" not in edit.content


HAND_WRITTEN = """
import torch
import torch.nn.functional as F


def evaluate(net, data):
    correct = 0
    for X, y in data:
        correct += (net(X).argmax(1) == y).sum().item()
    return correct


def train(data):
    w = torch.zeros(3, 2, requires_grad=True)
    net, loss = lambda X: X @ w, F.cross_entropy
    opt = torch.optim.SGD([w], lr=0.1)
    for X, y in data:
        opt.zero_grad()
        l = loss(net(X), y)
        l.backward()
        opt.step()
    print(evaluate(net, data))
"""


def test_a_lambda_of_leaf_tensors_handed_in_is_a_function_of_parameters():
    # d2l's `train_ch10`: `net, loss = lambda X: linreg(X, w, b), squared_loss` with w
    # and b requiring grad, then `evaluate_loss(net, data_iter, loss)`: the lambda reads
    # the leaves it closes over, so `net(X)` in the helper builds a graph
    assert findings(HAND_WRITTEN) == [("GL012", 9)]


def test_a_lambda_of_plain_tensors_is_no_function_of_parameters():
    # the same helper handed a lambda that cuts the graph of the leaf it reads
    source = HAND_WRITTEN.replace(
        "print(evaluate(net, data))", "print(evaluate(lambda X: X @ w.detach(), data))"
    )
    assert findings(source) == []


def test_old_variables_made_to_require_grad_are_leaves_the_lambda_reads():
    # d2l's `train_ch10` itself: `w = Variable(torch.from_numpy(w1), requires_grad=True)`
    # (torch 2.13: a leaf that requires grad, whatever it wraps)
    source = HAND_WRITTEN.replace(
        "w = torch.zeros(3, 2, requires_grad=True)",
        "w = Variable(torch.zeros(3, 2), requires_grad=True)",
    ).replace("import torch\n", "import torch\nfrom torch.autograd import Variable\n", 1)
    facts = _facts(source)
    lam = _lambda(facts, 16)
    (w,) = [n for n in facts.index.walk(lam.body) if type(n) is cst.Name and n.value == "w"]
    # read where the lambda is made: its closure's binding
    assert Kind.LEAF in facts.values.of_expr(w, lam)
    assert findings(source) == [("GL012", 10)]


# BMadir's PINN notebook: the hard boundary condition is a lambda bound to a name,
# wrapping the network; the grid prediction after each LBFGS step is only detached.
BOUND_LAMBDA = """
import torch
from torch import nn

net = nn.Linear(2, 1)
model = {bound}
optim = torch.optim.LBFGS(net.parameters())
x = torch.linspace(0, 1, 10).reshape(-1, 1)
for _ in range(3):
    optim.step(lambda: model(x, x).pow(2).mean())
    pred = model(x, x).detach().cpu()
    print(pred.mean())
"""


@pytest.mark.parametrize(
    ("bound", "expected"),
    [
        ("lambda x, y: x * (1 - x) * net(torch.cat([x, y], 1))", [("GL012", 11)]),
        ("lambda x, y: x * (1 - x) * y", []),  # no weights: nothing recorded
    ],
    ids=["wraps-the-network", "no-weights"],
)
def test_a_lambda_bound_to_a_name_runs_what_it_wraps_where_it_is_called(bound, expected):
    assert [f for f in findings(BOUND_LAMBDA.format(bound=bound)) if f[0] == "GL012"] == expected
