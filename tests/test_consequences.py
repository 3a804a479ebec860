"""docs/consequences.md and the table behind it (gradlint/data/consequences.json) stay
what runtime_check measures: the committed figures within the stated tolerance of a
fresh measurement of a few fixtures, and the doc rendered from the committed table."""

from __future__ import annotations

import copy
import json
import re
from types import SimpleNamespace

import pytest

pytest.importorskip("torch")

from runtime_check import consequences  # noqa: E402

# One fixture per kind of figure: graph nodes kept (GL006), nodes and saved bytes kept
# (GL001 with retain_graph), bytes packed for nothing (GL012), an exception (GL012).
SAMPLE = (
    "GL006/bad_total_loss_plus_equals.py",
    "GL001/bad_retain_graph_rollout.py",
    "GL012/bad_greedy_action.py",
    "GL012/bad_numpy_of_forward.py",
)


def committed() -> dict:
    return json.loads(consequences.TABLE_PATH.read_text(encoding="utf-8"))


def test_the_doc_is_rendered_from_the_committed_table():
    assert consequences.DOC_PATH.read_text(encoding="utf-8") == consequences.render(committed())


def test_every_bad_fixture_has_a_committed_row():
    # a fixture added without `consequences --write` would leave its rule's cost unsaid
    root = consequences.REPO / "fixtures"
    bad = {
        f"{p.parent.name}/{p.name}"
        for p in root.glob("GL*/bad_*.py")
        if not p.name.endswith(".fixed.py")
    }
    assert bad == {row["fixture"] for row in committed()["fixtures"]}


@pytest.fixture(scope="module")
def fresh() -> dict:
    root = consequences.REPO / "fixtures"
    # two timing repetitions: the test checks that the times are there, not what they are
    return consequences.measure([root / name for name in SAMPLE], jobs=2, repetitions=2)


def test_a_fresh_measurement_matches_the_committed_figures(fresh):
    assert sorted(row["fixture"] for row in fresh["fixtures"]) == sorted(SAMPLE)
    assert consequences.differences(committed(), fresh) == []
    by_fixture = {row["fixture"]: row for row in fresh["fixtures"]}
    # the claims the messages make: GL006 after a backward keeps nodes, no activations
    gl006 = by_fixture["GL006/bad_total_loss_plus_equals.py"]
    assert gl006["groups"] == ["waste"]
    assert gl006["nodes_per_iteration"] > 0 and gl006["retained_bytes_per_iteration"] == 0
    assert by_fixture["GL001/bad_retain_graph_rollout.py"]["groups"] == ["leak"]
    assert by_fixture["GL012/bad_greedy_action.py"]["wasted_bytes_per_iteration"] > 0
    assert by_fixture["GL012/bad_numpy_of_forward.py"]["groups"] == ["crash"]


def test_differences_outside_the_tolerance_are_reported():
    table = committed()
    changed = copy.deepcopy(table)
    row = next(r for r in changed["fixtures"] if r["nodes_per_iteration"])
    row["nodes_per_iteration"] *= 1 + 2 * consequences.TOLERANCE
    (problem,) = consequences.differences(table, changed)
    assert row["fixture"] in problem and "nodes_per_iteration" in problem
    row["nodes_per_iteration"] = table["fixtures"][
        table["fixtures"].index(
            next(r for r in table["fixtures"] if r["fixture"] == row["fixture"])
        )
    ]["nodes_per_iteration"] * (1 + consequences.TOLERANCE / 2)
    assert consequences.differences(table, changed) == []


def test_the_rule_docs_quote_the_measured_figures():
    from gradlint.engine import rule_by_code

    assert "keep 5 to 12 graph nodes and 0 B of saved tensors" in rule_by_code("GL006").measured()
    text = (consequences.REPO / "docs" / "rules" / "GL012.md").read_text(encoding="utf-8")
    assert "**Measured**" in text and "for nothing" in text


# --- time per step: a measurement, so its form is checked, never its value ------------

_TIME = r"\d+(\.\d+)? (s|ms|µs)"
TIME_CELL = re.compile(rf"^(-|{_TIME} / {_TIME} \(\d+\.\d\dx, \d+ steps\))$")


def _well_formed_time(row: dict, fixed_exists: bool) -> None:
    timed = row["time_per_step"]
    if row["raised"] or not fixed_exists:
        assert timed is None, row["fixture"]  # nothing to time, or nothing to compare with
        return
    if timed is None:
        return  # steps too quick to tell from the noise on the machine that measured
    assert set(timed) == {"bad", "fixed", "ratio", "steps"}, row["fixture"]
    assert timed["bad"] > 0 and timed["fixed"] > 0 and timed["steps"] > 0
    assert timed["ratio"] == round(timed["bad"] / timed["fixed"], 2)


