"""`delegate history` prints every kind of history event, plain and on a terminal.

Commands run in-process through ``tui.cli.main``, over a real store holding one
event of every kind the store knows (as the orchestrator stores them).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import get_args

import pytest

from core.clock import to_us
from core.config import DB_FILENAME
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
    ContextLevel,
    HandoffOutcome,
    HandoffResult,
    RunStatus,
    SessionMode,
    Usage,
)
from core.store import Store
from tui.cli import main

AT = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
CID, OTHER, RUN = "aaaaaaaa-1111", "bbbbbbbb-2222", "rrrrrrrr-3333"
USAGE = Usage(input_tokens=120, output_tokens=30)
STRIP_SGR = re.compile(r"\x1b\[[0-9;]*m")

# One event of every kind (a run's end in each way it can end), and words its
# detail must say: what a person reads the line for.
SAMPLES: list[tuple[HistoryEvent, str]] = [
    (
        DelegateLaunched(
            at=AT,
            conversation_id=CID,
            run_id=RUN,
            agent_id="echo",
            prompt="Implement AUTH",
            mode=SessionMode.STANDARD,
        ),
        "Implement AUTH",
    ),
    (
        DelegateFinished(
            at=AT,
            conversation_id=CID,
            run_id=RUN,
            agent_id="echo",
            status=RunStatus.COMPLETED,
            duration_s=1.5,
            usage=USAGE,
        ),
        "completed",
    ),
    (
        DelegateFinished(
            at=AT,
            conversation_id=CID,
            run_id=RUN,
            agent_id="echo",
            status=RunStatus.FAILED,
            duration_s=0.2,
            usage=USAGE,
            error="the build exploded",
        ),
        "the build exploded",
    ),
    (
        FollowUpStarted(
            at=AT, conversation_id=CID, run_id=RUN, agent_id="echo", prompt="Now the tests"
        ),
        "Now the tests",
    ),
    (
        FollowUpCompleted(
            at=AT,
            conversation_id=CID,
            run_id=RUN,
            agent_id="echo",
            prompt="Now the tests",
            status=RunStatus.CANCELLED,
            duration_s=3.0,
            usage=USAGE,
        ),
        "cancelled",
    ),
    (SessionDismissed(at=AT, conversation_id=CID, agent_id="echo", title="Old work"), "Old work"),
    (SessionRestored(at=AT, conversation_id=CID, agent_id="echo", title="Old work"), "Old work"),
    (
        SessionRenamed(at=AT, conversation_id=CID, agent_id="echo", title="t", name="auth work"),
        "auth work",
    ),
    (SessionPurged(at=AT, conversation_id=CID, agent_id="echo", title="Gone work"), "Gone work"),
    (
        RunInterrupted(
            at=AT, conversation_id=CID, run_id=RUN, agent_id="echo", reason="its owner died"
        ),
        "its owner died",
    ),
    (
        ContextThresholdCrossed(
            at=AT,
            conversation_id=CID,
            agent_id="echo",
            level=ContextLevel.HANDOFF,
            used_tokens=145_000,
            limit_tokens=200_000,
            percent=72.5,
        ),
        "72%",
    ),
    (
        ChildClamped(
            at=AT,
            conversation_id=CID,
            agent_id="echo",
            child_id=OTHER,
            child_agent_id="scribe",
            limit_tokens=32_000,
            parent_limit_tokens=200_000,
        ),
        "32,000",
    ),
    (
        HandoffWritten(
            at=AT,
            conversation_id=CID,
            agent_id="echo",
            document_id="d1",
            path="/repo/.delegate/handoffs/handoff-2026-11-23-101010.md",
            producer="facts",
        ),
        "handoff-2026-11-23-101010.md",
    ),
    (
        HandoffFailed(
            at=AT, conversation_id=CID, agent_id="echo", stage="spawn", reason="no such agent"
        ),
        "no such agent",
    ),
    (
        HandoffModified(
            at=AT,
            conversation_id=CID,
            document_id="doc-1",
            path="/repo/.delegate/handoffs/handoff-2026-11-23-100000.md",
            consumer=OTHER,
        ),
        "review it with `delegate handoff show /repo/.delegate/handoffs/handoff-2026-11-23",
    ),
    (
        HandoffSettled(
            at=AT,
            conversation_id=CID,
            agent_id="echo",
            outcome=HandoffOutcome(
                conversation_id=CID,
                result=HandoffResult.WRITE_FAILED,
                folder="/repo",
                failure="not a folder",
                force_percent=90,
            ),
        ),
        "NOT written",
    ),
    (
        SessionContinued(
            at=AT, conversation_id=CID, agent_id="echo", successor_id=OTHER, document_id="d1"
        ),
        OTHER[:8],
    ),
    (
        CheckpointMarked(
            at=AT,
            conversation_id=CID,
            agent_id="echo",
            checkpoint_id="c1",
            seq=4,
            label="before the refactor",
        ),
        "before the refactor",
    ),
    (
        CapsuleSaved(
            at=AT,
            conversation_id=CID,
            agent_id="echo",
            document_id="cap1",
            path="/repo/.delegate/capsules/main/20261123T101010Z.md",
            producer="person",
        ),
        "20261123T101010Z.md",
    ),
    (
        CapsuleInjected(
            at=AT,
            conversation_id=OTHER,
            run_id=RUN,
            agent_id="echo",
            document_id="cap1",
            digest="sha256:abcdef0123",
            path="/repo/.delegate/capsules/main/20261123T101010Z.md",
        ),
        "cap1",
    ),
    (
        CapsuleGap(
            at=AT,
            conversation_id=OTHER,
            run_id=RUN,
            agent_id="echo",
            document_id="cap1",
            note="the schema of the users table",
        ),
        "the schema of the users table",
    ),
    (
        CapsuleStale(
            at=AT,
            conversation_id=CID,
            agent_id="echo",
            document_id="cap1",
            path="/repo/.delegate/capsules/main/20261123T101010Z.md",
            changed=("src/auth.py",),
        ),
        "src/auth.py",
    ),
    (
        ReturnAccepted(
            at=AT,
            conversation_id=CID,
            run_id=RUN,
            agent_id="echo",
            artifacts_session="crp-1",
            group_id="AUTH",
            role="developer",
            status="READY_FOR_QA",
            summary=("Implemented AUTH", "Changed src/auth.py", "15 tests pass"),
            next_role="qa_expert",
            display="🔨 Group AUTH [Developer] | Implemented AUTH",
        ),
        "READY_FOR_QA",
    ),
    (
        ReturnRejected(
            at=AT,
            conversation_id=CID,
            run_id=RUN,
            agent_id="echo",
            artifacts_session="crp-1",
            group_id="PAY",
            role="developer",
            rule="too_long",
            reason="403 tokens, over 400",
            tokens=403,
        ),
        "403 tokens, over 400",
    ),
    (
        ChainEnded(
            at=AT,
            conversation_id=CID,
            agent_id="echo",
            artifacts_session="crp-1",
            group_id="AUTH",
            steps=4,
            final_status="BAZINGA",
            reason="end",
        ),
        "BAZINGA",
    ),
]


def _kinds() -> set[str]:
    union = get_args(get_args(HistoryEvent)[0])
    return {str(cls.model_fields["kind"].default) for cls in union}


def test_the_samples_hold_every_kind_of_history_event() -> None:
    """A kind added later must be added here too, so the test below covers it."""
    assert {event.kind for event, _ in SAMPLES} == _kinds()


@pytest.fixture
async def every_kind(tmp_path: Path) -> Path:
    """A data folder whose history holds every sample, stored as the orchestrator does."""
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    store = await Store.open(data / DB_FILENAME)
    try:
        for back, (event, _) in enumerate(reversed(SAMPLES)):
            await store.history.add(
                to_us(event.at - timedelta(seconds=back)),
                event.kind,
                event.conversation_id,
                getattr(event, "run_id", None),
                event.model_dump(mode="json"),
            )
    finally:
        await store.close()
    return data


def _history(data: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> list[str]:
    capsys.readouterr()
    code = main(["--data-dir", str(data), "history", "--limit", "100", *flags])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "internal_error" not in out.err
    assert "Traceback" not in out.err
    return STRIP_SGR.sub("", out.out).splitlines()


@pytest.mark.parametrize("flags", [(), ("--plain",)], ids=["piped", "plain"])
def test_history_prints_every_kind_piped_or_plain(
    every_kind: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...]
) -> None:
    header, *rows = _history(every_kind, capsys, *flags)
    assert header.split("\t") == ["when", "event", "agent", "conversation", "detail"]
    assert len(rows) == len(SAMPLES)
    for row, (event, words) in zip(rows, SAMPLES, strict=True):  # newest (first sample) first
        _when, kind, _agent, conversation, detail = row.split("\t")
        assert kind == event.kind.replace("_", " ")
        assert conversation == event.conversation_id
        assert words in detail, (event.kind, detail)


def test_history_prints_every_kind_on_a_terminal(
    every_kind: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("COLUMNS", "400")  # wide enough that no detail is cut
    header, *rows = _history(every_kind, capsys)
    assert header.split() == ["when", "event", "agent", "conversation", "detail"]
    assert len(rows) == len(SAMPLES)
    for row, (event, words) in zip(rows, SAMPLES, strict=True):
        assert event.kind.replace("_", " ") in row
        assert words in row, (event.kind, row)


def test_a_return_event_says_its_status_and_display_line(
    every_kind: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _history(every_kind, capsys, "--plain")[1:]
    [accepted] = [r.split("\t")[4] for r in rows if "\treturn accepted\t" in r]
    assert "🔨 Group AUTH [Developer] | Implemented AUTH" in accepted
    assert "READY_FOR_QA" in accepted
    assert "s ·" not in accepted  # a return has no run duration to show


def test_a_narrow_terminal_cuts_the_detail_never_the_kind_or_the_session(
    every_kind: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("COLUMNS", "80")
    header, *rows = _history(every_kind, capsys)
    assert header.split() == ["when", "event", "agent", "conversation", "detail"]
    for row, (event, _) in zip(rows, SAMPLES, strict=True):
        assert len(row) <= 80
        assert event.kind.replace("_", " ") in row
        assert event.conversation_id[:8] in row
        assert event.agent_id in row
