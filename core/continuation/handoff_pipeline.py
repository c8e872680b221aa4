"""The one hand-off pipeline: folder, header, file, registry entry, pending note, history.

Two callers write hand-offs: :class:`~core.continuation.Continuation` (delegate's
own sessions, or one built from facts) and the Claude Code hooks (the agent's own,
written in its turn). Both go through :class:`HandoffPipeline`: where the document
goes (:mod:`core.documents.write_folder`, the one decision), its header (the chain
it continues), writing and registering it, leaving it pending for a person
(``HANDOFF_PENDING.md``), marking it consumed by the session that continues it,
linking the two sessions, and the history events that announce each step.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from core.clock import Clock, to_us
from core.documents.handoff_files import (
    clear_pending_note,
    write_handoff_file,
    write_pending_note,
)
from core.documents.handoff_registry import previous_handoff, register_handoff
from core.documents.handoff_template import HandoffHeader
from core.documents.write_folder import WriteFolder, write_folder
from core.errors import DiskFull, DocumentInvalid
from core.events import HandoffFailed, HandoffWritten, HistoryEvent, SessionContinued
from core.models import ContextDocument, DocumentStatus, Session

if TYPE_CHECKING:
    from core.orchestrator import AgentOrchestrator
    from core.store.documents import DocumentsRepository
    from core.store.sessions import SessionsRepository

log = logging.getLogger(__name__)

WRITE_ERRORS = (OSError, DocumentInvalid, DiskFull)
"""What writing a hand-off or its note may raise (the store and the session stand)."""


def write_problem(exc: Exception) -> str:
    """A write failure as a person reads it (a full disk says its code)."""
    return f"{exc.code}: {exc}" if isinstance(exc, DiskFull) else str(exc)


@dataclass(frozen=True, slots=True)
class HandoffPipeline:
    """The steps every hand-off goes through, over the repositories they write.

    ``emit`` stores and publishes a history event (the orchestrator's); ``data_dir``
    and ``trusted_folders`` decide where a session's documents go.
    """

    documents: DocumentsRepository
    sessions: SessionsRepository
    emit: Callable[[HistoryEvent], Awaitable[None]]
    clock: Clock
    data_dir: Path
    trusted_folders: Sequence[str]

    @classmethod
    def of(cls, orchestrator: AgentOrchestrator) -> HandoffPipeline:
        """The pipeline over the orchestrator's store, history and settings."""
        store = orchestrator.store
        return cls(
            documents=store.documents,
            sessions=store.sessions,
            emit=orchestrator.emit,
            clock=orchestrator.clock,
            data_dir=store.path.parent,
            trusted_folders=orchestrator.settings.trusted_folders,
        )

    # --- writing ----------------------------------------------------------------

    async def folder(self, cwd: str, source: str) -> WriteFolder:
        """Where a session's documents go (and whether git may run in its folder): its
        repository when delegate trusts it, else delegate's data folder."""
        return await asyncio.to_thread(
            write_folder,
            cwd or ".",
            source=source,
            data_dir=self.data_dir,
            trusted_folders=self.trusted_folders,
        )

    async def predecessor(self, session: Session) -> tuple[ContextDocument | None, int]:
        """The hand-off ``session`` was started from (None: the chain starts here), and
        the position its next hand-off takes in the chain."""
        previous = await previous_handoff(self, session)
        chain = await self.documents.chain(previous.document_id) if previous else []
        return previous, len(chain) + 1

    def header(
        self,
        session: Session,
        previous: ContextDocument | None,
        position: int,
        *,
        project: str,
        branch: str | None,
    ) -> HandoffHeader:
        """The header of ``session``'s next hand-off (dated now)."""
        return HandoffHeader(
            created=self.clock(),
            previous_instance=session.conversation_id,
            used_tokens=session.context.used_tokens,
            limit_tokens=session.context.limit_tokens,
            project=project,
            branch=branch,
            previous_handoff=previous.path if previous else None,
            chain_position=position,
        )

    async def write(self, place: WriteFolder, text: str, header: HandoffHeader) -> Path:
        """Write the (redacted) hand-off under ``place``; raises one of :data:`WRITE_ERRORS`."""
        root = await asyncio.to_thread(place.ready)
        return await asyncio.to_thread(write_handoff_file, root, text, header.created)

    async def register(
        self,
        session: Session,
        path: Path,
        text: str,
        header: HandoffHeader,
        *,
        producer: str,
        previous: ContextDocument | None,
        status: DocumentStatus = DocumentStatus.FINAL,
    ) -> ContextDocument:
        """Register the hand-off written at ``path`` as ``session``'s."""
        return await register_handoff(
            self,
            document_id=str(uuid.uuid4()),
            path=path,
            text=text,
            created_us=to_us(header.created),
            producer=producer,
            source_session=session.conversation_id,
            previous_id=previous.document_id if previous else None,
            status=status,
        )

    async def leave_pending(self, document: ContextDocument, repo: Path) -> str | None:
        """Mark the document pending and write the note beside it; the note's path
        (None when it could not be written: the document still stands)."""
        command = f"delegate handoff continue {document.path}"
        note: str | None = None
        try:
            written = await asyncio.to_thread(
                write_pending_note, repo, Path(document.path), command
            )
            note = str(written)
        except WRITE_ERRORS as exc:
            log.warning("cannot write the pending note under %s: %s", repo, exc)
        if document.status is not DocumentStatus.PENDING:
            await self.documents.set_status(document.document_id, DocumentStatus.PENDING)
        return note

    # --- continuing -------------------------------------------------------------

    async def consume(self, document: ContextDocument, successor_id: str) -> None:
        """``successor_id`` continues ``document``: its consumer, the document consumed."""
        await self.documents.add_consumer(document.document_id, successor_id)
        await self.documents.set_status(document.document_id, DocumentStatus.CONSUMED)

    async def clear_note(self, repo: Path | None) -> None:
        """The project's ``HANDOFF_PENDING.md`` gone (its hand-off was continued)."""
        if repo is not None:
            await asyncio.to_thread(clear_pending_note, repo)

    # --- history ----------------------------------------------------------------

    async def written(
        self, session: Session, document: ContextDocument, producer: str, *, pending: bool
    ) -> None:
        await self.emit(
            HandoffWritten(
                at=self.clock(),
                conversation_id=session.conversation_id,
                agent_id=session.agent_id,
                document_id=document.document_id,
                path=document.path,
                producer=producer,
                previous_id=document.previous_id,
                pending=pending,
            )
        )

    async def failed(self, session: Session, stage: Literal["write", "spawn"], reason: str) -> None:
        await self.emit(
            HandoffFailed(
                at=self.clock(),
                conversation_id=session.conversation_id,
                agent_id=session.agent_id,
                stage=stage,
                reason=reason,
            )
        )

    async def continued(self, source: Session, successor_id: str, document_id: str) -> None:
        await self.emit(
            SessionContinued(
                at=self.clock(),
                conversation_id=source.conversation_id,
                successor_id=successor_id,
                agent_id=source.agent_id,
                document_id=document_id,
            )
        )
