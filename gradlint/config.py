"""Which rules run on which file.

`Config` is what the engine needs; `load_config` (CLI side) fills it from
`[tool.gradlint]` in the closest pyproject.toml and the command line.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Config:
    # Code prefixes, as ruff and flake8 take them: "GL" selects every rule, "GL00" a family.
    select: tuple[str, ...] = ("GL",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    # glob pattern -> code prefixes ignored in files that match it
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()

    def codes_for(self, path: str, all_codes: list[str]) -> frozenset[str]:
        """The codes that run on `path`: the most specific matching prefix wins, as in ruff."""
        ignored = list(self.ignore)
        for pattern, prefixes in self.per_file_ignores.items():
            if _path_matches(path, pattern):
                ignored.extend(prefixes)
        selected = tuple(self.select) + tuple(self.extend_select)
        chosen = set()
        for code in all_codes:
            sel = _longest_prefix(code, selected)
            if sel < 0:
                continue
            if _longest_prefix(code, ignored) >= max(sel, 0) and _longest_prefix(code, ignored) >= 0:
                # ruff: an ignore at least as specific as the select wins
                continue
            chosen.add(code)
        return frozenset(chosen)


def _longest_prefix(code: str, prefixes) -> int:
    best = -1
    for prefix in prefixes:
        prefix = prefix.strip().upper()
        if prefix == "ALL":
            prefix = ""
        if code.startswith(prefix):
            best = max(best, len(prefix))
    return best


def _path_matches(path: str, pattern: str) -> bool:
    norm = path.replace("\\", "/")
    return (
        fnmatch.fnmatch(norm, pattern)
        or fnmatch.fnmatch(norm, "*/" + pattern)
        or fnmatch.fnmatch(norm.rsplit("/", 1)[-1], pattern)
    )
