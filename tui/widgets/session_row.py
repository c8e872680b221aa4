"""How one session reads in the list: badge, agent, title, age, meter, and the
snippet a search matched, with the matched words highlighted.

Quiet states, loud signals: an ``idle`` session is dim; ``ready``, ``running``,
``pending`` and a meter past the first ``[context]`` threshold carry the colour.
"""

from __future__ import annotations

from datetime import datetime

from rich.console import Group
from rich.text import Text

from core.config import ContextSettings
from core.models import RunStatus, SearchSnippet, Session, SessionState
from tui.shared import formatting as fmt
from tui.shared.ages import AGE_WIDTH
from tui.shared.context_levels import DEFAULT_THRESHOLDS, level_style
from tui.shared.safe_text import first_line, visible
from tui.widgets.context_meter import meter_text

STATE_BADGES = {
    SessionState.IDLE: ("idle", "dim"),
    SessionState.RUNNING: ("running", "bold yellow"),
    SessionState.PENDING: ("pending", "bold magenta"),
    SessionState.READY: ("ready", "bold cyan"),
    SessionState.HANDED_OFF: ("handoff", "dim"),  # its work continues in a successor
}
# The words a search matched, inside the snippet shown under the row.
HIGHLIGHT_STYLE = "bold black on yellow"
SNIPPET_ROLES = {"title": "title", "user": "prompt", "assistant": "reply"}
BADGE_WIDTH = 9  # ``f"{label:<8} "``
INDENT = " " * BADGE_WIDTH  # under the title column's start, past the badge
CHILD_INDENT = "  "  # a sub-agent's row sits this far right of its parent's
AGENT_WIDTH = 12  # a compact row's ``f"{agent_id:<11} "``


def _title(session: Session, snippet: SearchSnippet | None) -> Text:
    """The shown title; a search that matched the title highlights the words in place."""
    if snippet is not None and snippet.role == "title" and session.name is None:
        return _highlighted(snippet)
    return Text(first_line(session.shown_title or "(untitled)", 160))


def _highlighted(snippet: SearchSnippet) -> Text:
    """The snippet's text with its matched words in ``HIGHLIGHT_STYLE``.

    Built piece by piece so the spans stay on their words even where a control
    character is spelled out (``\\x1b`` is four characters on screen, one in the text).
    """
    line = Text()
    text, at = snippet.text, 0
    for span in sorted(snippet.highlights, key=lambda s: s.start):
        start, end = max(span.start, at), min(span.end, len(text))
        if start >= end:
            continue
        line.append(visible(text[at:start]))
        line.append(visible(text[start:end]), HIGHLIGHT_STYLE)
        at = end
    line.append(visible(text[at:]))
    return line


def shows_snippet_line(session: Session, snippet: SearchSnippet | None) -> bool:
    """Whether the snippet gets a line of its own (not when it is the title on show)."""
    return snippet is not None and not (snippet.role == "title" and session.name is None)


def _top_line(session: Session, child: bool, snippet: SearchSnippet | None) -> Text:
    label, style = STATE_BADGES[session.state]
    top = Text(no_wrap=True, overflow="ellipsis")
    if child:
        top.append(CHILD_INDENT)
    top.append(f"{label:<8} ", style)
    top.append(f"{session.agent_id:<11}", "dim" if session.state is SessionState.IDLE else "bold")
    # The source matters only when it says more than the agent does.
    if session.source not in ("delegate", session.agent_id):
        top.append(f"({session.source}) ", "dim")
    top.append(" ")
    if child or session.parent_id:
        # A sub-agent: of the row above, or (a search result) of another session.
        top.append("↳ ", "dim")
    top.append_text(_title(session, snippet))
    return top


def _fold(session: Session, expanded: bool | None, *, short: bool = False) -> Text:
    """``▸ 2 sub-agents`` (folded) or ``▾ 2 sub-agents`` (listed under it); empty
    for a session without sub-agents or when they are not shown as a fold."""
    if expanded is None or not session.child_count:
        return Text()
    arrow = "▾" if expanded else "▸"
    if short:
        return Text(f"{arrow}{session.child_count} ", "cyan")
    plural = "" if session.child_count == 1 else "s"
    return Text(f"{arrow} {session.child_count} sub-agent{plural} · ", "cyan")


