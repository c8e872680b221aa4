"""A run's replies as they are stored: each message at once with an estimated token count.

Owns the exact counts still being taken per run, applied when the run closes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.clock import to_us
from core.redact import redact
from core.services import CoreServices, Wing
from core.store import NewMessage

if TYPE_CHECKING:
    from core.context.counting import PendingCounts
    from core.runners import MessageOut, RunRequest


class RunReplies(Wing):
    """Store what an agent says during a run; hand over exact counts at its close."""

    def __init__(self, core: CoreServices) -> None:
        super().__init__(core)
        # Per run: its messages stored with an estimate, their exact counts under way.
        self._counts: dict[str, PendingCounts] = {}

    async def corrections(self, run_id: str) -> list[tuple[int, int]]:
        """The exact counts of the run's stored messages, once taken (the run is closing)."""
        pending = self._counts.pop(run_id, None)
        return await pending.corrections() if pending is not None else []

    async def store_reply(self, request: RunRequest, event: MessageOut) -> None:
        """Store a message at once with an estimated count; the exact count is taken
        in a thread meanwhile and applied when the run closes (core.context.counting)."""
        from core.context.counting import PendingCounts
        from core.context.counting import estimate as estimate_tokens

        now_us = to_us(self.clock())
        content = redact(event.content)
        estimated = estimate_tokens(content)
        [seq] = await self.store.messages.append(
            request.conversation_id,
            [
                NewMessage(
                    self._new_id(),
                    event.role,
                    content,
                    now_us,
                    estimated,
                    event.tool,
                    request.run_id,
                )
            ],
        )
        self._counts.setdefault(request.run_id, PendingCounts()).stored(seq, content, estimated)
