"""`delegate watch` prints every history event as a line a person can read."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.events import (
    HISTORY_EVENT,
    CapsuleGap,
    CapsuleInjected,
    CapsuleSaved,
    CapsuleStale,
    CheckpointMarked,
    ChildClamped,
    ContextThresholdCrossed,
    HandoffFailed,
    HandoffWritten,
    RunInterrupted,
    SessionContinued,
)
from core.models import ContextLevel
from tui.cli.watch import describe

AT = datetime(2026, 11, 23, tzinfo=UTC)
PARENT, CHILD = "aaaaaaaa-1111", "bbbbbbbb-2222"
CAPSULE = "/repo/.delegate/capsules/main/20261123T101010Z.md"

EVENTS = [
    (
        ContextThresholdCrossed(
            at=AT,
            conversation_id=PARENT,
            agent_id="echo",
            level=ContextLevel.HANDOFF,
            used_tokens=145_000,
            limit_tokens=200_000,
            percent=72.5,
        ),
        ["aaaaaaaa", "72%", "handoff"],
    ),
    (
        ChildClamped(
            at=AT,
            conversation_id=PARENT,
            agent_id="echo",
            child_id=CHILD,
            child_agent_id="scribe",
            limit_tokens=32_000,
            parent_limit_tokens=200_000,
        ),
        ["bbbbbbbb", "aaaaaaaa", "32,000"],
    ),
    (
        HandoffWritten(
            at=AT,
            conversation_id=PARENT,
            agent_id="echo",
            document_id="d1",
            path="/repo/.delegate/handoffs/handoff-2026-11-23-101010.md",
            producer="facts",
            pending=True,
        ),
        ["aaaaaaaa", "handoff-2026-11-23-101010.md", "waiting"],
    ),
    (
        HandoffFailed(
            at=AT, conversation_id=PARENT, agent_id="echo", stage="spawn", reason="no such agent"
        ),
        ["aaaaaaaa", "failed", "spawn"],
    ),
    (
        SessionContinued(
            at=AT, conversation_id=PARENT, agent_id="echo", successor_id=CHILD, document_id="d1"
        ),
        ["aaaaaaaa", "continues in", "bbbbbbbb"],
    ),
    (
        CheckpointMarked(
            at=AT,
            conversation_id=PARENT,
            agent_id="echo",
            checkpoint_id="k1",
            seq=4,
            forked_to=CHILD,
        ),
        ["forked", "bbbbbbbb", "aaaaaaaa", "4"],
    ),
    (
        RunInterrupted(
            at=AT, conversation_id=PARENT, agent_id="echo", run_id=CHILD, reason="owner died"
        ),
        ["bbbbbbbb", "aaaaaaaa", "interrupted"],
    ),
    (
        CapsuleSaved(
            at=AT,
            conversation_id=PARENT,
            agent_id="echo",
            document_id="1a2b3c4d-e5",
            path=CAPSULE,
            producer="agent",
            draft=True,
        ),
        ["capsule 1a2b3c4d", "drafted", "aaaaaaaa", "main/20261123T101010Z.md", "review"],
    ),
    (
        CapsuleSaved(
            at=AT, conversation_id="", document_id="1a2b3c4d-e5", path=CAPSULE, producer="person"
        ),
        ["capsule 1a2b3c4d", "saved", "main/20261123T101010Z.md"],
    ),
    (
        CapsuleInjected(
            at=AT,
            conversation_id=CHILD,
            run_id="r1",
            agent_id="echo",
            document_id="1a2b3c4d-e5",
            digest="sha256:0123456789abcdef",
            path=CAPSULE,
            accepted=("reference_stale",),
        ),
        ["bbbbbbbb", "capsule 1a2b3c4d", "digest 01234567", "accepted reference_stale"],
    ),
    (
        CapsuleGap(
            at=AT,
            conversation_id=CHILD,
            run_id="r1",
            agent_id="echo",
            document_id="1a2b3c4d-e5",
            note="which\x1b[2J currency\nand more",
        ),
        ["bbbbbbbb", "gap", "capsule 1a2b3c4d", "which"],
    ),
    (
        CapsuleStale(
            at=AT,
            conversation_id="",
            document_id="1a2b3c4d-e5",
            path=CAPSULE,
            changed=("a.py", "b.py", "c.py", "d.py"),
        ),
        ["capsule 1a2b3c4d", "stale", "4 files changed", "a.py", "(+1)"],
    ),
]


@pytest.mark.parametrize(("event", "words"), EVENTS, ids=lambda e: getattr(e, "kind", ""))
def test_each_context_event_reads_as_a_sentence(event: object, words: list[str]) -> None:
    line = describe(HISTORY_EVENT.validate_python(event))
    for word in words:
        assert word in line
    assert not line.endswith(getattr(event, "kind", "?"))
    assert "\x1b" not in line
    assert "\n" not in line
