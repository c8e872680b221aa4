"""Reading and writing a role's hand-off file without trusting the disk.

The walk from the repository down to ``handoffs/`` goes folder by folder through
open folder handles that refuse symbolic links (``O_NOFOLLOW``), so a link planted
at any level — ``.delegate``, the session, the group, ``handoffs`` or the file
itself — is refused, never followed, even if it appears mid-walk. Only a regular
file of bounded size is read (a FIFO or a device is never opened for reading);
a file is written whole (a temporary file, synced, then renamed over the old one),
so a reader sees the old file or the new one, never half of either (a full disk is
``disk_full``, the old file kept).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from core.atomic_files import is_disk_full, replace_atomically
from core.documents.safe_files import (
    DELEGATE_DIR,
    ensure_folders,
    read_regular_text,
    replace_file,
)
from core.errors import DiskFull, DocumentInvalid, HandoffFileInvalid
from core.returns.model import AgentRole
from core.returns.paths import ARTIFACTS_DIR, HANDOFFS_DIR, GroupPaths
from core.returns.schemas import HandoffFile, validate_handoff

MAX_HANDOFF_BYTES: Final = 256_000
"""A hand-off file is a few kilobytes of JSON; far bigger is not one."""
_NO_FOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
# Folder handles (openat and friends) where the platform has them; elsewhere each
# level is checked with lstat just before use (safe_files).
_DIR_FDS: Final = bool(_NO_FOLLOW and _DIRECTORY) and {os.open, os.mkdir, os.rename, os.unlink} <= (
    os.supports_dir_fd
)


@dataclass(frozen=True, slots=True)
class LoadedHandoff:
    """A hand-off file as read: its model, its exact text (for the digest) and path."""

    handoff: HandoffFile
    text: str
    path: Path


def _folder_parts(paths: GroupPaths) -> tuple[str, ...]:
    return (DELEGATE_DIR, ARTIFACTS_DIR, paths.session, paths.group, HANDOFFS_DIR)


@contextlib.contextmanager
def _handoffs_folder(paths: GroupPaths, target: Path, *, create: bool) -> Iterator[int]:
    """An open handle on the group's ``handoffs/``, each level a real folder (no link)."""
    flags = os.O_RDONLY | os.O_CLOEXEC | _DIRECTORY
    try:
        fd = os.open(paths.repo, flags)  # the repository itself may be reached by a link
    except OSError as exc:
        raise HandoffFileInvalid(
            f"the repository folder {paths.repo} cannot be opened: {exc.strerror}"
        ) from None
    try:
        here = paths.repo
        for part in _folder_parts(paths):
            here = here / part
            try:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o755, dir_fd=fd)
                inner = os.open(part, flags | _NO_FOLLOW, dir_fd=fd)
            except FileNotFoundError:
                raise HandoffFileInvalid(f"no hand-off file at {target}") from None
            except OSError as exc:
                if is_disk_full(exc):
                    raise DiskFull(str(here.parent)) from None
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise HandoffFileInvalid(_not_a_folder(here)) from None
                raise HandoffFileInvalid(f"{here} cannot be opened: {exc.strerror}") from None
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _not_a_folder(path: Path) -> str:
    try:
        linked = stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        linked = False
    kind = "a symbolic link" if linked else "not a folder"
    return (
        f"{path} is {kind}; hand-off files are read and written only in real folders"
        " (remove it and run again)"
    )


def _read_text(paths: GroupPaths, role: AgentRole) -> str:
    path = paths.handoff_file(role)
    if _DIR_FDS:
        with _handoffs_folder(paths, path, create=False) as folder:
            return _read_handoff(path, folder)
    here = paths.repo
    for part in _folder_parts(paths):  # no folder handles: lstat each level
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            raise HandoffFileInvalid(f"no hand-off file at {path}") from None
        if not stat.S_ISDIR(mode):
            raise HandoffFileInvalid(_not_a_folder(here))
    return _read_handoff(path)


def _read_handoff(path: Path, folder: int | None = None) -> str:
    return read_regular_text(
        path,
        what="hand-off",
        max_bytes=MAX_HANDOFF_BYTES,
        folder=folder,
        error=HandoffFileInvalid,
        too_big_hint=" (put long reports in the artifacts folders)",
    )


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def decode_handoff(text: str, where: str) -> object:
    """A hand-off file's JSON (a leading byte-order mark allowed; NaN and Infinity
    refused); anything else is :class:`HandoffFileInvalid` naming ``where``."""
    try:
        return json.loads(text.lstrip("\ufeff"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        detail = (
            f" (line {exc.lineno}, column {exc.colno})"
            if isinstance(exc, json.JSONDecodeError)
            else ""
        )
        raise HandoffFileInvalid(
            f"{where} is not JSON{detail}; a hand-off file is one JSON object"
        ) from None


def load_handoff(paths: GroupPaths, role: AgentRole) -> LoadedHandoff:
    """``role``'s hand-off file in ``paths``: read safely, parsed, checked against its schema.

    Raises :class:`HandoffFileInvalid` naming the file (missing, a link, not a regular
    file, too big, not UTF-8 or JSON, or not the role's schema — naming the field).
    """
    path = paths.handoff_file(role)
    text = _read_text(paths, role)
    where = paths.relative(path)
    handoff = validate_handoff(role, decode_handoff(text, where), where=where)
    return LoadedHandoff(handoff=handoff, text=text, path=path)


def read_handoff(paths: GroupPaths, role: AgentRole) -> HandoffFile:
    """``role``'s hand-off file, checked (see :func:`load_handoff`)."""
    return load_handoff(paths, role).handoff


def handoff_text(data: object) -> str:
    """How delegate writes a hand-off: the JSON as given, indented, one object."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_handoff(paths: GroupPaths, role: AgentRole, data: object) -> Path:
    """Check ``data`` (a JSON value, or JSON text) as ``role``'s hand-off and write it whole.

    Raises :class:`HandoffFileInvalid` when it is not the role's schema or a folder on
    the way is a link or not a folder; nothing is written then. Its path.
    """
    path = paths.handoff_file(role)
    where = paths.relative(path)
    if isinstance(data, str | bytes):
        data = decode_handoff(
            data.decode("utf-8", "replace") if isinstance(data, bytes) else data, where
        )
    validate_handoff(role, data, where=where)
    try:
        text = handoff_text(data)
    except (ValueError, TypeError):
        raise HandoffFileInvalid(
            f"{where}: only JSON values can be written (no NaN, infinity or other objects)"
        ) from None
    if _DIR_FDS:
        with _handoffs_folder(paths, path, create=True) as folder:
            try:
                # A link or folder planted at the final name is replaced as a name,
                # never followed; a full disk is DiskFull, the old file kept.
                replace_atomically(path.parent, path.name, text.encode("utf-8"), dir_fd=folder)
            except IsADirectoryError:
                raise HandoffFileInvalid(f"{path} is a folder; remove it and write again") from None
            except OSError as exc:
                raise HandoffFileInvalid(f"{path} cannot be written: {exc.strerror}") from None
        return path
    try:
        folder_path = ensure_folders(paths.repo, *_folder_parts(paths)[1:], what="hand-off files")
        return replace_file(folder_path, path.name, text)
    except DocumentInvalid as exc:
        raise HandoffFileInvalid(str(exc)) from None
    except OSError as exc:
        raise HandoffFileInvalid(f"{path} cannot be written: {exc.strerror}") from None
