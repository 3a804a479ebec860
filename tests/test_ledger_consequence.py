"""The ledger's consequence column and the per-level shares `ledger.py run` reports
(bench/real-code/README.md states them for the pinned corpus)."""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path

import pytest

LEDGER_PY = Path(__file__).resolve().parent.parent / "bench" / "real-code" / "ledger.py"


@pytest.fixture(scope="module")
def ledger():
    spec = importlib.util.spec_from_file_location("real_code_ledger", LEDGER_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def test_shares_per_level_count_only_true_findings(ledger):
    rows = [
        ledger.Row("o/r", "c", "a.py", "1", "GL007", "TRUE", "steps on a sum", "TP"),
        ledger.Row("o/r", "c", "a.py", "2", "GL012", "TRUE", "per-step action", "TP-minor"),
        ledger.Row("o/r", "c", "a.py", "3", "GL012", "TRUE", "a VGG per batch", "TP"),
        ledger.Row("o/r", "c", "a.py", "4", "GL004", "FALSE", "graph used", ""),
        ledger.Row("o/r", "c", "a.py", "5", "GL004", "TRUE", "not rated yet", ""),
    ]
    findings = [
        ledger.Finding("o/r", "a.py", "1", "GL007", "m", "error", "wrong", "per-batch"),
        ledger.Finding("o/r", "a.py", "2", "GL012", "m", "hint", "waste", "per-batch"),
        ledger.Finding("o/r", "a.py", "3", "GL012", "m", "warning", "waste", "per-batch"),
        ledger.Finding("o/r", "a.py", "4", "GL004", "m", "warning", "waste", "once"),
        ledger.Finding("o/r", "a.py", "5", "GL004", "m", "warning", "waste", "per-batch"),
    ]
    figures = ledger.report(findings, rows, out=io.StringIO())["by_level"]
    assert figures["error"] == {
        "true": 1,
        "TP": 1,
        "TP-minor": 0,
        "unrated": 0,
        "share": 1.0,
        "target": 0.8,
    }
    assert (figures["warning"]["TP"], figures["warning"]["unrated"]) == (1, 1)
    assert figures["warning"]["share"] == 1.0  # the FALSE row is no true finding
    assert (figures["hint"]["TP-minor"], figures["hint"]["share"]) == (1, 0.0)


def test_a_consequence_on_a_false_row_is_refused(ledger, tmp_path):
    path = tmp_path / "ledger.tsv"
    ledger.write_ledger(
        [ledger.Row("o/r", "c", "a.py", "4", "GL004", "FALSE", "graph used", "TP")], path
    )
    with pytest.raises(SystemExit, match="consequence 'TP'"):
        ledger.read_ledger(path)


def test_every_true_row_of_the_committed_ledger_is_rated(ledger):
    unrated = [
        r.key for r in ledger.read_ledger() if r.verdict in ledger.GOOD and not r.consequence
    ]
    assert unrated == []
