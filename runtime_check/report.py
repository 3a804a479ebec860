"""The run's result: a terminal table and a JSON document."""

from __future__ import annotations

import json
import shutil
import textwrap
from dataclasses import dataclass, field

from runtime_check.judge import Row

JSON_VERSION = 1


def _wrap(text: str, width: int) -> list[str]:
    """A cell's text in lines of at most `width`: whole, never cut short (a claim with
    its last words missing reads as a different claim)."""
    text = " ".join(str(text).split())
    if len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, break_on_hyphens=False) or [""]


@dataclass
class Report:
    rows: list[Row]
    device: str
    torch_version: str | None
    seconds: float
    lint_checked: bool = True
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(row.ok for row in self.rows)

    @property
    def failures(self) -> list[Row]:
        return [row for row in self.rows if not row.ok]

    def counts(self) -> dict:
        return {
            "fixtures": len(self.rows),
            "ok": sum(row.ok for row in self.rows),
            "failed": sum(not row.ok for row in self.rows),
            "runtime_failed": sum(not row.runtime_ok for row in self.rows),
            "lint_failed": sum(row.lint_ok is False for row in self.rows),
        }

    def to_dict(self) -> dict:
        return {
            "version": JSON_VERSION,
            "ok": self.ok,
            "device": self.device,
            "torch": self.torch_version,
            "seconds": self.seconds,
            "lint_checked": self.lint_checked,
            "counts": self.counts(),
            "rows": [row.to_dict() for row in self.rows],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)

    def summary(self) -> str:
        c = self.counts()
        state = "all confirmed" if self.ok else f"{c['failed']} FAILED"
        lint = "" if self.lint_checked else ", linter cross-check off"
        return (
            f"{c['fixtures']} fixtures: {c['ok']} ok, {state} "
            f"(runtime mismatches {c['runtime_failed']}, linter mismatches {c['lint_failed']}"
            f"{lint}; device {self.device}, torch {self.torch_version}, {self.seconds:.1f} s)"
        )

    def table(self, width: int | None = None) -> str:
        width = width or max(100, shutil.get_terminal_size((140, 24)).columns)
        headers = ("rule", "fixture", "expected", "observed", "growth/iter", "verdict")
        cells = []
        for row in self.rows:
            name = row.fixture.rsplit("/", 1)[-1]
            verdict = row.verdict
            if not row.ok:
                parts = []
                if not row.runtime_ok:
                    parts.append("runtime")
                if row.lint_ok is False:
                    parts.append("lint")
                verdict += f" ({', '.join(parts)})"
            growth = row.growth.per_iteration() if row.growth else "-"
            cells.append([row.rule or "-", name, row.expected, row.observed, growth, verdict])
        fixed = [
            max(len(headers[i]), *(len(c[i]) for c in cells)) if cells else len(headers[i])
            for i in range(6)
        ]
        fixed[1] = min(fixed[1], 42)
        fixed[4] = min(fixed[4], 34)
        spare = width - (fixed[0] + fixed[1] + fixed[4] + fixed[5]) - 2 * 5
        # The claims need room more than the names: every cell wraps, so a narrow
        # terminal takes the width from the fixture column first.
        if spare < 40:
            narrower = max(16, fixed[1] - (40 - spare))
            spare += fixed[1] - narrower
            fixed[1] = narrower
        text_width = max(20, spare // 2)
        fixed[2] = min(fixed[2], text_width)
        fixed[3] = min(fixed[3], max(20, spare - fixed[2]))

        def lines(values) -> list[str]:
            wrapped = [_wrap(v, w) for v, w in zip(values, fixed, strict=True)]
            height = max(len(cell) for cell in wrapped)
            return [
                "  ".join(
                    (cell[i] if i < len(cell) else "").ljust(w)
                    for cell, w in zip(wrapped, fixed, strict=True)
                ).rstrip()
                for i in range(height)
            ]

        out = [*lines(headers), *lines(["-" * w for w in fixed])]
        for c in cells:
            out += lines(c)
        if self.failures:
            out.append("")
            out.append("Failures:")
            for row in self.failures:
                out.append(f"  {row.fixture}")
                for reason in row.reasons:
                    first, *rest = reason.splitlines()
                    out.append(f"    - {first}")
                    out += [f"      {more}" for more in rest[-8:]]
        out.append("")
        out.append(self.summary())
        return "\n".join(out)
