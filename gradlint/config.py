"""Which rules run on which file, and which files are linted at all.

`Config` is what the engine and file discovery need. `load_settings` (CLI side) fills it
from `[tool.gradlint]` in the closest pyproject.toml (or a `gradlint.toml` /
`.gradlint.toml`) and the command line, the way ruff layers its configuration: a
`select` in a later layer (the command line) replaces everything before it, while an
`ignore` or `extend-select` on its own adjusts the selection the earlier layer made.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gradlint import codes
from gradlint.fileio import DEFAULT_MAX_FILE_SIZE, SourceReadError, read_regular

try:  # pragma: no cover - which branch runs depends on the interpreter
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

# What ruff skips by default, plus gradlint's own cache and bytecode folders. Setting
# `exclude` replaces this list; `extend-exclude` adds to it.
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".gradlint_cache",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

# The files a walk picks up, as ruff's `include`: globs matched against the file name or
# the path anchored at the project root. Notebooks are in by default, as in ruff 0.6+;
# `include = ["*.py", "*.pyi"]` (or `--extend-exclude '*.ipynb'`) leaves them out.
DEFAULT_INCLUDE: tuple[str, ...] = ("*.py", "*.pyi", "*.ipynb")

DEFAULT_SELECT: tuple[str, ...] = ("GL",)

# Prefixes that name gradlint's code family itself; valid even before a rule with that
# prefix exists, so `select = ["GL"]` never fails.
FAMILY_PREFIXES = ("G", "GL")


@dataclass(frozen=True)
class Config:
    # Code prefixes, as ruff and flake8 take them: "GL" selects every rule, "GL00" a family.
    select: tuple[str, ...] = DEFAULT_SELECT
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    # glob pattern -> code prefixes ignored in files that match it ("!glob": files that don't)
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    # The directory relative globs (exclude, per-file-ignores) are anchored at: the
    # directory of the configuration file, or the working directory. "" = the working
    # directory at the time of matching.
    root: str = ""
    respect_gitignore: bool = True
    force_exclude: bool = False
    include: tuple[str, ...] = DEFAULT_INCLUDE
    extend_include: tuple[str, ...] = ()
    # code prefix or consequence group -> "error" / "warning" / "hint", overriding the
    # defaults that follow the group and impact (most specific selector wins, as for
    # select).
    severity: dict[str, str] = field(default_factory=dict)
    # "high" drops findings that rest on an assumption the analysis could not check.
    min_confidence: str = "low"
    # Drops findings whose code runs less often ("test" keeps everything, "per-batch"
    # only what runs on every batch).
    min_impact: str = "test"
    # Run preview rules that a prefix selects (`GL`); without it a preview rule runs only
    # when selected by its exact code, as in ruff.
    preview: bool = False

    def severity_for(self, code: str, default: str, group: str | None = None) -> str:
        """The configured level of a finding of `code` in `group`, else `default`."""
        best: float = -1
        chosen = default
        for prefix, level in self.severity.items():
            length = _longest_prefix(code, (prefix,), group)
            if length > best:
                best, chosen = length, level
        return chosen

    def result_options(self) -> str:
        """What, besides the selected codes, changes a file's findings: part of its
        cache key."""
        levels = ",".join(f"{k}={v}" for k, v in sorted(self.severity.items()))
        options = f"severity:{levels};confidence:{self.min_confidence};impact:{self.min_impact}"
        if self.selects_groups:
            options += ";groups:" + ",".join(sorted(f"{c}:{g}" for c, g in self._pairs()))
        return options

    @property
    def selects_groups(self) -> bool:
        """Does a selector name a consequence group? Then findings are kept or dropped
        by their group too, not only by their code."""
        made = self.__dict__.get("_selects_groups")
        if made is None:
            everything = [*self.select, *self.extend_select, *self.ignore]
            for prefixes in self.per_file_ignores.values():
                everything.extend(prefixes)
            made = any(_is_group_selector(s) for s in everything)
            self.__dict__["_selects_groups"] = made
        return made

    def selected_codes(
        self, all_codes: Iterable[str], preview_codes: Iterable[str] = ()
    ) -> frozenset[str]:
        """The codes `select`/`extend-select`/`ignore` enable, before per-file ignores: a
        code is enabled when one of its groups is (see `selected_pairs`)."""
        return frozenset(code for code, _ in self.selected_pairs(all_codes, preview_codes))

    def selected_pairs(
        self, all_codes: Iterable[str], preview_codes: Iterable[str] = ()
    ) -> frozenset[tuple[str, str | None]]:
        """The (code, consequence group) pairs `select`/`extend-select`/`ignore` enable.

        Within one layer the most specific selector wins and an ignore beats a select of
        the same length, as in ruff: `select = ["GL001"], ignore = ["GL"]` keeps GL001.
        A group name (`crash`, `waste`) is more specific than any prefix and less than a
        full code: `select = ["GL"], ignore = ["waste"]` drops the waste findings,
        `select = ["GL012"], ignore = ["waste"]` keeps GL012's.
        A code in `preview_codes` needs `preview`, or a select of its exact code.
        """
        selected = tuple(self.select) + tuple(self.extend_select)
        preview = frozenset(preview_codes)
        explicit_only = codes.explicit_only_codes()
        chosen: set[tuple[str, str | None]] = set()
        for code in all_codes:
            for group in _groups(code):
                sel = _longest_prefix(code, selected, group)
                if sel < 0 or (code in explicit_only and sel < len(code)):
                    continue
                if code in preview and not self.preview and sel < len(code):
                    continue
                if _longest_prefix(code, self.ignore, group) >= sel:
                    continue
                chosen.add((code, group))
        return frozenset(chosen)

    def _pairs(self) -> frozenset[tuple[str, str | None]]:
        registered = codes.REGISTERED
        made = self.__dict__.get("_registered_pairs")
        if made is None or made[0] is not registered:
            made = (registered, self.selected_pairs(codes.all_codes(), codes.preview_codes()))
            self.__dict__["_registered_pairs"] = made
        return made[1]

    def enabled_codes(self, path: str) -> frozenset[str]:
        """The registered rules' codes (the meta rules' too) that run on `path`."""
        # Asked for every file of a run: the selection is made once per configuration
        # (and per registry, which tests replace), the per-file ignores each time.
        registered = codes.REGISTERED
        made = self.__dict__.get("_registered_selection")
        if made is None or made[0] is not registered:
            made = (registered, frozenset(code for code, _ in self._pairs()))
            self.__dict__["_registered_selection"] = made
        return self._after_per_file_ignores(path, made[1])

    def keeps(self, code: str, group: str | None, path: str) -> bool:
        """Is a finding of `code` in `group` selected on `path`? Asked of each finding
        only when a selector names a group (its code alone decided that it ran)."""
        if not self.selects_groups:
            return True
        if (code, group) not in self._pairs():
            return False
        return _longest_prefix(code, self._ignored_on(path), group) < 0

    def codes_for(
        self, path: str, all_codes: list[str], preview_codes: Iterable[str] = ()
    ) -> frozenset[str]:
        """The codes that run on `path`.

        Per-file ignores apply after the selection and regardless of specificity, as in
        ruff: `select = ["GL001"]` with `per-file-ignores = {"tests/*" = ["GL"]}` runs
        nothing in tests.
        """
        return self._after_per_file_ignores(path, self.selected_codes(all_codes, preview_codes))

    def _ignored_on(self, path: str) -> list[str]:
        ignored: list[str] = []
        for pattern, prefixes in self.per_file_ignores.items():
            negated = pattern.startswith("!")
            if _path_matches(path, pattern[1:] if negated else pattern, self.root) != negated:
                ignored.extend(prefixes)
        return ignored

    def _after_per_file_ignores(self, path: str, chosen: frozenset[str]) -> frozenset[str]:
        if not self.per_file_ignores or not chosen:
            return chosen
        ignored = self._ignored_on(path)
        if not ignored:
            return chosen
        # A code stays while one of its groups is not ignored here (`keeps` then drops
        # the findings of the ignored ones).
        return frozenset(
            code
            for code in chosen
            if any(_longest_prefix(code, ignored, group) < 0 for group in _groups(code))
        )

    @property
    def all_excludes(self) -> tuple[str, ...]:
        return tuple(self.exclude) + tuple(self.extend_exclude)

    @property
    def all_includes(self) -> tuple[str, ...]:
        return tuple(self.include) + tuple(self.extend_include)

    def root_path(self) -> str:
        return os.path.abspath(self.root or os.getcwd())


# How specific a consequence group's name is, against code prefixes of that length: more
# than any prefix (`GL00`), less than a full code (`GL001`).
GROUP_SPECIFICITY = 4.5


def _groups(code: str) -> tuple[str | None, ...]:
    """The groups a code's findings can fall in; (None,) for a meta rule's."""
    return tuple(g.value for g in codes.groups_of(code)) or (None,)


def _is_group_selector(selector: str) -> bool:
    return selector.strip().lower() in codes.GROUP_NAMES or ":" in selector


def _longest_prefix(code: str, prefixes: Iterable[str], group: str | None = None) -> float:
    """How specifically `prefixes` name `code` (and, for a finding, its `group`): the
    length of the longest matching prefix, GROUP_SPECIFICITY for its group's name,
    one more than a full code for a `CODE:group` pair; -1 when none matches."""
    best: float = -1
    for prefix in prefixes:
        prefix = prefix.strip()
        lowered = prefix.lower()
        if lowered in codes.GROUP_NAMES:
            if group is not None and lowered == group:
                best = max(best, GROUP_SPECIFICITY)
            continue
        if ":" in prefix:
            # `GL006:leak`: one group of one rule, as layered_selection writes it
            pair_code, _, pair_group = prefix.partition(":")
            if pair_code.upper() == code and group is not None and pair_group.lower() == group:
                best = max(best, len(code) + 1)
            continue
        prefix = prefix.upper()
        if prefix == "ALL":
            prefix = ""
        if code.startswith(prefix):
            best = max(best, len(prefix))
    return best


def cache_dir_problem(directory: str, root: str) -> str | None:
    """Why `directory` cannot hold the cache of the project at `root`, or None. The
    cache folder gets a `.gitignore` of `*`: at the root or above it, git would stop
    showing the project's new files."""
    here = os.path.realpath(directory)
    project = os.path.realpath(root)
    if here == project or project.startswith(os.path.join(here, "")):
        return f"is the project root ({root}) or a folder above it; name a folder of its own"
    return None


