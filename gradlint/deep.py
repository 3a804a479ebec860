"""Running LibCST on deeply nested code without overflowing the stack."""

from __future__ import annotations

import contextlib
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

    def target() -> None:
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # handed back to the calling thread
            outcome["error"] = exc

    with _DEEP_LOCK:
        previous_stack = threading.stack_size(_DEEP_STACK_BYTES)
        previous_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(previous_limit, _DEEP_RECURSION_LIMIT))
        try:
            worker = threading.Thread(target=target, name="gradlint-deep")
            worker.start()
            worker.join()
        finally:
            threading.stack_size(previous_stack)
            sys.setrecursionlimit(previous_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


_DEEP_LOCK = threading.Lock()


@contextlib.contextmanager
def at_default_depth():
    """While no run_deep call has the recursion limit raised: CPython's parser bounds
    nesting by that limit, so a check of what Python itself accepts runs here (and a
    raised limit on this thread's smaller stack could overflow it)."""
    with _DEEP_LOCK:
        yield
