"""How the panel watches while it is open: the options of its embedded supervisor.

The panel runs a :class:`core.supervisor.Supervisor` while it is open, so what
other processes do (a ``delegate run`` in another terminal, an MCP server, an
agent appending to its transcript) shows up without a keypress. Every timing is
a field here, so tests shrink them through ``create_app(supervise=...)``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.message_pump import MessagePump
    from textual.timer import Timer

    from core.orchestrator import AgentOrchestrator
    from core.supervisor import Supervisor


@dataclass(frozen=True)
class Supervision:
    """The embedded supervisor's timings (see :class:`Supervisor` for each)."""

    store_poll_s: float = 0.25
    tick_s: float = 1.0
    debounce_ms: int = 200
    rescan_s: float = 30.0
    force_polling: bool = False
    lease_ttl_s: float = 10.0

    def build(
        self,
        orchestrator: AgentOrchestrator,
        transcripts: tuple[Path | None, Path | None] | None,
    ) -> Supervisor:
        """A supervisor over ``orchestrator``; ``transcripts`` = ``(claude_dir, codex_dir)``
        to watch (None dirs: their defaults), or None to watch only the store."""
        # Deferred: the supervisor's watcher (watchfiles, multiprocessing) and the importer
        # load after the panel's first page is on screen, not before its first frame.
        from core.supervisor import Supervisor

        claude_dir, codex_dir = transcripts or (None, None)
        return Supervisor(
            orchestrator,
            claude_dir=claude_dir,
            codex_dir=codex_dir,
            watch_transcripts=transcripts is not None,
            store_poll_s=self.store_poll_s,
            tick_s=self.tick_s,
            debounce_ms=self.debounce_ms,
            force_polling=self.force_polling,
            rescan_s=self.rescan_s,
            lease_ttl_s=self.lease_ttl_s,
            # The panel's background import reads what changed while nobody watched
            # (with its progress on screen); a second full scan would only compete.
            catch_up=False,
        )


class Throttle:
    """Runs ``action`` at most once every ``every_s``: at once when it last ran longer
    ago than that, else once when the interval is up, however many calls came
    meanwhile (the last one is never lost).

    What streams in while an import runs (its batches, the rows they add) would
    otherwise lay the screen out again per batch.
    """

    def __init__(
        self,
        owner: MessagePump,
        every_s: float,
        action: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._owner = owner
        self.every_s = every_s
        self._action = action
        self._clock = clock
        self._ran_at: float | None = None
        self._timer: Timer | None = None

    @property
    def due(self) -> bool:
        """A run is waiting for its interval."""
        return self._timer is not None

    def __call__(self) -> None:
        if self._timer is not None:
            return  # the waiting run will see what this call wanted
        wait = 0.0 if self._ran_at is None else self._ran_at + self.every_s - self._clock()
        if wait <= 0:
            self._run()
        else:
            self._timer = self._owner.set_timer(wait, self._run, name="throttled update")

    def now(self) -> None:
        """Run at once (a waiting run is dropped: this one covers it)."""
        self.cancel()
        self._run()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _run(self) -> None:
        self._timer = None
        self._ran_at = self._clock()
        self._action()


def polling_note(rescan_s: float | None, reason: str | None) -> str:
    """The status line's words when transcripts are re-scanned instead of watched:
    how often (unless the reason says so already) and why."""
    every = f" every {rescan_s:g}s" if rescan_s and "every" not in (reason or "") else ""
    return f"watching: polling{every}" + (f" ({reason})" if reason else "")


LOG_FILENAME = "panel.log"
LOG_BYTES = 1_000_000
LOG_BACKUPS = 2


def log_core_to(path: Path) -> Callable[[], None]:
    """Send what ``core`` logs (a watcher that stopped, a monitor that failed) to
    ``path`` instead of the terminal the panel draws on; returns the undo.

    Without this a warning would reach Python's last-resort handler, which
    writes to stderr, over the panel.
    """
    handler = RotatingFileHandler(
        path,
        maxBytes=LOG_BYTES,
        backupCount=LOG_BACKUPS,
        delay=True,  # no file until needed
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.WARNING)
    core = logging.getLogger("core")
    propagated = core.propagate
    core.addHandler(handler)
    core.propagate = False

    def undo() -> None:
        core.removeHandler(handler)
        core.propagate = propagated
        handler.close()

    return undo