@functools.lru_cache(maxsize=1024)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as fnmatch reads it (`*` may cross `/`), except that `**/` at the start or
    after a `/` also stands for no folder at all, as in gitignore and ruff: `**/tests/**`
    matches `tests/x.py`, and `a/**/b.py` matches `a/b.py`."""
    pieces = re.split(r"(?:(?<=/)|^)\*\*/", pattern)
    # fnmatch.translate gives `(?s:BODY)\Z`; the pieces are joined inside one group.
    bodies = [fnmatch.translate(piece)[4:-3] for piece in pieces]
    return re.compile("(?s:" + "(?:.*/)?".join(bodies) + ")\\Z")


def _path_matches(path: str, pattern: str, root: str = "") -> bool:
    """Match a per-file-ignores glob the way ruff does: against the path relative to the
    project root, the path as given, and the file name. `*` may cross `/`."""
    norm = path.replace("\\", "/")
    pattern = pattern.replace("\\", "/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    candidates = [norm, norm.rsplit("/", 1)[-1]]
    if path not in ("", "-"):
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root or os.getcwd()))
        candidates.append(relative.replace("\\", "/"))
    if os.path.isabs(pattern):
        return glob_regex(pattern).match(os.path.abspath(path).replace("\\", "/")) is not None
    anywhere = glob_regex("*/" + pattern)
    matcher = glob_regex(pattern)
    return any(
        matcher.match(candidate) is not None or anywhere.match(candidate) is not None
        for candidate in candidates
    )


# ---------------------------------------------------------------------------
# Loading


class ConfigError(Exception):
    """A configuration file or command-line value gradlint cannot use (exit status 2)."""


CONFIG_FILE_NAMES = (".gradlint.toml", "gradlint.toml", "pyproject.toml")
KNOWN_KEYS = (
    "select",
    "extend-select",
    "ignore",
    "per-file-ignores",
    "exclude",
    "extend-exclude",
    "include",
    "extend-include",
    "respect-gitignore",
    "force-exclude",
    "output-format",
    "cache-dir",
    "severity",
    "min-confidence",
    "min-impact",
    "fail-on",
    "preview",
)
SEVERITIES = ("error", "warning", "hint")
CONFIDENCES = ("low", "high")
IMPACTS = ("test", "once", "per-epoch", "per-batch")
# The level at or above which a finding makes the run fail (exit status 1).
DEFAULT_FAIL_ON = "warning"
SELECTOR_KEYS = ("select", "extend-select", "ignore")
_SELECTOR_RE = re.compile(r"^[A-Za-z]+[0-9]*$")


@dataclass(frozen=True)
class FileSettings:
    """What one configuration file says, validated but not yet layered."""

    source: Path | None = None
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    include: tuple[str, ...] | None = None
    extend_include: tuple[str, ...] = ()
    respect_gitignore: bool | None = None
    force_exclude: bool | None = None
    output_format: str | None = None
    cache_dir: str | None = None
    severity: dict[str, str] = field(default_factory=dict)
    min_confidence: str | None = None
    min_impact: str | None = None
    fail_on: str | None = None
    preview: bool | None = None


@dataclass(frozen=True)
class Overrides:
    """The command line's say. None = not given on the command line."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] | None = None
    respect_gitignore: bool | None = None
    force_exclude: bool | None = None
    include: tuple[str, ...] | None = None
    extend_include: tuple[str, ...] | None = None
    min_confidence: str | None = None
    min_impact: str | None = None
    fail_on: str | None = None
    preview: bool | None = None


