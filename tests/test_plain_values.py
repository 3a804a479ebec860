"""What the value model (gradlint.analysis.values) knows holds no graph: an environment's
data, a method of a plain value, one place of a returned tuple, a filled list, an
attribute set in its class. Each is asked of the last read of a name in the source."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from gradlint.analysis.facts import FileFacts
from gradlint.analysis.values import Kind, is_graph_free
from gradlint.config import Config
from gradlint.engine import lint_source


def value_of_last(source: str, name: str) -> frozenset[Kind]:
    facts = FileFacts(cst.parse_module(textwrap.dedent(source)))
    reads = [n for n in facts.index.nodes if type(n) is cst.Name and n.value == name]
    return facts.values.of_expr(reads[-1])


def test_an_environment_and_what_its_methods_hand_back_are_plain():
    source = """
        import gym
        env = gym.make("CartPole-v0")
        state, reward, done, _ = env.step(0)
        print(reward)
        """
    assert value_of_last(source, "reward") == {Kind.PYTHON}


def test_a_method_of_a_plain_value_keeps_the_history_of_its_arguments():
    source = """
        import gym
        env = gym.make("CartPole-v0")
        out = env.step(model(x))
        print(out)
        """
    assert Kind.UNKNOWN in value_of_last(source, "out")


def test_a_function_of_an_imported_module_is_no_method_of_a_plain_value():
    source = """
        import torch as T
        cell = T.nn.LSTMCell(4, 8)
        print(cell)
        """
    assert value_of_last(source, "cell") == {Kind.MODULE}


def test_one_place_of_a_returned_tuple():
    source = """
        class Policy(nn.Module):
            def act(self, state):
                action = self.forward(state).argmax()
                return action.item(), self.forward(state)[0, action]

        policy = Policy()

        def run(state):
            action, log_prob = policy.act(state)
            print(action, log_prob)
        """
    assert value_of_last(source, "action") == {Kind.PYTHON}
    assert not is_graph_free(value_of_last(source, "log_prob"))


def test_a_list_holds_what_is_appended_to_it():
    plain = """
        rewards = []
        for r in range(3):
            rewards.append(r * 0.5)
        print(rewards)
        """
    assert value_of_last(plain, "rewards") == {Kind.PYTHON}
    kept = """
        losses = []
        for x in xs:
            losses.append(model(x))
        print(losses)
        """
    assert not is_graph_free(value_of_last(kept, "losses"))
    updated = """
        d = []
        d.update(other)
        print(d)
        """
    assert value_of_last(updated, "d") == {Kind.UNKNOWN}


def test_an_attribute_is_what_its_class_binds_it_to():
    source = """
        import gym

        class Worker:
            def __init__(self, env_id):
                self.env = gym.make(env_id)

            def run(self):
                print(self.env)
        """
    facts = FileFacts(cst.parse_module(textwrap.dedent(source)))
    read = [n for n in facts.index.nodes if type(n) is cst.Attribute][-1]
    assert facts.values.of_expr(read) == {Kind.PYTHON}
    # bound on some object outside the class too: it may be this class's instance
    rebound = textwrap.dedent(source) + "\nWorker('x').env = make_model()\n"
    facts = FileFacts(cst.parse_module(rebound))
    read = [
        n
        for n in facts.index.nodes
        if type(n) is cst.Attribute and facts.index.scope_of(n) is not facts.index.module
    ][-1]
    assert facts.values.of_expr(read) == {Kind.UNKNOWN}


def test_a_loss_module_called_by_a_capitalised_name_computes_from_its_inputs():
    # `L1crit(...)` reads like a class being instantiated; bound to `nn.L1Loss()` it is
    # a loss whose output carries its inputs' history
    source = """
        import torch
        from torch import nn
        w = torch.zeros(3, requires_grad=True)
        L1crit = nn.L1Loss()
        def score():
            x, y = torch.ones(3), torch.zeros(3)
            err = L1crit(x * w, y)
            print(err)
        """
    assert value_of_last(source, "err") == {Kind.GRAPH}
    quiet = source.replace("err = L1crit", "with torch.no_grad():\n                err = L1crit")
    assert is_graph_free(value_of_last(quiet, "err"))


def test_a_layer_called_by_name_is_not_taken_for_a_loss():
    # a torch.nn layer holds weights: its output is not its inputs' value alone
    source = """
        import torch
        from torch import nn
        Proj = nn.Linear(3, 3)
        out = Proj(torch.zeros(3))
        print(out)
        """
    assert value_of_last(source, "out") != {Kind.TENSOR}


PYG_TRAIN = """
    import torch
    import torch.nn.functional as F
    from torch_geometric.loader import DataLoader

    train_loader = DataLoader(dataset, batch_size=32, shuffle=True)


    def train():
        total_loss = total_examples = 0
        for data in train_loader:
            data = data.to(device)
            optimizer.zero_grad()
            loss = F.mse_loss(model(data.x, data.edge_index, data.batch), data.y)
            loss.backward()
            optimizer.step()
            total_loss += {accumulated}
            total_examples += data.num_graphs
        return total_loss / total_examples
    """


def test_what_a_loaders_batch_holds_has_no_history():
    # a batch of graphs from PyTorch Geometric's loader: its fields were made outside
    # autograd, moved to the device or not
    source = PYG_TRAIN.format(accumulated="float(loss) * data.num_graphs")
    assert value_of_last(source, "data") <= {Kind.TENSOR}
    facts = FileFacts(cst.parse_module(textwrap.dedent(source)))
    fields = [
        n
        for n in facts.index.nodes
        if type(n) is cst.Attribute and n.attr.value in ("num_graphs", "y")
    ]
    assert fields and all(is_graph_free(facts.values.of_expr(f)) for f in fields)


@pytest.mark.parametrize(
    ("accumulated", "expected"),
    [
        ("float(loss) * data.num_graphs", []),  # rusty1s/pytorch_geometric's examples
        ("loss.item() * data.num_graphs", []),
        ("loss * data.num_graphs", ["GL006"]),  # the loss itself, with its graph
    ],
)
def test_a_batch_field_adds_no_graph_to_an_accumulator(accumulated, expected):
    found = lint_source(textwrap.dedent(PYG_TRAIN.format(accumulated=accumulated)), "train.py")
    assert [d.code for d in found if d.code == "GL006"] == expected


COLOR_FROM_VEC = """
    import numpy as np
    import torch
    from torch import nn

    model = nn.Linear(3, 2)


    def color_from_vec(vec, m=None):
        {guard}
        if not m:
            m = np.median(vec, axis=0)
        return np.array(vec < m)


    h = model(torch.randn(4, 3))
    print(color_from_vec(h[:, 0]))
    """


@pytest.mark.parametrize(
    ("guard", "raises"),
    [
        # dataflowr/notebooks: every tensor is detached and converted before the median
        ("if torch.is_tensor(vec):\n            vec = vec.detach().cpu().numpy()", False),
        ("if isinstance(vec, torch.Tensor):\n            vec = vec.detach().numpy()", False),
        (
            "if isinstance(vec, (list, torch.Tensor)):\n            vec = np.asarray(vec.detach())",
            False,
        ),
        # a test on something else, or a rebinding on one branch only: the tensor gets there
        ("if m is None:\n            vec = vec.detach().numpy()", True),
        ("if torch.is_tensor(vec):\n            print(vec.shape)", True),
    ],
)
def test_a_tensor_type_test_that_rebinds_narrows_what_reaches_the_numpy_call(guard, raises):
    (finding,) = [
        d
        for d in lint_source(textwrap.dedent(COLOR_FROM_VEC.format(guard=guard)), "t.py")
        if d.code == "GL012"
    ]
    assert ("raises" in finding.message) is raises


def test_the_else_of_a_tensor_type_test_sees_no_tensor():
    source = COLOR_FROM_VEC.format(guard="pass").replace(
        "        if not m:\n            m = np.median(vec, axis=0)\n",
        "        if torch.is_tensor(vec):\n            m = vec.detach().median()\n"
        "        else:\n            m = np.median(vec, axis=0)\n",
    )
    (finding,) = [d for d in lint_source(textwrap.dedent(source), "t.py") if d.code == "GL012"]
    assert "raises" not in finding.message


def test_an_environment_step_hands_back_data_whatever_the_action():
    # quantumiracle/Popular-RL-Algorithms: a hand-written environment class, stepped with
    # an action that still has its graph; the next state carried round the loop is data
    source = """
        import torch
        from reacher import Reacher

        env = Reacher()
        state = env.reset()
        for step in range(100):
            action, log_prob = actor.evaluate_action(state)
            next_state, reward, done, _ = env.step(action)
            loss = -log_prob * critic(next_state)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            state = next_state
        print(next_state)
        """
    assert is_graph_free(value_of_last(source, "next_state"))
    assert [d.code for d in lint_source(textwrap.dedent(source), "t.py") if d.code == "GL001"] == []
    # two results are no environment's step: whatever it is, it may hand the graph on
    two = source.replace(
        "next_state, reward, done, _ = env.step(action)", "next_state, reward = env.step(action)"
    )
    assert not is_graph_free(value_of_last(two, "next_state"))


def test_a_method_of_what_an_environment_hands_back_is_plain():
    # qfettes/DeepRL-Tutorials: `done` from a vectorised environment's step, an array
    source = """
        import numpy as np

        obs, reward, done, _ = envs.step(actions)
        masks = 1.0 - done.astype(np.float32)
        print(masks)
        """
    assert is_graph_free(value_of_last(source, "masks"))


@pytest.mark.parametrize(
    ("reduced", "expected"),
    [
        ("loss.detach().float()", []),  # huggingface/peft's semantic-search example
        ("loss.float()", ["GL006"]),  # the loss itself: its graph is gathered too
    ],
)
def test_a_framework_collective_keeps_only_its_inputs_history(reduced, expected):
    source = f"""
        from accelerate import Accelerator

        accelerator = Accelerator()
        for epoch in range(10):
            total_loss = 0
            for batch in loader:
                loss = model(**batch).loss
                total_loss += accelerator.reduce({reduced}, reduction="sum")
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        """
    found = lint_source(textwrap.dedent(source), "train.py")
    assert [d.code for d in found if d.code == "GL006"] == expected


def _branchy_forward(branches: int) -> str:
    """A hand-written forward over a layer list (MAML learners): `x` rebound on every
    branch of a loop, each binding reached by all the others."""
    arms = "\n".join(
        f"        {'if' if i == 0 else 'elif'} name == 'op{i}':\n"
        f"            x = F.linear(x, vars[{i}], vars[{i + 1}])"
        for i in range(branches)
    )
    return (
        "import torch\nimport torch.nn.functional as F\n\n\n"
        "def forward(x, vars, config):\n"
        "    for name in config:\n"
        f"{arms}\n"
        "    return x.sum()\n"
    )


@pytest.mark.parametrize("branches", [4, 8, 16])
def test_a_name_rebound_on_every_branch_of_a_loop_is_evaluated_once_per_binding(
    monkeypatch, branches
):
    # a cycle's value is kept while the evaluation it reached runs: without that, each
    # binding asked about every other one, 2**branches evaluations (a 16-branch
    # learner in fresh dev code took longer than any run's patience)
    facts = FileFacts(cst.parse_module(_branchy_forward(branches)))
    values = facts.values
    evaluated: list[object] = []
    original = values._binding_value

    def counted(node, name):
        evaluated.append(node)
        return original(node, name)

    monkeypatch.setattr(values, "_binding_value", counted)
    last_read = [n for n in facts.index.nodes if type(n) is cst.Name and n.value == "x"][-1]
    kinds = values.of_expr(last_read)
    assert Kind.PYTHON not in kinds and not is_graph_free(kinds)
    # each binding is evaluated about once per binding it reaches (4 branches: 12; it
    # was 66, and 109,602 for 8)
    assert len(evaluated) <= (branches + 2) ** 2


REQUIRES_GRAD_SET = """
import torch


