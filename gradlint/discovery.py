"""Which files a run lints: walk the given paths, honouring `exclude` /
`extend-exclude` and `.gitignore` files, and report paths that cannot be walked.

Explicitly named files are linted whatever their extension and even when excluded,
unless `force_exclude` is set (what pre-commit and editors want, since they pass every
changed file). Directories are walked recursively for `.py` and `.pyi` files.

Symbolic links to directories met while walking are not followed, as in ruff: a link
such as `vendored -> ../../elsewhere` would take the walk (and `--fix`) outside the
project. A directory named on the command line is walked even when it is a link.
Links to files are linted, but a file whose real path is outside every path named on
the command line is listed in `Discovery.outside`, and the CLI never writes it. A `.py`
link that cannot be resolved (dangling, or a loop) and a directory that cannot be read
are reported as errors: each gets one line and the walk goes on.

Only regular files and FIFOs named on the command line are read: a device such as
/dev/zero is one error line. Walking picks up the files `include` (+ `extend-include`)
matches: `.py`, `.pyi` and Jupyter notebooks (`.ipynb`) by default.

With a ConfigResolver (the CLI's default), each directory is walked with its closest
configuration file's exclusions, and each file is recorded with that configuration.

Every directory costs a constant number of system calls (the repository root that
anchors .gitignore files, and the closest configuration, are found once per directory
from its parent's), so deep trees are walked in linear time.
"""

from __future__ import annotations

import errno
import os
import re
import stat as stat_module
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gradlint.config import CONFIG_FILE_NAMES, Config, glob_regex, gradlint_table
from gradlint.diagnostics import FileError
from gradlint.fileio import SourceReadError, file_kind, not_a_file_message, read_regular

PYTHON_SUFFIXES = (".py", ".pyi")
NOTEBOOK_SUFFIX = ".ipynb"
# A .gitignore larger than this is not read (git's own are a few KiB).
MAX_IGNORE_FILE_SIZE = 1024 * 1024


# ---------------------------------------------------------------------------
# .gitignore


@dataclass(frozen=True)
class IgnorePattern:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


