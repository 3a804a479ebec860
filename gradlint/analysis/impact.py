"""How often a piece of code runs: on every batch, every epoch, once, or only in tests.

The same pitfall costs very different amounts in different places: a graph recorded
for nothing in a loop over a data loader is paid on every batch, the same forward in a
plot or a test once. The impact is read off the context the analysis already has:

- code under tests (a `test_*.py` / `*_test.py` / `conftest.py` file, a `tests/` or
  `test/` folder, a pytest function `test_*`) is `test`;
- code in a loop is `per-batch`, except in the body of an epoch loop (one whose target
  or iterable names an epoch) that holds the batch loop beside it: `per-epoch`;
- code of a function outside its loops runs as often as the function is called: the
  most frequent of its calls in this file, or, with none visible (a hook a framework
  calls, an entry point another file imports), by its name: `forward`, `*_step` and the
  unknown run per batch, `evaluate`/`validate`/`log` per epoch, `plot`/`save`/`main`
  once;
- module-level code outside loops (a script's body, a notebook cell) runs `once`.

Nothing here decides whether a finding is reported; it decides how loudly
(gradlint.codes.default_severity) and in which order.
"""

from __future__ import annotations

import os
import re

import libcst as cst

from gradlint.analysis.callees import CalleeResolver
from gradlint.analysis.index import LOOPS, FileIndex
from gradlint.diagnostics import Impact

_TEST_FOLDERS = frozenset({"tests", "test", "testing"})
_EPOCH = re.compile(r"epoch", re.IGNORECASE)
# Functions that nothing in the file calls, by what their name says they are for.
_ONCE_NAMES = re.compile(
    r"^(main|_?plot\w*|\w*_plot|visuali[sz]e\w*|show\w*|draw\w*|save\w*|export\w*|demo\w*|"
    r"__init__|setup\w*|build\w*|load\w*|summar\w*|report\w*)$"
)
_EPOCH_NAMES = re.compile(r"^_?(eval\w*|valid\w*|\w*_eval\w*|\w*epoch\w*|log\w*|checkpoint\w*)$")


def is_test_path(path: str) -> bool:
    """A file pytest would collect, or one in a tests folder."""
    norm = path.replace("\\", "/")
    parts = norm.split("/")
    name = parts[-1]
    stem = name.rsplit(".", 1)[0]
    if stem.startswith("test_") or stem.endswith("_test") or stem == "conftest":
        return True
    return any(part in _TEST_FOLDERS for part in parts[:-1])


class ImpactAnalysis:
    def __init__(self, index: FileIndex, path: str, callees: CalleeResolver) -> None:
        self.index = index
        self.callees = callees
        self.in_tests = is_test_path(os.path.normpath(path)) if path not in ("", "-") else False
        self._entry: dict[cst.CSTNode, Impact] = {}

    def of(self, node: cst.CSTNode) -> Impact:
        """How often `node` runs."""
        if self.in_tests:
            return Impact.TEST
        return self._impact(node, set())

    def _impact(self, node: cst.CSTNode, visiting: set[cst.CSTNode]) -> Impact:
        scope = self.index.scope_of(node)
        if type(scope) is cst.FunctionDef and self._is_test_function(scope):
            return Impact.TEST
        innermost = next(iter(self.index.enclosing_loops(node)), None)
        if innermost is not None:
            return self._in_loop(innermost, node)
        if scope is self.index.module:
            return Impact.ONCE
        if type(scope) is not cst.FunctionDef:
            return Impact.PER_BATCH  # a lambda runs wherever it is handed to
        return self._entry_of(scope, visiting)

    def _in_loop(self, loop: cst.For | cst.While, node: cst.CSTNode) -> Impact:
        """Per batch, unless `node` sits in an epoch loop's own body beside the loop that
        runs the batches (a full-batch loop over epochs runs one step per epoch: per
        batch too)."""
        if type(loop) is cst.For and _EPOCH.search(_text(loop.target) + " " + _text(loop.iter)):
            inner = [n for n in self.index.walk(loop.body) if type(n) in LOOPS]
            if inner and not any(self.index.is_inside(node, other) for other in inner):
                return Impact.PER_EPOCH
        return Impact.PER_BATCH

    def _entry_of(self, func: cst.FunctionDef, visiting: set[cst.CSTNode]) -> Impact:
        """How often the function's body runs: as often as its most frequent call."""
        found = self._entry.get(func)
        if found is not None:
            return found
        if func in visiting:
            return Impact.ONCE  # recursion adds no caller of its own
        visiting.add(func)
        calls = self.callees.callers_of(func)
        impacts = [self._impact(call, visiting) for call in calls]
        if not calls or self.callees.handed_on(func):
            impacts.append(_by_name(func.name.value))
        visiting.discard(func)
        found = max(impacts, key=lambda impact: impact.rank)
        self._entry[func] = found
        return found

    def _is_test_function(self, func: cst.FunctionDef) -> bool:
        """A pytest function: `test_*` at module level or in a `Test*` class."""
        if not func.name.value.startswith("test"):
            return False
        cls = self.index.enclosing_class(func)
        return cls is None or cls.name.value.startswith("Test")


def _by_name(name: str) -> Impact:
    if _ONCE_NAMES.match(name):
        return Impact.ONCE
    if _EPOCH_NAMES.match(name):
        return Impact.PER_EPOCH
    return Impact.PER_BATCH


def _text(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)
