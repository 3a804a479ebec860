"""A method called on an object the code is handed, whose class it cannot tell (issue
"Generalise": roles inferred from use, across the project): a trainer built with an
agent (`self.ddpg = ddpg`), or a function given one (`def train(agent, batches)`), calls
`agent.fit_batch(x, y)`. Whichever class of the project is handed in, the call runs one
of the methods of that name its classes define, so what all of them do is what the call
does: each backpropagates its loss and returns it, and the trainer keeping those losses
in a list keeps every step's graph (GL006). What such a call returns is not read off
those classes (the object may be a library's); a list numpy alone reads holds no graph
in code that runs."""

from __future__ import annotations

from pathlib import Path

from test_project import preview_findings, write

from gradlint.config import Config
from gradlint.diagnostics import Group
from gradlint.engine import lint_file

DDPG = """
import torch
from torch import nn


class DDPG:
    def __init__(self):
        self.critic = nn.Linear(4, 1)
        self.opt = torch.optim.Adam(self.critic.parameters())

    def fit_batch(self, x, y):
        if x is None:
            return None, None
        self.opt.zero_grad()
        loss = nn.functional.mse_loss(self.critic(x), y)
        loss.backward()
        self.opt.step()
        return loss, loss.detach()

    def get_action(self, x):
        return self.critic(x).data.cpu().numpy()[0]
"""

TRAINER = """
import numpy as np


class Trainer:
    def __init__(self, ddpg, batches):
        self.ddpg = ddpg
        self.batches = batches

    def train(self):
        for epoch in range(100):
            epoch_losses = []
            for x, y in self.batches:
                critic_loss, actor_loss = self.ddpg.fit_batch(x, y)
                if critic_loss is not None:
                    epoch_losses.append(critic_loss)
            print(sum(epoch_losses))


def train(agent, batches):
    history = []
    actions = []
    for x, y in batches:
        loss, _ = agent.fit_batch(x, y)
        history.append(loss)
        actions.append(agent.get_action(x))
    return history, np.mean(actions)
"""

KEPT_IN_TRAINER = 15  # epoch_losses.append(critic_loss)
KEPT_IN_FUNCTION = 24  # history.append(loss)

MAIN = """
import torch
from agent import DDPG
from trainer import Trainer, train

batches = [(torch.randn(8, 4), torch.randn(8, 1))] * 10
Trainer(DDPG(), batches).train()
train(DDPG(), batches)
"""


def _lint(tmp_path: Path, files: dict[str, str]) -> list[tuple[int, str]]:
    (tmp_path / ".git").mkdir()  # a repository's checkout: its folders are one project
    write(tmp_path, {"trainer.py": TRAINER, "main.py": MAIN, **files})
    return preview_findings(tmp_path / "trainer.py")


def test_the_losses_a_handed_in_agent_returns_keep_their_graphs(tmp_path: Path):
    assert _lint(tmp_path, {"agent.py": DDPG}) == [
        (KEPT_IN_TRAINER, "GL006"),
        (KEPT_IN_FUNCTION, "GL006"),
    ]


def test_every_class_defining_the_method_counts(tmp_path: Path):
    # a second agent whose step hands back numbers: which one is handed in is not known
    other = DDPG.replace("class DDPG", "class SAC").replace(
        "return loss, loss.detach()", "return loss.item(), 0.0"
    )
    main = MAIN + "from sac import SAC\ntrain(SAC(), batches)\n"
    assert _lint(tmp_path, {"agent.py": DDPG, "sac.py": other, "main.py": main}) == []


def test_a_method_the_call_cannot_run_does_not(tmp_path: Path):
    # SAC's fit_batch returns three values and takes none: `a, b = agent.fit_batch(x, y)`
    # cannot be a call of it
    other = (
        DDPG.replace("class DDPG", "class SAC")
        .replace("def fit_batch(self, x, y):", "def fit_batch(self):\n        x = y = None")
        .replace("return None, None", "return None, None, None")
        .replace("return loss, loss.detach()", "return loss.item(), 0.0, 0.0")
    )
    main = MAIN + "from sac import SAC\ntrain(SAC(), batches)\n"
    assert _lint(tmp_path, {"agent.py": DDPG, "sac.py": other, "main.py": main}) == [
        (KEPT_IN_TRAINER, "GL006"),
        (KEPT_IN_FUNCTION, "GL006"),
    ]


def test_a_method_that_returns_numbers_everywhere_keeps_no_graph(tmp_path: Path):
    numbers = DDPG.replace("return loss, loss.detach()", "return loss.item(), 0.0")
    assert _lint(tmp_path, {"agent.py": numbers}) == []


def test_an_object_the_class_of_which_the_file_tells_is_not_read_by_name(tmp_path: Path):
    # `self.ddpg = ddpg` bound again to a plain object: not only what is handed in
    trainer = TRAINER.replace(
        "        self.batches = batches\n",
        "        self.batches = batches\n\n    def reset(self):\n        self.ddpg = object()\n",
    )
    found = _lint(tmp_path, {"agent.py": DDPG, "trainer.py": trainer})
    assert (KEPT_IN_TRAINER + 3, "GL006") not in found


