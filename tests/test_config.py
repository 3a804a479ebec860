"""Configuration: selection semantics, layering, and loading [tool.gradlint]."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradlint.config import (
    DEFAULT_EXCLUDE,
    Config,
    ConfigError,
    Overrides,
    find_config_file,
    load_settings,
    split_selectors,
)

CODES = ["GL001", "GL002", "GL003", "GL010"]
FORMATS = ("concise", "json")


def load(start: Path, overrides: Overrides | None = None, **kwargs):
    return load_settings(start, overrides=overrides, all_codes=CODES, formats=FORMATS, **kwargs)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- selection ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, CODES),
        ({"select": ("GL00",)}, ["GL001", "GL002", "GL003"]),
        ({"select": ("GL001",), "ignore": ("GL",)}, ["GL001"]),  # more specific select wins
        ({"select": ("GL",), "ignore": ("GL00",)}, ["GL010"]),
        ({"select": ("GL00",), "ignore": ("GL00",)}, []),  # equal specificity: ignore wins
        ({"select": ("GL010",), "extend_select": ("GL002",)}, ["GL002", "GL010"]),
        ({"select": ("ALL",), "ignore": ("GL001",)}, ["GL002", "GL003", "GL010"]),
        ({"select": ()}, []),
    ],
)
def test_selection_prefix_specificity(kwargs, expected):
    assert sorted(Config(**kwargs).codes_for("x.py", CODES)) == expected


def test_per_file_ignores_apply_after_selection(tmp_path):
    config = Config(
        select=("GL001", "GL002"),
        per_file_ignores={"tests/*": ("GL",), "*_test.py": ("GL002",), "!src/*": ("GL001",)},
        root=str(tmp_path),
    )
    assert config.codes_for(str(tmp_path / "tests" / "a.py"), CODES) == frozenset()
    assert config.codes_for(str(tmp_path / "src" / "b_test.py"), CODES) == {"GL001"}
    assert config.codes_for(str(tmp_path / "src" / "c.py"), CODES) == {"GL001", "GL002"}
    # `!src/*` applies to everything outside src/
    assert config.codes_for(str(tmp_path / "other.py"), CODES) == {"GL002"}


def test_split_selectors_accepts_commas_and_spaces():
    assert split_selectors("GL001, GL002,GL003") == ["GL001", "GL002", "GL003"]
    assert split_selectors("") == []


# --- finding and reading files ----------------------------------------------------------


def test_closest_pyproject_with_a_gradlint_table_wins(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.gradlint]\nselect = ["GL001"]\n')
    write(tmp_path / "pkg" / "pyproject.toml", "[tool.other]\nx = 1\n")
    write(tmp_path / "pkg" / "sub" / "m.py", "")
    assert (
        find_config_file(tmp_path / "pkg" / "sub" / "m.py")
        == (tmp_path / "pyproject.toml").resolve()
    )
    write(tmp_path / "pkg" / "gradlint.toml", 'select = ["GL002"]\n')
    settings = load(tmp_path / "pkg" / "sub" / "m.py")
    assert settings.source.name == "gradlint.toml"
    assert settings.config.codes_for("m.py", CODES) == {"GL002"}
    assert settings.config.root == str((tmp_path / "pkg").resolve())


def test_all_keys_are_read(tmp_path):
    write(
        tmp_path / "pyproject.toml",
        """
