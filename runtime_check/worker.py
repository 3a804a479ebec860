"""Runs ONE fixture, in its own child process, and reports what happened as plain data.

1. A plain call `main(device=...)` with no hooks at all, so errors are torch's own (the
   saved-tensor hooks change error texts and switch off the version-counter check).
   Warnings are recorded here; `check_symptom(result)` is called on the result.
2. If that returned normally, `main(n, device)` at three loop lengths, each under a fresh
   SavedTensorTracker, measuring the graph held by what `main` returned while it is still
   alive. The plain call doubles as the warm-up.

`time_pair`, asked for by `python -m runtime_check consequences`, times a bad fixture's
loop next to its fixed version's in one child (time_steps).
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import inspect
import math
import re
import statistics
import sys
import time
import traceback
import warnings
from pathlib import Path

import torch

from runtime_check.measure import (
    SavedTensorTracker,
    collect_tensors,
    count_graph_nodes,
    graph_saved_bytes,
)

DEVICE_RE = re.compile(r"^(cpu|cuda(:\d+)?)$")


def resolve_device(request: str) -> str:
    """auto -> cuda if available else cpu. Only here, in a child: calling into CUDA in the
    parent would make every later fork unable to use it."""
    if request == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not DEVICE_RE.match(request):
        raise ValueError(f"unknown device {request!r}: use cpu, cuda, cuda:N or auto")
    if request.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {request!r} was asked for but CUDA is not available")
    return request


def describe_exception(exc: BaseException) -> dict:
    cls = type(exc)
    return {
        "type": cls.__name__,
        "module": cls.__module__,
        "mro": [c.__name__ for c in cls.__mro__],
        "message": str(exc),
        "traceback": "".join(traceback.format_exception(exc)[-12:]),
    }


def load_module(path: Path):
    name = "gradlint_fixture_" + re.sub(r"\W", "_", path.stem)
    if path.name.endswith(".ipynb"):
        # A notebook runs as Jupyter runs it top to bottom: its code cells in order, in
        # one namespace, with IPython magics and shell escapes skipped.
        import types

        from runtime_check.contract import program_text

        module = types.ModuleType(name)
        module.__file__ = str(path)
        sys.modules[name] = module
        exec(compile(program_text(path), str(path), "exec"), module.__dict__)
        return module
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    spec.loader.exec_module(module)
    return module


def default_n(main) -> int | None:
    try:
        parameter = inspect.signature(main).parameters.get("n")
    except (TypeError, ValueError):
        return None
    if parameter is None or not isinstance(parameter.default, int):
        return None
    return parameter.default


def sizes_for(n: int) -> list[int]:
    base = max(n, 2)
    return [base, 2 * base, 4 * base]


def measure_at(main, n: int, device: str, use_hooks: bool = True) -> dict:
    """Run main(n) and measure the graph held by what it returned, while it is alive."""
    is_cuda = device.startswith("cuda")
    gc.collect()
    if is_cuda:
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        baseline = torch.cuda.memory_allocated(device)
    tracker = SavedTensorTracker() if use_hooks else contextlib.nullcontext()
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tracker:
            result = main(n=n, device=device)
    gc.collect()
    tensors = collect_tensors(result)
    saved_tensors, saved_bytes = tracker.live() if use_hooks else graph_saved_bytes(tensors)
    point = {
        "n": n,
        "nodes": count_graph_nodes(tensors),
        "saved_tensors": saved_tensors,
        "saved_bytes": saved_bytes,
    }
    if use_hooks:
        point["packed_bytes"] = tracker.packed_bytes
    if is_cuda:
        torch.cuda.synchronize(device)
        point["cuda_allocated"] = torch.cuda.memory_allocated(device) - baseline
        point["cuda_peak"] = torch.cuda.max_memory_allocated(device) - baseline
    del tensors, result
    gc.collect()
    return point


def measure_growth(main, n: int, device: str) -> dict:
    """Three loop lengths under the saved-tensor tracker. Code that refuses saved-tensor
    hooks (torch.func, autograd.functional) is measured again without them, reading saved
    bytes from the graph instead; if that fails too, the error is the finding."""
    growth: dict = {"points": [], "error": None, "skipped": None, "saved_bytes_from": "hooks"}
    refused = None
    for use_hooks in (True, False):
        points = []
        try:
            for size in sizes_for(n):
                points.append(measure_at(main, size, device, use_hooks))
        except Exception as exc:
            error = {"n": size, **describe_exception(exc)}
            if use_hooks:
                refused = error
                continue
            growth["error"] = error
            return growth
        growth["points"] = points
        if refused is not None:
            growth.update(saved_bytes_from="graph", hooks_refused=refused)
        return growth
    return growth


def _enter_device(observation: dict, device_request: str) -> str | None:
    """Resolve the device and set the process up for measuring on it; None, with the
    observation's setup-error, when it cannot be used."""
    try:
        device = resolve_device(device_request)
    except (ValueError, RuntimeError) as exc:
        observation.update(status="setup-error", problem=str(exc))
        return None
    observation["device"] = device
    if device == "cpu":
        torch.set_num_threads(1)
    # Whatever the process imported so far is not the fixture's: keep the collector off it,
    # so the gc.collect() calls of the measurement stay cheap (a no-op if the forkserver
    # preload already did this).
    gc.freeze()
    return device


