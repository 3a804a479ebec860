"""Waiting on other processes in tests: on the event itself, with a bound that only
ends a run that has already failed, never on a fixed sleep a loaded machine can outrun."""

from __future__ import annotations

import os
import select
import time
from collections.abc import Iterable


def running(pid: int) -> bool:
    """Whether `pid` runs (Linux: /proc). A zombie does not: it only awaits reaping."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_for_exit(pids: Iterable[int], limit: float) -> list[int]:
    """Wait until every process in `pids` has exited, `limit` seconds at most; the ones
    still running then. A pidfd wakes this the moment a process exits, even one that
    is not this process's child."""
    deadline = time.monotonic() + limit
    watched: dict[int, int] = {}
    polled: list[int] = []
    try:
        for pid in pids:
            try:
                watched[pid] = os.pidfd_open(pid)
            except ProcessLookupError:
                continue
            except OSError:  # a kernel before 5.3: ask /proc until the bound
                while running(pid) and time.monotonic() < deadline:
                    time.sleep(0.05)
                polled.append(pid)
        while watched and (remaining := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select(list(watched.values()), [], [], remaining)
            for pid, descriptor in list(watched.items()):
                if descriptor in ready:
                    os.close(watched.pop(pid))
        return sorted(pid for pid in [*watched, *polled] if running(pid))
    finally:
        for descriptor in watched.values():
            os.close(descriptor)
