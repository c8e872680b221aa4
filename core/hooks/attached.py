"""A Claude Code session opened on this terminal that continues by itself once it hands off.

:func:`run_continuing` runs a :class:`~core.reopen.ReopenPlan` on the caller's
terminal, as :func:`~core.reopen.run_attached` does, with delegate's hooks in the
CLI (``--settings``, unless ``hooks install`` already put them there for this data
folder). Those hooks make the agent write its hand-off at the hand-off level and
register it in the store; this process watches the store for it. Once the
session has a new hand-off, announced in the history (the hook's last write), and
its turn has settled (its transcript quiet), the
CLI is ended (``SIGTERM``, as a terminal closing would) and a new session of the
same CLI starts in the same terminal, in the same folder, its first prompt the
hand-off (:func:`~core.continuation.handoff_text.continuation_prompt`), its id minted
here (``--session-id``) so the document names it as its consumer and the
successor's first turn links the two (``continued_in``). The successor is watched
the same way: a chain goes on until the person leaves the CLI.

Codex has no hook that can ask its agent for a hand-off: a Codex plan just runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import ids
from core.continuation.handoff_pipeline import HandoffPipeline
from core.continuation.handoff_text import continuation_prompt, repository_of
from core.documents.handoff_registry import read_registered
from core.errors import DelegateError, HandoffChanged
from core.events import HandoffWritten
from core.hooks.session_guard import announce_changed
from core.models import ContextDocument, DocumentKind
from core.orchestrator import AgentOrchestrator
from core.redact import redact
from core.reopen import Attached, ReopenPlan, run_attached_keeping_words, survive_interrupts

if TYPE_CHECKING:
    from core.store.history import HistoryRepository
    from core.store.leases import LeasesRepository

log = logging.getLogger(__name__)

POLL_S = 0.5
"""How often the store is read for the session's hand-off."""
QUIET_S = 2.0
"""How long the transcript must stay unchanged before the CLI is ended (the turn is over)."""
SETTLE_MAX_S = 30.0
"""The longest wait for that quiet (a CLI that keeps writing is ended anyway)."""
ANNOUNCED_SCAN = 200
"""How many of the newest history events are read for the hand-off's announcement."""
ATTACHED_LEASE_US = 60_000_000
"""How long the attached lease lasts unless renewed (a crashed delegate frees it)."""
EXIT_GRACE_S = 15.0
"""How long the CLI may take to exit after ``SIGTERM`` before it is killed."""


@dataclass(frozen=True, slots=True)
class AttachedRepos:
    """What watching an attached session reads and writes: the hand-off steps (its
    documents), the leases (``attached``) and the history (the hook's announcement)."""

    pipeline: HandoffPipeline
    leases: LeasesRepository
    history: HistoryRepository

    @classmethod
    def of(cls, orchestrator: AgentOrchestrator) -> AttachedRepos:
        store = orchestrator.store
        return cls(HandoffPipeline.of(orchestrator), store.leases, store.history)


@dataclass
class AttachedOutcome:
    """What ran: the exit status of the last CLI, every session opened in order (the
    first is the one asked for), and the hand-offs that moved the work on."""

    code: int
    sessions: list[str] = field(default_factory=list)
    handoffs: list[str] = field(default_factory=list)  # document paths
    said: str = ""  # the last CLI's own last words when it failed (redacted, bounded)


def hook_arguments(plan: ReopenPlan, data_dir: Path) -> tuple[str, ...]:
    """``--settings JSON`` with delegate's hooks on ``data_dir`` that the CLI's own
    settings do not run already (one running twice would ask the agent twice)."""
    from core.hooks.install import claude_hooks, missing_for, settings_path

    root = plan.env.get("CLAUDE_CONFIG_DIR")
    path = settings_path(ids.CLAUDE_CODE, Path(root) if root else None)
    missing = missing_for(path, data_dir)
    if not missing:
        return ()
    hooks = {event: groups for event, groups in claude_hooks(data_dir).items() if event in missing}
    return ("--settings", json.dumps({"hooks": hooks}))


def watchable(plan: ReopenPlan) -> ReopenPlan:
    """``plan`` with the id of the session it runs: a resumed one keeps its own; one
    that starts a new session (``claude PROMPT``, a hand-off opened with ``ctrl+k``)
    gets an id minted here (``--session-id``), so its hand-off can be watched for."""
    if plan.argv[1:2] == ("--resume",):
        return plan
    if "--session-id" in plan.argv:  # the id was chosen already (a hand-off's start)
        chosen = plan.argv[plan.argv.index("--session-id") + 1]
        return ReopenPlan(chosen, plan.source, plan.argv, plan.cwd, plan.env, plan.shown_binary)
    sid = str(uuid.uuid4())
    argv = (plan.argv[0], "--session-id", sid, *plan.argv[1:])
    return ReopenPlan(sid, plan.source, argv, plan.cwd, plan.env, plan.shown_binary)


