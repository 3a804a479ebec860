"""How a cached result records what it depended on, and the check that needs no reading.

A dependency maps a file to `size:mtime:digest`: the digest of the file's summary, or of
its text (`TEXT_PREFIX`) where only its text was read. A caller search is keyed
`SEARCH_PREFIX` + the query, stamped `-:-:` + `SEARCH_PREFIX` + the digest of what it
found. A file whose size and mtime are as recorded is taken as unchanged without being
read, so a run served from the cache is a stat per dependency; anything else is for
`gradlint.analysis.project.dependencies_unchanged`, which reads and summarises (and
imports more than a warm run needs).
"""

from __future__ import annotations

import os

TEXT_PREFIX = "text-"
SEARCH_PREFIX = "search:"


def file_stamp(size: int | str, mtime: int | str, digest: str) -> str:
    return f"{size}:{mtime}:{digest}"


def search_stamp(digest: str) -> str:
    return file_stamp("-", "-", SEARCH_PREFIX + digest)


def split_stamp(stamp: str) -> tuple[str, str, str]:
    """(size, mtime, digest) of a file's stamp."""
    size, _, rest = stamp.partition(":")
    mtime, _, digest = rest.partition(":")
    return size, mtime, digest


def stat_matches(path: str, stamp: str) -> bool | None:
    """Does the file have the size and mtime its stamp records? None when it is gone
    or cannot be read."""
    size, mtime, _ = split_stamp(stamp)
    try:
        info = os.stat(path)
    except OSError:
        return None
    return str(info.st_size) == size and str(info.st_mtime_ns) == mtime


def unchanged_by_stat(dependencies: dict[str, str]) -> bool:
    """True when every dependency is a file with the size and mtime recorded for it.
    False does not mean changed, only that a closer look is needed: a caller search to
    run again, a file touched, moved or gone."""
    return all(
        not path.startswith(SEARCH_PREFIX) and stat_matches(path, stamp)
        for path, stamp in dependencies.items()
    )
