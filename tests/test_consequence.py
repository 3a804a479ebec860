"""Consequence groups, impact from context, the severities they give, and the summary
and exit status that follow (issue 20)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gradlint import codes
from gradlint.analysis.impact import is_test_path
from gradlint.cli import main
from gradlint.config import Config, ConfigError, load_settings
from gradlint.diagnostics import Group, Impact, Severity
from gradlint.engine import ALL_RULES, FileResult, lint_source
from gradlint.output import write_report

CODES = [r.code for r in ALL_RULES]

HEAD = (
    "import torch\n"
    "from torch import nn\n"
    "model = nn.Linear(4, 2)\n"
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
)
# GL006 after a backward that frees the graph: only nodes are kept (waste); with
# retain_graph=True every activation is (leak).
GL006_AFTER_BACKWARD = (
    HEAD + "total = 0\n"
    "for x in loader:\n"
    "    loss = model(x).sum()\n"
    "    opt.zero_grad()\n"
    "    loss.backward()\n"
    "    opt.step()\n"
    "    total += loss\n"
)
GL006_RETAINED = GL006_AFTER_BACKWARD.replace("backward()", "backward(retain_graph=True)")
GL001_SECOND_BACKWARD = (
    "import torch\n"
    "w = torch.nn.Parameter(torch.ones(3))\n"
    "h = torch.zeros(3)\n"
    "for _ in range(3):\n"
    "    h = torch.tanh(h * w)\n"
    "    h.sum().backward()\n"
)
GL001_RETAINED = GL001_SECOND_BACKWARD.replace("backward()", "backward(retain_graph=True)")
GL008_WITH = "import torch\nwith torch.no_grad:\n    pass\n"
GL008_BARE = "import torch\ntorch.no_grad()\n"
# GL012 in three places: a batch loop, an epoch loop's own body, and module level.
GL012_THREE = (
    HEAD + "for epoch in range(3):\n"
    "    for x in loader:\n"
    "        loss = model(x).sum()\n"
    "        opt.zero_grad()\n"
    "        loss.backward()\n"
    "        opt.step()\n"
    "        print(model(x).argmax().item())\n"
    "    print(model(x).argmax().item())\n"
    "print(model(x).argmax().item())\n"
)


def one(source: str, path: str = "train.py", config: Config | None = None):
    (finding,) = lint_source(source, path, config)
    return finding


# --- groups --------------------------------------------------------------------------


def test_every_rule_has_a_group_in_the_codes_table():
    for rule in ALL_RULES:
        assert rule.group is codes.group_of(rule.code) is not None, rule.code
        assert rule.group in codes.groups_of(rule.code)
    assert codes.group_of("GL100") is None


@pytest.mark.parametrize(
    ("source", "code", "group"),
    [
        (GL001_SECOND_BACKWARD, "GL001", Group.CRASH),
        (GL001_RETAINED, "GL001", Group.LEAK),
        (GL006_AFTER_BACKWARD, "GL006", Group.WASTE),
        (GL006_RETAINED, "GL006", Group.LEAK),
        (GL008_WITH, "GL008", Group.CRASH),
        (GL008_BARE, "GL008", Group.WASTE),
    ],
)
def test_the_shape_decides_the_group_of_a_finding(source, code, group):
    finding = one(source)
    assert (finding.code, finding.group) == (code, group)


def test_gl006_states_what_is_kept():
    assert "only the graph's nodes (one per operation" in one(GL006_AFTER_BACKWARD).message
    assert "every iteration's activations stay alive" in one(GL006_RETAINED).message


def test_group_names_select_and_ignore_findings():
    assert lint_source(GL006_AFTER_BACKWARD, "t.py", Config(ignore=("waste",))) == []
    assert one(GL006_RETAINED, config=Config(ignore=("waste",))).group is Group.LEAK
    assert lint_source(GL006_RETAINED, "t.py", Config(select=("crash",))) == []
    assert one(GL001_SECOND_BACKWARD, config=Config(select=("crash",))).code == "GL001"
    # A full code is more specific than a group; a group more than any prefix.
    assert one(GL006_AFTER_BACKWARD, config=Config(select=("GL006",), ignore=("waste",)))
    assert (
        lint_source(GL006_AFTER_BACKWARD, "t.py", Config(select=("GL00",), ignore=("waste",))) == []
    )
    config = Config(select=("crash",))
    assert config.enabled_codes("t.py") >= {"GL001", "GL002", "GL008"}
    assert "GL007" not in config.enabled_codes("t.py")  # trains wrong, never raises


def test_per_file_ignores_take_group_names(tmp_path):
    config = Config(per_file_ignores={"scripts/*": ("waste",)}, root=str(tmp_path))
    assert lint_source(GL006_AFTER_BACKWARD, "scripts/x.py", config) == []
    assert one(GL006_RETAINED, "scripts/x.py", config).group is Group.LEAK
    assert one(GL006_AFTER_BACKWARD, "train.py", config)


def settings(tmp_path: Path, table: str, **overrides):
    (tmp_path / "pyproject.toml").write_text(f"[tool.gradlint]\n{table}\n", encoding="utf-8")
    from gradlint.config import Overrides

    return load_settings(tmp_path, all_codes=CODES, overrides=Overrides(**overrides))


def test_a_command_line_ignore_of_a_group_keeps_the_files_selection(tmp_path):
    config = settings(tmp_path, 'select = ["GL006", "GL001"]', ignore=("leak",)).config
    assert one(GL006_AFTER_BACKWARD, config=config).group is Group.WASTE
    assert lint_source(GL006_RETAINED, "t.py", config) == []
    assert lint_source(GL001_RETAINED, "t.py", config) == []
    assert one(GL001_SECOND_BACKWARD, config=config).group is Group.CRASH


def test_severity_takes_group_names_and_hint(tmp_path):
    config = settings(tmp_path, 'severity = { waste = "error", GL001 = "hint" }').config
    assert one(GL006_AFTER_BACKWARD, config=config).severity is Severity.ERROR
    assert one(GL006_RETAINED, config=config).severity is Severity.WARNING
    assert one(GL001_SECOND_BACKWARD, config=config).severity is Severity.HINT
    with pytest.raises(ConfigError, match="groups: crash, wrong, leak, waste"):
        settings(tmp_path, 'select = ["crashes"]')
    with pytest.raises(ConfigError, match="fail-on: expected one of"):
        settings(tmp_path, 'fail-on = "fatal"')


# --- impact --------------------------------------------------------------------------


def test_impact_follows_the_loops():
    found = lint_source(GL012_THREE, "train.py")
    assert [(d.start.line, d.impact, d.severity) for d in found] == [
        (11, Impact.PER_BATCH, Severity.WARNING),
        (12, Impact.PER_EPOCH, Severity.HINT),
        (13, Impact.ONCE, Severity.HINT),
    ]


def test_periodic_code_and_small_loops_run_as_often_as_their_context():
    source = (
        HEAD + "def sample_images(zs):\n"
        "    for z in zs:\n"
        "        print(model(z).argmax().item())\n"
        "for step, x in enumerate(loader):\n"
        "    loss = model(x).sum()\n"
        "    opt.zero_grad()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    if step % 100 == 0:\n"
        "        sample_images([x])\n"
    )
    finding = one(source)
    assert (finding.impact, finding.severity) == (Impact.PER_EPOCH, Severity.HINT)
    # called on every batch, the same loop is hot
    every = source.replace("    if step % 100 == 0:\n        sample_images", "    sample_images")
    assert one(every).impact is Impact.PER_BATCH
    # a loop over a few classes after the batch loop runs once per epoch
    classes = GL012_THREE.replace(
        "    print(model(x).argmax().item())\nprint",
        "    for c in range(4):\n        print(model(x).argmax().item())\nprint",
    )
    assert [d.impact for d in lint_source(classes, "train.py")][1] is Impact.PER_EPOCH
    # a loop over a few things at module level runs once
    few = HEAD + "for z in [torch.ones(4), torch.zeros(4)]:\n    print(model(z).argmax().item())\n"
    assert one(few).impact is Impact.ONCE


def test_a_periodic_branch_that_trains_is_the_training_step():
    # `if i % d_every == 0:` around the discriminator's update is the training itself:
    # the generator forward detached for it runs every time that branch does
    source = (
        HEAD + "gen = nn.Linear(4, 4)\n"
        "for i, x in enumerate(loader):\n"
        "    if i % d_every == 0:\n"
        "        fake = gen(x).detach()\n"
        "        loss = model(fake).sum()\n"
        "        opt.zero_grad()\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "    if i % 100 == 0:\n"
        "        print(gen(x).argmax().item())\n"
    )
    found = {d.start.line: d.impact for d in lint_source(source, "train.py")}
    assert found == {8: Impact.PER_BATCH, 14: Impact.PER_EPOCH}, found


def test_a_loops_else_and_iterable_run_once():
    # `else:` runs after the last iteration, a `for` loop's iterable before the first
    after_loop = (
        HEAD + "for x in loader:\n"
        "    loss = model(x).sum()\n"
        "    opt.zero_grad()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "else:\n"
        "    print(model(x).argmax().item())\n"
    )
    assert one(after_loop).impact is Impact.ONCE
    iterable = HEAD + "for p in model(torch.ones(4)).argmax(0).tolist():\n    print(p)\n"
    assert one(iterable).impact is Impact.ONCE


def test_waste_on_a_batch_of_one_is_a_hint():
    source = (
        HEAD + "def act(state):\n"
        "    q = model(state.unsqueeze(0))\n"
        "    return q.argmax().item()\n"
        "for step in range(100):\n"
        "    a = act(torch.ones(4))\n"
        "    loss = model(torch.ones(8, 4)).sum()\n"
        "    opt.zero_grad()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
    )
    finding = one(source)
    assert (finding.impact, finding.severity) == (Impact.PER_BATCH, Severity.HINT)
    batch = source.replace("state.unsqueeze(0)", "state")
    assert one(batch).severity is Severity.WARNING


@pytest.mark.parametrize(
    ("made", "one_sample"),
    [
        ("torch.unsqueeze(state, 0)", True),
        ("np.expand_dims(state, 0)", True),
        ("state.reshape(1, -1)", True),
        ("state.view(1, 4)", True),
        ("torch.tensor(np.array([state]))", True),
        ("torch.FloatTensor([state])", True),
        ("state[np.newaxis]", True),
        ("state.reshape(-1, 4)", False),
        ("torch.unsqueeze(state, 1)", False),
        ("torch.tensor(np.array(state))", False),
    ],
)
def test_the_idioms_of_a_batch_of_one(made: str, one_sample: bool):
    source = (
        "import numpy as np\n" + HEAD + "def act(state):\n"
        f"    s = {made}\n"
        "    return model(s).argmax().item()\n"
        "for step in range(100):\n"
        "    a = act(torch.ones(4))\n"
        "    loss = model(torch.ones(8, 4)).sum()\n"
        "    opt.zero_grad()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
    )
    expected = Severity.HINT if one_sample else Severity.WARNING
    assert one(source).severity is expected


# A DQN agent's loop: the action chosen on the environment's observation each step, and a
# target forward on a replay batch for the update in the same loop.
AGENT = (
    HEAD + "import gym\n"
    "target_model = nn.Linear(4, 2)\n"
    "env = gym.make('CartPole-v1')\n"
    "def select_action(state):\n"
    "    return model(torch.FloatTensor(state).to('cpu')).argmax().item()\n"
    "def update(batch):\n"
    "    best = target_model(batch).argmax(1).tolist()\n"
    "    loss = model(batch)[:, best].pow(2).mean()\n"
    "    opt.zero_grad()\n"
    "    loss.backward()\n"
    "    opt.step()\n"
    "state = env.reset()\n"
    "for frame in range(10000):\n"
    "    action = select_action(state)\n"
    "    next_state, reward, done, _ = env.step(action)\n"
    "    state = next_state\n"
    "    update(torch.randn(32, 4))\n"
)


def _line_of(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def test_an_action_chosen_on_the_environments_observation_is_a_hint():
    """The observation `env.reset()` or `env.step(action)` hands back is one sample (or a
    vectorised environment's few): the agent's per-step forward on it costs a few KB,
    while the update's forward on a replay batch in the same loop stays a warning."""
    found = {d.start.line: d for d in lint_source(AGENT, "agent.py", Config(select=("GL012",)))}
    action = found[_line_of(AGENT, "return model(torch.FloatTensor")]
    target = found[_line_of(AGENT, "best = target_model(batch)")]
    assert (action.impact, action.severity) == (Impact.PER_BATCH, Severity.HINT)
    assert (target.impact, target.severity) == (Impact.PER_BATCH, Severity.WARNING)


@pytest.mark.parametrize(
    "case",
    [
        # gymnasium's reset gives (obs, info), its step five values
        (
            ("state = env.reset()", "state, info = env.reset()"),
            ("next_state, reward, done, _ = env.step(action)", "next_state = walker.step(action)"),
            True,
        ),
        (
            ("state = env.reset()", "state = walker.step(0)"),
            ("next_state, reward, done, _ =", "next_state, reward, done, trunc, info ="),
            True,
        ),
        # the observation kept on the agent: `self.obs`, set from the environment
        (("action = select_action(state)", "action = select_action(agent.obs)"), False),
        # a step not unpacked into an observation, a reward and more is no environment's
        (
            ("state = env.reset()", "state = walker.step(0)"),
            ("next_state, reward, done, _ = env.step(action)", "next_state = walker.step(action)"),
            False,
        ),
        # one caller passing a replay batch: the function is not only an agent's action
        (
            (
                "    update(torch.randn(32, 4))",
                "    update(torch.randn(32, 4))\nselect_action(torch.randn(64, 4))",
            ),
            False,
        ),
    ],
)
def test_what_counts_as_an_observation(case: tuple):
    *changes, one_sample = case
    source = AGENT
    for old, new in changes:
        assert old in source
        source = source.replace(old, new)
    found = {d.start.line: d for d in lint_source(source, "agent.py", Config(select=("GL012",)))}
    action = found[_line_of(source, "return model(torch.FloatTensor")]
    assert (action.severity is Severity.HINT) is one_sample


def test_an_observation_the_agent_keeps_on_self():
    source = (
        HEAD + "import gym\n"
        "class Runner:\n"
        "    def __init__(self):\n"
        "        self.env = gym.make('Pendulum-v1')\n"
        "        self.obs = self.env.reset()\n"
        "    def steps(self, n):\n"
        "        for s in range(n):\n"
        "            mean = model(torch.tensor(self.obs))\n"
        "            action = mean.data.cpu().numpy()\n"
        "            new_obs, reward, done, _ = self.env.step(action)\n"
        "            self.obs = new_obs\n"
    )
    (finding,) = lint_source(source, "runner.py", Config(select=("GL012",)))
    assert finding.severity is Severity.HINT
    other = source.replace("model(torch.tensor(self.obs))", "model(torch.tensor(self.batch))")
    (finding,) = lint_source(other, "runner.py", Config(select=("GL012",)))
    assert finding.severity is Severity.WARNING


def test_impact_follows_the_callers_in_the_file():
    source = (
        HEAD + "def predict(x):\n"
        "    return model(x).argmax().item()\n"
        "for x in loader:\n"
        "    loss = model(x).sum()\n"
        "    opt.zero_grad()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    predict(x)\n"
    )
    assert one(source).impact is Impact.PER_BATCH
    once = source.replace("    predict(x)\n", "") + "predict(x)\n"
    assert one(once).impact is Impact.ONCE
    # no caller in sight: the name decides, and an unknown one is taken as hot
    assert one(source.replace("    predict(x)\n", "")).impact is Impact.PER_BATCH
    plot = source.replace("predict", "plot_scores").replace("    plot_scores(x)\n", "")
    assert one(plot).impact is Impact.ONCE


def test_code_under_tests_has_test_impact():
    assert one(GL006_AFTER_BACKWARD, "tests/test_train.py").impact is Impact.TEST
    # a script named like a test (`test_net.py`, `pmnist_test.py`) is one only when it
    # holds tests or imports a test framework
    assert one(GL006_AFTER_BACKWARD, "pkg/train_test.py").impact is Impact.PER_BATCH
    with_pytest = "import pytest\n" + GL006_AFTER_BACKWARD
    assert one(with_pytest, "pkg/train_test.py").impact is Impact.TEST
    in_function = "def test_loop():\n" + "".join(
        "    " + line + "\n" for line in GL006_AFTER_BACKWARD.splitlines()
    )
    finding = one(in_function, "check.py")
    assert (finding.impact, finding.severity) == (Impact.TEST, Severity.HINT)
    # a `test_*` function that returns a value is a metric, not a pytest test
    metric = in_function.replace("def test_loop():", "def test_loss():") + "    return total\n"
    assert one(metric, "check.py").impact is not Impact.TEST
    # ... nor is one the file calls itself (pytest calls its tests): a detector's
    # `test_net(net, imdb)` run once after `net.eval()` (longcw/yolo2-pytorch's test.py)
    called = in_function + "test_loop()\n"
    assert one(called, "check.py").impact is Impact.PER_BATCH
    assert is_test_path("conftest.py") and is_test_path("a/test/b.py")
    assert not is_test_path("src/testament.py")


def test_min_impact_filters():
    config = Config(min_impact="per-epoch")
    assert [d.impact for d in lint_source(GL012_THREE, "train.py", config)] == [
        Impact.PER_BATCH,
        Impact.PER_EPOCH,
    ]


# A helper with a batch loop of its own, one without, and calls of each from a
# per-batch loop, an epoch's body, module level and a test function.
COST_SOURCES = (
    HEAD + "def looping(net):\n"
    "    for x in loader:\n"
    "        net(x)\n"
    "def single(net):\n"
    "    net(x)\n"
    "for epoch in range(3):\n"
    "    for x in loader:\n"
    "        loss = model(x).sum()\n"
    "        loss.backward()\n"
    "        single(model)\n"
    "    looping(model)\n"
    "    single(model)\n"
    "single(model)\n"
    "def test_it():\n"
    "    single(model)\n"
)


@pytest.mark.parametrize(
    ("reported", "cost", "impact"),
    [
        # as often as the reported node runs: the forward in `single` as its most
        # frequent call
        ("single(model)@2", None, Impact.ONCE),
        ("net(x)@1", None, Impact.PER_BATCH),
        # only some calls pay: the most frequent of them, not the reported node's
        ("net(x)@1", ("paid_by", ["single(model)@1"]), Impact.PER_EPOCH),
        ("net(x)@1", ("paid_by", ["single(model)@2"]), Impact.ONCE),
        ("net(x)@1", ("paid_by", ["single(model)@2", "single(model)@0"]), Impact.PER_BATCH),
        # ... but a per-batch loop around the reported node in its function still is
        ("net(x)@0", ("paid_by", ["single(model)@2"]), Impact.PER_BATCH),
        # a helper's forward in a loop of its own pays per batch, whatever its call
        ("looping(model)@0", ("in_helper", "net(x)@0"), Impact.PER_BATCH),
        ("single(model)@2", ("in_helper", "net(x)@1"), Impact.ONCE),
        # a loop out of sight: per batch, but in a test
        ("single(model)@2", ("in_loop_elsewhere",), Impact.PER_BATCH),
        ("single(model)@3", ("in_loop_elsewhere",), Impact.TEST),
        ("single(model)@3", ("paid_by", ["single(model)@0"]), Impact.TEST),
    ],
)
def test_one_cost_source_gives_the_impact(reported, cost, impact):
    """ImpactAnalysis.of turns where a finding's cost comes from (CostSource) into its
    impact; `text@n` is the n-th call whose source is `text`."""
    import libcst as cst

    from gradlint.analysis.impact import CostSource
    from gradlint.context import FileContext

    context = FileContext("train.py", COST_SOURCES, cst.parse_module(COST_SOURCES))

    def call(spec: str) -> cst.Call:
        text, _, nth = spec.partition("@")
        calls = [c for c in context.index.calls if context.module.code_for_node(c) == text]
        return calls[int(nth)]

    source = None
    if cost is not None:
        kind, *args = cost
        if kind == "paid_by":
            source = CostSource.paid_by(call(c) for c in args[0])
        elif kind == "in_helper":
            source = CostSource.in_helper(call(reported), call(args[0]))
        else:
            source = CostSource.in_loop_elsewhere()
    assert context.impact.of(call(reported), source) is impact


# --- GL012's .numpy() claim ------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "raises"),
    [
        ("model(x).numpy()", True),
        ("model(x).round().numpy()", True),  # round keeps requires_grad
        ("torch.multinomial(torch.softmax(model(x), -1), 1).numpy()", False),
        ("model(x).topk(1)[1].numpy()", False),
        ("model(x).sort(1)[1].numpy()", False),
        ("model(x).max(1)[0].numpy()", True),
    ],
)
def test_gl012_claims_numpy_raises_only_when_the_tensor_requires_grad(expression, raises):
    source = HEAD + f"for x in loader:\n    a = {expression}\n"
    assert ("`.numpy()` on it raises" in one(source).message) is raises


