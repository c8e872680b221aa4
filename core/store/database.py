"""The database file: opening, pragmas, migrations, and its two connections.

- One **writer** connection. Every state change is one ``BEGIN IMMEDIATE``
  transaction under an asyncio lock (other processes are serialised by SQLite
  itself: ``BEGIN IMMEDIATE`` + ``busy_timeout``). BEGIN, COMMIT and ROLLBACK
  are shielded from cancellation, so a cancelled coroutine never leaves a
  transaction half open.
- One **reader** connection in autocommit mode: each read is its own WAL
  snapshot, so a slow status scan never blocks a preview, and no read ever runs
  inside another coroutine's open transaction.
- Rows come back as :class:`aiosqlite.Row` and are read by column name.
- Every SQLite failure except a constraint violation becomes a typed
  :class:`~core.errors.StoreError` naming the file and what to do; a full disk
  is :class:`~core.errors.DiskFull` naming the folder (SQLite has then rolled
  the transaction back itself: nothing was written).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import aiosqlite

from core.atomic_files import is_disk_full, sqlite_disk_full
from core.errors import DiskFull, StoreBusy, StoreError
from core.migrations import MIGRATIONS, SCHEMA_VERSION
from core.store.backup import restore_lock
from core.store.file_guard import FileGuard, skip_checkpoint_on_close

T = TypeVar("T")
Params = Iterable[object]

BUSY_TIMEOUT_MS = 10_000
# An open refused as busy sooner than this was refused without a wait: it is tried again.
INSTANT_BUSY_S = 1.0
OPEN_ATTEMPTS = 5
WRITER_WAIT_S = 60.0
"""How long a transaction waits for the other transactions of its own process."""


class Database:
    """One SQLite file behind a writer and a reader connection.

    Open with :meth:`open`, close with :meth:`close`. ``read_only`` is True when
    the file cannot be written: reads work, :meth:`transaction` refuses.
    """

    def __init__(
        self,
        path: Path,
        writer: aiosqlite.Connection | None,
        reader: aiosqlite.Connection,
    ) -> None:
        self.path = path
        self._writer = writer
        self._reader = reader
        self._lock = asyncio.Lock()
        # Whether the file is still the one opened (not replaced or removed under it).
        self.guard = FileGuard(path)

    @property
    def read_only(self) -> bool:
        return self._writer is None

    # --- lifecycle -------------------------------------------------------

    @classmethod
    async def open(cls, path: Path) -> Database:
        """Open (creating if needed) the file and bring its schema up to date.

        Nothing is written when nothing needs doing, so a read-only file opens
        read-only. A file that is damaged, or from a newer delegate, raises
        :class:`StoreError` and is left exactly as it was.
        """
        # A restore under way (``delegate store restore``) finishes before anyone opens.
        with restore_lock(path, exclusive=False):
            for attempt in range(1, OPEN_ATTEMPTS + 1):
                began = time.monotonic()
                try:
                    return await cls._open(path)
                except StoreBusy:
                    # SQLite answers "locked" at once, without waiting, where waiting could
                    # deadlock (processes making a new file WAL or migrating it at the same
                    # moment); a wait that timed out is a real busy store.
                    if attempt == OPEN_ATTEMPTS or time.monotonic() - began > INSTANT_BUSY_S:
                        raise
                await asyncio.sleep(random.uniform(0.01, 0.1))
            raise AssertionError("unreachable: the last attempt returns or raises")

    @classmethod
    async def _open(cls, path: Path) -> Database:
        FileGuard(path).before_open()
        create = not path.exists()
        try:
            if create:
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                # Create the file 0600 before SQLite does, so it is never world-readable.
                # Another process starting at the same moment may create it first: fine.
                with contextlib.suppress(FileExistsError):
                    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600))
            writable = os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
        except OSError as exc:
            if is_disk_full(exc):
                raise DiskFull(str(path.parent), f"cannot create the store {path.name}") from None
            raise StoreError(f"cannot create the store {path}: {exc.strerror or exc}") from exc
        opened: list[aiosqlite.Connection] = []
        try:
            if writable:
                reader = await _connect(path, read_only=False, opened=opened)
            else:
                reader = await _connect_read_only(path, opened)
            version = await _user_version(reader)
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{path} has schema version {version}, newer than this delegate "
                    f"understands ({SCHEMA_VERSION}): upgrade delegate, or move the file "
                    "aside to start a fresh store"
                )
            writer = await _connect(path, read_only=False, opened=opened) if writable else None
            database = cls(path, writer, reader)
            if writer is not None:
                await database._prepare_for_writing(writer, version)
            elif version < SCHEMA_VERSION:
                raise StoreError(
                    f"{path} is read-only and needs an upgrade to schema version "
                    f"{SCHEMA_VERSION} (it has {version}): make it writable (chmod u+w) once"
                )
        except BaseException as exc:
            # A failed open must close what it opened: an aiosqlite connection's
            # thread would keep the process alive forever.
            for conn in opened:
                await conn.close()
            if isinstance(exc, sqlite3.Error):
                raise store_error(path, exc) from exc
            raise
        database.guard.record()
        return database

    async def close(self) -> None:
        if self.guard.lost is not None:
            # Closing copies the log into the file: not into one that replaced ours.
            for conn in (self._writer, self._reader):
                if conn is not None:
                    skip_checkpoint_on_close(conn._conn)
        if self._writer is not None:
            await self._writer.close()
        await self._reader.close()

    async def _prepare_for_writing(self, writer: aiosqlite.Connection, version: int) -> None:
        """WAL mode (persistent in the file) and migrations, only when needed."""
        row = first_row(await writer.execute_fetchall("PRAGMA journal_mode"))
        if row is None or str(row[0]).lower() != "wal":
            await writer.execute("PRAGMA journal_mode = WAL")
        if version == SCHEMA_VERSION:
            return
        async with self.transaction() as db:
            version = await _user_version(db)  # another process may have migrated
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _split_sql(MIGRATIONS[target]):
                    await db.execute(statement)
                await db.execute(f"PRAGMA user_version = {target}")

    # --- reads -------------------------------------------------------------

    async def fetch_all(self, sql: str, params: Params = ()) -> list[aiosqlite.Row]:
        """All rows of one query on the reader connection (its own WAL snapshot).

        One round trip to the connection's thread, so a slow query queued by
        another task cannot slip in between execute and fetch.
        """
        try:
            return list(await self._reader.execute_fetchall(sql, tuple(params)))
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from exc

    async def fetch_one(self, sql: str, params: Params = ()) -> aiosqlite.Row | None:
        rows = await self.fetch_all(sql, params)
        return rows[0] if rows else None

    # --- writes ------------------------------------------------------------

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` on the writer, one at a time.

        Yields the writer connection: reads that must see the transaction's own
        writes run on it. An exception (or a cancellation) rolls back.
        """
        writer = self._writer
        if writer is None:
            raise StoreError(
                f"{self.path} is read-only: make it writable (chmod u+w) or use another "
                "--data-dir; reading commands work as they are"
            )
        async with _held(self._lock, self.path):
            began = asyncio.ensure_future(writer.execute("BEGIN IMMEDIATE"))
            try:
                await _complete(began)
                self.guard.check()
                yield writer
            except BaseException as exc:
                if began.done() and not began.cancelled() and began.exception() is None:
                    await _roll_back(writer)
                if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.IntegrityError):
                    raise store_error(self.path, exc) from exc
                raise
            try:
                await _complete(writer.execute("COMMIT"))
            except sqlite3.Error as exc:
                await _roll_back(writer)
                raise store_error(self.path, exc) from exc
            self.guard.record()


