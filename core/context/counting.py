"""Exact token counts for a run's stored messages, off the path that stores them.

Counting a message (tiktoken) costs more than storing it: a 30 KB tool output
takes milliseconds to encode and a fraction of one to append. So a message is
stored at once with a cheap estimate, its exact count is taken in a worker
thread while the run goes on, and the differences are applied when the run
closes, in the transaction that closes it (``store.runs.finish(...,
token_corrections=...)``). Each message is still counted exactly once.
"""

from __future__ import annotations

import asyncio

from core.tokens import count_tokens

CHARS_PER_TOKEN = 4
"""The estimate a message is stored with until its count arrives."""


def estimate(text: str) -> int:
    """About how many tokens ``text`` holds (its characters over four, rounded up)."""
    return -(-len(text) // CHARS_PER_TOKEN)


class PendingCounts:
    """The messages of one run stored with an estimate, and their counts under way."""

    def __init__(self) -> None:
        self._pending: list[tuple[str, int, asyncio.Future[int]]] = []

    def stored(self, message_id: str, text: str, estimated: int) -> None:
        """``message_id`` was stored with ``estimated`` tokens: count ``text`` exactly."""
        self._pending.append((message_id, estimated, asyncio.ensure_future(_count(text))))

    async def corrections(self) -> list[tuple[str, int]]:
        """``(message_id, exact - estimate)`` of every message whose estimate was off.

        Waits for the counts still under way; a count that failed keeps its estimate.
        """
        pending, self._pending = self._pending, []
        counted = await asyncio.gather(*(f for _, _, f in pending), return_exceptions=True)
        return [
            (message_id, exact - estimated)
            for (message_id, estimated, _), exact in zip(pending, counted, strict=True)
            if isinstance(exact, int) and exact != estimated
        ]

    def cancel(self) -> None:
        """Drop the counts under way (the run was never stored closed by us)."""
        for _, _, future in self._pending:
            future.cancel()
        self._pending = []


async def _count(text: str) -> int:
    return await asyncio.to_thread(count_tokens, text)
