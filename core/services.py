"""The shared parts every wing of the core is handed: store, settings, bus, clocks, ids, history.

Owns nothing that changes: one frozen :class:`CoreServices` is made when the core opens
and handed to every wing (:mod:`core.conversations`, :mod:`core.runs`), the way
:class:`~core.store.database.Database` is handed to every repository.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.clock import Clock, Clocks
from core.config import Settings
from core.events import EventBus
from core.history_emitter import HistoryEmitter
from core.store import Store


@dataclass(frozen=True, slots=True)
class CoreServices:
    """What every wing shares. ``new_id`` mints ids (sessions, runs, messages)."""

    store: Store
    settings: Settings
    bus: EventBus
    clocks: Clocks
    new_id: Callable[[], str]
    history: HistoryEmitter

    @property
    def clock(self) -> Clock:
        """Wall time: when things happened (heartbeats are judged by ``clocks``)."""
        return self.clocks.wall


class Wing:
    """A part of the core over the shared services; its names are the services' own."""

    def __init__(self, core: CoreServices) -> None:
        self.core = core
        self.store = core.store
        self.settings = core.settings
        self.bus = core.bus
        self.clock = core.clock
        self.emitter = core.history
        self._new_id = core.new_id
