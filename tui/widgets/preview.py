"""The preview pane: the last N messages of the highlighted session, paged."""

from __future__ import annotations

from datetime import datetime

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.text import Text
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.reactive import reactive
from textual.widgets import Static

from core.models import Message, MessagePage, Role, Session
from tui import formatting as fmt
from tui.safe_text import clip_lines, first_line, visible
from tui.widgets.context_meter import meter_text

MAX_MESSAGE_LINES = 12
ROLE_STYLES = {
    Role.USER: "bold blue",
    Role.ASSISTANT: "bold green",
    Role.SYSTEM: "bold red",
    Role.TOOL: "bold magenta",
}


def message_renderable(message: Message, now: datetime) -> RenderableType:
    """A role label, then the content as Markdown (cut after a few lines).

    Tool messages collapse to one line. Content is sanitised first, and Markdown
    never interprets Rich markup, so transcript text cannot style or move the screen.
    """
    label = Text()
    label.append(message.role.value, ROLE_STYLES[message.role])
    label.append(f"  #{message.seq} · {fmt.ago(message.created_at, now)}", "dim")
    name = fmt.tool_label(message)
    if name is not None:
        # Tool calls collapse to one line: "▸ name: first line of the result".
        summary = first_line(message.content, 70)
        if summary.startswith(f"{name}:"):
            summary = summary[len(name) + 1 :].strip()
        label.append("  ▸ ", "magenta")
        label.append(f"{name}: {summary}")
        return label
    body, hidden = clip_lines(visible(message.content), MAX_MESSAGE_LINES)
    parts: list[RenderableType] = [label, Markdown(body) if body.strip() else Text("(empty)")]
    if hidden:
        parts.append(Text(f"… {hidden} more lines", "dim italic"))
    return Group(*parts)


class PreviewPane(VerticalScroll):
    """Header of the session, its page of messages (oldest at top), a live reply."""

    DEFAULT_CSS = """
    PreviewPane { height: 1fr; padding: 0 1; }
    PreviewPane > #preview-header { margin-bottom: 1; }
    PreviewPane > .preview-message { margin-bottom: 1; }
    PreviewPane > #preview-live { color: $text-success; }
    PreviewPane > #preview-footer { color: $text-muted; }
    """

    page_number: reactive[int] = reactive(1)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.session: Session | None = None
        self._live = ""
        self._follow_end = True

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(Text("Nothing selected", "dim"), id="preview-header")
        yield Static(id="preview-messages")
        yield Static(id="preview-live")
        yield Static(id="preview-footer")

    def show(
        self,
        session: Session,
        page: MessagePage,
        now: datetime,
        *,
        page_number: int,
        has_newer: bool,
        size: int,
    ) -> None:
        self.session = session
        self.page_number = page_number
        header = Text()
        header.append(first_line(session.title or "(untitled)", 200), "bold")
        header.append("\n")
        header.append(f"{session.agent_id} · {session.mode.value} · {session.state.value}", "dim")
        header.append(f" · {fmt.size(session.metrics.bytes)} · ", "dim")
        header.append_text(meter_text(session.context, bar_width=10))
        header.append(f"\n{session.conversation_id}", "dim")
        self.query_one("#preview-header", Static).update(header)
        messages = [message_renderable(m, now) for m in reversed(page.messages)]
        body: RenderableType = (
            Group(*messages) if messages else Text("No messages yet.", "dim italic")
        )
        self.query_one("#preview-messages", Static).update(body)
        self._live = ""
        self.query_one("#preview-live", Static).update("")
        hints = []
        if page.next_cursor:
            hints.append("[ older")
        if has_newer:
            hints.append("] newer")
        where = f"page {page_number} · last {size} messages per page"
        footer = where + ("  ·  " + "  ".join(hints) if hints else "")
        self.query_one("#preview-footer", Static).update(Text(footer))
        # The newest page shows its end; older pages read from their top.
        self._follow_end = page_number == 1
        if self._follow_end:
            self.scroll_end(animate=False)
        else:
            self.scroll_home(animate=False)

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        # The new content's height is only known once laid out, which may come
        # after the scroll asked for in show(): keep the end in view then too.
        if self._follow_end and new.height != old.height:
            self.scroll_end(animate=False)

    def show_empty(self, text: str) -> None:
        self.session = None
        self.query_one("#preview-header", Static).update(Text(text, "dim"))
        for part in ("#preview-messages", "#preview-live", "#preview-footer"):
            self.query_one(part, Static).update("")

    def append_live(self, conversation_id: str, text: str) -> None:
        """A streamed chunk of a reply for the session on show."""
        if self.session is None or self.session.conversation_id != conversation_id:
            return
        self._live += text
        live = Text("assistant (streaming)\n", "bold green")
        live.append(visible(self._live))
        self.query_one("#preview-live", Static).update(live)
        self.scroll_end(animate=False)
