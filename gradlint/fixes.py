"""`--fix` as a loop of lint, apply, re-lint, on the edit primitives of `gradlint.edits`.

fix_source(source, path, config, *, unsafe) -> FixOutcome
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from gradlint import engine
from gradlint.diagnostics import Diagnostic
from gradlint.edits import (
    InvalidEditError,
    LineIndex,
    conflict,
    is_applicable,
    parses,
    splice,
    touch,
)

# Enough for fixes that uncover further fixes, small enough that a pair of fixes undoing
# each other stops quickly.
MAX_PASSES = 10


@dataclass
class FixOutcome:
    source: str
    # Diagnostics whose fix was applied, in the pass that applied them (their positions
    # refer to the text as it was in that pass).
    fixed: list[Diagnostic]
    # What the final text still gets (fixable or not).
    remaining: list[Diagnostic]
    # Fixes dropped because the text they produced did not parse: a rule bug to report.
    rejected: list[Diagnostic] = field(default_factory=list)
    # False when fixes were still being applied after MAX_PASSES (or cycled back to a text
    # already seen): two fixes that undo each other.
    converged: bool = True


@dataclass
class _Candidate:
    diagnostic: Diagnostic
    # (start, end, content) of the edits this fix adds, shared edits already removed.
    spans: list[tuple[int, int, str]]


def _select_fixes(
    source: str, diagnostics: Sequence[Diagnostic], *, unsafe: bool
) -> list[_Candidate]:
    """The fixes of one pass: in source order, each one that does not touch a fix already
    taken. An edit identical to one already taken (two fixes adding the same import) is
    shared, not a conflict."""
    index = LineIndex(source)
    located: list[tuple[tuple[int, int], Diagnostic, list[tuple[int, int, str]]]] = []
    for diagnostic in diagnostics:
        if not is_applicable(diagnostic.fix, unsafe=unsafe):
            continue
        try:
            spans = [(*index.span(e), e.content) for e in diagnostic.fix.edits]
        except InvalidEditError:
            continue  # a rule bug; never let it corrupt the file
        ordered = sorted(spans, key=lambda s: (s[0], s[1]))
        if any(conflict(a[:2], b[:2]) for a, b in pairwise(ordered)):
            continue
        located.append(((ordered[0][0], ordered[-1][1]), diagnostic, ordered))
    located.sort(key=lambda item: item[0])

    taken_spans: list[tuple[int, int, str]] = []
    chosen: list[_Candidate] = []
    for _, diagnostic, spans in located:
        new_spans = [s for s in spans if s not in taken_spans]
        if any(touch(s[:2], t[:2]) for s in new_spans for t in taken_spans):
            continue
        taken_spans.extend(new_spans)
        chosen.append(_Candidate(diagnostic, new_spans))
    return chosen


def _apply_pass(
    source: str, candidates: list[_Candidate]
) -> tuple[str, list[Diagnostic], list[Diagnostic]]:
    """Apply the pass's fixes together; if the result does not parse, keep them one at a
    time, each only if the text still parses with it."""
    all_spans = [s for c in candidates for s in c.spans]
    new_source = splice(source, all_spans)
    if parses(new_source):
        return new_source, [c.diagnostic for c in candidates], []
    kept: list[_Candidate] = []
    rejected: list[Diagnostic] = []
    for candidate in candidates:
        trial = splice(source, [s for c in kept + [candidate] for s in c.spans])
        if parses(trial):
            kept.append(candidate)
        else:
            rejected.append(candidate.diagnostic)
    return (
        splice(source, [s for c in kept for s in c.spans]),
        [c.diagnostic for c in kept],
        rejected,
    )


def fix_source(source: str, path: str, config, *, unsafe: bool) -> FixOutcome:
    """Lint, apply every applicable fix that does not clash, re-lint, and repeat until
    nothing changes (at most MAX_PASSES passes). The returned text always parses when the
    input did. Raises engine.SourceError when the input itself cannot be linted."""
    current = source
    seen = {source}
    fixed: list[Diagnostic] = []
    rejected: list[Diagnostic] = []
    rejected_keys: set[tuple] = set()
    diagnostics = engine.lint_source(current, path, config)
    for _ in range(MAX_PASSES):
        # A fix that broke the parse once would break it again: do not retry it.
        pending = [d for d in diagnostics if _key(d) not in rejected_keys]
        candidates = _select_fixes(current, pending, unsafe=unsafe)
        if not candidates:
            return FixOutcome(current, fixed, diagnostics, rejected)
        new_source, applied, dropped = _apply_pass(current, candidates)
        rejected.extend(dropped)
        rejected_keys.update(_key(d) for d in dropped)
        if not applied or new_source == current:
            if dropped:
                continue
            return FixOutcome(current, fixed, diagnostics, rejected)
        fixed.extend(applied)
        current = new_source
        diagnostics = engine.lint_source(current, path, config)
        if current in seen:
            return FixOutcome(current, fixed, diagnostics, rejected, converged=False)
        seen.add(current)
    pending = [d for d in diagnostics if _key(d) not in rejected_keys]
    converged = not _select_fixes(current, pending, unsafe=unsafe)
    return FixOutcome(current, fixed, diagnostics, rejected, converged=converged)


def _key(diagnostic: Diagnostic) -> tuple:
    """Identifies a diagnostic and its fix independently of the pass it came from."""
    fix = diagnostic.fix
    return (diagnostic.code, diagnostic.start, diagnostic.end, fix.edits if fix else None)
