"""The picker's list: a row per session (two lines, one when space is short), the
search's snippets under them, sub-agents folded under their parents; paged on demand."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import ClassVar

from rich.console import COLOR_SYSTEMS, Console
from rich.style import Style
from textual import events, on, work
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from core.clock import Clock, to_us
from core.errors import InvalidRequest
from core.models import SearchPage, SearchResult, SearchSnippet, Session
from tui.first_page import PageRows
from tui.shared.ages import AGE_WIDTH, ago
from tui.shared.context_levels import DEFAULT_THRESHOLDS, ThresholdsFor
from tui.shared.workers import ForwardsWorkerErrors
from tui.widgets.session_row import HIGHLIGHT_STYLE, age_place, session_row

__all__ = ["HIGHLIGHT_STYLE", "PAGE_SIZE", "PageFetcher", "SessionList", "session_row"]

# (rows per page, cursor or None for the first page, search query or None) -> a page;
# without a query every result's snippet is None.
PageFetcher = Callable[[int, str | None, str | None], Awaitable[SearchPage]]
# parent conversation id -> its sub-agent sessions, oldest first
ChildFetcher = Callable[[str], Awaitable[list[Session]]]
# A session's place in the list's order, greatest first: (sort time, conversation id),
# as the store orders its pages.
SortKey = Callable[[Session], tuple[datetime, str]]
PAGE_SIZE = 25
# Load the next page when the highlight comes this close to the last loaded row.
PREFETCH_ROWS = 10
# Rendered rows kept for repainting (OptionList keeps 2,048): a few screens' worth.
RENDER_CACHE_ROWS = 128
# Rows turn to one line when fewer than this many two-line rows would fit.
MIN_VISIBLE_SESSIONS = 8


def _colours(style: Style, console: Console) -> str:
    """The SGR sequence that sets ``style``'s colours as ``console`` writes them."""
    system = COLOR_SYSTEMS.get(console.color_system or "")
    if system is None:
        return ""
    shown = Style(color=style.color, bgcolor=style.bgcolor).render("x", color_system=system)
    return shown[: shown.index("x")]