def _translate_segment(segment: str) -> str:
    """One path segment of a gitignore glob as a regex: `*` and `?` stay inside the
    segment, `[...]` is a class (`[!...]` negated), a backslash quotes the next char."""
    out: list[str] = []
    i, n = 0, len(segment)
    while i < n:
        char = segment[i]
        if char == "\\" and i + 1 < n:
            out.append(re.escape(segment[i + 1]))
            i += 2
            continue
        if char == "*":
            while i + 1 < n and segment[i + 1] == "*":
                i += 1  # `a**b` within a segment is an ordinary star
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = i + 1
            if end < n and segment[end] in "!^":
                end += 1
            if end < n and segment[end] == "]":
                end += 1
            while end < n and segment[end] != "]":
                end += 1
            if end >= n:
                out.append(re.escape(char))  # no closing bracket: a literal `[`
            else:
                body = segment[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                body = body.replace("\\", "\\\\")
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def compile_gitignore_line(line: str) -> IgnorePattern | None:
    """One .gitignore line (git's gitignore(5) rules), or None for blanks and comments."""
    line = line.rstrip("\n").rstrip("\r")
    # Trailing spaces are dropped unless quoted with a backslash.
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    if not line or line.startswith("#"):
        return None
    negated = False
    if line.startswith("!"):
        negated = True
        line = line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    # A slash at the start or in the middle anchors the pattern to the .gitignore's
    # directory; otherwise it matches at any depth.
    anchored = "/" in line
    line = line.lstrip("/")
    segments = line.split("/")
    if segments == ["**"]:
        body = ".*"
    else:
        parts: list[str] = []
        last = len(segments) - 1
        for index, segment in enumerate(segments):
            if segment == "**":
                if index == 0:
                    parts.append("(?:.*/)?")
                elif index == last:
                    parts.append("/.*")
                else:
                    parts.append("/(?:.*/)?")
                continue
            if index > 0 and segments[index - 1] != "**":
                parts.append("/")
            parts.append(_translate_segment(segment))
        body = "".join(parts)
    if not anchored:
        body = "(?:.*/)?" + body
    try:
        regex = re.compile(body + r"\Z", re.DOTALL)
    except re.error:
        return None  # git ignores patterns it cannot parse; so do we
    return IgnorePattern(regex, negated, dir_only)


@dataclass(frozen=True)
class IgnoreFile:
    """The patterns of one .gitignore, relative to `base` (an absolute directory)."""

    base: str
    patterns: tuple[IgnorePattern, ...]

    @classmethod
    def read(cls, path: str, base: str) -> IgnoreFile | None:
        try:
            # The repository's to choose: a link to /dev/zero or a FIFO is not read.
            data = read_regular(path, MAX_IGNORE_FILE_SIZE)
        except SourceReadError:
            return None
        lines = data.decode("utf-8", errors="replace").splitlines()
        patterns = tuple(p for p in map(compile_gitignore_line, lines) if p is not None)
        return cls(base, patterns) if patterns else None

    def match(self, abs_path: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a `!` pattern, None: no pattern matched.
        The last matching pattern decides, as in git."""
        prefix = self.base if self.base.endswith(os.sep) else self.base + os.sep
        if not abs_path.startswith(prefix):
            return None
        relative = abs_path[len(prefix) :].replace(os.sep, "/")
        for pattern in reversed(self.patterns):
            if pattern.dir_only and not is_dir:
                continue
            if pattern.regex.match(relative):
                return not pattern.negated
        return None


def is_gitignored(abs_path: str, is_dir: bool, chain: Iterable[IgnoreFile]) -> bool:
    """Deeper .gitignore files override shallower ones, as in git."""
    for ignore_file in reversed(list(chain)):
        verdict = ignore_file.match(abs_path, is_dir)
        if verdict is not None:
            return verdict
    return False


def find_repo_root(directory: str) -> str | None:
    current = directory
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


# ---------------------------------------------------------------------------
# exclude / extend-exclude


# What makes a glob more than its literal text (fnmatch's wildcards).
_WILDCARDS = frozenset("*?[")


class ExcludeMatcher:
    """ruff's exclude semantics: a glob matches the file or directory name, or the path
    anchored at the project root (where `*` may cross `/`, and `**/` may stand for no
    folder: `**/tests/**` excludes the top-level `tests/` too)."""

    def __init__(self, patterns: Iterable[str], root: str) -> None:
        # A pattern without wildcards (all of the default excludes) matches by equality:
        # compiling the defaults as one regular expression cost more than the rest of a
        # run whose files all come from the cache.
        self._names: set[str] = set()
        self._paths: set[str] = set()
        name_parts: list[str] = []
        path_parts: list[str] = []
        for pattern in patterns:
            pattern = pattern.strip()
            if not pattern:
                continue
            if pattern.startswith("./"):
                pattern = pattern[2:]
            pattern = pattern.rstrip("/") or pattern
            anchored = os.path.normpath(os.path.join(root, os.path.expanduser(pattern)))
            if _WILDCARDS.isdisjoint(pattern):
                self._names.add(pattern)
                self._paths.add(anchored)
                continue
            name_parts.append(glob_regex(pattern).pattern)
            path_parts.append(glob_regex(anchored).pattern)
        self._name = re.compile("|".join(name_parts)) if name_parts else None
        self._path = re.compile("|".join(path_parts)) if path_parts else None
        self._empty = not self._names and self._name is None

    def __call__(self, abs_path: str, name: str | None = None) -> bool:
        if self._empty:
            return False
        name = name if name is not None else os.path.basename(abs_path)
        if name in self._names or abs_path in self._paths:
            return True
        if self._name is None:
            return False
        return bool(self._name.match(name) or (self._path and self._path.match(abs_path)))


# ---------------------------------------------------------------------------
# The walk


@dataclass
class Discovery:
    # (display path, absolute path) of every file to lint, in a stable order
    files: list[tuple[str, str]] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # absolute path -> real path (symbolic links resolved), for every file
    real_paths: dict[str, str] = field(default_factory=dict)
    # absolute paths of files that are links to a file outside every named path and
    # were not named themselves: they are linted, never written
    outside: set[str] = field(default_factory=set)
    # absolute path -> the configuration closest to it, where it is not the run's
    configs: dict[str, Config] = field(default_factory=dict)


def _display(base_display: str, *parts: str) -> str:
    joined = os.path.join(base_display, *parts) if parts else base_display
    if joined.startswith("." + os.sep) and len(joined) > 2:
        joined = joined[2:]
    return joined


def _reason(exc: OSError, link: bool = False) -> str:
    if exc.errno == errno.ELOOP:
        return "symbolic link loop (too many levels of symbolic links)"
    if exc.errno == errno.ENOENT:
        return "dangling symbolic link" if link else "no such file or directory"
    return (exc.strerror or str(exc)).lower()


def _config_file_in(directory: str) -> str | None:
    """The configuration file of this directory itself, as config.find_config_file
    picks one (a pyproject.toml counts only with a [tool.gradlint] table)."""
    for name in CONFIG_FILE_NAMES:
        candidate = os.path.join(directory, name)
        if not os.path.isfile(candidate):
            continue
        if name != "pyproject.toml" or gradlint_table(Path(candidate)) is not None:
            return os.path.realpath(candidate)
    return None


class ConfigResolver:
    """The closest configuration of every directory, as ruff resolves it: a file is
    linted (and a directory walked) with the configuration file nearest above it, so
    a nested pyproject.toml governs its own subtree whatever paths the run was given.

    `load(source)` builds the Config of a configuration file (None: no file), with the
    command line laid over it. Directories and files are looked up once each, and
    every directory costs a few stats, however deep."""

    def __init__(self, load: Callable[[str | None], Config]) -> None:
        self._load = load
        self._sources: dict[str, str | None] = {}
        self._configs: dict[str | None, Config] = {}

    def seed(self, source: str | os.PathLike | None, config: Config) -> None:
        """Use `config` for `source`: the configuration already loaded for the run."""
        self._configs[os.path.realpath(source) if source is not None else None] = config

    def source_for(self, directory: str) -> str | None:
        climbed: list[str] = []
        current = directory
        while current not in self._sources:
            climbed.append(current)
            found = _config_file_in(current)
            parent = os.path.dirname(current)
            if found is not None or parent == current:
                self._sources[current] = found
                break
            current = parent
        source = self._sources[current]
        for below in climbed:
            self._sources[below] = source
        return source

    def config_for(self, directory: str) -> Config:
        source = self.source_for(directory)
        config = self._configs.get(source)
        if config is None:
            config = self._configs[source] = self._load(source)
        return config


class Walker:
    def __init__(self, config: Config, resolver: ConfigResolver | None = None) -> None:
        self.config = config
        self.resolver = resolver
        self.root = config.root_path()
        self.excluded = ExcludeMatcher(config.all_excludes, self.root)
        self._matchers: dict[int, tuple[Config, ExcludeMatcher]] = {
            id(config): (config, self.excluded)
        }
        self._includes: dict[int, tuple[Config, ExcludeMatcher]] = {}
        self._chains: dict[str, tuple[IgnoreFile, ...]] = {}
        self._repo_roots: dict[str, str | None] = {}
        self.result = Discovery()
        self._seen_files: set[str] = set()
        self._seen_dirs: set[tuple[int, int]] = set()
        self.roots: list[str] = []  # real paths of the directories named
        self.named_files: set[str] = set()  # real paths of the files named
        self.linked_files: list[tuple[str, str]] = []  # (path, real path) of file links

    # .gitignore chain of a directory: every .gitignore from the repository root (or,
    # outside a repository, from the project root when inside it) down to the directory.
    def chain_for(self, directory: str) -> tuple[IgnoreFile, ...]:
        cached = self._chains.get(directory)
        if cached is not None:
            return cached
        top = self.repo_root(directory)
        if top is None:
            in_root = directory == self.root or directory.startswith(self.root + os.sep)
            top = self.root if in_root else directory
        if directory == top:
            chain: tuple[IgnoreFile, ...] = ()
            info_exclude = os.path.join(directory, ".git", "info", "exclude")
            extra = IgnoreFile.read(info_exclude, directory)
            if extra is not None:
                chain = (extra,)
        else:
            chain = self.chain_for(os.path.dirname(directory))
        own = IgnoreFile.read(os.path.join(directory, ".gitignore"), directory)
        if own is not None:
            chain = (*chain, own)
        self._chains[directory] = chain
        return chain

    def repo_root(self, directory: str) -> str | None:
        """find_repo_root, remembered for every directory on the way up: a directory
        costs one stat of its `.git` however deep it is."""
        climbed: list[str] = []
        current = directory
        while current not in self._repo_roots:
            climbed.append(current)
            if os.path.exists(os.path.join(current, ".git")):
                self._repo_roots[current] = current
                break
            parent = os.path.dirname(current)
            if parent == current:
                self._repo_roots[current] = None
                break
            current = parent
        found = self._repo_roots[current]
        for below in climbed:
            self._repo_roots[below] = found
        return found

    def config_for(self, directory: str) -> Config:
        """The configuration that governs `directory` (the run's, without a resolver)."""
        return self.resolver.config_for(directory) if self.resolver else self.config

    def matcher_for(self, config: Config) -> ExcludeMatcher:
        known = self._matchers.get(id(config))
        if known is None:
            known = (config, ExcludeMatcher(config.all_excludes, config.root_path()))
            self._matchers[id(config)] = known
        return known[1]

    def includer_for(self, config: Config) -> ExcludeMatcher:
        """Which files a walk lints (`include`), matched as `exclude` globs are."""
        known = self._includes.get(id(config))
        if known is None:
            known = (config, ExcludeMatcher(config.all_includes, config.root_path()))
            self._includes[id(config)] = known
        return known[1]

    def is_force_excluded(self, abs_path: str, is_dir: bool) -> bool:
        """For an explicitly named path under force-exclude: is it, or a directory above
        it inside the project, excluded?"""
        config = self.config_for(os.path.dirname(abs_path))
        excluded = self.matcher_for(config)
        inside = config.root_path().rstrip(os.sep) + os.sep
        current, current_is_dir = abs_path, is_dir
        while True:
            parent = os.path.dirname(current)
            if excluded(current):
                return True
            if config.respect_gitignore and parent != current:
                if is_gitignored(current, current_is_dir, self.chain_for(parent)):
                    return True
            # Climb only while still below the project root: the root's own name (or a
            # folder above it) being called `dist` or `venv` must not exclude everything.
            if parent == current or not parent.startswith(inside):
                return False
            current, current_is_dir = parent, True

    def add_file(
        self, display: str, abs_path: str, real_path: str, config: Config | None = None
    ) -> None:
        if abs_path not in self._seen_files:
            self._seen_files.add(abs_path)
            self.result.files.append((display, abs_path))
            self.result.real_paths[abs_path] = real_path
            if config is not None and config is not self.config:
                self.result.configs[abs_path] = config

    def add_path(self, given: str) -> None:
        abs_path = os.path.normpath(os.path.abspath(given))
        display = given if given in (".", "./") else given.rstrip("/\\") or given
        try:
            stat = os.stat(abs_path)
        except OSError as exc:
            link = os.path.islink(abs_path)
            self.result.errors.append(FileError(display, _reason(exc, link=link)))
            return
        is_dir = stat_module.S_ISDIR(stat.st_mode)
        # A named path is judged, and a named file linted, by its folder's configuration.
        config = self.config_for(os.path.dirname(abs_path))
        if config.force_exclude and self.is_force_excluded(abs_path, is_dir):
            return
        if is_dir:
            real_root = os.path.realpath(abs_path)
            self.roots.append(real_root)
            self.walk(display, abs_path, real_root, (stat.st_dev, stat.st_ino))
            return
        kind = file_kind(stat.st_mode)
        if kind is not None:
            # /dev/zero and friends: reading never ends (or has effects of its own).
            self.result.errors.append(FileError(_display(display), not_a_file_message(kind)))
            return
        real_path = os.path.realpath(abs_path)
        self.named_files.add(real_path)
        self.add_file(_display(display), abs_path, real_path, config)

    def walk(
        self, display_root: str, abs_root: str, real_root: str, identity: tuple[int, int]
    ) -> None:
        if identity in self._seen_dirs:
            return
        self._seen_dirs.add(identity)
        # Depth-first with an explicit stack (deep trees must not hit the recursion
        # limit). Links to directories are not followed, so the real path of a directory
        # is its parent's plus its name: no system call needed to know it.
        stack: list[tuple[str, str, str]] = [(display_root, abs_root, real_root)]
        while stack:
            display_dir, abs_dir, real_dir = stack.pop()
            try:
                with os.scandir(abs_dir) as iterator:
                    entries = sorted(iterator, key=lambda entry: entry.name)
            except OSError as exc:
                self.result.errors.append(
                    FileError(_display(display_dir), f"cannot read directory: {_reason(exc)}")
                )
                continue
            config = self.config_for(abs_dir)
            excluded = self.matcher_for(config)
            included = self.includer_for(config)
            chain = self.chain_for(abs_dir) if config.respect_gitignore else ()
            subdirs: list[tuple[str, str, str]] = []
            for entry in entries:
                name = entry.name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)  # a link to one: no
                except OSError:
                    is_dir = False
                abs_path = os.path.join(abs_dir, name)
                if not is_dir and not included(abs_path, name):
                    continue
                display = _display(display_dir, name)
                if excluded(abs_path, name):
                    continue
                if chain and is_gitignored(abs_path, is_dir, chain):
                    continue
                if is_dir:
                    if os.path.exists(os.path.join(abs_path, "pyvenv.cfg")):
                        continue  # a virtualenv, whatever it is called
                    try:
                        stat = entry.stat(follow_symlinks=False)
                    except OSError as exc:
                        self.result.errors.append(FileError(display, _reason(exc)))
                        continue
                    identity = (stat.st_dev, stat.st_ino)
                    if identity in self._seen_dirs:
                        continue  # walked already (named twice, or a bind mount loop)
                    self._seen_dirs.add(identity)
                    subdirs.append((display, abs_path, os.path.join(real_dir, name)))
                    continue
                real_path = os.path.join(real_dir, name)
                if entry.is_symlink():
                    try:
                        target = os.stat(abs_path)
                    except OSError as exc:
                        self.result.errors.append(FileError(display, _reason(exc, link=True)))
                        continue
                    if not stat_module.S_ISREG(target.st_mode):
                        continue  # a link to a directory (not followed), fifo, device
                    real_path = os.path.realpath(abs_path)
                    self.linked_files.append((abs_path, real_path))
                else:
                    try:
                        if not entry.is_file(follow_symlinks=False):
                            continue  # a socket or fifo named *.py
                    except OSError:
                        continue
                self.add_file(display, abs_path, real_path, config)
            # Reversed so that the stack pops them in name order.
            stack.extend(reversed(subdirs))

    def finish(self) -> Discovery:
        """Mark the links whose target is outside every named path (see Discovery)."""
        roots = [root.rstrip(os.sep) + os.sep for root in self.roots]
        for abs_path, real_path in self.linked_files:
            if real_path in self.named_files:
                continue
            if not any(real_path.startswith(root) for root in roots):
                self.result.outside.add(abs_path)
        return self.result


def discover(
    paths: Iterable[str], config: Config, resolver: ConfigResolver | None = None
) -> Discovery:
    """Every file to lint under `paths`, with the problems met on the way. With a
    resolver, each directory is walked (and each file linted) with its closest
    configuration; without one, `config` governs everything."""
    walker = Walker(config, resolver)
    for given in paths:
        walker.add_path(given)
    return walker.finish()
