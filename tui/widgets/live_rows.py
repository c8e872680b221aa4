"""Rows other processes changed, re-read in batches (not drawn).

The supervisor says which sessions changed (``SessionsChanged``), often in
bursts: an import touching many transcripts, a run storing message after
message. :class:`LiveRows` gathers the ids, re-reads only those sessions, and
posts one :class:`LiveRows.Read` per batch; ids arriving while a batch is being
read wait for the next one, so a burst costs a few reads and one repaint of
the status, never one per event. Batches are at least ``every_s`` apart: an
import's commits report the same sessions several times in a row (added, then
their counts and links), and each is read once per batch.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

from textual import work
from textual.message import Message
from textual.widget import Widget

from core.models import Session
from tui.shared.workers import ForwardsWorkerErrors

SessionsReader = Callable[[Sequence[str]], Awaitable[dict[str, Session]]]
"""Reads a batch of sessions by full id: those that exist, by id (``get_sessions``)."""


class LiveRows(ForwardsWorkerErrors, Widget):
    """Queue of sessions to re-read; reports each batch read."""

    DEFAULT_CSS = "LiveRows { display: none; }"

    class Read(Message):
        """A batch was re-read: ``sessions`` as they are now, ``removed`` gone."""

        def __init__(self, sessions: list[Session], removed: tuple[str, ...]) -> None:
            super().__init__()
            self.sessions = sessions
            self.removed = removed

    def __init__(self, read_sessions: SessionsReader, *, every_s: float = 0.0) -> None:
        super().__init__()
        self._read_sessions = read_sessions
        self.every_s = every_s
        self._changed: dict[str, None] = {}  # ordered set: ids to re-read
        self._removed: dict[str, None] = {}
        self._reading = False

    def queue(self, changed: tuple[str, ...], removed: tuple[str, ...]) -> None:
        """Sessions ``changed`` (or added) and ``removed`` somewhere; read them soon."""
        for cid in removed:
            self._changed.pop(cid, None)
            self._removed[cid] = None
        for cid in changed:
            if cid not in self._removed:
                self._changed[cid] = None
        if not self._reading and (self._changed or self._removed):
            self._reading = True
            self._read_batches()

    @work(group="live-rows", name="reading changed sessions", exit_on_error=False)
    async def _read_batches(self) -> None:
        try:
            while self._changed or self._removed:
                started = time.monotonic()
                changed, removed = list(self._changed), tuple(self._removed)
                self._changed.clear()
                self._removed.clear()
                found = await self._read_sessions(changed) if changed else {}
                sessions = [found[cid] for cid in changed if cid in found]
                # A session missing was deleted between the change and this read.
                gone = (*removed, *(cid for cid in changed if cid not in found))
                self.post_message(self.Read(sessions, gone))
                # What changes meanwhile is gathered for one read after the interval.
                await asyncio.sleep(max(0.0, started + self.every_s - time.monotonic()))
        finally:
            self._reading = False
