"""``Continuation``: hand a session off and carry on in a new one (seed 003 §3-§7).

:meth:`Continuation.hand_off` writes the hand-off document (the agent's own
when delegate drives the session and it is idle, else built from facts),
registers it with its chain, then either continues the work in a new session
of the same agent, primed with the document and linked old -> new, or, for a
session a person runs (or with ``auto_continue`` off), leaves
``HANDOFF_PENDING.md`` beside it. Expected failures never raise: they come
back in :class:`~core.models.HandoffOutcome` (re-exported here), the one answer
every front end renders, also announced as a ``HandoffSettled`` history event.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.clock import to_us
from core.config import ContextSettings
from core.context.thresholds import effective_context
from core.documents.handoff_facts import (
    IN_FLIGHT,
    GitFacts,
    HandoffFacts,
    active_subagents,
    files_section,
    git_facts,
    instructions,
    sections_from_facts,
)
from core.documents.handoff_files import (
    DELEGATE_DIR,
    HANDOFFS_DIR,
    clear_pending_note,
    read_handoff_file,
    write_handoff_file,
    write_pending_note,
)
from core.documents.handoff_registry import previous_handoff, register_handoff
from core.documents.handoff_template import (
    HandoffHeader,
    extract_handoff,
    handoff_request,
    parse_handoff,
    render_handoff,
    validate_handoff,
)
from core.documents.write_folder import ELSEWHERE_DIR, WriteFolder, write_folder
from core.errors import (
    ContinuationFailed,
    DelegateError,
    DiskFull,
    DocumentInvalid,
    UnknownDocument,
)
from core.events import HandoffFailed, HandoffSettled, HandoffWritten, SessionContinued
from core.ids import CLAUDE_CODE
from core.models import (
    ContextDocument,
    DocumentKind,
    DocumentStatus,
    HandoffOutcome,
    HandoffResult,
    RunStatus,
    Session,
    SessionState,
)
from core.orchestrator import AgentOrchestrator
from core.redact import redact
from core.reopen import ReopenPlan, start_plan

log = logging.getLogger(__name__)

ASK_TIMEOUT_S = 600.0  # how long an agent may take to write its own hand-off
RECENT_MESSAGES = 30  # the transcript's last messages a hand-off from facts reads
MAX_CHILD_PAGES = 20  # pages of sub-agents read for a hand-off (of MAX_PAGE each)
OURS = "delegate"  # the source of sessions delegate itself launched and drives


@dataclass(frozen=True, slots=True)
class InteractiveStart:
    """Opening an agent's CLI on a hand-off: the plan to run, the document, and the id
    the new session gets (None when the CLI names its own)."""

    plan: ReopenPlan
    document_id: str
    successor_id: str | None


def continuation_prompt(path: Path, text: str = "") -> str:
    """The first prompt of a continuing session: what to do, then the hand-off ``text``.

    A launch delegate records passes the text apart (``delegate(document=...)``), so it
    is stored as context that a sub-agent of the new session inherits.
    """
    prompt = (
        "You continue the work of a previous session that handed off (its context"
        " window was filling up). Its hand-off document follows; it is also at"
        f" {path}. Read it completely, then continue the work from its Next Steps."
    )
    return f"{prompt}\n\n{text}" if text else prompt


def interactive_prompt(path: Path) -> str:
    """The first prompt of an agent CLI a person opens on a hand-off (it reads the file)."""
    return (
        f"Read the hand-off document at {path} completely, then continue the work"
        " from its Next Steps."
    )


def repository_of(document_path: Path) -> Path | None:
    """The repository a hand-off belongs to (``<repo>/.delegate/handoffs/...``), if it says."""
    for folder in document_path.parents:
        if folder.name == HANDOFFS_DIR and folder.parent.name == DELEGATE_DIR:
            return folder.parent.parent
    return None


async def subagents_at_work(orchestrator: AgentOrchestrator, conversation_id: str) -> list[Session]:
    """The session's sub-agents still at work (a run in flight or a detached launch not
    finished), oldest first, every page of them read."""
    found: list[Session] = []
    cursor: str | None = None
    for _page in range(MAX_CHILD_PAGES):
        page = await orchestrator.list_children(conversation_id, cursor=cursor)
        found += [child for child in page.sessions if child.state in IN_FLIGHT]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    return found


def with_subagents_at_work(written: str, children: Sequence[Session]) -> str:
    """An agent's Active Subagents section, with delegate's own list added when the agent
    left out a sub-agent still at work (an agent forgets a detached one; the store does not)."""
    missing = [child for child in children if child.conversation_id not in written]
    if not missing:
        return written
    if written.strip() in ("", "- None", "None", "- **None**"):
        return active_subagents(children)
    return f"{written}\n\nStill at work, as delegate knows:\n\n{active_subagents(missing)}"


def with_known_facts(
    written: dict[str, str], git: GitFacts | None, children: Sequence[Session]
) -> dict[str, str]:
    """An agent's own hand-off sections with what delegate knows added: git's word on the
    files (a checked git work tree only) and the sub-agents at work it left out."""
    files = written.get("Files Modified", "")
    if git is not None:
        files += "\n\nWhat git says:\n\n" + files_section(git)
    return {
        **written,
        "Files Modified": files,
        "Active Subagents": with_subagents_at_work(written.get("Active Subagents", ""), children),
    }


class Continuation:
    """Hand-offs and continuations, through the one orchestrator."""

    def __init__(
        self,
        orchestrator: AgentOrchestrator,
        *,
        ask_timeout_s: float = ASK_TIMEOUT_S,
    ) -> None:
        """``ask_timeout_s``: how long an agent may take to write its own hand-off
        before delegate builds one from facts instead."""
        self.orchestrator = orchestrator
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
            done = await orch.store.documents.find(DocumentKind.HANDOFF, source_session=cid)
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
        orch = self.orchestrator
        cid = session.conversation_id
        previous = await previous_handoff(orch.store, session)
        chain = await orch.store.documents.chain(previous.document_id) if previous else []
        place = await self.write_folder(session)
        facts = await self._facts(session, previous, place.repository)
        project = str(facts.git.root if facts.git else Path(session.cwd))
        header = HandoffHeader(
            created=orch.clock(),
            previous_instance=cid,
            used_tokens=session.context.used_tokens,
            limit_tokens=session.context.limit_tokens,
            project=project,
            branch=facts.git.branch if facts.git else session.git_branch,
            previous_handoff=previous.path if previous else None,
            chain_position=len(chain) + 1,
        )
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
            await asyncio.to_thread(place.ready)
            path = await asyncio.to_thread(write_handoff_file, repo, text, header.created)
        except (OSError, DocumentInvalid, DiskFull) as exc:
            shown = f"{exc.code}: {exc}" if isinstance(exc, DiskFull) else str(exc)
            reason = f"cannot write the hand-off under {repo}: {shown}"
            await self._failed(session, "write", reason)
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
        document = await register_handoff(
            orch.store,
            document_id=str(uuid.uuid4()),
            path=path,
            text=text,
            created_us=to_us(header.created),
            producer=producer,
            source_session=cid,
            previous_id=previous.document_id if previous else None,
        )
        continues = (
            session.source == OURS
            and session.agent_id in orch.settings.agents
            and self._context(session).auto_continue
        )
        if not continues:
            note = await self._leave_pending(session, document, producer, repo)
            return HandoffOutcome(
                conversation_id=cid,
                result=HandoffResult.PENDING,
                document=await orch.store.documents.get(document.document_id),
                folder=str(repo),
                pending_note=note,
                elsewhere=place.elsewhere,
            )
        await self._written(session, document, producer, pending=False)
        try:
            successor = await self._continue(session, document, path, text)
        except DelegateError as exc:
            reason = f"cannot start the session that continues it: {exc}"
            await self._failed(session, "spawn", reason)
            # Edge case 2: the document waits for a person (HANDOFF_PENDING.md).
            note = await self._leave_pending(session, document, producer, repo, announce=False)
            return HandoffOutcome(
                conversation_id=cid,
                result=HandoffResult.SPAWN_FAILED,
                document=await orch.store.documents.get(document.document_id),
                folder=str(repo),
                pending_note=note,
                failure=reason,
                elsewhere=place.elsewhere,
            )
        return HandoffOutcome(
            conversation_id=cid,
            result=HandoffResult.CONTINUED,
            document=await orch.store.documents.get(document.document_id),
            folder=str(repo),
            successor_id=successor.conversation_id,
            elsewhere=place.elsewhere,
        )

    async def write_folder(self, session: Session) -> WriteFolder:
        """Where ``session``'s documents go (and whether git may run in its folder): its
        repository when delegate trusts it, else delegate's data folder
        (:mod:`core.documents.write_folder`)."""
        settings = self.orchestrator.settings
        return await asyncio.to_thread(
            write_folder,
            session.cwd,
            source=session.source,
            data_dir=self.orchestrator.store.path.parent,
            trusted_folders=settings.trusted_folders,
        )

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

    async def _continue(
        self, session: Session | None, document: ContextDocument, path: Path, text: str
    ) -> Session:
        """Start the session that continues ``document`` and link it; raise what refuses it."""
        orch = self.orchestrator
        agent = session.agent_id if session and session.agent_id in orch.settings.agents else None
        repo = repository_of(path)
        cwd = session.cwd if session else str(repo or path.parent)
        # A sub-agent's successor is its parent's child too: its window is judged
        # against the parent's as the predecessor's was (the same clamp), and the
        # parent's own instructions are shared with it once, as with any child.
        parent = session.parent_id if session is not None else None
        if parent is not None and not await orch.store.sessions.exists(parent):
            parent = None  # purged since: the successor stands alone
        [handle] = await orch.delegate(
            prompt=continuation_prompt(path),
            agent_id=agent,
            cwd=cwd,
            parent_id=parent,
            document=text,
        )
        links = orch.store.sessions
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
        await orch.store.documents.add_consumer(document.document_id, successor)
        await orch.store.documents.set_status(document.document_id, DocumentStatus.CONSUMED)
        if session is not None:
            await orch.emit(
                SessionContinued(
                    at=orch.clock(),
                    conversation_id=session.conversation_id,
                    successor_id=successor,
                    agent_id=session.agent_id,
                    document_id=document.document_id,
                )
            )
        if repo is not None:
            await asyncio.to_thread(clear_pending_note, repo)
        return await orch.get_session(successor)

    async def _leave_pending(
        self,
        session: Session,
        document: ContextDocument,
        producer: str,
        repo: Path,
        *,
        announce: bool = True,
    ) -> str | None:
        """Mark the document pending and write the note beside it; the note's path
        (None when it could not be written: the document still stands)."""
        orch = self.orchestrator
        command = f"delegate handoff continue {document.path}"
        note: str | None = None
        try:
            written = await asyncio.to_thread(
                write_pending_note, repo, Path(document.path), command
            )
            note = str(written)
        except (OSError, DocumentInvalid, DiskFull) as exc:
            log.warning("cannot write the pending note under %s: %s", repo, exc)
        await orch.store.documents.set_status(document.document_id, DocumentStatus.PENDING)
        if announce:
            await self._written(session, document, producer, pending=True)
        return note

    async def _written(
        self, session: Session, document: ContextDocument, producer: str, *, pending: bool
    ) -> None:
        await self.orchestrator.emit(
            HandoffWritten(
                at=self.orchestrator.clock(),
                conversation_id=session.conversation_id,
                agent_id=session.agent_id,
                document_id=document.document_id,
                path=document.path,
                producer=producer,
                previous_id=document.previous_id,
                pending=pending,
            )
        )

    async def _failed(
        self, session: Session, stage: Literal["write", "spawn"], reason: str
    ) -> None:
        await self.orchestrator.emit(
            HandoffFailed(
                at=self.orchestrator.clock(),
                conversation_id=session.conversation_id,
                agent_id=session.agent_id,
                stage=stage,
                reason=reason,
            )
        )

    # --- continuing from a document -------------------------------------

    async def lookup(self, path_or_document_id: str) -> tuple[ContextDocument | None, Path]:
        """The registered hand-off named by id or path (None when only a file), and its path."""
        store = self.orchestrator.store
        try:
            document = await store.documents.get(path_or_document_id)
            return document, Path(document.path)
        except UnknownDocument:
            pass
        try:
            path = Path(path_or_document_id).expanduser().absolute()
        except (OSError, RuntimeError, ValueError):
            raise UnknownDocument(
                f"no hand-off has the id or path {path_or_document_id!r}"
            ) from None
        return await store.documents.by_path(str(path)), path

    async def document(self, path_or_document_id: str) -> ContextDocument:
        """The registered hand-off named by id or path (a file not yet registered is
        validated and registered, producer ``person``)."""
        store = self.orchestrator.store
        known, path = await self.lookup(path_or_document_id)
        if known is not None:
            return known
        text = await asyncio.to_thread(read_handoff_file, path)
        problems = validate_handoff(text)
        if problems:
            raise DocumentInvalid(f"{path} is not a hand-off document: " + "; ".join(problems))
        return await register_handoff(
            store,
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
                await self._failed(source, "spawn", str(exc))
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
        orch = self.orchestrator
        store = orch.store
        document = await store.documents.get(document_id)
        if document.status is not DocumentStatus.PENDING:
            return None  # the hooks, or another process, continued it already
        try:
            successor = await store.sessions.get(successor_id)
        except DelegateError:
            return None
        source = await self._source_session(document)
        if (
            source is not None
            and source.continued_in is None
            and source.conversation_id != successor_id
        ):
            await store.sessions.link_continuation(source.conversation_id, successor_id)
        await store.documents.add_consumer(document.document_id, successor_id)
        await store.documents.set_status(document.document_id, DocumentStatus.CONSUMED)
        repo = repository_of(Path(document.path))
        if repo is not None:
            await asyncio.to_thread(clear_pending_note, repo)
        if source is not None:
            await orch.emit(
                SessionContinued(
                    at=orch.clock(),
                    conversation_id=source.conversation_id,
                    successor_id=successor_id,
                    agent_id=source.agent_id,
                    document_id=document.document_id,
                )
            )
        return await store.sessions.get(successor.conversation_id)

    async def _source_session(self, document: ContextDocument) -> Session | None:
        if document.source_session is None:
            return None
        try:
            return await self.orchestrator.store.sessions.get(document.source_session)
        except DelegateError:
            return None  # purged since: the document still stands alone
