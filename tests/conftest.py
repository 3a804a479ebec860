"""Shared fixtures."""

from __future__ import annotations

import pytest

from gradlint import codes, engine


@pytest.fixture
def install_rules(monkeypatch):
    """Run with stand-in rules instead of the shipped ones: the engine's rule list and
    the codes table a configuration selects from, kept in step as gradlint.codes says
    (the meta rules stay, each still selected only by its own code)."""

    def install(rules) -> None:
        monkeypatch.setattr(engine, "ALL_RULES", list(rules))
        meta = tuple(entry for entry in codes.REGISTERED if entry.explicit_only)
        monkeypatch.setattr(
            codes, "REGISTERED", tuple(codes.RuleCode(rule.code) for rule in rules) + meta
        )

    return install
