"""A content-hash cache of lint results, so a second run over an unchanged tree costs
little more than reading the files.

Layout (like ruff's `.ruff_cache`):

    .gradlint_cache/
      CACHEDIR.TAG          tells backup tools to skip the folder
      .gitignore            `*`, so the cache is never committed
      <version>/<root>.json one file per project root

Each entry is keyed by the file's absolute path and stores a key made of the content
hash and the exact set of codes that run on that file (the effective configuration);
the whole file is also stamped with a fingerprint of the gradlint version and its
installed sources, so an upgraded or edited gradlint starts from an empty cache.
The cache is never consulted when fixing. Failing to read it means a cold run; failing
to write it means a warning, never a failed run.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import gradlint
from gradlint.analysis.stamps import (
    restamped,
    roots_unchanged,
    stat_version,
    unchanged_by_stat,
)
from gradlint.diagnostics import (
    Applicability,
    CellLocation,
    Confidence,
    Diagnostic,
    Edit,
    FileError,
    Fix,
    Group,
    Impact,
    Position,
    Related,
    Severity,
)
from gradlint.fileio import SourceReadError, read_regular

CACHE_DIR_NAME = ".gradlint_cache"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by gradlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
# Entries for files not linted for this long are dropped when the cache is written.
MAX_AGE_S = 30 * 24 * 3600
# A cache file larger than this is not read (a cold run, which rewrites it): about a
# hundred thousand files' results.
MAX_CACHE_BYTES = 256 * 1024 * 1024
# `seen` is refreshed only when older than this, so a warm run usually writes nothing.
SEEN_REFRESH_S = 24 * 3600
# 3: diagnostics carry related locations (with their notebook cell), a severity and a
#    confidence.
# 4: and their consequence group and impact.
FORMAT_VERSION = 4


def default_cache_dir(root: str) -> str:
    return os.path.join(root, CACHE_DIR_NAME)


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def entry_key(data_hash: str, codes: Iterable[str], options: str = "") -> str:
    """Content, selected codes, and the settings that change findings (severities,
    minimum confidence: Config.result_options)."""
    key = data_hash + ":" + ",".join(sorted(codes))
    return f"{key}|{options}" if options else key


_FINGERPRINT: str | None = None


def gradlint_fingerprint() -> str:
    """The version plus the size and times of every installed gradlint source file: a
    release or an edit to a rule invalidates the cache, so it never serves stale
    results from an older rule."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        package = Path(gradlint.__file__).parent
        digest = hashlib.blake2b(gradlint.__version__.encode(), digest_size=16)
        for directory, dirnames, filenames in os.walk(package):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(directory, name)
                try:
                    stat = os.stat(path)
                except OSError:
                    continue
                relative = os.path.relpath(path, package)
                digest.update(f"{relative}:{stat.st_size}:{stat_version(stat)};".encode())
        _FINGERPRINT = digest.hexdigest()
    return _FINGERPRINT


# ---------------------------------------------------------------------------
# (De)serialising results


def diagnostic_to_json(diagnostic: Diagnostic) -> dict:
    fix = None
    if diagnostic.fix is not None:
        fix = {
            "title": diagnostic.fix.title,
            "applicability": diagnostic.fix.applicability.value,
            "edits": [
                [e.start.line, e.start.column, e.end.line, e.end.column, e.content]
                for e in diagnostic.fix.edits
            ],
        }
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "message": diagnostic.message,
        "start": [diagnostic.start.line, diagnostic.start.column],
        "end": [diagnostic.end.line, diagnostic.end.column],
        "fix": fix,
        "noqa_line": diagnostic.noqa_line,
        "url": diagnostic.url,
        "severity": diagnostic.severity.value,
        "confidence": diagnostic.confidence.value,
        "group": diagnostic.group.value if diagnostic.group else None,
        "impact": diagnostic.impact.value if diagnostic.impact else None,
        # A place in the finding's own file is stored without its path, which is the
        # display path of whoever reads the entry back.
        "related": [
            [
                r.message,
                None if r.path == diagnostic.path else r.path,
                r.start.line,
                r.start.column,
                r.end.line,
                r.end.column,
                _cell_to_json(r.cell),
            ]
            for r in diagnostic.related
        ],
        "extra": diagnostic.extra,
        "cell": _cell_to_json(diagnostic.cell),
    }


