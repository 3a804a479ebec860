"""A base class's `self.method()` runs a subclass's override only when it is that
subclass's base: two packages of one project may each write their own
`BasicInstructor`, and the `self.eval_dis(...)` of the one in `real_data/` never runs
the override of a class that inherits the one in `oracle_data/`. Before, the caller
search matched bases by name alone, so the namesake's call left what the override
returns unknown (TextGAN's DPGAN instructor, fresh dev batch)."""

from __future__ import annotations

from test_project import findings, write

ORACLE_BASE = """
    import torch


    class BasicInstructor:
        def __init__(self, dis):
            self.dis = dis

        @staticmethod
        def eval_dis(model, loader, criterion):
            return 0.0, 0.0
"""

REAL_BASE = """
    class BasicInstructor:
        def __init__(self, clas, loader, criterion):
            self.clas = clas
            self.loader = loader
            self.criterion = criterion

        def train_classifier(self):
            _, acc = self.eval_dis(self.clas, self.loader, self.criterion)
            return acc

        @staticmethod
        def eval_dis(model, loader, criterion):
            return 0.0, 0.0
"""

DPGAN = """
    import torch
    import torch.nn as nn
    from oracle_data.instructor import BasicInstructor


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 1)

        def get_reward(self, x):
            return self.fc(x), self.fc(x).mean(-1)


    class DPGANInstructor(BasicInstructor):
        def __init__(self):
            super().__init__(Discriminator())

        def train_discriminator(self, pos, neg):
            pos_reward, neg_reward = self.eval_dis(self.dis, pos, neg)
            print(pos_reward.item(), neg_reward.item())

        def eval_dis(self, model, pos_val, neg_val):
            _, pos_reward = model.get_reward(pos_val)
            _, neg_reward = model.get_reward(neg_val)
            return torch.mean(pos_reward), torch.mean(neg_reward)
"""


def project(tmp_path, oracle_base: str = ORACLE_BASE) -> list[tuple[int, str]]:
    write(
        tmp_path,
        {
            "pyproject.toml": "",
            "oracle_data/__init__.py": "",
            "oracle_data/instructor.py": oracle_base,
            "oracle_data/dpgan_instructor.py": DPGAN,
            "real_data/__init__.py": "",
            "real_data/instructor.py": REAL_BASE,
        },
    )
    return findings(tmp_path / "oracle_data/dpgan_instructor.py")


def test_a_namesake_base_of_another_package_never_runs_the_override(tmp_path):
    assert project(tmp_path) == [(24, "GL012"), (25, "GL012")]


def test_the_real_base_calling_the_method_runs_the_override(tmp_path):
    calling = (
        ORACLE_BASE
        + """
        def train_classifier(self, loader):
            _, acc = self.eval_dis(self.dis, loader, None)
            return acc
"""
    )
    # the override's result reaches a caller of another file, which hands it on:
    # what happens to it there is not followed, so nothing is reported
    assert project(tmp_path, calling) == []


def _is_the_base(tmp_path, base_file: str, subclass_imports: str) -> bool:
    import ast

    from gradlint.analysis.project import MethodQuery, _CallerSearch

    write(
        tmp_path,
        {
            "pyproject.toml": "",
            "algorithms/__init__.py": "from .Algorithm import Algorithm\n",
            "algorithms/Algorithm.py": "class Algorithm:\n    pass\n",
            "other/Algorithm.py": "class Algorithm:\n    pass\n",
            "algorithms/few_shot.py": subclass_imports
            + "\n\nclass FewShot(Algorithm):\n    pass\n",
        },
    )
    query = MethodQuery(
        str(tmp_path / "algorithms/few_shot.py"),
        "FewShot",
        "evaluation_step",
        "",
        frozenset(),
        frozenset(),
        frozenset({"evaluation_step"}),
        frozenset({"Algorithm"}),
    )
    path = tmp_path / base_file
    search = _CallerSearch(str(path), ast.parse(path.read_text()), query, [])
    return search.is_the_queried_base("Algorithm")


def test_a_base_imported_from_its_package_or_its_module_is_the_base(tmp_path):
    """`from . import Algorithm` names the package's re-export (or the submodule), which
    may be the class of algorithms/Algorithm.py; `from .Algorithm import Algorithm`
    names it outright."""
    assert _is_the_base(tmp_path, "algorithms/Algorithm.py", "from . import Algorithm")
    assert _is_the_base(tmp_path, "algorithms/Algorithm.py", "from .Algorithm import Algorithm")


def test_a_namesake_in_a_module_never_imported_is_not_the_base(tmp_path):
    assert not _is_the_base(tmp_path, "other/Algorithm.py", "from .Algorithm import Algorithm")
