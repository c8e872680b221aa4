"""How the panel watches while it is open: the options of its embedded supervisor.

The panel runs a :class:`core.supervisor.Supervisor` while it is open, so what
other processes do (a ``delegate run`` in another terminal, an MCP server, an
agent appending to its transcript) shows up without a keypress. Every timing is
a field here, so tests shrink them through ``create_app(supervise=...)``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
