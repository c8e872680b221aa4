"""The four ways a hand-off ends, as the history stores them (``handoff_settled``)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from panel_context_data import FIRST, HANDOFF_DOC, MIDDLE, NEWEST
from tui_support import FIXED_NOW

from core.events import HandoffSettled, HistoryEvent
from core.models import ContextDocument, DocumentKind, DocumentStatus, HandoffOutcome, HandoffResult


def outcome_events(repo: Path) -> list[HistoryEvent]:
    """Continued, waiting for a person, written but not continued, not written."""
    at = [FIXED_NOW - timedelta(minutes=10 - i) for i in range(4)]
    folder = repo / ".delegate" / "handoffs"

    def document(name: str, status: DocumentStatus) -> ContextDocument:
        return ContextDocument(
            document_id=f"doc-{name}",
            kind=DocumentKind.HANDOFF,
            path=str(folder / f"handoff-2026-11-21-2056{name}.md"),
            status=status,
            producer="facts",
            created_at=FIXED_NOW,
        )

    outcomes = [
        HandoffOutcome(
            conversation_id=FIRST,
            result=HandoffResult.CONTINUED,
            document=document("00", DocumentStatus.CONSUMED),
            folder=str(repo),
            successor_id=MIDDLE,
        ),
        HandoffOutcome(
            conversation_id=NEWEST,
            result=HandoffResult.PENDING,
            document=document("01", DocumentStatus.PENDING),
            folder=str(repo),
            pending_note=str(folder / "HANDOFF_PENDING.md"),
        ),
        HandoffOutcome(
            conversation_id=NEWEST,
            result=HandoffResult.SPAWN_FAILED,
            document=document("02", DocumentStatus.PENDING),
            folder=str(repo),
            pending_note=str(folder / "HANDOFF_PENDING.md"),
            failure="cannot start the session that continues it: claude binary not found",
        ),
        HandoffOutcome(
            conversation_id=MIDDLE,
            result=HandoffResult.WRITE_FAILED,
            folder=str(repo),
            failure=f"cannot write the hand-off under {repo}: .delegate is not a folder",
            force_percent=90,
        ),
    ]
    assert HANDOFF_DOC  # the waiting document of the chain is another one
    return [
        HandoffSettled(at=when, conversation_id=o.conversation_id, agent_id="echo", outcome=o)
        for when, o in zip(at, outcomes, strict=True)
    ]
