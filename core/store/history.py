"""History: every history event as its own JSON, newest first by id."""

from __future__ import annotations

import json
from typing import Any

from core.store.database import Database
from core.store.rows import HistoryRow, clamp_int


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
        """Store one event; returns its id."""
        async with self._db.transaction() as db:
            cur = await db.execute(
                "INSERT INTO history(at, kind, conversation_id, run_id, payload)"
                " VALUES (?, ?, ?, ?, ?)",
                (at_us, kind, conversation_id, run_id, json.dumps(payload)),
            )
            return int(cur.lastrowid or 0)

    async def page(self, limit: int, before_id: int | None = None) -> list[HistoryRow]:
        """Newest first, keyset on the event id."""
        sql = "SELECT id, at, kind, conversation_id, run_id, payload FROM history"
        params: tuple[object, ...] = (limit,)
        if before_id is not None:
            sql += " WHERE id < ?"
            params = (before_id, limit)
        rows = await self._db.fetch_all(sql + " ORDER BY id DESC LIMIT ?", params)
        return [
            HistoryRow(
                id=clamp_int(r["id"]),
                at=clamp_int(r["at"]),
                kind=str(r["kind"]),
                conversation_id=r["conversation_id"],
                run_id=r["run_id"],
                payload=json.loads(r["payload"]),
            )
            for r in rows
        ]
