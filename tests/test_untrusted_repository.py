"""Issue 21, "Never lose a byte, round two": what a hostile or unusual repository can put
in gradlint's way. Every file gradlint reads on its own account is the repository's to
choose (a FIFO, a link to /dev/zero, a nested TOML value, a link inside the cache
folder), and so is the code it lints (5,000 nested brackets, a sum of 100,000 terms).

The tests that could hang or exhaust memory on a regression run gradlint in a child
process with a memory limit and a timeout, so a regression fails instead of stalling.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gradlint import __version__, cache, cli, config, discovery, engine, fileio

GL002 = "import torch\nw = torch.ones(3, requires_grad=True)\nw += 1\n"
ERROR = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): error: (?P<message>.+)$", re.M)
FINDING = re.compile(r"^(?P<path>.+?):(?P<line>\d+):\d+: (?P<code>GL\d{3}) ", re.M)
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
needs_dev_zero = pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip() if text.startswith("\n") else text)
    return path


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))


def gradlint_child(cwd: Path, *args: str, timeout: int = 30) -> subprocess.CompletedProcess:
    """`python -m gradlint ARGS` under 2 GiB of address space and a timeout."""
    return subprocess.run(
        [sys.executable, "-m", "gradlint", "-j1", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_limit_memory,
    )


def findings(out: str) -> set[tuple[str, int, str]]:
    return {(m["path"], int(m["line"]), m["code"]) for m in FINDING.finditer(out)}


def make_endless(path: Path, kind: str) -> None:
    """Put a FIFO (opening it for reading blocks) or a link to /dev/zero (reading it
    never ends) where a file was."""
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")


ENDLESS = [
    pytest.param("fifo", marks=needs_fifo),
    pytest.param("dev-zero", marks=needs_dev_zero),
]


# --- 1. files the repository controls are read bounded, and only when regular ------------


@pytest.mark.parametrize("kind", ENDLESS)
def test_read_regular_refuses_what_is_not_a_regular_file_without_blocking(tmp_path, kind):
    target = tmp_path / "x.py"
    make_endless(target, kind)
    with pytest.raises(fileio.SourceReadError, match="not a regular file"):
        fileio.read_regular(str(target), 1024)


def test_read_regular_stops_at_its_limit(tmp_path):
    big = tmp_path / "big.py"
    big.write_bytes(b"x" * 2048)
    assert fileio.read_regular(str(big), 4096) == b"x" * 2048
    with pytest.raises(fileio.TooLarge, match="over the 1 KiB limit"):
        fileio.read_regular(str(big), 1024)


@pytest.mark.parametrize("kind", ENDLESS)
def test_a_cache_file_that_is_a_fifo_or_an_endless_device_is_a_cold_run(tmp_path, kind):
    write(tmp_path / "a.py", GL002)
    first = gradlint_child(tmp_path, "--isolated", "a.py")
    assert first.returncode == 1, first.stderr
    [cache_file] = (tmp_path / ".gradlint_cache").glob("*/*.json")
    make_endless(cache_file, kind)
    again = gradlint_child(tmp_path, "--isolated", "a.py")
    assert again.returncode == 1, again.stderr[-2000:]
    assert findings(again.stdout) == {("a.py", 3, "GL002")}
    assert "Traceback" not in again.stderr
    # Written anew, as a file, in place of what was there.
    assert cache_file.is_file() and not cache_file.is_symlink()
    assert json.loads(cache_file.read_text())["entries"]


EVALUATE = """
def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        out = model(x)
        correct += (out.argmax(1) == y).sum().item()
    return correct
"""

TRAIN = """
import torch
from utils import evaluate


def main(model, loader):
    model.eval()
    acc = evaluate(model, loader)
    return acc
