"""Runs every fixture in its own child process, in parallel, with a time limit each.

Isolation without paying torch's import per fixture: children come from a multiprocessing
*forkserver* that has imported torch once (`set_forkserver_preload`), and each fixture gets
a fresh `Process`, so a crash, a hang or leaked memory in one cannot spoil another. (Measured
on the loaded 2-core dev machine: a spawned child pays ~3 s for torch, a forkserver child
starts in ~0.03 s after a one-off ~3.4 s server start.)

The parent never imports torch: CUDA touched in the parent would break every later fork,
and the parent has nothing to measure. While the children run, a thread in the parent asks
gradlint about each file, so the cross-check overlaps with the runs.

`time_pairs` runs children of the same kind that time a bad fixture's step next to its
fixed version's (`python -m runtime_check consequences`).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from multiprocessing.connection import wait
from pathlib import Path

from runtime_check import child
from runtime_check.contract import Fixture, discover, read_fixture
from runtime_check.judge import Lint, judge
from runtime_check.report import Report

DEFAULT_TIMEOUT = 120.0
# How many times a bad fixture's and its fixed version's steps are timed, in turns: the
# median of as many is steady against a one-off stall of a loaded machine.
TIMING_REPETITIONS = 7
REPO_ROOT = Path(__file__).resolve().parent.parent


def default_paths() -> list[Path]:
    """gradlint's own fixtures, found next to this package, never the working
    directory's: fixtures are imported and run, so only files asked for may be."""
    own = REPO_ROOT / "fixtures"
    if not own.is_dir():
        raise FileNotFoundError(
            f"gradlint's own fixtures are not here ({own}: this install has no fixtures/); "
            "name the fixture files or folders to run"
        )
    return [own]


def requested_device(device: str | None) -> str:
    """An explicit cpu/cuda wins; `auto` (or None) defers to GRADLINT_DEVICE, then to
    'cuda if available else cpu', which each child resolves for itself."""
    if device in (None, "", "auto"):
        return os.environ.get("GRADLINT_DEVICE", "").strip() or "auto"
    return device


class DeviceUnavailable(ValueError):
    """The device asked for is not on this machine: an environment problem, reported
    before any fixture runs (not as every fixture failing)."""


_DEVICE_PROBE = (
    "import sys, torch; "
    "sys.stdout.write(str(torch.cuda.device_count() if torch.cuda.is_available() else 0))"
)


def check_device(request: str) -> None:
    """Raise DeviceUnavailable when `request` names a CUDA device this machine lacks.
    Asked of a child process: CUDA initialised in the parent would break every fork."""
    if not request.startswith("cuda"):
        return
    index = int(request.partition(":")[2] or 0)
    try:
        done = subprocess.run(
            [sys.executable, "-c", _DEVICE_PROBE], capture_output=True, text=True, timeout=300
        )
    except subprocess.TimeoutExpired:
        raise DeviceUnavailable(f"device {request!r}: checking for CUDA did not finish") from None
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["torch failed to import"])[-1]
        raise DeviceUnavailable(f"device {request!r}: cannot check for CUDA: {reason}")
    count = int(done.stdout.strip() or 0)
    if count == 0:
        raise DeviceUnavailable(
            f"device {request!r} was asked for, but CUDA is not available on this machine; "
            "use --device cpu (or auto)"
        )
    if index >= count:
        raise DeviceUnavailable(
            f"device {request!r} was asked for, but this machine has {count} CUDA "
            f"device{'s' if count != 1 else ''} (cuda:0 to cuda:{count - 1})"
        )


def _context():
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        # Only takes effect before the server starts; later runs reuse the warm server.
        context.set_forkserver_preload(["runtime_check._preload"])
        return context
    return multiprocessing.get_context("spawn")


