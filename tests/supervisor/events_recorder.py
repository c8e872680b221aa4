"""The supervisor tests' event recorder: every bus event, and waiting for one with a deadline."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

from core.events import BusEvent, EventBus

DEADLINE_S = 10.0


class Recorder:
    """Every event published on a bus, and a way to wait for one that matches."""

    def __init__(self) -> None:
        self.events: list[BusEvent] = []
        self._arrived = asyncio.Event()

    def __call__(self, event: BusEvent) -> None:
        self.events.append(event)
        self._arrived.set()

    async def wait_for(
        self, matches: Callable[[BusEvent], bool], deadline_s: float = DEADLINE_S
    ) -> BusEvent:
        """The first recorded event that ``matches``, waiting up to ``deadline_s``."""
        loop = asyncio.get_running_loop()
        until = loop.time() + deadline_s
        seen = 0
        while True:
            for event in self.events[seen:]:
                if matches(event):
                    return event
            seen = len(self.events)
            left = until - loop.time()
            if left <= 0:
                kinds = [e.kind for e in self.events]
                raise AssertionError(f"no matching event within {deadline_s} s; saw {kinds}")
            self._arrived.clear()
            with suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), left)


@contextmanager
def recording(bus: EventBus) -> Iterator[Recorder]:
    recorder = Recorder()
    remove = bus.add_listener(recorder)
    try:
        yield recorder
    finally:
        remove()
