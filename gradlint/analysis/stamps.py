"""How a cached result records what it depended on, and the check that needs no reading.

A dependency maps a file to `size:times:digest`: the digest of the file's summary, or of
its text (`TEXT_PREFIX`) where only its text was read. A caller search is keyed
`SEARCH_PREFIX` + the query, stamped `-:-:` + `SEARCH_PREFIX` + the digest of what it
found; a search for the definitions of a method's name `DEFINITIONS_PREFIX` + the name and
the root; a search for what the classes store in an attribute `ATTRIBUTES_PREFIX` + its name
and the root; a search for a class's subclasses `SUBCLASSES_PREFIX` + its name and the root;
a search for the other files that name an attribute `READERS_PREFIX` + its name and the root.
A file whose size and times (`stat_version`) are as recorded is taken as unchanged without
being read, so a run served from the cache is a stat per dependency; anything else is for
`gradlint.analysis.project.dependencies_unchanged`, which reads and summarises (and
imports more than a warm run needs).
"""

from __future__ import annotations

import os

TEXT_PREFIX = "text-"
SEARCH_PREFIX = "search:"
# A search for the methods of a name the project's classes define: a search too, so a
# stat alone never answers for it.
DEFINITIONS_PREFIX = SEARCH_PREFIX + "definitions:"
# A search for what the project's classes store in an attribute of `self` of a name.
ATTRIBUTES_PREFIX = SEARCH_PREFIX + "attributes:"
# A search for the project's subclasses of a class and what their `__init__` hands up.
SUBCLASSES_PREFIX = SEARCH_PREFIX + "subclasses:"
# A search for the project's other files whose text has an attribute's name: where an
# object's attribute may be read outside its class.
READERS_PREFIX = SEARCH_PREFIX + "readers:"


def stat_version(info: os.stat_result) -> str:
    """What tells, without reading a file, that it may have changed: its mtime and, as
    git's index records, its ctime. Extracting an archive, `rsync -a` and `cp -p` give a
    changed file its old mtime (and it may keep its size), but the ctime is the time of
    that write, and no program can set it."""
    return f"{info.st_mtime_ns}.{info.st_ctime_ns}"


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
    """Does the file have the size and times its stamp records? None when it is gone
    or cannot be read."""
    size, times, _ = split_stamp(stamp)
    try:
        info = os.stat(path)
    except OSError:
        return None
    return str(info.st_size) == size and stat_version(info) == times


def unchanged_by_stat(dependencies: dict[str, str]) -> bool:
    """True when every dependency is a file with the size and times recorded for it.
    False does not mean changed, only that a closer look is needed: a caller search to
    run again, a file touched, moved or gone."""
    return all(
        not path.startswith(SEARCH_PREFIX) and stat_matches(path, stamp)
        for path, stamp in dependencies.items()
    )