"""


@pytest.mark.parametrize("kind", ENDLESS)
def test_a_cached_dependency_that_became_a_fifo_or_a_device_is_a_miss(tmp_path, kind):
    write(tmp_path / "utils.py", EVALUATE)
    write(tmp_path / "train.py", TRAIN)
    args = ("--isolated", "--select", "GL004", "train.py")
    first = gradlint_child(tmp_path, *args)
    assert findings(first.stdout) == {("train.py", 7, "GL004")}, first.stderr
    make_endless(tmp_path / "utils.py", kind)
    for _ in range(2):  # and the run after it, from the entry written anew
        again = gradlint_child(tmp_path, *args)
        assert again.returncode == 0, again.stderr[-2000:]
        assert "Traceback" not in again.stderr
        # The helper cannot be read any more: nothing is known of what it does.
        assert findings(again.stdout) == set()


def test_an_entry_whose_dependency_check_fails_is_dropped(tmp_path, monkeypatch):
    store = cache.Cache(str(tmp_path / "c"), str(tmp_path), lambda message: None)
    store.store("/p/train.py", "key", [], None, {"/p/utils.py": "1:2.3:abc"})
    store.dirty = False

    def failing(dependencies, trees, linted):
        raise MemoryError

    monkeypatch.setattr(cache, "_dependencies_unchanged", failing)
    assert store.lookup("/p/train.py", "key", "train.py") is None
    assert "/p/train.py" not in store.entries and store.dirty


@pytest.mark.parametrize("kind", ENDLESS)
def test_a_gitignore_that_is_a_fifo_or_a_device_is_not_read(tmp_path, kind):
    (tmp_path / ".git").mkdir()
    write(tmp_path / "a.py", GL002)
    make_endless(tmp_path / ".gitignore", kind)
    done = gradlint_child(tmp_path, "--isolated", "--no-cache", ".")
    assert done.returncode == 1, done.stderr[-2000:]
    assert findings(done.stdout) == {("a.py", 3, "GL002")}


GAN = """
import torch
from torch import nn


class GAN:
    def __init__(self):
        self.G = nn.Linear(4, 4)

    def evaluate(self, path):
        self.G.eval()

    def sample(self, z):
        images = self.G(z)
        return images.data.cpu()
"""


@pytest.mark.parametrize("kind", ENDLESS)
def test_the_caller_search_skips_fifos_and_devices(tmp_path, kind):
    write(tmp_path / "models" / "__init__.py", "")
    write(tmp_path / "models" / "gan.py", GAN)
    write(
        tmp_path / "main.py",
        "from models.gan import GAN\n\nm = GAN()\nm.evaluate(p)\nm.sample(z)\n",
    )
    (tmp_path / "tools").mkdir()
    make_endless(tmp_path / "tools" / "export.py", kind)
    done = gradlint_child(tmp_path, "--isolated", "--no-cache", "models/gan.py")
    assert findings(done.stdout) == {("models/gan.py", 13, "GL004")}, done.stderr[-2000:]


def test_the_helpers_of_the_search_do_not_block_on_a_fifo(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs named pipes")
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    script = (
        "from gradlint.analysis import project\n"
        f"print(project.text_stamp({str(fifo)!r}), "
        f"project.importers([{str(fifo)!r}], {{{str(tmp_path / 'x.py')!r}}}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30
    )
    assert done.stdout.split() == ["None", "set()"], done.stderr


# --- 2. code CPython gives up on is one line, in the CLI and in the server ----------------

DEEP = "import torch\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\n"
LONG = "import torch\nx = " + " + ".join(["w"] * 100_000) + "\n"


def test_code_cpython_gives_up_on_is_one_line_and_the_run_goes_on(tmp_path):
    write(tmp_path / "deep.py", DEEP)
    write(tmp_path / "long.py", LONG)
    write(tmp_path / "a.py", GL002)
    done = gradlint_child(tmp_path, "--isolated", "--no-cache", "deep.py", "long.py", "a.py")
    assert done.returncode == 1, done.stderr[-2000:]
    errors = {m["path"]: (int(m["line"]), m["message"]) for m in ERROR.finditer(done.stderr)}
    assert errors == {
        # the statements before the one CPython gives up on are linted (`import torch`)
        "deep.py": (2, "SyntaxError: too many nested parentheses; the lines before 2 were linted"),
        "long.py": (
            1,
            "cannot parse: nested too deeply for Python "
            "(maximum recursion depth exceeded during ast construction)",
        ),
    }, done.stderr
    assert findings(done.stdout) == {("a.py", 3, "GL002")}


def test_newer_syntax_is_still_left_to_libcst():
    """Only the limits are CPython's to judge: a syntax error of another kind (here
    Python 3.12's generics, on any interpreter LibCST reads them for) goes on to LibCST
    as before."""
    source = "import torch\n\ndef first[T](items: list[T]) -> T:\n    return items[0]\n"
    try:
        assert engine.lint_source(source, "gen.py") == []
    except engine.SourceError as exc:  # an interpreter LibCST cannot read them for
        assert "nested" not in exc.error.message


SERVER = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 * 1024**3, 3 * 1024**3))
from gradlint.lsp import main
sys.exit(main())
"""