def run_fixture(path: str, device_request: str) -> dict:
    observation: dict = {
        "torch": str(torch.__version__),  # TorchVersion would make the parent import torch
        "device": None,
        "status": "ran",  # ran | setup-error | import-error | contract-error
        "problem": None,
        "plain": None,
        "growth": None,
    }
    device = _enter_device(observation, device_request)
    if device is None:
        return observation
    try:
        module = load_module(Path(path))
    except BaseException as exc:  # noqa: BLE001 - any import failure is a finding
        observation.update(status="import-error", problem=describe_exception(exc))
        return observation
    main = getattr(module, "main", None)
    if not callable(main):
        observation.update(status="contract-error", problem="the module defines no main()")
        return observation
    parameters = inspect.signature(main).parameters
    if "device" not in parameters:
        observation.update(status="contract-error", problem="main() takes no `device` argument")
        return observation

    plain: dict = {"exception": None, "warnings": [], "symptom": None, "seconds": None}
    observation["plain"] = plain
    torch.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = main(device=device)
        except Exception as exc:
            plain["exception"] = describe_exception(exc)
            result = None
    plain["warnings"] = [
        {"category": w.category.__name__, "message": str(w.message).splitlines()[0]} for w in caught
    ]
    if plain["exception"] is not None:
        return observation

    check_symptom = getattr(module, "check_symptom", None)
    if callable(check_symptom):
        with warnings.catch_warnings():
            # e.g. `assert result.grad is None` on a non-leaf warns; that is the check's
            # business, not the program's.
            warnings.simplefilter("ignore")
            try:
                check_symptom(result)
                plain["symptom"] = {"holds": True}
            except Exception as exc:
                plain["symptom"] = {"holds": False, "exception": describe_exception(exc)}
    del result

    n = default_n(main)
    if n is None:
        observation["growth"] = {"error": None, "skipped": "main() has no int `n` argument"}
        return observation
    observation["growth"] = measure_growth(main, n, device)
    return observation


# -- time per step: a bad fixture next to its fixed version --------------------------------


# How long the long run of a timed pair should take at least, and how far its loop may be
# lengthened to get there.
_LONG_RUN_SECONDS = 0.05
_MAX_SCALE = 64
_SLOWEST_RUN_SECONDS = 1.0


def _timed_call(main, n: int, device: str) -> float:
    """Seconds `main(n)` takes, its result still alive (freeing it is not the step)."""
    is_cuda = device.startswith("cuda")
    torch.manual_seed(0)
    gc.collect()
    if is_cuda:
        torch.cuda.synchronize(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        began = time.perf_counter()
        result = main(n=n, device=device)
        if is_cuda:
            torch.cuda.synchronize(device)
        seconds = time.perf_counter() - began
    del result
    return seconds


def time_steps(mains: dict[str, object], n: int, device: str, repetitions: int) -> dict:
    """Median seconds per loop iteration of each `main` (`seconds_per_step`, by name) and
    the short and long loop lengths they were taken over, timed in turns in this one
    process so that a load on the machine falls on all of them alike. A step's time is the
    difference between a long and a short run over the iterations between them, so what
    main() builds once (a model, an optimizer) does not count."""
    short = sizes_for(n)[0]
    for main in mains.values():  # warm-up: first-call costs (lazy imports, allocator)
        _timed_call(main, short, device)
    # The long run long enough that the difference stands well above the clock's and a
    # loaded machine's noise (a step of 20 µs over a few iterations is lost in it), yet a
    # few seconds at most for the whole pair.
    long = 8 * short
    times = [_timed_call(main, long, device) for main in mains.values()]
    if min(times) < _LONG_RUN_SECONDS:
        scale = math.ceil(_LONG_RUN_SECONDS / max(min(times), 1e-6))
        # ... but the slower program's long run kept near a second (a growing graph's
        # steps slow down as the loop lengthens: GL001 with retain_graph)
        scale = min(scale, _MAX_SCALE, max(1, int(_SLOWEST_RUN_SECONDS / max(times))))
        long = short + (long - short) * scale
    per_step: dict[str, list[float]] = {name: [] for name in mains}
    order = list(mains)
    for repetition in range(repetitions):
        for name in order if repetition % 2 == 0 else reversed(order):
            main = mains[name]
            shorter = _timed_call(main, short, device)
            longer = _timed_call(main, long, device)
            per_step[name].append((longer - shorter) / (long - short))
    medians = {name: statistics.median(values) for name, values in per_step.items()}
    return {"seconds_per_step": medians, "short": short, "long": long}


def time_pair(bad_path: str, fixed_path: str, device_request: str, repetitions: int) -> dict:
    """Time per step of a bad fixture and of its fixed version (time_steps), or why not."""
    observation: dict = {"status": "timed", "problem": None, "device": None, "device_name": None}
    device = _enter_device(observation, device_request)
    if device is None:
        return observation
    observation["device_name"] = (
        "cpu, 1 thread" if device == "cpu" else torch.cuda.get_device_name(device)
    )
    mains = {}
    for label, path in (("bad", bad_path), ("fixed", fixed_path)):
        try:
            module = load_module(Path(path))
        except BaseException as exc:  # noqa: BLE001 - any import failure is reported
            observation.update(status="import-error", problem=describe_exception(exc))
            return observation
        main = getattr(module, "main", None)
        if not callable(main) or default_n(main) is None:
            observation.update(status="contract-error", problem=f"{path}: no main(n, device)")
            return observation
        mains[label] = main
    n = default_n(mains["bad"])
    assert n is not None
    try:
        observation.update(time_steps(mains, n, device, repetitions))
    except Exception as exc:
        observation.update(status="raised", problem=describe_exception(exc))
    observation["repetitions"] = repetitions
    return observation
