"""Benchmark gradlint against its peers on real code, side by side, in one run.

    python bench/bench.py --corpus PATH [--corpus PATH ...] [--runs 3] [--slow-runs 1]
                          [--torchfix-venv /tmp/tfvenv] [--only TOOL,...] [--json OUT]
    python bench/bench.py --profile PATH [--top 25]

Every tool gets the same explicit list of .py files (each tool's own discovery and
excludes would otherwise give each a different corpus) and runs single-process where it
has the choice, so CPU seconds compare work, not parallelism. CPU seconds are the user +
system time of the tool's process tree (resource.getrusage(RUSAGE_CHILDREN) around each
run), which is what a shared machine does not distort much; wall seconds are printed too.

The tools take turns, one run each per round, so a ratio is taken within a round (the
machine's speed drifts between rounds far more than within one) and its median and
range over the rounds are printed. gradlint's bytecode is compiled first, as an install
from a wheel has it: with PYTHONDONTWRITEBYTECODE set, an editable checkout would
otherwise compile its own sources at every start.

"gradlint after one edit" copies the corpus, fills a cache, and then each run appends a
function to the project file that the most other files import (or --edit-helper) and
lints the tree again with that cache: the files whose results depended on the helper
are linted again, the rest come from the cache.

This is not a test: it takes minutes to hours, depending on the corpus and the tools.
See bench/README.md for the figures and how they were made.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
# A run that takes longer than this (CPU seconds) is not repeated beyond --slow-runs.
SLOW_CPU_S = 120.0

# Loops over the corpus in a fresh interpreter, so their cost is measured like a tool's.
PARSE_LOOP = """
import sys, {module}
for path in open(sys.argv[1], encoding="utf-8").read().splitlines():
    try:
        source = open(path, "rb").read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        continue
    try:
        {call}
    except Exception:
        pass
"""
LIBCST_LOOP = PARSE_LOOP.format(module="libcst", call="libcst.parse_module(source)")
AST_LOOP = PARSE_LOOP.format(module="ast", call="ast.parse(source)")

# flake8 finds plugins through importlib.metadata.distributions(); hiding gradlint's
# distribution there is the same as gradlint not being installed, for this process only.
FLAKE8_WITHOUT_GRADLINT = """
import importlib.metadata as metadata, sys
_distributions = metadata.distributions
def distributions(**kwargs):
    for dist in _distributions(**kwargs):
        if (dist.metadata["Name"] or "").lower() != "gradlint":
            yield dist