def test_the_server_survives_huge_and_deep_documents_and_answers_the_next(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        from test_lsp import Editor, run_editor
    finally:
        sys.path.pop(0)

    huge = "import torch\n" + "x = [1, 2, 3]\n" * (fileio.DEFAULT_MAX_FILE_SIZE // 14 + 1)

    async def scenario(editor: Editor):
        for name, text in (("deep.py", DEEP), ("long.py", LONG), ("huge.py", huge)):
            _, diagnostics = await editor.open(tmp_path / name, text)
            assert diagnostics == [], name
        _, diagnostics = await editor.open(tmp_path / "a.py", GL002)
        assert [(d.code, d.range.start.line) for d in diagnostics] == [("GL002", 2)]

    run_editor(scenario, command=[sys.executable, "-c", SERVER])


# --- 3. a configuration file nested too deeply is exit 2 with one line -------------------


def test_a_deeply_nested_toml_value_above_the_file_is_a_configuration_error(
    tmp_path, capsys, monkeypatch
):
    # No [tool.gradlint] table: it is read only to find out whether it has one.
    write(tmp_path / "pyproject.toml", "[tool.other]\nx = " + "[" * 5000 + "]" * 5000 + "\n")
    write(tmp_path / "sub" / "a.py", GL002)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--no-cache", "-j1", "sub/a.py"]) == 2
    _, err = capsys.readouterr()
    assert err.splitlines() == [
        f"gradlint: error: {tmp_path / 'pyproject.toml'}: not valid TOML: "
        "a value is nested too deeply"
    ]


@pytest.mark.parametrize("kind", ENDLESS)
def test_a_configuration_file_that_is_a_fifo_or_a_device_is_not_read(tmp_path, kind):
    write(tmp_path / "a.py", GL002)
    make_endless(tmp_path / "gradlint.toml", kind)
    done = gradlint_child(tmp_path, "--no-cache", "--config", "gradlint.toml", "a.py")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]


# --- 4. hundreds of in-place updates in a loop body cost no finding ----------------------


@pytest.mark.parametrize("update", ["x += w", "x += x * w", "x.add_(w)"])
def test_a_loop_body_of_400_in_place_updates_keeps_the_files_findings(update):
    body = "".join(f"    {update}\n" for _ in range(400))
    source = (
        GL002
        + "x = torch.ones(3)\nfor i in range(3):\n"
        + body
        + "    y = (x * w).sum()\n    y.backward()\n"
    )
    found = engine.lint_source(source, "chain.py")
    assert ("GL002", 3) in {(d.code, d.start.line) for d in found}


def test_a_chain_of_rebindings_is_evaluated_in_polynomial_work(monkeypatch):
    """`x = x + w` fourteen times in a loop body: each rebinding's value asks for the
    previous one once per use of `x` in it (twice here), and values that meet the loop's
    cycle were evaluated afresh each time, 2**n evaluations in all (82 s for 18 lines).
    Counted, not timed: the evaluations of bindings."""
    from gradlint.analysis import values

    evaluations = [0]
    real = values.ValueAnalysis._binding_value

    def counting(self, node, name):
        evaluations[0] += 1
        return real(self, node, name)

    monkeypatch.setattr(values.ValueAnalysis, "_binding_value", counting)
    lines = 14
    body = "".join("    x = x + w\n" for _ in range(lines))
    source = GL002 + "x = torch.ones(3)\nfor i in range(3):\n" + body + "    x.sum().backward()\n"
    found = engine.lint_source(source, "chain.py")
    assert ("GL002", 3) in {(d.code, d.start.line) for d in found}
    assert evaluations[0] <= 2 * lines**2, evaluations[0]


# --- 5. a helper changed with its size and mtime kept is linted again ---------------------


def test_a_helper_changed_with_its_size_and_mtime_kept_makes_its_callers_miss(
    tmp_path, capsys, monkeypatch
):
    """As `tar -x`, `rsync -a` and `cp -p` leave it: new content, the same size, the old
    mtime. Only the ctime tells."""
    body = textwrap.dedent(EVALUATE).lstrip()
    # `@torch.no_grad()` in place of a comment of its length: another meaning, same size.
    plain, guarded = (f"import torch\n{line}\n" + body for line in ("#" * 16, "@torch.no_grad()"))
    write(tmp_path / "utils.py", plain)
    write(tmp_path / "train.py", TRAIN)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(cli.CACHE_DIR_ENV, raising=False)

    def run() -> set:
        cli.main(["-j1", "--select", "GL004", "."])
        return findings(capsys.readouterr().out)

    assert run() == {("train.py", 7, "GL004")}
    helper = tmp_path / "utils.py"
    before = helper.stat()
    assert len(guarded) == len(plain) == before.st_size
    while True:  # until the clock has moved on from the first write's ctime
        helper.write_text(guarded)
        os.utime(helper, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = helper.stat()
        if after.st_ctime_ns != before.st_ctime_ns:
            break
        time.sleep(0.01)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert run() == set()


# --- 6. `**/` globs match at the project root too ------------------------------------------


def test_double_star_globs_match_at_the_project_root(tmp_path):
    for name in ("tests/test_a.py", "pkg/tests/test_b.py", "pkg/mod.py", "contests/c.py"):
        write(tmp_path / name, GL002)
    root = str(tmp_path)
    excluded = config.Config(root=root, extend_exclude=("**/tests/**",))
    found = discovery.discover([root], excluded)
    assert sorted(os.path.relpath(p, root) for _, p in found.files) == [
        "contests/c.py",
        "pkg/mod.py",
    ]
    ignoring = config.Config(root=root, per_file_ignores={"**/tests/**": ("GL",)})
    assert "GL002" not in ignoring.enabled_codes(str(tmp_path / "tests" / "test_a.py"))
    assert "GL002" not in ignoring.enabled_codes(str(tmp_path / "pkg" / "tests" / "test_b.py"))
    assert "GL002" in ignoring.enabled_codes(str(tmp_path / "contests" / "c.py"))


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/tests/**", "tests/a.py", True),
        ("**/tests/**", "x/y/tests/a.py", True),
        ("**/tests/**", "contests/a.py", False),
        ("a/**/b.py", "a/b.py", True),
        ("a/**/b.py", "a/x/y/b.py", True),
        ("**/*.py", "a.py", True),
        ("*.py", "a/b.py", True),  # `*` crosses `/`, as in fnmatch and ruff
        ("x**/y", "xa/y", True),  # not at a segment's start: an ordinary star
    ],
)
def test_glob_regex(pattern, path, matches):
    assert (config.glob_regex(pattern).match(path) is not None) is matches


