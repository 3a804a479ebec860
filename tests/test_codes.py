"""The codes table (gradlint.codes) and what it is for: a run whose files all come from
the cache reads the table, never the rules, so it does not load LibCST."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gradlint import codes
from gradlint.engine import ALL_RULES, META_RULES

REPO = Path(__file__).resolve().parent.parent

LEAF_INPLACE = "import torch\n\nw = torch.ones(3, requires_grad=True)\nw += 1\n"


def test_the_table_lists_the_registered_rules_in_their_order():
    assert [entry.code for entry in codes.REGISTERED] == [r.code for r in ALL_RULES + META_RULES]
    assert codes.all_codes() == [r.code for r in ALL_RULES + META_RULES]
    assert codes.explicit_only_codes() == {r.code for r in META_RULES}


def test_a_rule_is_in_preview_exactly_when_its_documentation_says_so():
    for rule in ALL_RULES:
        assert ("In preview" in rule.documentation()) == codes.is_preview(rule.code), rule.code
    assert codes.preview_codes() <= set(codes.all_codes())


def _notebook(source: str) -> str:
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "id": "c1",
        "metadata": {},
        "outputs": [],
        "source": source.splitlines(keepends=True),
    }
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


# a helper whose finding depends on a caller search (GL012: `evaluate`'s forward is read
# only as numbers by a caller that trains nothing through it)
EVALUATE = "def evaluate(model, x):\n    return model(x).argmax().item()\n"
EVALUATE_CALLER = (
    "import torch\nfrom torch import nn\n\nfrom {module} import evaluate\n\n"
    "model = nn.Linear(4, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "print(evaluate(model, torch.randn(1, 4)))\n"
)

LINTING = ("libcst", "gradlint.engine", "gradlint.rules")
# what reads and summarises the project's files: a result checked by stats alone needs none
READING = ("gradlint.analysis.project",)


def _run(
    project: Path, status: int = 1, watched: tuple[str, ...] = LINTING
) -> tuple[str, list[str]]:
    """The full report of a run over `project` (which exits with `status`), and which of
    the `watched` modules (LibCST and the rules) the process loaded."""
    script = (
        "import sys; from gradlint.cli import main;"
        "status = main(['--output-format', 'full', '-j1', '.']);"
        f"print('LOADED', sorted(m for m in {watched!r} if m in sys.modules));"
        "sys.exit(status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=project,
        capture_output=True,
        text=True,
        env={"PATH": "", "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == status, done.stderr
    report, _, loaded = done.stdout.rpartition("LOADED ")
    return report, json.loads(loaded.replace("'", '"'))


def test_a_run_served_from_the_cache_loads_neither_libcst_nor_the_rules(tmp_path):
    (tmp_path / "train.py").write_text(LEAF_INPLACE)
    (tmp_path / "clean.py").write_text("x = 1\n")
    (tmp_path / "explore.ipynb").write_text(_notebook(LEAF_INPLACE))
    cold, loaded = _run(tmp_path)
    assert "GL002" in cold and "explore.ipynb" in cold and "train.py" in cold
    assert loaded == ["gradlint.engine", "gradlint.rules", "libcst"]

    warm, loaded = _run(tmp_path)
    assert loaded == []
    # the same report, snippets included: the cached findings' text is read again
    assert warm == cold

    (tmp_path / "train.py").write_text(LEAF_INPLACE + "# changed\n")
    _, loaded = _run(tmp_path)
    assert loaded == ["gradlint.engine", "gradlint.rules", "libcst"]


def test_a_cached_result_that_depends_on_a_caller_search_is_served_without_libcst(tmp_path):
    # utils.py's finding depends on who calls `evaluate` (a search of the project): the
    # warm run checks that search by the texts that name the function, without parsing
    # them, so it loads neither LibCST nor the rules; a new caller lints it again.
    (tmp_path / "utils.py").write_text(EVALUATE)
    main = EVALUATE_CALLER.format(module="utils")
    (tmp_path / "main.py").write_text(main)
    # a hint: the runs exit with 0
    cold, loaded = _run(tmp_path, status=0)
    assert "GL012" in cold and "utils.py:2:12" in cold
    assert loaded == ["gradlint.engine", "gradlint.rules", "libcst"]

    warm, loaded = _run(tmp_path, status=0)
    assert loaded == []
    assert warm == cold

    (tmp_path / "main.py").write_text(main + "print(evaluate(model, torch.randn(2, 4)))\n")
    _, loaded = _run(tmp_path, status=0)
    assert loaded == ["gradlint.engine", "gradlint.rules", "libcst"]


def test_a_search_dependent_result_is_served_by_a_stat_of_the_searched_files(tmp_path):
    # While the files a caller search reads keep their sizes and times, its answer
    # stands: the warm run stats them and reads none, so it loads nothing that reads.
    # A touched file is read again (its text decides) and restamped, so the run after
    # is a stat again; a new file changes what there is to search.
    (tmp_path / "utils.py").write_text(EVALUATE)
    main = EVALUATE_CALLER.format(module="utils")
    (tmp_path / "main.py").write_text(main)
    both = LINTING + READING
    cold, loaded = _run(tmp_path, status=0, watched=both)
    assert "GL012" in cold and "utils.py:2:12" in cold
    assert set(loaded) == set(both)

    warm, loaded = _run(tmp_path, status=0, watched=both)
    assert loaded == []
    assert warm == cold

    stat = (tmp_path / "main.py").stat()
    os.utime(tmp_path / "main.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    touched, loaded = _run(tmp_path, status=0, watched=both)
    assert loaded == list(READING)  # read, not linted
    assert touched == cold
    _, loaded = _run(tmp_path, status=0, watched=both)
    assert loaded == []

    (tmp_path / "notes.py").write_text("from utils import evaluate\n")
    _, loaded = _run(tmp_path, status=0, watched=both)
    assert "gradlint.analysis.project" in loaded


def test_a_root_marker_added_or_removed_lints_a_search_dependent_result_again(tmp_path):
    # lib/utils.py's finding depends on a caller in main.py, under the repository's
    # root. A `setup.cfg` put in lib/ makes lib/ the root its searches look under (no
    # caller there): the files are all unchanged, but what is searched is not.
    (tmp_path / ".git").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "utils.py").write_text(EVALUATE)
    (tmp_path / "main.py").write_text(EVALUATE_CALLER.format(module="lib.utils"))
    cold, _ = _run(tmp_path, status=0)
    assert "GL012" in cold
    (tmp_path / "lib" / "setup.cfg").write_text("")
    moved, _ = _run(tmp_path, status=0)
    assert "GL012" not in moved
    (tmp_path / "lib" / "setup.cfg").unlink()
    back, loaded = _run(tmp_path, status=0)
    assert back == cold and "libcst" in loaded
