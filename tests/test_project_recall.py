"""Capabilities across the project's files behind the census's development-half misses
(issue "Generalise", section 2): a notebook deep in `tutorials/` importing the
repository's package, a class brought in by a star import, and its alias."""

from __future__ import annotations

import json
from pathlib import Path

from test_project import write

from gradlint.engine import lint_file

PACKAGE = {
    "setup.py": "",
    "kan/__init__.py": "from .MultKAN import *\n",
    "kan/MultKAN.py": """
        import torch
        from torch import nn


        class MultKAN(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(width, width[1:])])

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x


        KAN = MultKAN
    """,
}

METRIC = """
import torch
from kan import *

dataset = {"test_input": torch.randn(8, 2), "test_label": torch.ones(8, 1)}


def test_acc():
    return torch.mean(((model(dataset["test_input"]) > 0.5) == dataset["test_label"]).float())


model = CONSTRUCTOR(width=[2, 1])
model.fit(dataset, metrics=[test_acc])
"""


def codes_and_lines(path: Path) -> list[tuple[str, int]]:
    result = lint_file(path)
    assert result.error is None, result.error
    return [(d.code, d.start.line) for d in result.diagnostics]


def test_a_script_two_folders_down_imports_the_repository_package(tmp_path):
    # `tutorials/interp/` has no package of its own: `from kan import *` names the
    # repository's `kan/`, as it does once the repository is installed
    write(tmp_path, PACKAGE)
    write(tmp_path, {"tutorials/interp/knot.py": METRIC.replace("CONSTRUCTOR", "MultKAN")})
    assert codes_and_lines(tmp_path / "tutorials" / "interp" / "knot.py") == [("GL012", 8)]


def test_an_alias_of_a_star_imported_class_holds_its_parameters(tmp_path):
    write(tmp_path, PACKAGE)
    write(tmp_path, {"tutorials/knot.py": METRIC.replace("CONSTRUCTOR", "KAN")})
    assert codes_and_lines(tmp_path / "tutorials" / "knot.py") == [("GL012", 8)]


def test_a_star_imported_name_that_is_no_class_with_parameters(tmp_path):
    # trap: the star import brings in a plain function of the same call shape
    write(tmp_path, {**PACKAGE, "kan/__init__.py": "def KAN(width):\n    return width\n"})
    write(tmp_path, {"tutorials/knot.py": METRIC.replace("CONSTRUCTOR", "KAN")})
    assert codes_and_lines(tmp_path / "tutorials" / "knot.py") == []


def test_a_notebook_in_a_checkpoints_folder_imports_the_repository_package(tmp_path):
    write(tmp_path, PACKAGE)
    cells = [METRIC.replace("CONSTRUCTOR", "KAN")]
    document = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "metadata": {},
                "outputs": [],
                "source": cell.splitlines(keepends=True),
            }
            for cell in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "tutorials" / ".ipynb_checkpoints" / "knot-checkpoint.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    from gradlint.notebook import lint_notebook_file

    result = lint_notebook_file(str(path))
    assert [d.code for d in result.diagnostics] == ["GL012"]


TO_NP = """
import numpy as np


def to_np(t):
    if t is None:
        return None
    elif t.nelement() == 0:
        return np.array([])
    else:
        {last}
"""

AGENT = """
import torch
from torch import nn

import utils


class Agent:
    def __init__(self):
        self.actor = nn.Linear(4, 2)

    def act(self, obs):
        obs = torch.as_tensor(obs).unsqueeze(0)
        action = self.actor(obs).clamp(-1, 1)
        return utils.to_np(action[0])
"""


def test_a_helper_with_guards_makes_numbers_of_its_argument(tmp_path):
    # pytorch_sac's `utils.to_np`: `None` and an empty array on the guards, the
    # parameter made numbers on the last line
    last = "return t.cpu().detach().numpy()"
    write(tmp_path, {"utils.py": TO_NP.replace("{last}", last), "agent.py": AGENT})
    assert codes_and_lines(tmp_path / "agent.py") == [("GL012", 13)]


def test_a_helper_with_guards_that_keeps_its_argument(tmp_path):
    # trap: the helper also hands the tensor on, so its graph may be used
    last = "KEPT.append(t)\n        return t.cpu().detach().numpy()"
    write(tmp_path, {"utils.py": "KEPT = []\n" + TO_NP.replace("{last}", last), "agent.py": AGENT})
    assert codes_and_lines(tmp_path / "agent.py") == []


MANAGERS = """
import contextlib


class eval_mode(object):
    def __init__(self, *models):
        self.models = models

    def __enter__(self):
        self.prev_states = []
        for model in self.models:
            self.prev_states.append(model.training)
            model.train(False)

    def __exit__(self, *args):
        for model, state in zip(self.models, self.prev_states):
            model.train(state)
        return False


@contextlib.contextmanager
def evaluating(net):
    was = net.training
    net.eval()
    yield net
    net.train(was)


@contextlib.contextmanager
def training(net):
    net.train()
    yield net
"""

