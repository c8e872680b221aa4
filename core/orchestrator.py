"""``AgentOrchestrator``: the single API every front end uses.

List, preview, dismiss, launch and follow up. Requests are validated with the
pydantic models, state changes go through the store in one transaction each,
runs execute as asyncio tasks, and history events go out on the bus.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import os
import signal
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from core import cursors, ids, process_identity
from core.clock import Clock, Clocks, MonoClock, system_clock, system_mono, to_us
from core.config import DB_FILENAME, Settings, ensure_data_dir, load_settings
from core.demo_ids import demo_id
from core.errors import (
    AgentBusy,
    AmbiguousId,
    CwdMissing,
    DelegateError,
    InvalidRequest,
    NotRunning,
    RunnerUnavailable,
    SessionNotReady,
    UnknownAgent,
    UnknownCheckpoint,
    UnknownConversation,
    UnknownRun,
)
from core.events import (
    CapsuleGap,
    CapsuleInjected,
    CheckpointMarked,
    ChildClamped,
    DelegateFinished,
    DelegateLaunched,
    EventBus,
    FollowUpCompleted,
    FollowUpStarted,
    HistoryEvent,
    ReturnAccepted,
    ReturnRejected,
    RunActivity,
    RunInterrupted,
    RunOutput,
    SessionDismissed,
    SessionPurged,
    SessionRenamed,
    SessionRestored,
)
from core.models import (
    DEFAULT_MESSAGE_PAGE,
    DEFAULT_SEARCH_PAGE,
    DEFAULT_SESSION_PAGE,
    MAX_PAGE,
    ONE_RUN_OWNERS,
    AgentRequest,
    Checkpoint,
    ContextDocument,
    ContextReport,
    DocumentKind,
    DocumentStatus,
    Message,
    MessageCategory,
    MessageMatch,
    MessagePage,
    OwnerKind,
    Role,
    Run,
    RunKind,
    RunStatus,
    SearchPage,
    Session,
    SessionMode,
    SessionPage,
    SessionScope,
    SessionSort,
    SessionsRequest,
    SessionState,
    TranscriptDetails,
    Usage,
)
from core.redact import redact
from core.store import (
    HistoryEvents,
    NewMessage,
    NewRun,
    NewSession,
    Store,
)

if TYPE_CHECKING:
    from core.capsules.launch import CapsuleAcceptance, PreparedCapsule
    from core.context.counting import PendingCounts
    from core.detached import GoMessage, Worker
    from core.live_activity import LiveActivity
    from core.returns.launch import PreparedRole
    from core.returns.model import AgentRole, ReturnStep, RoleLaunch
    from core.runners import MessageOut, RunCompleted, RunEvent, RunFailed, RunRequest
    from core.runners.base import Runner
    from core.sources.report import ImportProgress, ImportReport
    from core.store.runs import RunInFlight

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
CANCELLED_BY_USER = "cancelled by the user"
STOP_WAIT_S = 10.0  # how long stop_run waits for another process to close its run
STOP_POLL_S = 0.05
DETACHED_POLL_S = 0.1  # how often a handle of a detached run reads it back while waiting
# The history events a role's judged return makes (one or the other).
RETURN_EVENT_KINDS = (
    ReturnAccepted.model_fields["kind"].default,
    ReturnRejected.model_fields["kind"].default,
)
HEARTBEAT_S = 2.0  # how often a process driving runs says it is alive (and reads cancel flags)
SIGNAL_AFTER_BEATS = 2  # a one-run owner that has not stopped by then gets SIGTERM
ACTIVITY_INTERVAL_S = 0.25  # at most this often a run's live output is stored
CLI_RUNNERS = frozenset({"claude_code", "codex"})  # runners that start a process in the cwd
TITLE_CHARS = 80
# Ids people type: a unique prefix of this many characters names a session.
MIN_ID_PREFIX = 6
MAX_FIND_CHARS = 200  # what find_message looks for: a phrase, not a document
# Ids we print: at least this long, longer where another session shares the prefix.
SHORT_ID_CHARS = 8
SHORT_ID_SCAN = 50  # sessions sharing a printed prefix looked at (more is absurd)
AMBIGUOUS_SHOWN = 5
NAME_CHARS = 200  # a session's name, at most
DEMO_CLEAR_BATCH = 500  # demo ids looked for at once by clear_demo
# Stored messages sent to a stateless endpoint (openai_compat) with each prompt.
HISTORY_MESSAGES = 200
# How far back (pages of MAX_PAGE messages) an imported parent's transcript is
# read for the compact summary a sub-agent starts with.
SUMMARY_PAGES = 50

log = logging.getLogger(__name__)


AfterTurn = Callable[[str], Awaitable[object]]
"""What acts on a turn once it is stored, given its session's id (the context thresholds:
``core.supervisor.turn_end``); its answer is kept on the run's handle (``turn_end``)."""


def validate(model: type[M], data: Any) -> M:
    """Validate ``data`` or raise ``invalid_request`` naming each bad field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "request"
            problems.append(f"{where}: {err['msg']}")
        raise InvalidRequest("; ".join(problems)) from exc


async def _uncancellable(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` to the end even if the caller is cancelled meanwhile.

    Cleanup that must land in the store (closing a run) uses this: a cancel
    meanwhile waits for it instead of leaving a session ``running``, and is
    then absorbed (the caller is already on its way out).
    """
    task = asyncio.ensure_future(work)
    while True:
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                raise


def _expand(cwd: str) -> Path:
    """``cwd`` with ``~`` expanded; an unknown user's home is a missing folder."""
    try:
        return Path(cwd).expanduser()
    except RuntimeError:  # ~nosuchuser
        raise CwdMissing(cwd) from None


def _existing_cwd(cwd: str) -> Path:
    """The folder a run starts in, or ``cwd_missing`` naming it."""
    path = _expand(cwd)
    try:
        if not path.is_dir():
            raise CwdMissing(cwd)
        return path.resolve()
    except (OSError, ValueError):  # a name too long for the OS, a NUL, a loop of links
        raise CwdMissing(cwd) from None


def _storable(text: str) -> bool:
    """Text SQLite can bind: argv may carry lone surrogates from undecodable bytes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def _printable(value: object) -> str:
    return str(value).encode("utf-8", "backslashreplace").decode("utf-8")


def _terminate_owner(flight: RunInFlight) -> bool:
    """SIGTERM a run's owner on this host if it is still the recorded process."""
    if flight.owner_pid is None:
        return False
    alive = process_identity.liveness(
        flight.owner_host, flight.owner_host_id, flight.owner_pid, flight.owner_started
    )
    if alive != "alive":
        return False
    try:
        os.kill(flight.owner_pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _session_name(name: str | None) -> str | None:
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


def _checkpoint_label(label: str | None) -> str:
    """A checkpoint's label as stored: one printable line, as a session's name."""
    try:
        return _session_name(label) or ""
    except InvalidRequest as exc:
        raise InvalidRequest(
            exc.message.replace("a session's name", "a checkpoint's label")
        ) from None


def title_from_prompt(prompt: str) -> str:
    first = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1] + "…"


@dataclass(frozen=True, slots=True)
class StopOutcome:
    """What :meth:`AgentOrchestrator.stop_run` did.

    ``how``: ``cancelled`` (a run of this process), ``stopped`` (its owner
    stored it closed), ``signalled`` (its owner was sent SIGTERM and had not
    closed it when the wait ended), ``requested`` (the cancel flag is set and
    its owner, on another host or busy, had not closed it yet: it will on its
    next heartbeat), ``interrupted`` (its owner was already gone).
    """

    run_id: str
    conversation_id: str
    how: Literal["cancelled", "stopped", "signalled", "requested", "interrupted"]


@dataclass
class RunHandle:
    """A launch or follow-up in flight: its ids, its live events, its outcome."""

    run_id: str
    conversation_id: str
    agent_id: str
    kind: RunKind
    # A follow-up sent to a session whose work continued elsewhere (a hand-off
    # chain) runs in the chain's newest session: the id the caller named.
    routed_from: str | None = None
    _events: asyncio.Queue[RunEvent | None] = field(default_factory=asyncio.Queue, repr=False)
    _task: asyncio.Task[Run] | None = field(default=None, repr=False)
    # A task cancelled before its first step never runs its cleanup, so a cancel
    # that comes that early is a flag the run checks when it starts.
    _started: bool = field(default=False, repr=False)
    _cancel_requested: bool = field(default=False, repr=False)
    # A detached run: its worker process drives it; these follow and stop it.
    _follow: Callable[[], Awaitable[Run]] | None = field(default=None, repr=False)
    _stop: Callable[[], None] | None = field(default=None, repr=False)
    # What the orchestrator's ``after_turn`` answered once the run was stored (before
    # ``wait()`` returns): the levels this turn crossed, the hand-off it made.
    turn_end: object | None = None

    @property
    def detached(self) -> bool:
        """Whether a worker process of its own drives this run (not this process)."""
        return self._follow is not None

    async def stream(self) -> AsyncIterator[RunEvent]:
        """The runner's events as they arrive (one consumer), ending with the run.

        A detached run's events stay in its worker: its stream ends with the run
        and yields nothing (its reply is on the stored run, see :meth:`wait`).
        """
        if self._follow is not None:
            await self._follow()
            return
        while (event := await self._events.get()) is not None:
            yield event

    async def wait(self) -> Run:
        """Wait for the run to end and return it as stored (a detached one: read
        from the store until its worker closes it, or is found gone)."""
        if self._follow is not None:
            return await self._follow()
        assert self._task is not None
        return await asyncio.shield(self._task)

    def cancel(self) -> None:
        """Ask the run to stop; it is stored ``cancelled`` with what it said so far."""
        if self._cancel_requested:
            return  # a second signal must not cut the run's own cleanup short
        self._cancel_requested = True
        if self._stop is not None:
            self._stop()
        elif self._task is not None and self._started:
            self._task.cancel()


