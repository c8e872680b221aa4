"""The full-screen transcript view (ctrl+t): one session, from its newest message back.

It opens at the end of the conversation and pages back on request (alt+up);
an imported transcript is read backwards from the end of its file one page at
a time, never whole. Typing goes to the find field at the bottom: enter finds
the next older message holding the text (searching the file back from the
last match only as far as the next one). A details header names the session
fully: id, times, folder, branch, file, size, model and context window, and its
context report: the window's source, trend, breakdown, levels, checkpoints, chain.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import ClassVar

from rich.console import Console, RenderableType
from rich.text import Text
from textual import getters, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from core.clock import Clock
from core.config import ContextSettings
from core.errors import DelegateError
from core.models import (
    ContextDocument,
    ContextReport,
    Message,
    MessagePage,
    Session,
    TranscriptDetails,
)
from core.orchestrator import AgentOrchestrator
from tui.capsules.panel import capsule_document
from tui.shared import formatting as fmt
from tui.shared.context_levels import ThresholdsFor
from tui.shared.safe_text import first_line, visible
from tui.shared.workers import ForwardsWorkerErrors
from tui.widgets.context_details import capsule_row, report_rows
from tui.widgets.context_meter import meter_text
from tui.widgets.message_view import message_renderable

PAGE_SIZE = 40
"""Messages read per page: enough to fill a tall terminal, little to read from the file."""


def _moment(at: datetime, now: datetime) -> str:
    """``2026-11-21 20:55 UTC (5m ago)``: absolute and relative."""
    return f"{at.astimezone(UTC):%Y-%m-%d %H:%M} UTC ({fmt.ago(at, now)})"


def details_text(
    session: Session,
    details: TranscriptDetails | None,
    now: datetime,
    *,
    thresholds: ContextSettings,
    report: ContextReport | None = None,
    capsule: ContextDocument | None = None,
) -> Text:
    """The header: what the session is, where it lives and how full it is (with
    ``report``: the window's source, trend, breakdown, levels, checkpoints, chain;
    the capsule it was launched with, ``capsule`` its registry row)."""
    text = Text()
    text.append(first_line(session.shown_title or "(untitled)", 200), "bold")
    text.append("\n")
    rows: list[tuple[str, str]] = [
        ("id", session.conversation_id),
        (
            "when",
            f"created {_moment(session.created_at, now)}"
            f" · updated {_moment(session.last_interacted_at, now)}",
        ),
        ("where", session.cwd + (f" · branch {session.git_branch}" if session.git_branch else "")),
    ]
    if details is not None:
        rows.append(("file", f"{details.path} · {fmt.size(details.size)}"))
    window = fmt.tokens(session.context.limit_tokens) if session.context.limit_tokens else "unknown"
    model = details.model if details is not None and details.model else session.context.model
    rows.append(("model", f"{model or 'model not recorded'} · context window {window}"))
    for label, value in rows:
        text.append(f"{label:>6}  ", "dim")
        text.append(visible(value))
        text.append("\n")
    text.append(f"{'used':>6}  ", "dim")
    text.append_text(meter_text(session.context, thresholds=thresholds, bar_width=20))
    if session.capsule_id:
        text.append(f"\n{'with':>6}  ", "dim")
        text.append_text(capsule_row(session, capsule))
    for label, shown in report_rows(report) if report is not None else []:
        text.append(f"\n{label:>6}  ", "dim")
        text.append_text(shown)
    return text


class TranscriptMessage(Static):
    """One message of the view; ``.match`` while it is the found one."""

    DEFAULT_CSS = """
    TranscriptMessage { margin-bottom: 1; }
    TranscriptMessage.match { background: $warning 20%; }
    """

    def __init__(self, message: Message, body: RenderableType) -> None:
        super().__init__(body)
        self.message = message
        self.body = body

    def show(self, body: RenderableType) -> None:
        self.body = body
        self.update(body)

    def plain(self, width: int = 200) -> str:
        """What the message shows, as plain text."""
        console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
        console.print(self.body)
        return console.export_text()


class TranscriptScreen(ForwardsWorkerErrors, Screen[None]):
    """One session's whole conversation, read from the end, with find."""

    DEFAULT_CSS = """
    TranscriptScreen #transcript-details {
        dock: top; padding: 0 1 1 1; border-bottom: solid $primary;
    }
    TranscriptScreen #transcript-messages { padding: 0 1; }
    TranscriptScreen #transcript-older { color: $text-muted; }
    TranscriptScreen #transcript-find { dock: bottom; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "back",
            "Back",
            id="transcript.back",
            tooltip="Clear the find field; when empty, back to the sessions",
        ),
        Binding("ctrl+t", "close", "Close", id="transcript.close", show=False),
        Binding(
            "alt+up",
            "older",
            "Older",
            id="transcript.older",
            priority=True,
            tooltip="Read an older page of the conversation",
        ),
        Binding(
            "alt+down",
            "newest",
            "Newest",
            id="transcript.newest",
            priority=True,
            tooltip="Back to the newest messages",
        ),
        Binding(
            "ctrl+o",
            "expand",
            "Expand",
            id="transcript.expand",
            priority=True,
            tooltip="Show long messages whole, or cut again",
        ),
        Binding("pageup", "scroll_page(-1)", show=False, priority=True),
        Binding("pagedown", "scroll_page(1)", show=False, priority=True),
    ]

    details = getters.query_one("#transcript-details", Static)
    body = getters.query_one("#transcript-messages", VerticalScroll)
    older_note = getters.query_one("#transcript-older", Static)
    find = getters.query_one("#transcript-find", Input)

    def __init__(
        self,
        orchestrator: AgentOrchestrator,
        session: Session,
        clock: Clock,
        *,
        page_size: int = PAGE_SIZE,
        thresholds: ThresholdsFor | None = None,
    ) -> None:
        super().__init__()
        self.orchestrator = orchestrator
        self.thresholds = (thresholds or (lambda cwd: orchestrator.settings.context))(session.cwd)
        self.session = session
        self.clock = clock
        self.page_size = page_size
        self.expanded = False
        self.loaded = False  # the first page is on screen
        self.details_loaded = False  # the details header has its full figures
        self._end_pending = False  # a scroll to the newest message waits for a refresh
        self._messages: list[Message] = []  # oldest first, as shown
        self._older_cursor: str | None = None
        # Messages newer than the window (None after a find jump: the window's
        # place in the conversation is not known, so messages go unnumbered).
        self._newer: int | None = 0
        self._query = ""
        self._resume: str | None = None  # where the next find continues
        self._match_id: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(
            details_text(self.session, None, self.clock(), thresholds=self.thresholds),
            id="transcript-details",
        )
        with VerticalScroll(id="transcript-messages"):
            yield Static(id="transcript-older")
        yield Input(
            placeholder="find in this conversation · enter: next older match · esc: clear",
            id="transcript-find",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.find.focus()
        self._load_details()
        self._load_newest()

    # --- what tests and people read --------------------------------------

    def messages_text(self) -> str:
        """What the window shows of its messages, as plain text (oldest first)."""
        return "\n".join(widget.plain() for widget in self._widgets())

    def match_text(self) -> str | None:
        """The found message's text, while one is highlighted."""
        found = next((m for m in self._messages if m.id == self._match_id), None)
        return found.content if found is not None else None

    # --- loading ---------------------------------------------------------

    @work(group="transcript-details", name="reading the transcript's details", exit_on_error=False)
    async def _load_details(self) -> None:
        session = self.session
        report: ContextReport | None = None
        capsule: ContextDocument | None = None
        try:
            session = await self.orchestrator.get_session(session.conversation_id)
            details = await self.orchestrator.transcript_details(session.conversation_id)
            report = await self.orchestrator.context_report(session.conversation_id)
            if session.capsule_id:
                capsule = await capsule_document(self.orchestrator, session.capsule_id)
        except DelegateError:
            details = None
        self.session = session
        # The full details are taller: a window scrolled to its newest message stays there,
        # as does one about to be (that scroll waits for a refresh, which may come before
        # the details' own layout and leave it short of the end).
        at_end = self._end_pending or self.body.is_vertical_scroll_end
        self.details.update(
            details_text(
                session,
                details,
                self.clock(),
                thresholds=self.thresholds,
                report=report,
                capsule=capsule,
            )
        )
        if at_end:
            self._end_pending = True
            self.call_after_refresh(self._scroll_to_newest)
        self.details_loaded = True

    @work(group="transcript", name="reading the transcript", exclusive=True, exit_on_error=False)
    async def _load_newest(self) -> None:
        try:
            page = await self.orchestrator.recent_messages(
                self.session.conversation_id, self.page_size
            )
        except DelegateError as exc:
            self.notify(exc.message, severity="error")
            return
        self._newer = 0
        self._match_id = None
        await self._show(page, replace=True)

    @work(group="transcript", name="reading older messages", exclusive=True, exit_on_error=False)
    async def _load_older(self) -> None:
        if self._older_cursor is None:
            return
        try:
            page = await self.orchestrator.recent_messages(
                self.session.conversation_id, self.page_size, self._older_cursor
            )
        except DelegateError as exc:
            self.notify(exc.message, severity="error")
            return
        await self._show(page, replace=False)

    @work(group="transcript", name="finding in the transcript", exclusive=True, exit_on_error=False)
    async def _find(self, query: str, cursor: str | None) -> None:
        try:
            match = await self.orchestrator.find_message(
                self.session.conversation_id, query, self.page_size, cursor
            )
        except DelegateError as exc:
            self.notify(exc.message, severity="warning")
            return
        if match is None:
            where = "older match" if cursor is not None else "match"
            self.notify(f"No {where} for {first_line(query, 60)!r}.", timeout=3)
            self._resume = cursor
            return
        self._resume = match.resume_cursor
        self._match_id = match.message_id
        self._newer = None  # a jump: where this page sits is not known
        await self._show(match.page, replace=True)

    async def _show(self, page: MessagePage, *, replace: bool) -> None:
        """Put a page in the window: instead of it (newest or a match), or above it (older)."""
        oldest_first = list(reversed(page.messages))
        anchor = None if replace or not self._messages else self._widgets()[0]
        if replace:
            await self.body.query(TranscriptMessage).remove()
            self._messages = oldest_first
        else:
            self._messages = oldest_first + self._messages
        self._older_cursor = page.next_cursor
        numbers = self._numbering()
        now = self.clock()
        widgets = [
            TranscriptMessage(m, self._message_body(m, numbers.get(m.id), now))
            for m in oldest_first
        ]
        for widget in widgets:
            widget.set_class(widget.message.id == self._match_id, "match")
        await self.body.mount_all(widgets, after=self.older_note)
        if not replace:
            self._renumber(numbers)
        self._note_older()
        self.loaded = True
        if anchor is not None:  # older messages above: keep reading where we were
            self.call_after_refresh(self.body.scroll_to_widget, anchor, animate=False, top=True)
        elif self._match_id is not None:
            target = next(w for w in widgets if w.message.id == self._match_id)
            self.call_after_refresh(self.body.scroll_to_widget, target, animate=False, top=True)
        else:
            self._end_pending = True
            self.call_after_refresh(self._scroll_to_newest)

    def _scroll_to_newest(self) -> None:
        """Once laid out: to the end, now (not after yet another refresh)."""
        self.body.scroll_end(animate=False, immediate=True)
        self._end_pending = False

    def _numbering(self) -> dict[str, int]:
        """Each message's number in the conversation, when the window's place is known."""
        if self._newer is None:
            return {}
        total = max(self.session.metrics.messages, self._newer + len(self._messages))
        count = len(self._messages)
        return {m.id: total - self._newer - (count - 1 - i) for i, m in enumerate(self._messages)}

    def _message_body(self, message: Message, number: int | None, now: datetime) -> RenderableType:
        return message_renderable(message, now, number=number, expanded=self.expanded)

    def _widgets(self) -> list[TranscriptMessage]:
        return list(self.body.query(TranscriptMessage))

    def _renumber(self, numbers: dict[str, int]) -> None:
        now = self.clock()
        for widget in self._widgets():
            widget.show(self._message_body(widget.message, numbers.get(widget.message.id), now))

    def _note_older(self) -> None:
        self.older_note.update(
            Text("… older messages: alt+up", "dim italic") if self._older_cursor else ""
        )
        self.older_note.display = self._older_cursor is not None

    # --- actions ---------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        query = event.value.strip()
        if not query:
            return
        cursor = self._resume if query == self._query else None
        self._query = query
        self._find(query, cursor)

    def action_back(self) -> None:
        if self.find.value:
            self.find.value = ""
            self._query, self._resume = "", None
            return
        self.dismiss()

    def action_close(self) -> None:
        self.dismiss()

    def action_older(self) -> None:
        if self._older_cursor is None:
            self.notify("This is the start of the conversation.", timeout=2)
            return
        self._load_older()

    def action_newest(self) -> None:
        self._load_newest()

    def action_expand(self) -> None:
        self.expanded = not self.expanded
        self._renumber(self._numbering())

    def action_scroll_page(self, direction: int) -> None:
        if direction < 0:
            self.body.scroll_page_up(animate=False)
        else:
            self.body.scroll_page_down(animate=False)