@asynccontextmanager
async def _held(lock: asyncio.Lock, path: Path) -> AsyncIterator[None]:
    """``lock``, waited for at most :data:`WRITER_WAIT_S` (then ``store_busy``)."""
    try:
        async with asyncio.timeout(WRITER_WAIT_S):
            await lock.acquire()
    except TimeoutError:
        raise StoreBusy(
            f"the store {path} is busy: this process's other writes held it for "
            f"{WRITER_WAIT_S:.0f} s; try again"
        ) from None
    try:
        yield
    finally:
        lock.release()


async def _roll_back(writer: aiosqlite.Connection) -> None:
    """ROLLBACK what is still open; never hide the failure that asked for it.

    After ``SQLITE_FULL`` (and some I/O errors) SQLite has rolled the transaction
    back itself, so ROLLBACK answers "no transaction is active": the original error
    is the one to report, and the connection is ready for the next transaction.
    """
    if not writer.in_transaction:
        return
    with contextlib.suppress(sqlite3.Error):
        await _complete(writer.execute("ROLLBACK"))


async def _complete(step: Awaitable[T]) -> T:
    """Finish ``step`` even if the caller is cancelled meanwhile, then re-raise.

    The statement runs on the connection's thread whatever happens to the
    coroutine awaiting it; waiting for it keeps the transaction state known.
    """
    task = asyncio.ensure_future(step)
    interrupted = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            interrupted = True
    result = task.result()
    if interrupted:
        raise asyncio.CancelledError
    return result


