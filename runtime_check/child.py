"""The child process's entry points, kept free of torch so that the parent, which must
name them to start a child, never imports torch (the forkserver already has it)."""

from __future__ import annotations

import os
import sys


def child_main(path: str, device_request: str, conn, log_path: str) -> None:
    """Run one fixture and send back the observation. The fixture's output goes to
    `log_path`, so a crash leaves its last words there and a chatty fixture cannot garble
    the table."""
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    try:
        from runtime_check.worker import run_fixture

        observation = run_fixture(path, device_request)
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


def ready() -> None:
    """A child that does nothing: starting it makes sure the forkserver is up and warm."""
