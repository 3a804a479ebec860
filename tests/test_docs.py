"""Rule documentation: every docstring has ruff's sections, its Example is flagged and its
Use-instead is clean, and docs/rules/ is what scripts/gen_docs.py makes of the docstrings
(so a docstring edited without regenerating the docs fails here)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from gradlint.config import Config
from gradlint.engine import lint_source
from gradlint.rules import ALL_RULES

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "rules"

REQUIRED_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "References")

_spec = importlib.util.spec_from_file_location("gen_docs", REPO / "scripts" / "gen_docs.py")
gen_docs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_docs)


def sections(documentation: str) -> dict[str, str]:
    """`## Heading` -> the text under it, up to the next `## ` heading."""
    found: dict[str, str] = {}
    current = None
    for line in documentation.splitlines():
        heading = re.match(r"^##\s+(.+?)\s*:?\s*$", line)
        if heading:
            current = heading.group(1)
            found[current] = ""
        elif current is not None:
            found[current] += line + "\n"
    return found


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def findings_of(rule, code: str) -> list:
    # The rule's own code selects it even in preview.
    config = Config(select=(rule.code,))
    return [d for d in lint_source(code, "example.py", config) if d.code == rule.code]


def test_rules_are_registered():
    assert ALL_RULES, "gradlint.rules.ALL_RULES is empty"


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_docstring_has_the_sections_users_know_from_ruff(rule):
    found = sections(rule.documentation())
    required = REQUIRED_SECTIONS + (("Fix safety",) if rule.fix_title else ())
    missing = [name for name in required if not found.get(name, "").strip()]
    assert not missing, f"{rule.code} docstring lacks (or leaves empty): {missing}"
    order = [name for name in found if name in required]
    assert order[0] == "What it does", f"{rule.code}: the docs start with 'What it does'"


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_example_is_flagged_and_use_instead_is_clean(rule):
    found = sections(rule.documentation())
    examples = python_blocks(found.get("Example", ""))
    fixes = python_blocks(found.get("Use instead", ""))
    assert examples, f"{rule.code}: no ```python block under Example"
    assert fixes, f"{rule.code}: no ```python block under Use instead"
    for code in examples:
        assert findings_of(rule, code), f"{rule.code} does not flag its own Example:\n{code}"
    for code in fixes:
        found_there = findings_of(rule, code)
        assert not found_there, (
            f"{rule.code} flags its own Use-instead code at "
            f"{[(d.start.line, d.start.column) for d in found_there]}:\n{code}"
        )


def test_committed_docs_match_the_docstrings():
    problems = gen_docs.check(DOCS)
    assert not problems, (
        "docs/rules/ is out of date; run `python scripts/gen_docs.py`:\n" + "\n".join(problems)
    )


def test_every_rule_has_a_page_and_an_index_row():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for rule in ALL_RULES:
        page = (DOCS / f"{rule.code}.md").read_text(encoding="utf-8")
        assert page.startswith(f"# {rule.code} {rule.name}\n")
        assert rule.documentation().strip() in page
        assert "**Fix:**" in page
        assert f"| [{rule.code}]({rule.code}.md) | `{rule.name}` |" in index


def test_check_fails_with_a_clear_message_when_docs_are_stale(tmp_path, capsys):
    assert gen_docs.main(["--output-dir", str(tmp_path)]) == 0
    assert gen_docs.main(["--check", "--output-dir", str(tmp_path)]) == 0
    capsys.readouterr()

    first = tmp_path / f"{ALL_RULES[0].code}.md"
    first.write_text(first.read_text(encoding="utf-8") + "\nedited by hand\n", encoding="utf-8")
    (tmp_path / "GL999.md").write_text("# GL999 gone\n", encoding="utf-8")
    (tmp_path / "README.md").unlink()

    assert gen_docs.main(["--check", "--output-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "out of date" in err
    assert f"{first.name}: differs" in err
    assert "GL999.md: no rule generates it" in err
    assert "README.md: missing" in err
    assert "python scripts/gen_docs.py" in err

    # Regenerating repairs all three.
    assert gen_docs.main(["--output-dir", str(tmp_path)]) == 0
    assert not (tmp_path / "GL999.md").exists()
    assert gen_docs.check(tmp_path) == []


def test_fix_line_states_availability_and_safety():
    for rule in ALL_RULES:
        line = gen_docs.fix_line(rule)
        if rule.fix_title is None:
            assert line == "**Fix:** none."
        else:
            expected = {
                "safe": "(safe, applied by `--fix`",
                "unsafe": "(unsafe, applied only with `--fix --unsafe-fixes`",
                "display-only": "(display-only, shown as a suggestion",
            }[rule.fix_applicability.value]
            assert expected in line
            assert "{" not in line  # placeholders do not leak into the docs
