"""What a running run shows other processes: its reply so far and its stderr's last lines.

The owner of a run keeps both tails here as events arrive and stores them
(redacted, capped) at most every ``interval_s`` and only when they changed, so a
panel in another process can show a run that is quiet on stdout but talks on
stderr (a CLI retrying an unreachable model) without a write per line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable

from core.clock import Clock, to_us
from core.redact import redact
from core.store.runs import RunsRepository

LIVE_OUTPUT_CHARS = 8 * 1024  # the tail of the reply kept while it streams
STDERR_TAIL_LINES = 20
STDERR_LINE_CHARS = 2000  # a line longer than this is cut (a CLI dumping a blob)

log = logging.getLogger(__name__)


class LiveActivity:
    """The live tails of one run, and their throttled writes to the store."""

    def __init__(
        self,
        runs: RunsRepository,
        run_id: str,
        reply_so_far: Callable[[], str],
        *,
        interval_s: float,
        clock: Clock,
    ) -> None:
        self._runs = runs
        self._run_id = run_id
        self._reply_so_far = reply_so_far
        self._interval_s = interval_s
        self._clock = clock
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._dirty = False
        self._written: tuple[str, str] | None = None
        self._last_write = float("-inf")
        self._writer: asyncio.Task[None] | None = None
        self._waiting = False  # the writer sleeps out the interval (safe to cancel)

    @property
    def stderr_tail(self) -> str:
        """The last lines of the agent's stderr, redacted."""
        return redact("\n".join(self._stderr))

    @property
    def live_output(self) -> str:
        """The tail of the reply so far, redacted."""
        return redact(self._reply_so_far()[-LIVE_OUTPUT_CHARS:])

    def stderr_line(self, text: str) -> None:
        self._stderr.append(text[:STDERR_LINE_CHARS])
        self.changed()

    def changed(self) -> None:
        """Something to show changed: store it once the interval allows."""
        self._dirty = True
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_when_due())

    async def _write_when_due(self) -> None:
        loop = asyncio.get_running_loop()
        while self._dirty:
            wait = self._last_write + self._interval_s - loop.time()
            if wait > 0:
                self._waiting = True
                try:
                    await asyncio.sleep(wait)
                finally:
                    self._waiting = False
            self._dirty = False
            shown = (self.live_output, self.stderr_tail)
            self._last_write = loop.time()
            if shown == self._written:
                continue
            # Stderr is not the reply: only a new reply chunk moves the last-output time,
            # so a run that only logs still reads as quiet (and shows those lines).
            reply_moved = self._written is None or shown[0] != self._written[0]
            output_at = to_us(self._clock()) if reply_moved and shown[0] else None
            try:
                await self._runs.record_activity(self._run_id, *shown, output_at)
            except Exception:  # what a run shows is a courtesy: never a reason to fail it
                log.exception("storing the live output of run %s failed", self._run_id)
            self._written = shown

    async def close(self) -> None:
        """Stop writing (the run is being closed): a write under way is let finish."""
        writer, self._writer = self._writer, None
        if writer is None or writer.done():
            return
        self._dirty = False
        if self._waiting:
            writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writer
