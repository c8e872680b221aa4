"""Every history event kind is described once, and every front end renders that one
description: the panel's cell, the ``delegate watch`` line, ``delegate history``."""

from __future__ import annotations

import typing
from datetime import UTC, datetime, timedelta

import pytest

from core.event_text.catalog import DESCRIBED_KINDS, describe
from core.events import (
    CapsuleGap,
    CapsuleInjected,
    CapsuleSaved,
    CapsuleStale,
    ChainEnded,
    CheckpointMarked,
    ChildClamped,
    ContextThresholdCrossed,
    DelegateFinished,
    DelegateLaunched,
    FollowUpCompleted,
    FollowUpStarted,
    HandoffFailed,
    HandoffModified,
    HandoffSettled,
    HandoffWritten,
    HistoryEvent,
    ReturnAccepted,
    ReturnRejected,
    RunInterrupted,
    SessionContinued,
    SessionDismissed,
    SessionPurged,
    SessionRenamed,
    SessionRestored,
)
from core.models import (
    ContextDocument,
    ContextLevel,
    DocumentKind,
    HandoffOutcome,
    HandoffResult,
    RunStatus,
    SessionMode,
    Usage,
)
from tui.cli.watch import describe as watch_line
from tui.history_detail import detail as history_detail
from tui.widgets.history import HistoryCell, cell_for

AT = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
S, T, R = "aaaaaaaa-1111", "bbbbbbbb-2222", "rrrrrrrr-3333"
HANDOFF = "/repo/.delegate/handoffs/handoff-2026-11-23.md"
CAPSULE = "/repo/.delegate/capsules/main/20261123T101010Z.md"


def _kinds_of_history_events() -> set[str]:
    """The ``kind`` of every class in the ``HistoryEvent`` union, read from the union."""
    members = typing.get_args(typing.get_args(HistoryEvent)[0])
    return {member.model_fields["kind"].default for member in members}


def _document() -> ContextDocument:
    return ContextDocument(
        document_id="dddddddd-4", kind=DocumentKind.HANDOFF, path=HANDOFF, created_at=AT
    )


