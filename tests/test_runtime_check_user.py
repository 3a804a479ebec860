"""runtime_check as a user's tool: a missing device is an environment error, the table
shows whole claims, and the pytest plugin checks a user's own training step."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

from gradlint.config import tomllib
from runtime_check.__main__ import main
from runtime_check.judge import Row
from runtime_check.report import Report

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "test_training_step.py"
FIXTURE = Path(__file__).resolve().parent / "runtime_check_data" / "confirmed" / "GL001"


def _pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        # Installed, the pytest11 entry point loads the plugin as `runtime_check`, and a
        # second `-p` of the same module fails: load it once, by `-p`, either way.
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "runtime_check.pytest_plugin"]
        + ["-p", "no:cacheprovider", "-q", "-rA", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _outcomes(output: str) -> dict[str, str]:
    return {
        m["test"]: m["state"]
        for m in re.finditer(r"^(?P<state>PASSED|FAILED|ERROR) \S*::(?P<test>\w+)", output, re.M)
    }


def test_the_documented_plugin_example_passes_a_clean_step_and_fails_a_leaking_one(tmp_path):
    done = _pytest(str(EXAMPLE), cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert _outcomes(output) == {
        "test_logging_the_number_keeps_no_graph": "PASSED",
        "test_with_the_fixture": "PASSED",
        "test_logging_the_tensor_grows_the_graph": "FAILED",
    }, output
    assert "GraphGrowthError: autograd graph grew by 4 nodes per iteration" in output
    # A clean environment (the test extra brings numpy) prints no torch noise.
    assert "NumPy" not in output


def test_the_marker_rejects_what_it_cannot_mean(tmp_path):
    (tmp_path / "test_bad.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.no_graph_growth(5)\n"
        "def test_positional():\n    pass\n\n"
        "@pytest.mark.no_graph_growth(iteration=5)\n"
        "def test_misspelt():\n    pass\n"
    )
    done = _pytest("test_bad.py", cwd=tmp_path)
    output = done.stdout + done.stderr
    assert _outcomes(output) == {"test_positional": "FAILED", "test_misspelt": "FAILED"}, output
    assert output.count("takes keyword options only") >= 2


def test_the_plugin_is_registered_by_entry_point_and_imports_no_torch():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    module = project["entry-points"]["pytest11"]["runtime_check"]
    plugin = importlib.import_module(module)
    assert callable(plugin.pytest_pyfunc_call) and callable(plugin.pytest_configure)
    probe = f"import sys, {module}; sys.exit('torch' in sys.modules)"
    assert (
        subprocess.run(
            [sys.executable, "-c", probe], env={**os.environ, "PYTHONPATH": str(ROOT)}
        ).returncode
        == 0
    )


def test_the_docs_show_the_executed_example_verbatim():
    docs = (ROOT / "docs" / "runtime-check.md").read_text(encoding="utf-8")
    assert EXAMPLE.read_text(encoding="utf-8") in docs


def test_the_table_wraps_long_claims_instead_of_cutting_them():
    claim = (
        "silent: the inner gradients carry no graph, so the meta-gradient drops its "
        "second-order term and training converges to a worse solution without any error"
    )
    row = Row(
        rule="GL005",
        fixture="fixtures/GL005/bad_a_rather_long_fixture_name_for_a_meta_learning_case.py",
        role="bad",
        expected=claim,
        observed="flat; symptom holds",
        growth=None,
        runtime_ok=True,
        lint_ok=True,
        reasons=[],
    )
    table = Report(rows=[row], device="cpu", torch_version="2.13.0", seconds=1.0).table(width=100)
    assert "…" not in table
    lines = table.splitlines()
    body = lines[: lines.index("")]
    assert all(len(line) <= 100 for line in body), table

    def column(name: str, following: str) -> str:
        start, end = body[0].index(name), body[0].index(following)
        return "".join(line[start:end].strip() + " " for line in body[2:]).strip()

    # The whole claim and the whole name, read down their columns.
    assert column("expected", "observed") == claim
    assert column("fixture", "expected").replace(" ", "") == (
        "bad_a_rather_long_fixture_name_for_a_meta_learning_case.py"
    )


def _cuda_count() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def test_a_missing_cuda_device_is_an_environment_error(capsys):
    count = _cuda_count()
    requests = [f"cuda:{count}"] + (["cuda"] if count == 0 else [])
    for request in requests:
        assert main(["--device", request, "--no-lint", str(FIXTURE)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.count("\n") == 1 and captured.err.startswith("runtime_check: ")
        expected = "CUDA is not available" if count == 0 else f"has {count} CUDA device"
        assert expected in captured.err