@pytest.mark.parametrize(
    ("expression", "raises"),
    [
        ("model(x).cpu().numpy()", True),
        ("model(x).detach().cpu().numpy()", False),  # no graph left: GL004 for the waste only
        ("model(x).argmax(1).numpy()", False),  # indices never require grad
    ],
)
def test_gl004_eval_forward_read_with_numpy_is_a_crash_only_when_it_raises(expression, raises):
    """An evaluation forward whose output goes to `.numpy()` does not waste memory: the
    read raises. That is an error, as GL012 says of the same read in training mode."""
    source = HEAD + f"def predict(x):\n    model.eval()\n    return {expression}\n"
    finding = one(source)
    assert finding.code == "GL004"
    assert ("`.numpy()` on its output raises" in finding.message) is raises
    assert (finding.group is Group.CRASH) is raises
    assert (finding.severity is Severity.ERROR) is raises


def test_gl004_claims_no_crash_for_a_method_that_may_return_numpy():
    """pytorch-semseg's `ic.tile_predict(img)` runs its forward under `.data` and hands
    back a numpy array: `np.argmax` of it raises nothing."""
    source = (
        "import numpy as np\nimport torch\nfrom torch import nn\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n"
        "    def forward(self, x):\n        return self.fc(x)\n"
        "    def tile_predict(self, x):\n        return self.fc(x)\n"
        "def demo(x):\n    net = Net()\n    net.eval()\n"
        "    out = net.tile_predict(x)\n    return np.argmax(out, axis=1)\n"
    )
    finding = one(source)
    assert finding.code == "GL004"
    assert "raises" not in finding.message and finding.group is not Group.CRASH


