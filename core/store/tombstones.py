"""Tombstones: dismissing a session, and remembering that it was dismissed.

A dismissed id is never re-created by an import (see core.store.imports).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from core.errors import DismissRefused, UnknownConversation
from core.models import Session, SessionState
from core.store.database import Database, first_row
from core.store.rows import SESSION_COLUMNS, session_from_row

BeforeWrite = Callable[[], Awaitable[None]]


async def _nothing() -> None:
    return None


class TombstonesRepository:
    """The ``dismissed`` table, and removing a session with everything stored for it.

    ``before_dismiss`` runs first: the store wires it to
    :meth:`RunsRepository.interrupt_dead_runs`, so a session whose run's owner
    died can be dismissed.
    """

    def __init__(self, db: Database, before_dismiss: BeforeWrite = _nothing) -> None:
        self._db = db
        self._before_dismiss = before_dismiss

    async def dismiss(self, conversation_id: str, at_us: int) -> Session:
        """Remove a session and everything stored for it; remember the id as dismissed."""
        await self._before_dismiss()
        async with self._db.transaction() as db:
            row = first_row(
                await db.execute_fetchall(
                    f"SELECT {SESSION_COLUMNS} FROM sessions WHERE conversation_id = ?",
                    (conversation_id,),
                )
            )
            if row is None:
                raise UnknownConversation(conversation_id)
            session = session_from_row(row)
            if session.state is SessionState.PENDING:
                raise DismissRefused(
                    f"detached session {conversation_id!r} is still pending; "
                    "dismiss it once it is ready"
                )
            if session.state is SessionState.RUNNING:
                raise DismissRefused(
                    f"session {conversation_id!r} is still running; dismiss it when the run ends"
                )
            await db.execute(
                "INSERT OR REPLACE INTO dismissed(conversation_id, source, dismissed_at)"
                " VALUES (?, ?, ?)",
                (conversation_id, session.source, at_us),
            )
            # Messages and runs go with the session (ON DELETE CASCADE).
            await db.execute("DELETE FROM sessions WHERE conversation_id = ?", (conversation_id,))
        return session

    async def is_dismissed(self, conversation_id: str) -> bool:
        row = await self._db.fetch_one(
            "SELECT 1 FROM dismissed WHERE conversation_id = ?", (conversation_id,)
        )
        return row is not None
