"""A comprehension is a scope of its own (Python 3): its `for` names are read inside it
and gone after it, and the name outside it is the enclosing scope's. Shapes from a DQN
training script (uvipen's Flappy-bird): the acting forward's `prediction` shares its
name with the variable of the generator that builds the TD target, and the state stacks
four frames with `torch.cat(tuple(image for _ in range(4)))`."""

from __future__ import annotations

import textwrap

import libcst as cst

from gradlint.config import Config
from gradlint.context import FileContext
from gradlint.engine import lint_source

PREVIEW = Config(preview=True)

NETWORK = """\
import torch
import torch.nn as nn


class DeepQNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

"""

# The acting forward's result is only argmax-ed and printed; the generator's own
# `prediction` (the target's) is a different variable.
ACTING_AND_TARGET = NETWORK + textwrap.dedent(
    """\

    def train(env, batches, gamma):
        model = DeepQNetwork()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        criterion = nn.MSELoss()
        state = torch.from_numpy(env.reset())
        for state_batch, action_batch, reward_batch, next_state_batch in batches:
            prediction = model(state)[0]
            action = torch.argmax(prediction).item()
            state = torch.from_numpy(env.step(action))
            next_prediction_batch = model(next_state_batch)
            y_batch = torch.cat(
                tuple(
                    reward + gamma * torch.max(prediction)
                    for reward, prediction in zip(reward_batch, next_prediction_batch)
                )
            )
            q_value = torch.sum(model(state_batch) * action_batch, dim=1)
            optimizer.zero_grad()
            loss = criterion(q_value, y_batch)
            loss.backward()
            optimizer.step()
            print(torch.max(prediction))
    """
)


def _lines(source: str, code: str) -> list[int]:
    return sorted(d.start.line for d in lint_source(source, "train.py", PREVIEW) if d.code == code)


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_a_comprehension_reads_its_own_variable_not_the_functions():
    # before, the generator's `torch.max(prediction)` (differentiated through the
    # target) counted as a read of the acting forward's result: no GL012
    assert _lines(ACTING_AND_TARGET, "GL012") == [
        _line_of(ACTING_AND_TARGET, "prediction = model(state)[0]")
    ]


def test_a_target_made_in_a_comprehension_over_zip_is_followed_to_its_forward():
    # `r + gamma * max(p) for r, p in zip(rewards, next_q)`: each `p` is an element of
    # the online network's output, joined to the reward (a residual-gradient update)
    assert _lines(ACTING_AND_TARGET, "GL013") == [
        _line_of(ACTING_AND_TARGET, "next_prediction_batch = model(next_state_batch)")
    ]


def test_a_comprehensions_variable_reaches_nothing_after_it():
    source = textwrap.dedent(
        """\
        def f(xs):
            x = 0
            ys = [x * 2 for x in xs]
            return x, ys
        """
    )
    context = FileContext("f.py", source, cst.parse_module(source))
    index = context.facts.index
    names = [n for n in index.of_types(cst.Name) if n.value == "x"]
    outer, element, target, returned = names
    assert type(index.parent[target]) is cst.CompFor
    bindings = context.facts.values.reaching_bindings("x", returned)
    assert [type(b).__name__ for b in bindings] == ["Assign"]
    assert context.facts.values.reaching_bindings("x", element) == [index.parent[target]]


def test_the_first_iterable_of_a_comprehension_is_read_outside_it():
    source = textwrap.dedent(
        """\
        def f(x):
            x = [1, 2]
            return [x for x in x]
        """
    )
    context = FileContext("f.py", source, cst.parse_module(source))
    index = context.facts.index
    iterable = [n for n in index.of_types(cst.Name) if n.value == "x"][-1]
    bindings = context.facts.values.reaching_bindings("x", iterable)
    assert [type(b).__name__ for b in bindings] == ["Assign"]


FRAME_STACK = NETWORK + textwrap.dedent(
    """\
    from random import sample


    def train(env, num_iters):
        model = DeepQNetwork()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        image = torch.from_numpy(env.reset())
        state = torch.cat(tuple(image for _ in range(4)))[None, :]
        replay_memory = []
        for _ in range(num_iters):
            next_image = torch.from_numpy(env.step(0))
            next_state = torch.cat((state[0, 1:], next_image))[None, :]
            replay_memory.append([state, next_state])
            batch = sample(replay_memory, 32)
            state_batch, next_state_batch = zip(*batch)
            q = model(torch.cat(tuple(s for s in state_batch))).sum()
            optimizer.zero_grad()
            q.backward()
            optimizer.step()
            state = next_state
    """
)


def test_tuple_of_a_generator_holds_what_its_elements_hold():
    # frames from the environment, stacked: no history to carry (a false GL001 error)
    assert _lines(FRAME_STACK, "GL001") == []
    history = FRAME_STACK.replace(
        "state = torch.cat(tuple(image for _ in range(4)))[None, :]",
        "state = torch.cat(tuple(model(image) for _ in range(4)))[None, :]",
    )
    assert _lines(history, "GL001") == [_line_of(history, "state = next_state")]
