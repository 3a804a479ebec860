"""Models handed over in a dict or list (`models = {"G": G}`, then `evaluate(models,
loader)` reading `models["G"](x)`): the element a constant key picks holds the weights
of what the caller put there, in this file and in the project's other files, and a
function calling an element of a parameter is worth parsing (the text gate)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from test_project import findings, write

from gradlint.config import Config
from gradlint.engine import lint_source
from gradlint.rules.base import calls_a_parameter

EVALUATE = """
def evaluate(models, loader):
    total = 0.0
    for x, y in loader:
        total += (models["G"](x).argmax(1) == y).float().mean().item()
    return total / len(loader)
"""

TRAIN = """
import torch
from torch import nn

G = nn.Linear(4, 3)
models = MODELS
opt = torch.optim.Adam(G.parameters())
loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]
for epoch in range(3):
    for x, y in loader:
        loss = nn.functional.cross_entropy(G(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(evaluate(models, loader))
"""


def _lint(source: str) -> list[tuple[str, int]]:
    found = lint_source(textwrap.dedent(source), "t.py", Config(preview=True))
    return [(d.code, d.start.line) for d in found]


def test_an_element_of_a_dict_of_models_handed_in_this_file():
    for models in ('{"G": G}', "[G]", '{"G": G, "D": nn.Linear(3, 1)}'):
        source = EVALUATE + TRAIN.replace("MODELS", models)
        if models == "[G]":
            source = source.replace('models["G"]', "models[0]")
        assert _lint(source) == [("GL012", 5)], models


def test_an_element_of_a_container_written_out_at_the_call():
    # `evaluate({"G": G}, loader)`: the literal is the argument, no name holds it
    for models, key in (('{"G": G, "D": nn.Linear(3, 1)}', '"G"'), ("[nn.Linear(3, 1), G]", "1")):
        source = EVALUATE.replace('["G"]', f"[{key}]") + TRAIN.replace(
            "print(evaluate(models, loader))", f"print(evaluate({models}, loader))"
        )
        assert _lint(source) == [("GL012", 5)], models


def test_a_container_written_out_without_the_key_says_nothing():
    for models in ('{"D": G}', '{**others, "D": G}', "[G]"):
        source = EVALUATE.replace('models["G"]', "models['G']") + TRAIN.replace(
            "print(evaluate(models, loader))", f"print(evaluate({models}, loader))"
        )
        assert [code for code, _ in _lint(source)] == [], models


def test_an_element_of_something_else_handed_in_says_nothing():
    source = EVALUATE + TRAIN.replace("MODELS", '{"G": lambda x: x @ torch.ones(4, 3)}')
    assert _lint(source) == []


def test_an_element_of_a_dict_of_models_handed_in_from_another_file(tmp_path: Path):
    train = "from utils import evaluate\n" + TRAIN.replace("MODELS", '{"G": G}')
    write(tmp_path, {"setup.py": "", "utils.py": EVALUATE, "train.py": train})
    assert findings(tmp_path / "utils.py") == [(4, "GL012")]


def test_a_dict_of_unknown_values_from_another_file_says_nothing(tmp_path: Path):
    train = "from utils import evaluate\n" + TRAIN.replace("MODELS", '{"G": make()}')
    train = train.replace("import torch\n", "import torch\nfrom factory import make\n", 1)
    write(tmp_path, {"setup.py": "", "utils.py": EVALUATE, "train.py": train})
    assert findings(tmp_path / "utils.py") == []


def test_the_text_gate_sees_an_element_of_a_parameter_called():
    assert calls_a_parameter('def evaluate(models, x):\n    return models["G"](x)\n')
    assert calls_a_parameter("def run(nets, x):\n    return nets[0](x)\n")
    assert not calls_a_parameter('def run(cfg):\n    return table["a"](1)\n')
