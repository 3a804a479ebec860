"""Pathological inputs, through the engine and through the command line.

Whatever a file holds (odd encodings and line endings, bytes that are not text, nesting
deeper than a recursive visitor survives, megabytes of it) and whatever the tree holds
(symlink loops, dangling links, directories named like modules, files that cannot be
read), gradlint gives each file one result: its findings, or one `path:line:col: error:`
line. The run goes on, the other files are still reported, and the exit status says
whether anything was found or could not be linted.

Inputs are generated in tmp_path; the CLI runs with --isolated (no configuration from
above tmp_path), --no-cache and -j1 (in-process) unless a test is about the pool.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gradlint import cli, engine, fileio, fixes

BOM = b"\xef\xbb\xbf"
# GL002 on line 3, column 0 (1-based column 1 in the CLI's output).
GL002 = b"import torch\nw = torch.ones(3, requires_grad=True)\nw += 1\n"
TABS = b"import torch\nif True:\n\tw = torch.ones(3, requires_grad=True)\n\tw += 1\n"
LATIN1_COOKIE = (
    b"# -*- coding: latin-1 -*-\nimport torch\ns = '\xe9'\n"
    b"w = torch.ones(3, requires_grad=True)\nw += 1\n"
)
WIDE = 'import torch\nw = torch.ones(3, requires_grad=True)\ns = "日本語"; w += 1\n'.encode()

ERROR_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): error: (?P<message>.+)$")
FINDING_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<code>GL\d{3}) ")


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def without_crash(call):
    """Run `call`; any exception but SourceError fails the test, named by its type only.
    The exceptions deep LibCST trees cause carry node reprs of megabytes (chained
    hundreds deep), which pytest would spend minutes rendering."""
    try:
        return call()
    except engine.SourceError:
        raise
    except Exception as exc:  # any escape is the failure being tested
        crash = f"{type(exc).__name__} escaped"
    # Outside the except block, so the failure carries no chained exception.
    pytest.fail(crash, pytrace=False)


def gradlint(capsys, *args: str | Path, jobs: int = 1) -> tuple[int, str, str]:
    argv = ["--isolated", "--no-cache", f"-j{jobs}", *map(str, args)]
    status = without_crash(lambda: cli.main(argv))
    out, err = capsys.readouterr()
    return status, out, err


def file_errors(err: str) -> dict[str, str]:
    """path -> message, from stderr; every stderr line must be an error or a warning line,
    and no file may get two."""
    errors: dict[str, str] = {}
    for line in err.splitlines():
        if line.startswith("gradlint: warning: "):
            continue
        match = ERROR_LINE.match(line)
        assert match, f"not a one-line file error: {line[:300]!r}"
        assert match["path"] not in errors, f"two errors for {match['path']}"
        errors[match["path"]] = match["message"]
    return errors


def findings(out: str) -> set[tuple[str, int, int, str]]:
    return {
        (m["path"], int(m["line"]), int(m["column"]), m["code"])
        for m in map(FINDING_LINE.match, out.splitlines())
        if m
    }


def lint_bytes(tmp_path: Path, data: bytes, name: str = "input.py") -> engine.FileResult:
    return engine.lint_file(write(tmp_path / name, data))


def positions(result: engine.FileResult) -> list[tuple[str, int, int]]:
    return [(d.code, d.start.line, d.start.column) for d in result.diagnostics]


# --- one file through the engine: text shapes that must lint like any other --------------


LINTABLE = {
    "empty": (b"", []),
    "only_comments": (b"# one\n#two\n   # three\n", []),
    "only_blank_lines": (b"\n\n    \n\t\n", []),
    "no_trailing_newline": (GL002.rstrip(b"\n"), [("GL002", 3, 0)]),
    "bom": (BOM + GL002, [("GL002", 3, 0)]),
    "crlf": (GL002.replace(b"\n", b"\r\n"), [("GL002", 3, 0)]),
    "cr_only": (GL002.replace(b"\n", b"\r"), [("GL002", 3, 0)]),
    "bom_and_crlf": (BOM + GL002.replace(b"\n", b"\r\n"), [("GL002", 3, 0)]),
    "mixed_line_endings": (
        b"import torch\r\nw = torch.ones(3, requires_grad=True)\rw += 1\n",
        [("GL002", 3, 0)],
    ),
    "tab_indent": (TABS, [("GL002", 4, 1)]),
    # Columns count code points: the three CJK characters are one column each.
    "wide_characters": (WIDE, [("GL002", 3, 11)]),
    "latin1_with_coding_cookie": (LATIN1_COOKIE, [("GL002", 5, 0)]),
    "trailing_whitespace_and_no_newline": (GL002 + b"x = 1   \t ", [("GL002", 3, 0)]),
}


@pytest.mark.parametrize("name", sorted(LINTABLE))
def test_unusual_text_lints_like_plain_text(tmp_path, name):
    data, expected = LINTABLE[name]
    result = lint_bytes(tmp_path, data)
    assert result.error is None, result.error
    assert positions(result) == expected


# --- one file through the engine: inputs that cannot be linted --------------------------


UNLINTABLE = {
    # (bytes, message pattern, line of the error or 0 for "the file as a whole")
    # In the first two lines the coding-cookie reader rejects the bytes (no line given).
    "latin1_without_cookie": (b"x = '\xe9'\n", r"cannot decode|not valid utf-8", None),
    "invalid_utf8_on_line_5": (
        b"x = 1\ny = 2\nz = 3\nq = 4\ns = '\xff'\n",
        r"^not valid utf-8: invalid start byte$",
        5,
    ),
    "unknown_coding_cookie": (b"# coding: klingon\nx = 1\n", r"unknown encoding: klingon", None),
    "utf16_with_bom": ("x = 1\n".encode("utf-16"), r"cannot decode", None),
    "nul_byte": (GL002 + b"x = 1\x00\n", r"NUL byte", None),
    "syntax_error": (b"import torch\ndef f(:\n", r"^SyntaxError: ", 2),
    "python2_print": (b"print 'hello'\n", r"^SyntaxError: Missing parentheses", 1),
    "unterminated_triple_quote": (b'import torch\nx = """never closed\n', r"^SyntaxError", None),
    "indentation_deeper_than_cpython_allows": (
        b"".join(b"    " * i + b"if x:\n" for i in range(101)) + b"    " * 101 + b"pass\n",
        r"too many levels of indentation",
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(UNLINTABLE))
def test_unlintable_file_is_one_error_with_a_reason(tmp_path, name):
    data, pattern, line = UNLINTABLE[name]
    result = lint_bytes(tmp_path, data)
    assert result.diagnostics == []
    assert result.error is not None
    assert re.search(pattern, result.error.message), result.error.message
    assert "\n" not in str(result.error)
    assert str(result.error).startswith(str(tmp_path / "input.py"))
    if line is not None:
        assert result.error.line == line


