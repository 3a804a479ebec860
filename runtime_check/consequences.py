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

Beside it, for a fixture that runs (does not raise) and has a fixed version: the time per
loop iteration of each, the median over TIMING_REPETITIONS runs timed in turns in one
process (runtime_check.worker.time_steps), and their ratio. On CUDA (`--device cuda`), the
bytes `torch.cuda.memory_allocated` grows by per iteration beyond the fixed version's.

The groups are those gradlint gives the fixture's findings of its folder's code. The
counts are exact on torch's CPU build (no RSS), so a fresh measurement reproduces them;
tests/test_consequences.py allows TOLERANCE for other torch versions. The times are not:
they depend on the machine and its load, are indicative, and are never compared.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TABLE_PATH = REPO / "gradlint" / "data" / "consequences.json"
DOC_PATH = REPO / "docs" / "consequences.md"
COMMAND = "python -m runtime_check consequences --write"
# A fresh measurement may differ from the committed table by this share of each figure
# (torch versions change which tensors an op saves, and how many nodes a graph has).
TOLERANCE = 0.10


def measure(
    paths: list[Path] | None = None,
    jobs: int | None = None,
    *,
    device: str = "cpu",
    timing: bool = True,
    repetitions: int | None = None,
) -> dict:
    """The table: one entry per bad fixture under `paths` (default: every fixture). With
    `timing`, each one that runs and has a fixed version is timed next to it."""
    from gradlint.config import Config
    from gradlint.engine import lint_file
    from runtime_check.contract import discover, role_of
    from runtime_check.harness import TIMING_REPETITIONS, default_paths, run, time_pairs

    files = discover(default_paths() if paths is None else paths)
    bad = [f for f in files if role_of(f) == "bad" and f.suffix == ".py"]
    fixed = {f: _fixed_sibling(f) for f in bad}
    targets = bad + [f for f in fixed.values() if f is not None]
    report = run(targets, device=device, jobs=jobs, lint=False)
    rows = {Path(row.fixture).name: row for row in report.rows}
    measured: list[tuple[Path, object, object]] = []
    for path in bad:
        row = rows.get(path.name)
        if row is None or row.rule is None:
            continue
        fixed_path = fixed[path]
        before = rows.get(fixed_path.name) if fixed_path is not None else None
        measured.append((path, row, before))
    times: dict[Path, dict] = {}
    count = TIMING_REPETITIONS if repetitions is None else repetitions
    if timing:
        pairs = [
            (path, fixed[path])
            for path, row, before in measured
            if _timeable(row) and before is not None and before.runtime_ok
        ]
        # one pair at a time unless asked: pairs timed side by side slow each other
        times = time_pairs(pairs, report.device, jobs=jobs or 1, repetitions=count)
    entries = []
    for path, row, before in measured:
        findings = lint_file(path, Config(select=(row.rule,))).diagnostics
        groups = sorted({d.group.value for d in findings if d.code == row.rule and d.group})
        entry = _entry(path, row, before, groups)
        entry["time_per_step"] = _time_per_step(times.get(path))
        entries.append(entry)
    data: dict = {
        "generated_by": COMMAND,
        "torch": report.torch_version,
        "device": report.device,
        "tolerance": TOLERANCE,
        "fixtures": entries,
    }
    if timing:
        names = sorted({o["device_name"] for o in times.values() if o.get("device_name")})
        data["timing"] = {
            "machine": machine(),
            "device": ", ".join(names) or report.device,
            "repetitions": count,
        }
    return data


