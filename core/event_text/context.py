"""How a session's context reads as it fills: thresholds crossed, a sub-agent clamped,
hand-offs written, failed, changed on disk or settled, work continued, checkpoints.

A hand-off that waited for a person reads as continued once a session continues its
document (``continued_in``), and a person then jumps to that session.
"""

from __future__ import annotations

from core.event_text.model import Describer, EventText, Span, Tone, described, plain
from core.event_text.outcomes import handoff_outcome_line
from core.event_text.words import (
    ESTIMATE,
    first_line,
    message_number,
    short_id,
    shown_id,
    tokens,
    visible,
)
from core.events import (
    CheckpointMarked,
    ChildClamped,
    ContextThresholdCrossed,
    HandoffFailed,
    HandoffModified,
    HandoffSettled,
    HandoffWritten,
    SessionContinued,
)
from core.models import ContextLevel, HandoffResult

# What each threshold means for the session, as its cell says it.
_LEVEL_MEANS = {
    ContextLevel.NOTIFY: "warning level",
    ContextLevel.REMINDER: "reminder: a hand-off comes next",
    ContextLevel.HANDOFF: "hand-off level: a hand-off document is written",
    ContextLevel.FORCE: "force level: delegate sends it no more prompts",
}

_SETTLED_TITLES = {
    HandoffResult.CONTINUED: "⇢ handed off",
    HandoffResult.PENDING: "⇢ hand-off waiting",
    HandoffResult.SPAWN_FAILED: "✗ hand-off not continued",
    HandoffResult.WRITE_FAILED: "✗ hand-off not written",
    HandoffResult.ALREADY: "⇢ handed off before",
    HandoffResult.NOT_DONE: "· no hand-off",
}

CONTINUED = "⇢ hand-off continued"
WAITING = " · waiting for you to continue it"


def _threshold(e: ContextThresholdCrossed, _: str | None) -> EventText:
    """The session's context crossed a threshold (once per level, ever)."""
    estimate = ESTIMATE if e.estimated else ""
    figures = f"{tokens(e.used_tokens)} of {tokens(e.limit_tokens)} tokens"
    detail = (
        Span(_LEVEL_MEANS.get(e.level, e.level.value), level=e.level),
        Span(f" ({figures})" if e.level is ContextLevel.NOTIFY else f" · {figures}"),
    )
    return EventText(
        variant="context_threshold",
        title=f"▲ context at {estimate}{e.percent:.0f}%",
        detail=detail,
        line=(
            f"context of {shown_id(e.conversation_id)} at {e.percent:.0f}%:"
            f" {e.level.value} level crossed"
        ),
        record=(
            f"{estimate}{e.percent:.0f}% · {e.level.value} level"
            f" · {e.used_tokens:,} of {e.limit_tokens:,} tokens"
        ),
        tone=Tone.ATTENTION,
    )


def _clamped(e: ChildClamped, _: str | None) -> EventText:
    """A sub-agent got a smaller window than this session's (its model's limit)."""
    return EventText(
        variant="child_clamped",
        title="⇲ child clamped",
        detail=plain(
            f"{visible(e.child_agent_id)} · {short_id(e.child_id)} clamped to"
            f" {tokens(e.limit_tokens)} tokens (this window {tokens(e.parent_limit_tokens)})"
        ),
        line=(
            f"sub-agent {shown_id(e.child_id)} of {shown_id(e.conversation_id)}"
            f" clamped to {e.limit_tokens:,} tokens"
        ),
        record=(
            f"sub-agent {short_id(e.child_id)} ({e.child_agent_id}) clamped to"
            f" {e.limit_tokens:,} tokens (this window {e.parent_limit_tokens:,})"
        ),
        opens=e.child_id,
    )


def _file_name(path: str) -> str:
    return visible(path.rsplit("/", 1)[-1]) or "(no file)"


def _continued_span(successor_id: str) -> Span:
    return Span(f" · continued in {short_id(visible(successor_id))}", "cyan")


def _written(e: HandoffWritten, continued_in: str | None) -> EventText:
    """A hand-off document was written; pending: a person continues it."""
    if not e.pending:
        title = "⇢ hand-off written"
    else:
        title = CONTINUED if continued_in else "⇢ hand-off waiting"
    by = {"agent": "by the agent", "facts": "from facts"}.get(e.producer, e.producer)
    detail = [Span(f"{visible(by)} · {_file_name(e.path)}")]
    if continued_in:
        detail.append(_continued_span(continued_in))
    elif e.pending:
        detail.append(Span(WAITING, "bold yellow"))
    waits = " (waiting for a person)" if e.pending else ""
    return EventText(
        variant="handoff_written",
        title=title,
        detail=tuple(detail),
        line=f"hand-off of {shown_id(e.conversation_id)} written{waits}: {visible(e.path)}",
        record=f"{e.producer} · {e.path}"
        + (" · waiting for a person to continue it" if e.pending else ""),
        opens=continued_in or None,
        waiting=e.document_id if e.pending else None,
    )


