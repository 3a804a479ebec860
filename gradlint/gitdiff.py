"""`--diff-base REF`: the files a change touches, asked of git.

The changed files are those of `git diff REF...HEAD` (what the branch changed since it
left REF, as a pull request shows it), plus what is staged or modified in the working
tree, plus untracked files that are not ignored. Deleted files are reported too: the files
that imported them must be linted again.

Each path is asked of its own repository, so the result does not depend on the order of
the paths. Inside a repository, a checked-out submodule's files count as changed when they
differ from the commit the repository recorded for it at the base, and every file of a
submodule added since then, or of a nested repository git does not track, counts.

git runs on repositories gradlint did not make: their configuration may name programs
(`core.fsmonitor` is run by every command that looks at the working tree), so each call
turns that off, and none writes to the repository.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable

# `core.fsmonitor` in a repository's own .git/config names a program git would run.
GIT = ["git", "-c", "core.fsmonitor=false"]
# No opportunistic index refresh: asking git about a repository must not write to it.
GIT_ENV = {"GIT_OPTIONAL_LOCKS": "0"}
GITLINK_MODE = b"160000"


class GitError(Exception):
    """git is missing, this is not a repository, or the ref is not a commit."""


class _Failed(GitError):
    pass


def _git(args: list[str], cwd: str) -> bytes:
    try:
        done = subprocess.run(
            [*GIT, *args],
            cwd=cwd,
            env={**os.environ, **GIT_ENV},
            capture_output=True,
            timeout=120,
            check=False,
        )
    except FileNotFoundError:
        raise GitError("--diff-base needs git, and git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"--diff-base: `git {' '.join(args)}` did not finish") from None
    if done.returncode != 0:
        message = os.fsdecode(done.stderr).strip().splitlines()
        raise _Failed(message[-1] if message else f"git exited with {done.returncode}")
    return done.stdout


def _names(output: bytes, top: str) -> set[str]:
    return {
        os.path.realpath(os.path.join(top, os.fsdecode(name)))
        for name in output.split(b"\0")
        if name
    }


def _every_file(folder: str) -> set[str]:
    """Every file under `folder` but git's own: a repository whose history is not
    compared (new since the base, or not tracked at all) is changed throughout."""
    found: set[str] = set()
    for parent, folders, files in os.walk(folder):
        folders[:] = [name for name in folders if name != ".git"]
        found.update(os.path.realpath(os.path.join(parent, name)) for name in files)
    return found


def _existing_folder(path: str) -> str:
    """`path` if it is a folder, else the closest folder above it that exists (git must
    run somewhere; a path that does not exist is discovery's to report)."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    while folder and not os.path.isdir(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return folder or os.curdir


def _toplevel(path: str) -> str:
    try:
        return os.fsdecode(_git(["rev-parse", "--show-toplevel"], _existing_folder(path))).strip()
    except _Failed:
        raise GitError(f"--diff-base needs a git repository, and {path} is not in one") from None


def changed_files(ref: str, paths: Iterable[str]) -> set[str]:
    """Real paths of the files changed since `ref`, each of `paths` (files or folders)
    asked of the repository that holds it. Raises GitError with a one-line reason."""
    tops = {_toplevel(os.path.abspath(path)) for path in paths}
    changed: set[str] = set()
    for top in sorted(tops):
        changed |= _branch_changes(ref, top)
    return changed


def _branch_changes(ref: str, top: str) -> set[str]:
    try:
        _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], top)
    except _Failed:
        raise GitError(f"--diff-base: HEAD has no commits yet in {top}") from None
    try:
        _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], top)
    except _Failed:
        raise GitError(
            f"--diff-base: {ref!r} is not a commit of the repository {top} (in a shallow CI "
            "checkout, fetch it first, e.g. `git fetch origin main --depth=50`)"
        ) from None
    try:
        # What `git diff REF...HEAD` compares with.
        base = os.fsdecode(_git(["merge-base", "--end-of-options", ref, "HEAD"], top)).strip()
    except _Failed as exc:
        raise GitError(f"--diff-base: cannot compare {ref!r} with HEAD: {exc}") from None
    return _changes_since(base, top)


def _changes_since(base: str, top: str) -> set[str]:
    """The files of the repository at `top` that differ from commit `base` in HEAD, in
    the index or in the working tree, or that are untracked; and those of its
    submodules, compared with what `base` recorded for them."""
    diff = ["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv"]
    committed = _git([*diff, base, "HEAD", "--"], top)
    working = _git([*diff, "HEAD", "--"], top)
    untracked = _git(["ls-files", "--others", "--exclude-standard", "-z"], top)
    changed = _names(committed, top) | _names(working, top)
    for name in untracked.split(b"\0"):
        if name.endswith(b"/"):  # a repository of its own inside this one
            changed |= _every_file(os.path.join(top, os.fsdecode(name)))
        elif name:
            changed.add(os.path.realpath(os.path.join(top, os.fsdecode(name))))
    for path, recorded in _submodules(base, top).items():
        folder = os.path.join(top, path)
        if not os.path.exists(os.path.join(folder, ".git")):
            continue  # not checked out: nothing of it is on disk to lint
        try:
            if recorded is None:
                raise _Failed("added since the base")
            _git(["cat-file", "-e", f"{recorded}^{{commit}}"], folder)
            changed |= _changes_since(recorded, folder)
        except _Failed:
            # New since the base, its recorded commit not fetched, or a state git
            # cannot compare: all of it, rather than miss a change.
            changed |= _every_file(folder)
    return changed


def _submodules(base: str, top: str) -> dict[str, str | None]:
    """The index's submodules (gitlinks) -> the commit `base` recorded for each, or None
    where `base` had none."""
    paths = []
    for entry in _git(["ls-files", "--stage", "-z"], top).split(b"\0"):
        mode, _, rest = entry.partition(b" ")
        if mode == GITLINK_MODE:
            paths.append(os.fsdecode(rest.partition(b"\t")[2]))
    if not paths:
        return {}
    recorded: dict[str, str | None] = dict.fromkeys(paths)
    listing = _git(["ls-tree", "-z", base, "--", *paths], top)
    for entry in listing.split(b"\0"):
        info, _, path = entry.partition(b"\t")
        fields = info.split()
        if len(fields) == 3 and fields[0] == GITLINK_MODE:
            recorded[os.fsdecode(path)] = os.fsdecode(fields[2])
    return recorded
