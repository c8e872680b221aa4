"""The runs this process drives: their handles, the work after them, and their heartbeat.

Owns the in-memory state of runs in flight (handles, roles awaiting judgement, turns
still ending, background imports) and the timer that stamps them alive.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from core import process_identity
from core.clock import to_us
from core.models import OwnerKind
from core.runs.handle import AfterTurn, RunHandle
from core.services import CoreServices, Wing

if TYPE_CHECKING:
    from core.returns.launch import PreparedRole

T = TypeVar("T")
log = logging.getLogger(__name__)
HEARTBEAT_S = 2.0  # how often a process driving runs says it is alive (and reads cancel flags)


async def uncancellable(work: Coroutine[Any, Any, T]) -> T:
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


class RunsInFlight(Wing):
    """Handles of the runs in flight here, and the heartbeat that covers them."""

    def __init__(
        self,
        core: CoreServices,
        *,
        owner_kind: OwnerKind,
        heartbeat_s: float,
        after_turn: AfterTurn | None,
    ) -> None:
        """``owner_kind``: what this process is to the runs it drives (``run`` for
        ``delegate run``, ``worker`` for a detached worker: only those are ever
        signalled by a stop from elsewhere). ``heartbeat_s``: how often its runs
        are stamped alive and their cancel flags read. ``after_turn``: acts on every
        turn once it is stored (see :class:`~core.runs.driver.RunDriver`)."""
        super().__init__(core)
        self.owner_kind: OwnerKind = owner_kind
        self.heartbeat_s = heartbeat_s
        self.after_turn = after_turn
        self.handles: dict[str, RunHandle] = {}
        self.background: set[asyncio.Future[None]] = set()  # transcript imports
        # Per run launched as a role of a group: its final message is judged at the end.
        self.roles: dict[str, PreparedRole] = {}
        # Runs stored and closed whose after_turn is still at work (close() waits for them).
        self.ending: dict[str, RunHandle] = {}
        self._heartbeat: asyncio.Task[None] | None = None  # only while runs are in flight

    async def close(self, *, wait: bool = True) -> None:
        """Let in-flight runs and the work after them finish (or cancel the runs)."""
        handles = [*self.handles.values(), *self.ending.values()]
        tasks = [h._task for h in handles if h._task is not None]
        if not wait:
            for handle in handles:
                handle.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*self.background, return_exceptions=True)
        await self.stop_beating()

    @property
    def beating(self) -> bool:
        """Whether the heartbeat timer runs (only while runs are in flight)."""
        return self._heartbeat is not None and not self._heartbeat.done()

    def running(self) -> list[RunHandle]:
        """Runs this process is driving now."""
        return list(self.handles.values())

    async def cancel(self, run_id: str) -> bool:
        """Cancel a run this process drives; False when it is not ours or already over."""
        handle = self.handles.get(run_id)
        if handle is None or handle._task is None:
            return False
        handle.cancel()
        await asyncio.gather(handle._task, return_exceptions=True)
        return True

    def owner_kind_of(self, owner: process_identity.ProcessIdentity | None) -> OwnerKind:
        """A run recorded for a detached worker (``owner`` given) is a worker's."""
        return "worker" if owner is not None else self.owner_kind

    def keep_beating(self) -> None:
        """Beat while runs are in flight: an idle process has no timer at all."""
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.create_task(self._beat_while_running())

    async def _beat_while_running(self) -> None:
        # Checked and left in one step: a run started after the check finds the
        # task done and starts a new one.
        while self.handles:
            await asyncio.sleep(self.heartbeat_s)
            if not self.handles:
                return
            try:
                await self._beat()
            except Exception:  # a busy or broken store: try again on the next beat
                log.exception("heartbeat failed")

    async def _beat(self) -> None:
        """Stamp every run this process drives alive (one write); stop those flagged."""
        run_ids = list(self.handles)
        await self.store.runs.heartbeat(run_ids, to_us(self.clock()))
        for run_id in await self.store.runs.cancel_requested(run_ids):
            handle = self.handles.get(run_id)
            if handle is not None:
                log.info("run %s: stop requested from another process", run_id)
                handle.cancel()

    async def stop_beating(self) -> None:
        beat, self._heartbeat = self._heartbeat, None
        if beat is not None and not beat.done():
            beat.cancel()
            await asyncio.gather(beat, return_exceptions=True)

    def after_run(self, work: Coroutine[Any, Any, None]) -> None:
        """Work that follows a stored run; :meth:`close` waits for it."""
        task = asyncio.ensure_future(work)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