def _failed(e: HandoffFailed, _: str | None) -> EventText:
    stage = {"write": "writing", "spawn": "starting the new session"}.get(e.stage, e.stage)
    return EventText(
        variant="handoff_failed",
        title="✗ hand-off failed",
        detail=(
            Span(f"{stage}: "),
            Span(first_line(e.reason, 100), "red"),
            Span(" · retried at the next turn" if e.stage == "write" else ""),
        ),
        line=f"hand-off of {shown_id(e.conversation_id)} failed ({e.stage})",
        record=f"{e.stage} · {e.reason}",
        tone=Tone.FAILED,
    )


def _modified(e: HandoffModified, _: str | None) -> EventText:
    """A hand-off edited on disk since delegate wrote it: not given to an agent."""
    return EventText(
        variant="handoff_modified",
        title="⚠ hand-off changed",
        detail=(
            Span(f"{_file_name(e.path)} · "),
            Span("edited since delegate wrote it: not injected", "bold yellow"),
            Span(" · review it: delegate handoff show"),
        ),
        line=f"hand-off changed on disk, not injected (review it): {visible(e.path)}",
        record=(
            f"changed on disk since delegate wrote it: not given to"
            f" {e.consumer or 'a new session'} · review it with"
            f" `delegate handoff show {e.path}` · {e.path}"
        ),
        tone=Tone.FAILED,
    )


def _continued(e: SessionContinued, _: str | None) -> EventText:
    """Work moved on to a new session; a person jumps to that one."""
    how = "from its hand-off" if e.document_id else "without a hand-off document"
    return EventText(
        variant="session_continued",
        title="→ continued",
        detail=plain(f"in {short_id(e.successor_id)} {how}"),
        line=f"{shown_id(e.conversation_id)} continues in {shown_id(e.successor_id)}",
        record=f"continues in {e.successor_id} {how}",
        opens=e.successor_id,
    )


def _settled(e: HandoffSettled, continued_in: str | None) -> EventText:
    """What a hand-off did, whatever it was: the continuation layer's one outcome. A
    person jumps to the session the work continues in, else the session itself."""
    o = e.outcome
    detail: list[Span] = []
    if o.document is not None:
        detail.append(Span(f"written · {_file_name(o.document.path)}"))
    match o.result:
        case HandoffResult.CONTINUED | HandoffResult.ALREADY:
            detail.append(Span(f" · continues in {short_id(o.successor_id or '')}"))
        case HandoffResult.PENDING | HandoffResult.SPAWN_FAILED if continued_in:
            detail.append(_continued_span(continued_in))
        case HandoffResult.PENDING:
            detail.append(Span(WAITING, "bold yellow"))
        case HandoffResult.SPAWN_FAILED:
            detail.append(Span(" · "))
            detail.append(Span(first_line(o.failure or "the new session did not start", 80), "red"))
            detail.append(Span(" · waiting for you (HANDOFF_PENDING.md)", "bold yellow"))
        case HandoffResult.WRITE_FAILED:
            # The reason names the folder it was to be written under.
            detail.append(Span(first_line(o.failure or "nothing written", 100), "red"))
            force = f"{o.force_percent}%" if o.force_percent else "the force level"
            detail.append(Span(f" · it keeps working; past {force} it gets no prompt"))
        case HandoffResult.NOT_DONE:
            detail.append(Span(first_line(o.failure or "", 100)))
    failed = o.result in (HandoffResult.SPAWN_FAILED, HandoffResult.WRITE_FAILED)
    line = handoff_outcome_line(o)
    return EventText(
        variant="handoff_settled",
        title=CONTINUED if continued_in else _SETTLED_TITLES[o.result],
        detail=tuple(detail),
        line=line,
        record=line,
        tone=Tone.FAILED if failed else Tone.PLAIN,
        opens=continued_in or o.successor_id or None,
        waiting=o.document.document_id if o.pending and o.document else None,
    )


def _checkpoint(e: CheckpointMarked, _: str | None) -> EventText:
    """A checkpoint marked, a session forked from one, or restored to one."""
    at = message_number(e.seq)
    where = f"{shown_id(e.conversation_id)} at message {e.seq}"
    if e.forked_to:
        title, detail = "⑂ forked", f"from message {at} into {short_id(e.forked_to)}"
        line = f"forked {shown_id(e.forked_to)} from {where}"
        record = f"forked into {e.forked_to} from message {at}"
    elif e.restored:
        title = "↶ restored"
        detail = f"to message {at} (the state before is kept in an archived copy)"
        line, record = f"restored {where}", f"restored to message {at}"
    else:
        title = "⚑ checkpoint"
        detail = f"at message {at}" + (f" · {first_line(e.label, 80)}" if e.label else "")
        line = f"checkpoint marked in {where}"
        record = f"checkpoint at message {at}" + (f" · {e.label}" if e.label else "")
    return EventText("checkpoint", title, plain(detail), line, record, opens=e.forked_to or None)


DESCRIBERS: dict[str, Describer] = dict(
    [
        described(ContextThresholdCrossed, _threshold),
        described(ChildClamped, _clamped),
        described(HandoffWritten, _written),
        described(HandoffFailed, _failed),
        described(HandoffModified, _modified),
        described(SessionContinued, _continued),
        described(HandoffSettled, _settled),
        described(CheckpointMarked, _checkpoint),
    ]
)