def test_an_optimizer_step_is_never_read_as_a_projects_step(tmp_path: Path):
    # a project class whose `step` backpropagates and returns its loss does not make
    # `optimizer.step()` of a handed-in optimizer a training step
    stepper = DDPG.replace("def fit_batch", "def step")
    trainer = """
def train(model, optimizer, batches):
    kept = []
    for x, y in batches:
        out = optimizer.step(lambda: 0.0)
        kept.append(out)
    return kept
"""
    assert _lint(tmp_path, {"agent.py": stepper, "trainer.py": trainer}) == []


def test_a_tensor_an_agent_hands_back_kept_in_the_training_loop(tmp_path: Path):
    # the loop trains a model of its own and keeps what the handed-in agent's `get_action`
    # returns: the actor's output with its graph. What a handed-in object's method
    # returns is not read off the project's classes of that name: the object may be a
    # library's (a test of lint_source found a fixture's `generate` taken for a VAE's)
    trainer = """
def train(agent, model, optimizer, batches):
    actions = []
    for x, y in batches:
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        actions.append(agent.get_action(x))
    return sum(actions)
"""
    tensor = DDPG.replace("return self.critic(x).data.cpu().numpy()[0]", "return self.critic(x)")
    assert _lint(tmp_path, {"agent.py": tensor, "trainer.py": trainer}) == [(8, "GL006")]


POLICY = """
from torch import nn
from noise import clip_action


class Agent:
    def __init__(self):
        self.actor = nn.Linear(4, 2)

    def act(self, x):
        return clip_action(self.actor(x))
"""

RUNNER = """
import numpy as np


class Runner:
    def __init__(self, policy):
        self.policy = policy

    def train(self, model, optimizer, batches):
        actions = []
        for x, y in batches:
            loss = (model(x) - y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            actions.append(self.policy.act(x))
        return np.mean(actions)
"""


def test_a_list_numpy_alone_reads_holds_no_graph(tmp_path: Path):
    # what `self.policy.act(x)` hands back runs the actor and is out of sight after
    # (`clip_action` of a library), but `np.mean(actions)` would raise on a tensor that
    # requires grad: the code that runs keeps none
    main = "from agent import Agent\nfrom trainer import Runner\nRunner(Agent())\n"
    assert _lint(tmp_path, {"agent.py": POLICY, "trainer.py": RUNNER, "main.py": main}) == []
    summed = RUNNER.replace("return np.mean(actions)", "return sum(actions)")
    (tmp_path / "summed").mkdir()
    assert _lint(
        tmp_path / "summed", {"agent.py": POLICY, "trainer.py": summed, "main.py": main}
    ) == [(15, "GL006")]
    # the loss the loop backpropagates, kept so, is a crash at the numpy call, and
    # still reported
    losses = RUNNER.replace("actions.append(self.policy.act(x))", "actions.append(loss)")
    (tmp_path / "losses").mkdir()
    assert _lint(
        tmp_path / "losses", {"agent.py": POLICY, "trainer.py": losses, "main.py": main}
    ) == [(15, "GL006")]
    result = lint_file(tmp_path / "losses" / "trainer.py", Config(preview=True))
    (finding,) = result.diagnostics
    assert finding.group is Group.CRASH
    assert "numpy reads the list (line 16) and raises" in finding.message


def test_an_agents_update_the_usual_name_of_its_step(tmp_path: Path):
    # `update` is a dict's method too; every class of the project defining it here
    # backpropagates and returns its losses
    agent = DDPG.replace("def fit_batch", "def update")
    trainer = TRAINER.replace("fit_batch", "update")
    assert _lint(tmp_path, {"agent.py": agent, "trainer.py": trainer}) == [
        (KEPT_IN_TRAINER, "GL006"),
        (KEPT_IN_FUNCTION, "GL006"),
    ]


def test_a_score_computed_from_the_logits_kept_for_numpy(tmp_path: Path):
    # `micro_f1_score(logits, labels)` reads the logits the loop backpropagates through,
    # but what it hands back is sklearn's float: kept for `np.array(...).mean()`, it holds
    # no graph (a false GL006 before)
    trainer = """
import numpy as np
import torch
from sklearn.metrics import f1_score
from torch import nn


def micro_f1_score(logits, labels):
    predict = np.where(logits.detach().numpy() >= 0.0, 1, 0)
    return f1_score(labels.numpy(), predict, average="micro")


model = nn.Linear(4, 3)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(10):
    scores = []
    for x, y in [(torch.randn(8, 4), torch.randint(0, 2, (8, 3)).float())]:
        logits = model(x)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, y)
        scores.append(micro_f1_score(logits, y))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(np.array(scores).mean())
"""
    assert _lint(tmp_path, {"trainer.py": trainer}) == []
