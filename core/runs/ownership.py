"""Runs of every process: stop one from anywhere, list and find them, interrupt the stale.

Owns how a stop reaches a run's owner (cancel here, a flag elsewhere, SIGTERM for a
lagging one-run owner on this host) and when a silent owner's run is interrupted.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import TYPE_CHECKING, Literal

from core import process_identity
from core.clock import to_us
from core.conversations.ids import AMBIGUOUS_SHOWN, MIN_ID_PREFIX, SessionIds
from core.errors import AmbiguousId, InvalidRequest, NotRunning, UnknownConversation, UnknownRun
from core.events import RunInterrupted
from core.models import MAX_PAGE, ONE_RUN_OWNERS, Run, RunStatus
from core.requests import printable, storable
from core.runs.handle import StopOutcome
from core.runs.in_flight import RunsInFlight
from core.services import CoreServices, Wing

if TYPE_CHECKING:
    from core.store.runs import RunInFlight

STOP_WAIT_S = 10.0  # how long stop_run waits for another process to close its run
STOP_POLL_S = 0.05
SIGNAL_AFTER_BEATS = 2  # a one-run owner that has not stopped by then gets SIGTERM


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


class RunOwnership(Wing):
    """Stop, list and judge runs whichever process owns them."""

    def __init__(self, core: CoreServices, flight: RunsInFlight, ids: SessionIds) -> None:
        super().__init__(core)
        self.flight = flight
        self.ids = ids

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
        ident = await self.ids.session_or_run_id(run_or_conversation_id)
        for handle in list(self.flight.handles.values()):
            if ident in (handle.run_id, handle.conversation_id):
                await self.flight.cancel(handle.run_id)
                return StopOutcome(handle.run_id, handle.conversation_id, "cancelled")
        flight = await self.store.runs.in_flight(ident)
        if flight is None:
            if not await self.ids.names_something(ident):
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
            started + SIGNAL_AFTER_BEATS * self.flight.heartbeat_s
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
        if not isinstance(run_id, str) or not storable(run_id):
            raise UnknownRun(printable(run_id))
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