@pytest.mark.parametrize(
    ("returned", "raises"),
    [
        ("self.fc(x)", True),
        ("self.fc(x).argmax(1)", False),  # indices: nothing to refuse
        ("self.fc(x).detach()", False),
    ],
)
def test_gl004_asks_the_local_forward_what_it_returns(returned, raises):
    """`clf(x).cpu().numpy()` raises only when the class's own forward hands back a
    tensor that requires grad; one that returns `argmax` or `.detach()` still records
    for nothing (waste), but the read runs (checked on torch)."""
    source = (
        "import torch\nfrom torch import nn\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n"
        f"    def forward(self, x):\n        return {returned}\n"
        "def predict(x):\n    net = Net()\n    net.eval()\n    return net(x).cpu().numpy()\n"
    )
    # (a forward that returns `argmax` is also GL012's: its own recording is for nothing)
    finding = one(source, config=Config(select=("GL004",)))
    assert ("`.numpy()` on its output raises" in finding.message) is raises
    assert (finding.group is Group.CRASH) is raises


# --- reports -------------------------------------------------------------------------


def render(fmt: str, source: str, path: str = "t.py", **options) -> str:
    results = [FileResult(path, lint_source(source, path), None, source)]
    stream = io.StringIO()
    write_report(fmt, results, stream, **options)
    return stream.getvalue()


