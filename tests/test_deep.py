"""gradlint.deep: LibCST's deep recursion runs on one long-lived thread with a large
stack."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from gradlint.deep import run_deep


def test_one_thread_serves_every_call():
    # A thread per call faulted its stack in again for every parse.
    first = run_deep(threading.current_thread)
    second = run_deep(threading.current_thread)
    assert first is second
    assert first is not threading.current_thread()


def test_errors_come_back_and_the_limit_is_given_back():
    limit = sys.getrecursionlimit()

    def deep(n: int) -> int:
        return 0 if n == 0 else 1 + deep(n - 1)

    assert run_deep(deep, 20_000) == 20_000
    with pytest.raises(ValueError, match="no"):
        run_deep(int, "no")
    assert sys.getrecursionlimit() == limit


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_a_thread_of_its_own():
    run_deep(int, "1")  # the parent's thread exists before the fork
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            status = 0 if run_deep(int, "7") == 7 else 1
        except BaseException:
            status = 2
        os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
