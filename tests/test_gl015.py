"""GL015's pieces beyond its fixtures: the loop facts it needs for loops without backward,
and the fix that puts a whole loop under `torch.no_grad()`."""

from __future__ import annotations

import textwrap

import libcst as cst

from gradlint.analysis.facts import FileFacts
from gradlint.config import Config
from gradlint.engine import lint_source
from gradlint.fixes import fix_source

GL015 = Config(preview=True, select=("GL015",))

SAMPLER = textwrap.dedent(
    """\
    import torch
    from torch import nn

    cell = nn.GRUCell(4, 8)


    def sample(steps):
        h = torch.zeros(1, 8)
        x = torch.zeros(1, 4)
        for _ in range(steps):
            # one step of the cell
            h = cell(x, h)
            x = torch.nn.functional.one_hot(h.argmax(-1), 4).float()
        return h
    """
)


def test_state_facts_fill_in_what_a_loop_without_backward_carries():
    module = cst.parse_module(SAMPLER)
    facts = FileFacts(module)
    (loop,) = facts.index.loops
    assert facts.loops.facts(loop).carried == set()  # GL001's view: nothing differentiates
    assert facts.loops.state_facts(loop).carried == {"h", "x"}


def test_the_fix_indents_the_whole_loop_under_no_grad_and_keeps_its_comments():
    outcome = fix_source(SAMPLER, "sampler.py", GL015, unsafe=True)
    expected = SAMPLER.replace(
        "    for _ in range(steps):\n"
        "        # one step of the cell\n"
        "        h = cell(x, h)\n"
        "        x = torch.nn.functional.one_hot(h.argmax(-1), 4).float()\n",
        "    with torch.no_grad():\n"
        "        for _ in range(steps):\n"
        "            # one step of the cell\n"
        "            h = cell(x, h)\n"
        "            x = torch.nn.functional.one_hot(h.argmax(-1), 4).float()\n",
    )
    assert outcome.source == expected
    assert not lint_source(outcome.source, "sampler.py", GL015)


def test_no_fix_when_a_string_in_the_loop_spans_lines():
    # Indenting the loop's lines would change the text of the string.
    source = SAMPLER.replace(
        "        # one step of the cell\n",
        '        print("""step\n    done""")\n',
    )
    assert source != SAMPLER
    (finding,) = lint_source(source, "sampler.py", GL015)
    assert finding.code == "GL015"
    assert finding.fix is None


def _one(source: str):
    (found,) = lint_source(textwrap.dedent(source), "loop.py", GL015)
    return found


def test_a_sampler_over_a_count_run_once_is_bounded_waste_and_a_hint():
    found = _one(SAMPLER + "\nprint(sample(100))\n")
    assert (found.group.value, found.impact.value, found.severity.value) == (
        "waste",
        "once",
        "hint",
    )


def test_the_same_sampler_run_on_every_batch_is_a_warning():
    found = _one(
        SAMPLER
        + """
for batch in loader:
    print(sample(batch.size(0)))
"""
    )
    assert (found.group.value, found.impact.value, found.severity.value) == (
        "waste",
        "per-batch",
        "warning",
    )


def test_a_graph_carried_over_the_data_a_loop_walks_is_a_leak_even_once():
    found = _one(
        """\
        import torch
        from torch import nn

        net = nn.Linear(4, 1)
        total = torch.zeros(1)
        for x, y in test_loader:
            total = total + (net(x) - y).abs().mean()
        print(total.item())
        """
    )
    assert (found.group.value, found.severity.value) == ("leak", "warning")


def test_a_state_a_helper_detaches_in_place_carries_no_graph():
    # howardyclo/pytorch-seq2seq-example: `detach_hidden(decoder_hidden)` calls
    # `h.detach_()` on each tensor of the LSTM state it is handed, every step
    helper = textwrap.dedent(
        """\
        def detach_hidden(hidden):
            if isinstance(hidden, torch.Tensor):
                hidden.detach_()
            else:
                for h in hidden:
                    h.detach_()


        """
    )
    detached = SAMPLER.replace("def sample(steps):", helper + "def sample(steps):").replace(
        "        x = torch.nn", "        detach_hidden(h)\n        x = torch.nn"
    )
    assert "detach_hidden(h)\n" in detached
    assert [d.code for d in lint_source(SAMPLER, "s.py", GL015)] == ["GL015"]
    assert lint_source(detached, "s.py", GL015) == []
    # a helper that only reads its argument detaches nothing
    reading = detached.replace("hidden.detach_()", "print(hidden)").replace(
        "h.detach_()", "print(h)"
    )
    assert [d.code for d in lint_source(reading, "s.py", GL015)] == ["GL015"]


# -- a tuple handed back by a method of a class in another file --------------------------

LSTM_POLICY = """
    import torch
    from torch import nn


    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 8)
            self.head = nn.Linear(8, 2)

        def forward(self, state, last_action, hidden_in):
            out, hidden_out = self.lstm(torch.cat([state, last_action], -1), hidden_in)
            return self.head(out), hidden_out

        def get_action(self, state, last_action, hidden_in):
            state = torch.FloatTensor(state)
            last_action = torch.FloatTensor(last_action)
            action, hidden_out = self.forward(state, last_action, hidden_in)
            return action.detach().cpu().numpy()[0][0], HIDDEN


    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(4, 2)

        def get_action(self, state):
            return self.head(torch.FloatTensor(state))
"""