@dataclass(frozen=True)
class Settings:
    config: Config
    source: Path | None = None  # the configuration file used, if any
    output_format: str | None = None
    # The level at or above which a finding fails the run (exit status 1).
    fail_on: str = DEFAULT_FAIL_ON
    cache_dir: str | None = None  # absolute, from the configuration file


def parse_selectors(values: Iterable[str], all_codes: Sequence[str], where: str) -> tuple[str, ...]:
    """Validate code prefixes (`GL`, `GL00`, `GL001`, `ALL`); unknown ones are an error."""
    result: list[str] = []
    for raw in values:
        value = raw.strip()
        if not value:
            continue
        upper = value.upper()
        if upper == "ALL" or upper in FAMILY_PREFIXES:
            result.append(upper)
            continue
        if value.lower() in codes.GROUP_NAMES:
            result.append(value.lower())
            continue
        if not _SELECTOR_RE.match(value) or not any(code.startswith(upper) for code in all_codes):
            hint = difflib.get_close_matches(upper, list(all_codes), n=1)
            suggestion = f" (did you mean {hint[0]}?)" if hint else ""
            known = ", ".join(all_codes) or "none yet"
            raise ConfigError(
                f"{where}: unknown rule selector {value!r}{suggestion}; "
                f"known codes: {known}; groups: {', '.join(codes.GROUP_NAMES)}; "
                "`gradlint rule --all` lists them"
            )
        result.append(upper)
    return tuple(result)