def test_summary_counts_each_level():
    text = render("concise", GL012_THREE)
    assert text.splitlines()[-2] == "Found 1 warning, 2 hints."
    assert "Found 1 error." in render("concise", GL001_SECOND_BACKWARD)


def test_text_report_puts_what_matters_first_in_each_file_and_across_with_sort_impact():
    lines = render("concise", GL012_THREE[: -len("print(model(x).argmax().item())\n")]).splitlines()
    # the hint at module level of a second file, and the per-batch one of the first
    first = FileResult("a.py", lint_source(GL012_THREE, "a.py"), None, GL012_THREE)
    second = FileResult("b.py", lint_source(GL006_RETAINED, "b.py"), None, GL006_RETAINED)
    stream = io.StringIO()
    write_report("concise", [first, second], stream)
    rows = [line.split(":")[:2] for line in stream.getvalue().splitlines()[:4]]
    assert rows == [["a.py", "11"], ["a.py", "12"], ["a.py", "13"], ["b.py", "11"]]
    stream = io.StringIO()
    write_report("concise", [first, second], stream, sort="impact")
    rows = [line.split(":")[:2] for line in stream.getvalue().splitlines()[:4]]
    assert rows == [["a.py", "11"], ["b.py", "11"], ["a.py", "12"], ["a.py", "13"]]
    # within one file: the hint after the warnings even when it comes first
    reordered = HEAD + "print(model(x).argmax().item())\n" + GL012_THREE[len(HEAD) :]
    rows = [line.split(":")[1] for line in render("concise", reordered).splitlines()[:3]]
    assert rows == ["12", "13", "5"]
    assert lines  # the source without the module-level line still reports