def _tail(path: str, limit: int = 4000) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _exit_reason(process) -> str:
    code = process.exitcode
    if code is None:
        return "still running, its pipe closed"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class _Running:
    def __init__(self, key: Path, process, conn, log_path: str, timeout: float) -> None:
        self.key = key
        self.process = process
        self.conn = conn
        self.log_path = log_path
        self.started = time.monotonic()
        self.deadline = self.started + timeout
        self.timeout = timeout


def run_children(
    fixtures: list[Fixture],
    device: str,
    *,
    jobs: int,
    timeout: float,
) -> dict[Path, dict]:
    """path -> observation (the worker's dict, or a timeout/crash description)."""
    tasks = [
        (fixture.path, child.child_main, (str(fixture.path), device), fixture.path.name)
        for fixture in fixtures
    ]
    return _run_processes(tasks, jobs=jobs, timeout=timeout)


def time_pairs(
    pairs: list[tuple[Path, Path]],
    device: str,
    *,
    jobs: int,
    timeout: float = DEFAULT_TIMEOUT,
    repetitions: int | None = None,
) -> dict[Path, dict]:
    """bad path -> its time per step next to its fixed version's (worker.time_pair), each
    pair in a child process of its own, like the fixtures' runs."""
    count = TIMING_REPETITIONS if repetitions is None else repetitions
    tasks = [
        (bad, child.timing_main, (str(bad), str(fixed), device, count), f"time:{bad.name}")
        for bad, fixed in pairs
    ]
    return _run_processes(tasks, jobs=jobs, timeout=timeout)


def _run_processes(tasks: list[tuple], *, jobs: int, timeout: float) -> dict[Path, dict]:
    """key -> what the child of each task (key, target, args, name) sent back, or a
    timeout/crash description. `target(*args, conn, log_path)` runs in a child."""
    context = _context()
    # Start the forkserver (it imports torch) before any fixture's clock starts ticking.
    warm = context.Process(target=child.ready, daemon=True)
    warm.start()
    warm.join()
    observations: dict[Path, dict] = {}
    pending = list(tasks)
    running: list[_Running] = []
    numbers = itertools.count()
    with tempfile.TemporaryDirectory(prefix="runtime_check_") as logs:

        def start(task: tuple) -> None:
            key, target, args, name = task
            receiver, sender = context.Pipe(duplex=False)
            log_path = os.path.join(logs, f"{next(numbers)}.log")
            process = context.Process(
                target=target,
                args=(*args, sender, log_path),
                name=f"runtime_check:{name}",
                daemon=True,
            )
            process.start()
            sender.close()  # the child holds the only writer: EOF once it dies
            running.append(_Running(key, process, receiver, log_path, timeout))

        def finish(entry: _Running, observation: dict) -> None:
            running.remove(entry)
            entry.conn.close()
            entry.process.join(5)
            if entry.process.is_alive():  # sent its result, then hung on the way out
                _kill_group(entry.process)
                entry.process.join()
            observation["seconds"] = round(time.monotonic() - entry.started, 3)
            observations[entry.key] = observation

        def crashed(entry: _Running) -> None:
            # A process the fixture forked may hold the result pipe open: the child's
            # own exit, not the pipe's end, says it died.
            _kill_group(entry.process)
            entry.process.join(5)
            finish(
                entry,
                {
                    "status": "crashed",
                    "problem": f"the child process died ({_exit_reason(entry.process)})"
                    " before reporting; its output ends with:\n" + _tail(entry.log_path),
                    "log_tail": _tail(entry.log_path),
                },
            )

        try:
            while pending or running:
                while pending and len(running) < jobs:
                    start(pending.pop(0))
                now = time.monotonic()
                wait_for = max(0.0, min(entry.deadline for entry in running) - now)
                sentinels = {entry.process.sentinel: entry for entry in running}
                ready = wait([entry.conn for entry in running] + list(sentinels), wait_for)
                exited = {id(sentinels[item]) for item in ready if item in sentinels}
                for entry in list(running):
                    if entry.conn.poll():
                        try:
                            observation = entry.conn.recv()
                        except (EOFError, OSError):
                            crashed(entry)
                            continue
                        finish(entry, observation)
                    elif id(entry) in exited:
                        crashed(entry)
                    elif time.monotonic() >= entry.deadline:
                        _kill_group(entry.process)
                        finish(
                            entry,
                            {
                                "status": "timeout",
                                "problem": f"killed after {entry.timeout:g} s without a result "
                                "(a hang, or a loop far slower than 'a few ms per iteration')",
                                "log_tail": _tail(entry.log_path),
                            },
                        )
        finally:
            # Interrupted (Ctrl-C, an error here): no fixture outlives the run.
            for entry in running:
                _kill_group(entry.process)
    return observations


