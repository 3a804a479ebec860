"""The token pre-filter (files with none of a rule's tokens are not parsed) must never
change a result: same findings, same file errors, with and without it, on a large tree
of code nobody wrote for gradlint (torch's own nn and optim packages) plus our fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradlint import engine

ROOT = Path(__file__).resolve().parent.parent


def corpus() -> list[Path]:
    torch = pytest.importorskip("torch")
    base = Path(torch.__file__).parent
    files = sorted((base / "nn").rglob("*.py")) + sorted((base / "optim").rglob("*.py"))
    files += sorted((ROOT / "fixtures").rglob("*.py")) + sorted(
        (ROOT / "tests" / "cases").glob("*.py")
    )
    return files


def results(files: list[Path]) -> list[tuple]:
    out = []
    for path in files:
        result = engine.lint_file(path)
        out.append(
            (
                str(path),
                str(result.error) if result.error else None,
                [(d.code, d.start, d.end, d.message) for d in result.diagnostics],
            )
        )
    return out


def test_skip_changes_nothing_on_a_large_tree(monkeypatch) -> None:
    files = corpus()
    assert len(files) > 150
    with_skip = results(files)
    skipped = sum(
        1 for p in files if not engine.might_match(p.read_text(encoding="utf-8"), engine.ALL_RULES)
    )
    assert skipped > 0, "the corpus should exercise the skip"
    monkeypatch.setattr(engine, "might_match", lambda source, rules: True)
    for rule in engine.ALL_RULES:  # and no rule's second condition either
        monkeypatch.setattr(rule, "also_needs_tokens", ())
    assert results(files) == with_skip
    assert any(diags for _, _, diags in with_skip)


def test_skip_still_reports_syntax_errors(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text("def f(:\n    pass\n", encoding="utf-8")
    assert not engine.might_match(path.read_text(), engine.ALL_RULES)
    result = engine.lint_file(path)
    assert result.error is not None and result.error.line == 1