def test_lint_file_on_a_directory_is_a_read_error(tmp_path):
    (tmp_path / "bad.py").mkdir()
    result = engine.lint_file(tmp_path / "bad.py")
    assert result.diagnostics == []
    assert result.error.message.startswith("cannot read: ")
    assert "directory" in result.error.message.lower()


# --- fixes keep what the file was written in ---------------------------------------------


def test_unsafe_fixes_keep_bom_line_endings_tabs_and_encoding(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "bom.py", BOM + GL002)
    write(tmp_path / "crlf.py", GL002.replace(b"\n", b"\r\n"))
    write(tmp_path / "cr.py", GL002.replace(b"\n", b"\r"))
    write(tmp_path / "tabs.py", TABS)
    write(tmp_path / "latin1.py", LATIN1_COOKIE)
    untouchable = {
        "nul.py": GL002 + b"\x00\n",
        "not_utf8.py": GL002 + b"s = '\xff'\n",
        "syntax.py": GL002 + b"def f(:\n",
    }
    for name, data in untouchable.items():
        write(tmp_path / name, data)

    status, _, err = gradlint(capsys, "--fix", "--unsafe-fixes", ".")

    assert status == 1  # the unlintable files
    assert set(file_errors(err)) == set(untouchable)
    for name, data in untouchable.items():
        assert (tmp_path / name).read_bytes() == data, f"{name} was changed"
    no_grad = b"with torch.no_grad():"
    bom = (tmp_path / "bom.py").read_bytes()
    assert bom.startswith(BOM) and bom.count(BOM) == 1 and no_grad in bom
    crlf = (tmp_path / "crlf.py").read_bytes()
    assert no_grad + b"\r\n    w += 1\r\n" in crlf
    assert crlf.count(b"\n") == crlf.count(b"\r\n")
    cr = (tmp_path / "cr.py").read_bytes()
    assert b"\n" not in cr and no_grad + b"\r    w += 1\r" in cr
    assert b"\twith torch.no_grad():\n\t\tw += 1\n" in (tmp_path / "tabs.py").read_bytes()
    latin1 = (tmp_path / "latin1.py").read_bytes()
    assert b"s = '\xe9'" in latin1 and no_grad in latin1  # still latin-1, not re-encoded
    for name in ("bom.py", "crlf.py", "cr.py", "tabs.py", "latin1.py"):
        result = engine.lint_file(tmp_path / name)
        assert result.error is None and result.diagnostics == [], name


