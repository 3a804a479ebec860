"""GL016 where the fixtures do not reach: an evaluation helper imported from another
file of the project, and where the fix puts `model.train()`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from gradlint.config import Config
from gradlint.engine import lint_file
from gradlint.fixes import fix_source

ONLY_GL016 = Config(select=("GL016",), preview=True)

INLINE_EVAL_UNDER_COMMENT = """\
import torch


def fit(model, optimizer, batches, x_val):
    for step, (x, y) in enumerate(batches):
        # one optimisation step
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            model.eval()
            with torch.no_grad():
                print(model(x_val))
"""


def test_inline_eval_gets_train_above_the_loop_bodys_leading_comment() -> None:
    outcome = fix_source(INLINE_EVAL_UNDER_COMMENT, "train.py", ONLY_GL016, unsafe=True)
    assert outcome.source == INLINE_EVAL_UNDER_COMMENT.replace(
        "        # one optimisation step\n",
        "        model.train()\n        # one optimisation step\n",
    )


HELPER_IN_ONE_LINE_BRANCH = """\
import torch


def evaluate(model, x):
    model.eval()
    with torch.no_grad():
        return model(x)


def fit(model, optimizer, batches, x_val):
    for step, (x, y) in enumerate(batches):
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0: evaluate(model, x_val)
"""


def test_no_fix_when_the_evaluation_shares_its_line() -> None:
    outcome = fix_source(HELPER_IN_ONE_LINE_BRANCH, "train.py", ONLY_GL016, unsafe=True)
    assert [d.code for d in outcome.remaining] == ["GL016"]  # reported, without a fix
    assert outcome.source == HELPER_IN_ONE_LINE_BRANCH


EVALUATE = """
    import torch


    def evaluate(model, x):
        {body}
        with torch.no_grad():
            score = model(x).mean().item()
        {after}
        return score
"""

TRAIN = """
    from utils import evaluate


    def fit(model, optimizer, batches, x_val):
        for _ in range(10):
            for x, y in batches:
                loss = (model(x) - y).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            evaluate(model, x_val)
"""


@pytest.mark.parametrize(
    ("body", "after", "expected"),
    [
        ("model.eval()", "pass", [(7, "GL016")]),
        ("model.eval()", "model.train()", []),
        ("was = model.training; model.eval()", "model.train(was)", []),
        ("pass", "pass", []),
    ],
    ids=["leaves-eval", "ends-in-train", "restores", "never-switches"],
)
def test_an_evaluation_helper_imported_from_another_file(tmp_path: Path, body, after, expected):
    helper = textwrap.dedent(EVALUATE).format(body=body, after=after).lstrip()
    (tmp_path / "utils.py").write_text(helper, encoding="utf-8")
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN).lstrip(), encoding="utf-8")
    result = lint_file(tmp_path / "train.py", ONLY_GL016)
    assert result.error is None, result.error
    assert [(d.start.line, d.code) for d in result.diagnostics] == expected


def test_the_eval_inside_an_imported_helper_is_shown_in_its_own_file(tmp_path: Path) -> None:
    """The finding is at the training forward; the `eval()` left on sits in the helper's
    file, and the user needs to see it there (the upstream fix often goes there)."""
    helper = textwrap.dedent(EVALUATE).format(body="model.eval()", after="pass").lstrip()
    (tmp_path / "utils.py").write_text(helper, encoding="utf-8")
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN).lstrip(), encoding="utf-8")
    [found] = lint_file(tmp_path / "train.py", ONLY_GL016).diagnostics
    places = [(Path(r.path).name, r.start.line, r.start.column) for r in found.related]
    assert ("train.py", 11, 8) in places  # the call of the helper
    assert ("utils.py", 5, 4) in places  # `model.eval()` inside it


# -- what eval mode costs the model (issue 20) -------------------------------------------

FIT = """
import torch
from torch import nn
{imports}

{classes}

def evaluate(model, x):
    model.eval()
    with torch.no_grad():
        return model(x).mean().item()


def fit(model, optimizer, batches, x_val):
    for epoch in range(10):
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        evaluate(model, x_val)


def main(batches, x_val):
    model = {model}
    fit(model, torch.optim.SGD(model.parameters(), lr=0.1), batches, x_val)
