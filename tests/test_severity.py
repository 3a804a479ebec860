"""Severity (per rule, configurable) and confidence (per finding, filterable), in every
front."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gradlint.cli import main
from gradlint.config import Config, ConfigError, load_settings
from gradlint.diagnostics import Confidence, Severity
from gradlint.engine import ALL_RULES, FileResult, lint_source, rule_by_code
from gradlint.output import write_report

CODES = [r.code for r in ALL_RULES]
# In a loop: waste on a hot path is a warning (once, it would be a hint).
GL004 = (
    "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval()\n"
    "for x in data:\n    out = model(x)\n"
)
GL004_ONCE = (
    "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval()\nout = model(torch.randn(1, 2))\n"
)
# `step` is defined nowhere: that it returns a tensor with history is an assumption.
GL001_UNKNOWN = (
    "import torch\n"
    "h = torch.zeros(3)\n"
    "w = torch.nn.Parameter(torch.ones(3))\n"
    "for _ in range(3):\n"
    "    h = step(h, w)\n"
    "    h.sum().backward()\n"
)
GL001_SEEN = GL001_UNKNOWN.replace("step(h, w)", "torch.tanh(h * w)")


def test_default_severities_follow_each_rules_consequence():
    warnings = {r.code for r in ALL_RULES if r.severity is Severity.WARNING}
    # Wasted memory or compute, against pitfalls that raise or silently break training.
    assert {"GL004", "GL006"} <= warnings
    assert not warnings & {"GL001", "GL002", "GL003", "GL005", "GL007", "GL008", "GL010"}
    (finding,) = lint_source(GL004, "t.py")
    assert finding.severity is Severity.WARNING
    (once,) = lint_source(GL004_ONCE, "t.py")
    assert once.severity is Severity.HINT


def settings(tmp_path: Path, table: str):
    (tmp_path / "pyproject.toml").write_text(f"[tool.gradlint]\n{table}\n", encoding="utf-8")
    return load_settings(tmp_path, all_codes=CODES)


def test_severity_is_overridden_per_rule_and_the_most_specific_prefix_wins(tmp_path):
    config = settings(tmp_path, 'severity = { GL004 = "error", GL00 = "warning" }').config
    (finding,) = lint_source(GL004, "t.py", config)
    assert finding.severity is Severity.ERROR
    assert config.severity_for("GL002", "error") == "warning"
    assert config.severity_for("GL010", "error") == "error"


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ('severity = "error"', "expected a table of code"),
        ('severity = { GL999 = "error" }', "unknown rule selector 'GL999'"),
        (
            'severity = { GL004 = "fatal" }',
            "severity.GL004: expected one of 'error', 'warning', 'hint'",
        ),
        ('min-confidence = "medium"', "min-confidence: expected one of 'low', 'high'"),
    ],
)
def test_bad_severity_or_confidence_settings_are_clear_errors(tmp_path, table, words):
    with pytest.raises(ConfigError, match="pyproject.toml") as caught:
        settings(tmp_path, table)
    assert words in str(caught.value)


def test_a_finding_through_an_unknown_function_is_low_confidence_and_can_be_dropped():
    (unsure,) = lint_source(GL001_UNKNOWN, "t.py")
    assert unsure.confidence is Confidence.LOW
    (seen,) = lint_source(GL001_SEEN, "t.py")
    assert seen.confidence is Confidence.HIGH
    strict = Config(min_confidence="high")
    assert lint_source(GL001_UNKNOWN, "t.py", strict) == []
    assert len(lint_source(GL001_SEEN, "t.py", strict)) == 1


def test_gl004_through_a_module_level_switch_assumes_the_function_runs_later():
    source = (
        "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval()\n\n\n"
        "def handler(x):\n    out = model(x)\n    return out\n"
    )
    (finding,) = lint_source(source, "t.py")
    assert finding.confidence is Confidence.LOW
    (direct,) = lint_source(GL004, "t.py")
    assert direct.confidence is Confidence.HIGH


def test_gl006_on_an_intermediate_it_cannot_see_into_is_low_confidence():
    base = (
        "import torch\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters())\n"
        "total = 0\nfor x in data:\n    out = encode(x)\n    loss = model(out).sum()\n"
        "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
    )
    (unsure,) = lint_source(base + "    total += out\n", "t.py")
    assert (unsure.code, unsure.confidence) == ("GL006", Confidence.LOW)
    (seen,) = lint_source(base + "    total += loss\n", "t.py")
    assert (seen.code, seen.confidence) == ("GL006", Confidence.HIGH)


def render(fmt: str, source: str, config: Config | None = None) -> str:
    results = [FileResult("t.py", lint_source(source, "t.py", config), None, source)]
    stream = io.StringIO()
    write_report(fmt, results, stream)
    return stream.getvalue()


def test_every_format_shows_the_severity(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert render("github", GL004).startswith("::warning title=gradlint (GL004)")
    assert render("github", GL001_SEEN).startswith("::error title=gradlint (GL001)")
    (obj,) = json.loads(render("json", GL004))
    assert (obj["severity"], obj["confidence"]) == ("warning", "high")
    log = json.loads(render("sarif", GL004))
    (result,) = log["runs"][0]["results"]
    assert result["level"] == "warning"
    assert result["properties"] == {"confidence": "high", "group": "waste", "impact": "per-batch"}
    levels = {
        r["id"]: r["defaultConfiguration"]["level"]
        for r in log["runs"][0]["tool"]["driver"]["rules"]
    }
    assert levels["GL004"] == "warning" and levels["GL001"] == "error"
    # An override reaches the formats too.
    config = Config(severity={"GL004": "error"})
    assert render("github", GL004, config).startswith("::error ")
    # full marks a warning the way a compiler does; an error keeps ruff's header.
    assert render("full", GL004).startswith("warning: GL004 ")
    assert render("full", GL001_SEEN).startswith("GL001 ")
    # concise stays ruff's one line.
    assert render("concise", GL004).startswith("t.py:5:11: GL004 `model` is in eval mode")


def test_full_notes_a_low_confidence_finding():
    assert "note: low confidence" in render("full", GL001_UNKNOWN)
    assert "note: low confidence" not in render("full", GL001_SEEN)


def test_lsp_severity_follows_the_finding():
    pytest.importorskip("pygls")
    from lsprotocol import types
    from pygls.workspace.position_codec import PositionCodec

    from gradlint.lsp import ClientPositions, to_lsp_diagnostic

    positions = ClientPositions(GL004, PositionCodec())
    (warning,) = lint_source(GL004, "t.py")
    assert to_lsp_diagnostic(warning, positions).severity == types.DiagnosticSeverity.Warning
    (error,) = lint_source(GL004, "t.py", Config(severity={"GL004": "error"}))
    assert to_lsp_diagnostic(error, positions).severity == types.DiagnosticSeverity.Error


def run(args: list[str], monkeypatch) -> tuple[int, str]:
    stream = io.StringIO()
    monkeypatch.setattr("sys.stdout", stream)
    status = main(args)
    return status, stream.getvalue()


def test_cli_min_confidence_and_a_cache_that_follows_the_settings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(GL001_UNKNOWN, encoding="utf-8")
    (tmp_path / "b.py").write_text(GL004, encoding="utf-8")
    status, out = run(["--output-format", "json", "."], monkeypatch)
    found = {(o["filename"][-4:], o["severity"], o["confidence"]) for o in json.loads(out)}
    assert found == {("a.py", "error", "low"), ("b.py", "warning", "high")}
    status, out = run(["--output-format", "json", "--min-confidence", "high", "."], monkeypatch)
    assert [o["filename"][-4:] for o in json.loads(out)] == ["b.py"]
    # A cached result is not reused once the configured severity changes.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.gradlint]\nseverity = { GL004 = "error" }\nmin-confidence = "high"\n',
        encoding="utf-8",
    )
    status, out = run(["--output-format", "json", "."], monkeypatch)
    assert [(o["filename"][-4:], o["severity"]) for o in json.loads(out)] == [("b.py", "error")]


def test_rule_command_states_severity_and_confidence(monkeypatch):
    status, out = run(["rule", "GL004"], monkeypatch)
    assert "Group: `waste` (a bounded cost per call) or `crash` (raises at run time)." in out
    assert (
        "Severity: warning (hint off the hot path: once, per epoch, in tests, in one pass run once, on one sample) for `waste`, error for `crash`."
        in out
    )
    assert "Confidence: low when" in out
    status, out = run(["rule", "GL002"], monkeypatch)
    assert "Group: `crash` (raises at run time). Severity: error." in out
    assert "Confidence: always high" in out
    status, out = run(["rule", "--all", "--output-format", "json"], monkeypatch)
    rows = {row["code"]: row for row in json.loads(out)}
    assert rows["GL006"]["severity"] == "warning"
    assert rows["GL008"]["low_confidence"] is None
    assert rule_by_code("GL001").low_confidence  # documented where it reports LOW
