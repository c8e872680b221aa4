"""``AgentOrchestrator``: the one API every front end uses, composed of the core's wings.

It owns opening and closing the core and nothing else: every verb belongs to a wing,
handed the same :class:`~core.services.CoreServices` (store, settings, bus, clocks,
ids, history), the way ``Store.open`` hands one ``Database`` to every repository::

    verb                                         wing (owner)
    list_sessions list_children recent_messages  conversations.reader
    find_message get_session get_sessions
    change_count context_report transcript_path
    transcript_details latest_run status_counts
    count_sessions search_sessions fullest_sessions
    waiting_handoffs capsule_gaps history
    resolve_id short_ids                         conversations.ids
    import_sources refresh_transcript            conversations.imports
    last_import_report
    dismiss archive restore rename purge         conversations.archive
    dependants clear_demo
    mark_checkpoint checkpoints get_checkpoint   conversations.checkpoints
    restore_checkpoint fork_checkpoint
    keeps_conversation
    document find_documents document_chain       conversations.documents
    return_sessions return_steps
    delegate                                     runs.launcher (the run wing: made on first use)
    follow_up_problem                            runs.plans
    start_detached                               runs.detached
    running cancel                               runs.flight
    stop_run list_runs get_run                   runs.ownership
    interrupt_stale_runs
    return_step previous_handoff                 runs.closer
    emit                                         history (core.history_emitter)
    data_dir store_lost open close               the orchestrator itself

Requests are validated by their models (core.requests); state changes go through the
store in one transaction each; runs execute as asyncio tasks; history goes out on the bus.
"""

from __future__ import annotations

import functools
import importlib
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from core.clock import Clock, Clocks, MonoClock, system_clock, system_mono
from core.config import DB_FILENAME, Settings, ensure_data_dir, load_settings
from core.conversations import Conversations
from core.errors import DelegateError
from core.events import EventBus
from core.history_emitter import HistoryEmitter
from core.models import OwnerKind
from core.services import CoreServices
from core.store import Store

if TYPE_CHECKING:
    from core.runs.handle import AfterTurn
    from core.runs.wing import Runs

V = TypeVar("V")


class _RunVerb(Generic[V]):
    """A verb of the run wing, bound on first use: the wing (and the launch machinery it
    imports) is made when a run is first started, stopped or asked about, not at open."""

    def __init__(self, pick: Callable[[Runs], V]) -> None:
        self._pick = pick

    def __get__(self, orchestrator: AgentOrchestrator, owner: object = None) -> V:
        return self._pick(orchestrator.runs)