def test_fix_on_a_file_with_form_feeds_wraps_the_flagged_statement(tmp_path):
    # A form feed (^L page break) on its own line and at the start of the flagged line.
    # With a comment placed so that the wrong edit still parses, the broken fix would
    # silently replace `w += 1` by a copy of the line above it.
    source = (
        "import torch\n\f\nw = torch.ones(3, requires_grad=True)\n\fw += 1" + " " * 31 + "# note\n"
    )
    outcome = fixes.fix_source(source, "ff.py", None, unsafe=True)
    assert "w += 1" in outcome.source
    assert outcome.source.count("requires_grad=True") == 1


# --- nesting ----------------------------------------------------------------------------

PRELUDE = "import torch\nw = torch.ones(3, requires_grad=True)\n"


def deep(shape: str, depth: int) -> str:
    """Valid Python (CPython compiles each of these) with one deep construct, followed by
    a GL002 finding on the last line."""
    body = {
        "nested_calls": "y = " + "f(" * depth + "w" + ")" * depth + "\n",
        "nested_lists": "y = " + "[" * depth + "]" * depth + "\n",
        "long_sum": "y = " + " + ".join(["a"] * depth) + "\n",
        "long_and": "y = " + " and ".join(["a"] * depth) + "\n",
        "long_attribute_chain": "y = a" + ".b" * depth + "\n",
        "implicit_string_concatenation": "y = (" + " ".join(["'a'"] * depth) + ")\n",
        "elif_chain": "if a:\n    pass\n" + "elif a:\n    pass\n" * depth,
        "nested_ifs": "".join("    " * i + "if a:\n" for i in range(depth))
        + "    " * depth
        + "pass\n",
    }[shape]
    return PRELUDE + body + "w += 1\n"


DEEP_SHAPES = [
    ("nested_calls", 150),
    ("nested_lists", 150),
    ("long_sum", 600),
    ("long_and", 2000),
    ("long_attribute_chain", 600),
    ("implicit_string_concatenation", 600),
    ("nested_ifs", 98),
    ("elif_chain", 300),
    ("elif_chain", 600),
]


