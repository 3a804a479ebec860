"""A call that could not run a method (a keyword it has no parameter for, one positional
argument too many) is a call of another class's method of the same name (issue
"Generalise": the fresh development repository CQL's `policy.get_action(state,
eval=True)`, an agent's method, is not a call of its actor's `get_action(self, state)`,
which the agent only calls under `no_grad`)."""

from __future__ import annotations

import ast

from test_project import write

from gradlint.analysis.arguments import Signature, ast_shape_of
from gradlint.engine import lint_file


def _shape(source: str):
    call = ast.parse(source, mode="eval").body
    assert isinstance(call, ast.Call)
    return ast_shape_of(call)


def test_a_signature_admits_what_it_can_bind():
    get_action = Signature(positional=("self", "state"), receiver="instance")
    assert get_action.admits(_shape("a.get_action(s)"), receiver_passed=True)
    assert not get_action.admits(_shape("a.get_action(s, eval=True)"), receiver_passed=True)
    assert not get_action.admits(_shape("a.get_action(s, True)"), receiver_passed=True)
    assert get_action.admits(_shape("a.get_action(*args)"), receiver_passed=True)
    assert get_action.admits(_shape("a.get_action(s, **kw)"), receiver_passed=True)
    with_kwargs = Signature(positional=("self", "state"), receiver="instance", var_keyword=True)
    assert with_kwargs.admits(_shape("a.get_action(s, eval=True)"), receiver_passed=True)
    with_args = Signature(positional=("self",), receiver="instance", var_positional=True)
    assert with_args.admits(_shape("a.get_action(s, t, u)"), receiver_passed=True)
    positional_only = Signature(
        positional=("self", "state"), positional_only=2, receiver="instance"
    )
    assert not positional_only.admits(_shape("a.get_action(state=s)"), receiver_passed=True)
    function = Signature(positional=("x",))
    assert function.admits(_shape("f(1)"), receiver_passed=False)
    assert not function.admits(_shape("f(1, 2)"), receiver_passed=False)


AGENT = {
    ".git/HEAD": "",
    "networks.py": """
        import torch
        from torch import nn


        class Actor(nn.Module):
            def __init__(self):
                super().__init__()
                self.mu = nn.Linear(3, 1)

            def forward(self, state):
                return self.mu(state)

            def get_action(self, state):
                return torch.tanh(self.forward(state)).detach().cpu()
    """,
    "agent.py": """
        import torch
        from networks import Actor


        class Agent:
            def __init__(self):
                self.actor_local = Actor()

            def get_action(self, state, eval=False):
                with torch.no_grad():
                    action = self.actor_local.get_action(state)
                return action.numpy()
    """,
    "train.py": """
        import torch
        from agent import Agent


        def evaluate(policy, states):
            return [policy.get_action(s, eval=True) for s in states]


        print(evaluate(Agent(), torch.randn(4, 3)))
    """,
}


def test_a_call_the_method_could_not_take_is_not_its_call(tmp_path):
    write(tmp_path, AGENT)
    result = lint_file(tmp_path / "networks.py")
    assert result.error is None, result.error
    assert [d.code for d in result.diagnostics] == []


def test_a_call_the_method_could_take_on_an_object_of_unknown_class_still_counts(tmp_path):
    write(
        tmp_path,
        {**AGENT, "train.py": AGENT["train.py"].replace("s, eval=True", "s")},
    )
    result = lint_file(tmp_path / "networks.py")
    assert result.error is None, result.error
    assert [d.code for d in result.diagnostics] == ["GL012"]


DQN_AGENT = """
    import torch
    import torch.nn.functional as F


    class DQNAgent:
        def __init__(self, dqn_model, selector, softmax=False):
            self.dqn_model = dqn_model
            self.selector = selector
            self.softmax = softmax

        def __call__(self, states):
            q_v = self.dqn_model(states)
            if self.softmax:
                q_v = F.softmax(q_v, dim=1)
            q = q_v.data.cpu().numpy()
            return self.selector(q)

        def preprocess(self, states):
            return self.selector(states)
    """


def test_a_model_kept_in_self_whose_result_is_detached_is_a_model(tmp_path):
    # ptan's agents (fixed upstream by @torch.no_grad() on __call__): the network is
    # handed in, out of sight, but its output is taken with `.data`, a graph the code
    # knows is there; the selector's output is not, and is no forward.
    write(tmp_path, {".git/HEAD": "", "agent.py": DQN_AGENT})
    result = lint_file(tmp_path / "agent.py")
    assert result.error is None, result.error
    assert [(d.code, d.start.line) for d in result.diagnostics] == [("GL012", 12)]


def test_a_function_parameter_whose_result_is_detached_says_nothing(tmp_path):
    # a score function handed in may differentiate inside (a Langevin sampler): its
    # `.detach()` is no evidence that running it under no_grad would be safe
    source = """
        import torch


        def sample_score_field(score_fn, x):
            scores = score_fn(x).detach()
            return scores.cpu().numpy()
    """
    write(tmp_path, {".git/HEAD": "", "fields.py": source})
    result = lint_file(tmp_path / "fields.py")
    assert result.error is None, result.error
    assert [d.code for d in result.diagnostics] == []
