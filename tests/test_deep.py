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


# -- LibCST's per-node validation, skipped for texts CPython has parsed (engine.parse) --


def _count_name_checks(monkeypatch) -> list[str]:
    import libcst as cst

    checked: list[str] = []
    validate = cst.Name._validate

    def counting(node):
        checked.append(node.value)
        validate(node)

    monkeypatch.setattr(cst.Name, "_validate", counting)
    return checked


def test_a_text_cpython_parsed_is_not_validated_again_node_by_node(monkeypatch):
    from gradlint.engine import parse

    checked = _count_name_checks(monkeypatch)
    module = parse("loss = model(x)\nloss.backward()\n", "t.py", compiled=True)
    assert checked == []
    assert module.code == "loss = model(x)\nloss.backward()\n"
    # the check is back for every node built afterwards, by hand or by a parse
    parse("y = 1\n", "t.py")
    assert checked == ["y"]


def test_newer_syntax_than_cpython_reads_is_still_validated(monkeypatch):
    # `def f[T]` (3.12) is rejected by this interpreter's parser and read by LibCST's:
    # its nodes are checked as any parse's are
    from gradlint.engine import lint_source

    checked = _count_name_checks(monkeypatch)
    lint_source("def identity[T](x: T) -> T:\n    return x\n", "t.py")
    assert "identity" in checked


def test_validation_comes_back_after_a_parse_that_fails():
    import libcst as cst

    from gradlint.engine import _parse_compiled

    with pytest.raises(cst.ParserSyntaxError):
        _parse_compiled("def f(:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
