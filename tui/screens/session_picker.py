"""The ``/agent`` panel: pick a reusable session, preview it, resume it, dismiss it.

A reusable ``Screen``: another Textual app can push it with an orchestrator.
The screen composes widgets that own their data — :class:`FilterBar` (the
query, debounced), :class:`SessionList` (paging), :class:`PreviewPane` (preview
paging, the streamed reply), :class:`StatusPanel`, :class:`HistoryTimeline`,
:class:`Dismissals` (archive and undo) and :class:`BackgroundImport` — and wires
them: it routes core events (through :mod:`tui.bridge`) and runs the actions
that open a modal (resume, launch, dismiss, help).
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events, getters, on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from core.clock import Clock, system_clock
from core.errors import (
    CapsuleHasSecrets,
    CapsuleRefused,
    CwdMissing,
    DelegateError,
    DismissRefused,
    StaleCapsule,
)
from core.events import CapsuleStale, HistoryEvent
from core.models import (
    ContextDocument,
    SearchPage,
    SearchResult,
    Session,
    SessionSort,
    SessionState,
)
from core.orchestrator import AgentOrchestrator
from core.reopen import ReopenPlan, opens_interactively, reopen_plan
from tui.bridge import (
    HistoryPosted,
    RunActivityReceived,
    RunOutputReceived,
    RunsUpdated,
    SessionsUpdated,
    WatchStatusChanged,
    connect,
)
from tui.commands import PickerCommands
from tui.empty_list import STORE_EMPTY, empty_list_text, widest
from tui.first_page import FirstPage
from tui.list_scope import ListScope
from tui.live import Throttle, polling_note
from tui.shared import formatting as fmt
from tui.shared.context_levels import Thresholds
from tui.shared.keys import live_keys
from tui.shared.safe_text import first_line
from tui.shared.workers import ForwardsWorkerErrors
from tui.widgets.background_import import BackgroundImport, ImportRoots
from tui.widgets.dismissals import UNDO_SECONDS, Dismissals
from tui.widgets.filter_bar import DEBOUNCE_SECONDS, FilterBar
from tui.widgets.first_page_keeper import FirstPageKeeper
from tui.widgets.history import HistoryCell, HistoryTimeline
from tui.widgets.list_header import ListHeader
from tui.widgets.live_rows import LiveRows
from tui.widgets.preview import QUIET_SECONDS, PreviewPane
from tui.widgets.session_list import PAGE_SIZE, SessionList
from tui.widgets.status_panel import FULLEST_SHOWN, StatusPanel, StatusSnapshot, WaitingHandoff

if TYPE_CHECKING:
    from core.capsules.launch import CapsuleAcceptance
    from tui.modals.new_delegate import LaunchRequest

__all__ = ["UNDO_SECONDS", "ImportRoots", "SessionPickerScreen"]

# Keys the help lists besides the bindings (handled by the widgets themselves).
EXTRA_HELP = [
    ("type", "Search", "Any text typed goes to the search field, wherever the focus is"),
    ("↑/↓ pgup/pgdn", "Move", "Move through sessions (also from the search field)"),
    ("esc", "Clear search", "Clear the search and return to the list"),
    ("ctrl+q", "Quit", "Leave delegate (asks first while runs are in flight)"),
    ("ctrl+p", "Commands", "The command palette with every panel action"),
    ("tab", "Focus", "Move between the list, the preview and the history cells"),
]


# While rows stream in (an import's batches, a burst of runs), the list and the status
# take what arrived at most this often: each update lays the whole screen out again.
LIVE_EVERY_S = 0.5

# What a conversation id (or its first characters) looks like: Claude Code's and
# Codex's UUIDs, delegate's own ids.
_ID_SHAPED = re.compile(r"[0-9a-f][0-9a-f-]{5,63}", re.IGNORECASE)


# The wide layout's width, and the height under which the panel is short (80x24).
WIDE_FROM = 110
SHORT_BELOW = 30


def _nothing() -> None:
    pass


class SessionPickerScreen(ForwardsWorkerErrors, Screen[None]):
    """Sessions on the left; preview and history on the right; status on top."""

    CSS_PATH = "session_picker.tcss"
    # Back from a modal, focus the list, never the filter box (it would eat the keys).
    AUTO_FOCUS = "SessionList"
    # Textual annotates these two without ClassVar, so ours cannot add it.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE_FROM, "-wide")]  # noqa: RUF012
    # A short terminal (an 80x24 one) shares the height out so the preview still shows
    # the last messages and the footer keeps quit (``session_picker.tcss``).
    VERTICAL_BREAKPOINTS = [(0, "-short"), (SHORT_BELOW, "-tall")]  # noqa: RUF012
    COMMANDS = {PickerCommands}  # noqa: RUF012

    # Printable keys type into the search field (``on_key``), so every action is on
    # a key typed text never produces: ctrl chords, alt chords, function keys.
    # ``priority`` where the search field's own bindings would take the key first.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "open_session",
            "Open",
            id="picker.open",
            tooltip="Open the session: Claude Code / Codex in their CLI, ours full screen",
        ),
        Binding(
            "ctrl+y",
            "copy_command",
            "Copy command",
            id="picker.copy_command",
            priority=True,
            show=False,
            tooltip="Copy the command that opens the session in its CLI",
        ),
        Binding(
            "ctrl+f",
            "resume",
            "Follow up",
            id="picker.follow_up",
            tooltip="Send a follow-up prompt into the highlighted session, in the background",
        ),
        Binding(
            "ctrl+d",
            "dismiss_session(True)",
            "Archive",
            id="picker.archive",
            priority=True,
            tooltip="Move the highlighted session to the archive, after confirming",
        ),
        Binding(
            "ctrl+d",
            "restore_session",
            "Restore",
            id="picker.restore",
            priority=True,
            tooltip="Bring the highlighted archived session back into the list",
        ),
        Binding(
            "ctrl+r",
            "rename_session",
            "Rename",
            id="picker.rename",
            priority=True,
            show=False,
            tooltip="Name the highlighted session (an empty name clears it)",
        ),
        Binding(
            "shift+delete",
            "purge_session",
            "Purge",
            id="picker.purge",
            priority=True,
            show=False,
            tooltip="Free what delegate stored for the highlighted archived session, after"
            " confirming",
        ),
        Binding(
            "ctrl+z",
            "undo_dismiss",
            "Undo",
            id="picker.undo",
            show=False,
            tooltip="Bring back the session archived a moment ago",
        ),
        Binding(
            "ctrl+n",
            "new_delegate",
            "New",
            id="picker.new",
            tooltip="Start a new session (agent, working directory, prompt)",
        ),
        Binding(
            "alt+up",
            "page_older",
            "Older",
            id="picker.older",
            show=False,
            tooltip="Preview older messages",
        ),
        Binding(
            "alt+down",
            "page_newer",
            "Newer",
            id="picker.newer",
            show=False,
            tooltip="Preview newer messages",
        ),
        Binding(
            "ctrl+x",
            "stop_run",
            "Stop",
            id="picker.stop",
            show=False,
            priority=True,
            tooltip="Stop the highlighted session's run (any on this host), after confirming",
        ),
        Binding(
            "ctrl+l",
            "toggle_history",
            "History",
            id="picker.history",
            show=False,
            tooltip="Show or hide the history cells",
        ),
        Binding(
            "f5",
            "refresh",
            "Refresh",
            id="picker.refresh",
            show=False,
            tooltip="Import new Claude Code / Codex sessions and reload the list",
        ),
        Binding("f1", "help", "Help", id="picker.help", tooltip="List every key"),
        Binding(
            "ctrl+t",
            "transcript",
            "Transcript",
            id="picker.transcript",
            priority=True,
            show=False,  # kept out of the crowded footer: help and the palette list it
            tooltip="Read the highlighted session's whole conversation, with its details",
        ),
        Binding(
            "ctrl+o",
            "expand_message",
            "Expand",
            id="picker.expand_message",
            priority=True,
            show=False,
            tooltip="Show long messages in the preview whole, or cut again",
        ),
        # The list's scope: each toggles one thing and says so in the line over the list.
        Binding(
            "ctrl+g",
            "toggle_archive",
            "Archived",
            id="picker.archived",
            tooltip="Show the archive instead of the reusable sessions, or back",
        ),
        Binding(
            "ctrl+a",
            "toggle_projects",
            "Scope",
            id="picker.scope",
            priority=True,  # the search field would move its cursor home
            tooltip="This project (its worktrees included) or every project",
        ),
        Binding(
            "ctrl+b",
            "toggle_branch",
            "Branch",
            id="picker.branch",
            show=False,
            tooltip="Only the sessions on the current git branch, or every branch",
        ),
        Binding(
            "ctrl+s",
            "toggle_sort",
            "Sort",
            id="picker.sort",
            show=False,
            tooltip="Order by last activity or by creation",
        ),
        Binding(
            "ctrl+k",
            "continue_handoff",
            "Hand-off",
            id="picker.continue_handoff",
            priority=True,  # the search field would delete to the end of the line
            show=False,  # the header names it while a hand-off waits
            tooltip="Continue the hand-off waiting for you (the highlighted session's, else"
            " the newest): in the agent's CLI, or in a new delegate session",
        ),
        Binding(
            "f2",
            "edit_capsule",
            "Capsule",
            id="picker.capsule",
            show=False,
            tooltip="Write a context capsule for the highlighted session in the capsule editor"
            " (its draft, when its agent wrote one)",
        ),
        Binding(
            "f3",
            "return_groups",
            "Returns",
            id="picker.returns",
            show=False,
            tooltip="Compact returns by group: each chain's steps and hand-off files (the"
            " highlighted session's first, when it ran some)",
        ),
        Binding(
            "ctrl+e",
            "toggle_fold",
            "Sub-agents",
            id="picker.expand",
            priority=True,  # the search field would move its cursor to the end
            show=False,
            tooltip="Show or hide the highlighted session's sub-agents (also right / left)",
        ),
    ]

    status = getters.query_one(StatusPanel)
    filter_bar = getters.query_one(FilterBar)
    list_header = getters.query_one(ListHeader)
    sessions = getters.query_one(SessionList)
    empty_state = getters.query_one("#empty-state", Static)
    preview = getters.query_one(PreviewPane)
    history = getters.query_one(HistoryTimeline)
    dismissals = getters.query_one(Dismissals)
    background_import = getters.query_one(BackgroundImport)
    live_rows = getters.query_one(LiveRows)

    def __init__(
        self,
        orchestrator: AgentOrchestrator,
        *,
        clock: Clock = system_clock,
        preview_size: int = 6,
        page_size: int = PAGE_SIZE,
        launch_cwd: Path | None = None,
        import_sources: ImportRoots | None = None,
        undo_seconds: float = UNDO_SECONDS,
        filter_debounce: float = DEBOUNCE_SECONDS,
        run_quiet_seconds: float = QUIET_SECONDS,
        polling_every_s: float | None = None,
        scope: ListScope | None = None,
        first_page: FirstPage | None = None,
    ) -> None:
        super().__init__()
        self.orchestrator = orchestrator
        # Where the list's first page is kept for the next start to draw at once.
        self._kept_page = first_page
        # The [context] thresholds that colour every meter, by the session's folder.
        self.thresholds = Thresholds(orchestrator.settings)
        # What the list covers (the toggles change it); every project by default.
        self.scope = scope or ListScope()
        self._start_scope = self.scope  # the list as a start shows it is what is kept
        # How often a supervisor that fell back to polling re-scans (for the status line).
        self.polling_every_s = polling_every_s
        self._watch_note = ""
        # A hand-off opened in an agent's CLI: (document, the new session's id) to link
        # once an import has stored that session.
        self._adopting: tuple[str, str] | None = None
        # A run silent this long shows its agent's stderr in the preview.
        self.run_quiet_seconds = run_quiet_seconds
        self.clock = clock
        self.preview_size = preview_size
        self.page_size = page_size
        self.launch_cwd = launch_cwd
        # Where to import Claude Code / Codex sessions from, at start and on
        # f5; None turns importing off (tests, embedding apps).
        self.import_roots = import_sources
        self.undo_seconds = undo_seconds
        self.filter_debounce = filter_debounce
        self._after_first_page_pending = False
        self._first_page: SearchPage | None = None  # read before the screen is shown
        self._first_status: StatusSnapshot | None = None  # likewise
        self._disconnect: Callable[[], None] = lambda: None
        self._detached = False
        # Top-level reusable sessions of every project and branch: what an empty list
        # says the rest of the store holds (None until counted).
        self._elsewhere: int | None = None
        self._list_loaded_once = False  # an empty list before its first page is not empty
        self._listed_total: int | None = None  # what the list covers, without a search
        # Rows other processes changed, read and waiting for the list's next update.
        self._arrived: dict[str, Session] = {}
        self._gone: dict[str, None] = {}
        self._apply_rows = Throttle(self, LIVE_EVERY_S, self._apply_arrived)
        self._status_soon = Throttle(self, LIVE_EVERY_S, self.refresh_status)
        # Whether the footer's keys were last worked out for an archived session.
        self._bindings_archived = False

    # --- layout ----------------------------------------------------------

    def compose(self) -> ComposeResult:
        orch = self.orchestrator
        dismissals = Dismissals(orch.archive, orch.restore, undo_seconds=self.undo_seconds)
        yield dismissals
        yield BackgroundImport(orch.import_sources, self.import_roots or (None, None))
        yield LiveRows(orch.get_sessions, every_s=LIVE_EVERY_S)
        listed = SessionList(
            self._fetch_page,
            self.clock,
            page_size=self.page_size,
            is_hidden=dismissals.is_pending,
            fetch_children=self._fetch_children if self.scope.subagents else None,
            thresholds=self.thresholds,
            # The list knows its rows' height from its first size, after the first frame:
            # until then, as the page kept for this terminal's size had them.
            compact=self._kept_page is not None and self._kept_page.one_line_rows,
            id="sessions",
        )
        if self._kept_page is not None:
            yield FirstPageKeeper(
                self._kept_page,
                listed,
                change_counter=orch.change_count,
                read_first_page=lambda limit: self._fetch_page(limit, None, None),
                as_started=self._as_started,
                rise=lambda: self.status.lines_since_start,
            )
        yield StatusPanel(
            self._load_status, thresholds=self.thresholds, shown=self._first_status, id="status"
        )
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield FilterBar(debounce=self.filter_debounce)
                yield ListHeader()
                yield listed
                yield Static(Text.from_markup(STORE_EMPTY), id="empty-state")
            with Vertical(id="right"):
                yield PreviewPane(
                    orch.recent_messages,
                    self.clock,
                    size=self.preview_size,
                    load_run=orch.latest_run,
                    quiet_s=self.run_quiet_seconds,
                    thresholds=self.thresholds,
                    load_capsule=self._capsule_document,
                    id="preview",
                )
                # Loaded after the list's first page is on screen (see _after_first_page).
                yield HistoryTimeline(orch.history, self.clock, load_on_mount=False, id="history")
        yield Footer()

    def on_mount(self) -> None:
        # The width's layout now: Textual sets it on the screen's first Resize, which
        # comes after the first frame, so a narrow terminal first saw the wide layout.
        width, height = self.app.size
        for size, breakpoints in (
            (width, self.HORIZONTAL_BREAKPOINTS),
            (height, self.VERTICAL_BREAKPOINTS),
        ):
            for at, name in sorted(breakpoints, reverse=True):
                if size >= at:
                    self.update_classes({n: n == name for _, n in breakpoints})
                    break
        self._fit_footer(width)
        self.preview.one_line_title = height < SHORT_BELOW
        self._disconnect = connect(self.orchestrator.bus, self)
        self.status.continue_key = self._key(live_keys(self), "picker.continue_handoff")
        # Focus now, not later (``focus()`` is deferred): a status that arrives
        # first and finds the store empty must see the list focused to hide it.
        self.set_focus(self.sessions)
        self.list_header.show_scope(self.scope.describe())
        first = self._first_page
        if first is not None and not first.results and self._elsewhere is not None:
            # An empty first page says so in the first frame, not once the list reports.
            self._show_empty_list(True)
        self.sessions.reload()
        # The status, the history and the import start once the first page is on
        # screen, so a warm start paints its rows before they compete for the loop.
        self._after_first_page_pending = True

    def on_unmount(self) -> None:
        self._stop_listening()

    def on_resize(self, event: events.Resize) -> None:
        self._fit_footer(event.size.width)
        self.preview.one_line_title = event.size.height < SHORT_BELOW
        self._keep_first_page()

    def _fit_footer(self, width: int) -> None:
        """Under the wide layout the footer's keys sit closer, so quit stays on it."""
        self.query_one(Footer).compact = width < WIDE_FROM

    # --- the first page kept for the next start ----------------------------

    def _as_started(self) -> bool:
        """Whether the list shows what a start shows: its scope, no search, no fold open."""
        listed = self.sessions
        return self.scope == self._start_scope and not listed.filter_query and not listed.unfolded

    def _keep_first_page(self) -> None:
        if self._kept_page is not None and self._as_started():
            self.query_one(FirstPageKeeper).keep_soon()

    def _stop_listening(self) -> None:
        self._disconnect()
        self._disconnect = _nothing

    # --- what the widgets ask of the orchestrator ------------------------

    async def load_first_page(self) -> None:
        """Read the list's first page before the screen is shown: its first frame then
        has rows, instead of an empty list and a second layout once the page arrives.
        A store that fails here is left to the list's own load, which reports it."""
        with contextlib.suppress(DelegateError):
            self._first_page = await self._fetch_page(self.page_size, None, None)
            if not self._first_page.results:
                # What the empty list says is known before the first frame too.
                self._elsewhere = await self._count_elsewhere()
        # The counts and the fullest sessions too: a first frame saying "0 reusable",
        # one line high, would be wrong, and the list would move down when they arrive.
        # A waiting hand-off (rare; its documents' store loads later) comes with the rest.
        with contextlib.suppress(DelegateError):
            counts, fullest = await self._counts_and_fullest()
            self._first_status = StatusSnapshot(counts, tuple(fullest))

    def _after_first_page(self) -> None:
        """What the first frame does without: the status, the history, the import."""
        self.refresh_status()
        self.history.load()
        if self.import_roots is not None:
            # Rows on show: the re-scan is a background refresh, after the start's work.
            self.background_import.start(after_idle=bool(self.sessions.sessions))

    async def _fetch_page(self, limit: int, cursor: str | None, query: str | None) -> SearchPage:
        """A search's page of ranked results, or without a query a page of the list."""
        if cursor is None and not query and (first := self._first_page) is not None:
            self._first_page = None  # read once: a reload asks the store again
            if limit == self.page_size:
                return first
        if query and cursor is None and (named := await self._session_named(query)):
            return SearchPage(results=[SearchResult(session=named)], next_cursor=None)
        if query:
            # Deferred: the first frame lists without a query (core.search loads on a search).
            from core.search.parser import as_typed

            # A search looks inside sub-agents too: a phrase only a sub-agent said
            # lists that sub-agent (marked ↳), not nothing.
            within = self.scope.session_scope().model_copy(update={"top_level": False})
            return await self.orchestrator.search_sessions(
                as_typed(query), limit, cursor, scope=within
            )
        page = await self.orchestrator.list_sessions(
            limit, cursor, scope=self.scope.session_scope()
        )
        results = [SearchResult(session=s) for s in page.sessions]
        return SearchPage(results=results, next_cursor=page.next_cursor)

    async def _session_named(self, query: str) -> Session | None:
        """The session a pasted id (or a unique prefix of 6+) names, if the query is one:
        ids are not words the full-text search knows."""
        if not _ID_SHAPED.fullmatch(query):
            return None
        try:
            return await self.orchestrator.get_session(await self.orchestrator.resolve_id(query))
        except DelegateError:
            return None  # no such id, or several: search the words instead

    async def _fetch_children(self, parent_id: str) -> list[Session]:
        page = await self.orchestrator.list_children(parent_id, scope=self.scope.session_scope())
        return page.sessions

    @work(group="list-total", name="counting sessions", exclusive=True, exit_on_error=False)
    async def _count_listed(self) -> None:
        scope = self.scope
        total = await self.orchestrator.count_sessions(scope=scope.session_scope())
        if scope == self.scope:
            self._listed_total = total
            self._show_position()

    def _show_position(self) -> None:
        listed = self.sessions
        total = None if listed.filter_query else self._listed_total
        self.list_header.show_position(
            listed.top_level_index, listed.top_level_count, total, listed.has_more
        )

    # --- the list's scope --------------------------------------------------

    def _rescope(self, scope: ListScope) -> None:
        """List what ``scope`` covers from its first page, and say so over the list."""
        self.scope = scope
        self._listed_total = None
        self.list_header.show_scope(scope.describe())
        self.sessions.reload()
        self._count_listed()

    def action_toggle_projects(self) -> None:
        if self.scope.roots is None:
            self.notify(
                "The panel started outside a git repository: the list covers every project.",
                timeout=4,
            )
            return
        self._rescope(self.scope.toggled_projects())

    def action_toggle_branch(self) -> None:
        if self.scope.branch is None:
            self.notify("No current git branch to narrow the list to.", timeout=4)
            return
        self._rescope(self.scope.toggled_branch())

    def action_toggle_archive(self) -> None:
        self._rescope(self.scope.toggled_archive())

    def action_toggle_sort(self) -> None:
        self._rescope(self.scope.toggled_sort())

    def action_toggle_fold(self) -> None:
        self.sessions.toggle_fold()

    async def _counts_and_fullest(self) -> tuple[dict[str, int], list[Session]]:
        return (
            await self.orchestrator.status_counts(),
            await self.orchestrator.fullest_sessions(FULLEST_SHOWN),
        )

    async def _load_status(
        self,
    ) -> tuple[dict[str, int], list[Session], list[WaitingHandoff]]:
        orch = self.orchestrator
        counts, fullest = await self._counts_and_fullest()
        waiting = []
        for document in await orch.waiting_handoffs():
            session = None
            if document.source_session is not None:
                # Purged since: the document stands alone.
                with contextlib.suppress(DelegateError):
                    session = await orch.get_session(document.source_session)
            waiting.append(WaitingHandoff(document, session))
        return counts, fullest, waiting

    # --- status, note, empty state ----------------------------------------

    def refresh_status(self) -> None:
        if self._detached:
            return
        notes = []
        if self.background_import.note:
            notes.append(self.background_import.note)
        if self._watch_note:
            notes.append(self._watch_note)
        self.status.reload(" · ".join(notes))

    @on(StatusPanel.Updated)
    def _status_updated(self, event: StatusPanel.Updated) -> None:
        self._count_listed()
        self._update_empty_state()
        self._keep_first_page()  # a line more or less over the list moves its rows

    async def _count_elsewhere(self) -> int:
        return await self.orchestrator.count_sessions(scope=widest(self.scope).session_scope())

    @work(group="elsewhere", name="counting sessions", exclusive=True, exit_on_error=False)
    async def _recount_elsewhere(self) -> None:
        """The list is empty: count what the rest of the store holds, then say so."""
        scope = self.scope
        elsewhere = await self._count_elsewhere()
        if scope == self.scope:
            self._elsewhere = elsewhere
            self._update_empty_state(recount=False)

    def _update_empty_state(self, *, recount: bool = True) -> None:
        """Show the empty list's message, or the rows; an empty list counts the rest of
        the store again (``recount``) and says it once counted."""
        if not self._list_loaded_once:
            return  # what the first frame says (on_mount) stands until the list reports
        listed = self.sessions
        empty = not listed.sessions and not listed.filter_query
        if empty and recount:
            self._recount_elsewhere()
        self._show_empty_list(empty and self._elsewhere is not None)

    def _show_empty_list(self, empty: bool) -> None:
        listed = self.sessions
        if empty and self._elsewhere is not None:
            keys = live_keys(self)
            text = empty_list_text(self.scope, self._elsewhere, lambda i: self._key(keys, i))
            self.empty_state.update(text)
        self.empty_state.display = empty
        self.set_class(empty, "-empty")
        if empty and listed.display and listed.has_focus:
            # Hiding the focused list would hand focus to the filter box, which
            # would swallow the keys the empty state suggests (n, ?).
            self.set_focus(None)
        listed.display = not empty
        if not empty and self.focused is None:
            listed.focus()

    # --- list events -----------------------------------------------------

    @on(SessionList.Loaded)
    def _list_loaded(self, event: SessionList.Loaded) -> None:
        listed = self.sessions
        if listed.filter_query:
            self.filter_bar.show_matches(len(listed.sessions), listed.has_more)
        self._show_position()
        if not event.first:
            return
        self._list_loaded_once = True
        if self._after_first_page_pending:
            self._after_first_page_pending = False
            self.call_after_refresh(self._after_first_page)
        self._keep_first_page()
        if not self.sessions.sessions:
            self.preview.show_empty(self._nothing_listed())
        self._update_empty_state()

    @on(SessionList.Highlighted)
    def _highlighted(self, event: SessionList.Highlighted) -> None:
        # ctrl+d archives or restores, by what is highlighted: the footer's keys are
        # worked out again (the footer rebuilt) only when that changes.
        archived = event.session.archived_at is not None
        if archived != self._bindings_archived:
            self._bindings_archived = archived
            self.refresh_bindings()
        self.preview.preview(event.session)
        self._show_position()

    @on(SessionList.QueryRefused)
    def _query_refused(self, event: SessionList.QueryRefused) -> None:
        self.filter_bar.show_refusal(event.error.message)
        self.preview.show_empty("The search cannot run: see the note under the field.")
        self._show_position()

    def _nothing_listed(self) -> str:
        """Why the list is empty, and the key that widens it: a panel started in a
        project with no sessions yet must not look like a store with none."""
        scope = self.scope
        core_scope = scope.session_scope()
        keys = live_keys(self)
        said = "No session matches the search" if self.sessions.filter_query else "No sessions"
        where, hints = "", []
        if core_scope.archived:
            where = " in the archive"
            hints.append(f"{self._key(keys, 'picker.archived')} shows the reusable ones")
        if core_scope.roots is not None:
            where += f" in {scope.project_name or 'this project'}"
            hints.append(f"{self._key(keys, 'picker.scope')} shows every project")
        if core_scope.branch is not None:
            where += f" on branch {core_scope.branch}"
            hints.append(f"{self._key(keys, 'picker.branch')} shows every branch")
        return f"{said}{where}." + (f" {'; '.join(hints)}." if hints else "")

    def _key(self, keys: dict[str, list[str]], binding_id: str) -> str:
        """How the first key bound to ``binding_id`` reads (``ctrl+a``), remapped or not."""
        bound = keys.get(binding_id)
        return bound[0] if bound else binding_id

    def _preview_highlighted(self) -> None:
        """Preview whatever is highlighted now (the row under the cursor may have changed
        without the cursor moving, e.g. when the highlighted row was removed)."""
        session = self.sessions.highlighted_session
        if session is None:
            self.preview.show_empty(self._nothing_listed())
        else:
            self.preview.preview(session)

    @on(SessionList.Chosen)
    def _chosen(self) -> None:
        self.action_open_session()

    # --- filter ----------------------------------------------------------

    @on(FilterBar.Changed)
    def _filter_changed(self, event: FilterBar.Changed) -> None:
        self.sessions.set_query(event.filter_query)

    @on(FilterBar.Done)
    def _filter_done(self) -> None:
        """Enter in the search field opens the highlighted session, as in both vendor pickers."""
        if self.sessions.highlighted_session is not None:
            self._chosen()

    def key_escape(self) -> None:
        self.filter_bar.clear()
        self.sessions.focus()

    def on_key(self, event: events.Key) -> None:
        """Typed text goes to the search field from anywhere on the screen.

        The search field handles its own keys; what reaches the screen was
        typed into the list, the preview or a history cell. Backspace edits a
        search that is there, so a user never has to find the field first.
        """
        if isinstance(self.focused, Input):
            return
        if event.is_printable and event.character:
            text = event.character
        elif event.key == "backspace" and self.filter_bar.filter_input.value:
            text = "\b"
        else:
            return
        event.stop()
        event.prevent_default()
        self.filter_bar.type_text(text)

    @on(FilterBar.Moved)
    async def _move_from_search(self, event: FilterBar.Moved) -> None:
        """Arrow and page keys in the search field move the list's highlight."""
        listed = self.sessions
        if event.key == "up":
            listed.action_cursor_up()
        elif event.key == "down":
            listed.action_cursor_down()
        else:
            await listed.run_action(event.key.replace("page", "page_"))

    # --- preview paging --------------------------------------------------

    def action_page_older(self) -> None:
        if not self.preview.page_older():
            self.notify("No older messages.", timeout=2)

    def action_page_newer(self) -> None:
        if not self.preview.page_newer():
            self.notify("Already at the newest messages.", timeout=2)

    def action_expand_message(self) -> None:
        self.preview.toggle_expanded()

    def action_transcript(self) -> None:
        session = self.sessions.highlighted_session
        if session is None:
            self.notify("No session highlighted.", timeout=2)
            return
        from tui.screens.transcript import TranscriptScreen  # deferred: opened on demand

        self.app.push_screen(
            TranscriptScreen(self.orchestrator, session, self.clock, thresholds=self.thresholds)
        )

    # --- capsules ----------------------------------------------------------

    async def _capsule_document(self, capsule_id: str) -> ContextDocument | None:
        from tui.capsules.panel import capsule_document  # deferred: used on demand

        return await capsule_document(self.orchestrator, capsule_id)

    def action_edit_capsule(self) -> None:
        session = self.sessions.highlighted_session
        if session is not None:
            self._open_capsule_editor(session)

    @work(group="capsule-editor", name="opening the capsule editor", exit_on_error=False)
    async def _open_capsule_editor(self, session: Session) -> None:
        from tui.capsules.editor import CapsuleEditorScreen  # deferred: opened on demand
        from tui.capsules.panel import editor_target

        target = await editor_target(self.orchestrator, session)
        if target is None:
            self.notify(
                f"{session.cwd} no longer exists: there is no repository to keep a capsule in.",
                title="No capsule editor",
                severity="warning",
                markup=False,
            )
            return

        def closed(saved: Path | None) -> None:
            if saved is not None:
                self.notify(f"Capsule saved: {saved}", timeout=4, markup=False)

        editor = CapsuleEditorScreen(
            target.repo,
            target.path,
            session.conversation_id,
            orchestrator=self.orchestrator,
            clock=self.clock,
        )
        self.app.push_screen(editor, closed)

    # --- compact returns ----------------------------------------------------

    def action_return_groups(self) -> None:
        self._open_return_groups(self.sessions.highlighted_session)

    @work(group="return-groups", name="opening the compact returns", exit_on_error=False)
    async def _open_return_groups(self, session: Session | None) -> None:
        from tui.returns.groups import ReturnGroupsScreen  # deferred: opened on demand

        focus = None
        if session is not None:
            from tui.returns.panel import artifacts_session_of

            focus = await artifacts_session_of(self.orchestrator, session)
        self.app.push_screen(ReturnGroupsScreen(self.orchestrator, clock=self.clock, focus=focus))

    # --- open: back into the real session ----------------------------------

    def action_open_session(self) -> None:
        """Claude Code / Codex: their CLI on this terminal; delegate's own: the conversation."""
        session = self.sessions.highlighted_session
        if session is None:
            return
        if opens_interactively(session, self.orchestrator.settings):
            self._open_in_cli(session)
            return
        # Deferred: the conversation screen draws Markdown, which the first frame never needs.
        from tui.screens.conversation import ConversationScreen

        self.app.push_screen(
            ConversationScreen(
                self.orchestrator, session, clock=self.clock, quiet_s=self.run_quiet_seconds
            ),
            lambda _: self._after_conversation(session.conversation_id),
        )

    def _after_conversation(self, conversation_id: str) -> None:
        self._refresh_session_soon(conversation_id)

    def _open_in_cli(self, session: Session, cwd: str | None = None) -> None:
        """Check everything, then hand the terminal over; a missing folder asks for another."""
        try:
            plan = reopen_plan(session, self.orchestrator.settings, cwd=cwd)
        except CwdMissing:
            suggestion = str(self.launch_cwd or Path.home())

            def chosen(folder: str | None) -> None:
                if folder is not None:
                    self._open_in_cli(session, folder)

            from tui.modals.other_folder import OtherFolder  # deferred: opened on demand

            self.app.push_screen(OtherFolder(session, suggestion), chosen)
            return
        except DelegateError as exc:
            self.notify(exc.message, title="Cannot open it", severity="warning", markup=False)
            return
        self._open_plan(plan)

    @work(group="open", exclusive=True, name="opening the session", exit_on_error=False)
    async def _open_plan(self, plan: ReopenPlan) -> None:
        await self._hand_over(plan)

    async def _hand_over(self, plan: ReopenPlan, *, new_session: bool = False) -> None:
        """Suspend the panel, run the agent on the terminal, come back when it exits and
        read what the session gained meanwhile (``new_session``: the agent started a new
        one, found by importing again)."""
        app = self.app
        failed: OSError | None = None
        code, said, continued = 0, "", False
        try:
            # No repaint while the agent owns the terminal (the loop keeps running:
            # runs this panel drives keep beating, the supervisor keeps watching).
            with app.batch_update(), app.suspend():
                # Nothing may raise out of this block: App.suspend resumes the
                # terminal only when its block ends normally.
                try:
                    from core.hooks.attached import run_continuing  # deferred: on enter only

                    # A Claude Code session goes on in a successor, here, once it hands off;
                    # a failing CLI's own last words are kept (its screen goes once we draw).
                    opened = await run_continuing(self.orchestrator, plan)
                    code, said = opened.code, opened.said
                    continued = len(opened.sessions) > 1
                except OSError as exc:  # the binary vanished or cannot be executed
                    failed = exc
        except SuspendNotSupported:
            self.notify(
                f"This panel has no terminal to hand over. Run it elsewhere "
                f"(ctrl+y copies it):\n{plan.command_line}",
                title="Not opened",
                severity="warning",
                timeout=8,
                markup=False,
            )
            return
        if failed is not None:
            self.notify(
                f"{plan.argv[0]}: {failed.strerror or failed}",
                title="Not opened",
                severity="error",
                markup=False,
            )
            return
        if code != 0:
            from tui.modals.cli_exited import CliExited  # deferred: opened on demand

            self.app.push_screen(CliExited(plan.shown_binary, code, said, plan.command_line))
        if new_session or continued:
            if self.import_roots is not None:
                self.background_import.start()
            return
        session = await self.orchestrator.refresh_transcript(plan.conversation_id)
        self.sessions.replace_session(session)
        current = self.sessions.highlighted_session
        if current is not None and current.conversation_id == session.conversation_id:
            self.preview.preview(session)

    def action_copy_command(self) -> None:
        """Copy ``cd DIR && claude --resume ID``, for people who open it in another pane."""
        session = self.sessions.highlighted_session
        if session is None:
            return
        try:
            plan = reopen_plan(session, self.orchestrator.settings, find_binary=False)
        except DelegateError as exc:
            self.notify(exc.message, title="Nothing copied", severity="warning", markup=False)
            return
        self.app.copy_to_clipboard(plan.command_line)
        self.notify(plan.command_line, title="Copied", timeout=4, markup=False)

    # --- a hand-off waiting for a person ------------------------------------

    def action_continue_handoff(self) -> None:
        """Continue the waiting hand-off: the highlighted session's, else the newest."""
        waiting = self.status.snapshot.waiting
        if not waiting:
            self.notify("No hand-off is waiting.", timeout=3)
            return
        shown = self.sessions.highlighted_session
        chosen = next(
            (
                w
                for w in waiting
                if shown is not None and w.document.source_session == shown.conversation_id
            ),
            waiting[0],
        )
        source = chosen.session
        if source is not None and opens_interactively(source, self.orchestrator.settings):
            self._open_handoff(chosen.document.document_id)
        else:
            self._continue_here(chosen)

    @work(group="open", exclusive=True, name="opening the hand-off", exit_on_error=False)
    async def _open_handoff(self, document_id: str) -> None:
        """The agent's CLI, interactively, the hand-off as its first prompt."""
        from core.continuation.service import Continuation  # deferred: see _continue_here

        try:
            start = await Continuation(self.orchestrator).interactive_start(document_id)
        except DelegateError as exc:
            self.notify(exc.message, title="Cannot open it", severity="warning", markup=False)
            return
        if start.successor_id is not None:
            # Once the new session is imported it is linked to the hand-off (the hooks
            # may do it first): nothing says the hand-off still waits.
            self._adopting = (start.document_id, start.successor_id)
        await self._hand_over(start.plan, new_session=True)
        if self.import_roots is None:
            self._adopt_handoff()

    @work(group="adopt", exclusive=True, name="linking the hand-off's session", exit_on_error=False)
    async def _adopt_handoff(self) -> None:
        """Link the session a person opened on a hand-off, once it is stored."""
        from core.continuation.service import Continuation  # deferred: see _continue_here

        if self._adopting is None:
            return
        document_id, successor_id = self._adopting
        try:
            adopted = await Continuation(self.orchestrator).adopt(document_id, successor_id)
        except DelegateError:
            return  # the document went (pruned, purged): nothing is waiting any more
        if adopted is not None:
            self._adopting = None
            self._reload_keeping_highlight()

    @work(group="runs", name="continuing the hand-off", exit_on_error=False)
    async def _continue_here(self, waiting: WaitingHandoff) -> None:
        """delegate's own agents: a new session primed with the hand-off, linked to the old."""
        # Deferred: hand-offs (their documents, git facts) load when one is continued,
        # not before the panel's first frame.
        from core.continuation.service import Continuation

        self.notify("Continuing the hand-off in a new session…", timeout=3)
        try:
            successor = await Continuation(self.orchestrator).continue_from(
                waiting.document.document_id
            )
        except DelegateError as exc:
            self.notify(exc.message, title="Not continued", severity="error", markup=False)
            return
        if self.sessions.index_of(successor.conversation_id) is None:
            self.sessions.insert_session(successor, 0)
        self.sessions.highlight(successor.conversation_id)
        self.refresh_status()

    # --- resume ----------------------------------------------------------

    def action_resume(self) -> None:
        """Open the follow-up box, whatever the session's state: the box says what
        would refuse the send (busy, pending, no binary, no folder), and a refused
        send keeps the prompt there."""
        session = self.sessions.highlighted_session
        if session is None:
            return
        cid = session.conversation_id

        async def check() -> DelegateError | None:
            return await self.orchestrator.follow_up_problem(cid)

        async def send(prompt: str) -> None:
            await self.orchestrator.delegate(prompt, conversation_id=cid)

        def sent(prompt: str | None) -> None:
            if prompt is not None:
                self._refresh_session_soon(cid)

        # Deferred, as every modal with a text area: TextArea (its document, its
        # syntax support) is not part of the first frame.
        from tui.modals.follow_up import FollowUpPrompt

        self.app.push_screen(FollowUpPrompt(session, check=check, send=send), sent)

    async def _refresh_session(self, conversation_id: str) -> None:
        try:
            session = await self.orchestrator.get_session(conversation_id)
        except DelegateError:
            return
        self.sessions.replace_session(session)
        current = self.sessions.highlighted_session
        if current is not None and current.conversation_id == conversation_id:
            self.preview.preview(session)

    def action_stop_run(self) -> None:
        session = self.sessions.highlighted_session
        if session is None:
            return
        if session.state not in (SessionState.RUNNING, SessionState.PENDING):
            self.notify("Nothing is running in that session.", timeout=3)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._stop(session)

        from tui.modals.confirm_stop import ConfirmStop  # deferred: opened on demand

        self.app.push_screen(ConfirmStop(session), answered)

    @work(group="stop", name="stopping the run", exit_on_error=False)
    async def _stop(self, session: Session) -> None:
        """Stop the session's run, whichever process on this host drives it."""
        self.notify("Stopping the run…", timeout=2)
        try:
            outcome = await self.orchestrator.stop_run(session.conversation_id)
        except DelegateError as exc:
            self.notify(exc.message, title="Nothing stopped", severity="warning", markup=False)
        else:
            if outcome.how == "signalled":
                self.notify("Asked its process to stop; it has not finished yet.", timeout=4)
        await self._refresh_session(session.conversation_id)

    # --- new delegate ----------------------------------------------------

    def action_new_delegate(self) -> None:
        # Deferred: the form's TextArea and runner lookup are not part of the first frame.
        from tui.modals.new_delegate import NewDelegate, agent_choices, default_choice, parent_offer

        settings = self.orchestrator.settings
        cwd = str(self.launch_cwd or Path.cwd())
        choices = agent_choices(settings)
        highlighted = self.sessions.highlighted_session
        parent = parent_offer(highlighted) if highlighted is not None else None
        form = NewDelegate(choices, default_choice(settings, choices), cwd, parent)

        def launched(request: LaunchRequest | None) -> None:
            if request is not None:
                self._launch(request)

        self.app.push_screen(form, launched)

    @work(group="runs", name="launching the delegate", exit_on_error=False)
    async def _launch(
        self, request: LaunchRequest, accept: CapsuleAcceptance | None = None
    ) -> None:
        try:
            if request.request_capsule and request.parent_id is not None:
                request = await self._requested_capsule(request)
            handles = await self.orchestrator.delegate(
                request.prompt,
                agent_id=request.agent_id,
                cwd=request.cwd,
                capsule=request.capsule,
                accept=accept,
                parent_id=request.parent_id,
            )
        except (StaleCapsule, CapsuleHasSecrets) as exc:
            from core.capsules.launch import CapsuleAcceptance

            self._ask_to_accept(request, accept or CapsuleAcceptance(), exc)
            return
        except DelegateError as exc:
            self.notify(
                f"{exc.code}: {exc.message}", title="Launch refused", severity="error", markup=False
            )
            return
        session = await self.orchestrator.get_session(handles[0].conversation_id)
        self.sessions.insert_session(session, 0)
        self.sessions.highlighted = 0
        self._count_listed()
        self._update_empty_state()

    async def _requested_capsule(self, request: LaunchRequest) -> LaunchRequest:
        """Ask the parent for its capsule (its draft is saved as ``capsule request``
        saves it); the launch then carries that file."""
        from core.drafting.capsule_request import request_capsule

        assert request.parent_id is not None
        self.notify(f"Asking {request.parent_id[:8]} for its capsule…", timeout=4)
        draft = await request_capsule(self.orchestrator, request.parent_id)
        return dataclasses.replace(request, capsule=str(draft.path), request_capsule=False)

    def _ask_to_accept(
        self, request: LaunchRequest, accepted: CapsuleAcceptance, refused: CapsuleRefused
    ) -> None:
        """A stale capsule, or one with secrets: a person may launch with it anyway."""
        if isinstance(refused, StaleCapsule):
            widened = dataclasses.replace(accepted, accept_stale=True)
        else:
            widened = dataclasses.replace(accepted, allow_secrets=True)

        def answered(yes: bool | None) -> None:
            if yes:
                self._launch(request, widened)

        from tui.modals.confirm_capsule import ConfirmCapsuleLaunch  # deferred: opened on demand

        self.app.push_screen(ConfirmCapsuleLaunch(refused), answered)

    # --- the archive: archive, undo, restore, rename, purge --------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``ctrl+d`` archives a session of the pool and restores an archived one;
        purge is for archived sessions only."""
        if action in ("dismiss_session", "restore_session", "purge_session"):
            session = self.sessions.highlighted_session
            archived = session is not None and session.archived_at is not None
            return archived if action != "dismiss_session" else not archived
        return True

    def action_dismiss_session(self, confirm: bool) -> None:
        session = self.sessions.highlighted_session
        if session is None:
            return
        if session.state in (SessionState.RUNNING, SessionState.PENDING):
            pending = session.state is SessionState.PENDING
            refused = DismissRefused.busy(session.conversation_id, pending=pending)
            self.notify(
                f"{refused.code}: {refused.message}",
                title="Cannot archive yet",
                severity="warning",
            )
            return
        if not confirm:
            self._dismiss_with_undo(session)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._dismiss_with_undo(session)

        from tui.modals.confirm_dismiss import ConfirmDismiss  # deferred: opened on demand

        self.app.push_screen(ConfirmDismiss(session, self.clock()), answered)

    def _dismiss_with_undo(self, session: Session) -> None:
        index = self.sessions.index_of(session.conversation_id) or 0
        self.sessions.remove_session(session.conversation_id)
        self._preview_highlighted()
        self.dismissals.start(session, index)
        self.notify(
            f"Archived {session.agent_id} · {first_line(session.shown_title, 40)} — ctrl+z to undo",
            title="Session archived",
            timeout=self.undo_seconds,
            markup=False,  # the title is transcript text
        )

    def action_undo_dismiss(self) -> None:
        pending = self.dismissals.undo_last()
        if pending is None:
            self.notify("Nothing to undo.", timeout=2)
            return
        back = pending.session.model_copy(update={"archived_at": None})
        self.sessions.insert_session(back, pending.index)
        self.app.clear_notifications()
        cid = pending.session.conversation_id
        self.notify(
            f"Restored {pending.session.agent_id} · {fmt.short_id(cid)}.",
            timeout=2,
            markup=False,
        )

    @on(Dismissals.Changed)
    def _dismissals_changed(self) -> None:
        self.refresh_status()

    @on(Dismissals.CommitFailed)
    def _dismissal_failed(self, event: Dismissals.CommitFailed) -> None:
        self.notify(event.error.message, title="Archive failed", severity="error", markup=False)
        self.sessions.insert_session(event.pending.session, event.pending.index)

    @on(Dismissals.RestoreFailed)
    def _restore_failed(self, event: Dismissals.RestoreFailed) -> None:
        self.notify(event.error.message, title="Restore failed", severity="error", markup=False)
        self.sessions.remove_session(event.pending.session.conversation_id)

    def action_restore_session(self) -> None:
        session = self.sessions.highlighted_session
        if session is not None and session.archived_at is not None:
            self._restore(session)

    @work(group="archive", name="restoring the session", exit_on_error=False)
    async def _restore(self, session: Session) -> None:
        try:
            await self.orchestrator.restore(session.conversation_id)
        except DelegateError as exc:
            self.notify(exc.message, title="Restore failed", severity="error", markup=False)
            return
        self.sessions.remove_session(session.conversation_id)  # it left the archive
        self._preview_highlighted()
        self.notify(
            f"Restored {session.agent_id} · {first_line(session.shown_title, 40)}.",
            timeout=3,
            markup=False,
        )

    def action_rename_session(self) -> None:
        session = self.sessions.highlighted_session
        if session is None:
            return

        def answered(name: str | None) -> None:
            if name is not None:
                self._rename(session, name)

        from tui.modals.rename import RenameSession  # deferred: opened on demand

        self.app.push_screen(RenameSession(session), answered)

    @work(group="archive", name="renaming the session", exit_on_error=False)
    async def _rename(self, session: Session, name: str) -> None:
        try:
            renamed = await self.orchestrator.rename(session.conversation_id, name)
        except DelegateError as exc:
            self.notify(exc.message, title="Rename failed", severity="error", markup=False)
            return
        self.sessions.replace_session(renamed)
        current = self.sessions.highlighted_session
        if current is not None and current.conversation_id == renamed.conversation_id:
            self.preview.preview(renamed)

    def action_purge_session(self) -> None:
        session = self.sessions.highlighted_session
        if session is None or session.archived_at is None:
            return
        self._ask_purge(session)

    @work(group="archive", name="asking before the purge", exit_on_error=False)
    async def _ask_purge(self, session: Session) -> None:
        """The question lists the sessions that depend on this one (guarded delete)."""
        from tui.modals.confirm_dismiss import DEPENDANTS_SHOWN, ConfirmPurge  # deferred

        try:
            ids = await self.orchestrator.dependants(session.conversation_id)
            shown = [await self.orchestrator.get_session(cid) for cid in ids[:DEPENDANTS_SHOWN]]
        except DelegateError as exc:
            self.notify(exc.message, title="Purge failed", severity="error", markup=False)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._purge(session, with_dependants=bool(ids))

        self.app.push_screen(ConfirmPurge(session, self.clock(), shown, len(ids)), answered)

    @work(group="archive", name="purging the session", exit_on_error=False)
    async def _purge(self, session: Session, *, with_dependants: bool = False) -> None:
        try:
            await self.orchestrator.purge(session.conversation_id, with_dependants=with_dependants)
        except DelegateError as exc:
            self.notify(exc.message, title="Purge failed", severity="error", markup=False)
            return
        self.sessions.remove_session(session.conversation_id)
        self._preview_highlighted()
        self.notify(
            f"Purged {session.agent_id} · {first_line(session.shown_title, 40)}.",
            timeout=3,
            markup=False,
        )

    async def flush_dismissals(self) -> None:
        """Commit every dismissal still in its undo window and stop following the core.

        The app is closing: events that arrive from now on (the commits, cancelled
        runs) must not start work against a store about to close.
        """
        self._detached = True
        self._stop_listening()
        self.background_import.stop()
        await self.dismissals.commit_all()

    # --- events from the core --------------------------------------------

    def on_history_posted(self, message: HistoryPosted) -> None:
        if self._detached:
            return
        event: HistoryEvent = message.event
        self.history.add_events([event])
        self.refresh_status()
        if isinstance(event, CapsuleStale):
            # The session on show may carry that capsule: its header marks it stale now.
            shown = self.preview.session
            if shown is not None and shown.capsule_id == event.document_id:
                self.preview.reload_if_showing(shown)
        if event.kind != "session_dismissed" and event.conversation_id:
            self._refresh_session_soon(event.conversation_id)

    @work(group="row-refresh", name="refreshing a row", exit_on_error=False)
    async def _refresh_session_soon(self, conversation_id: str) -> None:
        await self._refresh_session(conversation_id)

    def on_run_output_received(self, message: RunOutputReceived) -> None:
        self.preview.append_live(message.event.conversation_id, message.event.text)

    def on_run_activity_received(self, message: RunActivityReceived) -> None:
        e = message.event
        self.preview.show_activity(e.conversation_id, e.run_id, e.stderr_tail)

    # --- what other processes did (the supervisor) -------------------------

    def on_sessions_updated(self, message: SessionsUpdated) -> None:
        if not self._detached:
            self.live_rows.queue(message.changed, message.removed)

    @on(LiveRows.Read)
    def _rows_read(self, event: LiveRows.Read) -> None:
        """Gather what was read; the list takes it at most every ``LIVE_EVERY_S``."""
        if self._detached:
            return
        for cid in event.removed:
            self._arrived.pop(cid, None)
            self._gone[cid] = None
        for session in event.sessions:
            self._gone.pop(session.conversation_id, None)
            self._arrived[session.conversation_id] = session
        self._apply_rows()

    def _apply_arrived(self) -> None:
        """Update the rows on screen; a new session appears at its place in the order."""
        arrived_sessions, removed = list(self._arrived.values()), list(self._gone)
        self._arrived.clear()
        self._gone.clear()
        if self._detached or not (arrived_sessions or removed):
            return
        listed = self.sessions
        shown = listed.highlighted_session
        if listed.filter_query:
            # A search's ranking can change with any session: run it again.
            listed.reload(shown.conversation_id if shown else None)
            self._status_soon()
            return
        for cid in removed:
            listed.remove_session(cid)

        def order(session: Session) -> datetime:
            by_activity = self.scope.sort is SessionSort.ACTIVITY
            return session.last_interacted_at if by_activity else session.created_at

        arrived = []
        known = listed.known_ids()
        for session in arrived_sessions:
            cid = session.conversation_id
            if cid in known:
                if listed.is_child(cid) or self.scope.covers(session):
                    listed.replace_session(session)
                else:
                    listed.remove_session(cid)  # archived, or moved out of the scope
            elif self.dismissals.is_pending(cid) or not self.scope.covers(session):
                continue  # hidden while its dismissal can be undone, or not in the scope
            else:
                arrived.append(session)
        # In the store's order (newest first, then by id), in one update.
        listed.merge_sessions(arrived, lambda s: (order(s), s.conversation_id))
        current = listed.highlighted_session
        if current is None or shown is None or current.conversation_id != shown.conversation_id:
            self._preview_highlighted()
        elif any(s.conversation_id == current.conversation_id for s in arrived_sessions):
            self.preview.session_changed(current)
        self._show_position()
        self._status_soon()
        self._keep_first_page()

    def on_runs_updated(self, message: RunsUpdated) -> None:
        if not self._detached:
            self.preview.refresh_run(message.run_ids)

    def on_watch_status_changed(self, message: WatchStatusChanged) -> None:
        status = message.status
        note = ""
        if status.transcripts == "polling":
            note = polling_note(self.polling_every_s, status.reason)
        if note != self._watch_note:
            self._watch_note = note
            self.refresh_status()

    @on(HistoryCell.Selected)
    def _cell_selected(self, event: HistoryCell.Selected) -> None:
        if self.sessions.highlight(event.conversation_id):
            self.sessions.focus()
        else:
            self.notify(
                "That session is not in the list (dismissed, or not loaded yet).", timeout=3
            )

    # --- importing, refreshing, the rest ----------------------------------

    @on(BackgroundImport.Progressed)
    def _import_progressed(self, event: BackgroundImport.Progressed) -> None:
        if self._detached:
            return
        if event.final and self._adopting is not None:
            self._adopt_handoff()
        if event.sessions_changed:
            self._status_soon.cancel()
            self._reload_keeping_highlight()
        elif event.final:
            self._status_soon.now()
        else:
            self._status_soon()  # a note per committed batch: the status takes the latest

    def action_toggle_history(self) -> None:
        # The layout decides the default (shown when wide, hidden when narrow);
        # the toggle flips it either way.
        self.toggle_class("-toggle-history")

    def action_refresh(self) -> None:
        self._reload_keeping_highlight()
        if self.import_roots is not None:
            self.background_import.start(announce=True)

    @on(BackgroundImport.Announced)
    def _import_announced(self, event: BackgroundImport.Announced) -> None:
        """f5's import ended: say what it found, also when that is nothing."""
        if self._detached:
            return
        self.notify(
            "\n".join(line.replace("`", "") for line in event.lines),
            severity="error" if event.failed else "information",
            timeout=6,
            markup=False,
        )

    def _reload_keeping_highlight(self) -> None:
        keep = self.sessions.highlighted_session
        self.sessions.reload(keep.conversation_id if keep else None)
        self.refresh_status()

    def action_help(self) -> None:
        from tui.modals.help import HelpScreen, help_rows  # deferred: opened on demand

        self.app.push_screen(HelpScreen(help_rows(self, self.BINDINGS) + EXTRA_HELP))
