"""The archive and names: moving a session out of the reusable pool and back, naming it.

Archiving keeps everything stored (``archived_at`` set); a session's
sub-agents go to and come back from the archive with it. Purging, which frees
what is stored, lives in :mod:`core.store.tombstones`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import aiosqlite

from core.errors import DismissRefused, UnknownConversation
from core.models import Session, SessionState
from core.store.database import Database, first_row
from core.store.rows import session_columns, session_from_row

BeforeWrite = Callable[[], Awaitable[None]]


async def _nothing() -> None:
    return None


class ArchiveRepository:
    """``sessions.archived_at`` and ``sessions.name``.

    ``before_write`` runs before archiving: the store wires it to
    :meth:`RunsRepository.interrupt_dead_runs`, so a session whose run's owner
    died can be archived.
    """

    def __init__(self, db: Database, before_write: BeforeWrite = _nothing) -> None:
        self._db = db
        self._before_write = before_write

    async def archive(self, conversation_id: str, at_us: int) -> Session:
        """Move a session (and its sub-agents) to the archive; refused while it runs.

        Archiving an archived session changes nothing.
        """
        await self._before_write()
        async with self._db.transaction() as db:
            session = await _session(db, conversation_id)
            if session.state in (SessionState.PENDING, SessionState.RUNNING):
                raise DismissRefused.busy(
                    conversation_id, pending=session.state is SessionState.PENDING
                )
            if session.archived_at is not None:
                return session
            await db.execute(
                "UPDATE sessions SET archived_at = ?"
                " WHERE (conversation_id = ? OR parent_id = ?) AND archived_at IS NULL",
                (at_us, conversation_id, conversation_id),
            )
            return await _session(db, conversation_id)

    async def restore(self, conversation_id: str) -> Session:
        """Bring a session (and its sub-agents) back into the reusable pool."""
        async with self._db.transaction() as db:
            await _session(db, conversation_id)
            await db.execute(
                "UPDATE sessions SET archived_at = NULL"
                " WHERE (conversation_id = ? OR parent_id = ?) AND archived_at IS NOT NULL",
                (conversation_id, conversation_id),
            )
            return await _session(db, conversation_id)

    async def rename(self, conversation_id: str, name: str | None) -> Session:
        """Give a session a name (None clears it); the caller validated ``name``."""
        async with self._db.transaction() as db:
            await _session(db, conversation_id)
            await db.execute(
                "UPDATE sessions SET name = ? WHERE conversation_id = ? AND name IS NOT ?",
                (name, conversation_id, name),
            )
            return await _session(db, conversation_id)


async def _session(db: aiosqlite.Connection, conversation_id: str) -> Session:
    """One session read on the writer (inside the transaction); unknown ids raise."""
    row = first_row(
        await db.execute_fetchall(
            f"SELECT {session_columns()} FROM sessions WHERE conversation_id = ?",
            (conversation_id,),
        )
    )
    if row is None:
        raise UnknownConversation(conversation_id)
    return session_from_row(row)
