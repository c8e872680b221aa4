"""How runs and a session's own changes read: launched, finished, follow-ups, a run
interrupted, cancelled or failed, archived, restored, renamed, purged."""

from __future__ import annotations

from core.event_text.model import Describer, EventText, Span, Tone, described, plain
from core.event_text.words import first_line, short_id, shown_id, tokens
from core.events import (
    DelegateFinished,
    DelegateLaunched,
    FollowUpCompleted,
    FollowUpStarted,
    RunInterrupted,
    SessionDismissed,
    SessionPurged,
    SessionRenamed,
    SessionRestored,
)
from core.models import RunStatus, Usage

INTERRUPTED = "its process ended before the run did"


def _launched(e: DelegateLaunched, _: str | None) -> EventText:
    return EventText(
        variant="delegate_launched",
        title="▶ launched",
        detail=plain(f"{e.mode.value} · {first_line(e.prompt, 100)}"),
        line=f"launched {shown_id(e.conversation_id)} on {e.agent_id}",
        record=e.prompt,
    )


def _finished(e: DelegateFinished, _: str | None) -> EventText:
    line = f"finished {shown_id(e.conversation_id)}: {e.status.value}"
    record = _run_end(e, "")
    if e.status is RunStatus.COMPLETED:
        detail = plain(f"{e.status.value} · {_usage(e)}")
        return EventText("delegate_finished", "■ launch finished", detail, line, record)
    return _run_not_completed(e, line, record)


def _follow_up_started(e: FollowUpStarted, _: str | None) -> EventText:
    return EventText(
        variant="follow_up_started",
        title="↻ follow-up started",
        detail=plain(first_line(e.prompt, 100)),
        line=f"follow-up on {shown_id(e.conversation_id)}",
        record=e.prompt,
        tone=Tone.STARTED,
    )


def _follow_up_completed(e: FollowUpCompleted, _: str | None) -> EventText:
    line = f"follow-up on {shown_id(e.conversation_id)}: {e.status.value}"
    record = _run_end(e, e.prompt)
    if e.status is RunStatus.COMPLETED:
        detail = plain(f"{_usage(e)} · {first_line(e.prompt, 80)}")
        return EventText("follow_up_completed", "✓ follow-up completed", detail, line, record)
    return _run_not_completed(e, line, record)


def _run_not_completed(
    e: FollowUpCompleted | DelegateFinished, line: str, record: str
) -> EventText:
    """A run's end that is not a completion reads as what it was: stopped by a person
    (not a failure, and the reply so far is kept), interrupted, or failed."""
    if e.status is RunStatus.CANCELLED:
        detail = plain(f"after {e.duration_s:.1f}s · the reply so far is kept")
        return EventText("run_cancelled", "■ run cancelled", detail, line, record, Tone.CANCELLED)
    if e.status is RunStatus.INTERRUPTED:
        detail = plain(first_line(e.error or INTERRUPTED, 100))
        return EventText("run_interrupted", "⚠ run interrupted", detail, line, record, Tone.FAILED)
    failure = (
        Span(f"{e.status.value} · "),
        Span(first_line(e.error or "no reason given", 100), "red"),
    )
    return EventText("run_failed", "✗ run failed", failure, line, record, Tone.FAILED)


def _interrupted(e: RunInterrupted, _: str | None) -> EventText:
    """Its process died (or stopped beating) before the run ended; whoever noticed says so."""
    return EventText(
        variant="run_interrupted",
        title="⚠ run interrupted",
        detail=plain(first_line(e.reason or INTERRUPTED, 100)),
        line=f"run {shown_id(e.run_id)} on {shown_id(e.conversation_id)} interrupted",
        record=f"run {short_id(e.run_id)} · {e.reason}",
        tone=Tone.FAILED,
    )


def _usage(e: FollowUpCompleted | DelegateFinished) -> str:
    used = e.usage.input_tokens + e.usage.output_tokens
    return f"{e.duration_s:.1f}s · {tokens(used)} tokens"


def _run_end(e: FollowUpCompleted | DelegateFinished, prompt: str) -> str:
    usage: Usage = e.usage
    used = usage.input_tokens + usage.output_tokens
    parts = [e.status.value, f"{e.duration_s:.1f}s", f"{used:,} tokens"]
    return " · ".join(part for part in (*parts, e.error or "", prompt) if part)


def _untitled(title: str) -> str:
    return title or "(untitled)"


def _archived(e: SessionDismissed, _: str | None) -> EventText:
    """Moved into the archive (kept, restorable)."""
    return EventText(
        variant="session_dismissed",
        title="⌫ archived",
        detail=plain(first_line(_untitled(e.title), 100)),
        line=f"archived {shown_id(e.conversation_id)}",
        record=_untitled(e.title),
        tone=Tone.DISMISSED,
    )


def _restored(e: SessionRestored, _: str | None) -> EventText:
    return EventText(
        variant="session_restored",
        title="↺ restored",
        detail=plain(first_line(_untitled(e.title), 100)),
        line=f"restored {shown_id(e.conversation_id)}",
        record=_untitled(e.title),
    )


def _purged(e: SessionPurged, _: str | None) -> EventText:
    return EventText(
        variant="session_purged",
        title="✕ purged",
        detail=plain(first_line(_untitled(e.title), 100)),
        line=f"purged {shown_id(e.conversation_id)}",
        record=_untitled(e.title),
        tone=Tone.DISMISSED,
    )


def _renamed(e: SessionRenamed, _: str | None) -> EventText:
    if e.name is None:
        detail = f"name cleared · {first_line(_untitled(e.title), 80)}"
        record = f"name cleared · {e.title}"
    else:
        detail, record = first_line(e.name, 100), e.name
    return EventText(
        variant="session_renamed",
        title="✎ renamed",
        detail=plain(detail),
        line=f"renamed {shown_id(e.conversation_id)}",
        record=record,
    )


DESCRIBERS: dict[str, Describer] = dict(
    [
        described(DelegateLaunched, _launched),
        described(DelegateFinished, _finished),
        described(FollowUpStarted, _follow_up_started),
        described(FollowUpCompleted, _follow_up_completed),
        described(RunInterrupted, _interrupted),
        described(SessionDismissed, _archived),
        described(SessionRestored, _restored),
        described(SessionPurged, _purged),
        described(SessionRenamed, _renamed),
    ]
)
