"""Whole finished sessions inserted at once: demo data and benchmarks."""

from __future__ import annotations

from collections.abc import Sequence

from core.store.database import Database
from core.store.messages import MessagesRepository
from core.store.rows import FinishedSession


class BulkRepository:
    """Inserts finished sessions with their messages, bypassing runs."""

    def __init__(self, db: Database, messages: MessagesRepository) -> None:
        self._db = db
        self._messages = messages

    async def insert(self, sessions: Sequence[FinishedSession]) -> None:
        """Insert finished sessions with their messages in one transaction."""
        async with self._db.transaction() as db:
            await db.executemany(
                "INSERT INTO sessions(conversation_id, agent_id, mode, state, cwd, git_branch,"
                " title, parent_id, source, created_at, last_interacted_at, context_limit,"
                " last_run_status, warmup) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        f.session.conversation_id,
                        f.session.agent_id,
                        f.session.mode.value,
                        f.state.value,
                        f.session.cwd,
                        f.session.git_branch,
                        f.session.title,
                        f.session.parent_id,
                        f.session.source,
                        f.session.created_us,
                        f.last_interacted_us,
                        f.session.context_limit,
                        f.last_run_status.value if f.last_run_status else None,
                        int(f.session.warmup),
                    )
                    for f in sessions
                ],
            )
            for f in sessions:
                await self._messages.append_in(db, f.session.conversation_id, f.messages)
            reported = [
                (f.context_tokens, f.session.conversation_id)
                for f in sessions
                if f.context_tokens is not None
            ]
            await db.executemany(
                "UPDATE sessions SET context_tokens = ? WHERE conversation_id = ?", reported
            )

    async def delete(self, conversation_ids: Sequence[str]) -> int:
        """Delete these sessions (none with a run in flight), without tombstones; how many.

        For data delegate made up itself (the demo): nothing to keep out of imports.
        """
        if not conversation_ids:
            return 0
        marks = ", ".join("?" * len(conversation_ids))
        async with self._db.transaction() as db:
            cursor = await db.execute(
                f"DELETE FROM sessions WHERE conversation_id IN ({marks})"
                " AND state NOT IN ('pending', 'running')",
                tuple(conversation_ids),
            )
            return max(cursor.rowcount, 0)
