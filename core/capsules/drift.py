"""Drift: whether the files a capsule relies on still hold what it was written against.

A capsule's ``references:`` record each file's git blob id at writing time. Later the
file may have been edited in the working tree, changed by a commit on the branch, or
deleted, and a sub-agent reading the capsule would trust a description of code that
no longer exists. :func:`check_drift` compares the recorded id with the working tree
and with the branch head (``HEAD``) and names what changed.

Blob ids are computed here from the file's bytes (git's ``blob <size>\\0<data>``
SHA-1), so the working tree is read without a git process; the head's ids come from
the repository through git, run as :mod:`core.safe_git` runs it. Line-ending or
clean filters (``autocrlf``) are not applied: a file git would normalise reads as
changed, which errs on the side of telling. Paths come from a capsule on disk and are
not trusted: only regular files inside the repository are opened, never through a
symbolic link.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from core.capsules.model import Reference
from core.errors import DelegateError
from core.safe_git import git_output

DriftState = Literal[
    "unchanged", "changed_in_worktree", "changed_on_branch", "missing", "untracked"
]
STALE_STATES: frozenset[str] = frozenset({"changed_in_worktree", "changed_on_branch", "missing"})
"""States that make a capsule stale: what it describes is not what the files hold."""

_CHUNK = 1 << 20


class ReferenceUnsafe(DelegateError):
    """A reference names a path outside the repository (absolute, ``..``, a link out)."""

    code = "capsule_reference_unsafe"


@dataclass(frozen=True, slots=True)
class Drift:
    """One reference compared: its recorded blob id, the working tree's and the head's
    (None: absent there), and what that means."""

    path: str
    recorded: str | None
    worktree: str | None
    head: str | None
    state: DriftState

    @property
    def stale(self) -> bool:
        return self.state in STALE_STATES


def blob_id(data: bytes) -> str:
    """Git's object id for a blob holding ``data`` (what ``git hash-object`` prints)."""
    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


def safe_relative(path: str) -> PurePosixPath | None:
    """``path`` as a relative POSIX path (``./`` dropped), or None when it could escape
    the repository: absolute, ``..``, empty, a backslash, a NUL byte or a drive."""
    if not path or "\0" in path or "\\" in path:
        return None
    relative = PurePosixPath(path)
    if relative.is_absolute() or not relative.parts or ".." in relative.parts:
        return None
    if ":" in relative.parts[0]:  # ``C:foo`` on Windows
        return None
    return relative


def _worktree_blob(repo: Path, relative: PurePosixPath) -> str | None:
    """The blob id of the regular file at ``relative`` in the working tree, or None
    (missing, not a regular file, reached through a symbolic link, unreadable)."""
    folder = repo
    for part in relative.parts[:-1]:
        folder = folder / part
        try:
            if not stat.S_ISDIR(folder.lstat().st_mode):
                return None  # a link (or a file) where a folder should be
        except (OSError, ValueError):
            return None
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
    try:
        fd = os.open(folder / relative.name, flags)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        digest = hashlib.sha1(b"blob %d\0" % info.st_size, usedforsecurity=False)
        read = 0
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
            read += len(chunk)
        if read != info.st_size:
            return None  # changed while read: no id is right
        return digest.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


class _Head:
    """Blob ids at the repository's ``HEAD`` commit (none outside a repository or
    before the first commit), asked of git one path at a time."""

    def __init__(self, repo: Path) -> None:
        self._repo = repo

    def blob(self, relative: PurePosixPath) -> str | None:
        listed = git_output(self._repo, "ls-tree", "-z", "--full-tree", "HEAD", "--", str(relative))
        for entry in (listed or "").split("\0"):
            info, _, name = entry.partition("\t")
            fields = info.split()
            if name == relative.as_posix() and len(fields) == 3 and fields[1] == "blob":
                return fields[2]
        return None

    def close(self) -> None:
        """Nothing held open (each question is its own git process)."""


def reference_for(repo: Path, path: str) -> Reference:
    """A reference to ``path`` (relative to ``repo``'s root, or absolute inside it) with
    the blob id of the file as it is now in the working tree; ``blob`` is None when
    git does not track the file (not at ``HEAD``, not staged) or it cannot be read.

    Raises :class:`ReferenceUnsafe` for a path outside the repository.
    """
    root = repo.resolve()
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            path = candidate.resolve().relative_to(root).as_posix()
        except (OSError, ValueError):
            raise ReferenceUnsafe(f"{path!r} is not inside the repository {root}") from None
    relative = safe_relative(path)
    if relative is None:
        raise ReferenceUnsafe(f"{path!r} is not a path inside the repository {root}")
    head = _Head(root)
    try:
        tracked = head.blob(relative) is not None or _in_index(root, relative)
    finally:
        head.close()
    blob = _worktree_blob(root, relative) if tracked else None
    return Reference(path=relative.as_posix(), blob=blob)


def _in_index(root: Path, relative: PurePosixPath) -> bool:
    """Whether ``relative`` is staged (added but not yet committed)."""
    listed = git_output(root, "ls-files", "-z", "--stage", "--", relative.as_posix())
    for entry in (listed or "").split("\0"):
        info, _, name = entry.partition("\t")
        fields = info.split()
        if name == relative.as_posix() and len(fields) == 3 and fields[2] == "0":
            return True
    return False


def _state(recorded: str | None, worktree: str | None, head: str | None) -> DriftState:
    if worktree is None:
        return "missing"
    if recorded is None:
        return "untracked"  # nothing was recorded to compare with
    if worktree == recorded:
        return "unchanged"  # the file holds what the capsule describes, committed or not
    if worktree == head:
        return "changed_on_branch"  # committed since (by this session or a pull)
    return "changed_in_worktree"


def check_drift(repo: Path, references: Iterable[Reference]) -> list[Drift]:
    """Each reference compared with the working tree and ``HEAD`` of ``repo``, in order.

    A path that could escape the repository is never read: it is ``missing``.
    Blocking (reads files and the repository): call it in a thread from async code.
    """
    root = repo.resolve()
    head = _Head(root)
    drifts = []
    try:
        for reference in references:
            relative = safe_relative(reference.path)
            worktree = head_blob = None
            if relative is not None:
                worktree = _worktree_blob(root, relative)
                head_blob = head.blob(relative)
            drifts.append(
                Drift(
                    path=reference.path,
                    recorded=reference.blob,
                    worktree=worktree,
                    head=head_blob,
                    state=_state(reference.blob, worktree, head_blob),
                )
            )
    finally:
        head.close()
    return drifts