async def _connect_read_only(
    path: Path, opened: list[aiosqlite.Connection]
) -> aiosqlite.Connection:
    """A reader for a file this process may not write.

    A WAL database needs its ``-shm`` file even to read; on a read-only folder
    or mount SQLite cannot create it, so the file is then opened ``immutable``:
    nobody can be writing it there (a leftover ``-wal`` is not read).
    """
    try:
        return await _connect(path, read_only=True, opened=opened)
    except sqlite3.OperationalError as exc:
        if "unable to open" not in str(exc).lower():
            raise
        for conn in opened:
            await conn.close()
        opened.clear()
        return await _connect(path, read_only=True, opened=opened, immutable=True)


async def _connect(
    path: Path,
    *,
    read_only: bool,
    opened: list[aiosqlite.Connection],
    immutable: bool = False,
) -> aiosqlite.Connection:
    """A connection in autocommit mode (we issue BEGIN ourselves) with our pragmas."""
    uri = f"{path.resolve().as_uri()}?mode={'ro' if read_only else 'rw'}"
    if immutable:
        uri += "&immutable=1"
    conn = await aiosqlite.connect(uri, uri=True, isolation_level=None)
    opened.append(conn)
    conn.row_factory = aiosqlite.Row
    await conn.create_function("casefold", 1, casefold, deterministic=True)
    await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    await conn.execute("PRAGMA foreign_keys = ON")
    if not read_only:
        await conn.execute("PRAGMA synchronous = NORMAL")
    # Read the header now: a file that is not a database fails here, not later.
    await _user_version(conn)
    await conn.execute_fetchall("SELECT count(*) FROM sqlite_master")
    return conn


async def _user_version(conn: aiosqlite.Connection) -> int:
    row = first_row(await conn.execute_fetchall("PRAGMA user_version"))
    return int(row[0]) if row else 0


def first_row(rows: Iterable[aiosqlite.Row]) -> aiosqlite.Row | None:
    """The first row of a fetched result, or None.

    Inside a transaction, statements that return rows are fetched whole in one
    call to the connection's thread (``execute_fetchall``): a cursor left open
    by a cancelled coroutine would keep its statement in progress, and COMMIT
    would then fail.
    """
    for row in rows:
        return row
    return None


IDS_PER_QUERY = 500
"""Ids per ``IN (...)`` list: SQLite takes 32,766 parameters; a shorter list plans as fast."""


def id_chunks(ids: Sequence[str]) -> Iterator[tuple[list[str], str]]:
    """``ids`` in lists of at most :data:`IDS_PER_QUERY`, each with its ``?, ?, ...`` marks."""
    for start in range(0, len(ids), IDS_PER_QUERY):
        chunk = list(ids[start : start + IDS_PER_QUERY])
        yield chunk, ", ".join("?" * len(chunk))


def store_error(path: Path, exc: sqlite3.Error) -> StoreError | DiskFull:
    """A SQLite failure as one line a person can act on."""
    text = str(exc)
    lowered = text.lower()
    if sqlite_disk_full(exc, path.parent):
        return DiskFull(str(path.parent), f"the store {path.name} cannot grow")
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return StoreError(
            f"the store {path} is damaged ({text}): restore a backup with `delegate store "
            f"restore BACKUP`, or move it aside (mv {path} {path}.damaged) and delegate "
            "starts a fresh one"
        )
    if "readonly" in lowered or "read-only" in lowered:
        return StoreError(
            f"the store {path} is read-only ({text}): make it writable (chmod u+w) or use "
            "another --data-dir; reading commands work as they are"
        )
    if "locked" in lowered or "busy" in lowered:
        return StoreBusy(
            f"the store {path} is busy: another delegate process held its lock for "
            f"{BUSY_TIMEOUT_MS // 1000} s ({text}); try again"
        )
    if "unable to open" in lowered or "disk i/o" in lowered:
        return StoreError(
            f"cannot open the store {path} ({text}): check that it and its folder exist "
            "and are readable"
        )
    return StoreError(f"the store {path} failed: {text}")


def casefold(value: object) -> object:
    """SQL ``casefold(x)``: Python's full Unicode case folding (``lower`` is ASCII only)."""
    return value.casefold() if isinstance(value, str) else value


def _split_sql(script: str) -> list[str]:
    """The statements of a migration, whole (a trigger's body holds semicolons)."""
    statements, pending = [], ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                statements.append(pending.strip())
            pending = ""
    if pending.strip(" \n;"):
        statements.append(pending.strip())
    return statements
