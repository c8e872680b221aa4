"""Capsule files: where they live, writing one whole, the latest, resolving.

A capsule lives at ``<repo>/.delegate/capsules/<branch>/<yyyymmddTHHMMSSZ>.md``
(UTC, the name is the creation time; ``-2``, ``-3``… when two land in one second).
A branch may keep several; the newest by name is ``latest``. Branch names are
data: each ``/``-separated part becomes a plain folder name (characters outside
``[A-Za-z0-9._+-]`` become ``_``, no part starts with a dot), so no name leaves
the capsules folder. Nothing on disk is trusted: folders on the way must be real
folders, files are written whole or not at all and never over another, and only
regular files are read.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from core.atomic_files import disk_full_as_error
from core.documents.safe_files import (
    DELEGATE_DIR,
    ensure_folders,
    read_regular_text,
    real_folder,
    write_temporary,
)
from core.errors import CapsuleNotFound, CapsulePathUnsafe, DocumentInvalid
from core.gitinfo import current_branch

CAPSULES_DIR = "capsules"
LATEST = "latest"
DETACHED = "HEAD"  # the folder of capsules written on a detached HEAD
MAX_CAPSULE_BYTES = 256_000  # a capsule is a few kilobytes; far bigger is not one
MAX_DEPTH = 16  # branch folders looked into (refs rarely nest more than three deep)
MAX_PART = 100  # characters kept of one branch-name part
_STAMP = "%Y%m%dT%H%M%SZ"
_NAME = re.compile(r"^(\d{8}T\d{6}Z)(?:-(\d{1,3}))?\.md$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")
_WHAT = "capsules"


def capsules_dir(repo: Path) -> Path:
    return repo / DELEGATE_DIR / CAPSULES_DIR


def branch_folder(branch: str) -> Path:
    """The relative folder a branch's capsules live in (never absolute, never ``..``)."""
    parts = []
    for part in branch.split("/"):
        safe = _UNSAFE.sub("_", part)[:MAX_PART]
        if not safe:
            continue
        if safe.startswith("."):  # no hidden folders, no "." or ".."
            safe = "_" + safe[1:]
        parts.append(safe)
    return Path(*parts) if parts else Path("_")


def capsule_name(created: datetime, attempt: int = 1) -> str:
    stamp = created.astimezone(UTC).strftime(_STAMP)
    return f"{stamp}.md" if attempt == 1 else f"{stamp}-{attempt}.md"


def capsule_path(repo: Path, branch: str, created: datetime) -> Path:
    """Where a capsule of ``branch`` written at ``created`` goes (first free name aside)."""
    return capsules_dir(repo) / branch_folder(branch) / capsule_name(created)


def created_from_name(path: Path) -> datetime | None:
    """The creation time a capsule's file name carries (UTC), or None for another name."""
    found = _NAME.match(path.name)
    if found is None:
        return None
    return datetime.strptime(found.group(1), _STAMP).replace(tzinfo=UTC)


def name_order(path: Path) -> tuple[str, int]:
    """A capsule's place among its branch's capsules: creation time, then attempt."""
    found = _NAME.match(path.name)
    assert found is not None  # only capsule names are listed
    return found.group(1), int(found.group(2) or 1)


def _branch_folder_on_disk(repo: Path, branch: str) -> Path:
    """The branch's folder, each level checked as a real folder (created as needed)."""
    folder = ensure_folders(repo, CAPSULES_DIR, what=_WHAT)
    for part in branch_folder(branch).parts:
        folder = folder / part
        real_folder(folder, _WHAT)
    return folder


def save_capsule(repo: Path, text: str, *, branch: str, created: datetime) -> Path:
    """Write a capsule atomically under its branch and creation time; its path.

    Never overwrites: a second capsule in the same second gets ``-2``. Raises
    :class:`DocumentInvalid` when a folder on the way is not a real folder,
    :class:`~core.errors.DiskFull` when the disk is full and ``OSError`` when it refuses otherwise;
    nothing is left behind either way.
    """
    folder = _branch_folder_on_disk(repo, branch)
    return _link_new(folder, text, lambda attempt: capsule_name(created, attempt))


def write_new_file(path: Path, text: str) -> Path:
    """Write ``text`` at ``path`` whole, refusing to replace a file already there."""
    real_folder(path.parent, _WHAT)
    temporary = write_temporary(path.parent, text.encode("utf-8"))
    try:
        with disk_full_as_error(path.parent):
            os.link(temporary, path)
    except FileExistsError:
        raise DocumentInvalid(f"{path} already exists; delegate does not overwrite it") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    return path


