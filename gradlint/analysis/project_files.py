"""Which files a project's searches read: the Python files and notebooks under its root.

Kept apart from `analysis.project` so that a run served from the cache can stamp them
(stamps.tree_stamp) without importing the analysis.
"""

from __future__ import annotations

import os
import threading

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
