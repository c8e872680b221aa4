"""How a session's context reads in the panel: its window and where that came from, the
rate and turns left, and (from :meth:`AgentOrchestrator.context_report`) the trend, the
breakdown by category, the thresholds crossed, checkpoints and the hand-off chain.

The preview header gets one line from the session alone (no extra query per
highlight); the transcript view's details get the whole report.
"""

from __future__ import annotations

from rich.text import Text

from core.models import (
    ContextDocument,
    ContextLevel,
    ContextReport,
    ContextUsage,
    DocumentStatus,
    MessageCategory,
    Session,
    WindowSource,
)
from tui.shared import formatting as fmt
from tui.shared.context_levels import LEVEL_STYLES
from tui.shared.safe_text import first_line, visible

# Where a window came from, as the preview header says it (a word) and the details (a phrase).
SOURCE_WORDS = {
    WindowSource.MODEL: "model",
    WindowSource.RECORDED: "recorded",
    WindowSource.CONFIG: "config",
    WindowSource.CLAMP: "clamped",
    WindowSource.UNKNOWN: "default",
}
LEVEL_WORDS = {
    ContextLevel.NOTIFY: "notify",
    ContextLevel.REMINDER: "reminder",
    ContextLevel.HANDOFF: "hand-off",
    ContextLevel.FORCE: "force",
}
_LEVELS = {level.value: level for level in ContextLevel}
HANDOFF_STATES = {
    DocumentStatus.PENDING: "hand-off waiting",
    DocumentStatus.CONSUMED: "hand-off continued",
    DocumentStatus.ARCHIVED: "hand-off archived",
}


def window_phrase(context: ContextUsage) -> str:
    """``200k, from its model's family (claude-sonnet-4-5)``: the window and its source."""
    window = fmt.tokens(context.limit_tokens) if context.limit_tokens else "unknown"
    model = f" ({visible(first_line(context.model, 60))})" if context.model else ""
    source = context.window_source
    if source is WindowSource.CLAMP and context.clamped_from is not None:
        return f"{window}, clamped below its parent's {fmt.tokens(context.clamped_from)}{model}"
    how = {
        WindowSource.MODEL: "from its model's family",
        WindowSource.RECORDED: "as the agent recorded it",
        WindowSource.CONFIG: "from the agent's context_limit setting",
        WindowSource.CLAMP: "clamped below its parent's",
    }.get(source, "the default (its source is not recorded)")
    return f"{window}, {how}{model}"


def rate_phrase(context: ContextUsage) -> str:
    """``26k a turn · about 2 turns left``; empty while there is no rate yet."""
    turns_left = context.turns_left
    if turns_left is None:
        return ""
    plural = "" if turns_left == 1 else "s"
    return f"{fmt.tokens(context.tokens_per_turn)} a turn · about {turns_left} turn{plural} left"


def preview_line(session: Session) -> Text:
    """``window 200k (model) · 26k a turn · about 2 turns left · continues 1a2b3c4d``;
    empty when there is nothing to say beyond the meter."""
    context = session.context
    parts = []
    # A window from nowhere in particular (the default) is the meter's business alone.
    if context.limit_tokens and context.window_source is not WindowSource.UNKNOWN:
        source = SOURCE_WORDS[context.window_source]
        if context.clamped_from is not None:
            source += f" from {fmt.tokens(context.clamped_from)}"
        parts.append(f"window {fmt.tokens(context.limit_tokens)} ({source})")
    if rate := rate_phrase(context):
        parts.append(rate)
    if session.continued_from:
        parts.append(f"continues {fmt.short_id(session.continued_from)}")
    if session.continued_in:
        parts.append(f"continued in {fmt.short_id(session.continued_in)}")
    return Text(" · ".join(parts), "dim")


def capsule_text(session: Session, document: ContextDocument | None) -> Text:
    """``capsule 1a2b3c4d · digest 9f86d081 · stale``: the capsule ``session`` was launched
    with (``document``: its registry row, None when not read or gone); empty without one."""
    if not session.capsule_id:
        return Text()
    text = Text(fmt.capsule_label(session.capsule_id, session.capsule_digest), "dim")
    if _stale(document):
        text.append(" · stale", "bold dark_orange")
    return text


