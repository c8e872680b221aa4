"""The detail column of ``delegate history``: what each kind of history event says.

One case per event kind, checked whole by mypy (a kind added to ``HistoryEvent``
without a case here is a type error), so no field is read off a kind that does
not have it (a return's ``status`` is the role's answer, not a run's status).
The text is raw event data: the caller masks secrets and escapes controls.
"""

from __future__ import annotations

from typing import assert_never

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
from core.models import Usage
from tui.returns import look
from tui.shared import formatting as fmt


def detail(event: HistoryEvent) -> str:
    """One line (the first of it is shown) saying what ``event`` was about."""
    match event:
        case DelegateLaunched() | FollowUpStarted():
            return event.prompt
        case DelegateFinished():
            return _run_end(event.status.value, event.duration_s, event.usage, event.error, "")
        case FollowUpCompleted():
            return _run_end(
                event.status.value, event.duration_s, event.usage, event.error, event.prompt
            )
        case SessionDismissed() | SessionRestored() | SessionPurged():
            return event.title or "(untitled)"
        case SessionRenamed():
            return event.name if event.name is not None else f"name cleared · {event.title}"
        case RunInterrupted():
            return f"run {fmt.short_id(event.run_id)} · {event.reason}"
        case ContextThresholdCrossed():
            estimate = fmt.ESTIMATE if event.estimated else ""
            return (
                f"{estimate}{event.percent:.0f}% · {event.level.value} level"
                f" · {event.used_tokens:,} of {event.limit_tokens:,} tokens"
            )
        case ChildClamped():
            return (
                f"sub-agent {fmt.short_id(event.child_id)} ({event.child_agent_id}) clamped to"
                f" {event.limit_tokens:,} tokens (this window {event.parent_limit_tokens:,})"
            )
        case HandoffWritten():
            waits = " · waiting for a person to continue it" if event.pending else ""
            return f"{event.producer} · {event.path}{waits}"
        case HandoffFailed():
            return f"{event.stage} · {event.reason}"
        case HandoffModified():
            return (
                f"changed on disk since delegate wrote it: not given to"
                f" {event.consumer or 'a new session'} · review it with"
                f" `delegate handoff show {event.path}` · {event.path}"
            )
        case SessionContinued():
            how = "from its hand-off" if event.document_id else "without a hand-off document"
            return f"continues in {event.successor_id} {how}"
        case CheckpointMarked():
            at = fmt.message_number(event.seq)
            if event.forked_to:
                return f"forked into {event.forked_to} from message {at}"
            if event.restored:
                return f"restored to message {at}"
            return f"checkpoint at message {at}" + (f" · {event.label}" if event.label else "")
        case CapsuleSaved():
            how = "drafted, waiting for review" if event.draft else f"saved by {event.producer}"
            return f"capsule {fmt.short_id(event.document_id)} {how} · {event.path}"
        case CapsuleInjected():
            accepted = f" · accepted: {', '.join(event.accepted)}" if event.accepted else ""
            label = fmt.capsule_label(event.document_id, event.digest)
            return f"{label} · {event.path}{accepted}"
        case CapsuleGap():
            return f"gap in capsule {fmt.short_id(event.document_id)}: {event.note}"
        case CapsuleStale():
            changed = look.count(len(event.changed), "file")
            return f"{changed} changed ({', '.join(event.changed)}) · {event.path}"
        case ReturnAccepted():
            return f"{event.status} · {look.accepted_line(event)}"
        case ReturnRejected():
            return (
                f"{look.role_label(event.role)} of group {event.group_id}"
                f" · {look.rule_words(event.rule)}: {event.reason} · {event.tokens:,} tokens"
            )
        case HandoffSettled():
            return fmt.handoff_outcome_line(event.outcome)
        case ChainEnded():
            return (
                f"group {event.group_id} of {event.artifacts_session}"
                f" · {look.count(event.steps, 'step')} · {event.final_status}"
                f" · {look.chain_reason(event.reason)}"
            )
    assert_never(event)


def _run_end(status: str, duration_s: float, usage: Usage, error: str | None, prompt: str) -> str:
    tokens = usage.input_tokens + usage.output_tokens
    parts = [status, f"{duration_s:.1f}s", f"{tokens:,} tokens"]
    return " · ".join(part for part in (*parts, error or "", prompt) if part)
