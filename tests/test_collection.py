"""A lint leaves its trees to reference counting: no cyclic garbage, and no cyclic
collection while a file is linted (engine._collector_paused)."""

from __future__ import annotations

import gc
from pathlib import Path

from gradlint import engine

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _with_findings() -> Path:
    for path in sorted((FIXTURES / "GL012").glob("bad_*.py")):
        if engine.lint_file(path).diagnostics:
            return path
    raise AssertionError("no GL012 fixture with a finding")


def test_a_lint_with_findings_leaves_no_cyclic_garbage():
    # A file with findings resolves positions; they once kept a bound method of the
    # file's context, so the whole tree waited for the cyclic collector.
    path = _with_findings()
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        result = engine.lint_file(path)
        assert result.diagnostics
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


# A model's forward run through a lambda: GL004 asks the grad mode where the lambda
# runs, which the file's grad-mode facts learn from its path conditions.
_FORWARD_THROUGH_A_LAMBDA = """import torch
from torch import nn

model = nn.Linear(2, 1)
model.eval()
policy = lambda x: model(x)
print(policy(torch.ones(2)).item())
"""


def test_a_lint_that_asks_where_a_lambda_runs_leaves_no_cyclic_garbage():
    # The grad-mode facts once held a closure over the file's facts, so every file's
    # tree and facts (400,000 objects over bench/README.md's 70 RL scripts) waited for
    # the cyclic collector.
    engine.lint_source(_FORWARD_THROUGH_A_LAMBDA, "policy.py")  # imports, memos
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        found = engine.lint_source(_FORWARD_THROUGH_A_LAMBDA, "policy.py")
        assert [d.code for d in found] == ["GL004"]
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_no_collection_runs_while_a_file_is_linted(monkeypatch):
    path = _with_findings()
    source = path.read_text(encoding="utf-8")
    collections: list[int] = []
    linting = [False]
    real_lint = engine._lint

    def lint(*args, **kwargs):
        linting[0] = True
        try:
            return real_lint(*args, **kwargs)
        finally:
            linting[0] = False

    def seen(phase: str, info: dict) -> None:
        if phase == "start" and linting[0]:
            collections.append(info["generation"])

    monkeypatch.setattr(engine, "_lint", lint)

    threshold = gc.get_threshold()
    gc.set_threshold(10, *threshold[1:])  # a collection every few allocations otherwise
    gc.callbacks.append(seen)
    try:
        found = engine.lint_source(source, str(path))
        assert gc.isenabled()  # and the collector is back afterwards
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*threshold)
    assert found
    assert collections == []


def test_the_command_does_not_collect_once_the_run_is_over(tmp_path):
    # console_main exits right after the run: giving the threshold back there would
    # make the collector walk everything the run kept, for nothing.
    import os
    import subprocess
    import sys

    (tmp_path / "a.py").write_text("import torch\nx = torch.ones(2).item()\n", encoding="utf-8")
    script = """
import gc, os, sys
from gradlint import cli
after = []
real_run_check = cli.run_check
def run_check(args, console):
    try:
        return real_run_check(args, console)
    finally:
        gc.callbacks.append(lambda phase, info: after.append(phase))
cli.run_check = run_check
real_exit = os._exit
def exit_(status):
    sys.stderr.write(f"collections after the run: {len(after)}\\n")
    sys.stderr.flush()
    real_exit(status)
os._exit = exit_
sys.argv = ["gradlint", "--isolated", "--no-cache", "--exit-zero", sys.argv[1]]
cli.console_main()
"""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "a.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert "collections after the run: 0" in proc.stderr, proc.stderr
