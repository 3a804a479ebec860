"""Lint every .py file under the installed site-packages through gradlint's engine.

    python scripts/sweep_site_packages.py [ROOTS ...] [--jobs N] [--all-rules-everywhere]

Real code nobody wrote for gradlint (torch's own sources included) keeps the engine honest:
every file must either be linted or fail with a SourceError (a syntax error, an encoding
problem, nesting too deep). Any other exception is an internal error, printed with its
traceback; the script then exits 1.

Prints: files, lines, CPU seconds (workers and this process), findings per rule, file
errors by kind, the slowest files, and the internal errors.

--all-rules-everywhere turns off the engine's token pre-filter (a file with none of a
rule's trigger tokens is only compiled, not analysed), so every rule visits every file:
a harsher crash test than what users run, and a slower one.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import signal
import site
import sys
import time
import traceback
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from gradlint import engine

SLOWEST_SHOWN = 10


@dataclass
class FileReport:
    path: str
    lines: int = 0
    cpu_s: float = 0.0
    findings: Counter = field(default_factory=Counter)
    locations: list[str] = field(default_factory=list)  # "line:col CODE message"
    error_kind: str | None = None
    error: str | None = None
    internal: str | None = None  # the traceback of an unexpected exception


class FileTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise FileTimeout


# SourceError messages, grouped into kinds for the summary. Anything not matched is
# reported under its own first words.
ERROR_KINDS = [
    ("syntax error", re.compile(r"^SyntaxError")),
    ("nesting too deep", re.compile(r"nesting too deep")),
    ("not valid in its encoding", re.compile(r"^not valid ")),
    ("cannot decode", re.compile(r"^cannot decode")),
    ("NUL byte", re.compile(r"NUL byte")),
    ("cannot read", re.compile(r"^cannot read")),
]


def error_kind(message: str) -> str:
    for kind, pattern in ERROR_KINDS:
        if pattern.search(message):
            return kind
    return " ".join(message.split()[:3])


_TIMEOUT_S = 0


def _init_worker(timeout_s: int, all_rules_everywhere: bool) -> None:
    global _TIMEOUT_S
    _TIMEOUT_S = timeout_s
    # Workers must not compete with the parent for Ctrl-C; the parent stops the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGALRM, _on_alarm)
    if all_rules_everywhere:
        engine.might_match = lambda source, rules: True


def lint_one(path: str) -> FileReport:
    report = FileReport(path)
    started = time.process_time()
    if _TIMEOUT_S:
        signal.alarm(_TIMEOUT_S)
    try:
        data = Path(path).read_bytes()
        report.lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        source = engine.decode_source(data, path)
        for diagnostic in engine.lint_source(source, path):
            report.findings[diagnostic.code] += 1
            report.locations.append(
                f"{diagnostic.start.line}:{diagnostic.start.column + 1} {diagnostic.code} "
                f"{diagnostic.message}"
            )
    except engine.SourceError as exc:
        report.error = str(exc.error)
        report.error_kind = error_kind(exc.error.message)
    except OSError as exc:
        report.error = f"{path}: cannot read: {exc.strerror or exc}"
        report.error_kind = "cannot read"
    except FileTimeout:
        report.internal = f"took more than {_TIMEOUT_S} s of wall time (stopped)"
    except BaseException:
        report.internal = traceback.format_exc()
    finally:
        if _TIMEOUT_S:
            signal.alarm(0)
    report.cpu_s = time.process_time() - started
    return report


def python_files(roots: list[str]) -> list[str]:
    files: list[str] = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            files.extend(os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".py"))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="*", help="folders to sweep (default: site-packages)")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--timeout", type=int, default=120, help="wall seconds per file before it counts as hung"
    )
    parser.add_argument("--all-rules-everywhere", action="store_true")
    parser.add_argument("--show-errors", type=int, default=5, help="example file errors per kind")
    parser.add_argument("--show-findings", type=int, default=50, help="findings listed in full")
    args = parser.parse_args(argv)

    roots = args.roots or site.getsitepackages()
    files = python_files(roots)
    print(f"sweeping {len(files)} .py files under {', '.join(roots)} with {args.jobs} workers")
    sys.stdout.flush()

    wall_start = time.perf_counter()
    self_start = resource.getrusage(resource.RUSAGE_SELF)
    reports: list[FileReport] = []
    with ProcessPoolExecutor(
        max_workers=args.jobs,
        initializer=_init_worker,
        initargs=(args.timeout, args.all_rules_everywhere),
    ) as pool:
        for done, report in enumerate(pool.map(lint_one, files, chunksize=8), 1):
            reports.append(report)
            if done % 2000 == 0:
                print(f"  {done}/{len(files)} files, {time.perf_counter() - wall_start:.0f} s")
                sys.stdout.flush()
    wall = time.perf_counter() - wall_start
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    me = resource.getrusage(resource.RUSAGE_SELF)
    # The pool is joined, so RUSAGE_CHILDREN holds every worker's CPU time.
    worker_cpu = children.ru_utime + children.ru_stime
    own_cpu = (me.ru_utime - self_start.ru_utime) + (me.ru_stime - self_start.ru_stime)

    findings = Counter()
    for report in reports:
        findings.update(report.findings)
    errors = [r for r in reports if r.error]
    internal = [r for r in reports if r.internal]
    by_kind = Counter(r.error_kind for r in errors)

    print()
    print(f"files:            {len(reports)}")
    print(f"lines:            {sum(r.lines for r in reports)}")
    print(
        f"CPU seconds:      {worker_cpu + own_cpu:.1f} (workers {worker_cpu:.1f}, main {own_cpu:.1f})"
    )
    print(f"  per-file sum:   {sum(r.cpu_s for r in reports):.1f}")
    print(f"wall seconds:     {wall:.1f}")
    print(f"max worker RSS:   {children.ru_maxrss / 1024:.0f} MiB")
    print(f"findings:         {sum(findings.values())}")
    for code, count in sorted(findings.items()):
        print(f"  {code}: {count}")
    print(f"files with findings: {sum(1 for r in reports if r.findings)}")
    shown = 0
    for report in reports:
        for location in report.locations:
            if shown < args.show_findings:
                print(f"  {report.path}:{location}")
            shown += 1
    print(f"file errors:      {len(errors)}")
    for kind, count in by_kind.most_common():
        print(f"  {kind}: {count}")
        for report in [r for r in errors if r.error_kind == kind][: args.show_errors]:
            print(f"      {report.error}")
    print("slowest files (CPU s):")
    for report in sorted(reports, key=lambda r: r.cpu_s, reverse=True)[:SLOWEST_SHOWN]:
        print(f"  {report.cpu_s:7.2f}  {report.lines:7d} lines  {report.path}")
    print(f"internal errors:  {len(internal)}")
    for report in internal:
        print(f"--- {report.path}")
        print(report.internal.rstrip())
    return 1 if internal else 0


if __name__ == "__main__":
    sys.exit(main())
