"""Backing up and restoring the store file safely, with SQLite's backup API.

A copy made with ``cp`` of a live store misses what is still in its
write-ahead log, and a file copied or moved over a store that a process holds
is read with the old log: damaged (see :mod:`core.store.file_guard`). Here:

- **backup** reads one consistent snapshot through SQLite (writers go on
  meanwhile) into a new self-contained file (no ``-wal``), checks it, and only
  then gives it its name;
- **restore** checks the backup first (``integrity_check``, a schema this
  delegate knows), then either writes it *into* the store through SQLite's
  backup API when processes hold it (a normal write: they see the restored
  store, the log stays consistent), or, when none does, puts it in place of
  the file with the old log moved aside. Meanwhile it holds the restore lock,
  which every opening delegate process honours.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.errors import InvalidRequest, StoreBusy, StoreError
from core.migrations import SCHEMA_VERSION
from core.store.file_guard import (
    forget_seen,
    log_held,
    move_log_aside,
    read_seen,
    shm_path,
    wal_path,
)

RESTORE_LOCK_SUFFIX = ".restore.lock"
LOCK_WAIT_S = 10.0
LOCK_POLL_S = 0.05
BUSY_TIMEOUT_S = 10.0
WAL_HEADER_BYTES = 32


@dataclass(frozen=True)
class StoreCopy:
    """What a backup or a restore copied."""

    source: Path
    target: Path
    sessions: int
    schema_version: int
    size: int
    how: str  # "backup", "into the open store", "in place of the file"

    def to_json(self) -> dict[str, object]:
        return {
            "source": str(self.source),
            "target": str(self.target),
            "sessions": self.sessions,
            "schema_version": self.schema_version,
            "bytes": self.size,
            "how": self.how,
        }


def restore_lock_path(path: Path) -> Path:
    return path.with_name(path.name + RESTORE_LOCK_SUFFIX)


@contextlib.contextmanager
def restore_lock(path: Path, *, exclusive: bool, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """The restore lock of the store at ``path``: shared to open, exclusive to restore.

    Taken by polling within ``wait_s`` (then :class:`StoreBusy`), never a wait
    without end. A folder that cannot hold the lock file has no restore to wait for.
    """
    lock = restore_lock_path(path)
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        if exclusive:
            raise
        yield
        return
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    what = "another restore" if exclusive else "a restore of it"
                    raise StoreBusy(
                        f"the store {path} is busy: {what} held its restore lock "
                        f"({lock}) for {wait_s:.0f} s; try again when it has finished"
                    ) from None
                time.sleep(LOCK_POLL_S)
        yield
    finally:
        os.close(fd)


def _connect(path: Path, *, read_only: bool) -> sqlite3.Connection:
    uri_path = os.fspath(path.resolve()).replace("%", "%25").replace("?", "%3f")
    uri_path = uri_path.replace("#", "%23")
    mode = "ro" if read_only else "rw"
    conn = sqlite3.connect(
        f"file:{uri_path}?mode={mode}", uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None
    )
    return conn


def _describe(conn: sqlite3.Connection, path: Path, what: str) -> tuple[int, int]:
    """(schema version, sessions) of a sound delegate store, else :class:`StoreError`."""
    try:
        checked = [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    except sqlite3.Error as exc:
        raise StoreError(f"{what} {path} is not a delegate store that can be read ({exc})") from exc
    if checked != ["ok"]:
        raise StoreError(
            f"{what} {path} is damaged (integrity_check: {'; '.join(checked)[:300]}): "
            "it was not used"
        )
    if version == 0 or "sessions" not in tables:
        raise StoreError(f"{what} {path} is not a delegate store (no sessions table)")
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{what} {path} has schema version {version}, newer than this delegate "
            f"understands ({SCHEMA_VERSION}): upgrade delegate first"
        )
    sessions = int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])
    return version, sessions


def _regular_file(path: Path, what: str) -> None:
    if not path.exists():
        raise InvalidRequest(f"{what} {path} does not exist")
    if not path.is_file():
        raise InvalidRequest(f"{what} {path} is not a regular file")


def _copy(
    source: sqlite3.Connection, target: sqlite3.Connection, path: Path, wait_s: float
) -> None:
    """SQLite's backup API, all pages in one step, giving up after ``wait_s`` of busy."""
    deadline = time.monotonic() + wait_s

    def progress(status: int, remaining: int, total: int) -> None:
        if status in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) and (time.monotonic() > deadline):
            raise StoreBusy(
                f"the store {path} is busy: another process held its write lock for "
                f"{wait_s:.0f} s; try again"
            )

    try:
        source.backup(target, pages=-1, progress=progress, sleep=LOCK_POLL_S)
    except sqlite3.Error as exc:
        raise StoreError(f"copying into {path} failed ({exc}); nothing was changed") from exc


