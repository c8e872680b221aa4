"""Rich output of the human CLI commands (tables and message lists)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.console import Console
from rich.table import Table
from rich.text import Text

from core.events import HistoryEvent
from core.models import MessagePage, Session, SessionPage
from tui import formatting as fmt

console = Console(highlight=False)


def sessions_table(page: SessionPage, now: datetime) -> None:
    if not page.sessions:
        console.print("No reusable sessions. Try [bold]delegate demo[/] or [bold]delegate run[/].")
        return
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("id", "agent", "state", "title", "where", "last", "turns", "context", "size"):
        table.add_column(column, no_wrap=column != "title", overflow="ellipsis")
    for s in page.sessions:
        where = s.cwd + (f" · {s.git_branch}" if s.git_branch else "")
        table.add_row(
            fmt.short_id(s.conversation_id),
            s.agent_id,
            s.state.value,
            Text(s.title),  # Text(): never interpret markup that came from a prompt
            Text(where),
            fmt.ago(s.last_interacted_at, now),
            str(s.metrics.turns),
            fmt.meter(s.context),
            fmt.size(s.metrics.bytes),
        )
    console.print(table)
    if page.next_cursor:
        console.print(f"[dim]more: --cursor {page.next_cursor}[/]")


def session_detail(session: Session, page: MessagePage, now: datetime) -> None:
    console.print(
        Text.assemble(
            (session.conversation_id, "bold"),
            f"  {session.agent_id} · {session.state.value} · {fmt.meter(session.context)}"
            f" · {fmt.ago(session.last_interacted_at, now)}",
        )
    )
    console.print(Text(session.title, style="italic"))
    for message in reversed(page.messages):  # oldest of the page first, like a transcript
        label = message.role.value + (f" ({message.tool['name']})" if message.tool else "")
        console.print(Text(f"\n{label} · #{message.seq}", style="bold cyan"))
        console.print(Text(message.content))
    if page.next_cursor:
        console.print(f"\n[dim]older: --cursor {page.next_cursor}[/]")


def history_table(events: Sequence[HistoryEvent], now: datetime) -> None:
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("when", "event", "agent", "conversation", "detail"):
        table.add_column(column, no_wrap=column != "detail")
    for e in events:
        detail = getattr(e, "prompt", "") or getattr(e, "title", "")
        status = getattr(e, "status", None)
        if status is not None:
            detail = f"{status.value} · {getattr(e, 'duration_s', 0):.1f}s · {detail}"
        table.add_row(
            fmt.ago(e.at, now),
            e.kind.replace("_", " "),
            getattr(e, "agent_id", ""),
            fmt.short_id(e.conversation_id),
            Text(detail.splitlines()[0] if detail else ""),
        )
    console.print(table)