# One event of every kind (and the run ends that read as another record).
SAMPLES: list[HistoryEvent] = [
    DelegateLaunched(
        at=AT, conversation_id=S, run_id=R, agent_id="echo", prompt="go", mode=SessionMode.STANDARD
    ),
    *(
        DelegateFinished(
            at=AT,
            conversation_id=S,
            run_id=R,
            agent_id="echo",
            status=status,
            duration_s=1.5,
            usage=Usage(input_tokens=1200, output_tokens=30),
            error=None if status is RunStatus.COMPLETED else "boom",
        )
        for status in (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED)
    ),
    FollowUpStarted(at=AT, conversation_id=S, run_id=R, agent_id="echo", prompt="more"),
    FollowUpCompleted(
        at=AT,
        conversation_id=S,
        run_id=R,
        agent_id="echo",
        prompt="more",
        status=RunStatus.INTERRUPTED,
        duration_s=2.0,
        usage=Usage(),
    ),
    SessionDismissed(at=AT, conversation_id=S, agent_id="echo", title="t"),
    SessionRestored(at=AT, conversation_id=S, agent_id="echo", title="t"),
    SessionRenamed(at=AT, conversation_id=S, agent_id="echo", title="t", name="n"),
    SessionPurged(at=AT, conversation_id=S, agent_id="echo", title="t"),
    RunInterrupted(at=AT, conversation_id=S, run_id=R, agent_id="echo", reason="owner died"),
    ContextThresholdCrossed(
        at=AT,
        conversation_id=S,
        agent_id="echo",
        level=ContextLevel.HANDOFF,
        used_tokens=145_000,
        limit_tokens=200_000,
        percent=72.5,
    ),
    ChildClamped(
        at=AT,
        conversation_id=S,
        agent_id="echo",
        child_id=T,
        child_agent_id="scribe",
        limit_tokens=32_000,
        parent_limit_tokens=200_000,
    ),
    HandoffWritten(
        at=AT,
        conversation_id=S,
        agent_id="echo",
        document_id="dddddddd-4",
        path=HANDOFF,
        producer="facts",
        pending=True,
    ),
    HandoffFailed(at=AT, conversation_id=S, agent_id="echo", stage="write", reason="disk"),
    HandoffModified(at=AT, conversation_id=S, document_id="dddddddd-4", path=HANDOFF),
    SessionContinued(at=AT, conversation_id=S, successor_id=T, agent_id="echo"),
    HandoffSettled(
        at=AT,
        conversation_id=S,
        agent_id="echo",
        outcome=HandoffOutcome(
            conversation_id=S, result=HandoffResult.PENDING, document=_document()
        ),
    ),
    CheckpointMarked(at=AT, conversation_id=S, agent_id="echo", checkpoint_id="k1", seq=3),
    CapsuleSaved(
        at=AT, conversation_id="", document_id="cccccccc-5", path=CAPSULE, producer="person"
    ),
    CapsuleInjected(
        at=AT,
        conversation_id=S,
        run_id=R,
        agent_id="echo",
        document_id="cccccccc-5",
        digest="sha256:0123456789",
        path=CAPSULE,
    ),
    CapsuleGap(
        at=AT, conversation_id=S, run_id=R, agent_id="echo", document_id="cccccccc-5", note="n"
    ),
    CapsuleStale(
        at=AT, conversation_id="", document_id="cccccccc-5", path=CAPSULE, changed=("a.py",)
    ),
    ReturnAccepted(
        at=AT,
        conversation_id=S,
        run_id=R,
        agent_id="echo",
        artifacts_session="P",
        group_id="AUTH",
        role="developer",
        status="READY_FOR_QA",
        summary=("one", "two", "three"),
        next_role="qa_expert",
    ),
    ReturnRejected(
        at=AT,
        conversation_id=S,
        run_id=R,
        agent_id="echo",
        artifacts_session="P",
        group_id="AUTH",
        role="developer",
        rule="verbose",
        reason="text around it",
        tokens=900,
    ),
    ChainEnded(
        at=AT,
        conversation_id=S,
        artifacts_session="P",
        group_id="AUTH",
        steps=3,
        final_status="BAZINGA",
        reason="end",
    ),
]


def test_every_history_event_kind_has_a_description() -> None:
    """A kind added to ``HistoryEvent`` without a describer fails here (and a describer
    left for a kind that is gone, too)."""
    kinds = _kinds_of_history_events()
    assert len(kinds) >= 24
    assert kinds - DESCRIBED_KINDS == set(), "kinds without a description"
    assert DESCRIBED_KINDS - kinds == set(), "descriptions of no kind"


def test_the_samples_hold_every_kind() -> None:
    assert {event.kind for event in SAMPLES} == _kinds_of_history_events()


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.kind)
def test_the_watch_line_and_the_cell_say_one_description(event: HistoryEvent) -> None:
    """The ``watch`` line, the cell's title and detail, and the ``history`` column are the
    words of the one description of the event."""
    said = describe(event)
    assert said.title
    assert said.line
    assert said.summary
    line = watch_line(event)
    assert line.split(" ", 1)[1] == said.line  # after its time of day

    cell = cell_for(event, lambda: AT + timedelta(minutes=3))
    assert isinstance(cell, HistoryCell)
    assert type(cell).__name__.lower() == said.variant.replace("_", "") + "cell"
    heading, detail = cell.render().plain.split("\n")
    assert heading.startswith(said.title)
    assert detail == said.summary

    assert history_detail(event) == said.record


def test_a_waiting_hand_off_reads_as_continued_once_a_session_continues_it() -> None:
    """The cell's words follow the description's: continued in whom, and where enter goes."""
    waiting = next(e for e in SAMPLES if isinstance(e, HandoffWritten))
    cell = cell_for(waiting, lambda: AT)
    assert cell.waiting_document() == "dddddddd-4"
    assert cell.opens() == S
    cell.continued(T)
    said = describe(waiting, continued_in=T)
    assert said.title == "⇢ hand-off continued"
    assert cell.render().plain.split("\n")[1] == said.summary
    assert "continued in bbbbbbbb" in said.summary
    assert cell.opens() == T
