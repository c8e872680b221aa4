"""The picker's list: one two-line row per reusable session, paged on demand."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.cache import LRUCache
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from core.clock import Clock
from core.models import RunStatus, Session, SessionPage, SessionState
from tui import formatting as fmt
from tui.safe_text import first_line
from tui.widgets.context_meter import meter_text
from tui.workers import ForwardsWorkerErrors

# (rows per page, cursor or None for the first page, filter query or None) -> a page
PageFetcher = Callable[[int, str | None, str | None], Awaitable[SessionPage]]
PAGE_SIZE = 25
# Load the next page when the highlight comes this close to the last loaded row.
PREFETCH_ROWS = 10
# Rendered rows kept for repainting (OptionList keeps 2,048): a few screens' worth.
RENDER_CACHE_ROWS = 128

STATE_BADGES = {
    SessionState.IDLE: ("idle", "green"),
    SessionState.RUNNING: ("running", "bold yellow"),
    SessionState.PENDING: ("pending", "magenta"),
    SessionState.READY: ("ready", "bold cyan"),
    SessionState.HANDED_OFF: ("handed-off", "dim"),
}


def session_row(session: Session, now: datetime) -> Group:
    """Line 1: badge, agent, title. Line 2: where, age, turns, context meter.

    Each line is cut with an ellipsis rather than wrapped, so rows keep two lines.
    """
    label, style = STATE_BADGES[session.state]
    top = Text(no_wrap=True, overflow="ellipsis")
    top.append(f"{label:<8} ", style)
    top.append(f"{session.agent_id:<11}", "bold")
    # The source matters only when it says more than the agent does.
    if session.source not in ("delegate", session.agent_id):
        top.append(f"({session.source}) ", "dim")
    top.append(" ")
    if session.parent_id:
        top.append("↳ ", "dim")  # a sub-agent of another session
    top.append(first_line(session.title or "(untitled)", 160))
    if session.last_run_status is RunStatus.FAILED:
        top.append("  ✗ last run failed", "red")
    elif session.last_run_status is RunStatus.INTERRUPTED:
        top.append("  ⚠ last run interrupted", "dark_orange")
    elif session.last_run_status is RunStatus.CANCELLED:
        top.append("  ■ last run cancelled", "yellow")
    bottom = Text(no_wrap=True, overflow="ellipsis")
    bottom.append(" " * 9)
    bottom.append(f"{fmt.ago(session.last_interacted_at, now):>8} · ", "dim")
    bottom.append_text(meter_text(session.context, bar_width=0))
    turns = session.metrics.turns
    bottom.append(f" · {turns} turn{'' if turns == 1 else 's'} · ", "dim")
    where = session.cwd + (f" · {session.git_branch}" if session.git_branch else "")
    bottom.append(first_line(where, 80), "dim")
    return Group(top, bottom)


class SessionList(ForwardsWorkerErrors, OptionList):
    """Reusable sessions, newest first; the next keyset page loads near the end."""

    DEFAULT_CSS = """
    SessionList { height: 1fr; border: none; padding: 0; }
    SessionList > .option-list--option { padding: 0 1; }
    """

    class Highlighted(Message):
        """A session got the highlight. Handle with ``on_session_list_highlighted``."""

        def __init__(self, session: Session) -> None:
            super().__init__()
            self.session = session

    class Chosen(Message):
        """Enter on a session. Handle with ``on_session_list_chosen``."""

        def __init__(self, session: Session) -> None:
            super().__init__()
            self.session = session

    class Loaded(Message):
        """A page arrived; ``first`` when it replaced the list."""

        def __init__(self, first: bool, count: int) -> None:
            super().__init__()
            self.first = first
            self.count = count

    def __init__(
        self,
        fetch: PageFetcher,
        clock: Clock,
        *,
        page_size: int = PAGE_SIZE,
        is_hidden: Callable[[str], bool] = lambda conversation_id: False,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        # Every cached row holds dozens of objects that each full garbage collection
        # walks; after scrolling far, 2,048 of them made those pauses long.
        self._option_render_cache = LRUCache(maxsize=RENDER_CACHE_ROWS)
        self._fetch = fetch
        self._clock = clock
        self.page_size = page_size
        # Rows inside their undo window stay hidden, whatever reloads the list.
        self._is_hidden = is_hidden
        self.filter_query = ""
        self.sessions: list[Session] = []
        self._next_cursor: str | None = None
        self._loading = False
        self._generation = 0

    @property
    def highlighted_session(self) -> Session | None:
        if self.highlighted is None or self.highlighted >= len(self.sessions):
            return None
        return self.sessions[self.highlighted]

    @property
    def has_more(self) -> bool:
        return self._next_cursor is not None

    def reload(self, keep: str | None = None) -> None:
        """Start over from the first page (the store changed); keep ``keep`` highlighted."""
        self._generation += 1
        self._load(None, self._generation, keep)

    def set_query(self, query: str) -> None:
        """Show only the sessions matching ``query`` ("" shows every session)."""
        self.filter_query = query
        self.reload()

    @work(group="session-pages", name="loading sessions", exclusive=True, exit_on_error=False)
    async def _load(self, cursor: str | None, generation: int, keep: str | None = None) -> None:
        self._loading = True
        try:
            page = await self._fetch(self.page_size, cursor, self.filter_query or None)
        finally:
            self._loading = False
        if generation != self._generation:
            return  # a newer reload superseded this page
        now = self._clock()
        shown = [s for s in page.sessions if not self._is_hidden(s.conversation_id)]
        options = [Option(session_row(s, now), id=s.conversation_id) for s in shown]
        first = cursor is None
        if first:
            self.sessions = shown
            self.set_options(options)
            index = next((i for i, s in enumerate(self.sessions) if s.conversation_id == keep), 0)
            self.highlighted = index if self.sessions else None
        else:
            self.sessions.extend(shown)
            self.add_options(options)
        self._next_cursor = page.next_cursor
        self.post_message(self.Loaded(first, len(shown)))

    def _maybe_load_more(self) -> None:
        near_end = (self.highlighted or 0) >= len(self.sessions) - PREFETCH_ROWS
        if near_end and self._next_cursor and not self._loading:
            self._loading = True
            self._load(self._next_cursor, self._generation)

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        session = self.highlighted_session
        if session is not None:
            self.post_message(self.Highlighted(session))
        self._maybe_load_more()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        session = self.highlighted_session
        if session is not None:
            self.post_message(self.Chosen(session))

    def replace_session(self, session: Session) -> None:
        """Refresh one row in place (state or metrics changed)."""
        for index, known in enumerate(self.sessions):
            if known.conversation_id == session.conversation_id:
                self.sessions[index] = session
                self.replace_option_prompt_at_index(index, session_row(session, self._clock()))
                return

    def index_of(self, conversation_id: str) -> int | None:
        return next(
            (i for i, s in enumerate(self.sessions) if s.conversation_id == conversation_id), None
        )

    def highlight(self, conversation_id: str) -> bool:
        """Move the highlight to that session; False when it is not listed."""
        index = self.index_of(conversation_id)
        if index is not None:
            self.highlighted = index
        return index is not None

    def remove_session(self, conversation_id: str) -> Session | None:
        for index, known in enumerate(self.sessions):
            if known.conversation_id == conversation_id:
                self.sessions.pop(index)
                self.remove_option_at_index(index)
                return known
        return None

    def insert_session(self, session: Session, index: int = 0) -> None:
        """Put a session back (undo) or in front (a new launch), keeping the highlight."""
        keep = self.highlighted_session
        self.remove_session(session.conversation_id)
        self.sessions.insert(min(index, len(self.sessions)), session)
        now = self._clock()
        self.set_options([Option(session_row(s, now), id=s.conversation_id) for s in self.sessions])
        target = keep.conversation_id if keep else session.conversation_id
        self.highlighted = next(
            (i for i, s in enumerate(self.sessions) if s.conversation_id == target), 0
        )