def _cell_to_json(cell: CellLocation | None) -> list | None:
    if cell is None:
        return None
    return [
        cell.number,
        [cell.file_start.line, cell.file_start.column],
        [cell.file_end.line, cell.file_end.column],
        list(cell.edit_cells),
    ]


def _cell_from_json(data) -> CellLocation | None:
    if data is None:
        return None
    number, start, end, edit_cells = data
    return CellLocation(number, Position(*start), Position(*end), tuple(edit_cells))


def _valid_cell(data) -> bool:
    return data is None or (
        isinstance(data, list)
        and len(data) == 4
        and _is_int(data[0])
        and _is_point(data[1])
        and _is_point(data[2])
        and isinstance(data[3], list)
        and all(map(_is_int, data[3]))
    )


def diagnostic_from_json(data: dict, path: str) -> Diagnostic:
    fix = None
    if data["fix"] is not None:
        fix = Fix(
            title=data["fix"]["title"],
            edits=tuple(
                Edit(Position(sl, sc), Position(el, ec), content)
                for sl, sc, el, ec, content in data["fix"]["edits"]
            ),
            applicability=Applicability(data["fix"]["applicability"]),
        )
    return Diagnostic(
        code=data["code"],
        name=data["name"],
        message=data["message"],
        path=path,
        start=Position(*data["start"]),
        end=Position(*data["end"]),
        fix=fix,
        noqa_line=data["noqa_line"],
        url=data["url"],
        severity=Severity(data["severity"]),
        confidence=Confidence(data["confidence"]),
        group=Group(data["group"]) if data.get("group") else None,
        impact=Impact(data["impact"]) if data.get("impact") else None,
        related=tuple(
            Related(
                message, other or path, Position(sl, sc), Position(el, ec), _cell_from_json(cell)
            )
            for message, other, sl, sc, el, ec, cell in data["related"]
        ),
        extra=data["extra"],
        cell=_cell_from_json(data.get("cell")),
    )


def error_to_json(error: FileError) -> dict:
    data: dict = {"message": error.message, "line": error.line, "column": error.column}
    if error.cell:
        data["cell"] = [error.cell, error.file_line]
    return data


def error_from_json(data: dict, path: str) -> FileError:
    cell, file_line = data.get("cell") or (0, 0)
    return FileError(path, data["message"], data["line"], data["column"], cell, file_line)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_point(value) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(map(_is_int, value))


def _valid_fix(data) -> bool:
    if data is None:
        return True
    if not isinstance(data, dict) or not isinstance(data.get("title"), str):
        return False
    if data.get("applicability") not in {a.value for a in Applicability}:
        return False
    edits = data.get("edits")
    return isinstance(edits, list) and all(
        isinstance(edit, list)
        and len(edit) == 5
        and all(map(_is_int, edit[:4]))
        and isinstance(edit[4], str)
        for edit in edits
    )


def _valid_related(data) -> bool:
    return isinstance(data, list) and all(
        isinstance(item, list)
        and len(item) == 7
        and isinstance(item[0], str)
        and (item[1] is None or isinstance(item[1], str))
        and all(map(_is_int, item[2:6]))
        and _valid_cell(item[6])
        for item in data
    )


def _valid_diagnostic(data) -> bool:
    return (
        isinstance(data, dict)
        and all(isinstance(data.get(key), str) for key in ("code", "name", "message", "url"))
        and _is_point(data.get("start"))
        and _is_point(data.get("end"))
        and _is_int(data.get("noqa_line"))
        and isinstance(data.get("extra"), dict)
        and _valid_related(data.get("related"))
        and data.get("severity") in {s.value for s in Severity}
        and data.get("confidence") in {c.value for c in Confidence}
        and data.get("group") in {None, *(g.value for g in Group)}
        and data.get("impact") in {None, *(i.value for i in Impact)}
        and "fix" in data
        and _valid_fix(data["fix"])
        and _valid_cell(data.get("cell"))
    )


