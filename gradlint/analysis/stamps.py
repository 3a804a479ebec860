"""How a cached result records what it depended on, and the check that needs no reading.

A dependency maps a file to `size:times:digest`: the digest of the file's summary, or of
its text (`TEXT_PREFIX`) where only its text was read. A caller search is keyed
`SEARCH_PREFIX` + the query, stamped `-:-:` + `SEARCH_PREFIX` + the digest of what it
found; a search for the definitions of a method's name `DEFINITIONS_PREFIX` + the name and
the root; a search for what the classes store in an attribute `ATTRIBUTES_PREFIX` + its name
and the root; a search for a class's subclasses `SUBCLASSES_PREFIX` + its name and the root;
a search for the other files that name an attribute `READERS_PREFIX` + its name and the root.
Beside a lint's searches, `TREE_PREFIX` + their root is stamped `-:-:` + the digest of the
files a search there may read, each with its size and times (tree_stamp).
A file whose size and times (`stat_version`) are as recorded is taken as unchanged without
being read, and so are the searches while their root's files are (a walk and a stat per
file), so a run served from the cache reads nothing; anything else is for
`gradlint.analysis.project.dependencies_unchanged`, which reads and summarises (and
imports more than a warm run needs).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable

from gradlint.analysis.project_files import MAX_SUMMARY_BYTES, project_files, project_root

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
# The files under a searched root, with their sizes and times: not a search itself, the
# check that spares reading them again.
TREE_PREFIX = "tree:"
# A search under the root that gave no answer (too many files, a receiver of unknown
# class): nothing to ask again but the files it would read, so only an unchanged tree
# vouches for it.
UNANSWERED_PREFIX = "unanswered:"
UNANSWERED_STAMP = "-:-:-"


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


def tree_key(root: str) -> str:
    return TREE_PREFIX + root


def file_state(path: str) -> tuple[str, int, str] | None:
    """(path, size, times) of a file a search may read; None when it cannot be read or
    is too large to be read by one (MAX_SUMMARY_BYTES), whatever else changes in it."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if info.st_size > MAX_SUMMARY_BYTES:
        return None
    return (path, info.st_size, stat_version(info))


def tree_stamp(
    root: str, state_of: Callable[[str], tuple[str, int, str] | None] = file_state
) -> str:
    """A digest of the files project_files finds under root, each with its size and
    times as `state_of` gives them (file_state; a lint passes the states its reads are
    keyed on, so the stamp is of what it read, not of a save made since), or a mark of a
    project too large to search. While it is equal, every search under root reads
    the same texts (a file rewritten with its old mtime has a new ctime) and finds what
    it found."""
    files = project_files(root)
    if files is None:
        return file_stamp("-", "-", "too-many")  # searched nowhere, until some go
    parts: list[str] = []
    for path in files:
        state = state_of(path)
        parts.append(f"{path}\0-" if state is None else f"{path}\0{state[1]}\0{state[2]}")
    data = "\n".join(parts).encode("utf-8", "surrogateescape")
    return file_stamp("-", "-", hashlib.sha256(data).hexdigest()[:16])


def unanswered_key(root: str) -> str:
    return UNANSWERED_PREFIX + root


def tree_stamp_in(root: str, trees: dict[str, str] | None) -> str:
    """tree_stamp, taken once per `trees` (one run's lookups, made before it lints or
    writes anything: a tree of 2,000 files with an entry each is not 2,000 walks)."""
    if trees is None:
        return tree_stamp(root)
    if root not in trees:
        trees[root] = tree_stamp(root)
    return trees[root]


def unchanged_by_stat(dependencies: dict[str, str], trees: dict[str, str] | None = None) -> bool:
    """True when every dependency is a file with the size and times recorded for it, and
    every searched root's files are (tree_stamp, memoised in `trees`). False does not
    mean changed, only that a closer look is needed: a search to run again, a file
    touched, moved or gone."""
    searched = False
    for path, stamp in dependencies.items():
        if path.startswith(TREE_PREFIX):
            if tree_stamp_in(path.removeprefix(TREE_PREFIX), trees) != stamp:
                return False
        elif path.startswith((SEARCH_PREFIX, UNANSWERED_PREFIX)):
            searched = True
        elif not stat_matches(path, stamp):
            return False
    # a search is answered by its root's files: an entry written before roots were
    # stamped has none, and needs the closer look
    return not searched or any(path.startswith(TREE_PREFIX) for path in dependencies)


def restamped(dependencies: dict[str, str], trees: dict[str, str] | None = None) -> dict[str, str]:
    """The stamps with each file's size and times, and each searched root's tree, as
    they are now, the digests kept. Taken before a closer look finds the dependencies
    unchanged (a checkout touches every file), so that the next run is a stat again; a
    file changed after them only makes them stale."""
    found: dict[str, str] = {}
    for path, stamp in dependencies.items():
        if path.startswith(TREE_PREFIX):
            found[path] = tree_stamp_in(path.removeprefix(TREE_PREFIX), trees)
        elif path.startswith((SEARCH_PREFIX, UNANSWERED_PREFIX)):
            found[path] = stamp
        else:
            try:
                info = os.stat(path)
            except OSError:
                found[path] = stamp
                continue
            found[path] = file_stamp(info.st_size, stat_version(info), split_stamp(stamp)[2])
    return found


def roots_unchanged(dependencies: dict[str, str], linted: str) -> bool:
    """Do the linted file's searches still look under the root they were stamped for?
    A marker added or removed (`setup.cfg`, `.git`) moves the root, and with it the
    files a search reads: no stamp of the old root's files can answer for that."""
    return all(
        project_root(linted) == path.removeprefix(TREE_PREFIX)
        for path in dependencies
        if path.startswith(TREE_PREFIX)
    )
