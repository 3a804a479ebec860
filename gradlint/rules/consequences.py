"""What each rule's findings were measured to cost, as the rule docs, `gradlint rule` and
docs/consequences.md state it.

The figures are in `gradlint/data/consequences.json`, written by `python -m runtime_check
consequences --write`, which runs every bad fixture next to its fixed version under torch:
what it raises, the graph nodes and saved-tensor bytes it keeps alive per iteration,
and the saved-tensor bytes its forwards pack (and throw away) per iteration beyond the
fixed version's. tests/test_consequences.py keeps the table within a stated tolerance of a
fresh measurement.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

from gradlint.units import format_bytes, format_count


@functools.cache
def table() -> dict:
    """The measured table (empty when the data file is missing)."""
    try:
        text = resources.files("gradlint").joinpath("data/consequences.json").read_text("utf-8")
    except (FileNotFoundError, OSError):
        return {}
    return json.loads(text)


def fixture_figure(row: dict) -> str:
    """One fixture's figure in words: what its claim rests on."""
    if row.get("raised"):
        return f"raises {row['raised']}"
    parts = []
    nodes, kept = row.get("nodes_per_iteration"), row.get("retained_bytes_per_iteration")
    if nodes or kept:
        parts.append(
            f"keeps {format_count(nodes or 0)} graph nodes and {format_bytes(kept or 0)} "
            "of saved tensors per iteration"
        )
    wasted = row.get("wasted_bytes_per_iteration")
    if wasted:
        parts.append(
            f"packs {format_bytes(wasted)} of saved tensors per iteration that the "
            "fixed version does not"
        )
    if not parts and row.get("symptom"):
        parts.append(row["symptom"])
    return "; ".join(parts) or "no measurable cost"


def describe(code: str, data: dict | None = None) -> list[str]:
    """Per consequence group of the rule, one sentence on what its fixtures measured
    (in `data`, default: the shipped table)."""
    rows = [
        r for r in (data if data is not None else table()).get("fixtures", []) if r["rule"] == code
    ]
    out = []
    for group in ("crash", "wrong", "leak", "waste"):
        mine = [r for r in rows if group in r["groups"]]
        if not mine:
            continue
        out.append(f"`{group}` ({_plural(len(mine), 'fixture')}): {_summary(mine)}")
    return out


def _summary(rows: list[dict]) -> str:
    raised = sorted({r["raised"].split(":")[0] for r in rows if r.get("raised")})
    parts = []
    if raised:
        count = sum(bool(r.get("raised")) for r in rows)
        parts.append(f"{_plural(count, 'raises', 'raise')} {', '.join(raised)}")
    nodes = [r["nodes_per_iteration"] for r in rows if r.get("nodes_per_iteration")]
    kept = [r["retained_bytes_per_iteration"] for r in rows if r.get("nodes_per_iteration")]
    if nodes:
        parts.append(
            f"{_plural(len(nodes), 'keeps', 'keep')} {_span(nodes, format_count)} graph nodes and "
            f"{_span(kept, format_bytes)} of saved tensors alive per iteration"
        )
    wasted = [r["wasted_bytes_per_iteration"] for r in rows if r.get("wasted_bytes_per_iteration")]
    if wasted:
        parts.append(
            f"{_plural(len(wasted), 'packs', 'pack')} {_span(wasted, format_bytes)} of saved "
            "tensors per iteration for nothing"
        )
    silent = [r for r in rows if not r.get("raised") and not r.get("nodes_per_iteration")]
    silent = [r for r in silent if not r.get("wasted_bytes_per_iteration")]
    if silent:
        parts.append(f"{len(silent)} silently misbehave (the fixture's stated symptom holds)")
    return "; ".join(parts)


def _span(values: list[float], show) -> str:
    low, high = min(values), max(values)
    return show(low) if low == high else f"{show(low)} to {show(high)}"


def _plural(count: int, word: str, many: str | None = None) -> str:
    if many is not None:  # a verb: "1 keeps", "3 keep"
        return f"{count} {word if count == 1 else many}"
    return f"{count} {word if count == 1 else word + 's'}"