EVALUATE = """
import torch
from torch import nn

import utils
from utils import evaluating

policy = nn.Linear(4, 2)


def act(obs):
    with utils.eval_mode(policy):
        action = policy(obs).argmax().item()
    with evaluating(policy):
        greedy = policy(obs).argmax().item()
    with utils.training(policy):
        sampled = policy(obs).argmax().item()
    after = policy(obs).argmax().item()
    return action, greedy, sampled, after
"""


def test_eval_mode_managers_of_the_project(tmp_path):
    # pytorch_sac's `utils.eval_mode(agent)` (a class) and a generator-based manager:
    # eval mode inside their blocks only; a manager that switches to train mode is none
    write(tmp_path, {".git/HEAD": "", "utils.py": MANAGERS, "train.py": EVALUATE})
    assert codes_and_lines(tmp_path / "train.py") == [
        ("GL004", 12),
        ("GL004", 14),
        ("GL012", 16),
        ("GL012", 17),
    ]


def test_a_class_a_package_re_exports_by_name(tmp_path):
    # AntixK's `models/__init__.py`: `from .lvae import LVAE`, not a star import
    write(
        tmp_path,
        {
            ".git/HEAD": "",
            "models/__init__.py": "from .base import *\nfrom .lvae import LVAE as Ladder\n",
            "models/base.py": "",
            "models/lvae.py": """
                from torch import nn


                class LVAE(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.enc = nn.Linear(4, 2)

                    def forward(self, x):
                        return self.enc(x)
            """,
            "tests/test_lvae.py": """
                import unittest

                import torch
                from models import Ladder


                class TestLVAE(unittest.TestCase):
                    def setUp(self):
                        self.model = Ladder()

                    def test_forward(self):
                        y = self.model(torch.randn(16, 4))
                        print("Model Output size:", y.size())
            """,
        },
    )
    assert codes_and_lines(tmp_path / "tests" / "test_lvae.py") == [("GL012", 12)]


VAE_PACKAGE = {
    ".git/HEAD": "",
    "models/__init__.py": "from .base import *\nfrom .lvae import LVAE\n",
    "models/base.py": "",
    "models/lvae.py": """
        import torch
        from torch import nn


        class LVAE(nn.Module):
            def __init__(self):
                super().__init__()
                self.decoder_input = nn.Linear(4, 8)

            def forward(self, x):
                return self.decoder_input(x)

            def sample(self, num_samples, current_device):
                z = torch.randn(num_samples, 4)
                return self.decoder_input(z.to(current_device))

            @torch.no_grad()
            def generate(self, num_samples):
                return self.decoder_input(torch.randn(num_samples, 4))

            def fit(self, x):
                self.decoder_input(x).sum().backward()
                return x

            def latent(self, x):
                return self.reparameterize(x)

            def reparameterize(self, x):
                return x * 2
    """,
}


def _test_calling(method: str, model: str = "LVAE()") -> str:
    return f"""
        import unittest

        import torch
        from models import LVAE


        class TestLVAE(unittest.TestCase):
            def setUp(self):
                self.model = {model}

            def test_sample(self):
                y = self.model.{method}
                print(y.shape)
    """


def test_a_method_of_an_imported_model_that_runs_its_layers_is_a_forward(tmp_path):
    # AntixK's tests/test_lvae.py: `self.model.sample(144, 0)`, only its shape printed
    write(tmp_path, {**VAE_PACKAGE, "tests/test_lvae.py": _test_calling("sample(144, 0)")})
    assert codes_and_lines(tmp_path / "tests" / "test_lvae.py") == [("GL012", 12)]


def test_methods_of_an_imported_model_that_run_no_recording_forward(tmp_path):
    for method in (
        "generate(144)",  # under its own no_grad
        "fit(torch.randn(2, 4))",  # differentiates
        "latent(torch.randn(2, 4))",  # calls a method of its own, not a layer
        "parameters()",  # nn.Module's API
    ):
        write(tmp_path, {**VAE_PACKAGE, "tests/test_lvae.py": _test_calling(method)})
        assert codes_and_lines(tmp_path / "tests" / "test_lvae.py") == [], method


EVALUATION = {
    "utils.py": """
        import numpy as np


        def evaluate(model, users):
            ranks = []
            for u in users:
                scores = -model.predict(u, np.arange(100))
                ranks.append(scores.argsort().argsort()[0].item())
            return np.mean(ranks)
    """,
    "main.py": """
        import torch
        from torch import nn

        from utils import evaluate


        class SASRec(nn.Module):
            def __init__(self):
                super().__init__()
                self.item_emb = nn.Embedding(100, 8)

            def predict(self, user, items):
                return self.item_emb(torch.as_tensor(items)).sum(-1)


        model = SASRec()
        users = range(10)
        model.eval()
        print(evaluate(model, users))
    """,
}


def test_a_method_of_the_model_a_helper_elsewhere_is_handed_is_its_forward(tmp_path):
    # `model.predict(...)` (no method of nn.Module's API) inside another file's helper
    # runs the model: the helper's call after `model.eval()` records for nothing
    write(tmp_path, EVALUATION)
    assert ("GL004", 19) in codes_and_lines(tmp_path / "main.py")
