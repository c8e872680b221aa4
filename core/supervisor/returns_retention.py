"""Compact-return artifacts past retention: the leading supervisor cleans them hourly.

An artifacts session whose every group's chain ended more than ``[returns] keep_days``
ago loses its folders, its ``return`` documents and its steps
(:func:`core.returns.retention.prune_ended`); a chain still routing on is left alone.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from core.returns.retention import prune_ended

if TYPE_CHECKING:
    from core.supervisor.monitors import SupervisorView

log = logging.getLogger(__name__)

CHECK_EVERY_S = 3600.0
"""How often ended sessions are looked for (retention is counted in days)."""


class ReturnsRetention:
    """Removes the artifacts of compact-return sessions that ended past ``keep_days``."""

    def __init__(self, every_s: float = CHECK_EVERY_S) -> None:
        self.every_s = every_s
        self._last = float("-inf")

    async def on_tick(self, supervisor: SupervisorView) -> None:
        now = time.monotonic()
        if now - self._last < self.every_s:
            return
        self._last = now
        orchestrator = supervisor.orchestrator
        cleaned = await prune_ended(
            supervisor.store, orchestrator.clock(), orchestrator.settings.returns.keep_days
        )
        if cleaned:
            log.info("cleaned %d ended artifacts session(s): %s", len(cleaned), ", ".join(cleaned))

    async def on_sessions_changed(self, supervisor: SupervisorView, ids: tuple[str, ...]) -> None:
        return None
