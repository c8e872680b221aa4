"""Watching the store: one ``PRAGMA data_version`` per poll, the change feed when it moved."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from core.errors import DelegateError
from core.store import ChangeCursor, ChangeSet, Store

log = logging.getLogger(__name__)

OnChanges = Callable[[ChangeSet], Awaitable[None]]


class StoreWatcher:
    """Polls the store every ``poll_s`` and hands each non-empty change set to ``on_changes``.

    An idle store costs one tiny query per poll (SQLite's data version on the
    reader connection); only when another connection committed is the change
    feed read, and then only the rows past the cursor. :meth:`poke` polls at
    once (after this process imported something, say).
    """

    def __init__(self, store: Store, on_changes: OnChanges, *, poll_s: float) -> None:
        self._store = store
        self._on_changes = on_changes
        self._poll_s = poll_s
        self._poke = asyncio.Event()
        self._cursor: ChangeCursor | None = None
        self._version = 0

    async def mark(self) -> None:
        """Start from now: only later changes are reported (call before :meth:`run`)."""
        self._cursor = await self._store.changes.head()
        self._version = await self._store.changes.data_version()

    def poke(self) -> None:
        self._poke.set()

    async def run(self) -> None:
        """Until cancelled. A failing poll (a busy or damaged store) is logged and retried."""
        changes = self._store.changes
        if self._cursor is None:
            await self.mark()
        assert self._cursor is not None
        cursor, version = self._cursor, self._version
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._poke.wait(), self._poll_s)
            self._poke.clear()
            try:
                now = await changes.data_version()
                if now == version:
                    continue
                version = now
                found = await changes.since(cursor)
                cursor = self._cursor = found.cursor
            except DelegateError as exc:
                log.warning("store poll failed: %s", exc)
                continue
            if not found.empty:
                await self._on_changes(found)