class AgentOrchestrator:
    """List, preview, dismiss, launch and follow up on delegate sessions."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        bus: EventBus | None = None,
        clock: Clock = system_clock,
        mono_clock: MonoClock | None = system_mono,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        owner_kind: OwnerKind = "other",
        heartbeat_s: float = HEARTBEAT_S,
        activity_interval_s: float = ACTIVITY_INTERVAL_S,
        after_turn: AfterTurn | None = None,
    ) -> None:
        """``owner_kind``: what this process is to the runs it drives (``run`` for
        ``delegate run``, ``worker`` for a detached worker: only those are ever
        signalled by a stop from elsewhere). ``heartbeat_s``: how often its runs
        are stamped alive and their cancel flags read. ``activity_interval_s``:
        how often at most a run's live output and stderr tail are stored.
        ``after_turn``: acts on every turn this process runs once it is stored, before
        the run's ``wait()`` returns (a front end with no supervisor sets it:
        ``core.supervisor.turn_end.judge_turns``). ``mono_clock``: the clock that
        does not jump, by which this host's heartbeats are judged (``clock``, wall
        time, only says when; see core.elapsed)."""
        self.store = store
        # Heartbeats and leases are stamped and judged by this process's clocks.
        self.clocks = Clocks(clock, mono_clock)
        store.runs.clocks = self.clocks
        store.runs.grace_us = int(settings.run_grace_seconds * 1_000_000)
        self.settings = settings
        self.bus = bus or EventBus()
        self.clock = clock
        self.owner_kind: OwnerKind = owner_kind
        self.heartbeat_s = heartbeat_s
        self.activity_interval_s = activity_interval_s
        self._new_id = new_id
        self._runs: dict[str, RunHandle] = {}
        self._background: set[asyncio.Future[None]] = set()  # transcript imports
        self._heartbeat: asyncio.Task[None] | None = None  # only while runs are in flight
        # Per run: its messages stored with an estimate, their exact counts under way.
        self._counts: dict[str, PendingCounts] = {}
        # Per run launched as a role of a group: its final message is judged at the end.
        self._roles: dict[str, PreparedRole] = {}
        self.after_turn = after_turn
        # Runs stored and closed whose after_turn is still at work (close() waits for them).
        self._ending: dict[str, RunHandle] = {}

    @classmethod
    async def open(
        cls, data_dir: Path, *, settings: Settings | None = None, **kwargs: Any
    ) -> AgentOrchestrator:
        """Open the data folder (created 0700 on first use) and its store.

        ``settings`` already loaded and validated by the caller are used as given;
        otherwise ``config.toml`` in ``data_dir`` is read here.
        """
        if settings is None:
            settings = load_settings(data_dir) if data_dir.exists() else Settings()
        store = await Store.open(ensure_data_dir(data_dir) / DB_FILENAME)
        try:
            orchestrator = cls(store, settings, **kwargs)
            await store.agents.upsert(
                (name, agent.runner, agent.context_limit) for name, agent in settings.agents.items()
            )
        except BaseException:
            await store.close()  # an open store's thread would keep the process alive
            raise
        return orchestrator

    async def close(self, *, wait: bool = True) -> None:
        """Let in-flight runs finish (or cancel them) and close the store."""
        handles = [*self._runs.values(), *self._ending.values()]
        tasks = [h._task for h in handles if h._task is not None]
        if not wait:
            for handle in handles:
                handle.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*self._background, return_exceptions=True)
        await self._stop_beating()
        await self.store.close()

    # --- discovery and preview ------------------------------------------

    async def list_sessions(
        self,
        limit: int = DEFAULT_SESSION_PAGE,
        cursor: str | None = None,
        *,
        query: str | None = None,
        scope: SessionScope | None = None,
    ) -> SessionPage:
        """The sessions ``scope`` covers (default: the reusable pool, top-level,
        newest activity first), one keyset page at a time.

        ``query`` (the picker's filter) keeps sessions whose agent, title, name,
        cwd, branch or id contain it, case-insensitively. A cursor continues only
        a listing in its own order.
        """
        scope = scope or SessionScope()
        request = validate(SessionsRequest, {"operation": "list", "limit": limit, "cursor": cursor})
        after = (
            cursors.decode_session_cursor(request.cursor, scope.sort)
            if request.cursor is not None
            else None
        )
        sessions, nxt = await self.store.sessions.page(request.limit or limit, after, query, scope)
        return SessionPage(
            sessions=sessions,
            next_cursor=cursors.encode_session_cursor(nxt) if nxt else None,
        )

    async def list_children(
        self,
        parent_id: str,
        limit: int = MAX_PAGE,
        cursor: str | None = None,
        *,
        scope: SessionScope | None = None,
    ) -> SessionPage:
        """A session's sub-agents, oldest first; warm-ups only when ``scope.warmup``."""
        request = validate(SessionsRequest, {"operation": "list", "limit": limit, "cursor": cursor})
        after = (
            cursors.decode_session_cursor(request.cursor, SessionSort.CREATED)
            if request.cursor is not None
            else None
        )
        sessions, nxt = await self.store.sessions.children(
            parent_id, request.limit or limit, after, scope
        )
        return SessionPage(
            sessions=sessions,
            next_cursor=cursors.encode_session_cursor(nxt) if nxt else None,
        )

    async def recent_messages(
        self,
        conversation_id: str,
        limit: int = DEFAULT_MESSAGE_PAGE,
        cursor: str | None = None,
    ) -> MessagePage:
        """The last ``limit`` messages, newest first; ``next_cursor`` pages back."""
        request = validate(
            SessionsRequest,
            {
                "operation": "messages",
                "conversation_id": conversation_id,
                "limit": limit,
                "cursor": cursor,
            },
        )
        conversation_id = await self.resolve_id(conversation_id)
        transcript = await self.store.imports.transcript_for(conversation_id)
        if transcript is not None:
            page = await self._transcript_messages(
                conversation_id, transcript, request.limit or limit, request.cursor
            )
            # Another program's transcript, read as it is on disk: mask secrets here.
            return page.model_copy(
                update={
                    "messages": [
                        m.model_copy(update={"content": redact(m.content)}) for m in page.messages
                    ]
                }
            )
        before = (
            cursors.decode_message_cursor(request.cursor, conversation_id)
            if request.cursor is not None
            else None
        )
        messages, nxt = await self.store.messages.recent(
            conversation_id, request.limit or limit, before
        )
        return MessagePage(
            messages=messages,
            next_cursor=cursors.encode_message_cursor(nxt) if nxt else None,
        )

    async def _transcript_messages(
        self,
        conversation_id: str,
        transcript: tuple[str, str, bool],
        limit: int,
        cursor: str | None,
    ) -> MessagePage:
        """An imported session's page, read backwards from its transcript file.

        ``seq`` is the byte offset of a message's line; the cursor carries the
        offset of the oldest message shown (docs/import.md).
        """
        from core.sources.preview import read_page  # deferred: only imported sessions need it

        before = (
            cursors.decode_transcript_cursor(cursor, conversation_id).offset
            if cursor is not None
            else None
        )
        path, source, prompts_in_items = transcript
        try:
            page = await asyncio.to_thread(
                read_page, path, source, conversation_id, limit, before, prompts_in_items
            )
        except OSError:  # the agent deleted or locked its transcript: nothing to show
            return MessagePage(messages=[], next_cursor=None)
        nxt = page.next_offset
        return MessagePage(
            messages=page.messages,
            next_cursor=cursors.encode_transcript_cursor(
                cursors.TranscriptCursor(conversation_id, nxt)
            )
            if nxt is not None
            else None,
        )

    # --- imports (issue 4) -------------------------------------------------

    async def import_sources(
        self,
        claude_dir: Path | None = None,
        codex_dir: Path | None = None,
        progress: Callable[[ImportProgress], None] | None = None,
        *,
        workers: int | None = None,
        list_first_bytes: int | None = None,
    ) -> ImportReport:
        """Index the sessions Claude Code and Codex wrote (incremental; docs/import.md).

        ``claude_dir`` defaults to ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``,
        ``codex_dir`` to ``$CODEX_HOME`` or ``~/.codex``. ``workers``: parser
        processes (None: decide from the amount to read; 0: parse in a thread).
        ``list_first_bytes``: from how many bytes of never-read files every new
        session is listed from its file's head and tail first (None: the default).
        """
        from core.sources.importer import import_sources  # deferred: multiprocessing et al.

        return await import_sources(
            self.store,
            claude_dir,
            codex_dir,
            progress,
            workers=workers,
            windows=self.settings.context,
            list_first_bytes=list_first_bytes,
        )

    async def refresh_transcript(self, conversation_id: str) -> Session:
        """Read what an agent CLI appended to the session's transcript (a person
        just worked in it interactively) and return the session as it is now.

        Only that file is read, from where the last import stopped; delegate's
        own conversations have no transcript and come back unchanged.
        """
        from core.sources.importer import import_transcript  # deferred: multiprocessing et al.

        session = await self.get_session(conversation_id)
        config = self.settings.agents.get(session.agent_id)
        source = session.source
        if source not in (ids.CLAUDE_CODE, ids.CODEX):
            runner = config.runner if config is not None else ""
            source = ids.RUNNER_SOURCES.get(runner, "")
        if not source:
            return session
        env = {**os.environ, **(config.env if config is not None else {})}
        root = env.get("CODEX_HOME" if source == ids.CODEX else "CLAUDE_CONFIG_DIR")
        await import_transcript(
            self.store,
            source,
            session.conversation_id,
            Path(root) if root else None,
            windows=self.settings.context,
        )
        return await self.get_session(session.conversation_id)

    async def last_import_report(self) -> ImportReport | None:
        """The report of the last import (any process), or None before the first."""
        from core.sources.importer import load_report

        return load_report(await self.store.imports.last_report())

    async def get_session(self, conversation_id: str) -> Session:
        return await self.store.sessions.get(await self.resolve_id(conversation_id))

    async def get_sessions(
        self, conversation_ids: Sequence[str], *, active_since: datetime | None = None
    ) -> dict[str, Session]:
        """The sessions of these full ids that exist (and were last active at or after
        ``active_since``, when given), by id: one read for a batch of changes. No
        prefixes: an id a person typed goes through :meth:`get_session`."""
        since = None if active_since is None else to_us(active_since)
        return await self.store.sessions.get_many(conversation_ids, since)

    async def change_count(self) -> int:
        """The store's change counter: it moves with every change to a session or a run,
        by any process, so two equal readings bracket a consistent read."""
        return (await self.store.changes.head()).seq

    async def context_report(self, conversation_id: str) -> ContextReport:
        """A session's context: figures, window and its source, trend, breakdown by
        category, thresholds crossed, checkpoints, hand-offs and the hand-off chain."""
        from core.context.report import build_report

        session = await self.get_session(conversation_id)
        from core.context.thresholds import effective_context

        # The project's own [context] file may say otherwise: a small file read, off the loop.
        thresholds = await asyncio.to_thread(effective_context, self.settings, session.cwd)
        return await build_report(self.store, session, thresholds)

    async def transcript_path(self, conversation_id: str) -> Path | None:
        """The transcript file Claude Code or Codex keeps for this session, or None.

        None for a session only delegate recorded. The path is what the import
        found; the file may have gone since (callers open it with the usual
        regular-file checks).
        """
        path = await self.store.imports.source_path(await self.resolve_id(conversation_id))
        return Path(path) if path is not None else None

    async def transcript_details(self, conversation_id: str) -> TranscriptDetails | None:
        """The transcript file of an imported session with its size now and its model;
        None for a session only delegate recorded, or whose file is gone."""
        found = await self.store.imports.source_file(await self.resolve_id(conversation_id))
        if found is None:
            return None
        path, model = found
        try:
            size = (await asyncio.to_thread(os.stat, path)).st_size
        except OSError:
            return None
        return TranscriptDetails(path=Path(path), size=size, model=model)

    async def find_message(
        self,
        conversation_id: str,
        text: str,
        limit: int = DEFAULT_MESSAGE_PAGE,
        cursor: str | None = None,
    ) -> MessageMatch | None:
        """The newest message before ``cursor`` (the end when None) whose text holds
        ``text``, case-insensitive, with the page of ``limit`` messages ending at it.

        An imported transcript is read backwards from ``cursor`` only as far as
        the match. ``resume_cursor`` searches on to older matches. None: no match.
        """
        text = text.strip() if isinstance(text, str) else ""
        if not text or len(text) > MAX_FIND_CHARS or not _storable(text) or "\n" in text:
            raise InvalidRequest(f"text: one line of 1 to {MAX_FIND_CHARS} characters to find")
        conversation_id = await self.resolve_id(conversation_id)
        transcript = await self.store.imports.transcript_for(conversation_id)
        if transcript is None:
            return await self._find_stored(conversation_id, text, limit, cursor)
        from core.sources.transcript import find_before  # deferred like read_page

        path, source, prompts_in_items = transcript
        before = (
            cursors.decode_transcript_cursor(cursor, conversation_id).offset
            if cursor is not None
            else None
        )
        try:
            found = await asyncio.to_thread(
                find_before, path, source, conversation_id, text, before, prompts_in_items
            )
        except OSError:  # gone or locked since: nothing to find
            return None
        if found is None:
            return None
        ending = cursors.encode_transcript_cursor(
            cursors.TranscriptCursor(conversation_id, found.end)
        )
        page = await self.recent_messages(conversation_id, limit, ending)
        if not page.messages:
            return None
        resume = cursors.encode_transcript_cursor(
            cursors.TranscriptCursor(conversation_id, found.offset)
        )
        return MessageMatch(
            message_id=page.messages[0].id,
            page=page,
            resume_cursor=resume if found.offset > 0 else None,
        )

    async def _find_stored(
        self, conversation_id: str, text: str, limit: int, cursor: str | None
    ) -> MessageMatch | None:
        before = (
            cursors.decode_message_cursor(cursor, conversation_id).seq
            if cursor is not None
            else None
        )
        seq = await self.store.messages.find_before(conversation_id, text, before)
        if seq is None:
            return None
        ending = cursors.encode_message_cursor(cursors.MessageCursor(conversation_id, seq + 1))
        page = await self.recent_messages(conversation_id, limit, ending)
        resume = cursors.encode_message_cursor(cursors.MessageCursor(conversation_id, seq))
        return MessageMatch(message_id=page.messages[0].id, page=page, resume_cursor=resume)

    async def latest_run(self, conversation_id: str) -> Run | None:
        """The session's newest run (in flight or not), or None before its first."""
        runs = await self.store.runs.for_session(await self.resolve_id(conversation_id))
        return runs[-1] if runs else None

    # --- ids people can type -------------------------------------------------

    async def resolve_id(self, id_or_prefix: str) -> str:
        """The full conversation id that ``id_or_prefix`` names (a unique prefix of 6+).

        An exact id wins; otherwise a prefix of at least ``MIN_ID_PREFIX``
        characters that matches one session. Several matches are ``ambiguous_id``
        listing them; none is ``unknown_conversation``. An id a session had before
        its agent re-keyed it (the id a Codex launch printed) names it too.
        """
        if not isinstance(id_or_prefix, str) or not _storable(id_or_prefix):
            raise UnknownConversation(_printable(id_or_prefix))
        current = await self.store.sessions.current_id(id_or_prefix)
        if current is not None:
            return current
        found: list[str] = []
        if len(id_or_prefix) >= MIN_ID_PREFIX:
            keys = await self.store.sessions.keys_with_prefix(id_or_prefix, SHORT_ID_SCAN)
            found = list(dict.fromkeys(cid for _, cid in keys))[: AMBIGUOUS_SHOWN + 1]
        if not found:
            raise UnknownConversation(id_or_prefix)
        if len(found) > 1:
            shown = found[:AMBIGUOUS_SHOWN]
            raise AmbiguousId(id_or_prefix, shown, more=len(found) > AMBIGUOUS_SHOWN)
        return found[0]

    async def short_ids(self, conversation_ids: Iterable[str]) -> dict[str, str]:
        """The shortest prefix (at least ``SHORT_ID_CHARS``) naming each id uniquely.

        Computed over the whole store: time-ordered ids (Codex's UUIDv7) share
        their first eight characters for sessions started within a minute.
        """
        shortest: dict[str, str] = {}
        for cid in conversation_ids:
            if cid in shortest or not _storable(cid):
                continue
            length = min(len(cid), SHORT_ID_CHARS)
            # Old ids count: a prefix printed here must not name another session too.
            neighbours = await self.store.sessions.keys_with_prefix(cid[:length], SHORT_ID_SCAN)
            for other, owner in neighbours:
                if owner != cid:
                    common = next(
                        (i for i, (a, b) in enumerate(zip(cid, other, strict=False)) if a != b),
                        min(len(cid), len(other)),
                    )
                    length = max(length, min(len(cid), common + 1))
            shortest[cid] = cid[:length]
        return shortest

    async def status_counts(self) -> dict[str, int]:
        """Reusable sessions by state and their total footprint in bytes."""
        return await self.store.sessions.count_by_state()

    async def count_sessions(
        self, *, query: str | None = None, scope: SessionScope | None = None
    ) -> int:
        """How many sessions ``scope`` covers and ``query`` keeps."""
        return await self.store.sessions.count_matching(query, scope)

    async def search_sessions(
        self,
        query: str,
        limit: int = DEFAULT_SEARCH_PAGE,
        cursor: str | None = None,
        *,
        scope: SessionScope | None = None,
    ) -> SearchPage:
        """Sessions in ``scope`` whose name, title, prompts or replies match ``query``, best first.

        The language (words, "phrases", prefix*, agent:, state:, branch:, cwd:)
        is core.search.parser's; a query that cannot be run is ``invalid_request``.
        ``state:archived`` searches the archive too, whatever ``scope.archived`` says.
        """
        request = validate(
            SessionsRequest,
            {"operation": "search", "query": query, "limit": limit, "cursor": cursor},
        )
        # Deferred: the panel's first frame lists without searching; core.search loads
        # on the first search (tests/test_startup_imports.py keeps it so).
        from core.search.parser import parse_query
        from core.search.querying import SessionSearch

        parsed = parse_query(query)
        return await SessionSearch(self.store.db).page(
            parsed, request.limit or limit, request.cursor, scope
        )

    async def fullest_sessions(self, limit: int = 3) -> list[Session]:
        """The sessions whose context windows are the most used."""
        return await self.store.sessions.fullest(limit)

    async def waiting_handoffs(self, limit: int = 10) -> list[ContextDocument]:
        """Hand-offs written for a person to continue (``HANDOFF_PENDING.md``), newest first."""
        return await self.store.documents.find(
            DocumentKind.HANDOFF, status=DocumentStatus.PENDING, limit=limit
        )

    # --- the archive, names, purging ---------------------------------------

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
            await self._emit(
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
            await self._emit(
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
        cleaned = _session_name(name)
        session = await self.store.archive.rename(conversation_id, cleaned)
        await self._emit(
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
        await self._emit(
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
        return await self.store.tombstones.dependants(await self.resolve_id(conversation_id))

    # --- checkpoints: mark, list, restore, fork -------------------------------

    async def mark_checkpoint(
        self, conversation_id: str, seq: int | None = None, label: str = ""
    ) -> Checkpoint:
        """Mark the session at message ``seq`` (default: its newest) for a later
        restore or fork; ``label`` is one line (blank: none)."""
        from core.store.checkpoints import NewCheckpoint

        conversation_id = await self.resolve_id(conversation_id)
        session = await self.store.sessions.get(conversation_id)
        cleaned = _checkpoint_label(label)
        at = await self._checkpoint_seq(session, seq)
        now = self.clock()
        checkpoint = await self.store.checkpoints.add(
            NewCheckpoint(self._new_id(), conversation_id, at, cleaned, to_us(now))
        )
        await self._emit_checkpoint(session, checkpoint, now)
        return checkpoint

    async def checkpoints(self, conversation_id: str) -> list[Checkpoint]:
        """The session's checkpoints, oldest first."""
        return await self.store.checkpoints.for_session(await self.resolve_id(conversation_id))

    async def get_checkpoint(self, checkpoint_id: str) -> Checkpoint:
        """A checkpoint by id or a unique prefix of 6+ characters."""
        if not isinstance(checkpoint_id, str) or not _storable(checkpoint_id):
            raise UnknownCheckpoint(f"no checkpoint with id {_printable(checkpoint_id)}")
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
            await self.resolve_id(into) if into is not None else source.conversation_id
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
        await self._emit(
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
        if await self.store.imports.transcript_for(session.conversation_id) is not None:
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
        return await self.resolve_id(conversation_id)

    # --- launch and follow-up -------------------------------------------

    async def delegate(
        self,
        prompt: str | None = None,
        agent_id: str | None = None,
        conversation_id: str | None = None,
        batch: list[dict[str, Any]] | None = None,
        cwd: str | None = None,
        mode: SessionMode | str = SessionMode.STANDARD,
        parent_id: str | None = None,
        capsule: str | None = None,
        accept: CapsuleAcceptance | None = None,
        roles: Sequence[RoleLaunch] | None = None,
        document: str = "",
    ) -> list[RunHandle]:
        """Launch new delegates, or follow up on ``conversation_id``.

        Returns one handle per run started (several only for ``batch``). Every
        call mints fresh run ids; a follow-up keeps its conversation id.
        ``mode="detached"``: each run is handed to a worker process of its own
        and this returns once it is recorded; the handles follow the run
        through the store (see :meth:`_launch_detached`).

        ``parent_id``: each launch is a sub-agent of that session (seed 004):
        its own window, clamped when its model's is below the parent's (a
        ``child_clamped`` note for the parent, in its next prompt), and the
        parent's system and context messages copied once.

        ``capsule`` (launches only): ``latest`` or a path in the launch's repository.
        It is checked first (refused over budget, with secrets or stale unless
        ``accept`` says so; nothing is started then) and its body goes into the first
        prompt under ``## Context Capsule``, after the task (seed 000).

        ``document`` (launches only): the text of a document the launch continues
        from (a hand-off), sent after the prompt and stored as context, as a capsule's
        block is (a sub-agent of the session inherits both).

        ``roles`` (launches only, one per launch in order): each launch runs as that
        role of its group (seed 002). Its first prompt gets the prior hand-off block
        and the hand-off protocol; when its run ends, its final message is judged,
        routed and recorded (:meth:`return_step`) and ``ReturnAccepted`` or
        ``ReturnRejected`` goes out, before the handle's ``wait()`` returns.
        """
        from core.returns.launch import check_roles
        from core.returns.routing import Routes

        request = validate(
            AgentRequest,
            {
                k: v
                for k, v in {
                    "prompt": prompt,
                    "agent_id": agent_id,
                    "conversation_id": conversation_id,
                    "batch": batch,
                    "cwd": cwd,
                    "mode": mode,
                    "parent_id": parent_id,
                    "capsule": capsule,
                }.items()
                if v is not None
            },
        )
        if roles is not None:
            if request.conversation_id is not None:
                raise InvalidRequest("roles apply to launches only, not to a follow-up")
            check_roles(roles, len(request.batch) if request.batch is not None else 1)
            Routes.from_settings(self.settings.returns)  # a bad table starts nothing
        started: list[RunHandle] = []
        detached = request.mode is SessionMode.DETACHED
        launch = self._launch_detached if detached else self._launch
        parent = (
            await self.store.sessions.get(await self.resolve_id(request.parent_id))
            if request.parent_id is not None
            else None
        )
        try:
            if request.conversation_id is not None:
                assert request.prompt is not None
                named = await self.resolve_id(request.conversation_id)
                conversation = await self.store.sessions.newest_in_chain(named)
                follow_up = self._follow_up_detached if detached else self._follow_up
                handle = await follow_up(conversation, request.prompt, request.agent_id)
                if conversation != named:
                    handle.routed_from = named
                started.append(handle)
                return started
            if request.batch is not None:
                # Check every item before starting any, so a bad item starts nothing.
                plans = [
                    (
                        item.prompt,
                        self._runner_for(item.agent_id or request.agent_id),
                        self._check_cwd(item.cwd or request.cwd),
                    )
                    for item in request.batch
                ]
                planned = self._plan_roles(roles, [where for _p, _a, where in plans])
                capsules = [
                    await self._capsule_for(request.capsule, where, accept)
                    for _p, _a, where in plans
                ]
                prepared = [await self._role_folders(r) for r in planned]
                for (p, (agent, runner), where), carried, role in zip(
                    plans, capsules, prepared, strict=True
                ):
                    started.append(
                        await launch(
                            p, agent, runner, where, request.mode, parent, carried, role, document
                        )
                    )
                return started
            assert request.prompt is not None
            agent, runner = self._runner_for(request.agent_id)
            where = self._check_cwd(request.cwd)
            [planned_one] = self._plan_roles(roles, [where])
            carried = await self._capsule_for(request.capsule, where, accept)
            role = await self._role_folders(planned_one)
            started.append(
                await launch(
                    request.prompt,
                    agent,
                    runner,
                    where,
                    request.mode,
                    parent,
                    carried,
                    role,
                    document,
                )
            )
            return started
        except asyncio.CancelledError:
            # The caller will never see these handles: their runs stop too.
            for handle in started:
                handle.cancel()
            raise

    @staticmethod
    def _plan_roles(
        roles: Sequence[RoleLaunch] | None, cwds: list[Path]
    ) -> list[PreparedRole | None]:
        """Each launch's role and group paths, ids checked (None: a launch with no role)."""
        from core.returns.launch import plan_role

        if roles is None:
            return [None] * len(cwds)
        return [plan_role(launch, cwd) for launch, cwd in zip(roles, cwds, strict=True)]

    @staticmethod
    async def _role_folders(planned: PreparedRole | None) -> PreparedRole | None:
        from core.returns.launch import make_folders

        return await make_folders(planned) if planned is not None else None

    async def _capsule_for(
        self, spec: str | None, cwd: Path, accept: CapsuleAcceptance | None
    ) -> PreparedCapsule | None:
        """The capsule a launch in ``cwd`` carries, checked (None: it carries none)."""
        from core.capsules.launch import prepare_capsule

        if spec is None:
            return None
        return await prepare_capsule(
            self.store,
            cwd,
            spec,
            acceptance=accept,
            prompt_ceiling=self.settings.capsule_max_tokens,
        )

    def _runner_for(self, agent_id: str | None) -> tuple[str, Runner]:
        from core.runners import build_runner
        from core.runners.default_agent import default_agent

        agent = agent_id or default_agent(self.settings).agent_id
        config = self.settings.agents.get(agent)
        if config is None:
            raise UnknownAgent(agent, list(self.settings.agents))
        return agent, build_runner(agent, config)

    def _check_cwd(self, cwd: str | None) -> Path:
        if not cwd:
            try:
                return Path.cwd()
            except FileNotFoundError:  # the shell's folder was deleted under it
                raise CwdMissing(".") from None
        path = _expand(cwd)
        try:
            not_a_folder = path.exists() and not path.is_dir()
        except (OSError, ValueError):  # _existing_cwd names the problem below
            not_a_folder = False
        if not_a_folder:
            raise InvalidRequest(f"cwd: {cwd!r} is not a directory")
        return _existing_cwd(cwd)

    async def _prompt_message(
        self, prompt: str, run_id: str, at_us: int, category: MessageCategory | None = None
    ) -> NewMessage:
        from core.tokens import count_tokens

        tokens = await asyncio.to_thread(count_tokens, prompt)
        return NewMessage(
            self._new_id(), Role.USER, prompt, at_us, tokens, run_id=run_id, category=category
        )

    async def _launch(
        self,
        prompt: str,
        agent_id: str,
        runner: Runner,
        cwd: Path,
        mode: SessionMode,
        parent: Session | None = None,
        capsule: PreparedCapsule | None = None,
        role: PreparedRole | None = None,
        document: str = "",
    ) -> RunHandle:
        request, started = await self._record_launch(
            prompt,
            agent_id,
            runner,
            cwd,
            mode,
            parent=parent,
            capsule=capsule,
            role=role,
            document=document,
        )
        if role is not None:
            self._roles[request.run_id] = role
        return self._start(request, runner, RunKind.LAUNCH, started)

    async def _record_launch(
        self,
        prompt: str,
        agent_id: str,
        runner: Runner,
        cwd: Path,
        mode: SessionMode,
        owner: process_identity.ProcessIdentity | None = None,
        *,
        parent: Session | None = None,
        capsule: PreparedCapsule | None = None,
        role: PreparedRole | None = None,
        document: str = "",
    ) -> tuple[RunRequest, HistoryEvent]:
        """Store the new session and its first run (owned by ``owner``, else this process).

        A sub-agent of ``parent`` gets its own window (clamped below the
        parent's) and starts with the parent's system and context messages.
        With a ``capsule`` the first prompt carries it, and the run, the session
        and the capsule's registry row record it. As a ``role`` of a group, the prior
        hand-off block comes first and the hand-off protocol last. What the prompt
        carries (the capsule block, a hand-off ``document``) is stored as a context
        message after the prompt: a sub-agent inherits it, the turn is the task.
        """
        from core.context import subagents
        from core.context.windows import launch_window
        from core.documents.prompt import carried_context, compose_launch_prompt
        from core.gitinfo import current_branch
        from core.runners import RunRequest

        title = title_from_prompt(prompt)
        injected = capsule.injected if capsule is not None else None
        carried = carried_context(capsule=injected, document=document)
        asked = role.first_prompt(prompt) if role is not None else prompt
        prompt = compose_launch_prompt(prompt, capsule=injected, document=document)
        if role is not None:
            prompt = role.first_prompt(prompt)
        now = self.clock()
        at_us = to_us(now)
        conversation_id, run_id = self._new_id(), self._new_id()
        branch = await asyncio.to_thread(current_branch, cwd)
        config = self.settings.agents[agent_id]
        limit, window_source = launch_window(config, self.settings.context)
        # An agent that writes its own transcript (a real CLI) is the record
        # of the conversation: the importer indexes its file instead.
        message = (
            None
            if runner.owns_transcript
            else await self._prompt_message(asked if carried else prompt, run_id, at_us)
        )
        # Kept by us whichever agent runs it (an agent CLI's transcript holds it as the
        # prompt's text): what a sub-agent of this session inherits.
        context = (
            [await self._prompt_message(carried, run_id, at_us, MessageCategory.CONTEXT)]
            if carried
            else []
        )
        window = subagents.child_window(
            limit, window_source, parent.context.limit_tokens if parent is not None else 0
        )
        inherited = await self._parent_context(parent) if parent is not None else []
        # Ours store the share as the child's first messages; an agent CLI keeps
        # its own transcript, so it gets the share through its own option.
        shared = (
            []
            if runner.owns_transcript
            else subagents.shared_copies(inherited, self._new_id, at_us)
        )
        system_prompt = subagents.shared_instructions(inherited) if runner.owns_transcript else ""
        await self._claim(
            run_id,
            self.store.runs.start_launch(
                NewSession(
                    conversation_id=conversation_id,
                    agent_id=agent_id,
                    mode=mode,
                    cwd=str(cwd),
                    title=title,
                    created_us=at_us,
                    context_limit=window.limit_tokens,
                    git_branch=branch,
                    model=config.model,
                    parent_id=parent.conversation_id if parent is not None else None,
                    window_source=window.source,
                    clamped_from=window.clamped_from,
                    capsule_id=injected.document_id if injected else None,
                    capsule_digest=injected.digest if injected else None,
                ),
                NewRun(
                    run_id,
                    agent_id,
                    RunKind.LAUNCH,
                    prompt,
                    at_us,
                    owner,
                    self._owner_kind_of(owner),
                    capsule_id=injected.document_id if injected else None,
                    capsule_digest=injected.digest if injected else None,
                ),
                message,
                shared,
                context,
            ),
        )
        if parent is not None and window.clamped_from is not None:
            await self._emit(
                ChildClamped(
                    at=now,
                    conversation_id=parent.conversation_id,
                    agent_id=parent.agent_id,
                    child_id=conversation_id,
                    child_agent_id=agent_id,
                    limit_tokens=window.limit_tokens,
                    parent_limit_tokens=window.clamped_from,
                )
            )
        if capsule is not None:
            await self._record_capsule(capsule, conversation_id, run_id, agent_id, now)
        started = DelegateLaunched(
            at=now,
            conversation_id=conversation_id,
            run_id=run_id,
            agent_id=agent_id,
            prompt=prompt,
            mode=mode,
        )
        request = RunRequest(
            run_id,
            conversation_id,
            agent_id,
            prompt,
            cwd,
            turn=1,
            system_prompt=system_prompt,
            writable_dirs=(role.paths.session_dir,) if role is not None else (),
        )
        return request, started

    async def _record_capsule(
        self,
        capsule: PreparedCapsule,
        conversation_id: str,
        run_id: str,
        agent_id: str,
        at: datetime,
    ) -> None:
        """The capsule's registry row names the session that used it; history says so."""
        from core.capsules.registry import record_use

        injected = capsule.injected
        await record_use(self.store, injected.document_id, conversation_id)
        await self._emit(
            CapsuleInjected(
                at=at,
                conversation_id=conversation_id,
                run_id=run_id,
                agent_id=agent_id,
                document_id=injected.document_id,
                digest=injected.digest,
                path=injected.path,
                accepted=capsule.accepted,
            )
        )

    async def _follow_up(
        self, conversation_id: str, prompt: str, agent_id: str | None
    ) -> RunHandle:
        agent, runner, cwd = await self._check_follow_up(conversation_id, agent_id)
        request, started = await self._record_follow_up(conversation_id, prompt, agent, runner, cwd)
        return self._start(request, runner, RunKind.FOLLOW_UP, started)

    async def _check_follow_up(
        self, conversation_id: str, agent_id: str | None
    ) -> tuple[str, Runner, Path]:
        """The agent, runner and folder of a follow-up, checked before anything is written."""
        from core.context.thresholds import exhausted

        session = await self.store.sessions.get(conversation_id)
        refusal = await exhausted(self.store, self.settings, session)
        if refusal is not None:
            raise refusal
        return self._follow_up_plan(session, agent_id)

    async def _record_follow_up(
        self,
        conversation_id: str,
        prompt: str,
        agent: str,
        runner: Runner,
        cwd: Path,
        owner: process_identity.ProcessIdentity | None = None,
    ) -> tuple[RunRequest, HistoryEvent]:
        """Claim the session for a follow-up run (owned by ``owner``, else this process)."""
        from core.runners import RunRequest

        now = self.clock()
        at_us = to_us(now)
        run_id = self._new_id()
        prompt = await self._with_parent_notes(conversation_id, prompt)
        message = (
            None if runner.owns_transcript else await self._prompt_message(prompt, run_id, at_us)
        )
        session = await self._claim(
            run_id,
            self.store.runs.claim_follow_up(
                conversation_id,
                NewRun(
                    run_id,
                    agent,
                    RunKind.FOLLOW_UP,
                    prompt,
                    at_us,
                    owner,
                    self._owner_kind_of(owner),
                ),
                message,
            ),
        )
        if session.archived_at is not None:
            # Working in a session again brings it back from the archive.
            await self.restore(conversation_id)
        started = FollowUpStarted(
            at=now,
            conversation_id=conversation_id,
            run_id=run_id,
            agent_id=agent,
            prompt=prompt,
        )
        request = RunRequest(
            run_id,
            conversation_id,
            agent,
            prompt,
            cwd,
            turn=session.metrics.turns,
            context_tokens=session.context.used_tokens - (message.token_count if message else 0),
            is_follow_up=True,
        )
        return request, started

    async def _with_parent_notes(self, conversation_id: str, prompt: str) -> str:
        """``prompt`` after the notes recorded for this session since its last run began."""
        from core.capsules.gaps import with_gaps
        from core.context import subagents

        since_us = await self.store.runs.last_started_us(conversation_id)
        notes = await self.store.history.child_notes(conversation_id, since_us)
        gaps = await self.store.history.capsule_gaps(conversation_id, since_us=since_us)
        told = [
            g
            for g in reversed(gaps)
            if isinstance(g, CapsuleGap) and g.source_id == conversation_id
        ]
        prompt = with_gaps(prompt, told)
        return subagents.with_notes(prompt, [n for n in notes if isinstance(n, ChildClamped)])

    async def _parent_context(self, parent: Session) -> list[Message]:
        """The parent's system and context messages, oldest first (what a child inherits).

        An imported parent's transcript is categorised on read: what it shares
        is what delegate gave it at launch (a capsule, a hand-off: kept as context
        beside the transcript) and its newest compact summary (the conversation as
        the agent keeps it; its instructions live in the agent's own files).
        """
        from core.context import subagents

        transcript = await self.store.imports.transcript_for(parent.conversation_id)
        if transcript is None:
            return await self.store.messages.in_categories(
                parent.conversation_id, subagents.SHARED_CATEGORIES, subagents.MAX_SHARED_MESSAGES
            )
        # What delegate gave it at launch (a capsule, a hand-off), kept beside its transcript.
        carried = await self.store.messages.in_categories(
            parent.conversation_id, (MessageCategory.CONTEXT,), subagents.MAX_SHARED_MESSAGES
        )
        return carried + await self._newest_summary(parent, transcript)

    async def _newest_summary(
        self, parent: Session, transcript: tuple[str, str, bool]
    ) -> list[Message]:
        """An imported session's newest compact summary, masked (none: [])."""
        cursor: str | None = None
        for _page in range(SUMMARY_PAGES):
            page = await self._transcript_messages(
                parent.conversation_id, transcript, MAX_PAGE, cursor
            )
            for message in page.messages:  # newest first
                if message.category is MessageCategory.CONTEXT:
                    # Another program's transcript, read as it is on disk: masked first.
                    return [message.model_copy(update={"content": redact(message.content)})]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        return []

    def _follow_up_plan(self, session: Session, agent_id: str | None) -> tuple[str, Runner, Path]:
        """The agent, runner and folder a follow-up would use; raises what refuses it.

        Checked before anything is written, and without writing: the follow-up
        box asks the same questions through :meth:`follow_up_problem`.
        """
        agent, runner = self._runner_for(agent_id or session.agent_id)
        # An id a CLI could read as an option never reaches one (imported by an older delegate).
        ids.validate_for_runner(self.settings.agents[agent].runner, session.conversation_id)
        # Only an agent CLI runs in the folder; a scripted or HTTP agent (demo
        # sessions) resumes anywhere.
        runs_in_folder = self.settings.agents[agent].runner in CLI_RUNNERS
        cwd = _existing_cwd(session.cwd) if runs_in_folder else Path(session.cwd)
        return agent, runner, cwd

    async def follow_up_problem(self, conversation_id: str) -> DelegateError | None:
        """What would refuse a follow-up into ``conversation_id`` now, or None.

        The same typed error ``delegate()`` would raise (``agent_busy``,
        ``session_not_ready``, ``runner_unavailable``, ``cwd_missing``, …), found
        without writing anything, so a front end can say so before the prompt is
        typed. The answer can change by the time the prompt is sent.
        """
        from core.context.thresholds import exhausted

        try:
            # A follow-up goes to the newest session of a hand-off chain: ask about that one.
            named = await self.resolve_id(conversation_id)
            session = await self.store.sessions.get(
                await self.store.sessions.newest_in_chain(named)
            )
            # As the store's claim answers: only idle and ready sessions resume.
            if session.state is SessionState.PENDING:
                return SessionNotReady(session.conversation_id)
            if session.state not in (SessionState.IDLE, SessionState.READY):
                return AgentBusy(session.conversation_id)
            refusal = await exhausted(self.store, self.settings, session)
            if refusal is not None:
                return refusal
            await asyncio.to_thread(self._follow_up_plan, session, None)
        except DelegateError as exc:
            return exc
        return None

    async def _claim(self, run_id: str, claim: Awaitable[T]) -> T:
        """Await the transaction that records a run; a cancel there leaves no run open.

        A cancel can land after the COMMIT reached the database but before the
        caller saw it: the run then exists with no task to close it, so it is
        closed here (``cancelled``) before the cancel goes on.
        """
        try:
            return await claim
        except asyncio.CancelledError:
            await _uncancellable(self._abandon(run_id))
            raise

    async def _abandon(self, run_id: str) -> None:
        try:
            run = await self.store.runs.get(run_id)
        except DelegateError:
            return  # never committed: nothing to close
        if run.status is RunStatus.RUNNING:
            await self.store.runs.finish(
                run_id,
                RunStatus.CANCELLED,
                Usage(),
                "",
                CANCELLED_BY_USER,
                to_us(self.clock()),
                None,
            )

    async def _history_before(self, conversation_id: str, run_id: str) -> list[Message]:
        """The newest stored messages before this run, oldest first."""
        messages, _ = await self.store.messages.recent(conversation_id, HISTORY_MESSAGES + 1)
        return [m for m in reversed(messages) if m.run_id != run_id][-HISTORY_MESSAGES:]

    def _start(
        self, request: RunRequest, runner: Runner, kind: RunKind, started: HistoryEvent
    ) -> RunHandle:
        """Create the run's task at once: from here on, the task owns closing the run."""
        handle = RunHandle(request.run_id, request.conversation_id, request.agent_id, kind)
        handle._task = asyncio.create_task(self._execute(handle, runner, request, started))
        self._runs[request.run_id] = handle
        self._keep_beating()
        return handle

    async def _execute(
        self, handle: RunHandle, runner: Runner, request: RunRequest, started: HistoryEvent
    ) -> Run:
        """Drive the runner, store what it says, and close the run whatever happens."""
        from core.live_activity import LiveActivity
        from core.runners import (
            ConversationIdAssigned,
            MessageOut,
            RunCompleted,
            RunFailed,
            StderrLine,
            TextDelta,
        )
        from core.runners.base import closing
        from core.runners.subprocess import on_process_started

        usage, status, error = Usage(), RunStatus.COMPLETED, None
        reply: list[str] = []
        streamed: list[str] = []  # text since the last whole assistant message
        ended: RunCompleted | RunFailed | None = None
        activity = LiveActivity(
            self.store.runs,
            request.run_id,
            lambda: "".join(reply) + "".join(streamed),
            interval_s=self.activity_interval_s,
            clock=self.clock,
        )
        handle._started = True
        try:
            if handle._cancel_requested:
                raise asyncio.CancelledError
            await self._emit(started)
            if runner.wants_history:
                request = dataclasses.replace(
                    request,
                    history=await self._history_before(request.conversation_id, request.run_id),
                )
            if runner.owns_transcript:
                # A CLI of an earlier run whose delegate died must not write the
                # conversation beside the one this run starts.
                await self._stop_orphaned_agents(request.conversation_id)
                run_id = request.run_id
                on_process_started.set(lambda pid: self._record_agent(run_id, pid))
            # aclosing: whatever ends the loop (a cancel, an error in its body),
            # the runner's generator is closed here, and with it the agent's
            # process group, before the run is stored closed.
            async with closing(runner.run(request)) as events:
                async for event in events:
                    handle._events.put_nowait(event)
                    if isinstance(event, TextDelta):
                        streamed.append(event.text)
                        activity.changed()
                        self.bus.publish(
                            RunOutput(
                                conversation_id=request.conversation_id,
                                run_id=request.run_id,
                                text=event.text,
                            )
                        )
                    elif isinstance(event, StderrLine):
                        activity.stderr_line(event.text)
                        self._publish_activity(request, activity)
                    elif isinstance(event, MessageOut):
                        if not runner.owns_transcript:
                            await self._store_reply(request, event)
                        if event.role is Role.ASSISTANT:
                            reply.append(event.content)
                            streamed.clear()
                            activity.changed()
                    elif isinstance(event, ConversationIdAssigned):
                        request = await self._rekey(handle, request, event.external_id)
                    elif isinstance(event, RunCompleted):
                        usage, ended = event.usage, event
                    elif isinstance(event, RunFailed):
                        status, error, ended = RunStatus.FAILED, event.error, event
        except asyncio.CancelledError:
            status, error = RunStatus.CANCELLED, CANCELLED_BY_USER
        except RunnerUnavailable as exc:
            status, error = RunStatus.FAILED, exc.message
        except Exception as exc:  # a runner bug must not leave the session running
            status, error = RunStatus.FAILED, f"{type(exc).__name__}: {exc}"
        finally:
            handle._events.put_nowait(None)
        await _uncancellable(activity.close())
        partial = "".join(streamed) if status is not RunStatus.COMPLETED else ""
        run = await _uncancellable(
            self._close_run(
                request,
                status,
                usage,
                "".join(reply) + partial,
                error,
                ended,
                store_note=not runner.owns_transcript,
                partial=partial,
            )
        )
        role = self._roles.pop(request.run_id, None)
        if role is not None:
            # The final message alone is the return (text said before a tool call is not).
            await _uncancellable(self._judge_return(role, run, reply[-1] if reply else ""))
        if runner.owns_transcript:
            # After the result is delivered: the caller's wait() does not pay for it.
            self._after_run(self._import_transcript(request))
        if self.after_turn is not None and run.status is not RunStatus.CANCELLED:
            await self._end_turn(handle, self.after_turn)
        return run

    async def _end_turn(self, handle: RunHandle, after_turn: AfterTurn) -> None:
        """Let ``after_turn`` act on the stored turn (a hand-off may take a while); never
        raises: the run is stored, and what went wrong is logged."""
        self._ending[handle.run_id] = handle
        try:
            handle.turn_end = await after_turn(handle.conversation_id)
        except asyncio.CancelledError:
            log.info("acting on the end of run %s was cancelled", handle.run_id)
        except Exception:
            log.exception("acting on the end of run %s failed", handle.run_id)
        finally:
            self._ending.pop(handle.run_id, None)

    async def _judge_return(
        self, role: PreparedRole, run: Run, final_message: str
    ) -> ReturnStep | None:
        """Judge, route and record a role's return, then say so in history.

        Never raises: the run is stored already, and a return that cannot be recorded
        is logged (the caller then finds no step for the run).
        """
        from core.returns.launch import judge, record_judged, return_event
        from core.returns.routing import Routes

        try:
            parsed = await asyncio.to_thread(
                judge,
                role,
                final_message,
                run,
                max_tokens=self.settings.returns.max_return_tokens,
            )
            now = self.clock()
            routes = Routes.from_settings(self.settings.returns)
            step = await record_judged(self.store, role, parsed, run, routes=routes, now=now)
            await self._emit(return_event(step, run.agent_id, now))
        except Exception:
            log.exception("recording the return of run %s failed", run.run_id)
            return None
        return step

    async def return_step(self, run_id: str) -> ReturnStep | None:
        """The compact-return step a role's run recorded (None: not a role's run, or
        not ended yet)."""
        return await self.store.returns.by_run(run_id)

    async def previous_handoff(self, session: str, group: str) -> tuple[AgentRole, str] | None:
        """The newest valid hand-off file of ``group`` in artifacts ``session``, with the
        role that wrote it: what the group's next role reads first."""
        for step in reversed(await self.store.returns.for_session(session, group)):
            # A registered file is one that was read valid when its return was recorded.
            if step.rule is None and step.document_id is not None and step.handoff_path:
                return step.role, step.handoff_path
        return None

    async def _rekey(self, handle: RunHandle, request: RunRequest, new_id: str) -> RunRequest:
        """Adopt the conversation id the agent chose (a Codex thread id)."""
        try:
            await self.store.sessions.rekey(request.conversation_id, new_id)
        except Exception:  # e.g. a session of delegate's own holds that id: keep ours
            log.exception("cannot re-key %s to %s", request.conversation_id, new_id)
            return request
        handle.conversation_id = new_id
        return dataclasses.replace(request, conversation_id=new_id)

    def _after_run(self, work: Coroutine[Any, Any, None]) -> None:
        """Work that follows a stored run; :meth:`close` waits for it."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _import_transcript(self, request: RunRequest) -> None:
        """Index the transcript the agent CLI just wrote (that file only)."""
        from core.sources.importer import import_transcript  # deferred: multiprocessing et al.

        config = self.settings.agents[request.agent_id]
        env = {**os.environ, **config.env}
        source, root = (
            ("codex", env.get("CODEX_HOME"))
            if config.runner == "codex"
            else ("claude-code", env.get("CLAUDE_CONFIG_DIR"))
        )
        try:
            await import_transcript(
                self.store,
                source,
                request.conversation_id,
                Path(root) if root else None,
                windows=self.settings.context,
            )
        except Exception:  # the run is over and stored; a failed index is not its failure
            log.exception("importing the transcript of run %s failed", request.run_id)

    async def _store_reply(self, request: RunRequest, event: MessageOut) -> None:
        """Store a message at once with an estimated count; the exact count is taken
        in a thread meanwhile and applied when the run closes (core.context.counting)."""
        from core.context.counting import PendingCounts
        from core.context.counting import estimate as estimate_tokens

        now_us = to_us(self.clock())
        content = redact(event.content)
        estimated = estimate_tokens(content)
        [seq] = await self.store.messages.append(
            request.conversation_id,
            [
                NewMessage(
                    self._new_id(),
                    event.role,
                    content,
                    now_us,
                    estimated,
                    event.tool,
                    request.run_id,
                )
            ],
        )
        self._counts.setdefault(request.run_id, PendingCounts()).stored(seq, content, estimated)

    async def _close_run(
        self,
        request: RunRequest,
        status: RunStatus,
        usage: Usage,
        output: str,
        error: str | None,
        ended: RunCompleted | RunFailed | None = None,
        *,
        store_note: bool = True,
        partial: str = "",
    ) -> Run:
        from core.runners import MessageOut, RunCompleted
        from core.tokens import count_tokens

        if partial and store_note:  # what the agent said before it was cut short is kept
            await self._store_reply(request, MessageOut(Role.ASSISTANT, partial))
        now = self.clock()
        note = None
        # Agents echo their environment on failure: nothing stored keeps a secret.
        output, error = redact(output), redact(error) if error is not None else None
        stderr = redact(ended.stderr) if ended is not None else None
        # A CLI's transcript is the session's record (previews read it as long as
        # we store no message of our own): its error stays on the run and in history.
        if error is not None and store_note:
            note = NewMessage(
                self._new_id(),
                Role.SYSTEM,
                f"run {status.value}: {error}",
                to_us(now),
                count_tokens(error),
                run_id=request.run_id,
            )
        completed = ended if isinstance(ended, RunCompleted) else None
        pending = self._counts.pop(request.run_id, None)
        corrections = await pending.corrections() if pending is not None else []
        run = await self.store.runs.finish(
            request.run_id,
            status,
            usage,
            output,
            error,
            to_us(now),
            note,
            context_tokens=completed.context_tokens if completed else None,
            context_limit=completed.context_limit if completed else None,
            stderr=stderr,
            token_corrections=corrections,
        )
        await self._sample_context(request.conversation_id, to_us(now))
        duration = run.duration_s or 0.0
        status = run.status  # the first close wins: another process may have interrupted it
        event: HistoryEvent
        if request.is_follow_up:
            event = FollowUpCompleted(
                at=now,
                conversation_id=request.conversation_id,
                run_id=request.run_id,
                agent_id=request.agent_id,
                prompt=request.prompt,
                status=status,
                duration_s=duration,
                usage=usage,
                error=error,
            )
        else:
            event = DelegateFinished(
                at=now,
                conversation_id=request.conversation_id,
                run_id=request.run_id,
                agent_id=request.agent_id,
                status=status,
                duration_s=duration,
                usage=usage,
                error=error,
            )
        await self._emit(event)
        await self._report_gaps(request, output, now)
        self._runs.pop(request.run_id, None)
        return run

    async def _report_gaps(self, request: RunRequest, output: str, at: datetime) -> None:
        """A ``Capsule Gap`` the reply of a capsule-launched session reports: one history
        event each, naming the capsule, so the main agent (and a person) hears of it."""
        from core.documents.prompt import capsule_gaps

        notes = capsule_gaps(output)
        if not notes:
            return
        session = await self.store.sessions.get(request.conversation_id)
        if session.capsule_id is None:
            return
        told = await self._gap_source(session, session.capsule_id)
        for note in notes:
            await self._emit(
                CapsuleGap(
                    at=at,
                    conversation_id=request.conversation_id,
                    run_id=request.run_id,
                    agent_id=request.agent_id,
                    document_id=session.capsule_id,
                    note=note,
                    source_id=told,
                )
            )

    async def _gap_source(self, session: Session, capsule_id: str) -> str | None:
        """The main session a gap is told to: the capsule's source session when it is one
        of ours (its marker is free text), else the reporter's parent."""
        try:
            source = (await self.store.documents.get(capsule_id)).source_session
        except DelegateError:  # the registry row was pruned since
            source = None
        if source and source != session.conversation_id:
            try:
                return (await self.store.sessions.get(source)).conversation_id
            except UnknownConversation:
                pass
        return session.parent_id

    async def capsule_gaps(
        self, conversation_id: str | None = None, limit: int = 10
    ) -> list[CapsuleGap]:
        """Capsule gaps newest first: all, or those reported to or by a session."""
        cid = await self.resolve_id(conversation_id) if conversation_id is not None else None
        gaps = await self.store.history.capsule_gaps(cid, limit=limit)
        return [g for g in gaps if isinstance(g, CapsuleGap)]

    # --- detached runs: a worker process of their own (core/detached.py) ------

    async def _sample_context(self, conversation_id: str, at_us: int) -> None:
        """Keep the context figure of the turn that just closed (the trend and the rate)."""
        session = await self.store.sessions.get(conversation_id)
        context = session.context
        if context.known and session.metrics.turns > 0:
            await self.store.context.record_sample(
                conversation_id,
                session.metrics.turns,
                context.used_tokens,
                context.limit_tokens,
                at_us,
            )

    async def _launch_detached(
        self,
        prompt: str,
        agent_id: str,
        runner: Runner,
        cwd: Path,
        mode: SessionMode,
        parent: Session | None = None,
        capsule: PreparedCapsule | None = None,
        role: PreparedRole | None = None,
        document: str = "",
    ) -> RunHandle:
        """A launch its own worker process drives; returns once it is recorded."""
        await self._warm_up(prompt)
        return await self._detach(
            RunKind.LAUNCH,
            lambda owner: self._record_launch(
                prompt,
                agent_id,
                runner,
                cwd,
                mode,
                owner,
                parent=parent,
                capsule=capsule,
                role=role,
                document=document,
            ),
            role,
        )

    async def _follow_up_detached(
        self, conversation_id: str, prompt: str, agent_id: str | None
    ) -> RunHandle:
        """A follow-up its own worker process drives; returns once the session is claimed."""
        agent, runner, cwd = await self._check_follow_up(conversation_id, agent_id)
        await self._warm_up(prompt)
        return await self._detach(
            RunKind.FOLLOW_UP,
            lambda owner: self._record_follow_up(
                conversation_id, prompt, agent, runner, cwd, owner
            ),
        )

    @staticmethod
    async def _warm_up(prompt: str) -> None:
        """Load the token encoding before the worker starts, not while it starts.

        Counting the prompt again when it is recorded is then quick; done
        while the worker's own start-up competes for the cores, loading the
        encoding would make the caller's answer wait.
        """
        from core.tokens import count_tokens

        await asyncio.to_thread(count_tokens, prompt)

    async def _detach(
        self,
        kind: RunKind,
        record: Callable[
            [process_identity.ProcessIdentity], Awaitable[tuple[RunRequest, HistoryEvent]]
        ],
        role: PreparedRole | None = None,
    ) -> RunHandle:
        """Start a worker, record the run as the worker's, then hand it the run.

        The worker exists before the run is recorded, so the run never has an
        owner that is not alive; a refused or cancelled record stops the worker
        before it touched anything (the handshake: core/detached.py).
        """
        from core.detached import GoMessage, spawn_worker

        worker = spawn_worker(self.store.path.parent)
        try:
            request, _started = await record(worker.identity)  # the worker stores it
        except BaseException:
            worker.abandon()
            raise
        worker.go(
            GoMessage(
                request.run_id,
                self.settings,
                str(request.cwd),
                request.turn,
                request.context_tokens,
                request.system_prompt,
                role.launch if role is not None else None,
            )
        )
        handle = RunHandle(request.run_id, request.conversation_id, request.agent_id, kind)
        handle._follow = functools.partial(self._follow_detached, request.run_id, worker, role)
        handle._stop = worker.stop
        return handle

    async def _follow_detached(
        self, run_id: str, worker: Worker | None = None, role: PreparedRole | None = None
    ) -> Run:
        """The run as stored once it is closed, whichever process closes it (a role's:
        once its return is recorded too)."""
        while (run := await self.store.runs.get(run_id)).status is RunStatus.RUNNING:
            # A worker that died never closes its run: any reader does.
            if not await self.store.runs.interrupt_dead_runs(run.conversation_id):
                await asyncio.sleep(DETACHED_POLL_S)
        if role is not None and worker is not None:
            await self._await_detached_return(run, worker, role)
        return run

    async def _await_detached_return(self, run: Run, worker: Worker, role: PreparedRole) -> None:
        """Wait for the worker to record the role's return and say so in history (two
        writes: a caller that saw only the first returned before the history event); a
        worker that ended without them (killed) leaves the rest to this caller."""
        while not await self._return_told(run.run_id):
            if worker.process.poll() is not None:
                # Gone: it told the return before exiting, or never will.
                if not await self._return_told(run.run_id):
                    step = await self.store.returns.by_run(run.run_id)
                    if step is None:  # judged from the stored output
                        await self._judge_return(role, run, run.output)
                    else:  # recorded, then killed before its history event
                        from core.returns.launch import return_event

                        await self._emit(return_event(step, run.agent_id, self.clock()))
                return
            await asyncio.sleep(DETACHED_POLL_S)

    async def _return_told(self, run_id: str) -> bool:
        """Whether a role's run has its return recorded and its history event stored."""
        if await self.store.returns.by_run(run_id) is None:
            return False
        return await self.store.history.has_run_event(run_id, RETURN_EVENT_KINDS)

    async def start_detached(self, go: GoMessage) -> RunHandle:
        """Drive the run a caller recorded for this process (the worker's half).

        The run must be in flight and owned by this very process (pid, start
        time, host): a go message naming any other run is ``not_running``.
        Its ``started`` history event is stored here, when the run starts.
        """
        from core.detached import UnavailableRunner
        from core.returns.launch import plan_role
        from core.runners import RunRequest

        flight = await self.store.runs.in_flight(go.run_id)
        me = process_identity.current()
        if (
            flight is None
            or flight.run_id != go.run_id
            or (flight.owner_host_id, flight.owner_pid, flight.owner_started)
            != (me.host_id, me.pid, me.started)
        ):
            raise NotRunning(go.run_id, "it is not a run recorded for this worker")
        run = await self.store.runs.get(go.run_id)
        session = await self.store.sessions.get(run.conversation_id)
        follow_up = run.kind is RunKind.FOLLOW_UP
        request = RunRequest(
            run.run_id,
            run.conversation_id,
            run.agent_id,
            run.prompt,
            Path(go.cwd),
            turn=go.turn,
            context_tokens=go.context_tokens,
            is_follow_up=follow_up,
            system_prompt=go.system_prompt,
        )
        started: HistoryEvent
        if follow_up:
            started = FollowUpStarted(
                at=run.started_at,
                conversation_id=run.conversation_id,
                run_id=run.run_id,
                agent_id=run.agent_id,
                prompt=run.prompt,
            )
        else:
            started = DelegateLaunched(
                at=run.started_at,
                conversation_id=run.conversation_id,
                run_id=run.run_id,
                agent_id=run.agent_id,
                prompt=run.prompt,
                mode=session.mode,
            )
        runner: Runner
        try:
            _, runner = self._runner_for(run.agent_id)
            if go.role is not None:
                # The caller checked the ids and made the folders: the same paths here.
                self._roles[run.run_id] = plan_role(go.role, Path(go.cwd))
        except DelegateError as exc:  # e.g. its script vanished since the caller checked
            runner = UnavailableRunner(exc.message)
        return self._start(request, runner, run.kind, started)

    def running(self) -> list[RunHandle]:
        """Runs this process is driving now."""
        return list(self._runs.values())

    async def cancel(self, run_id: str) -> bool:
        """Cancel a run this process drives; False when it is not ours or already over."""
        handle = self._runs.get(run_id)
        if handle is None or handle._task is None:
            return False
        handle.cancel()
        await asyncio.gather(handle._task, return_exceptions=True)
        return True

    async def stop_run(self, run_or_conversation_id: str) -> StopOutcome:
        """Stop a run, whoever drives it (``x`` in any panel, ``runs stop``, ``sessions stop``).

        Named by its run id or its session's conversation id. A run of this
        process is cancelled at once. Any other run gets its cancel flag set in
        the store: its owner reads it on its next heartbeat and stores the run
        ``cancelled`` (partial reply kept). An owner on this host that is a
        one-run process (``delegate run``, a detached worker) and has not closed
        the run within ``SIGNAL_AFTER_BEATS`` heartbeats is also sent SIGTERM,
        once its identity (pid and start time) is checked; a panel or an MCP
        server, which drive other runs too, never is. Waits until the run is
        stored closed (at most ``STOP_WAIT_S``); a run of another host is only
        flagged (``requested``). ``not_running`` when nothing is in flight;
        ``unknown_conversation`` when the id names nothing.
        """
        ident = await self._session_or_run_id(run_or_conversation_id)
        for handle in list(self._runs.values()):
            if ident in (handle.run_id, handle.conversation_id):
                await self.cancel(handle.run_id)
                return StopOutcome(handle.run_id, handle.conversation_id, "cancelled")
        flight = await self.store.runs.in_flight(ident)
        if flight is None:
            if not await self._names_something(ident):
                raise UnknownConversation(ident)
            raise NotRunning(ident)
        alive = process_identity.liveness(
            flight.owner_host, flight.owner_host_id, flight.owner_pid, flight.owner_started
        )
        if alive == "gone":
            await self.store.runs.interrupt_dead_runs(flight.conversation_id)
            return StopOutcome(flight.run_id, flight.conversation_id, "interrupted")
        # Of another host and silent past the grace: judged as every reader judges it.
        if alive == "unknown" and await self.store.runs.interrupt_dead_runs(flight.conversation_id):
            return StopOutcome(flight.run_id, flight.conversation_id, "interrupted")
        await self.store.runs.request_cancel(flight.run_id, to_us(self.clock()))
        if alive == "unknown":  # another host: its owner reads the flag on its next beat
            return StopOutcome(flight.run_id, flight.conversation_id, "requested")
        return await self._await_stop(flight)

    async def _await_stop(self, flight: RunInFlight) -> StopOutcome:
        """Wait for a flagged run of this host to close; SIGTERM a one-run owner that lags."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        signal_at = (
            started + SIGNAL_AFTER_BEATS * self.heartbeat_s
            if flight.owner_kind in ONE_RUN_OWNERS and flight.owner_pid != os.getpid()
            else None
        )
        signalled = False
        while await self.store.runs.in_flight(flight.run_id) is not None:
            now = loop.time()
            if signal_at is not None and not signalled and now >= signal_at:
                signalled = _terminate_owner(flight)
            if now - started > STOP_WAIT_S:
                how: Literal["signalled", "requested"] = "signalled" if signalled else "requested"
                return StopOutcome(flight.run_id, flight.conversation_id, how)
            await asyncio.sleep(STOP_POLL_S)
        return StopOutcome(flight.run_id, flight.conversation_id, "stopped")

    # --- runs of every process (issue 8) ------------------------------------

    async def list_runs(self, status: RunStatus | None = None, limit: int = 50) -> list[Run]:
        """The latest runs of every process, newest first (``status``: only those)."""
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidRequest(f"limit: must be between 1 and {MAX_PAGE}")
        await self.store.runs.interrupt_dead_runs()  # a dead owner's run is not running
        return await self.store.runs.list(status, limit)

    async def get_run(self, run_id: str) -> Run:
        """One run, named by its id or a unique prefix of ``MIN_ID_PREFIX`` characters.

        ``unknown_run`` when nothing matches, ``ambiguous_id`` listing several.
        """
        if not isinstance(run_id, str) or not _storable(run_id):
            raise UnknownRun(_printable(run_id))
        await self.store.runs.interrupt_dead_runs()
        found = [run_id]
        try:
            return await self.store.runs.get(run_id)
        except UnknownRun:
            if len(run_id) < MIN_ID_PREFIX:
                raise
            found = await self.store.runs.run_ids_with_prefix(run_id, AMBIGUOUS_SHOWN + 1)
        if not found:
            raise UnknownRun(run_id)
        if len(found) > 1:
            shown = found[:AMBIGUOUS_SHOWN]
            raise AmbiguousId(run_id, shown, more=len(found) > AMBIGUOUS_SHOWN, what="runs")
        return await self.store.runs.get(found[0])

    # --- heartbeats and stale runs (issue 8) ------------------------------

    def _owner_kind_of(self, owner: process_identity.ProcessIdentity | None) -> OwnerKind:
        """A run recorded for a detached worker (``owner`` given) is a worker's."""
        return "worker" if owner is not None else self.owner_kind

    def _keep_beating(self) -> None:
        """Beat while runs are in flight: an idle process has no timer at all."""
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.create_task(self._beat_while_running())

    async def _beat_while_running(self) -> None:
        # Checked and left in one step: a run started after the check finds the
        # task done and starts a new one.
        while self._runs:
            await asyncio.sleep(self.heartbeat_s)
            if not self._runs:
                return
            try:
                await self._beat()
            except Exception:  # a busy or broken store: try again on the next beat
                log.exception("heartbeat failed")

    async def _beat(self) -> None:
        """Stamp every run this process drives alive (one write); stop those flagged."""
        run_ids = list(self._runs)
        await self.store.runs.heartbeat(run_ids, to_us(self.clock()))
        for run_id in await self.store.runs.cancel_requested(run_ids):
            handle = self._runs.get(run_id)
            if handle is not None:
                log.info("run %s: stop requested from another process", run_id)
                handle.cancel()

    async def _stop_beating(self) -> None:
        beat, self._heartbeat = self._heartbeat, None
        if beat is not None and not beat.done():
            beat.cancel()
            await asyncio.gather(beat, return_exceptions=True)

    async def interrupt_stale_runs(self, grace_s: float | None = None) -> list[RunInterrupted]:
        """Interrupt the runs whose owner is gone or silent for ``grace_s`` (config
        ``run_grace_seconds`` by default): their sessions are freed, a history cell
        each is stored and published here. The supervisor's monitor calls this."""
        grace = self.settings.run_grace_seconds if grace_s is None else grace_s
        events = await self.store.runs.interrupt_stale_events(
            to_us(self.clock()), int(grace * 1_000_000)
        )
        for event in events:
            self.bus.publish(event)
        return events

    def _publish_activity(self, request: RunRequest, activity: LiveActivity) -> None:
        self.bus.publish(
            RunActivity(
                conversation_id=request.conversation_id,
                run_id=request.run_id,
                stderr_tail=activity.stderr_tail,
                live_output=activity.live_output,
                at=self.clock(),
            )
        )

    async def _session_or_run_id(self, ident: str) -> str:
        """A session id (a unique prefix resolved) or, failing that, ``ident`` as a run id."""
        try:
            return await self.resolve_id(ident)
        except UnknownConversation:
            return ident

    async def _names_something(self, ident: str) -> bool:
        try:
            await self.store.sessions.get(ident)
        except DelegateError:
            try:
                await self.store.runs.get(ident)
            except DelegateError:
                return False
        return True

    async def _record_agent(self, run_id: str, pid: int) -> None:
        """Remember the CLI a run started, for whoever finds the run orphaned."""
        await self.store.runs.record_agent_process(run_id, pid, process_identity.start_time(pid))

    async def _stop_orphaned_agents(self, conversation_id: str) -> None:
        from core.runners.subprocess import stop_orphan

        for agent in await self.store.runs.orphaned_agents(conversation_id):
            if await asyncio.to_thread(stop_orphan, agent.pid, agent.started):
                log.warning(
                    "stopped agent process %d left running by run %s", agent.pid, agent.run_id
                )

    # --- history ---------------------------------------------------------

    async def _emit(self, event: HistoryEvent) -> None:
        await self.store.history.add(
            to_us(event.at),
            event.kind,
            event.conversation_id,
            getattr(event, "run_id", None),
            event.model_dump(mode="json"),
        )
        self.bus.publish(event)

    async def emit(self, event: HistoryEvent) -> None:
        """Store a history event and publish it: for the services above the orchestrator
        (monitors, hand-offs) whose events are history like its own."""
        await self._emit(event)

    async def history(self, limit: int = 50) -> list[HistoryEvent]:
        """The latest history events, newest first."""
        return (await self.store.history.events(limit)).events

    async def history_events(self, limit: int = 50) -> HistoryEvents:
        """The latest history events, and how many stored rows were skipped as unreadable
        (a kind a newer delegate wrote, or a damaged row)."""
        return await self.store.history.events(limit)