def _valid_error(data) -> bool:
    return data is None or (
        isinstance(data, dict)
        and isinstance(data.get("message"), str)
        and _is_int(data.get("line"))
        and _is_int(data.get("column"))
        and (
            data.get("cell") is None
            or (
                isinstance(data["cell"], list)
                and len(data["cell"]) == 2
                and all(map(_is_int, data["cell"]))
            )
        )
    )


def valid_entry(entry) -> bool:
    """[key, seen, diagnostics, error, dependencies] with every field of the type this
    module writes. Anything else (a foreign or buggy writer, a hand edit) is a miss,
    never a crash."""
    return (
        isinstance(entry, list)
        and len(entry) == 5
        and isinstance(entry[0], str)
        and _is_int(entry[1])
        and isinstance(entry[2], list)
        and all(_valid_diagnostic(item) for item in entry[2])
        and _valid_error(entry[3])
        and isinstance(entry[4], dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in entry[4].items())
    )


def _dependencies_unchanged(
    dependencies: dict[str, str], trees: dict[str, str], linted: str
) -> dict[str, str] | None:
    if not roots_unchanged(dependencies, linted):
        return None
    if unchanged_by_stat(dependencies, trees):
        return dependencies
    # Only now the summaries: reading and summarising needs more than a warm run loads.
    from gradlint.analysis.project import dependencies_unchanged

    now = restamped(dependencies, trees)
    return now if dependencies_unchanged(dependencies, trees) else None


def _dependencies_checked(
    dependencies: dict[str, str], trees: dict[str, str], linted: str
) -> dict[str, str] | None:
    """The dependencies' stamps as they are now when they are unchanged (the same dict
    when a stat of each told), else None; None too when checking them fails: they are
    files of the repository, whatever it holds. `trees`: the searched roots' stamps,
    taken once for all of a run's lookups."""
    try:
        return _dependencies_unchanged(dependencies, trees, linted)
    except (OSError, ValueError, RecursionError, MemoryError):
        return None


@dataclass
class CachedResult:
    diagnostics: list[Diagnostic]
    error: FileError | None


# ---------------------------------------------------------------------------


