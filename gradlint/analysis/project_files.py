"""Where a project is and which files its searches read: the folder its files may be
called from (project_root), and the Python files and notebooks under it.

Kept apart from `analysis.project` so that a run served from the cache can stamp them
(stamps.tree_stamp) and tell the root again without importing the analysis.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

# Folders never searched for callers: environments, caches, build output.
_SKIPPED_FOLDERS = frozenset(
    {"node_modules", "site-packages", "__pycache__", "build", "dist", "venv", "env"}
)
# The files searched for callers: modules, and notebooks (their code cells).
_SEARCHED_SUFFIXES = (".py", ".ipynb")
# A project with more files than this is not searched for callers.
MAX_PROJECT_FILES = 5000
# Larger files are neither summarised nor searched: a generated module is no helper
# library.
MAX_SUMMARY_BYTES = 2_000_000
# root -> (its Python files or None, the mtime of every folder walked)
_FILES_MEMO: dict[str, tuple[list[str] | None, dict[str, int]]] = {}
_FILES_LOCK = threading.Lock()


def project_files(root: str) -> list[str] | None:
    """The Python files and notebooks under root, sorted; None when there are more than
    MAX_PROJECT_FILES. Memoised per process while no folder walked has changed (a new
    file changes its folder's mtime), so a language server sees files come and go."""
    with _FILES_LOCK:
        memo = _FILES_MEMO.get(root)
    if memo is not None and _folders_unchanged(memo[1]):
        return memo[0]
    found: list[str] | None = []
    folders: dict[str, int] = {}
    for folder, subfolders, names in os.walk(root):
        try:
            folders[folder] = os.stat(folder).st_mtime_ns
        except OSError:
            continue
        subfolders[:] = sorted(
            d for d in subfolders if not d.startswith(".") and d not in _SKIPPED_FOLDERS
        )
        assert found is not None
        found.extend(
            os.path.join(folder, n) for n in sorted(names) if n.endswith(_SEARCHED_SUFFIXES)
        )
        if len(found) > MAX_PROJECT_FILES:
            found = None
            break
    with _FILES_LOCK:
        _FILES_MEMO[root] = (found, folders)
    return found


def _folders_unchanged(folders: dict[str, int]) -> bool:
    for folder, mtime in folders.items():
        try:
            if os.stat(folder).st_mtime_ns != mtime:
                return False
        except OSError:
            return False
    return True


def package_root_of(directory: str) -> str:
    """The folder above the outermost package containing `directory` (where `import
    pkg.mod` resolves from)."""
    current = directory
    while os.path.isfile(os.path.join(current, "__init__.py")):
        above = os.path.dirname(current)
        if above == current:
            break
        current = above
    return current


_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
# folder -> the nearest folder with a project marker at or above it (project_folder)
_PROJECT_FOLDERS: dict[str, str | None] = {}


# How far above a file its repository's marker is looked for: recipes and experiments
# sit deep (`egs/arctic/vc2/local/evaluate.py`, `src/systems/pendulum/simulation/`) and
# import the repository's packages from its root.
_MARKER_DEPTH = 6


def project_folder(folder: str) -> str | None:
    """The nearest folder at or above `folder` (_MARKER_DEPTH above at most) with a
    project marker (`setup.py`, `pyproject.toml`, `.git`): where the repository's own
    packages are importable from. Memoised per folder: every import of every file asks."""
    with _FILES_LOCK:
        if folder in _PROJECT_FOLDERS:
            return _PROJECT_FOLDERS[folder]
    found = None
    current = folder
    for _ in range(_MARKER_DEPTH + 1):
        if any(os.path.exists(os.path.join(current, m)) for m in _PROJECT_MARKERS):
            found = current
            break
        above = os.path.dirname(current)
        if above == current:
            break
        current = above
    with _FILES_LOCK:
        _PROJECT_FOLDERS[folder] = found
    return found


def project_root(path: str) -> str:
    """The folder whose files may call into `path`: its repository's (project_folder),
    else the folder above its outermost package."""
    here = str(Path(path).absolute().parent)
    return project_folder(here) or package_root_of(here)
