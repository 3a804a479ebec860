"""A helper of one file that another file calls with a model (kuc2477/pytorch-wgan-gp:
`utils.test_model(wgan, ...)` in main.py after `wgan = WGAN(...)`, where `WGAN` holds a
critic and a generator of its own module): the helper's parameter is that model, a
method every class of the project runs its layers in is a forward of it, and a
`test_*` name in a file pytest does not collect makes no pytest test of a helper other
files call (a dev miss of the census)."""

from __future__ import annotations

from pathlib import Path

from test_project import findings, write

from gradlint.config import Config
from gradlint.diagnostics import Impact
from gradlint.engine import lint_file

MODEL = """
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)

    def forward(self, z):
        return self.fc(z)


class WGAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.generator = Generator()

    def sample_image(self, size):
        return self.generator(torch.randn(size, 8))
"""

UTILS = """
import torch.nn as nn
import torchvision


def NAME(model, sample_size, path):
    torchvision.utils.save_image(model.sample_image(sample_size).data, path)
"""

MAIN = """
from model import WGAN
import utils

wgan = WGAN()
utils.NAME(wgan, 16, "out.jpg")
"""


def _project(tmp_path: Path, name: str) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    write(
        tmp_path,
        {
            "model.py": MODEL,
            "utils.py": UTILS.replace("NAME", name),
            "main.py": MAIN.replace("NAME", name),
        },
    )
    return tmp_path / "utils.py"


def test_a_method_of_the_model_other_files_pass_is_its_forward(tmp_path: Path):
    assert findings(_project(tmp_path, "save_samples")) == [(6, "GL012")]


def test_a_test_named_helper_of_another_file_is_run_by_its_callers(tmp_path: Path):
    utils = _project(tmp_path, "test_model")
    (finding,) = lint_file(utils, Config()).diagnostics
    assert (finding.start.line, finding.code) == (6, "GL012")
    assert finding.impact is Impact.ONCE  # main.py calls it once, no test does


def test_a_test_function_nothing_calls_is_still_a_test(tmp_path: Path):
    utils = _project(tmp_path, "test_model")
    (tmp_path / "main.py").write_text("import utils\n", encoding="utf-8")
    # nothing passes it a model: its parameter is out of sight, so nothing is reported
    assert findings(utils) == []
