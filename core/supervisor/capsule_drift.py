"""Capsules that went stale: the leading supervisor marks them and says so in history.

Every ``every_s`` seconds each registered capsule not yet stale (nor archived) is checked
against its repository (``core.capsules.staleness``); one whose references changed gets
``DocumentStatus.STALE`` and a :class:`~core.events.CapsuleStale` history event, once.
A launch then refuses it unless the person accepts it (``--accept-stale``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from core.capsules.staleness import changed_references
from core.events import CapsuleStale
from core.models import ContextDocument, DocumentKind, DocumentStatus

if TYPE_CHECKING:
    from core.supervisor.monitors import SupervisorView

log = logging.getLogger(__name__)

CHECK_EVERY_S = 60.0
"""How often registered capsules are checked (each check reads their files and git)."""
SCAN_LIMIT = 500
"""Capsules checked per round, newest first."""
_SETTLED = (DocumentStatus.STALE, DocumentStatus.ARCHIVED)


class CapsuleDrift:
    """Marks registered capsules stale when the files they reference change."""

    def __init__(self, every_s: float = CHECK_EVERY_S) -> None:
        self.every_s = every_s
        self._last = float("-inf")

    async def on_tick(self, supervisor: SupervisorView) -> None:
        now = time.monotonic()
        if now - self._last < self.every_s:
            return
        self._last = now
        documents = await supervisor.repos.documents.find(DocumentKind.CAPSULE, limit=SCAN_LIMIT)
        for document in documents:
            if document.status not in _SETTLED:
                await self._check(supervisor, document)

    async def on_sessions_changed(self, supervisor: SupervisorView, ids: tuple[str, ...]) -> None:
        return None

    async def _check(self, supervisor: SupervisorView, document: ContextDocument) -> None:
        changed = await asyncio.to_thread(changed_references, Path(document.path))
        if not changed:
            return
        await supervisor.repos.documents.set_status(document.document_id, DocumentStatus.STALE)
        await supervisor.orchestrator.emit(
            CapsuleStale(
                at=supervisor.orchestrator.clock(),
                conversation_id=document.source_session or "",
                document_id=document.document_id,
                path=document.path,
                changed=changed,
            )
        )
        log.info("capsule %s is stale: %s changed", document.document_id, ", ".join(changed))