def parse_severities(raw, all_codes: Sequence[str], where: str) -> dict[str, str]:
    """`severity = {GL004 = "error", waste = "hint"}`: code prefixes or consequence
    groups to levels."""
    if not isinstance(raw, dict):
        raise ConfigError(
            f'{where}: expected a table of code or group = "error", "warning" or "hint" '
            f'(severity = {{GL004 = "error"}}), got {raw!r}'
        )
    levels: dict[str, str] = {}
    for code, level in raw.items():
        (prefix,) = parse_selectors([code], all_codes, f"{where}.{code}") or ("",)
        if not prefix:
            raise ConfigError(f"{where}: an empty code cannot have a severity")
        if level not in SEVERITIES:
            raise ConfigError(
                f"{where}.{code}: expected one of {', '.join(map(repr, SEVERITIES))}, got {level!r}"
            )
        levels[prefix] = level
    return levels


def parse_confidence(value: str, where: str) -> str:
    return parse_choice(value, CONFIDENCES, where)


def parse_choice(value: str, choices: Sequence[str], where: str) -> str:
    if value not in choices:
        raise ConfigError(
            f"{where}: expected one of {', '.join(map(repr, choices))}, got {value!r}"
        )
    return value


def split_selectors(text: str) -> list[str]:
    """`--select GL001,GL002` and `--select "GL001, GL002"` both work."""
    return [part for part in re.split(r"[,\s]+", text) if part]