[tool.gradlint]
select = ["GL00"]
extend-select = ["GL010"]
ignore = ["gl003"]
per-file-ignores = {"tests/*" = ["GL001"]}
exclude = ["build"]
extend-exclude = ["gen"]
respect-gitignore = false
force-exclude = true
output-format = "json"
cache-dir = "cache"
""",
    )
    settings = load(tmp_path)
    config = settings.config
    assert config.codes_for("a.py", CODES) == {"GL001", "GL002", "GL010"}
    assert config.per_file_ignores == {"tests/*": ("GL001",)}
    assert config.exclude == ("build",) and config.extend_exclude == ("gen",)
    assert config.respect_gitignore is False and config.force_exclude is True
    assert settings.output_format == "json"
    assert settings.cache_dir == str(tmp_path.resolve() / "cache")


def test_defaults_without_a_config_file(tmp_path):
    settings = load(tmp_path, isolated=True)
    assert settings.source is None
    assert settings.config.exclude == DEFAULT_EXCLUDE
    assert settings.config.codes_for("a.py", CODES) == set(CODES)


def test_isolated_ignores_config_files(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.gradlint]\nselect = ["GL001"]\n')
    assert load(tmp_path, isolated=True).config.codes_for("a.py", CODES) == set(CODES)


def test_explicit_config_file(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.gradlint]\nselect = ["GL001"]\n')
    other = write(tmp_path / "elsewhere" / "custom.toml", 'select = ["GL002"]\n')
    settings = load(tmp_path, config_file=other)
    assert settings.config.codes_for("a.py", CODES) == {"GL002"}
    with pytest.raises(ConfigError, match="not found"):
        load(tmp_path, config_file=tmp_path / "nope.toml")
    bare = write(tmp_path / "bare" / "pyproject.toml", "[project]\nname = 'x'\n")
    with pytest.raises(ConfigError, match=r"no \[tool.gradlint\]"):
        load(tmp_path, config_file=bare)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('selct = ["GL001"]', r"unknown option \(did you mean 'select'\?\)"),
        ('select = "GL001"', "expected a list of strings"),
        ('select = ["GL999"]', "unknown rule selector 'GL999'"),
        ('ignore = ["XYZ"]', "unknown rule selector 'XYZ'"),
        ('per-file-ignores = {"t/*" = ["GL77"]}', "unknown rule selector 'GL77'"),
        ('per-file-ignores = ["GL001"]', "expected a table"),
        ("respect-gitignore = 1", "expected true or false"),
        ('output-format = "xml"', "unknown format 'xml'"),
        ("exclude = [1]", "expected a list of strings"),
        ("select = [", "not valid TOML"),
    ],
)
def test_bad_configuration_is_a_clear_error(tmp_path, body, message):
    write(tmp_path / "pyproject.toml", f"[tool.gradlint]\n{body}\n")
    with pytest.raises(ConfigError, match=message) as info:
        load(tmp_path)
    assert "pyproject.toml" in str(info.value)


def test_non_table_section_is_an_error(tmp_path):
    write(tmp_path / "pyproject.toml", 'tool = {gradlint = "yes"}\n')
    with pytest.raises(ConfigError, match="must be a table"):
        load(tmp_path)


# --- layering the command line over the file -----------------------------------------------


def test_cli_select_replaces_the_file_selection(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.gradlint]\nselect = ["GL00"]\nignore = ["GL002"]\n')
    settings = load(tmp_path, Overrides(select=("GL",)))
    # The file's ignore belonged to the selection the command line replaced.
    assert settings.config.codes_for("a.py", CODES) == set(CODES)


def test_cli_ignore_adjusts_the_file_selection_whatever_its_specificity(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.gradlint]\nselect = ["GL001", "GL002"]\n')
    settings = load(tmp_path, Overrides(ignore=("GL",)))
    assert settings.config.codes_for("a.py", CODES) == frozenset()
    settings = load(tmp_path, Overrides(ignore=("GL002",), extend_select=("GL010",)))
    assert settings.config.codes_for("a.py", CODES) == {"GL001", "GL010"}


def test_cli_extend_select_reenables_a_file_ignore(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.gradlint]\nignore = ["GL001"]\n')
    assert load(tmp_path).config.codes_for("a.py", CODES) == {"GL002", "GL003", "GL010"}
    settings = load(tmp_path, Overrides(extend_select=("GL00",)))
    assert settings.config.codes_for("a.py", CODES) == set(CODES)


def test_cli_excludes_and_flags_override(tmp_path):
    write(
        tmp_path / "pyproject.toml",
        '[tool.gradlint]\nexclude = ["a"]\nextend-exclude = ["b"]\nforce-exclude = true\n',
    )
    settings = load(tmp_path, Overrides(exclude=("c",), extend_exclude=("d",), force_exclude=False))
    assert settings.config.exclude == ("c",)
    assert settings.config.extend_exclude == ("b", "d")
    assert settings.config.force_exclude is False