LSTM_ROLLOUT = """
    import torch
    from nets import Policy

    policy = Policy()
    state = [0.0, 0.0]
    last_action = [0.0, 0.0]
    hidden_out = (torch.zeros(1, 1, 8), torch.zeros(1, 1, 8))
    for step in range(100):
        hidden_in = hidden_out
        action, hidden_out = policy.get_action(state, last_action, hidden_in)
        last_action = action
"""


def _project_findings(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    path = tmp_path / "run.py"
    found = lint_source(path.read_text(encoding="utf-8"), str(path), GL015)
    return sorted((d.start.line, d.message.split("`")[1]) for d in found)


def test_a_place_every_definition_returns_detached_carries_no_graph(tmp_path):
    # `action` is read off `.detach().cpu().numpy()` in the one `get_action` whose
    # parameters the call fits (the feed-forward one takes no hidden state); the hidden
    # state carries the LSTM's graph from step to step
    files = {"setup.py": "", "nets.py": LSTM_POLICY.replace("HIDDEN", "hidden_out")}
    assert _project_findings(tmp_path, {**files, "run.py": LSTM_ROLLOUT}) == [(10, "hidden_out")]


def test_a_place_returned_with_its_graph_is_carried(tmp_path):
    nets = LSTM_POLICY.replace("action.detach().cpu().numpy()[0][0], HIDDEN", "action, hidden_out")
    files = {"setup.py": "", "nets.py": nets, "run.py": LSTM_ROLLOUT}
    assert _project_findings(tmp_path, files) == [(10, "hidden_out"), (11, "last_action")]


PER_LEVEL_HEAD = textwrap.dedent(
    """\
    import torch
    from torch import nn
    import torch.nn.functional as F


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.score = nn.Conv2d(8, 2, 1)

        def {method}(self, features):
            scores, probs = [], []
            for i in range(len(features)):
                score = self.score(features[i])
                scores.append(score.flatten(1))
                probs.append(F.softmax(score, 1).flatten(1))
            keep = torch.cat(probs, 1).data > 0.5
            return torch.cat(scores, 1), keep
    """
)


def test_what_a_models_forward_collects_per_level_is_part_of_one_forward():
    """A detection head's forward collects one output per feature level; the
    probabilities read as `.data` hang off the scores the caller backpropagates, and
    the lists are dropped when the forward returns (jwyang/fpn.pytorch's RPN)."""
    source = PER_LEVEL_HEAD.format(method="forward")
    assert [d.code for d in lint_source(source, "head.py", GL015)] == []


def test_the_same_collection_in_a_sampling_method_is_still_reported():
    source = PER_LEVEL_HEAD.format(method="propose")
    assert [d.code for d in lint_source(source, "head.py", GL015)] == ["GL015"]


NESTED_STEP = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class {cls}:
        def __init__(self):
            super().__init__()
            self.glimpse = nn.Linear(8, 8)

        def {method}(self, h, steps):
            def recurrence(g_l):
                for _ in range(steps):
                    g_l = torch.tanh(self.glimpse(g_l))
                return g_l

            outputs = []
            for _ in range(steps):
                h = recurrence(h)
                outputs.append(h)
            return outputs
    """
)


def test_a_step_function_nested_in_a_modules_forward_is_part_of_the_forward():
    """pemami4911's pointer network: `recurrence` inside `Decoder.forward` carries its
    glimpse through a loop; the caller differentiates what the forward returns."""
    source = NESTED_STEP.format(cls="Decoder(nn.Module)", method="forward")
    assert [d.code for d in lint_source(source, "decoder.py", GL015)] == []


def test_the_same_step_in_a_plain_class_is_still_a_graph_kept_for_nothing():
    source = NESTED_STEP.format(cls="Sampler", method="sample")
    assert "GL015" in [d.code for d in lint_source(source, "sampler.py", GL015)]


FED_BACK_OVER_A_LENGTH = textwrap.dedent(
    """\
    import torch
    from torch import nn

    cell = nn.GRUCell(4, 4)


    def generate(x, stats):
        h = torch.zeros(1, 4)
        inp = x[:, 0]
        outs = []
        for t in range(x.size(1)):
            h = cell(inp, h)
            inp = h
            outs.append(h.detach())
            {body}
        return outs
    """
)


def test_an_attribute_named_like_the_index_is_no_read_of_it():
    """`for t in range(x.size(1))` feeding the cell's output back walks none of x's steps
    unless the body reads `t`; `stats.t = 1` names an attribute, not the index."""
    fed_back = FED_BACK_OVER_A_LENGTH.format(body="stats.t = 1")
    assert "GL015" in [d.code for d in lint_source(fed_back, "gen.py", GL015)]
    stepped = FED_BACK_OVER_A_LENGTH.format(body="stats.steps = t")
    assert [d.code for d in lint_source(stepped, "gen.py", GL015)] == []
