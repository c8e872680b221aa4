"""The supervisor: the one object that acts without a front end.

It owns watching (the store, and the agents' transcript folders), leader
election between supervisors on one data folder, and the monitors the leader
runs. It publishes what it sees on the orchestrator's bus:

- :class:`~core.events.SessionsChanged` and :class:`~core.events.RunsChanged`
  for every change any process made (imports of appended transcripts too);
- the history events other processes stored, as the ordinary history models;
- :class:`~core.events.WatchStatus` at start and whenever it changes.

The panel embeds one while it is open; ``delegate watch`` runs one headless.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from core.clock import Clock, MonoClock, system_clock, system_mono
from core.errors import DelegateError
from core.events import RunsChanged, SessionsChanged, TranscriptWatching, WatchStatus
from core.orchestrator import AgentOrchestrator
from core.store import ChangeSet, Store
from core.store.history import this_process
from core.supervisor.capsule_drift import CapsuleDrift
from core.supervisor.context_monitor import ContextMonitor
from core.supervisor.hook_queue import HookQueue
from core.supervisor.leader import Leadership
from core.supervisor.monitors import Draining, Monitor, MonitorRepos, StaleRuns
from core.supervisor.returns_retention import ReturnsRetention
from core.supervisor.store_watch import StoreWatcher
from core.supervisor.watch import TranscriptWatcher

log = logging.getLogger(__name__)

STOP_WAIT_S = 5.0
"""How long :meth:`Supervisor.stop` waits for its tasks to end."""

STATUS_WAIT_S = 2.0
"""How long :meth:`Supervisor.start` waits for the transcript watcher to say how it watches."""


class Supervisor:
    """Watches the store and the transcript folders; leads or follows; runs monitors.

    Every timing is a parameter (tests shrink them): ``store_poll_s`` between
    looks at the store's data version, ``tick_s`` between lease renewals and
    monitor ticks, ``debounce_ms`` of file events, ``rescan_s`` of the polling
    fallback, ``lease_ttl_s`` after which a silent leader is replaced.
    ``clock`` / ``mono_clock``: the wall and monotonic clocks the lease is judged by.
    ``catch_up=False`` skips the incremental re-scan when watching starts, for a
    front end that imports at start itself (the panel's background import).
    ``repos``: the repositories the monitors use (:class:`MonitorRepos`; the
    orchestrator's store's when not given).
    """

    def __init__(
        self,
        orchestrator: AgentOrchestrator,
        *,
        claude_dir: Path | None = None,
        codex_dir: Path | None = None,
        watch_transcripts: bool = True,
        store_poll_s: float = 0.25,
        tick_s: float = 1.0,
        debounce_ms: int = 200,
        force_polling: bool = False,
        rescan_s: float = 30.0,
        monitors: Sequence[Monitor] | None = None,
        lease_ttl_s: float = 10.0,
        catch_up: bool = True,
        clock: Clock = system_clock,
        mono_clock: MonoClock | None = system_mono,
        repos: MonitorRepos | None = None,
    ) -> None:
        self.orchestrator = orchestrator
        self.store: Store = orchestrator.store
        # The repositories the monitors read and write, taken from the store once.
        self.repos = repos if repos is not None else MonitorRepos.of(self.store)
        self._store_watch = StoreWatcher(self.store, self._on_changes, poll_s=store_poll_s)
        self.monitors: list[Monitor] = (
            list(monitors)
            if monitors is not None
            else [
                StaleRuns(),
                ContextMonitor(),
                CapsuleDrift(),
                ReturnsRetention(),
                HookQueue(claude_dir, codex_dir, on_imported=self._store_watch.poke),
            ]
        )
        self._tick_s = tick_s
        # Leases are judged across processes: real clocks, never a front end's test clock
        # (``clock`` and ``mono_clock`` are for tests that step them).
        self._leadership = Leadership(
            self.store, ttl_s=lease_ttl_s, clock=clock, mono_clock=mono_clock
        )
        self._transcripts: TranscriptWatcher | None = None
        if watch_transcripts:
            self._transcripts = TranscriptWatcher(
                self.store,
                claude_dir=claude_dir,
                codex_dir=codex_dir,
                debounce_ms=debounce_ms,
                force_polling=force_polling,
                rescan_s=rescan_s,
                catch_up=catch_up,
                on_status=self._set_transcripts,
                on_imported=self._store_watch.poke,
                windows=orchestrator.settings.context,
            )
        self.watch_status = WatchStatus(
            transcripts="off",
            reason=None if watch_transcripts else "transcript watching is off",
            leader=False,
        )
        self._stop = asyncio.Event()
        self._transcripts_known = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._started = False
        self._stopped = False

    @property
    def is_leader(self) -> bool:
        return self._leadership.is_leader

    @property
    def holder(self) -> str:
        """This supervisor's name in the lease table."""
        return self._leadership.holder

    # --- lifecycle -----------------------------------------------------------

    async def start(self) -> None:
        """Start watching in background tasks and return.

        Before returning it tries the lease once and lets the transcript watcher
        register its watches (or fail to), so :attr:`is_leader` and
        :attr:`watch_status` are already true when it returns.
        """
        if self._started:
            return
        self._started = True
        await self._leadership.renew()
        self.watch_status = self.watch_status.model_copy(update={"leader": self.is_leader})
        await self._store_watch.mark()  # a change made once start() returns is reported
        self._spawn(self._store_watch.run(), "store watcher")
        self._spawn(self._tick_loop(), "supervisor ticks")
        if self._transcripts is not None:
            self._spawn(self._transcripts.run(self._stop), "transcript watcher")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._transcripts_known.wait(), STATUS_WAIT_S)
        if not self._status_published:
            self._publish_status(self.watch_status)

    async def stop(self) -> None:
        """Stop every task and give the lease up. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self._stop.set()
        for task in self._tasks:
            task.cancel()
        # Bounded: a watcher stuck in a library call must not hold a front end's exit.
        stuck: set[asyncio.Task[None]] = set()
        if self._tasks:
            _done, stuck = await asyncio.wait(self._tasks, timeout=STOP_WAIT_S)
        for task in stuck:
            log.warning("%s did not stop within %g s", task.get_name(), STOP_WAIT_S)
        self._tasks.clear()
        for monitor in self.monitors:
            if isinstance(monitor, Draining):  # work a monitor started (a hand-off) ends here
                await _guarded(monitor.drain(STOP_WAIT_S), monitor)
        await self._leadership.release()

    async def __aenter__(self) -> Supervisor:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(work, name=name)
        task.add_done_callback(_log_crash)
        self._tasks.append(task)

    # --- leading and monitors -------------------------------------------------

    async def _tick_loop(self) -> None:
        while True:
            await asyncio.sleep(self._tick_s)
            was_leader = self.is_leader
            leader = await self._leadership.renew()
            if leader != was_leader:
                log.info("supervisor %s %s", self.holder, "leads" if leader else "follows")
                self._publish_status(self.watch_status.model_copy(update={"leader": leader}))
            if leader:
                for monitor in self.monitors:
                    await _guarded(monitor.on_tick(self), monitor)

    # --- what the watchers saw -------------------------------------------------

    async def _on_changes(self, changes: ChangeSet) -> None:
        bus = self.orchestrator.bus
        if changes.sessions or changes.removed:
            bus.publish(SessionsChanged(conversation_ids=changes.sessions, removed=changes.removed))
        if changes.runs:
            bus.publish(RunsChanged(run_ids=changes.runs))
        me = this_process()
        for stored in changes.history:
            if stored.origin != me:  # this process published its own already
                bus.publish(stored.event)
        if changes.sessions and self.is_leader:
            for monitor in self.monitors:
                await _guarded(monitor.on_sessions_changed(self, changes.sessions), monitor)

    def _set_transcripts(self, transcripts: TranscriptWatching, reason: str | None) -> None:
        self._transcripts_known.set()
        self._publish_status(
            WatchStatus(transcripts=transcripts, reason=reason, leader=self.is_leader)
        )

    def _publish_status(self, status: WatchStatus) -> None:
        changed = status != self.watch_status or not self._status_published
        self.watch_status = status
        if changed:
            self._status_published = True
            self.orchestrator.bus.publish(status)

    _status_published = False


async def _guarded(step: Coroutine[Any, Any, None], monitor: Monitor) -> None:
    """Run one monitor step; a failing monitor is logged and never stops the others."""
    try:
        await step
    except DelegateError as exc:
        log.warning("monitor %s: %s", type(monitor).__name__, exc)
    except Exception:
        log.exception("monitor %s failed", type(monitor).__name__)


def _log_crash(task: asyncio.Task[None]) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        log.error("%s stopped: %r", task.get_name(), exc, exc_info=exc)