def test_every_format_carries_group_and_impact(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert render("concise", GL012_THREE).splitlines()[2].endswith("[hint, waste, once]")
    assert "note: waste: a bounded cost per call; runs once" in render("full", GL012_THREE)
    assert render("full", GL012_THREE).count("hint: GL012 ") == 2
    objects = json.loads(render("json", GL012_THREE))
    assert [(o["group"], o["impact"], o["severity"]) for o in objects][-1] == (
        "waste",
        "once",
        "hint",
    )
    results = json.loads(render("sarif", GL012_THREE))["runs"][0]["results"]
    assert [r["level"] for r in results] == ["warning", "note", "note"]
    assert results[0]["rank"] > results[1]["rank"] > results[2]["rank"]
    assert results[0]["properties"]["impact"] == "per-batch"
    github = render("github", GL012_THREE).splitlines()
    assert github[2].startswith("::notice ") and "[hint, waste, once]" in github[2]


def test_lsp_shows_a_hint_as_a_hint_with_its_context():
    pytest.importorskip("pygls")
    from lsprotocol import types
    from pygls.workspace.position_codec import PositionCodec

    from gradlint.lsp import ClientPositions, to_lsp_diagnostic

    positions = ClientPositions(GL012_THREE, PositionCodec())
    hint = lint_source(GL012_THREE, "t.py")[-1]
    shown = to_lsp_diagnostic(hint, positions)
    assert shown.severity == types.DiagnosticSeverity.Hint
    assert shown.data == {"group": "waste", "impact": "once"}


def test_flake8_messages_say_level_group_and_impact():
    from gradlint.flake8_plugin import GradlintChecker

    lines = GL012_THREE.splitlines(keepends=True)
    messages = [m for _, _, m, _ in GradlintChecker(None, "train.py", lines).run()]
    assert messages[-1].endswith("[hint, waste, once]")


# --- exit status ---------------------------------------------------------------------


def run(args: list[str], monkeypatch) -> tuple[int, str]:
    stream = io.StringIO()
    monkeypatch.setattr("sys.stdout", stream)
    return main(args), stream.getvalue()


def test_exit_status_follows_fail_on(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    once = HEAD + "x = torch.ones(4)\nprint(model(x).argmax().item())\n"
    (tmp_path / "a.py").write_text(once, encoding="utf-8")
    status, out = run(["--no-cache", "a.py"], monkeypatch)
    assert (status, out.splitlines()[-2]) == (0, "Found 1 hint.")
    status, _ = run(["--no-cache", "--fail-on", "hint", "a.py"], monkeypatch)
    assert status == 1
    (tmp_path / "b.py").write_text(GL006_AFTER_BACKWARD, encoding="utf-8")
    status, _ = run(["--no-cache", "b.py"], monkeypatch)
    assert status == 1
    status, _ = run(["--no-cache", "--fail-on", "error", "b.py"], monkeypatch)
    assert status == 0
    (tmp_path / "pyproject.toml").write_text('[tool.gradlint]\nfail-on = "error"\n')
    status, _ = run(["--no-cache", "b.py"], monkeypatch)
    assert status == 0


# --- impact across files ---------------------------------------------------------------

MODEL_PY = (
    "import torch\n"
    "from torch import nn\n"
    "net = nn.Linear(4, 2)\n"
    "def generate_labels(x):\n"
    "    return net(x).argmax().item()\n"
)
TRAIN_LOOP = (
    "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
    "for x in loader:\n"
    "    loss = net(x).sum()\n"
    "    opt.zero_grad()\n"
    "    loss.backward()\n"
    "    opt.step()\n"
)


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path / "model.py"


def _impact_in(model: Path) -> Impact:
    (finding,) = lint_source(model.read_text(encoding="utf-8"), str(model))
    return finding.impact


IMPORTS = "import torch\nfrom model import net, generate_labels\n"


def test_a_function_called_from_another_files_batch_loop_runs_per_batch(tmp_path):
    # by its name alone `generate_labels` runs once; train.py calls it on every batch
    in_loop = IMPORTS + TRAIN_LOOP + "    generate_labels(x)\n"
    model = _project(tmp_path, {"model.py": MODEL_PY, "train.py": in_loop})
    (finding,) = lint_source(MODEL_PY, str(model))
    assert (finding.impact, finding.severity) == (Impact.PER_BATCH, Severity.WARNING)
    # called once, at the end of the script: once, a hint
    (tmp_path / "train.py").write_text(IMPORTS + TRAIN_LOOP + "generate_labels(x)\n")
    assert _impact_in(model) is Impact.ONCE
    # the name alone decides without the project (a file linted from stdin)
    assert lint_source(MODEL_PY, "-")[0].impact is Impact.ONCE


def test_impact_from_another_file_reaches_every_front(tmp_path, monkeypatch):
    """flake8, the language server and the CLI read the project from the file's path."""
    pytest.importorskip("pygls")
    from pygls.workspace.position_codec import PositionCodec

    from gradlint.flake8_plugin import GradlintChecker
    from gradlint.lsp import ClientPositions, to_lsp_diagnostic

    in_loop = IMPORTS + TRAIN_LOOP + "    generate_labels(x)\n"
    model = _project(tmp_path, {"model.py": MODEL_PY, "train.py": in_loop})
    lines = MODEL_PY.splitlines(keepends=True)
    (message,) = [m for _, _, m, _ in GradlintChecker(None, str(model), lines).run()]
    assert message.endswith("[warning, waste, per-batch]")
    (finding,) = lint_source(MODEL_PY, str(model))
    shown = to_lsp_diagnostic(finding, ClientPositions(MODEL_PY, PositionCodec()))
    assert shown.data == {"group": "waste", "impact": "per-batch"}
    monkeypatch.chdir(tmp_path)
    for fmt in ("json", "sarif"):
        _, out = run(["--no-cache", "--output-format", fmt, "model.py"], monkeypatch)
        if fmt == "sarif":
            (result,) = json.loads(out)["runs"][0]["results"]
            assert (result["level"], result["properties"]["impact"]) == ("warning", "per-batch")
        else:
            (item,) = json.loads(out)
            assert (item["group"], item["impact"], item["severity"]) == (
                "waste",
                "per-batch",
                "warning",
            )


def test_the_callers_loops_and_function_decide_as_in_the_linted_file(tmp_path):
    epoch = (
        IMPORTS + "for epoch in range(3):\n"
        "    for x in loader:\n"
        "        net(x).sum().backward()\n"
        "    generate_labels(x)\n"
    )
    model = _project(tmp_path, {"model.py": MODEL_PY, "train.py": epoch})
    assert _impact_in(model) is Impact.PER_EPOCH
    periodic = IMPORTS + TRAIN_LOOP + "    if step % 100 == 0:\n        generate_labels(x)\n"
    (tmp_path / "train.py").write_text(periodic)
    assert _impact_in(model) is Impact.PER_EPOCH
    # a few classes' loop runs as often as its function: `run_batch` by its name
    small = IMPORTS + "def run_batch(x):\n    for c in classes:\n        generate_labels(x)\n"
    (tmp_path / "train.py").write_text(small)
    assert _impact_in(model) is Impact.PER_BATCH
    (tmp_path / "train.py").write_text(small.replace("run_batch", "plot_classes"))
    assert _impact_in(model) is Impact.ONCE


def test_callers_in_tests_leave_the_name_to_decide(tmp_path):
    # a function only tests call is an entry point of a library: its name decides
    called = "from model import run_step\ndef test_it():\n    run_step(x)\n"
    source = MODEL_PY.replace("generate_labels", "run_step")
    model = _project(tmp_path, {"model.py": source, "tests/test_model.py": called})
    assert _impact_in(model) is Impact.PER_BATCH
    once = IMPORTS.replace("generate_labels", "run_step") + "run_step(x)\n"
    (tmp_path / "train.py").write_text(once)
    assert _impact_in(model) is Impact.ONCE  # the script's call, not the test's


def test_a_method_called_from_another_files_loop_follows_its_instance(tmp_path):
    agent = (
        "import torch\n"
        "from torch import nn\n"
        "class Agent:\n"
        "    def __init__(self):\n"
        "        self.net = nn.Linear(4, 2)\n"
        "    def show_action(self, x):\n"
        "        return self.net(x).argmax().item()\n"
    )
    loop = (
        "from model import Agent\n"
        "agent = Agent()\n"
        "for step in range(1000):\n"
        "    agent.show_action(state)\n"
    )
    model = _project(tmp_path, {"model.py": agent, "train.py": loop})
    assert _impact_in(model) is Impact.PER_BATCH  # `show_*` alone would be once
    other = loop.replace("agent = Agent()", "agent = Critic()")
    (tmp_path / "train.py").write_text(other)
    assert _impact_in(model) is Impact.ONCE  # another class's method of that name


def test_a_notebook_caller_counts_like_a_script(tmp_path):
    cells = [IMPORTS, TRAIN_LOOP + "    generate_labels(x)\n"]
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": text} for text in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    model = _project(tmp_path, {"model.py": MODEL_PY, "train.ipynb": json.dumps(notebook)})
    assert _impact_in(model) is Impact.PER_BATCH


def test_the_cli_cache_relints_when_the_caller_changes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, {"model.py": MODEL_PY, "train.py": IMPORTS + "generate_labels(x)\n"})
    args = ["--output-format", "json", "model.py"]
    _, out = run(args, monkeypatch)
    assert [d["impact"] for d in json.loads(out)] == ["once"]
    _, out = run(args, monkeypatch)  # warm: the cached result keeps group and impact
    assert [(d["group"], d["impact"], d["severity"]) for d in json.loads(out)] == [
        ("waste", "once", "hint")
    ]
    (tmp_path / "train.py").write_text(IMPORTS + TRAIN_LOOP + "    generate_labels(x)\n")
    _, out = run(args, monkeypatch)
    assert [(d["impact"], d["severity"]) for d in json.loads(out)] == [("per-batch", "warning")]


@pytest.mark.parametrize(
    ("count", "severity"),
    [("GEN_PASSES", Severity.WARNING), ("1", Severity.WARNING), ("n", Severity.ERROR)],
)
def test_a_pitfall_that_cannot_bite_as_configured_is_at_most_a_warning(count, severity):
    # GL014 in a loop that runs once loses no micro-batch until its count grows
    source = (
        "import torch\n"
        "GEN_PASSES = 1\n\n\n"
        "def train(generator, critic, opt_g, noise, n):\n"
        f"    for _ in range({count}):\n"
        "        generator.zero_grad()\n"
        "        (-critic(generator(noise)).mean()).backward()\n"
        "    opt_g.step()\n"
    )
    config = Config(preview=True)
    (finding,) = [d for d in lint_source(source, "train.py", config) if d.code == "GL014"]
    assert finding.severity is severity
    assert ("nothing is lost yet" in finding.message) is (severity is Severity.WARNING)


TRAIN_THEN_TEST = (
    HEAD + "for epoch in range(10):\n"
    "    for x, y in train_loader:\n"
    "        loss = (model(x) - y).pow(2).mean()\n"
    "        opt.zero_grad()\n"
    "        loss.backward()\n"
    "        opt.step()\n"
    "model.eval()\n"
    "correct = 0\n"
    "for x, y in test_loader:\n"
    "    correct += (model(x).argmax(1) == y).sum().item()\n"
)


def test_a_test_pass_run_once_after_training_is_a_hint():
    """One pass over the test set, once in the run: its forwards are paid per batch of
    that pass, a bounded cost next to the training's; the same pass every epoch is paid
    all through the run and stays a warning."""
    (finding,) = lint_source(TRAIN_THEN_TEST, "train.py", Config(select=("GL004",)))
    assert (finding.impact, finding.severity) == (Impact.PER_BATCH, Severity.HINT)
    every_epoch = TRAIN_THEN_TEST.replace(
        "model.eval()\ncorrect = 0\nfor x, y in test_loader:\n"
        "    correct += (model(x).argmax(1) == y).sum().item()\n",
        "    model.eval()\n    correct = 0\n    for x, y in test_loader:\n"
        "        correct += (model(x).argmax(1) == y).sum().item()\n    model.train()\n",
    )
    assert every_epoch != TRAIN_THEN_TEST
    (finding,) = lint_source(every_epoch, "train.py", Config(select=("GL004",)))
    assert finding.severity is Severity.WARNING
    # an inference script: the pass is the whole run
    inference = HEAD + TRAIN_THEN_TEST[TRAIN_THEN_TEST.index("model.eval()") :]
    (finding,) = lint_source(inference, "predict.py", Config(select=("GL004",)))
    assert finding.severity is Severity.WARNING


def test_a_test_function_called_once_and_a_stream_of_frames():
    as_function = (
        TRAIN_THEN_TEST.replace(
            "correct = 0\nfor x, y in test_loader:\n    correct +=",
            "def test():\n    correct = 0\n    for x, y in test_loader:\n        correct +=",
        )
        + "test()\n"
    )
    (finding,) = lint_source(as_function, "train.py", Config(select=("GL004",)))
    assert finding.severity is Severity.HINT
    # a camera's frames: a stream as long as the run, whatever runs it once
    stream = TRAIN_THEN_TEST.replace(
        "for x, y in test_loader:\n    correct += (model(x).argmax(1) == y).sum().item()\n",
        "while True:\n    x = camera.read()\n    correct += (model(x).argmax(1) == 1).sum().item()\n",
    )
    (finding,) = lint_source(stream, "train.py", Config(select=("GL004",)))
    assert finding.severity is Severity.WARNING