def _signals(session: Session) -> Text:
    """What follows the title: the session its work continues in, or the last run's trouble."""
    text = Text()
    if session.continued_in is not None:
        text.append(f"  → {fmt.short_id(visible(session.continued_in))}", "cyan")
    elif session.last_run_status is RunStatus.FAILED:
        text.append("  ✗ last run failed", "red")
    elif session.last_run_status is RunStatus.INTERRUPTED:
        text.append("  ⚠ last run interrupted", "dark_orange")
    elif session.last_run_status is RunStatus.CANCELLED:
        text.append("  ■ last run cancelled", "yellow")
    return text


def _turns(session: Session) -> str:
    """Its turns, or that an import is still counting them (listed from head and tail)."""
    if session.counting:
        return "counting…"
    turns = session.metrics.turns
    return f"{turns} turn{'' if turns == 1 else 's'}"


def _detail_line(
    session: Session,
    now: datetime,
    child: bool,
    expanded: bool | None,
    thresholds: ContextSettings,
) -> Text:
    bottom = Text(no_wrap=True, overflow="ellipsis")
    bottom.append((CHILD_INDENT if child else "") + INDENT)
    bottom.append(f"{fmt.ago(session.last_interacted_at, now):>{AGE_WIDTH}} · ", "dim")
    bottom.append_text(_fold(session, expanded))
    bottom.append_text(meter_text(session.context, thresholds=thresholds, bar_width=0))
    bottom.append(f" · {_turns(session)} · ", "dim")
    where = session.cwd + (f" · {session.git_branch}" if session.git_branch else "")
    bottom.append(first_line(where, 80), "dim")
    return bottom


def age_place(*, compact: bool) -> tuple[int, int]:
    """Where a top-level row's age is written: (line, column) within the row.

    A badge or agent id wider than its column pushes a compact row's age right;
    whoever relies on the place checks the age is there.
    """
    return (0, BADGE_WIDTH + AGENT_WIDTH) if compact else (1, len(INDENT))


def _compact_line(
    session: Session,
    now: datetime,
    child: bool,
    expanded: bool | None,
    snippet: SearchSnippet | None,
    thresholds: ContextSettings,
) -> Text:
    """One line: badge, agent, age, how much context is left, then the title."""
    label, style = STATE_BADGES[session.state]
    line = Text(no_wrap=True, overflow="ellipsis")
    if child:
        line.append(CHILD_INDENT)
    line.append(f"{label:<8} ", style)
    line.append(f"{session.agent_id:<11} ", "dim" if session.state is SessionState.IDLE else "bold")
    line.append(f"{fmt.ago(session.last_interacted_at, now):>{AGE_WIDTH}} ", "dim")
    context = session.context
    left = f"{round(context.left_fraction * 100)}% left" if context.limit_tokens else "?"
    line.append(f"{left:>9} ", level_style(context, thresholds) or "dim")
    if child or session.parent_id:
        line.append("↳ ", "dim")
    line.append_text(_fold(session, expanded, short=True))
    line.append_text(_title(session, snippet))
    line.append_text(_signals(session))
    return line


def snippet_line(snippet: SearchSnippet, *, child: bool = False) -> Text:
    """``prompt: …the words around the match…`` with the matched words highlighted."""
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append((CHILD_INDENT if child else "") + INDENT)
    line.append(f"{SNIPPET_ROLES.get(snippet.role, snippet.role)}: ", "dim italic")
    line.append_text(_highlighted(snippet))
    return line


def session_row(
    session: Session,
    now: datetime,
    *,
    snippet: SearchSnippet | None = None,
    compact: bool = False,
    child: bool = False,
    expanded: bool | None = None,
    thresholds: ContextSettings = DEFAULT_THRESHOLDS,
) -> Group:
    """The row: two lines (one when ``compact``), then the search snippet if any.

    ``expanded`` is None for a row whose sub-agents are not shown as a fold
    (hidden by the settings, or the row is itself a sub-agent), else whether its
    sub-agents are listed under it. ``thresholds`` colour the meter. Each line is cut
    with an ellipsis, never wrapped.
    """
    lines: list[Text] = []
    if compact:
        lines.append(_compact_line(session, now, child, expanded, snippet, thresholds))
    else:
        top = _top_line(session, child, snippet)
        top.append_text(_signals(session))
        lines += [top, _detail_line(session, now, child, expanded, thresholds)]
    if snippet is not None and shows_snippet_line(session, snippet):
        lines.append(snippet_line(snippet, child=child))
    return Group(*lines)