def _link_new(folder: Path, text: str, name_for: Callable[[int], str]) -> Path:
    temporary = write_temporary(folder, text.encode("utf-8"))
    try:
        for attempt in range(1, 1000):
            final = folder / name_for(attempt)
            try:
                with disk_full_as_error(folder):  # a new name may need a folder block
                    os.link(temporary, final)  # fails if the name is taken: no overwrite
            except FileExistsError:
                continue
            return final
        raise DocumentInvalid(f"{folder} already holds 999 capsules from one second")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _capsule_files(folder: Path, depth: int) -> Iterator[Path]:
    """Capsule files in ``folder`` and, below ``depth``, its real subfolders."""
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return
    for entry in entries:
        if entry.is_file(follow_symlinks=False) and _NAME.match(entry.name):
            yield Path(entry.path)
        elif depth > 0 and entry.is_dir(follow_symlinks=False):
            yield from _capsule_files(Path(entry.path), depth - 1)


def _is_real_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def list_capsules(repo: Path, branch: str | None = None) -> list[Path]:
    """Capsules of ``branch`` (every branch when None), newest first.

    Only regular files named like a capsule count; symbolic links and anything
    reached through one are skipped.
    """
    root = capsules_dir(repo)
    if not (_is_real_folder(root.parent) and _is_real_folder(root)):
        return []
    if branch is None:
        found = list(_capsule_files(root, MAX_DEPTH))
    else:
        folder = root
        for part in branch_folder(branch).parts:
            folder = folder / part
            if not _is_real_folder(folder):
                return []
        found = list(_capsule_files(folder, 0))
    return sorted(found, key=name_order, reverse=True)


def branch_of(repo: Path, path: Path) -> str:
    """The (sanitised) branch a stored capsule belongs to: its folder under capsules/."""
    return path.parent.relative_to(capsules_dir(repo)).as_posix()


def read_capsule(path: Path) -> str:
    """A capsule's text: a regular file (no symlink, no FIFO), UTF-8, bounded in size."""
    return read_regular_text(path, what="capsule", max_bytes=MAX_CAPSULE_BYTES)


def resolve_capsule(repo: Path, spec: str, branch: str | None = None) -> Path:
    """The capsule ``spec`` names: ``latest`` (of ``branch``, the checked-out branch when
    None) or a path, relative to ``repo`` or absolute, of a regular file inside it.

    Raises :class:`CapsuleNotFound` when there is none and :class:`CapsulePathUnsafe`
    for a path outside the repository, through a symbolic link, or not a regular file.
    """
    if spec == LATEST:
        branch = branch if branch is not None else (current_branch(repo) or DETACHED)
        found = list_capsules(repo, branch)
        if not found:
            where = capsules_dir(repo) / branch_folder(branch)
            raise CapsuleNotFound(
                f"branch {branch!r} has no capsule yet (looked in {where});"
                " write one with `delegate capsule new` or name a file"
            )
        return found[0]
    return _inside(repo, spec)


def _inside(repo: Path, spec: str) -> Path:
    if not spec or "\0" in spec:
        raise CapsulePathUnsafe("a capsule path must be a non-empty file name")
    try:
        root = repo.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise CapsuleNotFound(f"the repository {repo} cannot be read: {exc}") from None
    candidate = Path(os.path.normpath(Path(spec).expanduser()))
    if not candidate.is_absolute():
        candidate = Path(os.path.normpath(root / candidate))
    elif candidate.is_relative_to(repo.absolute()):  # the repository as the caller spelled it
        candidate = root / candidate.relative_to(repo.absolute())
    try:
        resolved = candidate.resolve(strict=True)
    except FileNotFoundError:
        raise CapsuleNotFound(f"no capsule file at {candidate}") from None
    except (OSError, RuntimeError) as exc:
        raise CapsulePathUnsafe(f"{candidate} cannot be followed: {exc}") from None
    if not resolved.is_relative_to(root):
        raise CapsulePathUnsafe(
            f"{candidate} is outside the repository {root}; capsules are read only from inside it"
        )
    # Every level below the repository must be itself, not a link to elsewhere in it.
    if candidate != resolved:
        raise CapsulePathUnsafe(f"{candidate} goes through a symbolic link; name the file itself")
    if not stat.S_ISREG(os.lstat(resolved).st_mode):
        raise CapsulePathUnsafe(f"{candidate} is not a regular file")
    return resolved
