"""Output of the human CLI commands: Rich tables on a terminal, plain lines in a pipe.

Everything that came from a transcript (titles, folders, messages, prompts,
errors) passes through :func:`shown` first: secrets masked, control characters
spelled out, so no transcript can clear, retitle or recolour the terminal. Rich
markup is never parsed from such text (``Text(...)``, never a markup string).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from rich.console import Console
from rich.table import Table
from rich.text import Text

from core.events import HistoryEvent
from core.models import MessageCategory, MessagePage, Session, SessionPage
from core.redact import redact
from tui.shared import formatting as fmt
from tui.shared.safe_text import visible

# Below this width the list keeps id, title, state and age, and drops the rest.
WIDE_LIST_COLUMNS = 120
MAX_WHERE = 40


def shown(text: str) -> str:
    """Transcript text as it may reach a terminal: secrets masked, controls escaped."""
    return visible(redact(text))


def make_console(*, plain: bool = False) -> Console:
    """The console of one command; ``plain`` (or a pipe) means no styles, no wrapping."""
    return Console(highlight=False, emoji=False, force_terminal=False if plain else None)


def is_plain(console: Console) -> bool:
    """Plain lines (tab-separated, full ids) when not a terminal or when asked for."""
    return not console.is_terminal


def _label(ids: Mapping[str, str], conversation_id: str) -> str:
    return ids.get(conversation_id, conversation_id)


def sessions_table(
    console: Console, page: SessionPage, now: datetime, ids: Mapping[str, str]
) -> None:
    """One page of sessions; ``ids`` maps each id to the prefix to print for it."""
    if not page.sessions:
        console.print("No reusable sessions. Try `delegate demo` or `delegate run`.", markup=False)
        return
    if is_plain(console):
        _plain_sessions(console, page, now)
        return
    wide = console.width >= WIDE_LIST_COLUMNS
    columns = ["id", "agent", "state", "title", "where", "last", "turns", "context", "size"]
    if not wide:
        columns = ["id", "state", "title", "last"]
    rows: list[dict[str, str]] = []
    for s in page.sessions:
        cells = {
            "id": _label(ids, s.conversation_id),
            "agent": shown(s.agent_id),
            "state": _state(s, ids),
            "title": shown(s.shown_title) or "(untitled)",
            "where": shown(s.cwd + (f" · {s.git_branch}" if s.git_branch else "")),
            "last": fmt.ago(s.last_interacted_at, now),
            "turns": _turns(s),
            "context": fmt.meter(s.context),
            "size": fmt.size(s.metrics.bytes),
        }
        rows.append({c: " ".join(cells[c].split("\n")) for c in columns})
    # Every column but the title keeps its width; the title gets what is left.
    widths = {
        c: min(MAX_WHERE, max(len(c), *(len(r[c]) for r in rows)))
        if c == "where"
        else max(len(c), *(len(r[c]) for r in rows))
        for c in columns
        if c != "title"
    }
    title_width = max(12, console.width - sum(widths.values()) - 2 * (len(columns) - 1))
    table = Table(box=None, header_style="bold", pad_edge=False, expand=False)
    for c in columns:
        width = title_width if c == "title" else widths[c]
        table.add_column(
            c, no_wrap=True, overflow="ellipsis", max_width=width, style="cyan" if c == "id" else ""
        )
    for r in rows:
        table.add_row(*(Text(r[c]) for c in columns))  # Text(): never parse markup
    console.print(table)
    if page.next_cursor:
        # soft_wrap: a long cursor is never broken by an inserted newline, so it copies whole.
        console.print(
            Text(f"more: --cursor {page.next_cursor}", style="dim"), soft_wrap=True, crop=False
        )


def _state(session: Session, ids: Mapping[str, str]) -> str:
    """Its state; a session that handed off names the one its work continues in."""
    if session.continued_in is None:
        return session.state.value
    successor = session.continued_in
    # On a terminal, a short form (the full id is in `sessions show` and the plain rows).
    named = ids.get(successor, fmt.short_id(successor)) if ids else successor
    return f"{session.state.value} → {named}"


def _turns(session: Session) -> str:
    """Its turns, or "…" while an import still counts them (listed, not read in full)."""
    return "…" if session.counting else str(session.metrics.turns)


def _plain_sessions(console: Console, page: SessionPage, now: datetime) -> None:
    """Tab-separated rows with full ids, for ``cut``, ``grep`` and ``--plain``."""
    columns = ("id", "agent", "state", "last", "turns", "context", "where", "title")
    lines = ["\t".join(columns)]
    for s in page.sessions:
        where = s.cwd + (f" · {s.git_branch}" if s.git_branch else "")
        cells = (
            s.conversation_id,
            s.agent_id,
            _state(s, {}),
            fmt.ago(s.last_interacted_at, now),
            _turns(s),
            fmt.meter(s.context),
            where,
            s.shown_title or "(untitled)",
        )
        lines.append("\t".join(_cell(c) for c in cells))
    if page.next_cursor:
        lines.append(f"more: --cursor {page.next_cursor}")
    _write(console, lines)


def _cell(text: str) -> str:
    """One tab-separated cell: shown, and never a tab or newline that breaks the row."""
    return shown(text).replace("\t", " ").replace("\n", " ")


def _write(console: Console, lines: Sequence[str]) -> None:
    console.file.write("".join(f"{line}\n" for line in lines))
    console.file.flush()


def session_detail(
    console: Console, session: Session, page: MessagePage, now: datetime, *, newest: bool = True
) -> None:
    """The session and a page of its messages, oldest first.

    ``newest``: the page is the newest one, so its messages are numbered in
    conversation order (``#1`` is the first); an older page's place is not known.
    """
    console.print(
        Text.assemble(
            (session.conversation_id, "bold"),
            f"  {shown(session.agent_id)} · {session.state.value} · {fmt.meter(session.context)}"
            f" · {fmt.ago(session.last_interacted_at, now)}",
        )
    )
    console.print(Text(shown(session.shown_title), style="italic"))
    if session.continued_in is not None:
        console.print(Text(f"handed off: its work continues in {session.continued_in}"))
    if session.continued_from is not None:
        console.print(Text(f"continues the work of {session.continued_from}", style="dim"))
    total = max(session.metrics.messages, len(page.messages))
    for back, message in reversed(list(enumerate(page.messages))):  # oldest of the page first
        tool = fmt.tool_label(message)
        label = message.role.value + (f" ({tool})" if tool else "")
        if message.category is MessageCategory.CONTEXT:  # material carried, not said
            label += " (context)"
        number = f" · #{total - back}" if newest else ""
        console.print(Text(f"\n{label}{number}", style="bold cyan"))
        console.print(Text(shown(message.content)))
    if page.next_cursor:
        console.print(
            Text(f"\nolder: --cursor {page.next_cursor}", style="dim"), soft_wrap=True, crop=False
        )


def history_table(
    console: Console, events: Sequence[HistoryEvent], now: datetime, ids: Mapping[str, str]
) -> None:
    from tui.history_detail import detail

    rows = []
    for e in events:
        first = shown(detail(e).strip()).split("\n", 1)[0]
        rows.append(
            (
                fmt.ago(e.at, now),
                e.kind.replace("_", " "),
                shown(e.agent_id),
                e.conversation_id,
                first,
            )
        )
    if is_plain(console):
        header = "\t".join(("when", "event", "agent", "conversation", "detail"))
        _write(console, [header, *("\t".join(_cell(c) for c in row) for row in rows)])
        return
    shown_rows = [
        (when, kind, agent, _label(ids, cid), first) for when, kind, agent, cid, first in rows
    ]
    table = Table(box=None, header_style="bold", pad_edge=False, expand=True)
    for at, column in enumerate(("when", "event", "agent", "conversation")):
        # The short columns keep their width (an agent's name up to a bound): the detail
        # gives way, so a long detail never cuts an event's kind or its session.
        widest = max((len(row[at]) for row in shown_rows), default=0)
        table.add_column(column, no_wrap=True, overflow="ellipsis", min_width=min(widest, 20))
    table.add_column("detail", no_wrap=True, overflow="ellipsis", ratio=1)
    for when, kind, agent, cid, first in shown_rows:
        table.add_row(when, kind, agent, cid, Text(first))
    console.print(table)


def agents_listing(console: Console, agents: Mapping[str, Mapping[str, object]]) -> None:
    """The configured agents, the default starred; descriptions are config values (redacted)."""
    for name, a in agents.items():
        star = "*" if a["default"] else " "
        missing = "" if a.get("installed", True) else "  (not installed)"
        line = (
            f"{star} {name:<12} {a['runner']!s:<10} {a['context_limit']!s:>8}  {a['description']}"
            f"{missing}"
        )
        console.print(Text(shown(line)), soft_wrap=True)
