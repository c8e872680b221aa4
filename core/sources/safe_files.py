"""Opening files other programs wrote, without trusting what they turned out to be.

A name ending in ``.jsonl`` may be a FIFO (``open()`` blocks until a writer
comes), a link to ``/dev/zero`` (endless bytes) or a socket. Only regular
files are read: opened with ``O_NONBLOCK`` (a FIFO opens at once instead of
waiting), then checked with ``fstat`` on the open descriptor, so a file
swapped after a ``stat`` is still caught. Used by the importer's discovery,
its workers and the preview.

Stdlib only: worker processes import it.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory: never read."""

    def __init__(self, path: str, mode: int) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({file_kind(mode)})", path)


def file_kind(mode: int) -> str:
    """What a ``st_mode`` is, in a person's words."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "a regular file" if stat.S_ISREG(mode) else "an unknown kind of file"


def open_regular(path: str) -> BinaryIO:
    """``open(path, "rb")`` for regular files only; anything else raises :class:`NotRegularFile`.

    Symlinks are followed (discovery decides which links may be); the check is on
    what was actually opened.
    """
    fd = os.open(path, _FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
        os.set_blocking(fd, True)  # no effect on regular files; reads stay plain
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str, limit: int) -> bytes:
    """Up to ``limit`` bytes of a regular file (small side files such as ``.meta.json``)."""
    with open_regular(path) as f:
        return f.read(limit)


def shown_path(path: str) -> str:
    """A path as text a person (and JSON, and SQLite) can take.

    Names that are not UTF-8 reach Python as lone surrogates, which cannot be
    encoded; their bytes are shown as ``\\xff`` escapes instead.
    """
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raw = path.encode("utf-8", "surrogateescape" if _escapes_only(path) else "backslashreplace")
        return raw.decode("utf-8", "backslashreplace")
    return path


def _escapes_only(text: str) -> bool:
    """Whether every surrogate in ``text`` stands for an undecodable byte (U+DC80..U+DCFF)."""
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in text)


def is_utf8_name(name: str) -> bool:
    """Whether a name from the file system is valid UTF-8 (no surrogate escapes)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