class Cache:
    """The results of one project root. Lives in the main process only: workers never
    see it, so their memory does not grow with the corpus."""

    def __init__(self, directory: str, root: str, warn: Callable[[str], None]) -> None:
        self.directory = directory
        self.root = root
        self._warn = warn
        self._warned = False
        root_id = hashlib.blake2b(root.encode(), digest_size=8).hexdigest()
        self.path = os.path.join(directory, gradlint.__version__, f"{root_id}.json")
        self.entries: dict[str, list] = {}
        self.dirty = False
        self.now = int(time.time())
        self.hits = 0
        self.misses = 0
        # root -> its files' stamp, for the lookups (made before anything is linted)
        self._trees: dict[str, str] = {}
        problem = self._location_problem()
        self.usable = problem is None
        if problem is not None:
            self.warn_once(f"not using the cache: {problem}")
            return
        self._load()

    def _location_problem(self) -> str | None:
        """Why the cache must not be read or written where it is, or None. A link
        committed in its place (the cache folder, the version folder) would take the
        cache, and the files created next to it, wherever the link points."""
        version_folder = os.path.dirname(self.path)
        for folder in (self.directory, version_folder):
            if os.path.islink(folder):
                return f"{folder} is a symbolic link"
        real = os.path.realpath(self.directory)
        root = os.path.realpath(self.root)
        if _is_within(os.path.abspath(self.directory), self.root) and not _is_within(real, root):
            return f"{self.directory} resolves to {real}, outside the project"
        if os.path.realpath(version_folder) != os.path.join(real, os.path.basename(version_folder)):
            return f"{version_folder} resolves outside {self.directory}"
        return None

    def _load(self) -> None:
        try:
            # The repository may hold anything here (a FIFO, a link to /dev/zero).
            data = read_regular(self.path, MAX_CACHE_BYTES)
        except SourceReadError:
            return  # none, unreadable or not a file: start cold, and replace it when saving
        try:
            document = json.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return  # corrupt: start cold, and overwrite it when saving
        if (
            not isinstance(document, dict)
            or document.get("format") != FORMAT_VERSION
            or document.get("fingerprint") != gradlint_fingerprint()
            or not isinstance(document.get("entries"), dict)
        ):
            self.dirty = True  # replace a stale cache even if nothing new is linted
            return
        self.entries = document["entries"]

    def lookup(self, abs_path: str, key: str, display_path: str) -> CachedResult | None:
        entry = self.entries.get(abs_path)
        if entry is not None and not valid_entry(entry):
            # Written by a buggy or foreign writer: drop it, so that the file is linted
            # again and its entry rewritten.
            del self.entries[abs_path]
            self.dirty = True
            entry = None
        if entry is None or entry[0] != key:
            self.misses += 1
            return None
        if entry[4]:
            stamps = _dependencies_checked(entry[4], self._trees, abs_path)
            if stamps is None:
                # A helper this file imports now does something else (or cannot be
                # read): lint it again. The entry goes, so that a check that fails is
                # not run again by every later run should this one end before the entry
                # is rewritten.
                del self.entries[abs_path]
                self.dirty = True
                self.misses += 1
                return None
            if stamps is not entry[4]:
                entry[4] = stamps  # unchanged on a closer look: a stat answers next time
                self.dirty = True
        try:
            diagnostics = [diagnostic_from_json(item, display_path) for item in entry[2]]
            error = error_from_json(entry[3], display_path) if entry[3] else None
        except (KeyError, TypeError, ValueError):
            del self.entries[abs_path]
            self.dirty = True
            self.misses += 1
            return None
        if self.now - entry[1] > SEEN_REFRESH_S:
            entry[1] = self.now
            self.dirty = True
        self.hits += 1
        return CachedResult(diagnostics, error)

    def store(
        self,
        abs_path: str,
        key: str,
        diagnostics: list[Diagnostic],
        error: FileError | None,
        dependencies: dict[str, str] | None = None,
    ) -> None:
        try:
            payload = [diagnostic_to_json(d) for d in diagnostics]
            # Rules may put anything in `extra`; an entry that JSON cannot hold is not
            # cached rather than failing the run.
            json.dumps(payload)
        except (TypeError, ValueError):
            return
        self.entries[abs_path] = [
            key,
            self.now,
            payload,
            error_to_json(error) if error else None,
            dict(dependencies or {}),
        ]
        self.dirty = True

    def warn_once(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            self._warn(message)

    def save(self) -> None:
        if not self.dirty or not self.usable:
            return
        entries = {
            path: entry
            for path, entry in self.entries.items()
            if valid_entry(entry) and self.now - entry[1] <= MAX_AGE_S
        }
        document = {
            "format": FORMAT_VERSION,
            "fingerprint": gradlint_fingerprint(),
            "entries": entries,
        }
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            # Again now that the folders exist: nothing is written through a link.
            problem = self._location_problem()
            if problem is not None:
                self.usable = False
                self.warn_once(f"not using the cache: {problem}")
                return
            _prepare_directory(self.directory)
            # Write a temporary file and rename it: a concurrent run or a crash never
            # leaves a half-written cache behind.
            import tempfile  # here: a run served from the cache writes nothing

            fd, temporary = tempfile.mkstemp(
                dir=os.path.dirname(self.path), prefix=".tmp-", suffix=".json"
            )
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(document, handle, separators=(",", ":"))
                os.replace(temporary, self.path)
            except BaseException:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass
                raise
        except OSError as exc:
            self.warn_once(
                f"cannot write the cache in {self.directory}: {exc.strerror or exc}; "
                "continuing without it (use --no-cache or --cache-dir to silence this)"
            )
            return
        self.dirty = False


def _prepare_directory(directory: str) -> None:
    """The tag and the `.gitignore`, each created only where nothing is (O_EXCL), and
    never through a link (O_NOFOLLOW): one committed as `CACHEDIR.TAG -> /etc/nologin`
    is left alone, not followed."""
    _create_once(os.path.join(directory, "CACHEDIR.TAG"), CACHEDIR_TAG)
    _create_once(os.path.join(directory, ".gitignore"), "# Automatically created by gradlint.\n*\n")


_CREATE_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def _create_once(path: str, text: str) -> None:
    try:
        fd = os.open(path, _CREATE_FLAGS, 0o644)
    except FileExistsError:
        return  # there already, or a link (even a dangling one): nothing is written
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def _is_within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(os.path.join(folder, ""))
