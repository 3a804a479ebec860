"""Every fixture's `# error:` markers equal gradlint's findings, code and line, exactly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gradlint.config import Config
from gradlint.engine import lint_file

# The fixtures are every rule's own examples, preview rules' included.
WITH_PREVIEW = Config(preview=True)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
# Lint-only cases: shapes and traps beyond the runnable fixtures.
CASES = ROOT / "tests" / "cases"
MARKER = re.compile(r"#\s*error:\s*(?P<codes>GL\d{3}(?:\s*,\s*GL\d{3})*)")


def fixture_files():
    return sorted(p for p in FIXTURES.glob("GL*/*.py") if not p.name.endswith(".fixed.py"))


def expected_findings(path: Path) -> set[tuple[int, str]]:
    expected = set()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = MARKER.search(line)
        if match:
            for code in re.split(r"\s*,\s*", match.group("codes")):
                expected.add((lineno, code))
    return expected


@pytest.mark.parametrize(
    "path",
    fixture_files() + sorted(CASES.glob("*.py")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_markers_equal_findings(path: Path) -> None:
    result = lint_file(path, WITH_PREVIEW)
    assert result.error is None, result.error
    found = {(d.start.line, d.code) for d in result.diagnostics}
    expected = expected_findings(path)
    assert found == expected, (
        f"missing: {sorted(expected - found)}; unexpected: {sorted(found - expected)}"
    )


def test_every_rule_has_bad_and_good_fixtures() -> None:
    from gradlint.rules import ALL_RULES

    for rule in ALL_RULES:
        folder = FIXTURES / rule.code
        assert len(list(folder.glob("bad_*.py"))) >= 3, rule.code
        assert len(list(folder.glob("good_*.py"))) >= 3, rule.code


def test_bad_fixtures_have_markers_and_good_ones_do_not() -> None:
    for path in fixture_files():
        markers = expected_findings(path)
        if path.name.startswith("bad_"):
            assert markers, f"{path} has no '# error:' marker"
            assert {code for _, code in markers} >= {path.parent.name}, path
        else:
            assert not markers, f"{path} is good_ but has markers"