class SessionList(ForwardsWorkerErrors, OptionList):
    """Reusable sessions (or search results, best first); the next keyset page
    loads near the end."""

    DEFAULT_CSS = """
    SessionList { height: 1fr; border: none; padding: 0; }
    /* Focus shows in the highlight's colour, never a border: the rows stay put. */
    SessionList:focus { border: none; }
    SessionList > .option-list--option { padding: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "unfold", "Sub-agents", show=False),
        Binding("left", "fold", "Fold", show=False),
    ]

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

    class QueryRefused(Message):
        """The search query cannot run (the list is empty); ``error`` says why."""

        def __init__(self, error: InvalidRequest) -> None:
            super().__init__()
            self.error = error

    def __init__(
        self,
        fetch: PageFetcher,
        clock: Clock,
        *,
        page_size: int = PAGE_SIZE,
        is_hidden: Callable[[str], bool] = lambda conversation_id: False,
        fetch_children: ChildFetcher | None = None,
        thresholds: ThresholdsFor | None = None,
        compact: bool = False,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        # The [context] thresholds that colour each row's meter, by its folder.
        self._thresholds = thresholds or (lambda cwd: DEFAULT_THRESHOLDS)
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
        # The matching snippet of each search result, by conversation id.
        self.snippets: dict[str, SearchSnippet] = {}
        # One-line rows (a short list): decided by the list's height once it has one;
        # until then, as the caller expects it (the first page a start drew).
        self.compact = compact
        # Sub-agents fold under their parents (None: they are hidden, no fold shown).
        self._fetch_children = fetch_children
        self.unfolded: set[str] = set()  # parents whose sub-agents are listed under them
        self._parent_of: dict[str, str] = {}  # sub-agent row -> its parent's id
        self._next_cursor: str | None = None
        # Top-level sessions read already but not in the list: rows that sessions
        # arriving above them pushed out (``merge_sessions``). Paging shows them
        # first, then goes on from the cursor.
        self._held: list[Session] = []
        self._loading = False
        self._generation = 0

    @property
    def highlighted_session(self) -> Session | None:
        if self.highlighted is None or self.highlighted >= len(self.sessions):
            return None
        return self.sessions[self.highlighted]

    @property
    def has_more(self) -> bool:
        return bool(self._held) or self._next_cursor is not None

    def reload(self, keep: str | None = None) -> None:
        """Start over from the first page (the store changed); keep ``keep`` highlighted."""
        self._generation += 1
        self._load(None, self._generation, keep)

    def set_query(self, query: str) -> None:
        """Show the sessions ``query`` finds, best first ("" shows every session)."""
        self.filter_query = query
        self.reload()

    def _row(self, session: Session) -> Option:
        cid = session.conversation_id
        child = cid in self._parent_of
        folds = self._fetch_children is not None and not child
        prompt = session_row(
            session,
            self._clock(),
            snippet=self.snippets.get(cid),
            compact=self.compact,
            child=child,
            expanded=(cid in self.unfolded) if folds else None,
            thresholds=self._thresholds(session.cwd),
        )
        return Option(prompt, id=cid)

    def kept_rows(
        self, sessions: Sequence[Session], stamp: int, *, rise: int = 0
    ) -> PageRows | None:
        """``sessions`` as this list shows them from its top, as text for the next start
        to draw before its imports (``tui.first_page``); ``stamp`` is the store's change
        counter they were read at, ``rise`` how many lines higher the list sits in a
        start's first frame. None when an age is not where it would be written."""
        region = self.scrollable_content_region
        # Each row is drawn inside its option's padding, in the list's colours.
        padding = self.get_component_styles("option-list--option").padding
        width = region.width - padding.width
        if width < AGE_WIDTH + 1 or region.height < 1:
            return None
        now = self._clock()
        console = self.app.console
        options = console.options.update_width(width)
        line, column = age_place(compact=self.compact)
        left = " " * padding.left
        lines: list[str] = []
        ages: list[tuple[int, int, int]] = []
        folds = self._fetch_children is not None
        for session in sessions:
            if len(lines) >= region.height:
                break
            if self._is_hidden(session.conversation_id):
                continue
            row = session_row(
                session,
                now,
                compact=self.compact,
                expanded=False if folds else None,
                thresholds=self._thresholds(session.cwd),
            )
            lines += [""] * padding.top
            rendered = [
                "".join(s.text for s in segments)
                for segments in console.render_lines(row, options, pad=False)
            ]
            age = f"{ago(session.last_interacted_at, now):>{AGE_WIDTH}}"
            if rendered[line][column : column + AGE_WIDTH] != age:
                return None
            ages.append((len(lines) + line, len(left) + column, to_us(session.last_interacted_at)))
            lines += [left + text for text in rendered]
            lines += [""] * padding.bottom
        lines = lines[: region.height]
        return PageRows(
            stamp=stamp,
            compact=self.compact,
            screen_colours=_colours(self.screen.rich_style, console),
            rows_colours=_colours(self.rich_style, console),
            size=(self.app.size.width, self.app.size.height),
            origin=(region.x, max(0, region.y - rise)),
            width=region.width,
            lines=lines,
            ages=[a for a in ages if a[0] < len(lines)],
        )

    def is_child(self, conversation_id: str) -> bool:
        return conversation_id in self._parent_of

    @property
    def top_level_index(self) -> int | None:
        """The highlighted row's place among top-level rows (a sub-agent counts as its parent)."""
        if self.highlighted is None or not self.sessions:
            return None
        rows = self.sessions[: self.highlighted + 1]
        return sum(1 for s in rows if s.conversation_id not in self._parent_of) - 1

    @property
    def top_level_count(self) -> int:
        return len(self.sessions) - len(self._parent_of)

    async def _with_children(self, sessions: list[Session]) -> tuple[list[Session], dict[str, str]]:
        """``sessions`` with the sub-agents of the unfolded ones right under each, and
        which parent each sub-agent row belongs to."""
        rows: list[Session] = []
        parent_of: dict[str, str] = {}
        for session in sessions:
            rows.append(session)
            cid = session.conversation_id
            if self._fetch_children and cid in self.unfolded and session.child_count:
                for child in await self._fetch_children(cid):
                    parent_of[child.conversation_id] = cid
                    rows.append(child)
        return rows, parent_of

    @work(group="session-pages", name="loading sessions", exclusive=True, exit_on_error=False)
    async def _load(self, cursor: str | None, generation: int, keep: str | None = None) -> None:
        # Loading until the page is on show: a page asked for meanwhile would cancel this one.
        self._loading = True
        try:
            await self._load_page(cursor, generation, keep)
        finally:
            self._loading = False

    async def _load_page(self, cursor: str | None, generation: int, keep: str | None) -> None:
        try:
            page = await self._fetch(self.page_size, cursor, self.filter_query or None)
        except InvalidRequest as refused:
            if generation == self._generation:
                self._parent_of.clear()
                self._show([], [], None, first=True, keep=None)
                self.post_message(self.QueryRefused(refused))
            return
        if generation != self._generation:
            return  # a newer reload superseded this page
        shown = [r for r in page.results if not self._is_hidden(r.session.conversation_id)]
        sessions, parent_of = await self._with_children([r.session for r in shown])
        if generation != self._generation:
            return
        if cursor is None:
            self._parent_of.clear()
        self._parent_of.update(parent_of)
        self._show(shown, sessions, page.next_cursor, first=cursor is None, keep=keep)

    def _show(
        self,
        shown: list[SearchResult],
        sessions: list[Session],
        next_cursor: str | None,
        *,
        first: bool,
        keep: str | None,
    ) -> None:
        if first:
            self.snippets.clear()
        for result in shown:
            if result.snippet is not None:
                self.snippets[result.session.conversation_id] = result.snippet
        options = [self._row(s) for s in sessions]
        if first:
            self._held.clear()
            self.sessions = sessions
            self.set_options(options)
            index = next((i for i, s in enumerate(self.sessions) if s.conversation_id == keep), 0)
            self.highlighted = index if self.sessions else None
        else:
            self.sessions.extend(sessions)
            self.add_options(options)
        self._next_cursor = next_cursor
        self.post_message(self.Loaded(first, len(shown)))

    def _maybe_load_more(self) -> None:
        near_end = (self.highlighted or 0) >= len(self.sessions) - PREFETCH_ROWS
        if near_end and self.has_more and not self._loading:
            self._loading = True
            if self._held:
                self._show_held(self._generation)
            else:
                self._load(self._next_cursor, self._generation)

    @work(group="session-pages", name="loading sessions", exclusive=True, exit_on_error=False)
    async def _show_held(self, generation: int) -> None:
        """The next page from the rows held back, before the store's next page."""
        self._loading = True
        try:
            take = self._held[: self.page_size]
            sessions, parent_of = await self._with_children(take)
            if generation != self._generation:
                return
            del self._held[: len(take)]
            self._parent_of.update(parent_of)
            shown = [SearchResult(session=s) for s in take]
            self._show(shown, sessions, self._next_cursor, first=False, keep=None)
        finally:
            self._loading = False

    def on_resize(self, event: events.Resize) -> None:
        """Two-line rows while at least ``MIN_VISIBLE_SESSIONS`` of them fit, else one."""
        compact = event.size.height < 2 * MIN_VISIBLE_SESSIONS
        if compact != self.compact:
            self.compact = compact
            self._rerender()

    def _rerender(self) -> None:
        keep = self.highlighted
        self.set_options([self._row(s) for s in self.sessions])
        self.highlighted = keep

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

    # --- sub-agents folded under their parents ------------------------------

    def action_unfold(self) -> None:
        session = self.highlighted_session
        if session is not None and not self.is_child(session.conversation_id):
            self._unfold(session)

    def action_fold(self) -> None:
        session = self.highlighted_session
        if session is None:
            return
        parent = self._parent_of.get(session.conversation_id, session.conversation_id)
        self._fold(parent)

    def toggle_fold(self) -> None:
        """Unfold the highlighted session's sub-agents, or fold them (from any of its rows)."""
        session = self.highlighted_session
        if session is None:
            return
        cid = session.conversation_id
        if cid in self._parent_of or cid in self.unfolded:
            self.action_fold()
        else:
            self._unfold(session)

    @work(group="sub-agents", name="reading sub-agents", exclusive=True, exit_on_error=False)
    async def _unfold(self, parent: Session) -> None:
        cid = parent.conversation_id
        if self._fetch_children is None or not parent.child_count or cid in self.unfolded:
            return
        children = await self._fetch_children(cid)
        index = self.index_of(cid)
        if index is None or cid in self.unfolded:
            return  # reloaded meanwhile
        self.unfolded.add(cid)
        for child in children:
            self._parent_of[child.conversation_id] = cid
        self.sessions[index + 1 : index + 1] = children
        self._rerender()

    def _fold(self, parent_id: str) -> None:
        if parent_id not in self.unfolded:
            return
        self.unfolded.discard(parent_id)
        children = {c for c, p in self._parent_of.items() if p == parent_id}
        for cid in children:
            del self._parent_of[cid]
        self.sessions = [s for s in self.sessions if s.conversation_id not in children]
        index = self.index_of(parent_id)
        self.set_options([self._row(s) for s in self.sessions])
        self.highlighted = index

    def replace_session(self, session: Session) -> None:
        """Refresh one row in place (state or metrics changed)."""
        for index, known in enumerate(self.sessions):
            if known.conversation_id == session.conversation_id:
                self.sessions[index] = session
                self.replace_option_prompt_at_index(index, self._row(session).prompt)
                return
        for index, known in enumerate(self._held):
            if known.conversation_id == session.conversation_id:
                self._held[index] = session
                return

    def known_ids(self) -> set[str]:
        """The sessions that are rows, or held for paging (``merge_sessions``)."""
        return {s.conversation_id for s in self.sessions} | {s.conversation_id for s in self._held}

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
        """Take a row out (a parent's sub-agent rows go with it)."""
        for index, known in enumerate(self._held):
            if known.conversation_id == conversation_id:  # not a row: no sub-agent rows
                self.unfolded.discard(conversation_id)
                return self._held.pop(index)
        self._fold(conversation_id)
        self._parent_of.pop(conversation_id, None)
        for index, known in enumerate(self.sessions):
            if known.conversation_id == conversation_id:
                self.sessions.pop(index)
                self.remove_option_at_index(index)
                return known
        return None

    def insert_session(self, session: Session, index: int = 0) -> None:
        """Put a session back (undo) or in front (a new launch), keeping the highlight."""
        self.insert_sessions([session], index)

    def insert_sessions(self, sessions: Sequence[Session], index: int = 0) -> None:
        """Put ``sessions`` in at ``index``, in their order, keeping the highlight.

        One re-render for all of them: the option list measures every row again on each
        change, so rows arriving together one at a time (an import's batch) cost seconds
        on a long list.
        """
        if not sessions:
            return
        keep = self.highlighted_session
        with self.prevent(OptionList.OptionHighlighted):
            for session in sessions:
                self.remove_session(session.conversation_id)
        at = min(index, len(self.sessions))
        rows = [*self.sessions[:at], *sessions, *self.sessions[at:]]
        self._set_rows(rows, keep.conversation_id if keep else None, sessions[0].conversation_id)

    def merge_sessions(self, arrived: Sequence[Session], key: SortKey) -> None:
        """Put new top-level sessions in at their places in the list's order (``key``,
        greatest first), keeping the highlight on its session, in one update.

        A session that sorts after every row read so far is left to paging when the
        store has more (its cursor reaches it). The list does not grow by what
        arrives: it keeps as many rows as before (or a page past the highlight) and
        holds the rest for paging. Each update measures every row again, so an
        import's thousands of sessions would otherwise make each batch slower.
        """
        listed = self.known_ids()
        fresh = [s for s in arrived if s.conversation_id not in listed]
        tops = [s for s in self.sessions if s.conversation_id not in self._parent_of]
        read = tops + self._held
        if self._next_cursor is not None and read:
            end = key(read[-1])
            fresh = [s for s in fresh if key(s) > end]
        if not fresh:
            return
        keep = self.highlighted_session
        merged = sorted(read + fresh, key=key, reverse=True)
        keep_top = None
        if keep is not None:
            keep_top = self._parent_of.get(keep.conversation_id, keep.conversation_id)
        at = next((i for i, s in enumerate(merged) if s.conversation_id == keep_top), 0)
        shown = max(len(tops), at + self.page_size)
        children: dict[str, list[Session]] = {}
        for session in self.sessions:
            parent = self._parent_of.get(session.conversation_id)
            if parent is not None:
                children.setdefault(parent, []).append(session)
        rows: list[Session] = []
        for session in merged[:shown]:
            rows.append(session)
            rows.extend(children.pop(session.conversation_id, []))
        for dropped in children.values():  # their parents are held: read again when shown
            for child in dropped:
                del self._parent_of[child.conversation_id]
        self._held = merged[shown:]
        if [r.conversation_id for r in rows] == [r.conversation_id for r in self.sessions]:
            return  # every one of them sorts past the rows on show: held for paging
        self._set_rows(rows, keep.conversation_id if keep else None)

    def _set_rows(self, rows: list[Session], keep: str | None, first: str | None = None) -> None:
        """Show ``rows`` in one update, the highlight on ``keep`` (else ``first``, else
        the top row).

        Rows that move under a highlight staying on its session announce nothing
        (announcing would preview it and work out the footer's keys again per batch);
        a highlight that lands elsewhere, or on a list that had none, is announced.
        """
        target = keep if keep is not None else first
        with self.prevent(OptionList.OptionHighlighted):
            self.sessions = rows
            self.set_options([self._row(s) for s in rows])
            self.highlighted = next(
                (i for i, s in enumerate(rows) if s.conversation_id == target), 0
            )
        current = self.highlighted_session
        if current is not None and (keep is None or current.conversation_id != keep):
            self.post_message(self.Highlighted(current))
        self._maybe_load_more()
