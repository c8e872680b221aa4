"""Tombstones: purging a session, and remembering that it was purged.

A purged id is never re-created by an import (see core.store.imports). The
table keeps its first name, ``dismissed``: dismissing deleted before the
archive existed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from core.errors import DismissRefused, HasDependants, UnknownConversation
from core.models import Session, SessionState
from core.store.database import Database, first_row
from core.store.rows import session_columns, session_from_row

BeforeWrite = Callable[[], Awaitable[None]]


async def _nothing() -> None:
    return None


# Sessions that reference ``?1`` and would lose what they point at (seed 004's
# guarded delete): sub-agents launched from it through delegate (an imported
# sub-agent is part of its parent's own transcript and simply goes with it),
# forks of it, both sides of its hand-off chain, and sessions that consumed a
# document it produced.
_DEPENDANTS = """
SELECT conversation_id FROM sessions WHERE parent_id = ?1 AND source = 'delegate'
UNION SELECT conversation_id FROM sessions WHERE forked_from = ?1
UNION SELECT conversation_id FROM sessions WHERE continued_from = ?1
UNION SELECT continued_in FROM sessions
    WHERE conversation_id = ?1 AND continued_in IS NOT NULL
UNION SELECT continued_from FROM sessions
    WHERE conversation_id = ?1 AND continued_from IS NOT NULL
UNION SELECT conversation_id FROM sessions WHERE continued_in = ?1
UNION SELECT c.conversation_id FROM document_consumers AS c
    JOIN documents AS d ON d.document_id = c.document_id WHERE d.source_session = ?1
"""
_LIVE_DEPENDANTS = (
    f"SELECT conversation_id FROM ({_DEPENDANTS}) AS dep WHERE conversation_id != ?1"
    " AND EXISTS (SELECT 1 FROM sessions AS s WHERE s.conversation_id = dep.conversation_id)"
    " ORDER BY conversation_id LIMIT ?2"
)
MAX_DEPENDANTS = 100


class TombstonesRepository:
    """The ``dismissed`` table, and removing a session with everything stored for it.

    ``before_dismiss`` runs first: the store wires it to
    :meth:`RunsRepository.interrupt_dead_runs`, so a session whose run's owner
    died can be dismissed.
    """

    def __init__(self, db: Database, before_dismiss: BeforeWrite = _nothing) -> None:
        self._db = db
        self._before_dismiss = before_dismiss

    async def dependants(self, conversation_id: str) -> list[str]:
        """The sessions that reference this one (see ``_DEPENDANTS``), sorted."""
        rows = await self._db.fetch_all(_LIVE_DEPENDANTS, (conversation_id, MAX_DEPENDANTS))
        return [str(r[0]) for r in rows]

    async def purge(
        self,
        conversation_id: str,
        at_us: int,
        *,
        force: bool = False,
        with_dependants: bool = False,
    ) -> Session:
        """Remove a session and everything stored for it; remember the id as purged.

        Only an archived session, unless ``force``; never one whose run is in flight.
        One that other sessions depend on is refused (``has_dependants``, listing
        them) unless ``force`` or ``with_dependants``. Its sub-agents go with it.
        """
        await self._before_dismiss()
        async with self._db.transaction() as db:
            row = first_row(
                await db.execute_fetchall(
                    f"SELECT {session_columns()} FROM sessions WHERE conversation_id = ?",
                    (conversation_id,),
                )
            )
            if row is None:
                raise UnknownConversation(conversation_id)
            session = session_from_row(row)
            if session.state in (SessionState.PENDING, SessionState.RUNNING):
                raise DismissRefused.busy(
                    conversation_id, pending=session.state is SessionState.PENDING
                )
            if session.archived_at is None and not force:
                raise DismissRefused(
                    f"session {conversation_id!r} is not archived: archive it first"
                    " (dismiss), or purge it with force"
                )
            if not (force or with_dependants):
                found = await db.execute_fetchall(
                    _LIVE_DEPENDANTS, (conversation_id, MAX_DEPENDANTS)
                )
                if found:
                    raise HasDependants(conversation_id, [str(r[0]) for r in found])
            busy = await db.execute_fetchall(
                "SELECT conversation_id FROM sessions WHERE parent_id = ?"
                " AND state IN ('pending', 'running') LIMIT 1",
                (conversation_id,),
            )
            if busy:
                raise DismissRefused(
                    f"a sub-agent of session {conversation_id!r} is still running;"
                    " purge it when the run ends"
                )
            await db.execute(
                "INSERT OR REPLACE INTO dismissed(conversation_id, source, dismissed_at)"
                " SELECT conversation_id, source, ?1 FROM sessions"
                " WHERE conversation_id = ?2 OR parent_id = ?2",
                (at_us, conversation_id),
            )
            # Messages and runs go with the session (ON DELETE CASCADE).
            await db.execute(
                "DELETE FROM sessions WHERE conversation_id = ?1 OR parent_id = ?1",
                (conversation_id,),
            )
        return session

    async def is_dismissed(self, conversation_id: str) -> bool:
        row = await self._db.fetch_one(
            "SELECT 1 FROM dismissed WHERE conversation_id = ?", (conversation_id,)
        )
        return row is not None
