"""Hand-off files on disk: atomic writes, the pending note, reading, archive, prune.

Documents live in ``<repo>/.delegate/handoffs/handoff-YYYY-MM-DD-HHMMSS.md``
(UTC, the name is the creation time), finished chains in ``handoffs/archive/``.
Nothing on disk is trusted: every folder on the way must be a real folder (a
symlink planted at ``.delegate`` must not redirect a write), only regular files
are read, and a document is either written whole or not at all (a temporary
file, synced, then linked under its final name, which never overwrites one).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import uuid
from datetime import UTC, datetime
from pathlib import Path

from core.errors import DocumentInvalid

DELEGATE_DIR = ".delegate"
HANDOFFS_DIR = "handoffs"
ARCHIVE_DIR = "archive"
PENDING_NOTE = "HANDOFF_PENDING.md"
MAX_READ_BYTES = 1_000_000  # a hand-off is a few kilobytes; anything bigger is not one
_NAME = re.compile(r"^handoff-(\d{4}-\d{2}-\d{2}-\d{6})(?:-a?\d+)?\.md$")
_STAMP = "%Y-%m-%d-%H%M%S"


def handoffs_dir(repo: Path) -> Path:
    return repo / DELEGATE_DIR / HANDOFFS_DIR


def _real_folder(path: Path) -> None:
    """Create ``path`` (0755) unless it exists; refuse anything there but a folder."""
    try:
        os.mkdir(path, 0o755)
        return
    except FileExistsError:
        pass
    mode = os.lstat(path).st_mode
    if not stat.S_ISDIR(mode):
        what = "a symbolic link" if stat.S_ISLNK(mode) else "not a folder"
        raise DocumentInvalid(f"{path} is {what}; hand-offs are written only into real folders")


def ensure_folders(repo: Path, *parts: str) -> Path:
    """``repo/.delegate/<parts…>``, each level created or checked as a real folder."""
    folder = repo
    for part in (DELEGATE_DIR, *parts):
        folder = folder / part
        _real_folder(folder)
    return folder


def _write_whole(folder: Path, data: bytes) -> Path:
    """``data`` in a new temporary file of ``folder``, synced; its path."""
    temporary = folder / f".handoff-{uuid.uuid4().hex}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temporary, flags, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return temporary


def handoff_name(created: datetime, attempt: int = 1) -> str:
    stamp = created.astimezone(UTC).strftime(_STAMP)
    return f"handoff-{stamp}.md" if attempt == 1 else f"handoff-{stamp}-{attempt}.md"


def write_handoff_file(repo: Path, text: str, created: datetime) -> Path:
    """Write a hand-off document atomically; its path (a new name, never an overwrite).

    Raises ``OSError`` when the disk refuses and :class:`DocumentInvalid` when
    a folder on the way is not a real folder; nothing is left behind either way.
    """
    folder = ensure_folders(repo, HANDOFFS_DIR)
    temporary = _write_whole(folder, text.encode("utf-8"))
    try:
        for attempt in range(1, 1000):
            final = folder / handoff_name(created, attempt)
            try:
                os.link(temporary, final)  # fails if the name is taken: no overwrite
            except FileExistsError:
                continue
            return final
        raise DocumentInvalid(f"{folder} already holds 999 hand-offs from {created:%H:%M:%S}")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _replace(folder: Path, name: str, text: str) -> Path:
    temporary = _write_whole(folder, text.encode("utf-8"))
    final = folder / name
    try:
        os.replace(temporary, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return final


def write_pending_note(repo: Path, document: Path, command: str) -> Path:
    """``HANDOFF_PENDING.md`` beside the document: a person continues it (seed 003 §4)."""
    folder = ensure_folders(repo, HANDOFFS_DIR)
    text = (
        "# Hand-off pending\n\n"
        f"A hand-off was written to `{document.name}` ({document}).\n"
        "Nobody continued it yet: start a new session from it with\n\n"
        f"    {command}\n\n"
        "or open it from delegate's panel. This note goes away once a session continues it.\n"
    )
    return _replace(folder, PENDING_NOTE, text)


def clear_pending_note(repo: Path) -> None:
    """Remove ``HANDOFF_PENDING.md`` (a session continued the hand-off); no-op when absent."""
    note = handoffs_dir(repo) / PENDING_NOTE
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        if stat.S_ISREG(os.lstat(note).st_mode):
            os.unlink(note)


def read_handoff_file(path: Path) -> str:
    """A hand-off's text: a regular file (no symlink, no FIFO), UTF-8, at most 1 MB."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise DocumentInvalid(f"no hand-off file at {path}") from None
    except OSError as exc:
        raise DocumentInvalid(f"cannot open {path} as a hand-off: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise DocumentInvalid(f"{path} is not a regular file")
        if info.st_size > MAX_READ_BYTES:
            raise DocumentInvalid(f"{path} is {info.st_size:,} bytes; a hand-off is at most 1 MB")
        data = os.read(fd, MAX_READ_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise DocumentInvalid(f"{path} is not UTF-8 text") from None


def created_from_name(path: Path) -> datetime | None:
    """The creation time a hand-off's file name carries (UTC), or None for another name."""
    found = _NAME.match(path.name)
    if found is None:
        return None
    return datetime.strptime(found.group(1), _STAMP).replace(tzinfo=UTC)


def archive_file(path: Path) -> Path:
    """Move a hand-off into ``archive/`` beside it (never over another); its new path."""
    folder = path.parent / ARCHIVE_DIR
    _real_folder(folder)
    if not stat.S_ISREG(os.lstat(path).st_mode):
        raise DocumentInvalid(f"{path} is not a regular file")
    target = folder / path.name
    for attempt in range(2, 1000):
        try:
            os.link(path, target)
        except FileExistsError:
            target = folder / f"{path.stem}-a{attempt}{path.suffix}"
            continue
        os.unlink(path)
        return target
    raise DocumentInvalid(f"{folder} has no free name for {path.name}")


def expired_archive_files(repo: Path, before: datetime) -> list[Path]:
    """Archived hand-offs (by name) created before ``before``: what pruning deletes."""
    folder = handoffs_dir(repo) / ARCHIVE_DIR
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    expired = []
    for entry in entries:
        created = created_from_name(Path(entry.name))
        if created is None or created >= before or not entry.is_file(follow_symlinks=False):
            continue
        expired.append(Path(entry.path))
    return sorted(expired)