def _has_fixed(fixture: str) -> bool:
    path = consequences.REPO / "fixtures" / fixture
    return path.with_name(path.name[: -len(".py")] + ".fixed.py").is_file()


def test_every_committed_row_has_a_well_formed_time_per_step():
    table = committed()
    assert table["timing"]["repetitions"] >= 3 and table["timing"]["machine"]
    timed = 0
    for row in table["fixtures"]:
        _well_formed_time(row, _has_fixed(row["fixture"]))
        timed += row["time_per_step"] is not None
    assert timed >= 20  # every fixture that runs and has a fixed version, less a few
    doc = consequences.DOC_PATH.read_text(encoding="utf-8")
    assert "indicative" in doc and table["timing"]["machine"] in doc
    rows = [line for line in doc.splitlines() if line.startswith("| GL")]
    assert len(rows) == len(table["fixtures"])
    for line in rows:
        cell = line.rstrip(" |").rsplit(" | ", 1)[1]
        assert TIME_CELL.match(cell), line


def test_a_fresh_measurement_times_each_pair_it_can(fresh):
    assert fresh["timing"]["repetitions"] == 2 and fresh["timing"]["machine"]
    by_fixture = {row["fixture"]: row for row in fresh["fixtures"]}
    for name, row in by_fixture.items():
        _well_formed_time(row, _has_fixed(name))
        assert TIME_CELL.match(consequences.time_cell(row))
    # a fixture that raises is not timed; the doc's cell says so
    assert consequences.time_cell(by_fixture["GL012/bad_numpy_of_forward.py"]) == "-"


def test_a_committed_table_is_checked_without_timing_and_times_are_never_compared():
    table = committed()
    changed = copy.deepcopy(table)
    for row in changed["fixtures"]:
        if row["time_per_step"]:
            row["time_per_step"] = {"bad": 1.0, "fixed": 0.5, "ratio": 2.0, "steps": 80}
    assert consequences.differences(table, changed) == []


# --- CUDA bytes --------------------------------------------------------------------------


def test_cuda_bytes_are_the_growth_beyond_the_fixed_version():
    """The code path the CUDA measurement takes, fed the points a GPU run reports."""
    from runtime_check.judge import Growth

    def row(cuda: list[int] | None):
        points = [
            {"n": n, "nodes": 0, "saved_bytes": 0, "cuda_allocated": c}
            for n, c in zip((2, 4, 8), cuda or (None, None, None), strict=True)
        ]
        growth = Growth.from_points(points)
        return SimpleNamespace(rule="GL006", observed="grows", growth=growth, expected="grows")

    path = consequences.REPO / "fixtures" / "GL006" / "bad_losses_append.py"
    bad, fixed = row([1024, 3072, 7168]), row([512, 512, 512])
    entry = consequences._entry(path, bad, fixed, ["waste"])
    assert entry["cuda_bytes_per_iteration"] == 1024
    assert "CUDA memory_allocated 1.0 KiB more per iteration" in consequences.render(
        {"fixtures": [entry | {"time_per_step": None}]}
    )
    assert consequences._entry(path, row(None), row(None), [])["cuda_bytes_per_iteration"] is None
    # a table measured on one device only is compared on what both measured
    other = copy.deepcopy(entry) | {"cuda_bytes_per_iteration": None}
    assert consequences.differences({"fixtures": [entry]}, {"fixtures": [other]}) == []
    assert consequences.differences(
        {"fixtures": [entry]}, {"fixtures": [entry | {"cuda_bytes_per_iteration": 4096}]}
    )


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA GPU")
def test_on_cuda_the_bytes_memory_allocated_grows_by_are_measured():
    root = consequences.REPO / "fixtures"
    names = ("GL001/bad_retain_graph_rollout.py", "GL006/bad_total_loss_plus_equals.py")
    fresh = consequences.measure([root / n for n in names], jobs=2, device="cuda", repetitions=2)
    assert fresh["device"].startswith("cuda")
    by_fixture = {row["fixture"]: row for row in fresh["fixtures"]}
    # retain_graph keeps every activation on the device; the node-only leak keeps little
    assert by_fixture["GL001/bad_retain_graph_rollout.py"]["cuda_bytes_per_iteration"] > 0
    assert by_fixture["GL006/bad_total_loss_plus_equals.py"]["cuda_bytes_per_iteration"] is not None
    assert consequences.differences(committed(), fresh) == []
