"""A run as its caller holds it: ids, live events, outcome, and what a stop did.

Owns the handle's own state (its task, its event queue, a cancel asked before it
started) and nothing of the store's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from core.models import Run, RunKind

if TYPE_CHECKING:
    from core.runners import RunEvent

CANCELLED_BY_USER = "cancelled by the user"

AfterTurn = Callable[[str], Awaitable[object]]
"""What acts on a turn once it is stored, given its session's id (the context thresholds:
``core.supervisor.turn_end``); its answer is kept on the run's handle (``turn_end``)."""


@dataclass(frozen=True, slots=True)
class StopOutcome:
    """What :meth:`core.runs.ownership.RunOwnership.stop_run` did.

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
