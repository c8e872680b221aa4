"""Files written whole or not at all, and a full disk as one typed error.

Every file delegate writes (hand-offs and their pending notes, capsules and the
capsule inbox, compact returns, hook settings, the panel's kept first page) goes
through :func:`write_temporary` and a rename or link of the temporary file: a
reader sees the old file or the new one, never half of one. When the file system
is full (``ENOSPC``) or the person is over their quota (``EDQUOT``), the write
raises :class:`~core.errors.DiskFull` naming the folder, the temporary file is
removed and the target is untouched, so once space is freed the same command
works.
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from core.errors import DiskFull

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)

Writer = Callable[[int, memoryview], int]
"""How bytes reach an open file: ``os.write``'s shape (a test injects ``ENOSPC`` here)."""


LOW_SPACE_BYTES = 1024 * 1024
"""Below this much room an I/O error of SQLite's is taken for a full disk: SQLite says
only ``disk I/O error`` when it cannot grow its shared-memory file (``-shm``)."""

_SQLITE_FULL = 13
_SQLITE_IOERR = 10


def is_disk_full(exc: BaseException) -> bool:
    """True when ``exc`` is the file system refusing for want of space or quota."""
    return isinstance(exc, OSError) and exc.errno in FULL_ERRNOS


def little_room(folder: str | os.PathLike[str]) -> bool:
    """True when the file system holding ``folder`` has (almost) no room for this user."""
    try:
        info = os.statvfs(folder)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < LOW_SPACE_BYTES


def sqlite_disk_full(exc: BaseException, folder: str | os.PathLike[str]) -> bool:
    """True when a SQLite error on a file in ``folder`` comes from a full disk:
    ``SQLITE_FULL`` itself, or an I/O error while its file system has no room."""
    code = getattr(exc, "sqlite_errorcode", None)
    text = str(exc).lower()
    if code == _SQLITE_FULL or "database or disk is full" in text:
        return True
    io_error = (code is not None and code & 0xFF == _SQLITE_IOERR) or "disk i/o error" in text
    return io_error and little_room(folder)


@contextlib.contextmanager
def disk_full_as_error(folder: str | os.PathLike[str], what: str = "") -> Iterator[None]:
    """Turn ``ENOSPC`` / ``EDQUOT`` raised inside into :class:`DiskFull` naming ``folder``."""
    try:
        yield
    except OSError as exc:
        if is_disk_full(exc):
            raise DiskFull(os.fspath(folder), what) from None
        raise


def write_temporary(
    folder: Path,
    data: bytes,
    *,
    dir_fd: int | None = None,
    mode: int = 0o644,
    prefix: str = ".delegate-",
    write: Writer = os.write,
) -> str:
    """``data`` in a new temporary file of ``folder`` (or of the open folder ``dir_fd``),
    synced; its name (relative to ``dir_fd`` when given, else a full path).

    On any failure the temporary file is removed; a full disk raises :class:`DiskFull`.
    """
    name = f"{prefix}{uuid.uuid4().hex}.tmp"
    temporary = name if dir_fd is not None else os.fspath(folder / name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | _NO_FOLLOW
    with disk_full_as_error(folder):
        fd = os.open(temporary, flags, mode, dir_fd=dir_fd)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=dir_fd)
            raise
    return temporary


def replace_atomically(
    folder: Path,
    name: str,
    data: bytes,
    *,
    dir_fd: int | None = None,
    mode: int = 0o644,
    exact_mode: bool = False,
    prefix: str = ".delegate-",
    write: Writer = os.write,
) -> Path:
    """Write ``folder/name`` whole, replacing what was there (readers see old or new).

    A link or folder planted at ``name`` is replaced as a name, never followed.
    ``exact_mode``: the file gets ``mode`` whatever the umask (a settings file keeps
    its permissions). A full disk raises :class:`DiskFull`; the old file is kept then.
    """
    temporary = write_temporary(folder, data, dir_fd=dir_fd, mode=mode, prefix=prefix, write=write)
    try:
        with disk_full_as_error(folder):
            if exact_mode:
                os.chmod(temporary, mode, dir_fd=dir_fd)
            target = name if dir_fd is not None else os.fspath(folder / name)
            os.replace(temporary, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=dir_fd)
        raise
    return folder / name
