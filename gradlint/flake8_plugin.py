"""The flake8 front: `flake8 --select GL` reports what `gradlint check` reports.

flake8 runs every installed plugin on every file, so the plugin decides once per process,
from flake8's own select/ignore options, whether any GL code can be reported at all; when
none can, `run()` returns before gradlint's engine (and LibCST) is even imported.

Positions: the engine's columns are 0-based code points; flake8 takes 0-based columns and
adds 1 itself, so they pass through unchanged and match the CLI's 1-based columns.

Suppression: the engine applies gradlint's `# noqa` and `[tool.gradlint]` configuration,
exactly as for the CLI; flake8 then applies its own `# noqa`, select/ignore and
per-file-ignores on top. Both read the same `# noqa: GL001` comment on the reported line,
so a finding the CLI hides is hidden here too.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from gradlint import __version__

# Every code gradlint can ever use has this shape ("GL" + three digits); enumerating it lets
# the plugin ask flake8's decision engine about GL codes without importing the rules.
_CODE_SPACE = tuple(f"GL{number:03d}" for number in range(1000))


class GradlintChecker:
    name = "gradlint"
    version = __version__

    # Set by parse_options: the codes flake8 may report, or None before options are parsed
    # (a plugin used outside flake8's CLI, e.g. in a test): then nothing is filtered here.
    _flake8_selected: ClassVar[frozenset[str] | None] = None

    # flake8 classifies a plugin by its parameters: one that takes neither `tree` nor a
    # line is rejected. flake8 builds the AST of every file anyway (its E999 comes from it),
    # so taking `tree` costs nothing; gradlint parses `lines` with LibCST.
    def __init__(self, tree: Any, filename: str, lines: list[str]) -> None:
        self.filename = filename
        self.lines = lines

    @classmethod
    def parse_options(cls, options: Any) -> None:
        try:
            from flake8.style_guide import Decision, DecisionEngine

            decider = DecisionEngine(options)
            cls._flake8_selected = frozenset(
                code for code in _CODE_SPACE if decider.decision_for(code) is Decision.Selected
            )
        except Exception as exc:  # an unknown flake8 version: run, and let flake8 filter
            _note(f"could not read flake8's select/ignore options ({exc!r}); checking every file")
            cls._flake8_selected = None

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        if self._flake8_selected is not None and not self._flake8_selected:
            return
        try:
            diagnostics = self._lint()
        except Exception as exc:
            _note(f"internal error on {self.filename}: {type(exc).__name__}: {exc} (please report)")
            return
        for diagnostic in diagnostics:
            # flake8 has no levels: the text says the finding's level, group and impact.
            yield (
                diagnostic.start.line,
                diagnostic.start.column,
                f"{diagnostic.code} {diagnostic.message}{_context(diagnostic)}",
                type(self),
            )

    def _lint(self) -> list:
        from gradlint.engine import ALL_RULES, SourceError, lint_source

        config = _config_for(self.filename)
        if self._flake8_selected is not None:
            discarded = [r.code for r in ALL_RULES if r.code not in self._flake8_selected]
            if len(discarded) == len(ALL_RULES):
                return []
            # Rules flake8 would discard anyway are not run: a code ignored by its full name
            # is the most specific ignore, so it wins over any gradlint select.
            config = dataclasses.replace(config, ignore=(*config.ignore, *discarded))
        # flake8 applies noqa comments itself (and honours its --disable-noqa), so the engine
        # leaves the comments to it.
        try:
            return lint_source("".join(self.lines), self.filename, config, noqa=False)
        except SourceError:
            # Not Python LibCST can read: flake8 reports its own E999 where Python agrees.
            return []


@functools.cache
def _config_for_directory(directory: str):
    """[tool.gradlint] from the closest configuration file, as the CLI finds it; read once
    per directory and process."""
    from gradlint.config import ConfigError, load_settings
    from gradlint.engine import DEFAULT_CONFIG

    try:
        # GL100 is a valid code here too, though flake8 applies noqa itself (so it never runs).
        return load_settings(Path(directory)).config
    except ConfigError as exc:
        _note(f"{exc}; using the default configuration")
        return DEFAULT_CONFIG


def _config_for(filename: str):
    if filename in ("-", "stdin"):
        return _config_for_directory(os.getcwd())
    return _config_for_directory(os.path.dirname(os.path.abspath(filename)))


def _context(diagnostic) -> str:
    from gradlint.output.common import context_text

    return context_text(diagnostic)


def _note(message: str) -> None:
    print(f"gradlint: {message}", file=sys.stderr)
