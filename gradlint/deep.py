"""Running LibCST on deeply nested code without overflowing the stack."""

from __future__ import annotations

import contextlib
import os
import queue
import sys
import threading

# LibCST's parser (native) and its position and code generation (Python) recurse once
# per nesting level. Deep but valid generated code overflows the default thread stack
# (the native parser then takes the whole process down) or the recursion limit, so those
# calls run on a thread with a large stack and a raised limit.
_DEEP_STACK_BYTES = 512 * 1024 * 1024
_DEEP_RECURSION_LIMIT = 50_000


def run_deep(function, *args):
    """Call function(*args) on a thread whose stack and recursion limit fit deeply
    nested code; its exception, if any, is raised here."""
    outcome: dict = {}
    done = threading.Event()
    with _DEEP_LOCK:
        previous_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(previous_limit, _DEEP_RECURSION_LIMIT))
        try:
            _worker().put((function, args, outcome, done))
            done.wait()
        finally:
            sys.setrecursionlimit(previous_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


# One thread serves every call, for the life of the process: a new thread per call paid
# for its stack again each time (hundreds of page faults per parse, a tenth of the
# parse's own time in system time).
_requests: queue.SimpleQueue | None = None


def _worker() -> queue.SimpleQueue:
    """The requests queue of the deep thread, started on first use (the caller holds
    _DEEP_LOCK)."""
    global _requests
    if _requests is None:
        requests: queue.SimpleQueue = queue.SimpleQueue()
        previous_stack = threading.stack_size(_DEEP_STACK_BYTES)
        try:
            threading.Thread(
                target=_serve, args=(requests,), name="gradlint-deep", daemon=True
            ).start()
        finally:
            threading.stack_size(previous_stack)
        _requests = requests
    return _requests


def _serve(requests: queue.SimpleQueue) -> None:
    while True:
        function, args, outcome, done = requests.get()
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # handed back to the calling thread
            outcome["error"] = exc
        finally:
            done.set()
        del function, args, outcome, done  # nothing of the call outlives it here


def _forget_worker() -> None:
    """A forked child has no deep thread (only the forking thread is copied)."""
    global _requests, _DEEP_LOCK
    _requests = None
    _DEEP_LOCK = threading.Lock()


_DEEP_LOCK = threading.Lock()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_worker)


@contextlib.contextmanager
def at_default_depth():
    """While no run_deep call has the recursion limit raised: CPython's parser bounds
    nesting by that limit, so a check of what Python itself accepts runs here (and a
    raised limit on this thread's smaller stack could overflow it)."""
    with _DEEP_LOCK:
        yield
