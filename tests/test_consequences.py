"""docs/consequences.md and the table behind it (gradlint/data/consequences.json) stay
what runtime_check measures: the committed figures within the stated tolerance of a
fresh measurement of a few fixtures, and the doc rendered from the committed table."""

from __future__ import annotations

import copy
import json

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


def test_a_fresh_measurement_matches_the_committed_figures():
    root = consequences.REPO / "fixtures"
    fresh = consequences.measure([root / name for name in SAMPLE], jobs=2)
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
