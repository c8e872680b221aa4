"""History: every history event as its own JSON, newest first by id."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite
from pydantic import ValidationError

from core import process_identity
from core.events import HISTORY_EVENT, HistoryEvent
from core.store.database import Database
from core.store.rows import HistoryRow, clamp_int


@dataclass(frozen=True, slots=True)
class HistoryEvents:
    """History events newest first, and how many stored rows could not be read.

    ``skipped`` counts rows of a kind this version does not know (a newer
    delegate wrote them) or that are damaged: they are left out, never fatal.
    """

    events: list[HistoryEvent]
    skipped: int


_origins: dict[int, str] = {}


def this_process() -> str:
    """This process as a history row's ``origin``: host identity, pid and start time.

    A supervisor re-publishes only the history rows other processes stored.
    """
    pid = os.getpid()
    origin = _origins.get(pid)
    if origin is None:
        me = process_identity.current()
        origin = _origins[pid] = f"{me.host_id}:{me.pid}:{me.started}"
    return origin


class HistoryRepository:
    """The ``history`` table: append events, page them newest first."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(
        self,
        at_us: int,
        kind: str,
        conversation_id: str | None,
        run_id: str | None,
        payload: dict[str, Any],
    ) -> int:
        """Store one event (stamped with this process as its origin); returns its id."""
        async with self._db.transaction() as db:
            return await self.add_in(db, at_us, kind, conversation_id, run_id, payload)

    async def add_in(
        self,
        db: aiosqlite.Connection,
        at_us: int,
        kind: str,
        conversation_id: str | None,
        run_id: str | None,
        payload: dict[str, Any],
    ) -> int:
        """Store one event inside a transaction the caller holds (with the change it records)."""
        cur = await db.execute(
            "INSERT INTO history(at, kind, conversation_id, run_id, payload, origin)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (at_us, kind, conversation_id, run_id, json.dumps(payload), this_process()),
        )
        return int(cur.lastrowid or 0)

    async def has_run_event(self, run_id: str, kinds: Sequence[str]) -> bool:
        """Whether an event of one of ``kinds`` about the run ``run_id`` is stored."""
        marks = ", ".join("?" * len(kinds))
        row = await self._db.fetch_one(
            f"SELECT 1 FROM history WHERE run_id = ? AND kind IN ({marks}) LIMIT 1",
            (run_id, *kinds),
        )
        return row is not None

    async def page(self, limit: int, before_id: int | None = None) -> list[HistoryRow]:
        """Newest first, keyset on the event id."""
        sql = "SELECT id, at, kind, conversation_id, run_id, payload FROM history"
        params: tuple[object, ...] = (limit,)
        if before_id is not None:
            sql += " WHERE id < ?"
            params = (before_id, limit)
        rows = await self._db.fetch_all(sql + " ORDER BY id DESC LIMIT ?", params)
        found = []
        for r in rows:
            try:
                payload = json.loads(r["payload"])
            except (TypeError, ValueError, RecursionError):
                payload = None
            found.append(
                HistoryRow(
                    id=clamp_int(r["id"]),
                    at=clamp_int(r["at"]),
                    kind=str(r["kind"]),
                    conversation_id=r["conversation_id"],
                    run_id=r["run_id"],
                    payload=payload if isinstance(payload, dict) else {},
                )
            )
        return found

    async def child_notes(self, conversation_id: str, since_us: int) -> list[HistoryEvent]:
        """The ``child_clamped`` notes recorded for a parent since ``since_us``, oldest first
        (index ``history_child_notes``)."""
        rows = await self._db.fetch_all(
            "SELECT payload FROM history WHERE conversation_id = ? AND kind = 'child_clamped'"
            " AND at > ? ORDER BY at, id",
            (conversation_id, since_us),
        )
        notes: list[HistoryEvent] = []
        for row in rows:
            try:
                notes.append(HISTORY_EVENT.validate_json(row["payload"]))
            except (ValidationError, ValueError, TypeError, RecursionError):
                continue  # a damaged row is no note
        return notes

    async def capsule_gaps(
        self, session: str | None = None, *, since_us: int = -1, limit: int = 100
    ) -> list[HistoryEvent]:
        """``capsule_gap`` events newest first (index ``history_capsule_gaps``): all, or
        those reported to ``session`` or by it; only those after ``since_us``."""
        sql = "SELECT payload FROM history WHERE kind = 'capsule_gap' AND at > ?"
        params: tuple[object, ...] = (since_us,)
        if session is not None:
            sql += " AND (conversation_id = ? OR json_extract(payload, '$.source_id') = ?)"
            params = (*params, session, session)
        rows = await self._db.fetch_all(
            sql + " ORDER BY at DESC, id DESC LIMIT ?", (*params, limit)
        )
        gaps: list[HistoryEvent] = []
        for row in rows:
            try:
                gaps.append(HISTORY_EVENT.validate_json(row["payload"]))
            except (ValidationError, ValueError, TypeError, RecursionError):
                continue  # a damaged row is no gap
        return gaps

    async def events(self, limit: int, before_id: int | None = None) -> HistoryEvents:
        """The latest ``limit`` stored rows as events, newest first; unreadable ones counted."""
        events: list[HistoryEvent] = []
        skipped = 0
        for row in await self.page(limit, before_id):
            try:
                events.append(HISTORY_EVENT.validate_python(row.payload))
            except (ValidationError, ValueError, OverflowError, RecursionError):
                skipped += 1
        return HistoryEvents(events, skipped)
