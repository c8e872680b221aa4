"""Human formats shared by the command line and the Textual app."""

from __future__ import annotations

from core.event_text.outcomes import handoff_outcome_line as handoff_outcome_line
from core.event_text.words import ESTIMATE as ESTIMATE
from core.event_text.words import capsule_label as capsule_label
from core.event_text.words import message_number as message_number
from core.event_text.words import short_id as short_id
from core.event_text.words import tokens as tokens
from core.events import ContextThresholdCrossed
from core.models import ContextLevel, ContextUsage, Message, Role
from tui.shared.ages import ago as ago  # re-exported: the formats' one place to look
from tui.shared.safe_text import first_line


def size(n: int) -> str:
    """Bytes in binary units: 512 B, 3.4 KiB, 12 MiB."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


UNKNOWN_USAGE = "usage unknown"


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