def machine() -> str:
    """The machine the times were taken on, in words: its processor and system."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            model = next(
                (ln.split(":", 1)[1].strip() for ln in info if ln.startswith("model name")), ""
            )
    except OSError:
        pass
    model = model or platform.processor() or platform.machine() or "unknown processor"
    return f"{model}, {os.cpu_count()} logical CPUs, {platform.system()}"


def _timeable(row) -> bool:
    """Does the bad fixture run its loop to the end, so its steps can be timed?"""
    return not row.observed.startswith("raises ") and row.growth is not None


def _time_per_step(observation: dict | None) -> dict | None:
    """{"bad", "fixed": seconds per iteration, "ratio": bad / fixed, "steps": the long
    run's iterations}, or None when the pair was not timed or its steps were too quick
    to tell from the noise (a median of zero or less)."""
    if not observation or observation.get("status") != "timed":
        return None
    seconds = observation.get("seconds_per_step") or {}
    bad, fixed = seconds.get("bad"), seconds.get("fixed")
    if not (isinstance(bad, float) and isinstance(fixed, float)) or bad <= 0 or fixed <= 0:
        return None
    steps = observation["long"]
    return {"bad": bad, "fixed": fixed, "ratio": round(bad / fixed, 2), "steps": steps}


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
        "cuda_bytes_per_iteration": None,
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
        cuda = growth.cuda_bytes_per_iteration
        if cuda is not None:
            # what the device holds more per iteration than the fixed version does
            fixed_cuda = base.cuda_bytes_per_iteration if base is not None else None
            entry["cuda_bytes_per_iteration"] = max(cuda - (fixed_cuda or 0), 0)
    entry["symptom"] = row.expected
    return entry


def format_seconds(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} µs"


def time_cell(row: dict) -> str:
    """The fixture's time per step next to its fixed version's, or `-` when not timed."""
    timed = row.get("time_per_step")
    if not timed:
        return "-"
    return (
        f"{format_seconds(timed['bad'])} / {format_seconds(timed['fixed'])} "
        f"({timed['ratio']:.2f}x, {timed['steps']} steps)"
    )


def render(data: dict) -> str:
    """docs/consequences.md from the table."""
    from gradlint.rules.consequences import describe, fixture_figure
    from gradlint.units import format_bytes

    codes = sorted({row["rule"] for row in data["fixtures"]})
    device = data.get("device") or "cpu"
    out = [
        "# Measured consequences",
        "",
        f"<!-- Generated by `{COMMAND}`; do not edit by hand. -->",
        "",
        "What each rule's findings cost when the code runs, measured by running every bad",
        "fixture next to its fixed version under torch "
        f"({data.get('torch') or 'unknown version'}, {device.upper()}). A figure is what the "
        "finding's",
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
    timing = data.get("timing")
    if timing:
        out += [
            "",
            "## Time per step",
            "",
            "The last column of the table below: the time one iteration of the fixture's loop",
            "takes, next to its fixed version's, and their ratio, for each bad fixture that",
            "runs to its end and has a fixed version. Each is the median over "
            f"{timing['repetitions']} runs,",
            "timed in turns in one process, of (a long run - a short run) / (the iterations",
            "between them), so what the program builds once does not count. A bad version",
            "whose graph grows (a backward through every earlier step, GL001 with",
            "`retain_graph`) takes longer per step the longer its loop: its ratio holds for",
            "the steps of its long run, given in the cell. Measured on",
            f"{timing['machine']} ({timing['device']}). **These times are indicative only**:",
            "they change with the machine and its load, and no test compares them. The counts",
            "above are the exact figures.",
            "",
        ]
        for code in codes:
            ratios = [
                row["time_per_step"]["ratio"]
                for row in data["fixtures"]
                if row["rule"] == code and row.get("time_per_step")
            ]
            if ratios:
                low, high = min(ratios), max(ratios)
                span = f"{low:.2f}x" if low == high else f"{low:.2f}x to {high:.2f}x"
                out.append(
                    f"- **{code}** ({len(ratios)} timed): {span} the fixed version's time per step"
                )
    out += [
        "",
        "## By fixture",
        "",
        "| Rule | Fixture | Groups | Figure | Time per step: bad / fixed |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in data["fixtures"]:
        figure = fixture_figure(row)
        if row.get("cuda_bytes_per_iteration") is not None:
            figure += (
                f"; CUDA memory_allocated {format_bytes(row['cuda_bytes_per_iteration'])} "
                "more per iteration than the fixed version"
            )
        figure = figure.replace("|", "\\|")
        groups = ", ".join(row["groups"]) or "-"
        out.append(
            f"| {row['rule']} | `{row['fixture']}` | {groups} | {figure} | {time_cell(row)} |"
        )
    return "\n".join(out) + "\n"


def differences(committed: dict, fresh: dict, tolerance: float = TOLERANCE) -> list[str]:
    """Where a fresh measurement departs from the committed table: a fixture whose
    groups or exception changed, or a figure off by more than `tolerance` of it. Only the
    fixtures both measured are compared (a test measures a few), and never the times."""
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
            "cuda_bytes_per_iteration",
        ):
            if key == "cuda_bytes_per_iteration" and None in (old.get(key), row.get(key)):
                continue  # measured on one device only
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
    parser.add_argument(
        "--device",
        default="cpu",
        choices=("cpu", "cuda", "auto"),
        help="where the fixtures run (default cpu: the committed table's counts are CPU's; "
        "cuda adds the bytes torch.cuda.memory_allocated grows by per iteration)",
    )
    args = parser.parse_args(argv)
    # --check compares counts only: the times are not worth their minutes there
    try:
        data = measure(jobs=args.jobs, device=args.device, timing=not args.check)
    except (FileNotFoundError, ValueError) as exc:  # no fixtures here; no such device
        print(f"runtime_check consequences: {exc}", file=sys.stderr)
        return 2
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