def _expect_str_list(value, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: expected a list of strings, got {value!r}")
    return tuple(value)


def _expect_bool(value, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    return value


def _expect_str(value, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string, got {value!r}")
    return value


def read_toml(path: Path) -> dict:
    """The document, or a ConfigError. A configuration file is the repository's to
    choose, so it is read with a bound, and a value nested deeper than tomllib's
    recursion allows is an invalid file, not a traceback."""
    try:
        data = read_regular(str(path), DEFAULT_MAX_FILE_SIZE)
    except SourceReadError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8: {exc.reason}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML: a value is nested too deeply") from None


def gradlint_table(path: Path) -> dict | None:
    """The gradlint table of a config file: `[tool.gradlint]` in a pyproject.toml (None
    when it has none), the whole document in a gradlint.toml."""
    document = read_toml(path)
    if path.name != "pyproject.toml":
        return document
    tool = document.get("tool")
    if not isinstance(tool, dict) or "gradlint" not in tool:
        return None
    table = tool["gradlint"]
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.gradlint] must be a table")
    return table


def find_config_file(start: Path) -> Path | None:
    """The closest configuration file at or above `start`: a gradlint.toml /
    .gradlint.toml, or a pyproject.toml that has a [tool.gradlint] table (one without it
    is passed over, as ruff passes over a pyproject.toml without [tool.ruff])."""
    directory = start if start.is_dir() else start.parent
    directory = directory.resolve()
    for candidate_dir in (directory, *directory.parents):
        for name in CONFIG_FILE_NAMES:
            candidate = candidate_dir / name
            if not candidate.is_file():
                continue
            if name != "pyproject.toml" or gradlint_table(candidate) is not None:
                return candidate
    return None


def parse_file_settings(
    table: dict, source: Path | None, all_codes: Sequence[str], formats: Sequence[str]
) -> FileSettings:
    section = "[tool.gradlint]" if source is None or source.name == "pyproject.toml" else ""
    prefix = f"{source}: {section}".rstrip() if source else section

    def where(key: str) -> str:
        return f"{prefix} {key}".strip()

    for key in table:
        if key not in KNOWN_KEYS:
            hint = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise ConfigError(
                f"{where(key)}: unknown option{suggestion}; known options: " + ", ".join(KNOWN_KEYS)
            )
    values: dict = {}
    for key in SELECTOR_KEYS:
        if key in table:
            values[key.replace("-", "_")] = parse_selectors(
                _expect_str_list(table[key], where(key)), all_codes, where(key)
            )
    if "per-file-ignores" in table:
        raw = table["per-file-ignores"]
        if not isinstance(raw, dict):
            raise ConfigError(
                f"{where('per-file-ignores')}: expected a table of glob = [codes], got {raw!r}"
            )
        values["per_file_ignores"] = {
            pattern: parse_selectors(
                _expect_str_list(prefixes, where(f"per-file-ignores.{pattern!r}")),
                all_codes,
                where(f"per-file-ignores.{pattern!r}"),
            )
            for pattern, prefixes in raw.items()
        }
    for key in ("exclude", "extend-exclude", "include", "extend-include"):
        if key in table:
            values[key.replace("-", "_")] = _expect_str_list(table[key], where(key))
    for key in ("respect-gitignore", "force-exclude", "preview"):
        if key in table:
            values[key.replace("-", "_")] = _expect_bool(table[key], where(key))
    if "output-format" in table:
        fmt = _expect_str(table["output-format"], where("output-format"))
        if fmt not in formats:
            raise ConfigError(
                f"{where('output-format')}: unknown format {fmt!r}; choose from "
                + ", ".join(formats)
            )
        values["output_format"] = fmt
    if "severity" in table:
        values["severity"] = parse_severities(table["severity"], all_codes, where("severity"))
    if "min-confidence" in table:
        values["min_confidence"] = parse_confidence(
            _expect_str(table["min-confidence"], where("min-confidence")), where("min-confidence")
        )
    for key, choices in (("min-impact", IMPACTS), ("fail-on", SEVERITIES)):
        if key in table:
            values[key.replace("-", "_")] = parse_choice(
                _expect_str(table[key], where(key)), choices, where(key)
            )
    if "cache-dir" in table:
        cache_dir = _expect_str(table["cache-dir"], where("cache-dir"))
        base = source.parent if source else Path.cwd()
        absolute = str((base / os.path.expanduser(cache_dir)).absolute())
        problem = cache_dir_problem(absolute, str(base))
        if problem:
            raise ConfigError(f"{where('cache-dir')}: {cache_dir!r} {problem}")
        values["cache_dir"] = absolute
    return FileSettings(source=source, **values)


def layered_selection(
    file: FileSettings,
    cli: Overrides,
    all_codes: Sequence[str],
    preview_codes: Sequence[str] = (),
    preview: bool = False,
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(select, extend_select, ignore) for Config after layering the command line over
    the configuration file the way ruff does. A preview code that a prefix would add is
    added only with `preview`, so the exact list returned never selects one by accident."""
    file_select = file.select if file.select is not None else DEFAULT_SELECT
    if cli.select is not None:
        # A select on the command line starts over: the file's select, extend-select and
        # ignore no longer apply.
        return cli.select, cli.extend_select or (), cli.ignore or ()
    if not cli.extend_select and not cli.ignore:
        return file_select, file.extend_select, file.ignore
    # An ignore or extend-select alone adjusts what the file selected, whatever the
    # specificity there: `--ignore GL` drops a rule the file selected as `GL001`. The
    # result is the exact list of codes (or `CODE:group` pairs, where only some of a
    # rule's groups stay), since prefixes cannot express two layers.
    base = Config(
        select=file_select, extend_select=file.extend_select, ignore=file.ignore, preview=preview
    )
    enabled = set(base.selected_pairs(all_codes, preview_codes))
    explicit_only = codes.explicit_only_codes()
    for code in all_codes:
        for group in _groups(code):
            extended = _longest_prefix(code, cli.extend_select or (), group)
            if code in explicit_only and extended < len(code):
                extended = -1
            ignored = _longest_prefix(code, cli.ignore or (), group)
            if extended < 0 and ignored < 0:
                continue
            if ignored >= extended:
                enabled.discard((code, group))
            elif code not in preview_codes or preview or extended >= len(code):
                enabled.add((code, group))
    exact: list[str] = []
    for code in sorted({code for code, _ in enabled}):
        groups = _groups(code)
        kept = [g for g in groups if (code, g) in enabled]
        exact.extend([code] if len(kept) == len(groups) else [f"{code}:{g}" for g in kept])
    return tuple(exact), (), ()


def load_settings(
    start: Path | None = None,
    *,
    config_file: Path | None = None,
    isolated: bool = False,
    overrides: Overrides | None = None,
    all_codes: Sequence[str] | None = None,
    formats: Sequence[str] = (),
) -> Settings:
    """Find, read and validate the configuration, then lay the command line over it.

    Raises ConfigError for an unreadable or invalid file, an unknown option, or an
    unknown rule code.
    """
    if all_codes is None:
        all_codes = codes.all_codes()
    preview_codes = [code for code in all_codes if codes.is_preview(code)]
    overrides = overrides or Overrides()
    source: Path | None = None
    table: dict | None = None
    if config_file is not None:
        source = config_file.absolute()
        if not source.is_file():
            raise ConfigError(f"{config_file}: configuration file not found")
        table = gradlint_table(source)
        if table is None:
            raise ConfigError(f"{config_file}: has no [tool.gradlint] table")
    elif not isolated:
        source = find_config_file((start or Path.cwd()).absolute())
        if source is not None:
            table = gradlint_table(source)
    file = parse_file_settings(table or {}, source, all_codes, formats)

    def pick(cli_value, file_value, default):
        if cli_value is not None:
            return cli_value
        return file_value if file_value is not None else default

    preview = pick(overrides.preview, file.preview, False)
    select, extend_select, ignore = layered_selection(
        file, overrides, all_codes, preview_codes, preview
    )

    config = Config(
        select=select,
        extend_select=extend_select,
        ignore=ignore,
        per_file_ignores=file.per_file_ignores,
        exclude=pick(overrides.exclude, file.exclude, DEFAULT_EXCLUDE),
        extend_exclude=file.extend_exclude + (overrides.extend_exclude or ()),
        root=str(source.parent if source else Path.cwd().absolute()),
        respect_gitignore=pick(overrides.respect_gitignore, file.respect_gitignore, True),
        force_exclude=pick(overrides.force_exclude, file.force_exclude, False),
        include=pick(overrides.include, file.include, DEFAULT_INCLUDE),
        extend_include=file.extend_include + (overrides.extend_include or ()),
        severity=dict(file.severity),
        min_confidence=pick(overrides.min_confidence, file.min_confidence, "low"),
        min_impact=pick(overrides.min_impact, file.min_impact, "test"),
        preview=preview,
    )
    return Settings(
        config=config,
        source=source,
        output_format=file.output_format,
        fail_on=pick(overrides.fail_on, file.fail_on, DEFAULT_FAIL_ON),
        cache_dir=file.cache_dir,
    )