"""

PLAIN = """
class Plain(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.width = width
        self.body = nn.Sequential(nn.Linear(4, width), nn.ReLU(), nn.Linear(width, 1))

    def forward(self, x):
        return self.body(x)
"""

NESTED_BATCH_NORM = """
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.norm(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(self.block(x))
"""

WRAPPER = """
class Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)
"""

LATENT_WORDS = "changes nothing yet"
DROPOUT_WORDS = "dropout and batch norm stay in inference mode"


def _gl016(source: str, tmp_path: Path, name: str = "train.py"):
    (tmp_path / name).write_text(source, encoding="utf-8")
    result = lint_file(tmp_path / name, ONLY_GL016)
    assert result.error is None, result.error
    return [(d.severity.value, d.message) for d in result.diagnostics]


@pytest.mark.parametrize(
    ("imports", "classes", "model", "severity", "words"),
    [
        ("", PLAIN, "Plain(8)", "warning", LATENT_WORDS),
        (
            "",
            "",
            "nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))",
            "warning",
            LATENT_WORDS,
        ),
        (
            "",
            "",
            "nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 1))",
            "error",
            DROPOUT_WORDS,
        ),
        ("", "", "nn.Sequential(nn.Linear(4, 8), nn.Dropout(p=0.0))", "warning", LATENT_WORDS),
        ("", NESTED_BATCH_NORM, "Net().to('cpu')", "error", DROPOUT_WORDS),
        ("", WRAPPER + PLAIN, "Wrapper(Plain(8))", "error", DROPOUT_WORDS),
        ("import torchvision", "", "torchvision.models.resnet18()", "error", DROPOUT_WORDS),
        (
            "from torch_geometric.nn import MetaPath2Vec",
            "",
            "MetaPath2Vec(4, 8)",
            "error",
            DROPOUT_WORDS,
        ),
    ],
    ids=[
        "plain-class",
        "plain-sequential",
        "dropout",
        "dropout-p0",
        "nested-batch-norm",
        "handed-in-module",
        "torchvision",
        "library-class",
    ],
)
def test_severity_and_message_follow_what_eval_mode_changes(
    tmp_path: Path, imports, classes, model, severity, words
):
    source = FIT.format(imports=imports, classes=classes, model=model)
    [(found, message)] = _gl016(source, tmp_path)
    assert (found, words in message) == (severity, True)


def test_a_model_handed_in_from_out_of_sight_stays_an_error(tmp_path: Path) -> None:
    """`fit(model, ...)` called from no function of the file: the model is unknown."""
    source = FIT.format(imports="", classes=PLAIN, model="Plain(8)")
    source = source[: source.index("def main")]
    [(found, message)] = _gl016(source, tmp_path)
    assert found == "error" and DROPOUT_WORDS in message


MODELS_FILE = """
from torch import nn
from blocks import Block


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return self.block(x)
"""


@pytest.mark.parametrize(
    ("block", "severity"),
    [
        ("nn.Linear(4, 4)", "warning"),
        ("nn.BatchNorm1d(4)", "error"),
        ("nn.LSTM(4, 4, 2, dropout=0.1)", "error"),
    ],
    ids=["plain", "batch-norm", "lstm-dropout"],
)
def test_a_project_class_from_other_files_is_read_through_its_imports(
    tmp_path: Path, block, severity
):
    (tmp_path / "blocks.py").write_text(
        "from torch import nn\n\n\nclass Block(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        f"        self.layer = {block}\n\n    def forward(self, x):\n        return self.layer(x)\n",
        encoding="utf-8",
    )
    (tmp_path / "models.py").write_text(MODELS_FILE, encoding="utf-8")
    source = FIT.format(imports="from models import Net", classes="", model="Net()")
    [(found, _)] = _gl016(source, tmp_path)
    assert found == severity


FACTORY_MODELS_FILE = """
from torch import nn
from utils import get_act


class Net(nn.Module):
    def __init__(self, act="gelu", pad_ratio=(0.0, 0.0)):
        super().__init__()
        self.pad_ratio = pad_ratio
        self.fc = nn.Linear(4, 4)
        self.act = get_act(act)

    def forward(self, x):
        pad = [round(x.shape[-1] * r) for r in self.pad_ratio]
        return self.act(self.fc(x))
"""


@pytest.mark.parametrize(
    ("factory", "severity"),
    [
        # neuraloperator/physics_informed's `_get_act`: a functional picked by name
        ("    if name == 'tanh':\n        return F.tanh\n    return F.gelu\n", "warning"),
        ("    return nn.Dropout(0.5)\n", "error"),
        ("    return name\n", "error"),  # whatever the caller hands in
    ],
    ids=["functionals", "dropout", "handed-in"],
)
def test_a_factory_function_of_another_file_is_read_as_what_it_builds(
    tmp_path: Path, factory, severity
):
    (tmp_path / "utils.py").write_text(
        f"import torch.nn.functional as F\nfrom torch import nn\n\n\ndef get_act(name):\n{factory}",
        encoding="utf-8",
    )
    (tmp_path / "models.py").write_text(FACTORY_MODELS_FILE, encoding="utf-8")
    source = FIT.format(imports="from models import Net", classes="", model="Net()")
    [(found, _)] = _gl016(source, tmp_path)
    assert found == severity


TRAINER = """
import torch
from torch import nn


class Trainer:
    def __init__(self, lr):
        self.model = {model}
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)

    def train_epoch(self, batches):
        for x, y in batches:
            loss = nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def validate(self, x, y):
        self.model.eval()
        with torch.no_grad():
            return nn.functional.mse_loss(self.model(x), y).item()

    def fit(self, batches, x_val, y_val, epochs):
        for epoch in range(epochs):
            self.train_epoch(batches)
            self.validate(x_val, y_val)
