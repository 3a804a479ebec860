"""What each bad fixture's finding costs, measured: the figures behind the consequence
groups and the rule docs.

    python -m runtime_check consequences            # print the table
    python -m runtime_check consequences --write    # write gradlint/data/consequences.json
                                                    # and docs/consequences.md
    python -m runtime_check consequences --check    # exit 1 if the shipped table is stale

Every bad fixture runs next to its fixed version (`bad_x.fixed.py`), on the CPU, through
the harness (runtime_check.harness), which runs each at three loop lengths under a
saved-tensor tracker. A fixture's figure is what its finding's claim rests on:

- it raises: the exception;
- it keeps a graph alive: graph nodes and saved-tensor bytes still held per iteration
  (the slope over the three lengths, minus the fixed version's);
- it records a graph for nothing: saved-tensor bytes packed per iteration beyond the
  fixed version's (packed, then freed with the graph: the cost is the allocation and
  the forward's bookkeeping, every iteration);
- otherwise the fixture's stated symptom (a wrong gradient, a parameter that never moves).

The groups are those gradlint gives the fixture's findings of its folder's code. All
figures are exact counts on torch's CPU build (no timing, no RSS), so a fresh measurement
reproduces them; tests/test_consequences.py allows TOLERANCE for other torch versions.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TABLE_PATH = REPO / "gradlint" / "data" / "consequences.json"
DOC_PATH = REPO / "docs" / "consequences.md"
COMMAND = "python -m runtime_check consequences --write"
# A fresh measurement may differ from the committed table by this share of each figure
# (torch versions change which tensors an op saves, and how many nodes a graph has).
TOLERANCE = 0.10


def measure(paths: list[Path] | None = None, jobs: int | None = None) -> dict:
    """The table: one entry per bad fixture under `paths` (default: every fixture)."""
    from gradlint.config import Config
    from gradlint.engine import lint_file
    from runtime_check.contract import discover, role_of
    from runtime_check.harness import default_paths, run

    files = discover(default_paths() if paths is None else paths)
    bad = [f for f in files if role_of(f) == "bad" and f.suffix == ".py"]
    fixed = {f: _fixed_sibling(f) for f in bad}
    targets = bad + [f for f in fixed.values() if f is not None]
    report = run(targets, device="cpu", jobs=jobs, lint=False)
    rows = {Path(row.fixture).name: row for row in report.rows}
    entries = []
    for path in bad:
        row = rows.get(path.name)
        if row is None or row.rule is None:
            continue
        fixed_path = fixed[path]
        before = rows.get(fixed_path.name) if fixed_path is not None else None
        findings = lint_file(path, Config(select=(row.rule,))).diagnostics
        groups = sorted({d.group.value for d in findings if d.code == row.rule and d.group})
        entries.append(_entry(path, row, before, groups))
    return {
        "generated_by": COMMAND,
        "torch": report.torch_version,
        "tolerance": TOLERANCE,
        "fixtures": entries,
    }


def _fixed_sibling(path: Path) -> Path | None:
    sibling = path.with_name(path.name[: -len(".py")] + ".fixed.py")
    return sibling if sibling.is_file() else None


def _entry(path: Path, row, fixed_row, groups: list[str]) -> dict:
    entry: dict = {
        "rule": row.rule,
        "fixture": f"{path.parent.name}/{path.name}",
        "groups": groups,
        "raised": None,
        "nodes_per_iteration": None,
        "retained_bytes_per_iteration": None,
        "wasted_bytes_per_iteration": None,
        "symptom": None,
    }
    if row.observed.startswith("raises "):
        entry["raised"] = row.observed[len("raises ") :].split(". ")[0]
        return entry
    growth = row.growth
    base = fixed_row.growth if fixed_row is not None else None
    if growth is not None:
        nodes = growth.nodes_per_iteration - (base.nodes_per_iteration if base else 0)
        kept = growth.saved_bytes_per_iteration - (base.saved_bytes_per_iteration if base else 0)
        if nodes > 0 or kept > 0:
            entry["nodes_per_iteration"] = max(nodes, 0)
            entry["retained_bytes_per_iteration"] = max(kept, 0)
        packed = growth.packed_bytes_per_iteration
        if packed is not None and base is not None and base.packed_bytes_per_iteration is not None:
            wasted = packed - base.packed_bytes_per_iteration
            if wasted > 0:
                entry["wasted_bytes_per_iteration"] = wasted
    entry["symptom"] = row.expected
    return entry


def render(data: dict) -> str:
    """docs/consequences.md from the table."""
    from gradlint.rules.consequences import describe, fixture_figure

    codes = sorted({row["rule"] for row in data["fixtures"]})
    out = [
        "# Measured consequences",
        "",
        f"<!-- Generated by `{COMMAND}`; do not edit by hand. -->",
        "",
        "What each rule's findings cost when the code runs, measured by running every bad",
        "fixture next to its fixed version under torch "
        f"({data.get('torch') or 'unknown version'}, CPU). A figure is what the finding's",
        "claim rests on: the exception it raises; the graph nodes and saved-tensor bytes it",
        "keeps alive per iteration (more than the fixed version); the saved-tensor bytes its",
        "forwards pack per iteration for a backward that never runs; or the fixture's stated",
        "symptom. The groups are the ones gradlint gives the fixture's findings. Counts are",
        "exact on the CPU build; tests/test_consequences.py re-measures a few fixtures and",
        f"allows {round(100 * data.get('tolerance', TOLERANCE))}% for another torch version.",
        "",
        "## By rule",
        "",
    ]
    for code in codes:
        for line in describe(code, data):
            out.append(f"- **{code}** {line}")
    out += [
        "",
        "## By fixture",
        "",
        "| Rule | Fixture | Groups | Figure |",
        "| --- | --- | --- | --- |",
    ]
    for row in data["fixtures"]:
        figure = fixture_figure(row).replace("|", "\\|")
        out.append(
            f"| {row['rule']} | `{row['fixture']}` | {', '.join(row['groups']) or '-'} | {figure} |"
        )
    return "\n".join(out) + "\n"


def differences(committed: dict, fresh: dict, tolerance: float = TOLERANCE) -> list[str]:
    """Where a fresh measurement departs from the committed table: a fixture whose
    groups or exception changed, or a figure off by more than `tolerance` of it. Only the
    fixtures both measured are compared (a test measures a few)."""
    by_fixture = {row["fixture"]: row for row in committed["fixtures"]}
    problems = []
    for row in fresh["fixtures"]:
        old = by_fixture.get(row["fixture"])
        if old is None:
            problems.append(f"{row['fixture']}: not in the committed table; run {COMMAND}")
            continue
        for key in ("groups", "raised"):
            if (old[key] or None) != (row[key] or None):
                problems.append(f"{row['fixture']}: {key} {old[key]!r} measured {row[key]!r}")
        for key in (
            "nodes_per_iteration",
            "retained_bytes_per_iteration",
            "wasted_bytes_per_iteration",
        ):
            before, now = old[key] or 0, row[key] or 0
            if abs(now - before) > tolerance * max(abs(before), 1):
                problems.append(f"{row['fixture']}: {key} {before} in the table, measured {now}")
    return problems


def dump(data: dict) -> str:
    return json.dumps(data, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runtime_check consequences")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="write the table and the doc")
    action.add_argument("--check", action="store_true", help="exit 1 if they are stale")
    parser.add_argument("--jobs", "-j", type=int, default=None)
    args = parser.parse_args(argv)
    data = measure(jobs=args.jobs)
    if args.write:
        TABLE_PATH.write_text(dump(data), encoding="utf-8")
        DOC_PATH.write_text(render(data), encoding="utf-8")
        print(f"wrote {TABLE_PATH} and {DOC_PATH}")
        return 0
    if args.check:
        committed = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
        problems = differences(committed, data)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    print(render(data))
    return 0
