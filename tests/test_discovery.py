"""File discovery: recursion, excludes, .gitignore semantics, symlinks and bad paths."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gradlint.config import Config
from gradlint.discovery import compile_gitignore_line, discover


def make_tree(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def found(tmp_path: Path, paths=None, **config) -> set[str]:
    config.setdefault("root", str(tmp_path))
    result = discover([str(p) for p in (paths or [tmp_path])], Config(**config))
    return {
        os.path.relpath(abs_path, tmp_path).replace(os.sep, "/") for _, abs_path in result.files
    }


def test_recurses_for_py_and_pyi_only(tmp_path):
    make_tree(
        tmp_path,
        {"a.py": "", "pkg/b.pyi": "", "pkg/deep/c.py": "", "notes.txt": "", "pkg/script": ""},
    )
    assert found(tmp_path) == {"a.py", "pkg/b.pyi", "pkg/deep/c.py"}


def test_default_excludes_and_virtualenvs(tmp_path):
    make_tree(
        tmp_path,
        {
            "keep.py": "",
            ".git/hooks/x.py": "",
            "__pycache__/x.py": "",
            ".venv/lib/x.py": "",
            ".gradlint_cache/x.py": "",
            "node_modules/x.py": "",
            "myenv/pyvenv.cfg": "",
            "myenv/lib/site.py": "",
        },
    )
    assert found(tmp_path) == {"keep.py"}


def test_exclude_replaces_defaults_and_extend_exclude_adds(tmp_path):
    make_tree(tmp_path, {"a.py": "", "build/b.py": "", "venv/c.py": "", "gen/d_pb2.py": ""})
    assert found(tmp_path) == {"a.py", "build/b.py", "gen/d_pb2.py"}
    assert found(tmp_path, extend_exclude=("build", "*_pb2.py")) == {"a.py"}
    # `exclude` replaces the default list, so venv is linted again.
    assert found(tmp_path, exclude=("build",)) == {"a.py", "venv/c.py", "gen/d_pb2.py"}


def test_exclude_path_globs_are_anchored_at_the_root(tmp_path):
    make_tree(tmp_path, {"tests/fixtures/a.py": "", "src/tests/fixtures/b.py": "", "c.py": ""})
    assert found(tmp_path, extend_exclude=("tests/fixtures",)) == {
        "src/tests/fixtures/b.py",
        "c.py",
    }


def test_an_exclude_without_wildcards_matches_exactly_that_name_or_path(tmp_path):
    # Such patterns are compared as text, not compiled: `.` and `+` are themselves.
    make_tree(
        tmp_path,
        {"gen+v2/a.py": "", "genv2/b.py": "", "x.y/c.py": "", "xzy/d.py": "", "src/x.y/e.py": ""},
    )
    assert found(tmp_path, extend_exclude=("gen+v2", "src/x.y")) == {
        "genv2/b.py",
        "x.y/c.py",
        "xzy/d.py",
    }
    assert found(tmp_path, extend_exclude=("x.y", "gen?v2")) == {"genv2/b.py", "xzy/d.py"}


def test_explicit_files_are_linted_even_when_excluded_unless_forced(tmp_path):
    make_tree(tmp_path, {"build/gen.py": "", "build/other.py": "", "script": ""})
    explicit = [tmp_path / "build" / "gen.py", tmp_path / "script"]
    config = {"extend_exclude": ("build",)}
    assert found(tmp_path, explicit, **config) == {"build/gen.py", "script"}
    assert found(tmp_path, explicit, force_exclude=True, **config) == {"script"}
    # A named directory is walked, but excluded children are still skipped.
    assert found(tmp_path, [tmp_path / "build"], **config) == {"build/gen.py", "build/other.py"}
    assert found(tmp_path, [tmp_path / "build"], force_exclude=True, **config) == set()


def test_force_exclude_does_not_apply_the_root_folder_name(tmp_path):
    # The project root itself is called `dist`: that must not exclude everything.
    root = tmp_path / "dist"
    make_tree(root, {"a.py": ""})
    result = discover([str(root / "a.py")], Config(root=str(root), force_exclude=True))
    assert [Path(p).name for _, p in result.files] == ["a.py"]


def test_gitignore_nested_negation_directory_and_anchored_patterns(tmp_path):
    make_tree(
        tmp_path,
        {
            ".gitignore": "# generated\n*_gen.py\n/top_only.py\nbuild/\n!keep_gen.py\n",
            "a.py": "",
            "a_gen.py": "",
            "keep_gen.py": "",
            "top_only.py": "",
            "sub/top_only.py": "",
            "sub/b_gen.py": "",
            "build/c.py": "",
            "sub/build": "not a directory, so `build/` does not match it",
            "pkg/.gitignore": "!again_gen.py\nlocal.py\n",
            "pkg/again_gen.py": "",
            "pkg/local.py": "",
            "other/local.py": "",
        },
    )
    assert found(tmp_path) == {
        "a.py",
        "keep_gen.py",
        "sub/top_only.py",
        "pkg/again_gen.py",
        "other/local.py",
    }
    everything = found(tmp_path, respect_gitignore=False)
    assert {"a_gen.py", "build/c.py", "pkg/local.py", "top_only.py"} <= everything


def test_gitignore_double_star(tmp_path):
    make_tree(
        tmp_path,
        {
            ".gitignore": "**/migrations/*.py\ndocs/**\nlogs/**/debug_*.py\n",
            "app/migrations/m1.py": "",
            "migrations/m0.py": "",
            "app/migrations/sub/deep.py": "",
            "docs/conf.py": "",
            "logs/debug_a.py": "",
            "logs/x/y/debug_b.py": "",
            "logs/x/info.py": "",
        },
    )
    assert found(tmp_path) == {"app/migrations/sub/deep.py", "logs/x/info.py"}


def test_cannot_reinclude_a_file_under_an_ignored_directory(tmp_path):
    make_tree(tmp_path, {".gitignore": "out/\n!out/keep.py\n", "out/keep.py": "", "a.py": ""})
    assert found(tmp_path) == {"a.py"}


def test_gitignore_of_repo_root_applies_when_walking_a_subfolder(tmp_path):
    make_tree(tmp_path, {".gitignore": "*_gen.py\n", "src/a.py": "", "src/b_gen.py": ""})
    (tmp_path / ".git").mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = discover([str(tmp_path / "src")], Config(root=str(outside)))
    assert sorted(Path(p).name for _, p in result.files) == ["a.py"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to compare against")
def test_gitignore_matching_agrees_with_git(tmp_path):
    patterns = [
        "*.py[co]",
        "/anchored.py",
        "dir_only/",
        "a/**/z.py",
        "**/deep.py",
        "docs/*.py",
        "\\#hash.py",
        "sp\\ ace.py",
        "trailing.py   ",
        "!re_included.py",
        "[a-c]x.py",
        "[!a-c]y.py",
        "q?.py",
        "mid/dle.py",
        "ends/**",
    ]
    candidates = [
        "x.pyc",
        "anchored.py",
        "sub/anchored.py",
        "dir_only/f.py",
        "sub/dir_only/f.py",
        "a/z.py",
        "a/b/c/z.py",
        "b/a/z.py",
        "deep.py",
        "x/y/deep.py",
        "docs/conf.py",
        "docs/sub/conf.py",
        "sub/docs/conf.py",
        "#hash.py",
        "sp ace.py",
        "trailing.py",
        "re_included.py",
        "ax.py",
        "dx.py",
        "ay.py",
        "dy.py",
        "q1.py",
        "q12.py",
        "mid/dle.py",
        "sub/mid/dle.py",
        "ends/a.py",
        "ends/b/c.py",
        "plain.py",
    ]
    (tmp_path / ".gitignore").write_text("\n".join(patterns) + "\n", encoding="utf-8")
    for candidate in candidates:
        path = tmp_path / candidate
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    git_kept = {p for p in listed if p.endswith(".py")}
    assert found(tmp_path) == git_kept


def test_compile_gitignore_line_skips_blanks_and_comments():
    assert compile_gitignore_line("") is None
    assert compile_gitignore_line("   ") is None
    assert compile_gitignore_line("# comment") is None
    negated = compile_gitignore_line("!keep.py")
    assert negated.negated and negated.regex.match("sub/keep.py")
    assert compile_gitignore_line("build/").dir_only


def test_symlink_loops_and_dangling_links_do_not_hang(tmp_path):
    make_tree(tmp_path, {"pkg/a.py": ""})
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path / "pkg", target_is_directory=True)
    (tmp_path / "pkg" / "self.py").symlink_to(tmp_path / "pkg" / "self.py")
    (tmp_path / "pkg" / "dangling.py").symlink_to(tmp_path / "missing.py")
    (tmp_path / "pkg" / "alias.py").symlink_to(tmp_path / "pkg" / "a.py")
    result = discover([str(tmp_path)], Config(root=str(tmp_path)))
    names = sorted(Path(p).name for _, p in result.files)
    assert names == ["a.py", "alias.py"]
    messages = {Path(e.path).name: e.message for e in result.errors}
    assert set(messages) == {"self.py", "dangling.py"}
    assert "symbolic link loop" in messages["self.py"]
    assert "dangling" in messages["dangling.py"]
    # Links to directories are not followed while walking (issue 11), so the link back
    # to pkg is neither walked nor worth a warning.
    assert result.warnings == []


def test_missing_and_looping_explicit_paths_are_errors(tmp_path):
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    make_tree(tmp_path, {"ok.py": ""})
    paths = [str(tmp_path / "missing.py"), str(tmp_path / "loop.py"), str(tmp_path / "ok.py")]
    result = discover(paths, Config(root=str(tmp_path)))
    assert [Path(p).name for _, p in result.files] == ["ok.py"]
    assert len(result.errors) == 2
    assert "no such file" in result.errors[0].message
    assert "symbolic link loop" in result.errors[1].message


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
def test_unreadable_directory_is_one_error(tmp_path):
    make_tree(tmp_path, {"locked/a.py": "", "b.py": ""})
    (tmp_path / "locked").chmod(0)
    try:
        result = discover([str(tmp_path)], Config(root=str(tmp_path)))
    finally:
        (tmp_path / "locked").chmod(0o755)
    assert [Path(p).name for _, p in result.files] == ["b.py"]
    assert len(result.errors) == 1 and "cannot read directory" in result.errors[0].message


def test_same_file_named_twice_is_linted_once_and_display_paths_are_relative(tmp_path, monkeypatch):
    make_tree(tmp_path, {"src/a.py": ""})
    monkeypatch.chdir(tmp_path)
    result = discover(["src", "src/a.py", "."], Config(root=str(tmp_path)))
    assert [display for display, _ in result.files] == [os.path.join("src", "a.py")]
