"""The archive, names and purging: which sessions stay in the reusable pool, and their names.

Owns the rules for a session's name and for what an archive operation may touch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.clock import to_us
from core.conversations.ids import SessionIds
from core.demo_ids import demo_id
from core.errors import InvalidRequest
from core.events import SessionDismissed, SessionPurged, SessionRenamed, SessionRestored
from core.models import Session, SessionsRequest
from core.requests import validate
from core.services import CoreServices, Wing

if TYPE_CHECKING:
    pass

NAME_CHARS = 200  # a session's name, at most
DEMO_CLEAR_BATCH = 500  # demo ids looked for at once by clear_demo


def session_name(name: str | None) -> str | None:
    """A name as stored: trimmed, None when blank; one printable line of at most 200."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise InvalidRequest("a session's name must be text")
    cleaned = name.strip()
    if not cleaned:
        return None
    if not cleaned.isprintable():
        raise InvalidRequest(
            "a session's name is one line of printable text (no line breaks, tabs or escapes)"
        )
    if len(cleaned) > NAME_CHARS:
        raise InvalidRequest(
            f"a session's name is at most {NAME_CHARS} characters; this one has {len(cleaned)}"
        )
    return cleaned


class SessionArchive(Wing):
    """Archive, restore, rename and purge sessions; clear the demo."""

    def __init__(self, core: CoreServices, ids: SessionIds) -> None:
        super().__init__(core)
        self.ids = ids

    async def dismiss(self, conversation_id: str) -> Session:
        """The seed's name for :meth:`archive`."""
        return await self.archive(conversation_id)

    async def archive(self, conversation_id: str) -> Session:
        """Move a session (and its sub-agents) out of the reusable pool into the archive.

        Everything stored is kept (:meth:`restore` brings it back); a running
        or pending session is refused (``dismiss_refused``).
        """
        conversation_id = await self._target("dismiss", conversation_id)
        now = self.clock()
        before = await self.store.sessions.get(conversation_id)
        session = await self.store.archive.archive(conversation_id, to_us(now))
        if before.archived_at is None:
            await self.emitter.emit(
                SessionDismissed(
                    at=now,
                    conversation_id=conversation_id,
                    agent_id=session.agent_id,
                    title=session.shown_title,
                )
            )
        return session

    async def restore(self, conversation_id: str) -> Session:
        """Bring an archived session (and its sub-agents) back into the reusable pool."""
        conversation_id = await self._target("restore", conversation_id)
        before = await self.store.sessions.get(conversation_id)
        session = await self.store.archive.restore(conversation_id)
        if before.archived_at is not None:
            await self.emitter.emit(
                SessionRestored(
                    at=self.clock(),
                    conversation_id=conversation_id,
                    agent_id=session.agent_id,
                    title=session.shown_title,
                )
            )
        return session

    async def rename(self, conversation_id: str, name: str | None) -> Session:
        """Name a session in delegate (None or blank clears the name).

        A name is one line of printable text, at most ``NAME_CHARS`` characters
        once trimmed; anything else is ``invalid_request``. Another tool's files
        are never written.
        """
        conversation_id = await self._target("rename", conversation_id)
        cleaned = session_name(name)
        session = await self.store.archive.rename(conversation_id, cleaned)
        await self.emitter.emit(
            SessionRenamed(
                at=self.clock(),
                conversation_id=conversation_id,
                agent_id=session.agent_id,
                title=session.title,
                name=cleaned,
            )
        )
        return session

    async def purge(
        self, conversation_id: str, *, force: bool = False, with_dependants: bool = False
    ) -> None:
        """Free what delegate stores for an archived session (``force``: any idle one).

        Messages, runs and sub-agents go; the id is remembered so a later
        import does not bring the session back. Files another tool wrote (a
        Claude Code or Codex transcript) are never touched. Refused
        (``dismiss_refused``) while a run is in flight, or for a session not in
        the archive without ``force``; refused (``has_dependants``) while other
        sessions depend on it (:meth:`dependants`) unless ``force``, or
        ``with_dependants`` once a person confirmed the list.
        """
        conversation_id = await self._target("purge", conversation_id)
        now = self.clock()
        session = await self.store.tombstones.purge(
            conversation_id, to_us(now), force=force, with_dependants=with_dependants
        )
        await self.emitter.emit(
            SessionPurged(
                at=now,
                conversation_id=conversation_id,
                agent_id=session.agent_id,
                title=session.shown_title,
            )
        )

    async def dependants(self, conversation_id: str) -> list[str]:
        """Sessions that depend on this one: sub-agents launched from it, forks of
        it, its hand-off chain (both ways), consumers of its documents."""
        return await self.store.tombstones.dependants(await self.ids.resolve_id(conversation_id))

    async def clear_demo(self) -> int:
        """Remove the demo sessions (``delegate demo``) from the store; how many went.

        Demo ids are fixed (core.demo.demo_id), so they are found by id, in
        batches, until a batch holds none; a demo session with a run in flight
        stays.
        """
        removed, start = 0, 0
        while True:
            ids = [demo_id(i) for i in range(start, start + DEMO_CLEAR_BATCH)]
            gone = await self.store.bulk.delete(ids)
            if gone == 0 and not await self._any_exists(ids):
                return removed
            removed += gone
            start += DEMO_CLEAR_BATCH

    async def _any_exists(self, conversation_ids: list[str]) -> bool:
        for cid in conversation_ids:
            if await self.store.sessions.exists(cid):
                return True
        return False

    async def _target(self, operation: str, conversation_id: str) -> str:
        """The full id of the session an archive operation names (validated first)."""
        validate(SessionsRequest, {"operation": operation, "conversation_id": conversation_id})
        return await self.ids.resolve_id(conversation_id)
