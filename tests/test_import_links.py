"""Which files of a project a search for callers or definitions reads: those linked to
the asking file by imports, in either direction and through other files. An object of a
class is made where its module is imported and handed only to code such a file imports,
so a folder of training scripts that import nothing of each other is that many projects
(issue "Generalise", section 3: the RL tree's scripts each searched all 70 files for
callers of their `get_action`). A file that unpickles objects may hold any class's."""

from __future__ import annotations

import json
from pathlib import Path

from test_project import write

from gradlint.analysis.project import linked_files


def linked(root: Path, name: str) -> set[str]:
    found = linked_files(str(root / name), str(root))
    assert found is not None
    return {Path(path).relative_to(root).as_posix() for path in found}


def test_scripts_that_import_nothing_of_each_other_are_not_linked(tmp_path):
    write(tmp_path, {"sac.py": "import torch\n", "ppo.py": "import torch, gym\n"})
    assert linked(tmp_path, "sac.py") == {"sac.py"}


def test_imports_link_both_ways_and_through_other_files(tmp_path):
    write(
        tmp_path,
        {
            "models/policy.py": "import torch\n",
            "utils.py": "def evaluate(policy):\n    return policy.act(1)\n",
            "train.py": "from models.policy import Policy\nimport utils as U\n",
            "plot.py": "import matplotlib\n",
        },
    )
    assert linked(tmp_path, "models/policy.py") == {"models/policy.py", "utils.py", "train.py"}
    assert linked(tmp_path, "plot.py") == {"plot.py"}


def test_relative_imports_and_packages(tmp_path):
    write(
        tmp_path,
        {
            "pkg/__init__.py": "from .nets import Net\n",
            "pkg/nets.py": "import torch\n",
            "run.py": "import pkg\n",
            "other.py": "x = 1\n",
        },
    )
    assert linked(tmp_path, "pkg/nets.py") == {"pkg/__init__.py", "pkg/nets.py", "run.py"}


def test_a_notebook_links_what_it_imports_or_runs(tmp_path):
    cells = ["import torch\nfrom helpers import show\n", "%run train_script.py\n"]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": c} for c in cells],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    write(
        tmp_path,
        {"helpers.py": "x = 1\n", "train_script.py": "y = 2\n", "unrelated.py": "z = 3\n"},
    )
    (tmp_path / "demo.ipynb").write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    assert linked(tmp_path, "demo.ipynb") == {"demo.ipynb", "helpers.py", "train_script.py"}


def test_a_conftest_hands_its_fixtures_to_the_tests_below_it(tmp_path):
    write(
        tmp_path,
        {
            "model.py": "import torch\n",
            "tests/conftest.py": "from model import Net\n",
            "tests/test_net.py": "def test_net(net):\n    net.act(1)\n",
        },
    )
    assert linked(tmp_path, "model.py") == {"model.py", "tests/conftest.py", "tests/test_net.py"}


def test_a_file_that_unpickles_objects_is_linked_to_every_file(tmp_path):
    write(
        tmp_path,
        {
            "a.py": "import torch\n",
            "b.py": "import torch\n",
            "evaluate.py": "import torch\nimport helpers\nmodel = torch.load('model.pt')\n",
            "helpers.py": "def run(model):\n    return model.act(1)\n",
            # weights into load_state_dict: no object of a class comes out of the file
            "resume.py": "import torch\nnet.load_state_dict(torch.load('w.pt'))\n",
        },
    )
    assert linked(tmp_path, "a.py") == {"a.py", "evaluate.py", "helpers.py"}
    # the loader does not join the other files' groups to each other
    assert "b.py" not in linked(tmp_path, "a.py")
    assert linked(tmp_path, "resume.py") == {"resume.py", "evaluate.py", "helpers.py"}


def test_a_relative_import_above_the_root_or_a_broken_notebook_links_nothing_more(tmp_path):
    write(tmp_path, {"deep.py": "from .......... import y\n", "y.py": "x = 1\n"})
    (tmp_path / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    assert linked(tmp_path, "deep.py") == {"deep.py", "y.py"}
    assert linked(tmp_path, "broken.ipynb") == {"broken.ipynb"}


def test_a_search_key_recorded_without_its_asking_file_searches_every_file(tmp_path):
    from gradlint.analysis import project

    write(tmp_path, {"a.py": "class A:\n    def embed(self, x):\n        return x\n", "b.py": ""})
    key = project.DEFINITIONS_PREFIX + json.dumps(["embed", str(tmp_path)])
    method, root, near = project.definitions_of_key(key)
    assert (method, root) == ("embed", str(tmp_path))
    found = project.method_definitions(method, root, near)
    assert found is not None and [f.name for f in found[0]] == ["embed"]
