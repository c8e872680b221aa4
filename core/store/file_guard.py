"""Whether the store file is still the one delegate opened: replaced or removed under it.

SQLite keeps a WAL store's recent commits in ``<store>-wal`` beside the file,
indexed by ``<store>-shm``; both belong to the file they were written for. A
backup copied (``cp``, same inode) or moved (``mv``, a new inode) over the store
while a delegate process holds it would be read with the old log by every
later process: silently damaged. So delegate remembers what the file looked
like after its own last commit (device, inode, size, modification time)
together with the log's checkpoint state from ``-shm`` (salts,
frames copied back), and judges before each write and at each open:

- the path is gone: the store was **removed**;
- another inode at the path: **replaced**;
- the same inode, changed, while the checkpoint state did not move: **replaced**
  (only a checkpoint writes into the file, and it marks ``-shm`` before it does).

What was seen is kept in ``<store>.seen`` so a process that opens later judges
too; a replacement once found is written there and every later open refuses
until ``delegate store restore`` puts a backup in safely.

The files are looked at without opening and closing them: closing any
descriptor of a file drops every POSIX lock this process holds on it, SQLite's
included. ``-shm`` is read through one descriptor per file, kept open while the
file exists.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import struct
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from core.errors import StoreRemoved, StoreReplaced

# The checkpoint part of a -shm file (native byte order): the log's salts, then
# nBackfill (frames copied into the file) and nBackfillAttempted (set before a
# checkpoint writes anything into the file).
_SALT = slice(32, 40)
_BACKFILL_AT = 96
_ATTEMPTED_AT = 128
SHM_DMS_BYTE = 128  # every connection holds a shared lock here while it is open


@dataclass(frozen=True)
class FileState:
    """The store file as one look saw it, with the log's checkpoint state."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    checkpoint: tuple[str, int, int] | None  # salts, frames copied, frames attempted

    @property
    def settled(self) -> bool:
        """No checkpoint was half way when this was seen."""
        return self.checkpoint is None or self.checkpoint[1] == self.checkpoint[2]