@pytest.mark.parametrize(("shape", "depth"), DEEP_SHAPES)
def test_deep_valid_code_is_linted_or_one_source_error(shape, depth):
    source = deep(shape, depth)
    compile(source, "deep.py", "exec")  # the input is valid Python
    last_line = source.count("\n")
    try:
        found = without_crash(lambda: engine.lint_source(source, "deep.py"))
    except engine.SourceError as exc:
        assert exc.error.path == "deep.py"
        assert "nesting too deep" in exc.error.message
        assert "\n" not in str(exc.error)
    else:
        assert [(d.code, d.start.line) for d in found] == [("GL002", last_line)]


@pytest.mark.parametrize(("shape", "depth"), [("nested_calls", 150), ("long_sum", 600)])
def test_deep_valid_code_keeps_its_findings(shape, depth):
    source = deep(shape, depth)
    found = without_crash(lambda: engine.lint_source(source, "deep.py"))
    assert [(d.code, d.start.line) for d in found] == [("GL002", source.count("\n"))]


def test_nesting_cpython_rejects_does_not_crash_the_engine():
    # 1000 nested parentheses: CPython stops at 200 ("too many nested parentheses"),
    # LibCST parses them (as 1000 parentheses around one node) without recursing.
    source = PRELUDE + "y = " + "(" * 1000 + "w" + ")" * 1000 + "\nw += 1\n"
    try:
        found = without_crash(lambda: engine.lint_source(source, "parens.py"))
    except engine.SourceError as exc:
        assert "\n" not in str(exc.error)
    else:
        assert all(d.code == "GL002" for d in found)


def test_deep_and_broken_files_in_one_run_each_get_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "calls.py", deep("nested_calls", 150).encode())
    write(tmp_path / "ifs.py", deep("nested_ifs", 98).encode())
    write(tmp_path / "too_deep_indent.py", UNLINTABLE["indentation_deeper_than_cpython_allows"][0])
    write(tmp_path / "z_last.py", GL002)

    status, out, err = gradlint(capsys, ".")

    assert status == 1
    errors = file_errors(err)
    assert "too many levels of indentation" in errors["too_deep_indent.py"]
    # Either the finding or the one-line "nesting too deep", never both, never a crash.
    assert ("calls.py" in errors) != any(f[0] == "calls.py" for f in findings(out))
    assert ("ifs.py", 102, 1, "GL002") in findings(out)
    assert ("z_last.py", 3, 1, "GL002") in findings(out)


# Inputs that overflow LibCST's native (Rust) parser on a default thread stack, killing the
# process with SIGSEGV; the engine parses on a large stack, and these run in a subprocess
# so a regression cannot take the test run down. CPython rejects the first (nesting limit
# 200), LibCST accepts it, and it is reported as CPython reports it (issue 21); the second
# is valid Python.
NATIVE_CRASHERS = {
    "parens_3000.py": ("x = " + "(" * 3000 + "1" + ")" * 3000 + "\n").encode(),
    "and_chain_10000.py": (
        "import torch\nloss = torch.ones(1, requires_grad=True).sum()\nloss.backward()\n"
        "ok = " + " and ".join(["a"] * 10000) + "\n"
    ).encode(),
}
NATIVE_CRASHER_ERRORS = {
    "parens_3000.py": {"parens_3000.py": "SyntaxError: too many nested parentheses"}
}