# --- 7. nothing is written through a link in the cache folder ------------------------------


@pytest.mark.parametrize("name", ["CACHEDIR.TAG", ".gitignore"])
def test_a_link_in_the_cache_folder_is_not_written_through(tmp_path, capsys, monkeypatch, name):
    project_dir, outside = tmp_path / "project", tmp_path / "outside"
    outside.mkdir()
    write(project_dir / "a.py", GL002)
    (project_dir / ".gradlint_cache").mkdir()
    (project_dir / ".gradlint_cache" / name).symlink_to(outside / "planted")
    monkeypatch.chdir(project_dir)
    monkeypatch.delenv(cli.CACHE_DIR_ENV, raising=False)
    assert cli.main(["-j1", "."]) == 1
    assert findings(capsys.readouterr().out) == {("a.py", 3, "GL002")}
    assert list(outside.iterdir()) == []
    assert list((project_dir / ".gradlint_cache").glob("*/*.json"))  # the cache still works


@pytest.mark.parametrize("linked", ["cache folder", "version folder"])
def test_a_cache_folder_that_is_a_link_is_refused_and_the_run_goes_on(
    tmp_path, capsys, monkeypatch, linked
):
    project_dir, outside = tmp_path / "project", tmp_path / "outside"
    outside.mkdir()
    write(project_dir / "a.py", GL002)
    cache_dir = project_dir / ".gradlint_cache"
    if linked == "cache folder":
        cache_dir.symlink_to(outside, target_is_directory=True)
        shown = cache_dir
    else:
        cache_dir.mkdir()
        (cache_dir / __version__).symlink_to(outside, target_is_directory=True)
        shown = cache_dir / __version__
    monkeypatch.chdir(project_dir)
    monkeypatch.delenv(cli.CACHE_DIR_ENV, raising=False)
    for _ in range(2):
        assert cli.main(["-j1", "."]) == 1
        out, err = capsys.readouterr()
        assert findings(out) == {("a.py", 3, "GL002")}
        assert err.splitlines() == [
            f"gradlint: warning: not using the cache: {shown} is a symbolic link"
        ]
    assert list(outside.iterdir()) == []


