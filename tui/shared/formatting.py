"""Human formats shared by the command line and the Textual app."""

from __future__ import annotations

from core.events import ContextThresholdCrossed
from core.models import (
    ContextLevel,
    ContextUsage,
    HandoffOutcome,
    HandoffResult,
    Message,
    Role,
)
from tui.shared.ages import ago as ago  # re-exported: the formats' one place to look
from tui.shared.safe_text import first_line, visible


def tokens(n: int) -> str:
    """Compact token count: 950, 42k, 1.2M."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.0f}k" if n >= 10_000 else f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{n / 1_000_000:.1f}M"


def size(n: int) -> str:
    """Bytes in binary units: 512 B, 3.4 KiB, 12 MiB."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


UNKNOWN_USAGE = "usage unknown"
ESTIMATE = "≈"


def meter(context: ContextUsage) -> str:
    """The picker's context meter text: ``"42k used · 79% left"``.

    ``"usage unknown"`` when the agent recorded none (never a made-up "0 used"),
    and ``"≈12k used"`` while the figure is an estimate (after a compaction).
    """
    if not context.known:
        return UNKNOWN_USAGE
    used = (ESTIMATE if context.estimated else "") + f"{tokens(context.used_tokens)} used"
    if context.limit_tokens <= 0:
        return used
    left = round(context.left_fraction * 100)
    return f"{used} · {ESTIMATE if context.estimated else ''}{left}% left"


SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: tuple[int, ...]) -> str:
    """The trend as block characters, scaled to its own highest value."""
    top = max(values, default=0)
    if top <= 0:
        return ""
    return "".join(SPARKS[min(len(SPARKS) - 1, v * len(SPARKS) // (top + 1))] for v in values)


CROSSING_WORDS = {
    ContextLevel.OK: "",
    ContextLevel.NOTIFY: "a hand-off comes at the hand-off level",
    ContextLevel.REMINDER: "a hand-off comes soon",
    ContextLevel.HANDOFF: "hand-off level: its hand-off is asked for (what it did follows)",
    ContextLevel.FORCE: "no further prompt is sent to it",
}
"""What each context level means for the session, in a person's words."""


def crossing_line(event: ContextThresholdCrossed) -> str:
    """``session 1a2b3c4d: 75% of its context window in use (150,000 / 200,000 tokens); …``."""
    figure = (ESTIMATE if event.estimated else "") + f"{event.percent:.0f}%"
    return (
        f"session {short_id(event.conversation_id)}: {figure} of its context window in use"
        f" ({event.used_tokens:,} / {event.limit_tokens:,} tokens);"
        f" {CROSSING_WORDS[event.level]}"
    )


def handoff_outcome_line(outcome: HandoffOutcome) -> str:
    """What a hand-off did, in one line a person can act on (the CLI, ``delegate watch``,
    the panel's history): written or not and where, continued in whom or waiting, and
    what follows a failure. Paths and reasons are shown safe (no control characters)."""
    line = _outcome_line(outcome)
    if outcome.elsewhere and outcome.result is not HandoffResult.ALREADY:
        line += f" (kept under delegate's data folder because {visible(outcome.elsewhere)})"
    return line


def _outcome_line(outcome: HandoffOutcome) -> str:
    who = f"session {short_id(outcome.conversation_id)}"
    path = visible(outcome.document.path) if outcome.document else ""
    continue_it = f"`delegate handoff continue {path}`"
    failure = visible(outcome.failure or "")
    match outcome.result:
        case HandoffResult.CONTINUED:
            return (
                f"{who}: hand-off written to {path}; its work continues in session"
                f" {outcome.successor_id}"
            )
        case HandoffResult.PENDING:
            note = f" (see {visible(outcome.pending_note)})" if outcome.pending_note else ""
            return (
                f"{who}: hand-off written to {path}; waiting for you to continue it{note}:"
                f" {continue_it}"
            )
        case HandoffResult.SPAWN_FAILED:
            note = (
                f"{visible(outcome.pending_note)} says how"
                if outcome.pending_note
                else "no pending note could be written"
            )
            return (
                f"{who}: hand-off written to {path} but NOT continued ({failure}); it waits for"
                f" you: {note}, or run {continue_it}"
            )
        case HandoffResult.WRITE_FAILED:
            force = f"{outcome.force_percent}%" if outcome.force_percent else "the force level"
            folder = visible(outcome.folder or "its folder")
            return (
                f"{who}: hand-off NOT written under {folder} ({failure}); it keeps working and is"
                f" asked again after its next turn, past {force} delegate sends it nothing more;"
                f" write one with `delegate handoff write {outcome.conversation_id}` or risk"
                " losing its context"
            )
        case HandoffResult.ALREADY:
            return (
                f"{who} was handed off before: its work continues in session {outcome.successor_id}"
            )
        case HandoffResult.NOT_DONE:
            return f"{who}: no hand-off this time ({failure})"


def message_number(seq: int) -> str:
    """``#3``: a stored message's place as the panel numbers messages (#1 is the first;
    ``seq`` counts from 0)."""
    return f"#{max(0, seq) + 1}"


def short_id(conversation_id: str) -> str:
    return conversation_id[:8]


def capsule_label(document_id: str, digest: str | None) -> str:
    """``capsule 1a2b3c4d · digest 9f86d081``: a capsule as one safe phrase (the digest's
    ``sha256:`` prefix dropped; none recorded, none shown)."""
    label = f"capsule {visible(short_id(document_id))}"
    if digest:
        label += f" · digest {visible(digest.removeprefix('sha256:')[:8])}"
    return label


def tool_label(message: Message) -> str | None:
    """The tool a message calls or answers, one safe line; None for plain messages.

    Tool metadata is whatever the transcript held: a call has a ``name`` (or
    ``calls``), a result usually only an id, and an imported line may carry none.
    """
    if message.role is not Role.TOOL and not message.tool:
        return None
    tool = message.tool or {}
    name = tool.get("name")
    calls = tool.get("calls")
    if not name and isinstance(calls, list):
        name = ", ".join(str(c.get("name")) for c in calls if isinstance(c, dict) and c.get("name"))
    if not name:
        name = "result" if message.role is Role.TOOL else "tool"
    if tool.get("is_error") is True:
        name = f"{name} (error)"
    return first_line(str(name), 30)