async def run_continuing(
    orchestrator: AgentOrchestrator,
    plan: ReopenPlan,
    *,
    notice: Callable[[str], None] | None = None,
    quiet_s: float = QUIET_S,
    repos: AttachedRepos | None = None,
) -> AttachedOutcome:
    """Run ``plan`` on this terminal; each time its session hands off, end it and go
    on in a successor; return once the person leaves the CLI.

    ``notice`` is told, between two CLIs, what happened (a line for the terminal).
    ``repos``: what the watch reads and writes (made from the orchestrator when not given).
    """
    if plan.source != ids.CLAUDE_CODE:
        ended = await run_attached_keeping_words(plan)
        return AttachedOutcome(ended.code, [plan.conversation_id], said=ended.said)
    repos = repos or AttachedRepos.of(orchestrator)
    data_dir = repos.pipeline.data_dir
    extra = await asyncio.to_thread(hook_arguments, plan, data_dir)
    watched = watchable(plan)
    current = ReopenPlan(
        watched.conversation_id,
        watched.source,
        (*watched.argv, *extra),
        watched.cwd,
        watched.env,
        watched.shown_binary,
    )
    outcome = AttachedOutcome(0)
    with survive_interrupts():
        while True:
            outcome.sessions.append(current.conversation_id)
            ended, document = await _run_one(orchestrator, repos, current, quiet_s)
            outcome.code, outcome.said = ended.code, ended.said
            if document is None:
                return outcome
            outcome.handoffs.append(document.path)
            successor = await _successor(orchestrator, repos, current, document, extra)
            if successor is None:
                return outcome
            if notice is not None:
                notice(
                    f"delegate: session {current.conversation_id} handed off"
                    f" ({document.path}); continuing in session {successor.conversation_id}."
                )
            current = successor


async def _handoffs_of(repos: AttachedRepos, session_id: str) -> list[ContextDocument]:
    return await repos.pipeline.documents.find(DocumentKind.HANDOFF, source_session=session_id)


async def _run_one(
    orchestrator: AgentOrchestrator, repos: AttachedRepos, plan: ReopenPlan, quiet_s: float
) -> tuple[Attached, ContextDocument | None]:
    """Run one CLI until it exits, ending it once its session has handed off; how it
    ended (its status, its own last words when it failed) and the hand-off it wrote
    meanwhile (None: the person left)."""
    sid = plan.conversation_id
    try:
        known = {d.document_id for d in await _handoffs_of(repos, sid)}
    except DelegateError as exc:  # the store unreadable: the CLI still runs, unwatched
        log.warning("cannot read the hand-offs of %s: %s", sid, exc)
        known = None

    async def new_handoff() -> ContextDocument | None:
        if known is None:
            return None
        found = [d for d in await _handoffs_of(repos, sid) if d.document_id not in known]
        return found[0] if found else None

    attached = _Attached(orchestrator, repos.leases, sid)
    await attached.hold()
    running: asyncio.Future[asyncio.subprocess.Process] = asyncio.get_running_loop().create_future()
    # On a terminal of its own mirrored to ours, so a failing CLI's words are kept.
    exited = asyncio.ensure_future(run_attached_keeping_words(plan, started=running.set_result))
    either: set[asyncio.Future[Any]] = {running, exited}
    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    if not running.done():  # it never started: the binary gone, not executable
        await attached.release()
        ended = await exited  # raises the OSError
        return ended, None
    process = running.result()
    try:
        while not exited.done():
            await asyncio.wait({exited}, timeout=POLL_S)
            if exited.done():
                break
            try:
                await attached.hold()
                document = await new_handoff()
            except DelegateError as exc:  # the store busy or moved: try again next time
                log.info("cannot read the hand-offs of %s: %s", sid, exc)
                continue
            if document is not None:
                await _settle(orchestrator, repos, sid, document, exited, quiet_s)
                await _end(process, exited)
                break
        ended = await exited
    except asyncio.CancelledError:
        await _end(process, exited)
        raise
    finally:
        await attached.release()
    try:
        return ended, await new_handoff()  # written while the person was leaving: goes on
    except DelegateError as exc:
        log.warning("cannot read the hand-offs of %s: %s", sid, exc)
        return ended, None