def run_subprocess(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gradlint", "--isolated", "--no-cache", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("name", sorted(NATIVE_CRASHERS))
def test_native_parser_depth_in_a_worker(tmp_path, name):
    write(tmp_path / name, NATIVE_CRASHERS[name])
    write(tmp_path / "z_bad.py", GL002)
    done = run_subprocess(tmp_path, "-j2", ".")
    assert done.returncode == 1, done.stderr[-2000:]
    assert ("z_bad.py", 3, 1, "GL002") in findings(done.stdout)
    # The deep file is parsed on a large stack: linted (no finding in it), or refused by
    # CPython's parser first; no crash either way.
    assert file_errors(done.stderr) == NATIVE_CRASHER_ERRORS.get(name, {})
    assert not [f for f in findings(done.stdout) if f[0] == name]


@pytest.mark.parametrize("name", sorted(NATIVE_CRASHERS))
def test_native_parser_depth_in_process(tmp_path, name):
    write(tmp_path / name, NATIVE_CRASHERS[name])
    write(tmp_path / "z_bad.py", GL002)
    done = run_subprocess(tmp_path, "-j1", ".")
    assert done.returncode == 1, f"exit status {done.returncode}"
    assert ("z_bad.py", 3, 1, "GL002") in findings(done.stdout)
    assert file_errors(done.stderr) == NATIVE_CRASHER_ERRORS.get(name, {})


def test_deep_elif_chain_keeps_its_finding(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = deep("elif_chain", 800)
    write(tmp_path / "elif_chain.py", source.encode())
    write(tmp_path / "z_bad.py", GL002)
    status, out, err = gradlint(capsys, ".")
    assert status == 1
    assert ("z_bad.py", 3, 1, "GL002") in findings(out)
    assert ("elif_chain.py", source.count("\n"), 1, "GL002") in findings(out)
    assert file_errors(err) == {}


# --- size -------------------------------------------------------------------------------


def test_five_megabyte_file_is_linted_to_its_last_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # Mostly comment lines: LibCST still reads every byte and positions are computed
    # over the whole file, but the test stays a few seconds.
    padding = b"# " + b"generated padding " * 4 + b"\n"
    big = padding * (5_000_000 // len(padding)) + GL002
    assert len(big) >= 5_000_000
    write(tmp_path / "big.py", big)
    write(tmp_path / "small.py", GL002)
    last_line = big.count(b"\n")

    status, out, err = gradlint(capsys, ".")

    assert status == 1
    assert err == ""
    assert findings(out) == {("big.py", last_line, 1, "GL002"), ("small.py", 3, 1, "GL002")}


# --- the tree ---------------------------------------------------------------------------


def make_messy_tree(root: Path) -> dict[str, str]:
    """A tree with one of everything; returns file -> pattern of the error it must get."""
    write(root / "good.py", b"x = 1\n")
    write(root / "empty.py", b"")
    write(root / "comments.py", b"# nothing here\n")
    write(root / "bom.py", BOM + GL002)
    write(root / "crlf.py", GL002.replace(b"\n", b"\r\n"))
    write(root / "tabs.py", TABS)
    write(root / "z_bad.py", GL002)
    write(root / "latin1.py", b"x = '\xe9'\n")
    write(root / "nul.py", b"x = 1\x00\n")
    write(root / "syntax.py", b"def f(:\n")
    write(root / "ifs.py", UNLINTABLE["indentation_deeper_than_cpython_allows"][0])
    # A directory named like a module is walked, not read as a file.
    write(root / "bad.py" / "inner.py", GL002)
    (root / "empty_dir.py").mkdir()
    # A link up to a directory (not followed), a link to itself, and a dangling link.
    (root / "pkg").mkdir()
    (root / "pkg" / "up").symlink_to("..", target_is_directory=True)
    (root / "self_link.py").symlink_to("self_link.py")
    (root / "dangling.py").symlink_to("missing.py")
    return {
        "latin1.py": r"cannot decode|not valid utf-8",
        "nul.py": r"NUL byte",
        "syntax.py": r"^SyntaxError",
        "ifs.py": r"too many levels of indentation",
        "self_link.py": r"symbolic link loop",
        "dangling.py": r"dangling symbolic link",
    }


EXPECTED_FINDINGS = {
    ("bom.py", 3, 1, "GL002"),
    ("crlf.py", 3, 1, "GL002"),
    ("tabs.py", 4, 2, "GL002"),
    ("z_bad.py", 3, 1, "GL002"),
    ("bad.py/inner.py", 3, 1, "GL002"),
}


@pytest.mark.parametrize("jobs", [1, 2])
def test_messy_tree_every_file_gets_one_result_and_the_run_goes_on(
    tmp_path, capsys, monkeypatch, jobs
):
    expected_errors = make_messy_tree(tmp_path)
    monkeypatch.chdir(tmp_path)

    status, out, err = gradlint(capsys, ".", jobs=jobs)

    assert status == 1
    assert "Traceback" not in err
    errors = file_errors(err)
    assert set(errors) == set(expected_errors)
    for path, pattern in expected_errors.items():
        assert re.search(pattern, errors[path]), (path, errors[path])
    assert findings(out) == EXPECTED_FINDINGS
    # pkg/up links to a directory, which walking does not follow (issue 11).
    assert "pkg/up" not in err


def test_messy_tree_with_exit_zero_still_reports_everything(tmp_path, capsys, monkeypatch):
    expected_errors = make_messy_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    status, out, err = gradlint(capsys, "--exit-zero", ".")
    assert status == 0
    assert set(file_errors(err)) == set(expected_errors)
    assert findings(out) == EXPECTED_FINDINGS


def test_paths_named_on_the_command_line_that_are_not_files(tmp_path, capsys, monkeypatch):
    make_messy_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    status, out, err = gradlint(
        capsys, "nowhere.py", "self_link.py", "dangling.py", "bad.py", "empty_dir.py", "good.py"
    )
    assert status == 1
    errors = file_errors(err)
    assert set(errors) == {"nowhere.py", "self_link.py", "dangling.py"}
    assert "no such file" in errors["nowhere.py"]
    # bad.py/ is a directory: its contents are linted.
    assert findings(out) == {("bad.py/inner.py", 3, 1, "GL002")}


def test_only_clean_odd_files_exit_zero(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "empty.py", b"")
    write(tmp_path / "comments.py", b"# one\n")
    write(tmp_path / "bom_crlf.py", BOM + b"import torch\r\nx = torch.ones(3)\r\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "up").symlink_to("..", target_is_directory=True)
    status, out, err = gradlint(capsys, ".")
    assert status == 0, (out, err)
    assert file_errors(err) == {}
    assert findings(out) == set()


def test_only_file_errors_exit_one(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "nul.py", b"\x00")
    status, out, err = gradlint(capsys, ".")
    assert status == 1
    assert set(file_errors(err)) == {"nul.py"}


def test_file_that_cannot_be_read_is_one_error(tmp_path, capsys, monkeypatch):
    """Root reads through chmod 000, so the read failure is simulated at the one call
    that reads source files."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "locked.py", GL002)
    write(tmp_path / "z_bad.py", GL002)

    def fake_open(path, *args, **kwargs):
        if os.path.basename(path) == "locked.py":
            raise PermissionError(13, "Permission denied", str(path))
        return open(path, *args, **kwargs)

    monkeypatch.setattr(fileio, "open", fake_open, raising=False)
    status, out, err = gradlint(capsys, ".")
    assert status == 1
    assert file_errors(err) == {"locked.py": "cannot read: permission denied"}
    assert findings(out) == {("z_bad.py", 3, 1, "GL002")}


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads through chmod 000"
)
def test_file_without_read_permission_is_one_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    locked = write(tmp_path / "locked.py", GL002)
    write(tmp_path / "z_bad.py", GL002)
    locked.chmod(0)
    try:
        status, out, err = gradlint(capsys, ".")
    finally:
        locked.chmod(0o644)
    assert status == 1
    assert "permission denied" in file_errors(err)["locked.py"]
    assert findings(out) == {("z_bad.py", 3, 1, "GL002")}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_fifo_named_like_a_module_is_skipped_not_waited_on(tmp_path):
    # Reading a FIFO blocks until someone writes, so this runs in a subprocess with a
    # timeout: a regression fails the test instead of hanging the suite.
    os.mkfifo(tmp_path / "pipe.py")
    write(tmp_path / "z_bad.py", GL002)
    done = run_subprocess(tmp_path, "-j1", ".")
    assert done.returncode == 1
    assert findings(done.stdout) == {("z_bad.py", 3, 1, "GL002")}
    assert file_errors(done.stderr) == {}
