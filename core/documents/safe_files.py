"""Files under a repository's ``.delegate/`` written and read without trusting the disk.

Shared by every kind of context document (hand-offs, capsules, the capsule inbox):
every folder on the way must be a real folder (a symlink planted at ``.delegate``
must not redirect a write), a file is written whole or not at all (a temporary
file, synced, then linked or renamed under its final name; a full disk is one
typed ``disk_full`` error and leaves nothing behind), and only regular
files of a bounded size are read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from core import atomic_files
from core.errors import DelegateError, DocumentInvalid, DocumentPathUnsafe

DELEGATE_DIR = ".delegate"
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


def real_folder(path: Path, what: str = "documents") -> None:
    """Create ``path`` (0755) unless it exists; refuse anything there but a folder."""
    try:
        with atomic_files.disk_full_as_error(path.parent):
            os.mkdir(path, 0o755)
        return
    except FileExistsError:
        pass
    mode = os.lstat(path).st_mode
    if not stat.S_ISDIR(mode):
        kind = "a symbolic link" if stat.S_ISLNK(mode) else "not a folder"
        raise DocumentInvalid(f"{path} is {kind}; {what} are written only into real folders")


def ensure_folders(repo: Path, *parts: str, what: str = "documents") -> Path:
    """``repo/.delegate/<parts…>``, each level created or checked as a real folder."""
    folder = repo
    for part in (DELEGATE_DIR, *parts):
        folder = folder / part
        real_folder(folder, what)
    return folder


def write_temporary(folder: Path, data: bytes) -> Path:
    """``data`` in a new temporary file of ``folder``, synced; its path.

    A full disk raises :class:`~core.errors.DiskFull` and leaves nothing behind.
    """
    return Path(atomic_files.write_temporary(folder, data))


def replace_file(folder: Path, name: str, text: str) -> Path:
    """Write ``folder/name`` whole, replacing what was there (readers see old or new).

    A full disk raises :class:`~core.errors.DiskFull`; the old file is kept then.
    """
    return atomic_files.replace_atomically(folder, name, text.encode("utf-8"))


def read_capped(fd: int, max_bytes: int) -> bytes:
    """What an open file holds, read to at most ``max_bytes`` + 1 bytes: a result longer
    than ``max_bytes`` means the file grew past its cap while being read."""
    chunks, size = [], 0
    while size <= max_bytes:
        chunk = os.read(fd, max_bytes + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_regular_text(
    path: Path,
    *,
    what: str,
    max_bytes: int,
    folder: int | None = None,
    error: type[DelegateError] = DocumentInvalid,
    too_big_hint: str = "",
) -> str:
    """A regular file's UTF-8 text (no symlink, no FIFO), at most ``max_bytes``.

    ``folder``: an open folder handle to read ``path.name`` in (a walk that holds
    each folder open, so no link swapped in above the file is followed). Raises
    ``error`` (:class:`DocumentInvalid` unless told) naming ``what`` the file was
    meant to be; ``too_big_hint`` says where a longer text belongs.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | _NO_FOLLOW
    try:
        fd = os.open(path, flags) if folder is None else os.open(path.name, flags, dir_fd=folder)
    except FileNotFoundError:
        raise error(f"no {what} file at {path}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(
                f"{path} is a symbolic link; a {what} file must be a regular file"
            ) from None
        raise error(f"cannot open {path} as a {what} file: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{path} is not a regular file; a {what} file must be one")
        if info.st_size > max_bytes:
            raise error(
                f"{path} is {info.st_size:,} bytes; a {what} file is at most {max_bytes:,}"
                f" bytes{too_big_hint}"
            )
        data = read_capped(fd, max_bytes)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise error(f"{path} grew past {max_bytes:,} bytes while being read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{path} is not UTF-8 text") from None


def confined_document(path: Path, *parts: str, what: str) -> Path:
    """``path`` as the file really there, once it is inside a ``.delegate/<parts…>/``
    folder (``..`` and symbolic links followed first, so none leads out of it).

    Raises :class:`DocumentPathUnsafe` naming the path (never what the file holds) when
    it is anywhere else: a document is read only from where delegate keeps documents.
    """
    try:
        real = Path(os.path.realpath(Path(path).expanduser().absolute()))
    except (OSError, RuntimeError, ValueError):
        real = None
    wanted = (DELEGATE_DIR, *parts)
    if real is not None:
        folders = real.parts[:-1]
        for start in range(len(folders) - len(wanted) + 1):
            if folders[start : start + len(wanted)] == wanted:
                return real
    where = "/".join(wanted)
    raise DocumentPathUnsafe(
        f"{path} is not inside a {where}/ folder; a {what} is read only from there"
        " (nothing of that file is shown)"
    )