def wal_path(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def shm_path(path: Path) -> Path:
    return path.with_name(path.name + "-shm")


def seen_path(path: Path) -> Path:
    return path.with_name(path.name + ".seen")


_shm_fds: dict[tuple[int, int], int] = {}


def _shm_fd(shm: Path) -> int | None:
    """A descriptor of ``shm``, opened once and kept while the file exists.

    Closing one would release SQLite's locks on it; a descriptor is closed only
    once its file was deleted (SQLite deletes it after its last connection closed).
    """
    for key, fd in list(_shm_fds.items()):
        try:
            gone = os.fstat(fd).st_nlink == 0
        except OSError:
            gone = True
        if gone:
            del _shm_fds[key]
            with contextlib.suppress(OSError):
                os.close(fd)
    try:
        st = os.stat(shm)
    except OSError:
        return None
    key = (st.st_dev, st.st_ino)
    if key not in _shm_fds:
        try:
            fd = os.open(shm, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        st2 = os.fstat(fd)
        _shm_fds[(st2.st_dev, st2.st_ino)] = fd
        key = (st2.st_dev, st2.st_ino)
    return _shm_fds[key]


def checkpoint_state(path: Path) -> tuple[str, int, int] | None:
    """The log's salts and checkpoint progress from ``-shm``, or None without one."""
    fd = _shm_fd(shm_path(path))
    if fd is None:
        return None
    try:
        head = os.pread(fd, _ATTEMPTED_AT + 4, 0)
    except OSError:
        return None
    if len(head) < _ATTEMPTED_AT + 4:
        return None
    (backfill,) = struct.unpack_from("=I", head, _BACKFILL_AT)
    (attempted,) = struct.unpack_from("=I", head, _ATTEMPTED_AT)
    return head[_SALT].hex(), backfill, attempted


def _file_part(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def look(path: Path, *, judging: bool) -> FileState | None:
    """The file and its checkpoint state, or None when the path is gone.

    The order matters: a checkpoint marks ``-shm`` before it writes the file. To
    judge, the file is read first (a change then shows in ``-shm`` too); to
    remember, ``-shm`` first (so a checkpoint in between never looks like a
    change without one).
    """
    if judging:
        part = _file_part(path)
        checkpoint = checkpoint_state(path)
    else:
        checkpoint = checkpoint_state(path)
        part = _file_part(path)
    return None if part is None else FileState(*part, checkpoint=checkpoint)


def replaced(seen: FileState, now: FileState) -> bool:
    """Whether the file changed in a way no checkpoint explains."""
    if (seen.dev, seen.ino) != (now.dev, now.ino):
        return True
    if (seen.size, seen.mtime_ns) == (now.size, now.mtime_ns):
        return False
    if seen.checkpoint is None or now.checkpoint is None:
        return False  # no log index to compare with: nothing of an old log is in use
    if not (seen.settled and now.settled):
        return False
    return seen.checkpoint == now.checkpoint


# --- what was seen, shared with the processes that open later ---------------


def read_seen(path: Path) -> tuple[FileState | None, bool]:
    """The last remembered state and whether a replacement was found.

    Only for this very path: a data folder copied elsewhere (with its ``-wal``)
    is another store, not a replaced one.
    """
    try:
        data = json.loads(seen_path(path).read_text(encoding="utf-8"))
        if data.get("path") != os.fspath(path.absolute()):
            return None, False
        state = data.get("state")
        checkpoint = state.get("checkpoint") if state else None
        if state is not None:
            state = FileState(**{**state, "checkpoint": tuple(checkpoint) if checkpoint else None})
        return state, bool(data.get("replaced"))
    except (OSError, ValueError, TypeError, AttributeError):
        return None, False


def write_seen(path: Path, state: FileState | None, *, replaced: bool = False) -> None:
    """Remember ``state`` (best effort: a full disk only loses the hint)."""
    target = seen_path(path)
    temp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    payload = {
        "path": os.fspath(path.absolute()),
        "state": asdict(state) if state else None,
        "replaced": replaced,
    }
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(payload))
        os.replace(temp, target)
    except OSError:
        with contextlib.suppress(OSError):  # nothing half-written is left beside the store
            os.unlink(temp)


def forget_seen(path: Path) -> None:
    with contextlib.suppress(OSError):
        seen_path(path).unlink()


# --- the errors ---------------------------------------------------------------


def replaced_error(path: Path) -> StoreReplaced:
    return StoreReplaced(
        f"the store file {path} was replaced while delegate had it open (its write-ahead "
        f"log {path.name}-wal belongs to the file that was there): nothing more is written "
        "to it. Stop every delegate process using it (the panel, watch, mcp), then put the "
        "backup in safely with: delegate store restore BACKUP"
    )


def removed_error(path: Path) -> StoreRemoved:
    return StoreRemoved(
        f"the store file {path} was removed while delegate had it open: nothing more is "
        "written to it. Restart delegate (the panel, watch, mcp): the next start creates a "
        "fresh store (or put a backup in with: delegate store restore BACKUP)"
    )


# --- the guard one open store keeps -----------------------------------------


class FileGuard:
    """Judges the store file before each write of one open :class:`Database`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: FileState | None = None
        self.lost: StoreReplaced | StoreRemoved | None = None

    def before_open(self) -> None:
        """Refuse a file already found replaced, or one that changed under a live log.

        A store removed while a process held it leaves its ``-wal`` and ``-shm``
        behind: they are moved aside, so the fresh store is not read with them.
        """
        path = self.path
        if not path.exists():
            _move_aside(path, "removed")
            forget_seen(path)
            return
        seen, found = read_seen(path)
        if found:
            raise replaced_error(path)
        if seen is None or not _log_in_use(path):
            return
        now = look(path, judging=True)
        if now is not None and replaced(seen, now):
            write_seen(path, seen, replaced=True)
            raise replaced_error(path)

    def record(self) -> None:
        """Remember the file as it is after this process's open or commit."""
        if self.lost is not None:
            return
        now = look(self.path, judging=False)
        if now != self._seen:  # most commits only grow the log: the file is as it was
            write_seen(self.path, now)
        self._seen = now

    def check(self) -> None:
        """Raise (and keep raising) once the file was replaced or removed."""
        if self.lost is not None:
            raise self.lost
        seen = self._seen
        if seen is None:
            return
        now = look(self.path, judging=True)
        if now is None:
            self.lost = removed_error(self.path)
        elif replaced(seen, now):
            if _opened_since(self.path, now):
                # Removed, and a fresh store made since by a process that judged it.
                self.lost = removed_error(self.path)
            else:
                self.lost = replaced_error(self.path)
                write_seen(self.path, seen, replaced=True)
        if self.lost is not None:
            raise self.lost

    def probe(self) -> StoreReplaced | StoreRemoved | None:
        """What :meth:`check` would raise, without a write: for a long-lived process's tick."""
        try:
            self.check()
        except (StoreReplaced, StoreRemoved) as exc:
            return exc
        return None


def _opened_since(path: Path, now: FileState) -> bool:
    """Whether another delegate process opened the file now at ``path`` (and judged it
    then): what it saw is this very file, unchanged since but for checkpoints."""
    shared, found = read_seen(path)
    if shared is None or found:
        return False
    return (shared.dev, shared.ino) == (now.dev, now.ino) and not replaced(shared, now)


def _log_in_use(path: Path) -> bool:
    """Whether a ``-wal`` with frames in it sits beside the file."""
    try:
        return wal_path(path).stat().st_size > 32
    except OSError:
        return False


def _move_aside(path: Path, why: str) -> None:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for leftover in (wal_path(path), shm_path(path)):
        with contextlib.suppress(FileNotFoundError):
            leftover.rename(leftover.with_name(f"{leftover.name}.{why}-{stamp}"))


def move_log_aside(path: Path, why: str) -> None:
    """Move the ``-wal`` and ``-shm`` of ``path`` aside (nobody may have them open)."""
    _move_aside(path, why)


def log_held(path: Path) -> bool:
    """Whether any process has a connection to ``path`` open (its ``-shm`` lock)."""
    import fcntl

    try:
        fd = os.open(shm_path(path), os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, SHM_DMS_BYTE)
        except OSError:
            return True
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, SHM_DMS_BYTE)
        return False
    finally:
        os.close(fd)


# --- closing without writing the old log into a replaced file ----------------

_SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE = 1006


def skip_checkpoint_on_close(conn: sqlite3.Connection) -> bool:
    """Ask SQLite not to copy the log into the file when ``conn`` closes.

    A connection's last close copies its log into the file: into a replaced
    file that is the damage itself. Python 3.12 has ``setconfig``; before it,
    the flag is set through SQLite's C interface (best effort: False if not).
    """
    setconfig = getattr(conn, "setconfig", None)
    if setconfig is not None:
        setconfig(_SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, True)
        return True
    try:
        import _sqlite3
        import ctypes  # only here: a replaced store is rare, and ctypes costs a start

        lib = ctypes.CDLL(_sqlite3.__file__)
        db_config = lib.sqlite3_db_config
        db_config.restype = ctypes.c_int
        # CPython's connection object holds its ``sqlite3 *`` right after the object header.
        handle = ctypes.c_void_p.from_address(id(conn) + object.__basicsize__).value
        if not handle:
            return False
        out = ctypes.c_int(-1)
        rc = db_config(
            ctypes.c_void_p(handle),
            ctypes.c_int(_SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE),
            ctypes.c_int(1),
            ctypes.byref(out),
        )
        return rc == 0 and out.value == 1
    except (OSError, AttributeError, ValueError):
        return False