def _temp_beside(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _write_file_copy(
    source: sqlite3.Connection, target: Path, wait_s: float, *, journal: str = "DELETE"
) -> None:
    """``source`` into a new file at ``target``: self-contained (``DELETE``: no ``-wal``
    needed) for a backup, in ``WAL`` mode for a store."""
    temp = _temp_beside(target)
    temp.unlink(missing_ok=True)
    os.close(os.open(temp, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600))
    try:
        with contextlib.closing(_connect(temp, read_only=False)) as out:
            _copy(source, out, target, wait_s)
            out.execute(f"PRAGMA journal_mode = {journal}")
            checked = [str(r[0]) for r in out.execute("PRAGMA integrity_check")]
            if checked != ["ok"]:
                raise StoreError(f"the copy for {target} did not check out: {checked[:3]}")
        with open(temp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def backup_store(path: Path, target: Path, *, wait_s: float = BUSY_TIMEOUT_S) -> StoreCopy:
    """A consistent copy of the store at ``path`` into the new file ``target``."""
    _regular_file(path, "the store")
    if target.exists() or target.is_symlink():
        raise InvalidRequest(f"{target} already exists: name a new file for the backup")
    if not target.parent.is_dir():
        raise InvalidRequest(f"the folder {target.parent} does not exist")
    try:
        with contextlib.closing(_connect(path, read_only=True)) as source:
            version, sessions = _describe(source, path, "the store")
            _write_file_copy(source, target, wait_s)
    except OSError as exc:
        raise StoreError(f"cannot write the backup {target}: {exc.strerror or exc}") from exc
    except sqlite3.Error as exc:
        raise StoreError(f"the backup of {path} failed ({exc}); nothing was written") from exc
    return StoreCopy(path, target, sessions, version, target.stat().st_size, "backup")


def restore_store(path: Path, source: Path, *, wait_s: float = BUSY_TIMEOUT_S) -> StoreCopy:
    """The backup ``source`` checked, then made the store at ``path``; see the module doc."""
    _regular_file(source, "the backup")
    if source.resolve() == path.resolve():
        raise InvalidRequest(f"{source} is the store itself: name a backup file")
    try:
        with contextlib.closing(_connect(source, read_only=True)) as backup:
            version, sessions = _describe(backup, source, "the backup")
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with restore_lock(path, exclusive=True, wait_s=wait_s):
                how = _restore_locked(path, backup, wait_s)
    except OSError as exc:
        raise StoreError(f"cannot restore into {path}: {exc.strerror or exc}") from exc
    return StoreCopy(source, path, sessions, version, path.stat().st_size, how)


def _restore_locked(path: Path, backup: sqlite3.Connection, wait_s: float) -> str:
    _, found_replaced = read_seen(path)
    if path.exists() and log_held(path):
        if found_replaced:
            raise StoreBusy(
                f"the store {path} was replaced while delegate had it open and a delegate "
                "process still holds it: stop every delegate process using it (the panel, "
                "watch, mcp), then restore again"
            )
        with contextlib.closing(_connect(path, read_only=False)) as store:
            _copy(backup, store, path, wait_s)
        return "into the open store"
    # Nobody holds it: the backup takes the file's place; a log of the old file goes aside.
    _write_file_copy(backup, _restored_name(path), wait_s, journal="WAL")
    if _log_has_frames(path):
        move_log_aside(path, "before-restore")
    else:  # an empty log (a read-only reader leaves one): nothing in it to keep
        for leftover in (wal_path(path), shm_path(path)):
            leftover.unlink(missing_ok=True)
    os.replace(_restored_name(path), path)
    forget_seen(path)
    return "in place of the file"


def _log_has_frames(path: Path) -> bool:
    try:
        return wal_path(path).stat().st_size > WAL_HEADER_BYTES
    except OSError:
        return False


def _restored_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.restoring")