def main():
    {name} = torch.zeros(100)
    {name}[30:] = 1
    {name}.requires_grad = {value}
    cost = ({name} * 2).sum()
    cost.backward()
"""


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("weights", "True", []),
        ('curves["car"]', "True", []),
        ("weights", "flag", []),  # may require grad: not known to raise
        ("weights", "False", ["GL009"]),
        ('curves["car"]', "False", ["GL009"]),
    ],
    ids=["attribute", "dict-key", "flag", "switched-off", "dict-key-switched-off"],
)
def test_requires_grad_set_as_an_attribute_makes_a_leaf(name, value, expected):
    """`x.requires_grad = True` after `x[30:] = 1` (Atcold/pytorch-PPUU's cost profile,
    on a dict's entry): the tensor is a leaf that requires grad from there on, as after
    `x.requires_grad_()`; its backward runs."""
    source = REQUIRES_GRAD_SET.format(name=name, value=value)
    if name.startswith("curves"):
        source = source.replace("    curves[", "    curves = dict()\n    curves[", 1)
    found = [d.code for d in lint_source(source, "cost.py", Config(select=("GL009",)))]
    assert found == expected


def test_an_optimizer_and_an_instance_of_a_class_of_this_file_are_objects():
    source = """
        import torch

        class baseline:
            def __init__(self, model):
                self.model = model

        model = torch.nn.Linear(4, 1)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
        lll_object = baseline(model)
        print(optimizer, scheduler, lll_object)
        """
    for name in ("optimizer", "scheduler", "lll_object"):
        assert value_of_last(source, name) == {Kind.OBJECT}, name


# ML2022-Spring HW14 (continual learning): each task trains with a new optimizer and
# a new regulariser object built from the model; neither is a tensor with a graph.
CONTINUAL_TASKS = """
import torch
from torch import nn


class baseline:
    def __init__(self, model, dataloader):
        self.model = model

    def penalty(self, model):
        return 0.0


def train(model, optimizer, dataloader, lll_object):
    for imgs, labels in dataloader:
        loss = nn.functional.cross_entropy(model(imgs), labels) + lll_object.penalty(model)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model, optimizer


model = nn.Linear(4, 3)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
lll_object = baseline(model=model, dataloader=None)
for loader in [[(torch.randn(8, 4), torch.zeros(8, dtype=torch.long))]]:
    model, _ = train(model, optimizer, loader, lll_object)
    lll_object = baseline(model=model, dataloader=loader)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
"""


def test_a_new_optimizer_and_regulariser_per_task_carry_no_graph():
    findings = lint_source(CONTINUAL_TASKS, "hw14.py", Config(select=("GL001",)))
    assert findings == []


def test_a_legacy_tensor_of_sizes_holds_no_history():
    # navneet-nmk/pytorch-rl's InfoGAN: `torch.FloatTensor(batch_size, noise_dim)`, sizes
    # (not data: a single argument may be either) for the noise
    source = """
        import torch

        def train(self, data):
            noise = torch.FloatTensor(self.batch_size, self.noise_dim)
            copied = torch.FloatTensor(data)
            print(noise, copied)
        """
    assert value_of_last(source, "noise") == {Kind.TENSOR}
    assert value_of_last(source, "copied") == {Kind.UNKNOWN}


# mask-rcnn's statistics: a method called on what `.data` hands on reads no history
MASK_RCNN_STATISTICS = """
import torch


def train_epoch(model, datagenerator, optimizer, steps):
    loss_sum = 0
    for inputs in datagenerator:
        rpn_class_loss, rpn_bbox_loss = model.predict(inputs)
        loss = rpn_class_loss + rpn_bbox_loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss_sum += loss.data.cpu()[0] / steps
    return loss_sum
"""


def test_an_accumulation_read_off_data_keeps_no_graph():
    assert lint_source(MASK_RCNN_STATISTICS, "model.py", Config(select=("GL006",))) == []
    kept = MASK_RCNN_STATISTICS.replace("loss.data.cpu()[0] / steps", "loss.cpu() / steps")
    assert [d.code for d in lint_source(kept, "model.py", Config(select=("GL006",)))] == ["GL006"]


def test_a_helper_of_another_file_that_wraps_its_argument_in_a_tensor_carries_its_history(
    tmp_path,
):
    # navneet-nmk/pytorch-rl's `to_tensor(v, use_cuda)`: `torch.cuda.FloatTensor(v)` or
    # `torch.FloatTensor(v)`, chosen by a flag; an environment's state stays data
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(
        textwrap.dedent(
            """\
            import torch


            def to_tensor(v, use_cuda=True):
                if use_cuda:
                    v = torch.cuda.FloatTensor(v)
                else:
                    v = torch.FloatTensor(v)
                return v
            """
        )
    )
    train = textwrap.dedent(
        """\
        import gym
        import torch
        from utils import to_tensor


        def run(model, opt, cuda):
            env = gym.make("CartPole-v1")
            state = to_tensor(env.reset(), use_cuda=cuda)
            for t in range(100):
                loss = model(state).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
                state = to_tensor({carried}, use_cuda=cuda)
        """
    )
    path = tmp_path / "train.py"
    config = Config(select=("GL001",))
    # the state wrapped again on every step, as the repository does: data, no history
    path.write_text(train.format(carried="state"))
    assert lint_source(path.read_text(), str(path), config) == []
    path.write_text(train.format(carried="state + model(state)"))
    assert [d.code for d in lint_source(path.read_text(), str(path), config)] == ["GL001"]


def test_a_batch_taken_with_next_from_a_loader_has_no_history():
    # PyTorchStepByStep's chapter 7: `iterator = iter(loader)`, then `next(iterator)`
    source = """
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        loader = DataLoader(TensorDataset(torch.rand(20, 2)), batch_size=4)
        iterator = iter(loader)
        first = next(iterator)
        second = next(iter(loader))
        unknown = next(iter(source_of_batches))
        print(first[0], second, unknown)
        """
    assert value_of_last(source, "first") == {Kind.TENSOR}
    assert value_of_last(source, "second") == {Kind.TENSOR}
    assert value_of_last(source, "unknown") == {Kind.UNKNOWN}
