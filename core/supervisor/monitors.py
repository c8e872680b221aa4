"""Monitors: what the leading supervisor does on every tick and every change.

Only the leader runs monitors, so two supervisors on one data folder never
act twice. A monitor is any object with the two methods of :class:`Monitor`; it
sees the supervisor that runs it as a :class:`SupervisorView` (the supervisor
satisfies it), so no monitor depends on the supervisor's module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from core.orchestrator import AgentOrchestrator
    from core.store import Store
    from core.store.context import ContextRepository
    from core.store.documents import DocumentsRepository
    from core.store.leases import LeasesRepository
    from core.store.sessions import SessionsRepository


@dataclass(frozen=True, slots=True)
class MonitorRepos:
    """The repositories the monitors and the context judge read and write, taken
    from the store once by whoever builds them (the supervisor, a hook, a turn judge)."""

    sessions: SessionsRepository
    documents: DocumentsRepository
    context: ContextRepository
    leases: LeasesRepository

    @classmethod
    def of(cls, store: Store) -> MonitorRepos:
        return cls(store.sessions, store.documents, store.context, store.leases)


class SupervisorView(Protocol):
    """What a monitor may use of the supervisor running it."""

    @property
    def orchestrator(self) -> AgentOrchestrator:
        """The orchestrator the supervisor acts through."""

    @property
    def store(self) -> Store:
        """The orchestrator's store."""

    @property
    def repos(self) -> MonitorRepos:
        """The repositories the monitors read and write."""


class Monitor(Protocol):
    async def on_tick(self, supervisor: SupervisorView) -> None:
        """Every tick (``tick_s``) while this supervisor leads."""

    async def on_sessions_changed(self, supervisor: SupervisorView, ids: tuple[str, ...]) -> None:
        """Sessions changed or added (by any process) while this supervisor leads."""


@runtime_checkable
class Draining(Protocol):
    """A monitor that starts work of its own (tasks) and ends it when the supervisor stops."""

    async def drain(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` for the work in flight, then cancel what is left."""


class StaleRuns:
    """Runs whose owner is gone, or silent for longer than the grace period, are
    marked ``interrupted``: sessions freed, a ``run_interrupted`` history cell each.

    ``grace_s``: how old an owner's last heartbeat may be (default: the
    ``run_grace_seconds`` setting). See docs/runs.md.
    """

    def __init__(self, grace_s: float | None = None) -> None:
        self.grace_s = grace_s

    async def on_tick(self, supervisor: SupervisorView) -> None:
        await supervisor.orchestrator.interrupt_stale_runs(self.grace_s)

    async def on_sessions_changed(self, supervisor: SupervisorView, ids: tuple[str, ...]) -> None:
        return None
