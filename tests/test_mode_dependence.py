"""Which module classes depend on train/eval mode (gradlint/analysis/mode_layers.py), read
with `ast` as the project index reads other files, and decided through the project's
imports (ProjectIndex.class_mode)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from gradlint.analysis.facts import FileFacts
from gradlint.analysis.mode_layers import class_mode_parts, decide
from gradlint.analysis.project import ProjectIndex
from gradlint.analysis.stamps import TEXT_PREFIX, split_stamp

HEADER = """
import torch
from torch import nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm
import timm
from .blocks import Block
"""

CLASSES = {
    "plain": "self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))",
    "dropout": "self.drop = nn.Dropout(0.1)",
    "dropout_zero": "self.drop = nn.Dropout(p=0.0)",
    "lstm_two_layers": "self.rnn = nn.LSTM(4, 4, 2)",
    "lstm_dropout_from_parameter": "self.rnn = nn.LSTM(4, 4, 2, dropout=width)",
    "instance_norm": "self.norm = nn.InstanceNorm2d(4)",
    "instance_norm_tracking": "self.norm = nn.InstanceNorm2d(4, track_running_stats=True)",
    "spectral_norm": "self.fc = spectral_norm(nn.Linear(4, 4))",
    "library_factory": "self.backbone = timm.create_model('resnet18')",
    "loaded": "self.backbone = torch.load('model.pt')",
    "handed_in": "self.inner = width",
    "helper_builds_plain": "self.body = make_plain(width)",
    "nests_project_class": "self.block = Block()",
    "nests_local_class": "self.inner = Cls_dropout()",
}
EXPECTED = {
    "plain": (False, False, []),
    "dropout": (True, False, []),
    "dropout_zero": (False, False, []),
    "lstm_two_layers": (False, False, []),
    "lstm_dropout_from_parameter": (False, True, []),
    "instance_norm": (False, False, []),
    "instance_norm_tracking": (True, False, []),
    "spectral_norm": (True, False, []),
    "library_factory": (False, True, []),
    "loaded": (False, True, []),
    "handed_in": (False, True, []),
    "helper_builds_plain": (False, False, []),
    "nests_project_class": (False, False, ["Block"]),
    "nests_local_class": (False, False, ["Cls_dropout"]),
}


def _module(body: str) -> str:
    return (
        "(nn.Module):\n"
        "    def __init__(self, width=4):\n"
        "        super().__init__()\n"
        f"        {body}\n\n"
        "    def forward(self, x):\n"
        "        return self.inner(x)\n"
    )


SOURCE = (
    HEADER
    + "\n\ndef make_plain(width):\n    return nn.Sequential(nn.Linear(4, width), nn.Tanh())\n"
    + "".join(f"\n\nclass Cls_{name}{_module(body)}" for name, body in CLASSES.items())
)


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_what_a_class_builds_decides_its_parts(name):
    parts = class_mode_parts(ast.parse(SOURCE))[f"Cls_{name}"]
    assert (parts.direct, parts.opaque, parts.refs) == EXPECTED[name]


@pytest.mark.parametrize(
    ("forward", "direct"),
    [
        ("return F.dropout(x, 0.5, self.training)", True),
        ("return F.dropout(x, 0.5, training=self.training)", True),
        ("return x if not self.training else x + torch.randn_like(x)", True),
        # F.dropout's `training` defaults to True: it drops in eval mode too
        ("return F.dropout(x, 0.5)", False),
    ],
)
def test_a_forward_that_reads_the_mode(forward, direct):
    source = HEADER + (
        f"\n\nclass Noisy(nn.Module):\n    def forward(self, x):\n        {forward}\n"
    )
    assert class_mode_parts(ast.parse(source))["Noisy"].direct is direct


@pytest.mark.parametrize(
    "body",
    [
        "norm = nn.BatchNorm1d\n        self.norm = norm(4)",
        "self.fc = nn.Linear(4, 4)\n        self.apply(lambda m: isinstance(m, nn.Dropout))",
        "self.act = ACTIVATIONS[width]()",
    ],
    ids=["class-named-then-built", "class-named-in-a-check", "built-from-a-table"],
)
def test_a_layer_class_named_or_a_table_makes_the_class_unknown(body):
    source = HEADER + "\n\nACTIVATIONS = {}\n\n\nclass Cls" + _module(body)
    parts = class_mode_parts(ast.parse(source))["Cls"]
    assert (parts.direct, parts.opaque) == (False, True)


def test_a_train_override_and_a_mode_dependent_base_count():
    source = HEADER + (
        "\n\nclass Frozen(nn.Module):\n    def train(self, mode=True):\n        return self\n"
        "\n\nclass MyDrop(nn.Dropout):\n    pass\n"
        "\n\nclass Layers(nn.Sequential):\n"
        "    def __init__(self, *layers):\n        super().__init__(*layers)\n"
    )
    parts = class_mode_parts(ast.parse(source))
    assert parts["Frozen"].direct and parts["MyDrop"].direct
    assert parts["Layers"].opaque and not parts["Layers"].direct  # its layers are handed in


def test_decide():
    parts = class_mode_parts(ast.parse(SOURCE))

    def local(name: str):
        return decide(parts[name], local) if name in parts else None

    assert local("Cls_plain") is False
    assert local("Cls_nests_local_class") is True
    assert local("Cls_nests_project_class") is None  # Block unresolved here
    assert local("Cls_handed_in") is None


def test_project_classes_across_files_diamond_and_cycle(tmp_path: Path):
    files = {
        "norm.py": """
            from torch import nn

            class Inner(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
        """,
        "left.py": """
            from torch import nn
            from norm import Inner

            class Left(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.inner = Inner()
        """,
        "right.py": """
            from torch import nn
            from norm import Inner

            class Right(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.inner = Inner()
        """,
        "both.py": """
            from torch import nn
            from left import Left
            from right import Right

            class Both(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.a = Left()
                    self.b = Right()

            class Loop(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.again = Loop()
        """,
        "package/__init__.py": "from .models import Deep\n",
        "package/models.py": """
            from torch import nn

            class Deep(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.bn = nn.BatchNorm2d(3)
        """,
        "train.py": "",
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    project = ProjectIndex(str(tmp_path / "train.py"))
    assert project.class_mode("both", 0, "Both") is False  # Inner twice is not a cycle
    assert project.class_mode("both", 0, "Loop") is None
    assert project.class_mode("package", 0, "Deep") is True  # re-exported by the package
    assert project.class_mode("torch.nn", 0, "Dropout") is None  # not the project's
    # read only when asked, so a class's file is a dependency by its text: adding a
    # dropout layer to a class (no change to its file's summary) re-lints the result
    stamp = project.dependencies[str(tmp_path / "norm.py")]
    assert split_stamp(stamp)[2].startswith(TEXT_PREFIX)


VALUES = """
import torch
import torchvision
from torch import nn
from somewhere import Library


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)


def make():
    return nn.Sequential(Plain(), nn.Tanh())


def use(model):
    return model


def main(flag):
    plain = Plain().to("cpu")
    made = make()
    resnet = torchvision.models.resnet18()
    vit = torchvision.models.vit_b_16()
    library = Library()
    wrapped = nn.DataParallel(nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)))
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dropout=0.0), 2)
    either = Plain() if flag else nn.Dropout()
    loaded = torch.load("model.pt")
    use(plain)
"""


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("plain", False),
        ("made", False),
        ("resnet", True),
        ("vit", None),
        ("library", None),
        ("wrapped", True),
        ("encoder", False),
        ("either", None),
        ("loaded", None),
        ("model", False),  # the parameter of `use`, as its one caller hands it in
    ],
)
def test_what_a_name_holds(name, expected):
    facts = FileFacts(cst.parse_module(VALUES))
    index = facts.index
    at = next(c for c in index.calls if getattr(c.func, "value", None) == "use")
    if name == "model":
        at = next(r for r in index.nodes if type(r) is cst.Return and type(r.value) is cst.Name)
    assert facts.mode_dependence.of_model(name, at) is expected