"""


@pytest.mark.parametrize(
    ("model", "severity"),
    [
        ("nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))", "warning"),
        ("nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.Linear(16, 1))", "error"),
    ],
    ids=["plain", "batch-norm"],
)
def test_a_trainers_model_built_in_its_init(tmp_path: Path, model, severity):
    [(found, _)] = _gl016(TRAINER.format(model=model), tmp_path)
    assert found == severity


def test_a_cached_result_is_relinted_when_a_class_file_gains_a_dropout(
    tmp_path: Path, capsys, monkeypatch
):
    """The class's file is read only to decide the level, and its text is what the
    cached result depends on: a dropout added there (a change its summary does not
    see) turns the cached warning into an error."""
    from gradlint import cli

    monkeypatch.chdir(tmp_path)
    blocks = tmp_path / "blocks.py"
    layer = "        self.layer = nn.Linear(4, 4)\n"
    blocks.write_text(
        "from torch import nn\n\n\nclass Block(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        f"{layer}\n    def forward(self, x):\n        return self.layer(x)\n",
        encoding="utf-8",
    )
    source = FIT.format(imports="from blocks import Block", classes="", model="Block()")
    (tmp_path / "train.py").write_text(source, encoding="utf-8")
    argv = ["-j1", "--select", "GL016", "--preview", "--cache-dir", "cache", "train.py"]
    argv += ["--output-format", "json"]

    def levels() -> list[str]:
        cli.main(argv)
        return [d["severity"] for d in json.loads(capsys.readouterr().out)]

    assert levels() == ["warning"]
    assert levels() == ["warning"]  # from the cache
    text = blocks.read_text(encoding="utf-8")
    blocks.write_text(
        text.replace(layer, "        self.layer = nn.Sequential(nn.Linear(4, 4), nn.Dropout())\n"),
        encoding="utf-8",
    )
    assert levels() == ["error"]


MODE_CHOSEN_EVERY_EPOCH = """\
import torch