class _Attached:
    """The session's ``attached`` lease: while held, a supervisor leaves its hand-off
    to its hooks (the agent writes its own) instead of building one from facts."""

    def __init__(self, orchestrator: AgentOrchestrator, leases: LeasesRepository, sid: str) -> None:
        from core.supervisor.context_monitor import ATTACHED_LEASE
        from core.supervisor.leader import new_holder

        self.orchestrator = orchestrator
        self.leases = leases
        self.name = ATTACHED_LEASE.format(sid)
        self.holder = new_holder()

    async def hold(self) -> None:
        """Take or renew it (for :data:`ATTACHED_LEASE_US`; renewed at every poll)."""
        clocks = self.orchestrator.clocks
        with contextlib.suppress(DelegateError):  # a busy store: renewed next time
            await self.leases.acquire(
                self.name, self.holder, clocks.wall_us(), ATTACHED_LEASE_US, clocks.mono_stamp()
            )

    async def release(self) -> None:
        with contextlib.suppress(DelegateError):  # it expires by itself
            await self.leases.release(self.name, self.holder)


async def _settle(
    orchestrator: AgentOrchestrator,
    repos: AttachedRepos,
    sid: str,
    document: ContextDocument,
    exited: asyncio.Future[Attached],
    quiet_s: float,
) -> None:
    """Wait until the hook that wrote ``document`` has announced it (its last write)
    and the session's transcript has not changed for ``quiet_s`` since (the turn is
    over), or the CLI exits, or :data:`SETTLE_MAX_S` passes."""
    try:
        transcript = await orchestrator.transcript_path(sid)
    except DelegateError:  # then only the announcement and the deadline count
        transcript = None
    deadline = time.monotonic() + SETTLE_MAX_S
    announced = False
    last: tuple[int, int] | None = None
    quiet_since = time.monotonic()
    while not exited.done() and time.monotonic() < deadline:
        if not announced:
            announced = await _announced(repos.history, document.document_id)
            quiet_since = time.monotonic()
        try:
            info = await asyncio.to_thread(transcript.stat) if transcript else None
        except OSError:
            info = None
        seen = (info.st_size, info.st_mtime_ns) if info else None
        if seen != last:
            last, quiet_since = seen, time.monotonic()
        elif announced and time.monotonic() - quiet_since >= quiet_s:
            return
        await asyncio.wait({exited}, timeout=0.25)


async def _announced(history: HistoryRepository, document_id: str) -> bool:
    """Whether the ``handoff_written`` event of ``document_id`` is in the history yet."""
    try:
        recent = (await history.events(limit=ANNOUNCED_SCAN)).events
    except DelegateError:
        return False
    return any(isinstance(e, HandoffWritten) and e.document_id == document_id for e in recent)


async def _end(process: asyncio.subprocess.Process, exited: asyncio.Future[Attached]) -> None:
    """End the CLI as a closing terminal would (``SIGTERM``), killing it if it lingers."""
    if exited.done():
        return
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        await asyncio.wait_for(asyncio.shield(exited), EXIT_GRACE_S)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await exited


async def _successor(
    orchestrator: AgentOrchestrator,
    repos: AttachedRepos,
    plan: ReopenPlan,
    document: ContextDocument,
    extra: tuple[str, ...],
) -> ReopenPlan | None:
    """The plan of the session that continues ``document`` (None: the document cannot
    be read, so there is nothing to start it from; it stays pending)."""
    path = Path(document.path)
    try:
        text = redact(await asyncio.to_thread(read_registered, document))
    except HandoffChanged as exc:  # edited on disk since it was written: a person reviews it
        log.warning("%s", exc.message)
        with contextlib.suppress(DelegateError):
            await announce_changed(orchestrator, document, plan.conversation_id)
        return None
    except (OSError, DelegateError) as exc:
        log.warning("hand-off %s cannot be read: %s", path, exc)
        return None
    successor = str(uuid.uuid4())
    # Consumed by the successor before it starts: its SessionStart hook then gives it
    # nothing more, and its first Stop links the two sessions.
    try:
        await repos.pipeline.consume(document, successor)
    except DelegateError as exc:  # it stays pending: a person continues it
        log.warning("hand-off %s cannot be marked consumed: %s", path, exc)
        return None
    await repos.pipeline.clear_note(repository_of(path))
    prompt = continuation_prompt(path, text)
    argv = (plan.argv[0], "--session-id", successor, *extra, prompt)
    return ReopenPlan(successor, plan.source, argv, plan.cwd, plan.env, plan.shown_binary)