metadata.distributions = distributions
from flake8.main.cli import main
sys.argv[0] = "flake8"
sys.exit(main())
"""


@dataclass
class Tool:
    key: str  # for --only
    name: str
    # argv, with {files} standing for the file list (expanded into arguments) and
    # {list} for the path of a file holding the list, {cache} for a cache directory
    argv: list[str]
    note: str = ""
    prime: bool = False  # run once, untimed, before timing (to fill a cache)
    ok_status: tuple[int, ...] = (0, 1)
    edits_helper: bool = False  # each run follows an edit of one helper file (see above)


@dataclass
class Timing:
    tool: str
    runs: list[tuple[float, float]] = field(default_factory=list)  # (cpu_s, wall_s)
    status: int | None = None
    error: str | None = None
    wanted: int = 10**6  # rounds to run (fewer for a slow tool)

    @property
    def cpu(self) -> float:
        return statistics.median(r[0] for r in self.runs) if self.runs else 0.0

    @property
    def wall(self) -> float:
        return statistics.median(r[1] for r in self.runs) if self.runs else 0.0


def tools(torchfix_venv: Path | None) -> list[Tool]:
    py = sys.executable
    # warm and after-one-edit run the same command over a filled cache
    cached = [py, "-m", "gradlint", "--isolated", "--cache-dir", "{cache}", "-j1", "{files}"]
    found = [
        Tool(
            "gradlint-cold",
            "gradlint cold",
            [py, "-m", "gradlint", "--isolated", "--no-cache", "-j1", "--exit-zero", "{files}"],
            "--no-cache -j1",
        ),
        Tool(
            "gradlint-warm",
            "gradlint warm",
            cached,
            "-j1, cache filled by an untimed run",
            prime=True,
        ),
        Tool(
            "gradlint-edit",
            "gradlint after one edit",
            cached,
            "-j1, cache filled, then one helper file edited before each run",
            prime=True,
            edits_helper=True,
        ),
        Tool(
            "libcst-parse",
            "libcst.parse_module loop",
            [py, "-c", LIBCST_LOOP, "{list}"],
            "the LibCST floor",
        ),
        Tool(
            "ast-parse",
            "ast.parse loop",
            [py, "-c", AST_LOOP, "{list}"],
            "CPython's parser, for scale",
        ),
        Tool(
            "ruff",
            "ruff check --select ALL",
            ["ruff", "check", "--isolated", "--select", "ALL", "--no-cache", "--exit-zero"]
            + ["--quiet", "{files}"],
            "multi-threaded; CPU s summed over threads",
        ),
        Tool(
            "flake8-B",
            "flake8 --select B",
            [py, "-m", "flake8", "-j1", "--select", "B", "{files}"],
            "bugbear; gradlint's GL plugin installed but not selected",
        ),
        Tool(
            "flake8-B-no-GL",
            "flake8 --select B, no GL plugin",
            [py, "-c", FLAKE8_WITHOUT_GRADLINT, "-j1", "--select", "B", "{files}"],
            "gradlint's distribution hidden from flake8's plugin finder",
        ),
        Tool(
            "flake8-GL",
            "flake8 --select GL",
            [py, "-m", "flake8", "-j1", "--select", "GL", "{files}"],
            "gradlint through its flake8 plugin",
        ),
    ]
    if torchfix_venv is not None:
        venv_bin = torchfix_venv / "bin"
        found += [
            Tool(
                "torchfix",
                "torchfix",
                [str(venv_bin / "torchfix"), "-j1", "{files}"],
                "TorchFix CLI, default rules, -j1",
            ),
            Tool(
                "flake8-TOR",
                "flake8 --select TOR",
                [str(venv_bin / "python"), "-m", "flake8", "-j1", "--select", "TOR", "{files}"],
                "TorchFix's flake8 plugin",
            ),
        ]
    return found


def python_files(root: Path) -> list[str]:
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        files += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".py")]
    return files


def count_lines(files: list[str]) -> int:
    total = 0
    for path in files:
        with open(path, "rb") as handle:
            total += handle.read().count(b"\n")
    return total


def expand(argv: list[str], files: list[str], list_path: str, cache: str) -> list[str]:
    out: list[str] = []
    for arg in argv:
        if arg == "{files}":
            out += files
        else:
            out.append(arg.replace("{list}", list_path).replace("{cache}", cache))
    return out


def run_once(argv: list[str], cwd: str) -> tuple[float, float, int, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = done.stderr.decode("utf-8", "replace")[-500:]
    return cpu, wall, done.returncode, tail


def most_imported(files: list[str]) -> str | None:
    """The project file that the most of `files` import, as gradlint resolves imports."""
    from gradlint.analysis.project import imported_project_files

    counts: dict[str, int] = {}
    for path in files:
        try:
            source = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for target in imported_project_files(path, source):
            counts[target] = counts.get(target, 0) + 1
    return max(counts, key=lambda t: (counts[t], t)) if counts else None


def copy_corpus(files: list[str], root: Path, into: Path) -> list[str]:
    """The corpus's files copied under `into` (same relative paths), for a tool that
    edits them."""
    copied = []
    for path in files:
        target = into / os.path.relpath(path, root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        copied.append(str(target))
    return copied


def edit_helper(path: str, count: int) -> None:
    """A real change to what the helper defines, so its summary changes."""
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(f"\n\ndef _gradlint_bench_edit_{count}(value):\n    return value\n")


def bench_corpus(
    label: str,
    root: Path,
    files: list[str],
    chosen: list[Tool],
    runs: int,
    slow_runs: int,
    workdir: Path,
    helper: str | None,
) -> list[Timing]:
    list_path = workdir / f"{label}.files"
    list_path.write_text("\n".join(files) + "\n", encoding="utf-8")
    argvs: dict[str, list[str]] = {}
    edited: dict[str, str] = {}  # tool key -> the helper file (in the tool's own copy)
    timings = {tool.key: Timing(tool.name) for tool in chosen}
    for tool in chosen:
        cache = workdir / f"{label}.{tool.key}.cache"
        tool_files = files
        if tool.edits_helper:
            chosen_helper = str(root / helper) if helper else most_imported(files)
            if chosen_helper is None:
                timings[tool.key].error = "no file of the corpus imports another"
                continue
            copy = workdir / f"{label}.{tool.key}.tree"
            tool_files = copy_corpus(files, root, copy)
            edited[tool.key] = str(copy / os.path.relpath(chosen_helper, root))
            print(f"  {tool.name}: editing {os.path.relpath(chosen_helper, root)}", flush=True)
        argvs[tool.key] = expand(tool.argv, tool_files, str(list_path), str(cache))
        if tool.prime:
            shutil.rmtree(cache, ignore_errors=True)
            run_once(argvs[tool.key], str(workdir))
    # Rounds: each tool once per round, so the ratios of one round share its machine.
    for round_number in range(1, runs + 1):
        for tool in chosen:
            timing = timings[tool.key]
            if tool.key not in argvs or (timing.runs and round_number > timing.wanted):
                continue
            if tool.key in edited:
                edit_helper(edited[tool.key], round_number)
            cpu, wall, status, tail = run_once(argvs[tool.key], str(workdir))
            timing.status = status
            if status not in tool.ok_status:
                timing.error = f"exit status {status}: {tail.strip()[-300:]}"
            timing.runs.append((cpu, wall))
            print(
                f"  {tool.name:34} run {len(timing.runs)}: {cpu:8.1f} CPU s {wall:8.1f} s wall"
                f"  (exit {status})",
                flush=True,
            )
            if cpu > SLOW_CPU_S:
                timing.wanted = min(timing.wanted, slow_runs)
    return [timings[tool.key] for tool in chosen]


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "n/a"


def report(label: str, files: list[str], lines: int, timings: list[Timing]) -> str:
    by_name = {t.tool: t for t in timings}
    out = [f"### {label}: {len(files)} files, {lines} lines", ""]
    out.append("| tool | CPU s | wall s | runs | CPU vs gradlint cold |")
    out.append("|---|---:|---:|---:|---:|")
    cold = by_name.get("gradlint cold")
    for timing in timings:
        versus = ratio(timing.cpu, cold.cpu) if cold else ""
        flag = f" ({timing.error})" if timing.error else ""
        out.append(
            f"| {timing.tool}{flag} | {timing.cpu:.1f} | {timing.wall:.1f} | "
            f"{len(timing.runs)} | {versus} |"
        )
    out.append("")

    def get(name):
        timing = by_name.get(name)
        return timing.cpu if timing and timing.runs else None

    def paired(a: str, b: str) -> str:
        """The ratio within each round: median (min-max)."""
        first, second = by_name[a].runs, by_name[b].runs
        ratios = sorted(x[0] / y[0] for x, y in zip(first, second, strict=False) if y[0])
        if not ratios:
            return "n/a"
        median = statistics.median(ratios)
        # a third digit where two would round a warm run's 0.054 to the goal's 0.05
        digits = 3 if median < 0.1 else 2
        if len(ratios) == 1:
            return f"{median:.{digits}f}"
        return (
            f"{median:.{digits}f} ({ratios[0]:.{digits}f}-{ratios[-1]:.{digits}f}, "
            f"{len(ratios)} rounds)"
        )

    goals = [
        (
            "gradlint cold / libcst.parse_module loop",
            "gradlint cold",
            "libcst.parse_module loop",
            "goal <= 1.5",
        ),
        ("torchfix / gradlint cold", "torchfix", "gradlint cold", "goal >= 5"),
        (
            "flake8 --select TOR / gradlint cold",
            "flake8 --select TOR",
            "gradlint cold",
            "goal >= 5",
        ),
        ("gradlint warm / gradlint cold", "gradlint warm", "gradlint cold", "goal <= 0.05"),
        (
            "gradlint after one edit / gradlint cold",
            "gradlint after one edit",
            "gradlint cold",
            "the cost of re-linting after editing a helper",
        ),
        (
            "flake8 B with GL plugin / without",
            "flake8 --select B",
            "flake8 --select B, no GL plugin",
            "the plugin's cost when GL is not selected",
        ),
    ]
    for text, a, b, goal in goals:
        if get(a) is not None and get(b) is not None:
            out.append(f"- {text}: {paired(a, b)} ({goal})")
    return "\n".join(out) + "\n"


def profile(path: Path, top: int) -> None:
    """cProfile one cold, in-process gradlint run; the top functions by cumulative time,
    gradlint's own modules only."""
    import cProfile
    import io
    import pstats

    from gradlint import cli

    files = python_files(path)
    profiler = cProfile.Profile()
    sink = io.StringIO()
    real_stdout = sys.stdout
    sys.stdout = sink
    start = time.process_time()
    try:
        profiler.runcall(cli.main, ["--isolated", "--no-cache", "-j1", "--exit-zero", *files])
    finally:
        sys.stdout = real_stdout
    cpu = time.process_time() - start
    print(
        f"profiled gradlint cold over {len(files)} files under {path}: {cpu:.1f} CPU s "
        "(with cProfile's overhead). LibCST's parse and position code run on "
        "gradlint.deep's thread, which cProfile does not see: they show as this thread "
        "waiting on a lock (`acquire`, under run_deep)."
    )
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("cumulative").print_stats(r"gradlint/", top)
    stats.sort_stats("tottime").print_stats(top)


