"""The change feed: what other processes (and this one) changed in the store, cheaply.

Two steps, so that watching an idle store costs one tiny query per poll:

1. :meth:`ChangesRepository.data_version` — ``PRAGMA data_version`` on the
   reader connection. SQLite changes it whenever another connection (another
   process, or this process's writer) commits; reading it touches no table.
2. :meth:`ChangesRepository.since` — only when the version moved: the sessions
   and runs whose ``change_seq`` passed the cursor, the ids removed since, and
   the new history rows. Triggers (migration 5) keep ``change_seq``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic import ValidationError

from core.events import HISTORY_EVENT, HistoryEvent
from core.store.database import Database
from core.store.rows import clamp_int

HISTORY_BATCH = 500
"""History rows read per call at most; the cursor resumes after the last one read."""


@dataclass(frozen=True, slots=True)
class ChangeCursor:
    """Where a reader of the feed is: the change counter and the last history id seen."""

    seq: int
    history_id: int


@dataclass(frozen=True, slots=True)
class StoredHistory:
    """A history event as stored, and which process stored it (None for older rows)."""

    event: HistoryEvent
    origin: str | None


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """What changed after a cursor, and the cursor to pass next time."""

    cursor: ChangeCursor
    sessions: tuple[str, ...] = ()  # conversation ids changed or added to the pool
    # Conversation ids that left the reusable pool: archived, purged, or re-keyed away.
    removed: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()  # run ids changed or added
    history: tuple[StoredHistory, ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not (self.sessions or self.removed or self.runs or self.history)


# One statement, so one WAL snapshot: ids and the counter agree. An archived
# session changed ('a') has left the pool: a removal to whoever shows the pool.
_SQL_CHANGED = """
SELECT CASE WHEN archived_at IS NULL THEN 's' ELSE 'a' END AS what,
       conversation_id AS id, change_seq AS seq
    FROM sessions WHERE change_seq > ?1
UNION ALL
SELECT 'd', conversation_id, change_seq FROM session_removals WHERE change_seq > ?1
UNION ALL
SELECT 'r', run_id, change_seq FROM runs WHERE change_seq > ?1
UNION ALL
SELECT 'c', NULL, seq FROM change_counter WHERE id = 1
"""


class ChangesRepository:
    """Reads the change feed (``change_counter``, ``change_seq``, ``session_removals``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def data_version(self) -> int:
        """SQLite's data version of the reader connection: moves when anyone else commits."""
        row = await self._db.fetch_one("PRAGMA data_version")
        return int(row[0]) if row is not None else 0

    async def head(self) -> ChangeCursor:
        """A cursor at the present: :meth:`since` of it reports only later changes."""
        rows = await self._db.fetch_all(
            "SELECT (SELECT seq FROM change_counter WHERE id = 1),"
            " (SELECT coalesce(max(id), 0) FROM history)"
        )
        row = rows[0] if rows else None
        if row is None:
            return ChangeCursor(0, 0)
        return ChangeCursor(clamp_int(row[0] or 0), clamp_int(row[1] or 0))

    async def since(self, cursor: ChangeCursor) -> ChangeSet:
        """Everything changed after ``cursor``; its ``cursor`` is where the next call starts."""
        seq = cursor.seq
        sessions: dict[str, int] = {}
        removed: dict[str, int] = {}
        runs: list[str] = []
        for row in await self._db.fetch_all(_SQL_CHANGED, (cursor.seq,)):
            what, ident, at = row["what"], row["id"], clamp_int(row["seq"])
            if what == "c":
                seq = max(seq, at)
            elif not isinstance(ident, str):
                continue
            elif what == "s":
                sessions[ident] = at
            elif what in ("d", "a"):
                removed[ident] = max(at, removed.get(ident, 0))
            else:
                runs.append(ident)
        # An id removed and then added again (a re-key back) exists: it changed.
        gone = tuple(i for i, at in removed.items() if sessions.get(i, -1) < at)
        history, history_id = await self._history_after(cursor.history_id)
        return ChangeSet(
            cursor=ChangeCursor(seq, history_id),
            sessions=tuple(i for i in sessions if i not in gone),
            removed=gone,
            runs=tuple(runs),
            history=history,
        )

    async def _history_after(self, after_id: int) -> tuple[tuple[StoredHistory, ...], int]:
        rows = await self._db.fetch_all(
            "SELECT id, payload, origin FROM history WHERE id > ? ORDER BY id LIMIT ?",
            (after_id, HISTORY_BATCH),
        )
        found: list[StoredHistory] = []
        last = after_id
        for row in rows:
            last = max(last, clamp_int(row["id"]))
            try:
                event = HISTORY_EVENT.validate_python(json.loads(row["payload"]))
            except (TypeError, ValueError, ValidationError, OverflowError, RecursionError):
                continue  # a kind a newer delegate wrote, or a damaged row: skipped
            origin = row["origin"]
            found.append(StoredHistory(event, origin if isinstance(origin, str) else None))
        return tuple(found), last
