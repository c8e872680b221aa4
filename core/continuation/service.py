"""``Continuation``: hand a session off and carry on in a new one (seed 003 §3-§7).

:meth:`Continuation.hand_off` writes the hand-off document (the agent's own
when delegate drives the session and it is idle, else built from facts),
registers it with its chain (:mod:`core.continuation.handoff_pipeline`, the steps
the hooks' hand-offs take too), then either continues the work in a new session
of the same agent (:mod:`core.continuation.successors`), primed with the document
and linked old -> new, or, for a session a person runs (or with ``auto_continue``
off), leaves ``HANDOFF_PENDING.md`` beside it. Expected failures never raise: they come
back in :class:`~core.models.HandoffOutcome` (re-exported here), the one answer
every front end renders, also announced as a ``HandoffSettled`` history event.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from core.config import ContextSettings
from core.context.thresholds import effective_context
from core.continuation.handoff_pipeline import WRITE_ERRORS, HandoffPipeline, write_problem
from core.continuation.handoff_text import subagents_at_work, with_known_facts
from core.continuation.successors import InteractiveStart, Successors
from core.documents.handoff_facts import HandoffFacts, git_facts, instructions, sections_from_facts
from core.documents.handoff_template import (
    HandoffHeader,
    extract_handoff,
    handoff_request,
    parse_handoff,
    render_handoff,
    validate_handoff,
)
from core.documents.write_folder import WriteFolder
from core.errors import DelegateError
from core.events import HandoffSettled
from core.models import (
    ContextDocument,
    DocumentKind,
    HandoffOutcome,
    HandoffResult,
    RunStatus,
    Session,
    SessionState,
)
from core.orchestrator import AgentOrchestrator
from core.redact import redact

__all__ = ["Continuation", "InteractiveStart"]

log = logging.getLogger(__name__)

ASK_TIMEOUT_S = 600.0  # how long an agent may take to write its own hand-off
RECENT_MESSAGES = 30  # the transcript's last messages a hand-off from facts reads
OURS = "delegate"  # the source of sessions delegate itself launched and drives


class Continuation(Successors):
    """Hand-offs and continuations, through the one orchestrator.

    ``pipeline``: the hand-off steps over the store's documents and sessions (made
    from the orchestrator when not given).
    """

    def __init__(
        self,
        orchestrator: AgentOrchestrator,
        *,
        ask_timeout_s: float = ASK_TIMEOUT_S,
        pipeline: HandoffPipeline | None = None,
    ) -> None:
        """``ask_timeout_s``: how long an agent may take to write its own hand-off
        before delegate builds one from facts instead."""
        super().__init__(orchestrator, pipeline=pipeline)
        self.ask_timeout_s = ask_timeout_s
        self._under_way: set[str] = set()

    # --- hand-off --------------------------------------------------------

    async def hand_off(self, conversation_id: str) -> HandoffOutcome:
        """Write ``conversation_id``'s hand-off and continue (or leave it pending).

        Whatever happened comes back as one :class:`HandoffOutcome`; an attempt
        (written or not) is also announced as a ``HandoffSettled`` event.
        """
        orch = self.orchestrator
        try:
            session = await orch.get_session(conversation_id)
        except DelegateError as exc:
            return HandoffOutcome(
                conversation_id=conversation_id, result=HandoffResult.NOT_DONE, failure=str(exc)
            )
        cid = session.conversation_id
        if session.continued_in is not None:
            # Already handed off: the work is elsewhere; nothing more to write.
            done = await self.pipeline.documents.find(DocumentKind.HANDOFF, source_session=cid)
            return HandoffOutcome(
                conversation_id=cid,
                result=HandoffResult.ALREADY,
                document=done[0] if done else None,
                successor_id=session.continued_in,
            )
        if cid in self._under_way:
            return HandoffOutcome(
                conversation_id=cid,
                result=HandoffResult.NOT_DONE,
                failure="a hand-off of this session is already under way",
            )
        self._under_way.add(cid)
        try:
            outcome = await self._hand_off(session)
        finally:
            self._under_way.discard(cid)
        await orch.emit(
            HandoffSettled(
                at=orch.clock(), conversation_id=cid, agent_id=session.agent_id, outcome=outcome
            )
        )
        return outcome

    async def _hand_off(self, session: Session) -> HandoffOutcome:
        orch, steps = self.orchestrator, self.pipeline
        cid = session.conversation_id
        previous, position = await steps.predecessor(session)
        place = await self.write_folder(session)
        facts = await self._facts(session, previous, place.repository)
        project = str(facts.git.root if facts.git else Path(session.cwd))
        branch = facts.git.branch if facts.git else session.git_branch
        header = steps.header(session, previous, position, project=project, branch=branch)
        producer, sections = "facts", sections_from_facts(facts, project)
        if self._drives(session):
            written = await self._ask_agent(session, header)
            if written is not None:
                # The agent's sections; git's word on the files and the instructions
                # stay delegate's own (an agent forgets files; git does not).
                sections = {
                    **with_known_facts(written, facts.git, facts.running_children),
                    "Instructions for New Instance": instructions(session, project),
                }
                producer = "agent"
        text = redact(render_handoff(header, sections))
        repo = place.root
        try:
            path = await steps.write(place, text, header)
        except WRITE_ERRORS as exc:
            reason = f"cannot write the hand-off under {repo}: {write_problem(exc)}"
            await steps.failed(session, "write", reason)
            # Edge case 1: the session keeps working, is asked again after its next
            # turn, and past the force level is sent nothing more.
            return HandoffOutcome(
                conversation_id=cid,
                result=HandoffResult.WRITE_FAILED,
                folder=str(repo),
                failure=reason,
                force_percent=self._context(session).force,
                elsewhere=place.elsewhere,
            )
        document = await steps.register(
            session, path, text, header, producer=producer, previous=previous
        )
        continues = (
            session.source == OURS
            and session.agent_id in orch.settings.agents
            and self._context(session).auto_continue
        )
        if not continues:
            note = await steps.leave_pending(document, repo)
            await steps.written(session, document, producer, pending=True)
            return HandoffOutcome(
                conversation_id=cid,
                result=HandoffResult.PENDING,
                document=await steps.documents.get(document.document_id),
                folder=str(repo),
                pending_note=note,
                elsewhere=place.elsewhere,
            )
        await steps.written(session, document, producer, pending=False)
        try:
            successor = await self._continue(session, document, path, text)
        except DelegateError as exc:
            reason = f"cannot start the session that continues it: {exc}"
            await steps.failed(session, "spawn", reason)
            # Edge case 2: the document waits for a person (HANDOFF_PENDING.md).
            note = await steps.leave_pending(document, repo)
            return HandoffOutcome(
                conversation_id=cid,
                result=HandoffResult.SPAWN_FAILED,
                document=await steps.documents.get(document.document_id),
                folder=str(repo),
                pending_note=note,
                failure=reason,
                elsewhere=place.elsewhere,
            )
        return HandoffOutcome(
            conversation_id=cid,
            result=HandoffResult.CONTINUED,
            document=await steps.documents.get(document.document_id),
            folder=str(repo),
            successor_id=successor.conversation_id,
            elsewhere=place.elsewhere,
        )

    async def write_folder(self, session: Session) -> WriteFolder:
        """Where ``session``'s documents go (and whether git may run in its folder): its
        repository when delegate trusts it, else delegate's data folder
        (:mod:`core.documents.write_folder`)."""
        return await self.pipeline.folder(session.cwd, session.source)

    def _context(self, session: Session) -> ContextSettings:
        """``[context]`` for the session's project (its own config over the data folder's)."""
        settings = self.orchestrator.settings
        try:
            return effective_context(settings, session.cwd)
        except DelegateError:  # a broken project file: the data folder's settings hold
            return settings.context

    def _drives(self, session: Session) -> bool:
        """Whether delegate can prompt the session now (its own, configured, idle)."""
        return (
            session.source == OURS
            and session.agent_id in self.orchestrator.settings.agents
            and session.state in (SessionState.IDLE, SessionState.READY)
        )

    async def _ask_agent(self, session: Session, header: HandoffHeader) -> dict[str, str] | None:
        """The sections of the hand-off the agent writes itself, or None (facts instead)."""
        orch = self.orchestrator
        try:
            [handle] = await orch.delegate(
                prompt=handoff_request(header), conversation_id=session.conversation_id
            )
        except DelegateError as exc:
            log.info("hand-off of %s: the agent cannot be asked: %s", session.conversation_id, exc)
            return None
        try:
            run = await asyncio.wait_for(handle.wait(), self.ask_timeout_s)
        except TimeoutError:
            handle.cancel()
            log.info("hand-off of %s: the agent took too long", session.conversation_id)
            return None
        if run.status is not RunStatus.COMPLETED:
            return None
        document = extract_handoff(run.output)
        if document is None:
            return None
        sections = parse_handoff(document)
        problems = validate_handoff(render_handoff(header, sections))
        if problems:
            log.info(
                "hand-off of %s: the agent's is invalid: %s", session.conversation_id, problems
            )
            return None
        return sections

    async def _facts(
        self, session: Session, previous: ContextDocument | None, repository: Path | None
    ) -> HandoffFacts:
        """What a hand-off from facts says; git runs only in ``repository`` (a trusted one)."""
        orch = self.orchestrator
        cid = session.conversation_id
        try:
            page = await orch.recent_messages(cid, RECENT_MESSAGES)
            messages = list(reversed(page.messages))
        except DelegateError:  # a transcript gone or unreadable: the rest still holds
            messages = []
        running = await subagents_at_work(orch, cid)
        transcript = await orch.transcript_path(cid)
        git = await asyncio.to_thread(git_facts, repository) if repository else None
        return HandoffFacts(
            session=session,
            messages=messages,
            running_children=running,
            git=git,
            previous_path=previous.path if previous else None,
            transcript=str(transcript) if transcript else None,
        )
