"""A baseline: the findings a codebase had when it adopted gradlint, reported no more.

A finding is recorded by its file (relative to the baseline file's folder, so the file can
be committed and used from any checkout), its code and a fingerprint of the source text
it flags, whitespace collapsed: an edit elsewhere that moves it to another line, or a
re-indent, does not make it new; a change to the flagged code itself does. Identical
findings in one file are counted, so a second copy of a recorded pitfall is reported.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePath

from gradlint import fileio
from gradlint.diagnostics import Diagnostic, Edit
from gradlint.edits import InvalidEditError, LineIndex
from gradlint.results import FileResult

FORMAT_VERSION = 1

Key = tuple[str, str, str]  # (file, code, fingerprint)

# A finding takes about 250 bytes: room for 250,000 of them, and a bound on what a
# baseline named on the command line (or a link to /dev/zero) can cost.
MAX_SIZE = 64 * 1024 * 1024


class BaselineError(Exception):
    """The baseline file cannot be read or is not one gradlint wrote."""


def flagged_text(diagnostic: Diagnostic, source: str | None) -> str:
    if source is None:
        return diagnostic.message
    index = LineIndex(source)
    try:
        start, end = index.span(Edit(diagnostic.start, diagnostic.end, ""))
    except InvalidEditError:
        return diagnostic.message
    return source[start:end]


def fingerprint(diagnostic: Diagnostic, source: str | None) -> str:
    text = " ".join(flagged_text(diagnostic, source).split())
    digest = hashlib.sha256(f"{diagnostic.code}\0{text}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:16]


def relative_file(path: str, base: str) -> str:
    if path == "-":
        return path
    relative = os.path.relpath(os.path.abspath(path), base)
    return PurePath(relative).as_posix()


def source_of(diagnostic: Diagnostic, result: FileResult) -> str | None:
    """The text the finding's positions refer to: the file, or a notebook's cell."""
    if diagnostic.cell is not None and result.cells is not None:
        return result.cells.get(diagnostic.cell.number)
    return result.source


def _keys(results: Sequence[FileResult], base: str):
    for result in results:
        for diagnostic in result.diagnostics:
            source = source_of(diagnostic, result)
            key = (
                relative_file(diagnostic.path, base),
                diagnostic.code,
                fingerprint(diagnostic, source),
            )
            yield key, diagnostic, source


def write(path: str, results: Sequence[FileResult]) -> int:
    """Record every finding of `results` in `path`; the number recorded."""
    base = os.path.dirname(os.path.abspath(path))
    counts: Counter[Key] = Counter()
    first: dict[Key, tuple[Diagnostic, str | None]] = {}
    for key, diagnostic, source in _keys(results, base):
        counts[key] += 1
        first.setdefault(key, (diagnostic, source))
    entries = []
    for key in sorted(counts):
        diagnostic, source = first[key]
        # For people reading the file in review; matching uses file, code and fingerprint.
        excerpt = " ".join(flagged_text(diagnostic, source).split())
        entries.append(
            {
                "file": key[0],
                "code": key[1],
                "fingerprint": key[2],
                "count": counts[key],
                "line": diagnostic.start.line,
                "text": excerpt if len(excerpt) <= 120 else excerpt[:117] + "...",
            }
        )
    payload = {"gradlint_baseline": FORMAT_VERSION, "findings": entries}
    text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    # Atomically, as fixes are written: a full disk keeps the previous baseline whole.
    fileio.write_file(path, text.encode("utf-8"))
    return sum(counts.values())


def load(path: str) -> Counter[Key]:
    try:
        # A regular file only: a FIFO would block the run, a device never end.
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            kind = fileio.file_kind(mode) or "a FIFO"
            raise BaselineError(f"cannot read baseline {path!r}: {kind}, not a regular file")
        data = fileio.read_source(path, MAX_SIZE)
    except FileNotFoundError:
        raise BaselineError(
            f"baseline {path!r} does not exist; write one with --write-baseline {path}"
        ) from None
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {path!r}: {exc.strerror or exc}") from None
    except fileio.SourceReadError as exc:
        raise BaselineError(f"cannot use baseline {path!r}: {exc}") from None
    try:
        payload = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise BaselineError(f"baseline {path!r} is not valid JSON: {exc}") from None
    except RecursionError:
        raise BaselineError(f"baseline {path!r} is not valid JSON: nested too deeply") from None
    if not isinstance(payload, dict) or payload.get("gradlint_baseline") != FORMAT_VERSION:
        raise BaselineError(
            f"{path!r} is not a gradlint baseline (version {FORMAT_VERSION}); "
            "write one with --write-baseline"
        )
    findings = payload.get("findings", [])
    if not isinstance(findings, list):
        raise BaselineError(f'baseline {path!r}: "findings" must be a list')
    counts: Counter[Key] = Counter()
    for entry in findings:
        try:
            if not isinstance(entry, dict):
                raise TypeError
            key = (str(entry["file"]), str(entry["code"]), str(entry["fingerprint"]))
            count = entry.get("count", 1)
            if type(count) is not int:  # a float (1e400), a bool or a string is not a count
                raise TypeError
        except (TypeError, KeyError):
            shown = repr(entry)
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            raise BaselineError(f"baseline {path!r} has a malformed entry: {shown}") from None
        counts[key] += max(count, 0)
    return counts


def apply(results: list[FileResult], path: str, recorded: Counter[Key]) -> int:
    """Drop from `results` the findings the baseline records (each recorded one matches
    at most `count` findings); the number dropped."""
    base = os.path.dirname(os.path.abspath(path))
    left = Counter(recorded)
    dropped = 0
    for index, result in enumerate(results):
        if not result.diagnostics:
            continue
        kept: list[Diagnostic] = []
        for diagnostic in result.diagnostics:
            key = (
                relative_file(diagnostic.path, base),
                diagnostic.code,
                fingerprint(diagnostic, source_of(diagnostic, result)),
            )
            if left[key] > 0:
                left[key] -= 1
                dropped += 1
            else:
                kept.append(diagnostic)
        if len(kept) != len(result.diagnostics):
            results[index] = replace(result, diagnostics=kept)
    return dropped