def test_a_cache_folder_reached_through_a_link_out_of_the_project_is_refused(
    tmp_path, capsys, monkeypatch
):
    project_dir, outside = tmp_path / "project", tmp_path / "outside"
    outside.mkdir()
    write(project_dir / "a.py", GL002)
    write(project_dir / "pyproject.toml", '[tool.gradlint]\ncache-dir = "build/cache"\n')
    (project_dir / "build").symlink_to(outside, target_is_directory=True)
    monkeypatch.chdir(project_dir)
    monkeypatch.delenv(cli.CACHE_DIR_ENV, raising=False)
    assert cli.main(["-j1", "."]) == 1
    _, err = capsys.readouterr()
    assert "not using the cache" in err and "outside the project" in err
    assert list(outside.iterdir()) == []


# --- 8. a cache folder at or above the project root is exit 2 -----------------------------


@pytest.mark.parametrize("value", ["", ".", "..", "./"])
def test_a_configured_cache_dir_at_or_above_the_root_is_a_configuration_error(
    tmp_path, capsys, monkeypatch, value
):
    project_dir = tmp_path / "project"
    write(project_dir / "a.py", GL002)
    write(project_dir / "pyproject.toml", f'[tool.gradlint]\ncache-dir = "{value}"\n')
    monkeypatch.chdir(project_dir)
    monkeypatch.delenv(cli.CACHE_DIR_ENV, raising=False)
    assert cli.main(["-j1", "."]) == 2
    _, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and "cache-dir" in err and "project root" in err, err
    assert not (project_dir / ".gitignore").exists()
    assert not (tmp_path / ".gitignore").exists()


@pytest.mark.parametrize("argv", [["--cache-dir", "."], ["--cache-dir", ""]])
def test_a_cache_dir_option_at_the_root_is_a_usage_error(tmp_path, capsys, monkeypatch, argv):
    write(tmp_path / "a.py", GL002)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--isolated", "-j1", *argv, "."]) == 2
    _, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and err.startswith("gradlint: error: --cache-dir"), err
    assert not (tmp_path / ".gitignore").exists()
