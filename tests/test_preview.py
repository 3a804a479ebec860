"""The preview channel: a rule in preview (`gradlint.codes`) runs only when selected by its
exact code or with `--preview` / `preview = true`, and its docs and `gradlint rule` say so.
Tested by putting a shipped rule (GL002) in preview for the test."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from gradlint import codes
from gradlint.cli import main
from gradlint.config import Config, Overrides, load_settings
from gradlint.engine import ALL_RULES, lint_source, rule_by_code

CODES = [r.code for r in ALL_RULES]
GL002 = "import torch\nw = torch.ones(3, requires_grad=True)\nw += 1\n"


@pytest.fixture
def preview_gl002(monkeypatch):
    registered = tuple(
        codes.RuleCode(entry.code, preview=True) if entry.code == "GL002" else entry
        for entry in codes.REGISTERED
    )
    monkeypatch.setattr(codes, "REGISTERED", registered)


def found(config: Config | None = None) -> list[str]:
    return [d.code for d in lint_source(GL002, "t.py", config)]


@pytest.mark.parametrize(
    ("config", "runs"),
    [
        (Config(), False),  # the default selection, GL
        (Config(select=("GL00",)), False),  # a prefix is not an explicit selection
        (Config(select=("ALL",)), False),
        (Config(select=("GL002",)), True),  # its exact code is
        (Config(extend_select=("GL002",)), True),
        (Config(preview=True), True),
        (Config(preview=True, ignore=("GL002",)), False),
        (Config(select=("GL002",), ignore=("GL",)), True),  # most specific wins, as before
    ],
)
def test_a_preview_rule_runs_only_when_selected_exactly_or_with_preview(
    preview_gl002, config, runs
):
    assert found(config) == (["GL002"] if runs else [])
    assert ("GL002" in config.enabled_codes("t.py")) is runs


def settings(tmp_path: Path, table: str, overrides: Overrides | None = None) -> Config:
    (tmp_path / "pyproject.toml").write_text(f"[tool.gradlint]\n{table}\n", encoding="utf-8")
    return load_settings(tmp_path, overrides=overrides, all_codes=CODES).config


def test_preview_from_the_configuration_and_the_command_line(preview_gl002, tmp_path):
    assert found(settings(tmp_path, "preview = true")) == ["GL002"]
    assert found(settings(tmp_path, "preview = false")) == []
    assert found(settings(tmp_path, "preview = false", Overrides(preview=True))) == ["GL002"]
    assert found(settings(tmp_path, "preview = true", Overrides(preview=False))) == []
    assert found(settings(tmp_path, 'select = ["GL002"]')) == ["GL002"]


def test_an_ignore_on_the_command_line_does_not_select_a_preview_rule(preview_gl002, tmp_path):
    # `--ignore GL001` alone turns the file's selection into an exact list of codes; the
    # preview rule must not come back in as if it had been named.
    config = settings(tmp_path, 'select = ["GL"]', Overrides(ignore=("GL001",)))
    assert found(config) == []
    config = settings(tmp_path, 'select = ["GL002"]', Overrides(ignore=("GL001",)))
    assert found(config) == ["GL002"]
    config = settings(tmp_path, "", Overrides(extend_select=("GL00",)))
    assert found(config) == []
    config = settings(tmp_path, "", Overrides(extend_select=("GL002",)))
    assert found(config) == ["GL002"]


def test_a_preview_setting_that_is_not_a_boolean_is_an_error(tmp_path):
    from gradlint.config import ConfigError

    with pytest.raises(ConfigError, match="preview: expected true or false"):
        settings(tmp_path, 'preview = "yes"')


def run(args: list[str], monkeypatch) -> tuple[int, str]:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    status = main(args)
    return status, stream.getvalue()


def test_cli_preview_flag(preview_gl002, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.py").write_text(GL002, encoding="utf-8")
    assert run(["--no-cache", "t.py"], monkeypatch)[0] == 0
    assert run(["--no-cache", "--preview", "t.py"], monkeypatch)[0] == 1
    assert run(["--no-cache", "--select", "GL002", "t.py"], monkeypatch)[0] == 1
    # The cache key holds the selected codes, so a cached clean result is not reused.
    assert run(["t.py"], monkeypatch)[0] == 0
    assert run(["--preview", "t.py"], monkeypatch)[0] == 1


def test_rule_docs_and_listing_say_which_rules_are_stable(preview_gl002, monkeypatch):
    status, out = run(["rule", "--all"], monkeypatch)
    rows = {line.split()[0]: line.split()[2] for line in out.splitlines() if line.startswith("GL")}
    assert rows["GL002"] == "preview" and rows["GL001"] == "stable"
    status, out = run(["rule", "--all", "--output-format", "json"], monkeypatch)
    assert {r["code"]: r["preview"] for r in json.loads(out)}["GL002"] is True
    status, out = run(["rule", "GL002"], monkeypatch)
    assert "Status: preview: runs only when selected by its exact code (`--select GL002`)" in out

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    try:
        import gen_docs
    finally:
        sys.path.pop(0)
    page = gen_docs.rule_page(rule_by_code("GL002"))
    assert "**Status:** preview" in page
    assert "**Status:** stable" in gen_docs.rule_page(rule_by_code("GL001"))
    index = gen_docs.index_page(ALL_RULES)
    assert (
        "| preview | crash | error |" in index
        and "| stable | waste, crash | warning / error / hint |" in index
    )
