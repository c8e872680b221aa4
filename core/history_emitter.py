"""History events: stored in the store's history and published on the bus, in that order.

Owns the one way a history event is made known, for the core's wings and for the
services above it (monitors, hand-offs) whose events are history like the core's.
"""

from __future__ import annotations

from core.clock import to_us
from core.events import EventBus, HistoryEvent
from core.store.history import HistoryRepository


class HistoryEmitter:
    """Store, then publish, each history event."""

    def __init__(self, history: HistoryRepository, bus: EventBus) -> None:
        self._history = history
        self._bus = bus

    async def emit(self, event: HistoryEvent) -> None:
        await self._history.add(
            to_us(event.at),
            event.kind,
            event.conversation_id,
            getattr(event, "run_id", None),
            event.model_dump(mode="json"),
        )
        self._bus.publish(event)