def fit(model, optimizer, loader, val, weights):
    for epoch in range(10):
        if weights == "finetune":
            model.train()
        elif weights == "freeze":
            model.eval()
        else:
            {other}
        for x, y in loader:
            loss = (model(x) - y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            print(model(val).sum().item())
"""


@pytest.mark.parametrize(
    ("other", "reported"),
    [
        # every path through the epoch's switch sets the mode (or stops): the freeze
        # branch's eval() is the run's choice, not the evaluation's left-over
        ("raise ValueError(weights)", False),
        ("assert False, weights", False),
        ("return", False),
        # a path that sets nothing carries the evaluation's eval() round
        ("print(weights)", True),
    ],
)
def test_a_mode_set_on_every_path_of_the_epoch_is_not_the_evaluations(
    tmp_path: Path, other: str, reported: bool
) -> None:
    path = tmp_path / "fit.py"
    path.write_text(MODE_CHOSEN_EVERY_EPOCH.format(other=other))
    codes = [d.code for d in lint_file(path, ONLY_GL016).diagnostics]
    assert codes == (["GL016"] if reported else [])


TRAINER_OBJECT = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.1))
        self.optimizer = torch.optim.Adam(self.model.parameters())

    def compute_loss(self, x):
        out = self.model(x)
        return out.pow(2).mean()

    def train_step(self, x):
        {start}
        self.optimizer.zero_grad()
        loss = {loss}
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def validation(self, x):
        self.model.eval()
        with torch.no_grad():
            return self.model(x).mean().item()


def main():
    trainer = Trainer()
    x = torch.randn(8, 4)
    for it in range(1000):
        trainer.train_step(x)
        if it % 100 == 0:
            print(trainer.validation(x))
"""


@pytest.mark.parametrize(
    ("start", "loss", "line"),
    [
        # the loop outside the class runs the object's methods: its `validation()`
        # leaves `trainer.model` in eval mode for every later `train_step()`
        ("pass", "self.model(x).pow(2).mean()", 17),
        # the forward is in a helper that returns its result to the step's backward
        ("pass", "self.compute_loss(x)", 11),
        # the step puts the model back in train mode itself
        ("self.model.train()", "self.model(x).pow(2).mean()", None),
        ("self.model.train()", "self.compute_loss(x)", None),
        # a helper's forward whose result is detached trains nothing
        ("pass", "self.compute_loss(x).detach().requires_grad_()", None),
    ],
)
def test_a_trainer_objects_evaluation_method_called_by_the_loop_outside_it(
    tmp_path: Path, start: str, loss: str, line: int | None
) -> None:
    path = tmp_path / "trainer.py"
    path.write_text(TRAINER_OBJECT.replace("{start}", start).replace("{loss}", loss))
    found = [(d.start.line, d.code) for d in lint_file(path, ONLY_GL016).diagnostics]
    assert found == ([(line, "GL016")] if line is not None else [])


def test_the_fix_for_a_trainer_object_switches_its_model_back_after_the_evaluation() -> None:
    source = TRAINER_OBJECT.replace("{start}", "pass").replace("{loss}", "self.compute_loss(x)")
    outcome = fix_source(source, "trainer.py", ONLY_GL016, unsafe=True)
    assert outcome.source == source.replace(
        "            print(trainer.validation(x))\n",
        "            print(trainer.validation(x))\n            trainer.model.train()\n",
    )


FLAG_PAIRED_EVALUATION = """\
import torch
from contextlib import nullcontext


def encode(text_encoder, ids):
    return text_encoder(ids)[0]


def train(model, text_encoder, optimizer, batches, args):
    if args.train_text_encoder:
        text_encoder.train()
    else:
        text_encoder.eval()
    for step, (ids, y) in enumerate(batches):
        with nullcontext() if args.train_text_encoder else torch.no_grad():
            cond = encode(text_encoder, ids)
        loss = (model(cond) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            model.eval()
            if args.train_text_encoder:
                text_encoder.eval()
            with torch.no_grad():
                print(model(encode(text_encoder, ids)))
            model.train()
            {restore}
"""


@pytest.mark.parametrize(
    ("restore", "reported"),
    [
        # the same flag that put the text encoder in eval mode puts it back (diffusers'
        # aMUSEd trainer)
        ("if args.train_text_encoder:\n                text_encoder.train()", False),
        # another flag may leave it in eval mode: its forward returned to the backward
        ("if args.log_images:\n                text_encoder.train()", True),
        ("pass", True),
    ],
)
def test_an_evaluation_undone_under_the_same_flag_leaves_nothing_in_eval_mode(
    tmp_path: Path, restore: str, reported: bool
) -> None:
    path = tmp_path / "train.py"
    path.write_text(FLAG_PAIRED_EVALUATION.replace("{restore}", restore))
    found = [(d.start.line, d.code) for d in lint_file(path, ONLY_GL016).diagnostics]
    assert found == ([(6, "GL016")] if reported else [])


REBUILT = """
import torch
from torch import nn


class FCNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.fc(self.drop(x))


trainset = [(torch.randn(3, 4), torch.tensor([0, 1, 0]))]
model = FCNet()
model.eval()
with torch.no_grad():
    for X, y in trainset:
        print(model(X).argmax(1))

{rebinding}
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(3):
    for X, y in trainset:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(X), y).backward()
        optimizer.step()
"""


@pytest.mark.parametrize(
    ("rebinding", "expected"),
    [
        ("model = FCNet().to('cpu')", []),  # a new module is in training mode
        ("model = FCNet()", []),
        ("model = model.to('cpu')", ["GL016"]),  # the same module, still in eval mode
        ("pass", ["GL016"]),
    ],
    ids=["rebuilt-and-moved", "rebuilt", "moved", "kept"],
)
def test_a_model_built_anew_after_the_evaluation_trains_in_training_mode(
    tmp_path: Path, rebinding, expected
):
    """PyTorch-Adventures' Intro notebook evaluates its first model, then builds a new
    `FCNet()` in the next cell and trains that one."""
    (tmp_path / "notebook.py").write_text(REBUILT.format(rebinding=rebinding), encoding="utf-8")
    result = lint_file(tmp_path / "notebook.py", ONLY_GL016)
    assert result.error is None, result.error
    assert [d.code for d in result.diagnostics] == expected
