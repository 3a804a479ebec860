"""`--diff-base REF`: the files a change touches, asked of git.

The changed files are those of `git diff REF...HEAD` (what the branch changed since it
left REF, as a pull request shows it), plus what is staged or modified in the working
tree, plus untracked files that are not ignored. Deleted files are reported too: the files
that imported them must be linted again.
"""

from __future__ import annotations

import os
import subprocess


class GitError(Exception):
    """git is missing, this is not a repository, or the ref is not a commit."""


def _git(args: list[str], cwd: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, timeout=120, check=False
        )
    except FileNotFoundError:
        raise GitError("--diff-base needs git, and git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"--diff-base: `git {' '.join(args)}` did not finish") from None
    if done.returncode != 0:
        message = os.fsdecode(done.stderr).strip().splitlines()
        raise _Failed(message[-1] if message else f"git exited with {done.returncode}")
    return done.stdout


class _Failed(GitError):
    pass


def _names(output: bytes, top: str) -> set[str]:
    return {
        os.path.realpath(os.path.join(top, os.fsdecode(name)))
        for name in output.split(b"\0")
        if name
    }


def changed_files(ref: str, start: str) -> set[str]:
    """Real paths of the files changed since `ref`, from the repository containing
    `start` (a folder). Raises GitError with a one-line reason."""
    try:
        top = os.fsdecode(_git(["rev-parse", "--show-toplevel"], start)).strip()
    except _Failed:
        raise GitError(f"--diff-base needs a git repository, and {start} is not in one") from None
    try:
        _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], top)
    except _Failed:
        raise GitError(
            f"--diff-base: {ref!r} is not a commit of this repository (in a shallow CI "
            "checkout, fetch it first, e.g. `git fetch origin main --depth=50`)"
        ) from None
    try:
        committed = _git(["diff", "--name-only", "-z", "--no-renames", f"{ref}...HEAD"], top)
    except _Failed as exc:
        raise GitError(f"--diff-base: cannot compare {ref!r} with HEAD: {exc}") from None
    working = _git(["diff", "--name-only", "-z", "--no-renames", "HEAD"], top)
    untracked = _git(["ls-files", "--others", "--exclude-standard", "-z"], top)
    return _names(committed, top) | _names(working, top) | _names(untracked, top)