def capsule_row(session: Session, document: ContextDocument | None) -> Text:
    """The details row: the capsule, its file (``branch/stamp.md``), stale said in full."""
    if not session.capsule_id:
        return Text()
    text = Text(fmt.capsule_label(session.capsule_id, session.capsule_digest))
    if document is not None:
        text.append(f" · {visible('/'.join(document.path.rsplit('/', 2)[-2:]))}")
    if _stale(document):
        text.append(" · stale", "bold dark_orange")
        text.append(" (references changed)", "dark_orange")
    return text


def _stale(document: ContextDocument | None) -> bool:
    return document is not None and document.status is DocumentStatus.STALE


def _trend(report: ContextReport) -> Text:
    context = report.session.context
    if not report.trend:
        return Text("no turns measured yet", "dim")
    text = Text()
    text.append(fmt.sparkline(report.trend), "cyan")
    text.append(
        f" {fmt.tokens(report.trend[0])} → {fmt.tokens(report.trend[-1])}"
        f" over {len(report.trend)} turn{'' if len(report.trend) == 1 else 's'}"
    )
    if rate := rate_phrase(context):
        text.append(f" · {rate}")
    return text


def _breakdown(report: ContextReport) -> Text:
    # In the order a context is built: instructions, material, the conversation, tools.
    order = [c.value for c in MessageCategory]
    names = sorted(report.breakdown, key=lambda n: order.index(n) if n in order else len(order))
    return Text(" · ".join(f"{name} {fmt.tokens(report.breakdown[name])}" for name in names))


def _levels(report: ContextReport) -> Text:
    """Each threshold with its %, ``✓`` (in its colour) where the session crossed it."""
    crossed = {c.level for c in report.crossings}
    text = Text()
    for i, (name, percent) in enumerate(report.thresholds.items()):
        level = _LEVELS.get(name)
        if i:
            text.append(" · ")
        word = LEVEL_WORDS.get(level, name) if level is not None else visible(name)
        if level is not None and level in crossed:
            text.append(f"{word} {percent}% ✓", LEVEL_STYLES[level])
        else:
            text.append(f"{word} {percent}%", "dim")
    return text


def _checkpoints(report: ContextReport) -> Text:
    return Text(
        " · ".join(
            fmt.message_number(c.seq) + (f" {first_line(c.label, 40)}" if c.label else "")
            for c in report.checkpoints
        )
    )


def _chain(report: ContextReport) -> Text:
    cid = report.session.conversation_id
    text = Text()
    if len(report.chain) > 1:
        text.append(
            " → ".join(
                f"{fmt.short_id(member)} (this)" if member == cid else fmt.short_id(member)
                for member in report.chain
            )
        )
    else:
        text.append("not handed off", "dim")
    if report.handoffs:
        text.append(" · ")
        text.append_text(_handoff(report.handoffs[0]))
    return text


def _handoff(document: ContextDocument) -> Text:
    state = HANDOFF_STATES.get(document.status, "hand-off written")
    name = visible(document.path.rsplit("/", 1)[-1])
    style = "bold yellow" if document.status is DocumentStatus.PENDING else ""
    return Text(f"{state}: {name}", style)


def report_rows(report: ContextReport) -> list[tuple[str, Text]]:
    """The details rows (label, value) the transcript view shows under the meter; the
    breakdown, checkpoints and chain only when there are some (a short terminal keeps
    its room for the conversation)."""
    rows = [
        ("window", Text(window_phrase(report.session.context))),
        ("trend", _trend(report)),
        ("levels", _levels(report)),
    ]
    if report.breakdown:
        rows.insert(2, ("parts", _breakdown(report)))
    if report.checkpoints:
        rows.append(("marks", _checkpoints(report)))
    if len(report.chain) > 1 or report.handoffs:
        rows.append(("chain", _chain(report)))
    return rows