def compile_gradlint() -> None:
    """Byte-compile the gradlint that `python -m gradlint` imports, as installing a wheel
    does; otherwise PYTHONDONTWRITEBYTECODE (set on some machines) makes every timed
    start compile its sources again, which is not what a user's installed tool pays."""
    import gradlint

    package = os.path.dirname(gradlint.__file__)
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=False)
    print(f"byte-compiled {package}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        action="append",
        default=[],
        type=Path,
        help="a folder of Python sources (repeatable; each is timed apart)",
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per tool; the median counts")
    parser.add_argument(
        "--slow-runs",
        type=int,
        default=1,
        help=f"runs for a tool whose first run took over {SLOW_CPU_S:.0f} CPU s",
    )
    parser.add_argument(
        "--torchfix-venv",
        type=Path,
        help="a virtualenv with torchfix installed (it pins libcst<1.6)",
    )
    parser.add_argument(
        "--only",
        help="comma-separated tool keys to run (default: all): gradlint-cold, gradlint-warm, "
        "gradlint-edit, libcst-parse, ast-parse, ruff, flake8-B, flake8-B-no-GL, flake8-GL, torchfix, "
        "flake8-TOR",
    )
    parser.add_argument(
        "--edit-helper",
        help="for 'gradlint after one edit': the file to edit, relative to each corpus "
        "(default: the file the most others import)",
    )
    parser.add_argument("--json", type=Path, help="also write the timings here")
    parser.add_argument("--profile", type=Path, help="profile cold gradlint on this folder")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)

    if args.profile:
        profile(args.profile, args.top)
        return 0
    if not args.corpus:
        parser.error("give at least one --corpus (or --profile)")
    chosen = tools(args.torchfix_venv)
    if args.only:
        wanted = {name.strip() for name in args.only.split(",")}
        unknown = wanted - {tool.key for tool in chosen}
        if unknown:
            parser.error(f"unknown tool keys: {', '.join(sorted(unknown))}")
        chosen = [tool for tool in chosen if tool.key in wanted]
    compile_gradlint()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()}", flush=True)
    everything = {}
    with tempfile.TemporaryDirectory(prefix="gradlint-bench-") as tmp:
        for corpus in args.corpus:
            label = corpus.name
            files = python_files(corpus)
            lines = count_lines(files)
            print(f"{label}: {len(files)} files, {lines} lines", flush=True)
            timings = bench_corpus(
                label, corpus, files, chosen, args.runs, args.slow_runs, Path(tmp), args.edit_helper
            )
            print(report(label, files, lines, timings), flush=True)
            everything[label] = {
                "files": len(files),
                "lines": lines,
                "timings": [
                    {"tool": t.tool, "runs": t.runs, "status": t.status, "error": t.error}
                    for t in timings
                ],
            }
    print(f"load average after: {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps(everything, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
