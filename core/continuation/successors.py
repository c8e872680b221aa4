"""Continuing from a hand-off document: the session that carries the work on.

:class:`Successors` starts the session that continues a registered hand-off (by id or
path; a file not yet registered is validated and registered first), links it to
the session that wrote it, opens an agent's CLI on it for a person
(:meth:`Successors.interactive_start`) and adopts the session that person started
(:meth:`Successors.adopt`). :class:`~core.continuation.Continuation` writes the
hand-offs and continues through these same steps.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from dataclasses import dataclass
from pathlib import Path

from core.clock import to_us
from core.continuation.handoff_pipeline import HandoffPipeline
from core.continuation.handoff_text import continuation_prompt, interactive_prompt, repository_of
from core.documents.handoff_files import read_handoff_file
from core.documents.handoff_registry import register_handoff
from core.documents.handoff_template import validate_handoff
from core.documents.write_folder import ELSEWHERE_DIR
from core.errors import ContinuationFailed, DelegateError, DocumentInvalid, UnknownDocument
from core.ids import CLAUDE_CODE
from core.models import ContextDocument, DocumentStatus, RunStatus, Session
from core.orchestrator import AgentOrchestrator
from core.reopen import ReopenPlan, start_plan


@dataclass(frozen=True, slots=True)
class InteractiveStart:
    """Opening an agent's CLI on a hand-off: the plan to run, the document, and the id
    the new session gets (None when the CLI names its own)."""

    plan: ReopenPlan
    document_id: str
    successor_id: str | None


class Successors:
    """Sessions that continue hand-offs, through the one orchestrator.

    ``pipeline``: the hand-off steps over the store's documents and sessions (made
    from the orchestrator when not given).
    """

    def __init__(
        self, orchestrator: AgentOrchestrator, *, pipeline: HandoffPipeline | None = None
    ) -> None:
        self.orchestrator = orchestrator
        self.pipeline = pipeline or HandoffPipeline.of(orchestrator)

    async def _continue(
        self, session: Session | None, document: ContextDocument, path: Path, text: str
    ) -> Session:
        """Start the session that continues ``document`` and link it; raise what refuses it."""
        orch, steps = self.orchestrator, self.pipeline
        agent = session.agent_id if session and session.agent_id in orch.settings.agents else None
        repo = repository_of(path)
        cwd = session.cwd if session else str(repo or path.parent)
        # A sub-agent's successor is its parent's child too: its window is judged
        # against the parent's as the predecessor's was (the same clamp), and the
        # parent's own instructions are shared with it once, as with any child.
        parent = session.parent_id if session is not None else None
        if parent is not None and not await steps.sessions.exists(parent):
            parent = None  # purged since: the successor stands alone
        [handle] = await orch.delegate(
            prompt=continuation_prompt(path),
            agent_id=agent,
            cwd=cwd,
            parent_id=parent,
            document=text,
        )
        links = steps.sessions
        if session is not None:
            # Linked at once, so a follow-up to the old id already goes to the new
            # session while its first run reads the hand-off (and waits its turn).
            await links.link_continuation(session.conversation_id, handle.conversation_id)
        run = await handle.wait()
        successor = handle.conversation_id  # the agent may have renamed it meanwhile
        if run.status is not RunStatus.COMPLETED:
            if session is not None:
                await links.unlink_continuation(session.conversation_id, successor)
            raise ContinuationFailed(run.error or f"its first run ended {run.status.value}")
        await steps.consume(document, successor)
        if session is not None:
            await steps.continued(session, successor, document.document_id)
        await steps.clear_note(repo)
        return await orch.get_session(successor)

    # --- continuing from a document -------------------------------------

    async def lookup(self, path_or_document_id: str) -> tuple[ContextDocument | None, Path]:
        """The registered hand-off named by id or path (None when only a file), and its path."""
        documents = self.pipeline.documents
        try:
            document = await documents.get(path_or_document_id)
            return document, Path(document.path)
        except UnknownDocument:
            pass
        try:
            path = Path(path_or_document_id).expanduser().absolute()
        except (OSError, RuntimeError, ValueError):
            raise UnknownDocument(
                f"no hand-off has the id or path {path_or_document_id!r}"
            ) from None
        return await documents.by_path(str(path)), path

    async def document(self, path_or_document_id: str) -> ContextDocument:
        """The registered hand-off named by id or path (a file not yet registered is
        validated and registered, producer ``person``)."""
        known, path = await self.lookup(path_or_document_id)
        if known is not None:
            return known
        text = await asyncio.to_thread(read_handoff_file, path)
        problems = validate_handoff(text)
        if problems:
            raise DocumentInvalid(f"{path} is not a hand-off document: " + "; ".join(problems))
        return await register_handoff(
            self.pipeline,
            document_id=str(uuid.uuid4()),
            path=path,
            text=text,
            created_us=to_us(self.orchestrator.clock()),
            producer="person",
            source_session=None,
            previous_id=None,
        )

    async def continue_from(self, path_or_document_id: str) -> Session:
        """Start a new session from a hand-off (by id or path), linked to the one that
        wrote it; the new session as stored once its first run ends."""
        document = await self.document(path_or_document_id)
        path = Path(document.path)
        text = await asyncio.to_thread(read_handoff_file, path)
        source = await self._source_session(document)
        try:
            return await self._continue(source, document, path, text)
        except ContinuationFailed as exc:
            if source is not None:
                await self.pipeline.failed(source, "spawn", str(exc))
            raise

    async def interactive_plan(self, document_id: str) -> ReopenPlan:
        """How to open the agent's CLI interactively with the hand-off as its first prompt."""
        document = await self.document(document_id)
        source = await self._source_session(document)
        if source is None:
            raise UnknownDocument(
                f"hand-off {document.document_id} names no session whose agent could open it;"
                " continue it with `delegate handoff continue`"
            )
        path = Path(document.path)
        repo = repository_of(path)
        # A hand-off kept under delegate's data folder: the agent opens in its own folder.
        cwd = str(source.cwd if repo is None or repo.parent.name == ELSEWHERE_DIR else repo)
        return await asyncio.to_thread(
            start_plan, source, self.orchestrator.settings, interactive_prompt(path), cwd=cwd
        )

    async def interactive_start(self, document_id: str) -> InteractiveStart:
        """:meth:`interactive_plan`, and the id the new session will have when the CLI
        lets delegate choose it (Claude Code's ``--session-id``), so that once it exists
        :meth:`adopt` links it to the hand-off (no hooks needed)."""
        document = await self.document(document_id)
        plan = await self.interactive_plan(document.document_id)
        if plan.source != CLAUDE_CODE:
            return InteractiveStart(plan, document.document_id, None)
        successor = str(uuid.uuid4())
        # Options before the prompt (an id we made: never read as anything else).
        argv = (plan.argv[0], "--session-id", successor, *plan.argv[1:])
        return InteractiveStart(
            dataclasses.replace(plan, argv=argv), document.document_id, successor
        )

    async def adopt(self, document_id: str, successor_id: str) -> Session | None:
        """Link the session a person started from a waiting hand-off (``successor_id``,
        once stored) as its continuation: the document consumed, its note gone, the
        session that wrote it ``handed_off``. None when there is nothing to do (the
        session is not stored yet, or the document was continued meanwhile)."""
        steps = self.pipeline
        document = await steps.documents.get(document_id)
        if document.status is not DocumentStatus.PENDING:
            return None  # the hooks, or another process, continued it already
        try:
            successor = await steps.sessions.get(successor_id)
        except DelegateError:
            return None
        source = await self._source_session(document)
        if (
            source is not None
            and source.continued_in is None
            and source.conversation_id != successor_id
        ):
            await steps.sessions.link_continuation(source.conversation_id, successor_id)
        await steps.consume(document, successor_id)
        await steps.clear_note(repository_of(Path(document.path)))
        if source is not None:
            await steps.continued(source, successor_id, document.document_id)
        return await steps.sessions.get(successor.conversation_id)

    async def _source_session(self, document: ContextDocument) -> Session | None:
        if document.source_session is None:
            return None
        try:
            return await self.pipeline.sessions.get(document.source_session)
        except DelegateError:
            return None  # purged since: the document still stands alone