class AgentOrchestrator:
    """List, preview, archive, launch and follow up on sessions: the wings, composed."""

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
        heartbeat_s: float | None = None,
        activity_interval_s: float | None = None,
        after_turn: AfterTurn | None = None,
    ) -> None:
        """``owner_kind``: what this process is to the runs it drives (``run`` for
        ``delegate run``, ``worker`` for a detached worker: only those are ever
        signalled by a stop from elsewhere). ``heartbeat_s``: how often its runs
        are stamped alive and their cancel flags read. ``activity_interval_s``:
        how often at most a run's live output and stderr tail are stored (None for
        either: the run wing's default).
        ``after_turn``: acts on every turn this process runs once it is stored, before
        the run's ``wait()`` returns (a front end with no supervisor sets it:
        ``core.supervisor.turn_end.judge_turns``). ``mono_clock``: the clock that
        does not jump, by which this host's heartbeats are judged (``clock``, wall
        time, only says when; see core.elapsed)."""
        self.store = store
        self.settings = settings
        self.bus = bus or EventBus()
        self.clock = clock
        # Heartbeats and leases are stamped and judged by this process's clocks.
        self.clocks = Clocks(clock, mono_clock)
        store.runs.clocks = self.clocks
        store.runs.grace_us = int(settings.run_grace_seconds * 1_000_000)
        history = HistoryEmitter(store.history, self.bus)
        self.core = CoreServices(store, settings, self.bus, self.clocks, new_id, history)
        self.conversations = Conversations.make(self.core)
        self._run_options: dict[str, Any] = {
            "owner_kind": owner_kind,
            "heartbeat_s": heartbeat_s,
            "activity_interval_s": activity_interval_s,
            "after_turn": after_turn,
        }
        self._expose_verbs()

    def _expose_verbs(self) -> None:
        """Each verb of the docstring's table, bound to the wing that owns it."""
        reader = self.conversations.reader
        self.list_sessions = reader.list_sessions
        self.list_children = reader.list_children
        self.recent_messages = reader.recent_messages
        self.find_message = reader.find_message
        self.get_session = reader.get_session
        self.get_sessions = reader.get_sessions
        self.change_count = reader.change_count
        self.context_report = reader.context_report
        self.transcript_path = reader.transcript_path
        self.transcript_details = reader.transcript_details
        self.latest_run = reader.latest_run
        self.status_counts = reader.status_counts
        self.count_sessions = reader.count_sessions
        self.search_sessions = reader.search_sessions
        self.fullest_sessions = reader.fullest_sessions
        self.waiting_handoffs = reader.waiting_handoffs
        self.capsule_gaps = reader.capsule_gaps
        self.history = reader.history
        ids = self.conversations.ids
        self.resolve_id = ids.resolve_id
        self.short_ids = ids.short_ids
        imports = self.conversations.imports
        self.import_sources = imports.import_sources
        self.refresh_transcript = imports.refresh_transcript
        self.last_import_report = imports.last_import_report
        archive = self.conversations.archive
        self.dismiss = archive.dismiss
        self.archive = archive.archive
        self.restore = archive.restore
        self.rename = archive.rename
        self.purge = archive.purge
        self.dependants = archive.dependants
        self.clear_demo = archive.clear_demo
        marks = self.conversations.checkpoints
        self.mark_checkpoint = marks.mark_checkpoint
        self.checkpoints = marks.checkpoints
        self.get_checkpoint = marks.get_checkpoint
        self.restore_checkpoint = marks.restore_checkpoint
        self.fork_checkpoint = marks.fork_checkpoint
        self.keeps_conversation = marks.keeps_conversation
        documents = self.conversations.documents
        self.document = documents.document
        self.find_documents = documents.find_documents
        self.document_chain = documents.document_chain
        self.return_sessions = documents.return_sessions
        self.return_steps = documents.return_steps
        self.emit = self.core.history.emit

    delegate = _RunVerb(lambda runs: runs.launcher.delegate)
    follow_up_problem = _RunVerb(lambda runs: runs.plans.follow_up_problem)
    start_detached = _RunVerb(lambda runs: runs.detached.start_detached)
    running = _RunVerb(lambda runs: runs.flight.running)
    cancel = _RunVerb(lambda runs: runs.flight.cancel)
    stop_run = _RunVerb(lambda runs: runs.ownership.stop_run)
    list_runs = _RunVerb(lambda runs: runs.ownership.list_runs)
    get_run = _RunVerb(lambda runs: runs.ownership.get_run)
    interrupt_stale_runs = _RunVerb(lambda runs: runs.ownership.interrupt_stale_runs)
    return_step = _RunVerb(lambda runs: runs.closer.return_step)
    previous_handoff = _RunVerb(lambda runs: runs.closer.previous_handoff)

    @functools.cached_property
    def runs(self) -> Runs:
        """The run wing, composed on first use (a listing starts no run)."""
        wing = importlib.import_module("core.runs.wing")
        runs: Runs = wing.Runs.make(self.core, self.conversations, **self._run_options)
        return runs

    @property
    def data_dir(self) -> Path:
        """The data folder: the store's file, its logs and detached runs' output."""
        return self.store.path.parent

    def store_lost(self) -> DelegateError | None:
        """Whether the store's file was replaced or removed under this process (the
        error a write would raise), without writing: for a long-lived front end's tick."""
        return self.store.db.guard.probe()

    @property
    def after_turn(self) -> AfterTurn | None:
        """What acts on every turn this process runs (see ``__init__``)."""
        if "runs" not in self.__dict__:
            return self._run_options["after_turn"]  # type: ignore[no-any-return]
        return self.runs.flight.after_turn

    @after_turn.setter
    def after_turn(self, judge: AfterTurn | None) -> None:
        self._run_options["after_turn"] = judge
        if "runs" in self.__dict__:
            self.runs.flight.after_turn = judge

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
        if "runs" in self.__dict__:  # no run was ever started here otherwise
            await self.runs.flight.close(wait=wait)
        await self.store.close()