def _kill_group(process) -> None:
    """SIGKILL a fixture's child and every process in its group (the child leads one,
    see child.child_main). A child that died before it made its group is killed alone;
    one that is gone leaves only its group's survivors, if any, to kill."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):  # no group; not POSIX
        process.kill()


def lint_all(fixtures: list[Fixture]) -> dict[Path, Lint]:
    from gradlint import engine

    registered = frozenset(rule.code for rule in engine.ALL_RULES)
    results: dict[Path, Lint] = {}
    from gradlint.config import Config
    from gradlint.notebook import is_notebook, lint_notebook_file

    # Fixtures are every rule's own examples: preview rules are judged on them too.
    config = Config(preview=True)
    for fixture in fixtures:
        try:
            if is_notebook(str(fixture.path)):
                result = lint_notebook_file(str(fixture.path), config)
            else:
                result = engine.lint_file(fixture.path, config)
        except Exception as exc:  # noqa: BLE001 - a linter crash is a finding, not our crash
            results[fixture.path] = Lint(error=f"gradlint crashed: {type(exc).__name__}: {exc}")
            continue
        results[fixture.path] = Lint(
            # A notebook finding by the line of the .ipynb that holds it.
            findings=[
                (d.code, d.cell.file_start.line if d.cell else d.start.line)
                for d in result.diagnostics
            ],
            error=str(result.error) if result.error else None,
            registered=registered,
        )
    return results


def _label(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def run(
    paths: Iterable[str | Path] | None = None,
    device: str | None = "auto",
    *,
    jobs: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    lint: bool = True,
) -> Report:
    """Run the fixtures under `paths` (default: all of gradlint's own fixtures/, never the
    working directory's) and judge each one.

    Returns a Report: `report.ok`, `report.rows`, `report.to_dict()`, `report.table()`."""
    began = time.monotonic()
    files = discover(default_paths() if paths is None else paths)
    fixtures = [read_fixture(path) for path in files]
    device_request = requested_device(device)
    if fixtures and any(f.contract_error is None for f in fixtures):
        check_device(device_request)
    if not fixtures:
        return Report(
            rows=[], device=device_request, torch_version=None, seconds=0.0, lint_checked=lint
        )

    lints: dict[Path, Lint] = {}
    linter = None
    if lint:
        linter = threading.Thread(target=lambda: lints.update(lint_all(fixtures)), daemon=True)
        linter.start()

    runnable = [f for f in fixtures if f.contract_error is None]
    observations = {}
    if runnable:
        observations = run_children(
            runnable, device_request, jobs=jobs or os.cpu_count() or 1, timeout=timeout
        )
    if linter is not None:
        linter.join()

    rows = [
        judge(
            fixture,
            observations.get(fixture.path),
            lints.get(fixture.path) if lint else None,
            _label(fixture.path),
        )
        for fixture in fixtures
    ]
    devices = {o.get("device") for o in observations.values() if o.get("device")}
    versions = {o.get("torch") for o in observations.values() if o.get("torch")}
    return Report(
        rows=rows,
        device=", ".join(sorted(devices)) or device_request,
        torch_version=", ".join(sorted(versions)) or None,
        seconds=round(time.monotonic() - began, 2),
        lint_checked=lint,
    )
