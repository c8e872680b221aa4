"""The one line every text front end prints for a hand-off's outcome (``delegate run``,
``delegate handoff write``, ``delegate watch``): safe, and saying what happened."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.events import HISTORY_EVENT, HandoffSettled
from core.models import (
    ContextDocument,
    DocumentKind,
    DocumentStatus,
    HandoffOutcome,
    HandoffResult,
)
from tui.cli.watch import describe
from tui.shared.formatting import handoff_outcome_line

AT = datetime(2026, 11, 23, tzinfo=UTC)
OLD, NEW = "aaaaaaaa-1111", "bbbbbbbb-2222"
PATH = "/repo/.delegate/handoffs/handoff-2026-11-23-101010.md"
NOTE = "/repo/.delegate/handoffs/HANDOFF_PENDING.md"
DOCUMENT = ContextDocument(
    document_id="d1",
    kind=DocumentKind.HANDOFF,
    path=PATH,
    created_at=AT,
    status=DocumentStatus.PENDING,
)

CASES = [
    (
        HandoffOutcome(
            conversation_id=OLD,
            result=HandoffResult.CONTINUED,
            document=DOCUMENT,
            folder="/repo",
            successor_id=NEW,
        ),
        [f"written to {PATH}", f"continues in session {NEW}"],
        ["NOT"],
    ),
    (
        HandoffOutcome(
            conversation_id=OLD,
            result=HandoffResult.PENDING,
            document=DOCUMENT,
            folder="/repo",
            pending_note=NOTE,
        ),
        [f"written to {PATH}", "waiting for you", NOTE, f"delegate handoff continue {PATH}"],
        ["continues in"],
    ),
    (
        HandoffOutcome(
            conversation_id=OLD,
            result=HandoffResult.SPAWN_FAILED,
            document=DOCUMENT,
            folder="/repo",
            pending_note=NOTE,
            failure="claude binary not found",
        ),
        [f"written to {PATH}", "NOT continued", "claude binary not found", NOTE],
        ["continues in session"],
    ),
    (
        HandoffOutcome(
            conversation_id=OLD,
            result=HandoffResult.WRITE_FAILED,
            folder="/repo",
            failure="disk full\x1b[2J",
            force_percent=85,
        ),
        ["NOT written under /repo", "keeps working", "85%", f"delegate handoff write {OLD}"],
        ["\x1b", "written to"],
    ),
]


@pytest.mark.parametrize(("outcome", "says", "never"), CASES)
def test_each_outcome_reads_as_what_happened(
    outcome: HandoffOutcome, says: list[str], never: list[str]
) -> None:
    line = handoff_outcome_line(outcome)
    assert "\n" not in line
    for words in says:
        assert words in line
    for words in never:
        assert words not in line
    event = HandoffSettled(at=AT, conversation_id=OLD, agent_id="echo", outcome=outcome)
    # Stored and read back (another process's panel), then printed by `delegate watch`.
    again = HISTORY_EVENT.validate_json(event.model_dump_json())
    assert again == event
    assert line in describe(again)


def test_a_hand_off_kept_under_the_data_folder_says_why_wherever_it_is_shown() -> None:
    kept = "/data/elsewhere/etc-0123456789ab"
    outcome = HandoffOutcome(
        conversation_id=OLD,
        result=HandoffResult.PENDING,
        document=DOCUMENT.model_copy(update={"path": f"{kept}/.delegate/handoffs/h.md"}),
        folder=kept,
        pending_note=f"{kept}/.delegate/handoffs/HANDOFF_PENDING.md",
        elsewhere="/etc is not a repository you work in (a system folder)\x1b[2J",
    )
    line = handoff_outcome_line(outcome)
    assert "kept under delegate's data folder because /etc is not a repository you work in" in line
    assert "\x1b" not in line
    event = HandoffSettled(at=AT, conversation_id=OLD, agent_id="echo", outcome=outcome)
    again = HISTORY_EVENT.validate_json(event.model_dump_json())
    assert "because /etc is not a repository" in describe(again)
