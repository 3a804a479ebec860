"""The child process's entry points, kept free of torch so that the parent, which must
name them to start a child, never imports torch (the forkserver already has it)."""

from __future__ import annotations

import os
import signal
import sys


def child_main(path: str, device_request: str, conn, log_path: str) -> None:
    """Run one fixture and send back the observation. The fixture's output goes to
    `log_path`, so a crash leaves its last words there and a chatty fixture cannot garble
    the table.

    The child leads a process group of its own, and ends it when it is done: a process
    the fixture started and left running goes with it (the harness kills the group of a
    child that hangs or dies)."""
    _serve("run_fixture", (path, device_request), conn, log_path)


def timing_main(
    bad_path: str, fixed_path: str, device_request: str, repetitions: int, conn, log_path: str
) -> None:
    """Time a bad fixture's step next to its fixed version's (worker.time_pair), in a
    child like child_main's."""
    _serve("time_pair", (bad_path, fixed_path, device_request, repetitions), conn, log_path)


def _serve(entry: str, args: tuple, conn, log_path: str) -> None:
    """Call runtime_check.worker's `entry` with `args` in this child process, its output
    to `log_path`, and send back what it returns."""
    if hasattr(os, "setpgid"):  # POSIX
        try:
            os.setpgid(0, 0)
        except OSError:  # a session leader cannot; it leads its group already
            pass
    _close_forkserver_pipe()
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    try:
        from runtime_check import worker

        observation = getattr(worker, entry)(*args)
    except BaseException as exc:  # noqa: BLE001 - report, never leave the parent waiting
        import traceback

        observation = {
            "status": "harness-error",
            "problem": {
                "type": type(exc).__name__,
                "mro": [c.__name__ for c in type(exc).__mro__],
                "message": str(exc),
                "traceback": "".join(traceback.format_exception(exc)[-12:]),
            },
        }
    conn.send(observation)
    conn.close()
    sys.stdout.flush()
    sys.stderr.flush()
    end_own_group()


def _close_forkserver_pipe() -> None:
    """The forkserver gives each child a copy of the caller's end of the pipe that keeps
    the server alive. A process the fixture forks would inherit it, and keep the server,
    and with it the caller's stdout and stderr, open after the caller is done: a caller
    reading that output to its end would hang."""
    try:
        from multiprocessing import forkserver

        server = forkserver._forkserver
        inherited = server._forkserver_alive_fd
    except AttributeError:  # another start method, or another Python's internals
        return
    if inherited is not None:
        os.close(inherited)
        server._forkserver_alive_fd = None


def end_own_group() -> None:
    """SIGKILL this process's group, itself included, when it leads one: done from
    inside, while the group surely exists, so no other process can be hit."""
    if hasattr(os, "killpg") and os.getpgid(0) == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)


def ready() -> None:
    """A child that does nothing: starting it makes sure the forkserver is up and warm."""
