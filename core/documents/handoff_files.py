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
from datetime import UTC, datetime
from pathlib import Path

from core.atomic_files import disk_full_as_error
from core.documents import safe_files
from core.documents.safe_files import (
    confined_document,
    read_regular_text,
    real_folder,
    replace_file,
    write_temporary,
)
from core.errors import DocumentInvalid

DELEGATE_DIR = safe_files.DELEGATE_DIR
HANDOFFS_DIR = "handoffs"
ARCHIVE_DIR = "archive"
PENDING_NOTE = "HANDOFF_PENDING.md"
MAX_READ_BYTES = 1_000_000  # a hand-off is a few kilobytes; anything bigger is not one
_NAME = re.compile(r"^handoff-(\d{4}-\d{2}-\d{2}-\d{6})(?:-a?\d+)?\.md$")
_STAMP = "%Y-%m-%d-%H%M%S"


def handoffs_dir(repo: Path) -> Path:
    return repo / DELEGATE_DIR / HANDOFFS_DIR


def ensure_folders(repo: Path, *parts: str) -> Path:
    """``repo/.delegate/<parts…>``, each level created or checked as a real folder."""
    return safe_files.ensure_folders(repo, *parts, what="hand-offs")


def handoff_name(created: datetime, attempt: int = 1) -> str:
    stamp = created.astimezone(UTC).strftime(_STAMP)
    return f"handoff-{stamp}.md" if attempt == 1 else f"handoff-{stamp}-{attempt}.md"


def write_handoff_file(repo: Path, text: str, created: datetime) -> Path:
    """Write a hand-off document atomically; its path (a new name, never an overwrite).

    Raises :class:`~core.errors.DiskFull` when the disk is full, ``OSError`` when it refuses
    otherwise and :class:`DocumentInvalid` when a folder on the way is not a real
    folder; nothing is left behind either way.
    """
    folder = ensure_folders(repo, HANDOFFS_DIR)
    temporary = write_temporary(folder, text.encode("utf-8"))
    try:
        for attempt in range(1, 1000):
            final = folder / handoff_name(created, attempt)
            try:
                with disk_full_as_error(folder):  # a new name may need a folder block
                    os.link(temporary, final)  # fails if the name is taken: no overwrite
            except FileExistsError:
                continue
            return final
        raise DocumentInvalid(f"{folder} already holds 999 hand-offs from {created:%H:%M:%S}")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


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
    return replace_file(folder, PENDING_NOTE, text)


def clear_pending_note(repo: Path) -> None:
    """Remove ``HANDOFF_PENDING.md`` (a session continued the hand-off); no-op when absent."""
    note = handoffs_dir(repo) / PENDING_NOTE
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        if stat.S_ISREG(os.lstat(note).st_mode):
            os.unlink(note)


def read_handoff_file(path: Path) -> str:
    """A hand-off's text: a regular file (no symlink, no FIFO), UTF-8, at most 1 MB, inside
    a ``.delegate/handoffs/`` folder (any other path raises
    :class:`~core.errors.DocumentPathUnsafe`, and nothing of it is read)."""
    confined_document(path, HANDOFFS_DIR, what="hand-off")
    # Read as named: a symbolic link in the last place is refused, not followed.
    return read_regular_text(path, what="hand-off", max_bytes=MAX_READ_BYTES)


def created_from_name(path: Path) -> datetime | None:
    """The creation time a hand-off's file name carries (UTC), or None for another name."""
    found = _NAME.match(path.name)
    if found is None:
        return None
    return datetime.strptime(found.group(1), _STAMP).replace(tzinfo=UTC)


def archive_file(path: Path) -> Path:
    """Move a hand-off into ``archive/`` beside it (never over another); its new path."""
    folder = path.parent / ARCHIVE_DIR
    real_folder(folder, "hand-offs")
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
