"""Reading sources with a bound, and writing fixes without ever leaving a file half done.

    read_source(path, limit) -> bytes          raises SourceReadError (one line, per file)
    read_regular(path, limit) -> bytes         a file the repository controls; raises
                                               SourceReadError
    read_stream(stream, limit) -> bytes        stdin; raises TooLarge with what was read
    decode_source(data, path) -> str           raises SourceError (the file's error)
    replace_file(path, data, original)         raises FileChanged or OSError; the file
                                               holds `original` or `data`, never a mix
    write_file(path, data)                     the same for a file gradlint owns (a
                                               baseline), which may not exist yet

Only regular files and FIFOs (`<(...)`) are read: a character device such as /dev/zero,
a socket or a block device is refused before it is opened, since opening some devices
has effects of its own. Everything read is capped at `limit` bytes (0: no cap), so an
endless or huge input costs at most that much memory before it is refused.

Files gradlint reads on its own account (the cache, a `.gitignore`, a configuration
file, an imported helper, the project's files searched for callers) are whatever the
repository holds: `read_regular` reads only a regular file, never a FIFO (which would
block until someone writes) or a link to a device, and never more than its limit.

A fix is written to a temporary file in the target's own directory (so the rename never
crosses a file system), given the target's permission bits (and owner, where allowed),
flushed to disk, and renamed over the target with os.replace, which is atomic: a full
disk, a file size limit or a crash leaves the original byte for byte. A symbolic link is
written through: its target is replaced and the link stays a link. Just before the
rename the target is read again; if it no longer holds what was linted (an editor saved
it meanwhile), nothing is written and FileChanged says so.
"""

from __future__ import annotations

import errno
import io
import os
import stat as stat_module
import tokenize
from collections.abc import Callable

from gradlint.diagnostics import FileError
from gradlint.results import SourceError

# 5 MiB: the largest hand-written Python files are a few hundred KiB; LibCST needs up to
# about 1 GB of memory per MB of dense code, so this bounds one file's cost.
DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024
_CHUNK = 1024 * 1024


class SourceReadError(Exception):
    """A file that is not read (or not read whole): the message is for the user."""


class TooLarge(SourceReadError):
    def __init__(self, message: str, head: bytes = b"") -> None:
        super().__init__(message)
        self.head = head  # what was read before the cap was hit (streams only)


class FileChanged(Exception):
    """The file on disk is no longer what was linted; the fix was not written."""


