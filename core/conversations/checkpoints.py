"""Checkpoints: marks in a session, and the restores and forks made from them.

Owns the rule that only a conversation delegate keeps itself is rewound or copied here.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from core.clock import to_us
from core.conversations.archive import session_name
from core.conversations.ids import MIN_ID_PREFIX, SessionIds
from core.conversations.sources import CLI_RUNNERS, message_source
from core.errors import AgentBusy, AmbiguousId, InvalidRequest, UnknownCheckpoint
from core.events import CheckpointMarked
from core.models import Checkpoint, Session, SessionState
from core.requests import printable, storable
from core.services import CoreServices, Wing

if TYPE_CHECKING:
    pass


def checkpoint_label(label: str | None) -> str:
    """A checkpoint's label as stored: one printable line, as a session's name."""
    try:
        return session_name(label) or ""
    except InvalidRequest as exc:
        raise InvalidRequest(
            exc.message.replace("a session's name", "a checkpoint's label")
        ) from None


class Checkpoints(Wing):
    """Mark, list, restore to and fork from checkpoints."""

    def __init__(self, core: CoreServices, ids: SessionIds) -> None:
        super().__init__(core)
        self.ids = ids

    async def mark_checkpoint(
        self, conversation_id: str, seq: int | None = None, label: str = ""
    ) -> Checkpoint:
        """Mark the session at message ``seq`` (default: its newest) for a later
        restore or fork; ``label`` is one line (blank: none)."""
        from core.store.checkpoints import NewCheckpoint

        conversation_id = await self.ids.resolve_id(conversation_id)
        session = await self.store.sessions.get(conversation_id)
        cleaned = checkpoint_label(label)
        at = await self._checkpoint_seq(session, seq)
        now = self.clock()
        checkpoint = await self.store.checkpoints.add(
            NewCheckpoint(self._new_id(), conversation_id, at, cleaned, to_us(now))
        )
        await self._emit_checkpoint(session, checkpoint, now)
        return checkpoint

    async def checkpoints(self, conversation_id: str) -> list[Checkpoint]:
        """The session's checkpoints, oldest first."""
        return await self.store.checkpoints.for_session(await self.ids.resolve_id(conversation_id))

    async def get_checkpoint(self, checkpoint_id: str) -> Checkpoint:
        """A checkpoint by id or a unique prefix of 6+ characters."""
        if not isinstance(checkpoint_id, str) or not storable(checkpoint_id):
            raise UnknownCheckpoint(f"no checkpoint with id {printable(checkpoint_id)}")
        found = [checkpoint_id]
        if len(checkpoint_id) >= MIN_ID_PREFIX:
            found = await self.store.checkpoints.ids_with_prefix(checkpoint_id, 2) or found
        if len(found) > 1:
            raise AmbiguousId(checkpoint_id, found, False, "checkpoints")
        return await self.store.checkpoints.get(found[0])

    async def restore_checkpoint(
        self, checkpoint_id: str, *, into: str | None = None
    ) -> Checkpoint:
        """Rewind a session of delegate's own to a checkpoint; nothing is lost.

        The conversation as it was is first saved (an archived copy,
        ``forked_from`` the session); the returned checkpoint marks its end, and
        restoring it ``into`` the session undoes this. ``into`` (default: the
        checkpoint's session) takes the checkpoint's messages from another
        session. A Claude Code or Codex session is never edited: fork it.
        """
        from core.store.checkpoints import NewCheckpoint, SessionCopy

        source = await self.get_checkpoint(checkpoint_id)
        target = await self.store.sessions.get(
            await self.ids.resolve_id(into) if into is not None else source.conversation_id
        )
        await self._check_own(target, "restored (rewound)")
        if target.state not in (SessionState.IDLE, SessionState.READY):
            raise AgentBusy(target.conversation_id)
        now = self.clock()
        saved_id = self._new_id()
        last = await self.store.checkpoints.last_seq(target.conversation_id)
        undo = NewCheckpoint(
            self._new_id(), saved_id, last if last is not None else -1, "before restore", to_us(now)
        )
        await self.store.checkpoints.restore(
            target.conversation_id,
            source,
            SessionCopy(saved_id, f"saved before restore: {target.shown_title}", to_us(now), True),
            undo,
            to_us(now),
        )
        await self._emit_checkpoint(target, source, now, restored=True)
        return await self.store.checkpoints.get(undo.checkpoint_id)

    async def fork_checkpoint(self, checkpoint_id: str) -> Session:
        """A new session of delegate's own holding the conversation up to the checkpoint.

        A Claude Code or Codex session forks through its own CLI instead
        (:func:`core.reopen.fork_plan`): delegate never writes their files.
        """
        from core.store.checkpoints import SessionCopy

        source = await self.get_checkpoint(checkpoint_id)
        session = await self.store.sessions.get(source.conversation_id)
        await self._check_own(session, "copied here; fork it in its own CLI")
        now = self.clock()
        fork = await self.store.checkpoints.fork(
            source,
            SessionCopy(self._new_id(), f"fork of {session.shown_title}", to_us(now)),
        )
        await self._emit_checkpoint(session, source, now, forked_to=fork.conversation_id)
        return fork

    async def _emit_checkpoint(
        self,
        session: Session,
        checkpoint: Checkpoint,
        at: datetime,
        *,
        restored: bool = False,
        forked_to: str | None = None,
    ) -> None:
        """The history cell of a checkpoint marked, restored to, or forked from."""
        await self.emitter.emit(
            CheckpointMarked(
                at=at,
                conversation_id=session.conversation_id,
                agent_id=session.agent_id,
                checkpoint_id=checkpoint.checkpoint_id,
                seq=checkpoint.seq,
                label=checkpoint.label,
                restored=restored,
                forked_to=forked_to,
            )
        )

    async def keeps_conversation(self, session: Session) -> bool:
        """Whether delegate keeps the conversation itself (no agent CLI's transcript):
        only such a session is restored or forked here."""
        source = await message_source(self.store, session.conversation_id)
        if not source.kept_by_delegate:
            return False
        config = self.settings.agents.get(session.agent_id)
        return session.source == "delegate" and (config is None or config.runner not in CLI_RUNNERS)

    async def _check_own(self, session: Session, what: str) -> None:
        if not await self.keeps_conversation(session):
            raise InvalidRequest(
                f"session {session.conversation_id!r} is kept by {session.agent_id}'s own"
                f" transcript, which delegate never edits: it cannot be {what}"
            )

    async def _checkpoint_seq(self, session: Session, seq: int | None) -> int:
        """The message a checkpoint marks: a stored ``seq``, or an imported transcript's index."""
        if await self.keeps_conversation(session):
            last = await self.store.checkpoints.last_seq(session.conversation_id)
            if last is None:
                raise InvalidRequest("the session has no message to mark yet")
            if seq is None:
                return last
            if await self.store.checkpoints.has_message(session.conversation_id, seq):
                return seq
            raise InvalidRequest(f"the session has no message {seq} (its newest is {last})")
        count = session.metrics.messages
        if count <= 0:
            raise InvalidRequest("the session has no message to mark yet")
        if seq is None:
            return count - 1
        if 0 <= seq < count:
            return seq
        raise InvalidRequest(f"the session has no message {seq} (messages 0..{count - 1})")
