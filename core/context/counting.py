"""Exact token counts for a run's stored messages, off the path that stores them.

Counting a message (tiktoken) costs more than storing it: a 30 KB tool output
takes milliseconds to encode and a fraction of one to append. So a message is
stored at once with a cheap estimate, and when the run closes its messages are
counted in one worker thread call and the differences applied in the
transaction that closes it (``store.runs.finish(..., token_corrections=...)``).
Each message is still counted exactly once, never on the event loop, and never
while the run streams (on a busy machine a count running beside the stream
slows it as much as counting first would).
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
    """The messages of one run stored with an estimate, to count when it closes."""

    def __init__(self) -> None:
        self._pending: list[tuple[int, str, int]] = []

    def stored(self, seq: int, text: str, estimated: int) -> None:
        """Message ``seq`` was stored with ``estimated`` tokens for ``text``."""
        self._pending.append((seq, text, estimated))

    async def corrections(self) -> list[tuple[int, int]]:
        """``(seq, exact - estimate)`` of every message whose estimate was off, counted
        in one worker thread."""
        pending, self._pending = self._pending, []
        if not pending:
            return []
        exact = await asyncio.to_thread(lambda: [count_tokens(text) for _, text, _ in pending])
        return [
            (seq, counted - estimated)
            for (seq, _, estimated), counted in zip(pending, exact, strict=True)
            if counted != estimated
        ]