def format_size(size: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


def too_large_message(limit: int, size: int | None = None) -> str:
    what = f"file is {format_size(size)}, over" if size is not None else "file is over"
    return f"{what} the {format_size(limit)} limit (--max-file-size); not linted"


def file_kind(mode: int) -> str | None:
    """None for what gradlint reads (a regular file, a FIFO), else what it is."""
    if stat_module.S_ISREG(mode) or stat_module.S_ISFIFO(mode):
        return None
    if stat_module.S_ISCHR(mode):
        return "a character device"
    if stat_module.S_ISBLK(mode):
        return "a block device"
    if stat_module.S_ISSOCK(mode):
        return "a socket"
    if stat_module.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def not_a_file_message(kind: str) -> str:
    return f"cannot read: {kind}, not a regular file"


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def read_source(path: str, limit: int) -> bytes:
    """The bytes of a regular file or FIFO, at most `limit` of them (0: no limit)."""
    try:
        kind = file_kind(os.stat(path).st_mode)
        if kind is not None:
            raise SourceReadError(not_a_file_message(kind))
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            kind = file_kind(info.st_mode)  # it may have been swapped since the stat
            if kind is not None:
                raise SourceReadError(not_a_file_message(kind))
            if limit and stat_module.S_ISREG(info.st_mode) and info.st_size > limit:
                raise TooLarge(too_large_message(limit, info.st_size))
            data = handle.read(limit + 1) if limit else handle.read()
    except OSError as exc:
        raise SourceReadError(f"cannot read: {_reason(exc)}") from None
    if limit and len(data) > limit:
        raise TooLarge(too_large_message(limit))
    return data


# Opening a FIFO for reading waits for a writer; O_NONBLOCK returns at once, and the
# descriptor's own type is then checked. (It changes nothing for a regular file.)
_REGULAR_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


def read_regular(path: str, limit: int) -> bytes:
    """The bytes of a regular file (through links), at most `limit` of them (0: no
    limit); anything else, or more, is a SourceReadError."""
    try:
        # Refused before it is opened: opening some devices has effects of its own.
        _require_regular(os.stat(path).st_mode)
        fd = os.open(path, _REGULAR_FLAGS | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SourceReadError(f"cannot read: {_reason(exc)}") from None
    try:
        info = os.fstat(fd)
        _require_regular(info.st_mode)  # it may have been swapped since the stat
        if limit and info.st_size > limit:
            raise TooLarge(
                f"file is {format_size(info.st_size)}, over the {format_size(limit)} limit"
            )
        chunks: list[bytes] = []
        size = 0
        while True:  # a file that grows while it is read stops at the limit too
            chunk = os.read(fd, _CHUNK if not limit else min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if limit and size > limit:
                raise TooLarge(f"file is over the {format_size(limit)} limit")
    except OSError as exc:
        raise SourceReadError(f"cannot read: {_reason(exc)}") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def _require_regular(mode: int) -> None:
    if not stat_module.S_ISREG(mode):
        kind = "a FIFO" if stat_module.S_ISFIFO(mode) else file_kind(mode)
        raise SourceReadError(not_a_file_message(kind or "a special file"))


def read_stream(stream, limit: int) -> bytes:
    """Read a binary stream to its end, or raise TooLarge (holding what was read) once
    more than `limit` bytes came."""
    if not limit:
        return stream.read()
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(too_large_message(limit).replace("file is", "input is"), data)
    return data


def copy_stream(source, target) -> None:
    """The rest of `source` to `target`, a chunk at a time."""
    while True:
        chunk = source.read(_CHUNK)
        if not chunk:
            return
        target.write(chunk)


def decode_source(data: bytes, path: str) -> str:
    """Decode as Python does for a file without a coding cookie we honour: UTF-8, BOM ok."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceError(FileError(path, f"cannot decode: {exc}")) from None
    try:
        text = data.decode("utf-8-sig" if encoding in ("utf-8", "utf-8-sig") else encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = getattr(exc, "reason", str(exc))
        start = getattr(exc, "start", None)
        line = data[:start].count(b"\n") + 1 if start is not None else 0
        raise SourceError(FileError(path, f"not valid {encoding}: {reason}", line, 0)) from None
    if "\x00" in text:
        raise SourceError(FileError(path, "source contains a NUL byte"))
    return text


def _holds(path: str, expected: bytes) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(len(expected) + 1) == expected
    except OSError:
        return False


def replace_file(path: str, data: bytes, original: bytes) -> None:
    """Replace the file at `path` (through a symbolic link) with `data`, atomically, if
    it still holds `original`. Raises FileChanged when it does not, OSError when it
    cannot be written; in both cases the file is left as it was."""
    target = os.path.realpath(path)
    info = os.stat(target)
    if not stat_module.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", path)
    # Renaming over a file needs only the folder to be writable: a file the user may
    # not write stays unwritten, as when it was written in place.
    if not os.access(target, os.W_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)

    def as_the_original(fd: int) -> None:
        try:  # as the original's owner where allowed (root, or one's own file)
            os.fchown(fd, info.st_uid, info.st_gid)
        except OSError:
            pass
        # After the chown, which may clear set-id bits.
        os.fchmod(fd, stat_module.S_IMODE(info.st_mode))

    def unchanged() -> None:
        if not _holds(target, original):
            raise FileChanged(path)

    _write_beside(target, data, as_the_original, unchanged)


def _write_beside(
    target: str, data: bytes, set_mode: Callable[[int], None], before_rename: Callable[[], None]
) -> None:
    """Write `data` to a temporary file in `target`'s folder, give it its mode, sync it,
    and rename it over `target`; on any failure the temporary file is removed and
    `target` is left as it was."""
    import tempfile  # here: most runs write nothing, and tempfile loads shutil and random

    directory, name = os.path.split(target)
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".gradlint-tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            set_mode(handle.fileno())
            os.fsync(handle.fileno())
        before_rename()
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def write_file(path: str, data: bytes) -> None:
    """Write `data` to `path`, which may not exist yet, atomically: a failed write leaves
    the previous file (or no file) as it was. An existing file is replaced as a fix
    replaces it (its permission bits kept, a link written through); a new one gets the
    permission bits the umask allows, as open() would give it."""
    target = os.path.realpath(path)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None:
        if not stat_module.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        with open(target, "rb") as handle:
            original = handle.read()
        replace_file(path, data, original)
        return

    def as_a_new_file(fd: int) -> None:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)

    _write_beside(target, data, as_a_new_file, lambda: None)
