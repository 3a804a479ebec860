"""Pure judgement: a fixture's contract + what its child observed + what gradlint found
-> one report row. No torch, no processes: every branch is unit-testable with dicts.

The rules of the game (fixtures/README.md, issue 3):

- raises:  the plain call raises that type (or a subclass) with a message that starts
           with the stated prefix or matches it as a regex;
- grows:   graph nodes or saved-tensor bytes rise at every measured loop length;
- silent:  main() returns normally and check_symptom(result) passes;
- clean:   no exception, no warning, nodes and saved bytes exactly equal at every length;
- a fixed file (bad_*.fixed.py) must run clean, and if its docstring says silent, its
  check_symptom must now FAIL (the symptom is gone).

Linter cross-check: a bad_ fixture (which must have been shown misbehaving) needs a
finding of its folder's code; a good_ fixture (shown clean) must get no finding at all; a
fixed file must get no finding of its folder's code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from runtime_check.contract import Fixture
from runtime_check.units import format_bytes, format_count


@dataclass
class Lint:
    """What gradlint said about one file."""

    findings: list[tuple[str, int]] = field(default_factory=list)  # (code, line)
    error: str | None = None
    registered: frozenset[str] = frozenset()  # codes of the rules gradlint has

    @property
    def codes(self) -> set[str]:
        return {code for code, _ in self.findings}


@dataclass
class Growth:
    """The three measured points and what they add up to."""

    n: list[int]
    nodes: list[int]
    saved_bytes: list[int]
    cuda_allocated: list[int] | None = None
    cuda_peak: list[int] | None = None
    # Bytes of every tensor saved for backward during the run, freed or not (None when
    # the code refused saved-tensor hooks).
    packed_bytes: list[int] | None = None

    @staticmethod
    def _shape(values: list[int]) -> str:
        if all(v == values[0] for v in values):
            return "flat"
        if all(b > a for a, b in pairwise(values)):
            return "grows"
        return "irregular"

    def _slope(self, values: list[int]) -> float:
        return (values[-1] - values[0]) / (self.n[-1] - self.n[0])

    @property
    def shape(self) -> str:
        """flat (both metrics exactly equal), grows (one rises at every length), or
        irregular (changes without rising steadily)."""
        shapes = {self._shape(self.nodes), self._shape(self.saved_bytes)}
        if "grows" in shapes:
            return "grows"
        if shapes == {"flat"}:
            return "flat"
        return "irregular"

    @property
    def nodes_per_iteration(self) -> float:
        return self._slope(self.nodes)

    @property
    def saved_bytes_per_iteration(self) -> float:
        return self._slope(self.saved_bytes)

    @property
    def packed_bytes_per_iteration(self) -> float | None:
        return self._slope(self.packed_bytes) if self.packed_bytes else None

    @property
    def cuda_bytes_per_iteration(self) -> float | None:
        """What torch.cuda.memory_allocated grows by per iteration (None off CUDA)."""
        if not self.cuda_allocated:
            return None
        return self._slope(self.cuda_allocated)

    @property
    def cuda_mib_per_iteration(self) -> float | None:
        found = self.cuda_bytes_per_iteration
        return None if found is None else found / (1 << 20)

    @property
    def linear(self) -> bool:
        """Roughly linear: the per-iteration growth over the second span is within a
        factor of two of that over the first, for every metric that grows."""
        for values in (self.nodes, self.saved_bytes):
            if self._shape(values) != "grows":
                continue
            first = (values[1] - values[0]) / (self.n[1] - self.n[0])
            second = (values[2] - values[1]) / (self.n[2] - self.n[1])
            if not 0.5 <= second / first <= 2.0:
                return False
        return True

    def per_iteration(self) -> str:
        if self.shape == "flat":
            return "flat"
        text = (
            f"{format_count(self.nodes_per_iteration)} nodes, "
            f"{format_bytes(self.saved_bytes_per_iteration)}"
        )
        if self.cuda_mib_per_iteration is not None:
            text += f", cuda {self.cuda_mib_per_iteration:.3f} MiB"
        return text

    def to_dict(self) -> dict:
        return {
            "n": self.n,
            "nodes": self.nodes,
            "saved_bytes": self.saved_bytes,
            "shape": self.shape,
            "linear": self.linear if self.shape == "grows" else None,
            "nodes_per_iteration": self.nodes_per_iteration,
            "saved_bytes_per_iteration": self.saved_bytes_per_iteration,
            "packed_bytes": self.packed_bytes,
            "packed_bytes_per_iteration": self.packed_bytes_per_iteration,
            "cuda_allocated": self.cuda_allocated,
            "cuda_peak": self.cuda_peak,
            "cuda_mib_per_iteration": self.cuda_mib_per_iteration,
            "cuda_peak_mib": (max(self.cuda_peak) / (1 << 20)) if self.cuda_peak else None,
        }

    @classmethod
    def from_points(cls, points: list[dict]) -> Growth:
        def column(key):
            values = [p.get(key) for p in points]
            return None if any(v is None for v in values) else values

        return cls(
            n=[p["n"] for p in points],
            nodes=[p["nodes"] for p in points],
            saved_bytes=[p["saved_bytes"] for p in points],
            cuda_allocated=column("cuda_allocated"),
            cuda_peak=column("cuda_peak"),
            packed_bytes=column("packed_bytes"),
        )


@dataclass
class Row:
    rule: str | None
    fixture: str
    role: str
    expected: str
    observed: str
    growth: Growth | None
    runtime_ok: bool
    lint_ok: bool | None  # None: not checked
    reasons: list[str]
    lint: Lint | None = None
    seconds: float | None = None
    details: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.runtime_ok and self.lint_ok is not False

    @property
    def verdict(self) -> str:
        return "ok" if self.ok else "FAIL"

    def to_dict(self) -> dict:
        lint = None
        if self.lint is not None:
            lint = {
                "findings": [{"code": c, "line": line} for c, line in self.lint.findings],
                "error": self.lint.error,
                "rule_registered": self.rule in self.lint.registered if self.rule else None,
                "ok": self.lint_ok,
            }
        return {
            "rule": self.rule,
            "fixture": self.fixture,
            "role": self.role,
            "expected": self.expected,
            "observed": self.observed,
            "growth": self.growth.to_dict() if self.growth else None,
            "growth_per_iteration": self.growth.per_iteration() if self.growth else None,
            "runtime_ok": self.runtime_ok,
            "lint": lint,
            "verdict": self.verdict,
            "reasons": self.reasons,
            "seconds": self.seconds,
            "details": self.details,
        }


def _first_line(text: str, limit: int = 90) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


# What the CUDA runtime says of itself, not of the fixture: an autograd worker thread
# that runs a cuBLAS kernel before any CUDA context is current on it (seen on an H200 with
# torch 2.11+cu130 in every fixture that calls `torch.autograd.grad`).
_DEVICE_NOTICES = ("Attempting to run cuBLAS, but there was no current CUDA context!",)


def _device_notice(warning: dict) -> bool:
    return any(str(warning.get("message", "")).startswith(n) for n in _DEVICE_NOTICES)


def _warning_summary(warnings: list[dict]) -> list[str]:
    """Distinct warnings, with a count for repeats (a loop warns once per iteration)."""
    counts: dict[str, int] = {}
    for w in warnings:
        text = f"{w['category']}: {_first_line(w['message'], 120)}"
        counts[text] = counts.get(text, 0) + 1
    return [text if k == 1 else f"{text} (x{k})" for text, k in counts.items()]


def message_matches(expected: str, actual: str) -> bool:
    """A prefix, or a regex searched anywhere in the message (the anchors in pitfalls.md
    are written both ways)."""
    if not expected or actual.startswith(expected):
        return True
    try:
        return re.search(expected, actual) is not None
    except re.error:
        return False


def type_matches(expected: str, exception: dict) -> bool:
    """`RuntimeError` matches RuntimeError and its subclasses; a dotted name is compared by
    its last part, since torch moves exception classes between modules."""
    name = expected.rsplit(".", 1)[-1]
    return name in exception.get("mro", [exception.get("type")])


def describe_exception(exception: dict) -> str:
    return f"{exception['type']}: {_first_line(exception['message'])}"


def judge_runtime(
    fixture: Fixture, observation: dict | None
) -> tuple[str, Growth | None, list[str]]:
    """-> (observed, growth, reasons); no reasons means the runtime outcome is confirmed."""
    if fixture.contract_error:
        return "not run", None, [f"fixture contract: {fixture.contract_error}"]
    if observation is None:
        return "not run", None, ["the harness produced no observation"]
    status = observation.get("status")
    problem = observation.get("problem")
    if status in ("timeout", "crashed"):
        return status, None, [problem or status]
    if status == "import-error":
        return (
            "import failed",
            None,
            [f"importing the fixture failed: {describe_exception(problem)}"],
        )
    if status != "ran":
        detail = describe_exception(problem) if isinstance(problem, dict) else problem
        return status or "not run", None, [f"{status}: {detail}"]

    outcome = fixture.outcome
    plain = observation["plain"]
    exception = plain.get("exception")
    if exception is not None:
        observed = f"raises {describe_exception(exception)}"
        if outcome.kind == "raises" and fixture.role != "fixed":
            reasons = []
            if not type_matches(outcome.exc_type, exception):
                reasons.append(
                    f"expected {outcome.exc_type}, but main() raised {exception['type']}: "
                    f"{_first_line(exception['message'])}"
                )
            elif not message_matches(outcome.message, exception["message"]):
                reasons.append(
                    f"main() raised {exception['type']} as expected, but the message differs: "
                    f"expected {outcome.message!r}, got {_first_line(exception['message'], 200)!r}"
                )
            return observed, None, reasons
        return (
            observed,
            None,
            [f"main() raised {describe_exception(exception)}; expected {fixture.expected}"],
        )

    growth_data = observation.get("growth") or {}
    growth = Growth.from_points(growth_data["points"]) if growth_data.get("points") else None
    warnings = [w for w in plain.get("warnings") or [] if not _device_notice(w)]
    symptom = plain.get("symptom")

    parts = []
    if growth_data.get("error"):
        error = growth_data["error"]
        parts.append(f"raises {describe_exception(error)} at n={error['n']} under measurement")
    elif growth is not None:
        parts.append(
            growth.shape + ("" if growth.shape != "grows" or growth.linear else " (not linear)")
        )
    elif growth_data.get("skipped"):
        parts.append("not measured")
    if symptom is not None:
        if symptom["holds"]:
            parts.append("symptom holds")
        elif symptom["exception"]["type"] == "AssertionError":
            parts.append("symptom absent")
        else:
            parts.append(f"check_symptom crashed ({symptom['exception']['type']})")
    if warnings:
        first = warnings[0]
        parts.append(f"warns {first['category']}: {_first_line(first['message'], 60)}")
    observed = "; ".join(parts) or "ran"

    reasons: list[str] = []
    if growth_data.get("error"):
        error = growth_data["error"]
        reasons.append(
            f"main(n={error['n']}) raised {describe_exception(error)} while being measured, "
            "although main() at its default n returned normally"
        )
    if fixture.role == "fixed" or outcome.kind == "clean":
        what = "the fixed file" if fixture.role == "fixed" else "a clean fixture"
        if warnings:
            listed = "; ".join(_warning_summary(warnings))
            reasons.append(f"{what} must run without warnings, got {listed}")
        if growth_data.get("skipped"):
            reasons.append(f"{what} cannot be shown flat: {growth_data['skipped']}")
        elif growth is not None and growth.shape != "flat":
            reasons.append(
                f"{what} must hold an exactly flat graph, but it is {growth.shape}: "
                f"nodes {growth.nodes}, saved bytes {growth.saved_bytes} at n={growth.n}"
            )
        if fixture.role == "fixed" and outcome.kind == "silent":
            if symptom is None:
                reasons.append(
                    "the fixed file defines no check_symptom, so the fix cannot be shown"
                )
            elif symptom["holds"]:
                reasons.append(
                    "check_symptom still passes on the fixed file: the fix does not remove "
                    "the pitfall at runtime"
                )
            elif "AssertionError" not in symptom.get("exception", {}).get("mro", []):
                # A check that crashes (AttributeError on a None grad_fn, say) proves nothing
                # either way; only a failed assertion says the symptom is gone.
                reasons.append(
                    "check_symptom crashed on the fixed file instead of failing an assertion: "
                    f"{describe_exception(symptom['exception'])}"
                )
        return observed, growth, reasons

    if outcome.kind == "raises":
        reasons.append(
            f"main() returned normally; expected it to raise {outcome.exc_type}: {outcome.message}"
        )
    elif outcome.kind == "grows":
        if growth_data.get("skipped"):
            reasons.append(f"cannot measure growth: {growth_data['skipped']}")
        elif growth is not None and growth.shape != "grows":
            reasons.append(
                f"expected the graph to grow with n, but it is {growth.shape}: nodes "
                f"{growth.nodes}, saved bytes {growth.saved_bytes} at n={growth.n} (is the "
                "loop state returned from main()?)"
            )
    elif outcome.kind == "silent":
        if symptom is None:
            reasons.append("a silent fixture must define check_symptom(result)")
        elif not symptom["holds"]:
            failure = symptom.get("exception") or {}
            reasons.append(
                "check_symptom failed, so the silent failure did not happen: "
                f"{describe_exception(failure) if failure else 'no detail'}"
            )
    return observed, growth, reasons


def judge_lint(fixture: Fixture, lint: Lint | None) -> tuple[bool | None, list[str]]:
    if lint is None:
        return None, []
    if lint.error:
        return False, [f"gradlint could not lint the file: {lint.error}"]
    if fixture.role == "good":
        if lint.findings:
            listed = ", ".join(f"{code} at line {line}" for code, line in lint.findings)
            return False, [f"gradlint flags this clean fixture: {listed}"]
        return True, []
    if fixture.rule is None:
        return None, []  # the folder does not name a rule: nothing to hold gradlint to
    lines = [line for code, line in lint.findings if code == fixture.rule]
    if fixture.role == "bad":
        if lines:
            return True, []
        found = ", ".join(f"{code} at line {line}" for code, line in lint.findings) or "nothing"
        why = (
            "" if fixture.rule in lint.registered else f" (gradlint has no rule {fixture.rule} yet)"
        )
        return False, [f"gradlint does not report {fixture.rule} here{why}; it found {found}"]
    if lines:
        return False, [
            f"the fixed file is still flagged {fixture.rule} at line(s) {', '.join(map(str, lines))}"
        ]
    return True, []


def judge(fixture: Fixture, observation: dict | None, lint: Lint | None, fixture_label: str) -> Row:
    observed, growth, reasons = judge_runtime(fixture, observation)
    runtime_ok = not reasons
    lint_ok, lint_reasons = judge_lint(fixture, lint)
    details = {}
    if observation:
        if observation.get("plain"):
            details["warnings"] = observation["plain"].get("warnings", [])
            if observation["plain"].get("exception"):
                details["exception"] = observation["plain"]["exception"]
        growth_data = observation.get("growth") or {}
        if growth_data.get("hooks_refused"):
            details["saved_bytes_from"] = "graph"
            details["hooks_refused"] = describe_exception(growth_data["hooks_refused"])
        if observation.get("log_tail"):
            details["log_tail"] = observation["log_tail"]
    return Row(
        rule=fixture.rule,
        fixture=fixture_label,
        role=fixture.role,
        expected=fixture.expected,
        observed=observed,
        growth=growth,
        runtime_ok=runtime_ok,
        lint_ok=lint_ok,
        reasons=reasons + lint_reasons,
        lint=lint,
        seconds=observation.get("seconds") if observation else None,
        details=details,
    )
