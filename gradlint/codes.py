"""Every rule's code and how a configuration selects it, known without importing a rule.

The rules need LibCST, and importing it is most of a run whose files all come from the
cache (0.3 s of 0.5 s on a 52-file tree). Validating a configuration and deciding which
codes run on a file need only this table, as ruff's `codes.rs` holds its codes apart from
the rules. The rule classes live in `gradlint.rules`, keyed by the same codes, in the
same order; tests/test_codes.py keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuleCode:
    code: str
    # A rule in preview runs only when selected by its exact code or with `--preview` /
    # `preview = true`, until its precision on the real-code ledger is measured and
    # stated in its documentation; then it is made stable here.
    preview: bool = False
    # About the suppressions, not autograd (GL100 judges the noqa comments): only the
    # full code selects it, as RUF100 is not in ruff's defaults; `GL` and `ALL` do not.
    # The engine runs such a rule after the autograd rules, whose findings it judges.
    explicit_only: bool = False


REGISTERED: tuple[RuleCode, ...] = (
    RuleCode("GL001"),
    RuleCode("GL002"),
    RuleCode("GL003"),
    RuleCode("GL004"),
    RuleCode("GL005"),
    RuleCode("GL006"),
    RuleCode("GL007"),
    RuleCode("GL008"),
    # GL009 and GL011: no finding on the 29-repository corpus, so their precision on
    # real code is not measured yet.
    RuleCode("GL009", preview=True),
    RuleCode("GL010"),
    RuleCode("GL011", preview=True),
    RuleCode("GL012"),
    RuleCode("GL100", explicit_only=True),
)


def all_codes() -> list[str]:
    """Every code a configuration can select: the autograd rules, then the meta rules."""
    return [entry.code for entry in REGISTERED if not entry.explicit_only] + [
        entry.code for entry in REGISTERED if entry.explicit_only
    ]


def preview_codes() -> frozenset[str]:
    return frozenset(entry.code for entry in REGISTERED if entry.preview)


def explicit_only_codes() -> frozenset[str]:
    return frozenset(entry.code for entry in REGISTERED if entry.explicit_only)


def is_preview(code: str) -> bool:
    return code in preview_codes()
