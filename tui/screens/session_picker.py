"""The ``/agent`` panel: pick a reusable session, preview it, resume it, dismiss it.

A reusable ``Screen``: another Textual app can push it with an orchestrator.
Every orchestrator call runs in a worker; core events arrive through
:mod:`tui.bridge` as ``HistoryPosted`` / ``RunOutputReceived`` messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Static

from core.clock import Clock, system_clock
from core.errors import AgentBusy, DelegateError, DismissRefused, SessionNotReady
from core.events import HistoryEvent
from core.models import Session, SessionPage, SessionState
from core.orchestrator import AgentOrchestrator
from core.sources.report import ImportProgress
from tui import formatting as fmt
from tui.bridge import HistoryPosted, RunOutputReceived, connect
from tui.modals.confirm_dismiss import ConfirmDismiss
from tui.modals.follow_up import FollowUpPrompt
from tui.modals.help import HelpScreen
from tui.modals.new_delegate import LaunchRequest, NewDelegate
from tui.safe_text import first_line
from tui.widgets.history import HistoryCell, HistoryTimeline
from tui.widgets.preview import PreviewPane
from tui.widgets.session_list import SessionList
from tui.widgets.status_panel import StatusPanel, StatusSnapshot
from tui.workers import ForwardsWorkerErrors

ImportRoots = tuple[Path | None, Path | None]  # (Claude Code dir, Codex dir); None: default

PAGE_SIZE = 25
UNDO_SECONDS = 6.0
HISTORY_ON_OPEN = 50
FULLEST_SHOWN = 3

EMPTY_STATE = """[b]No delegate sessions yet.[/b]

  • [b]n[/b] launches a new delegate right here.
  • [b]delegate demo --sessions 50[/b] fills the store with sample sessions to explore.
  • [b]delegate run "PROMPT"[/b] launches one from the shell.
  • Claude Code and Codex sessions on disk are imported at start; [b]ctrl+r[/b] looks again.
  • [b]delegate import --report[/b] lists the files an import skipped.

Press [b]?[/b] for every key."""


@dataclass
class PendingDismissal:
    """A dismissed row still inside its undo window."""

    session: Session
    index: int
    timer: Timer


class SessionPickerScreen(ForwardsWorkerErrors, Screen[None]):
    """Sessions on the left; preview and history on the right; status on top."""

    CSS_PATH = "session_picker.tcss"
    # Back from a modal, focus the list, never the filter box (it would eat the keys).
    AUTO_FOCUS = "SessionList"
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [
        (0, "-narrow"),
        (110, "-wide"),
    ]

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "r",
            "resume",
            "Resume",
            id="picker.resume",
            tooltip="Send a follow-up prompt into the highlighted session (also enter)",
        ),
        Binding(
            "d",
            "dismiss_session(True)",
            "Dismiss",
            id="picker.dismiss",
            tooltip="Dismiss the highlighted session, after confirming",
        ),
        Binding(
            "ctrl+d",
            "dismiss_session(False)",
            "Dismiss now",
            id="picker.dismiss_now",
            show=False,
            tooltip="Dismiss the highlighted session without asking",
        ),
        Binding(
            "u",
            "undo_dismiss",
            "Undo",
            id="picker.undo",
            show=False,
            tooltip="Bring back the session dismissed a moment ago",
        ),
        Binding(
            "n",
            "new_delegate",
            "New",
            id="picker.new",
            tooltip="Launch a new delegate (agent, working directory, prompt)",
        ),
        Binding(
            "slash,f",
            "filter",
            "Filter",
            id="picker.filter",
            tooltip="Filter by agent, title, cwd, branch or id",
        ),
        Binding(
            "left_square_bracket",
            "page_older",
            "Older",
            id="picker.older",
            tooltip="Preview older messages",
        ),
        Binding(
            "right_square_bracket",
            "page_newer",
            "Newer",
            id="picker.newer",
            tooltip="Preview newer messages",
        ),
        Binding(
            "x",
            "stop_run",
            "Stop",
            id="picker.stop",
            show=False,
            tooltip="Stop the run of the highlighted session (runs this panel started)",
        ),
        Binding(
            "h",
            "toggle_history",
            "History",
            id="picker.history",
            tooltip="Show or hide the history cells",
        ),
        Binding(
            "ctrl+r",
            "refresh",
            "Refresh",
            id="picker.refresh",
            show=False,
            tooltip="Import new Claude Code / Codex sessions and reload the list",
        ),
        Binding("question_mark", "help", "Help", id="picker.help", tooltip="List every key"),
        Binding(
            "q",
            "app.quit(True)",
            "Quit",
            id="picker.quit",
            tooltip="Leave delegate, after confirming",
        ),
    ]

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
    ) -> None:
        super().__init__()
        self.undo_seconds = undo_seconds
        self.launch_cwd = launch_cwd
        # Where to import Claude Code / Codex sessions from, at start and on
        # ctrl+r; None turns importing off (tests, embedding apps).
        self.import_roots = import_sources
        self._import_note = ""
        self._import_after_first_page = False
        self.orchestrator = orchestrator
        self.clock = clock
        self.preview_size = preview_size
        self.page_size = page_size
        self.query_text = ""
        self._preview_cursors: list[str | None] = [None]
        self._pending: dict[str, PendingDismissal] = {}
        self._disconnect = lambda: None
        self._detached = False
        self._total_sessions = 0

    # --- layout ----------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusPanel(id="status")
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield Input(placeholder="/ filter: agent, title, cwd, branch, id", id="filter")
                yield Static("", id="list-note")
                yield SessionList(self._fetch_page, self.clock, id="sessions")
                yield Static(Text.from_markup(EMPTY_STATE), id="empty-state")
            with Vertical(id="right"):
                yield PreviewPane(id="preview")
                yield HistoryTimeline(self.clock, id="history")
        yield Footer()

    def on_mount(self) -> None:
        self._disconnect = connect(self.orchestrator.bus, self)
        # Focus now, not later (``focus()`` is deferred): a status that arrives
        # first and finds the store empty must see the list focused to hide it.
        self.set_focus(self.query_one(SessionList))
        self.query_one(SessionList).reload()
        self.refresh_status()
        self._load_history()
        # The import starts once the first page is on screen, so a warm start
        # paints from the index before the re-scan competes for the loop.
        self._import_after_first_page = self.import_roots is not None

    def on_unmount(self) -> None:
        self._stop_listening()

    def _stop_listening(self) -> None:
        self._disconnect()
        self._disconnect = lambda: None

    # --- data ------------------------------------------------------------

    async def _fetch_page(self, cursor: str | None) -> SessionPage:
        page = await self.orchestrator.list_sessions(
            self.page_size, cursor, query=self.query_text or None
        )
        if self._pending:
            # Rows inside their undo window stay hidden, whatever reloads the list.
            kept = [s for s in page.sessions if s.conversation_id not in self._pending]
            page = page.model_copy(update={"sessions": kept})
        return page

    @work(group="status", name="reading the status", exclusive=True, exit_on_error=False)
    async def refresh_status(self) -> None:
        if self._detached:
            return
        counts = await self.orchestrator.status_counts()
        fullest = await self.orchestrator.fullest_sessions(FULLEST_SHOWN)
        self._total_sessions = sum(v for k, v in counts.items() if k != "bytes")
        pending = len(self._pending)
        notes = [f"{pending} dismissal pending · u to undo"] if pending else []
        if self._import_note:
            notes.append(self._import_note)
        self.query_one(StatusPanel).snapshot = StatusSnapshot(
            counts, tuple(fullest), " · ".join(notes)
        )
        self._update_list_note()

    @work(group="history-load", name="loading the history", exit_on_error=False)
    async def _load_history(self) -> None:
        events = await self.orchestrator.history(HISTORY_ON_OPEN)
        self.query_one(HistoryTimeline).add_events(list(reversed(events)))

    @work(group="preview", name="loading the preview", exclusive=True, exit_on_error=False)
    async def _load_preview(self, session: Session) -> None:
        cursor = self._preview_cursors[-1]
        try:
            page = await self.orchestrator.recent_messages(
                session.conversation_id, self.preview_size, cursor
            )
        except DelegateError as exc:
            self.query_one(PreviewPane).show_empty(f"{exc.code}: {exc.message}")
            return
        self.query_one(PreviewPane).show(
            session,
            page,
            self.clock(),
            page_number=len(self._preview_cursors),
            has_newer=len(self._preview_cursors) > 1,
            size=self.preview_size,
        )
        self._older_cursor = page.next_cursor

    @work(group="count", name="counting matches", exclusive=True, exit_on_error=False)
    async def _count_matches(self) -> None:
        query = self.query_text
        matches = await self.orchestrator.count_sessions(query=query or None)
        if query == self.query_text:
            self._matches = matches
            self._update_list_note()

    def _update_list_note(self) -> None:
        note = self.query_one("#list-note", Static)
        listed = self.query_one(SessionList)
        if self.query_text:
            matches = getattr(self, "_matches", None)
            hidden = self._total_sessions - (matches or 0)
            text = Text()
            if matches is None:
                text.append("filtering…", "dim")
            else:
                text.append(f"{matches} of {self._total_sessions} match ", "bold")
                text.append(repr(self.query_text))
                text.append(f" · {hidden} hidden by the filter · esc clears", "dim")
            note.update(text)
            note.display = True
        else:
            note.display = False
        empty = not listed.sessions and not self.query_text and self._total_sessions == 0
        self.query_one("#empty-state").display = empty
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
        if event.first and self._import_after_first_page:
            self._import_after_first_page = False
            self.call_after_refresh(self.run_import)
        if event.first:
            listed = self.query_one(SessionList)
            if not listed.sessions:
                self.query_one(PreviewPane).show_empty(
                    "No session matches the filter." if self.query_text else "No sessions."
                )
            self._update_list_note()

    @on(SessionList.Highlighted)
    def _highlighted(self, event: SessionList.Highlighted) -> None:
        self._preview_cursors = [None]
        self._load_preview(event.session)

    def _preview_highlighted(self) -> None:
        """Preview whatever is highlighted now (the row under the cursor may have changed
        without the cursor moving, e.g. when the highlighted row was removed)."""
        session = self.query_one(SessionList).highlighted_session
        if session is None:
            self.query_one(PreviewPane).show_empty("No sessions.")
            return
        self._preview_cursors = [None]
        self._load_preview(session)

    @on(SessionList.Chosen)
    def _chosen(self, event: SessionList.Chosen) -> None:
        self.action_resume()

    # --- filter ----------------------------------------------------------

    def action_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.query_text = event.value.strip()
        self._matches = None
        self.query_one(SessionList).reload()
        self._update_list_note()
        if self.query_text:
            self._count_matches()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.query_one(SessionList).focus()

    def key_escape(self) -> None:
        filter_input = self.query_one("#filter", Input)
        if filter_input.value:
            filter_input.value = ""
        self.query_one(SessionList).focus()

    def key_down(self) -> None:
        if self.focused is self.query_one("#filter", Input):
            self.query_one(SessionList).focus()

    # --- preview paging --------------------------------------------------

    def action_page_older(self) -> None:
        session = self.query_one(SessionList).highlighted_session
        cursor = getattr(self, "_older_cursor", None)
        if session is None or cursor is None:
            self.notify("No older messages.", timeout=2)
            return
        self._preview_cursors.append(cursor)
        self._load_preview(session)

    def action_page_newer(self) -> None:
        session = self.query_one(SessionList).highlighted_session
        if session is None or len(self._preview_cursors) == 1:
            self.notify("Already at the newest messages.", timeout=2)
            return
        self._preview_cursors.pop()
        self._load_preview(session)

    # --- resume ----------------------------------------------------------

    def _blocked_reason(self, session: Session) -> str | None:
        cid = session.conversation_id
        if session.state is SessionState.RUNNING:
            busy = AgentBusy(cid)
            return f"{busy.code}: {busy.message} — wait for it to finish, or x to stop it"
        if session.state is SessionState.PENDING:
            not_ready = SessionNotReady(cid)
            return f"{not_ready.code}: {not_ready.message}"
        return None

    def action_resume(self) -> None:
        session = self.query_one(SessionList).highlighted_session
        if session is None:
            return
        reason = self._blocked_reason(session)
        if reason:
            self.notify(reason, title="Cannot resume yet", severity="warning")
            return

        def sent(prompt: str | None) -> None:
            if prompt is not None:
                self._send_follow_up(session, prompt)

        self.app.push_screen(FollowUpPrompt(session), sent)

    @work(group="runs", name="sending the follow-up", exit_on_error=False)
    async def _send_follow_up(self, session: Session, prompt: str) -> None:
        try:
            await self.orchestrator.delegate(prompt, conversation_id=session.conversation_id)
        except DelegateError as exc:
            self.notify(
                f"{exc.code}: {exc.message}",
                title="Follow-up refused",
                severity="error",
                markup=False,
            )
            return
        await self._refresh_session(session.conversation_id)

    async def _refresh_session(self, conversation_id: str) -> None:
        try:
            session = await self.orchestrator.get_session(conversation_id)
        except DelegateError:
            return
        listed = self.query_one(SessionList)
        listed.replace_session(session)
        current = listed.highlighted_session
        if current is not None and current.conversation_id == conversation_id:
            self._preview_cursors = [None]
            self._load_preview(session)

    def action_stop_run(self) -> None:
        session = self.query_one(SessionList).highlighted_session
        if session is None:
            return
        handles = [
            h for h in self.orchestrator.running() if h.conversation_id == session.conversation_id
        ]
        if not handles:
            self.notify("Nothing this panel started is running in that session.", timeout=3)
            return
        for handle in handles:
            handle.cancel()
        self.notify("Stopping the run…", timeout=2)

    # --- new delegate ----------------------------------------------------

    def action_new_delegate(self) -> None:
        settings = self.orchestrator.settings
        cwd = str(self.launch_cwd or Path.cwd())
        form = NewDelegate(sorted(settings.agents), settings.default_agent, cwd)

        def launched(request: LaunchRequest | None) -> None:
            if request is not None:
                self._launch(request)

        self.app.push_screen(form, launched)

    @work(group="runs", name="launching the delegate", exit_on_error=False)
    async def _launch(self, request: LaunchRequest) -> None:
        try:
            handles = await self.orchestrator.delegate(
                request.prompt, agent_id=request.agent_id, cwd=request.cwd
            )
        except DelegateError as exc:
            self.notify(
                f"{exc.code}: {exc.message}", title="Launch refused", severity="error", markup=False
            )
            return
        session = await self.orchestrator.get_session(handles[0].conversation_id)
        listed = self.query_one(SessionList)
        listed.insert_session(session, 0)
        listed.highlighted = 0
        self._total_sessions += 1
        self._update_list_note()

    # --- dismiss (with an undo window) -----------------------------------

    def action_dismiss_session(self, confirm: bool) -> None:
        session = self.query_one(SessionList).highlighted_session
        if session is None:
            return
        if session.state in (SessionState.RUNNING, SessionState.PENDING):
            pending = session.state is SessionState.PENDING
            refused = DismissRefused.busy(session.conversation_id, pending=pending)
            self.notify(
                f"{refused.code}: {refused.message}",
                title="Cannot dismiss yet",
                severity="warning",
            )
            return
        if not confirm:
            self._dismiss_with_undo(session)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._dismiss_with_undo(session)

        self.app.push_screen(ConfirmDismiss(session, self.clock()), answered)

    def _dismiss_with_undo(self, session: Session) -> None:
        listed = self.query_one(SessionList)
        index = next(
            (
                i
                for i, s in enumerate(listed.sessions)
                if s.conversation_id == session.conversation_id
            ),
            0,
        )
        listed.remove_session(session.conversation_id)
        self._preview_highlighted()
        cid = session.conversation_id
        timer = self.set_timer(self.undo_seconds, lambda: self._commit_dismissal(cid))
        self._pending[cid] = PendingDismissal(session, index, timer)
        self.notify(
            f"Dismissed {session.agent_id} · {first_line(session.title, 40)} — u to undo",
            title="Session dismissed",
            timeout=self.undo_seconds,
            markup=False,  # the title is transcript text
        )
        self.refresh_status()

    def action_undo_dismiss(self) -> None:
        if not self._pending:
            self.notify("Nothing to undo.", timeout=2)
            return
        cid = next(reversed(self._pending))
        pending = self._pending.pop(cid)
        pending.timer.stop()
        self.query_one(SessionList).insert_session(pending.session, pending.index)
        self.app.clear_notifications()
        self.notify(
            f"Kept {pending.session.agent_id} · {fmt.short_id(cid)}.", timeout=2, markup=False
        )
        self.refresh_status()

    @work(group="dismiss", name="dismissing the session", exit_on_error=False)
    async def _commit_dismissal(self, conversation_id: str) -> None:
        await self.commit_dismissal(conversation_id)

    async def commit_dismissal(self, conversation_id: str) -> None:
        pending = self._pending.pop(conversation_id, None)
        if pending is None:
            return
        pending.timer.stop()
        try:
            await self.orchestrator.dismiss(conversation_id)
        except DelegateError as exc:
            self.notify(
                f"{exc.code}: {exc.message}", title="Dismiss failed", severity="error", markup=False
            )
            self.query_one(SessionList).insert_session(pending.session, pending.index)
        self.refresh_status()

    async def flush_dismissals(self) -> None:
        """Commit every dismissal still in its undo window and stop following the core.

        The app is closing: events that arrive from now on (the commits, cancelled
        runs) must not start work against a store about to close.
        """
        self._detached = True
        self._stop_listening()
        for cid in list(self._pending):
            await self.commit_dismissal(cid)

    # --- events from the core --------------------------------------------

    def on_history_posted(self, message: HistoryPosted) -> None:
        if self._detached:
            return
        event: HistoryEvent = message.event
        self.query_one(HistoryTimeline).add_events([event])
        self.refresh_status()
        if event.kind != "session_dismissed":
            self._refresh_session_soon(event.conversation_id)

    @work(group="row-refresh", name="refreshing a row", exit_on_error=False)
    async def _refresh_session_soon(self, conversation_id: str) -> None:
        await self._refresh_session(conversation_id)

    def on_run_output_received(self, message: RunOutputReceived) -> None:
        self.query_one(PreviewPane).append_live(message.event.conversation_id, message.event.text)

    @on(HistoryCell.Selected)
    def _cell_selected(self, event: HistoryCell.Selected) -> None:
        listed = self.query_one(SessionList)
        for index, session in enumerate(listed.sessions):
            if session.conversation_id == event.conversation_id:
                listed.highlighted = index
                listed.focus()
                return
        self.notify("That session is not in the list (dismissed, or not loaded yet).", timeout=3)

    # --- misc ------------------------------------------------------------

    def action_toggle_history(self) -> None:
        # The layout decides the default (shown when wide, hidden when narrow);
        # the toggle flips it either way.
        self.toggle_class("-toggle-history")

    def action_refresh(self) -> None:
        self._reload_keeping_highlight()
        if self.import_roots is not None:
            self.run_import()

    def _reload_keeping_highlight(self) -> None:
        keep = self.query_one(SessionList).highlighted_session
        self.query_one(SessionList).reload(keep.conversation_id if keep else None)
        self.refresh_status()

    # --- importing Claude Code and Codex sessions (background) ----------

    @work(group="import", name="importing sessions", exclusive=True, exit_on_error=False)
    async def run_import(self) -> None:
        """Index on-disk transcripts; the first committed batch shows up at once."""
        assert self.import_roots is not None
        shown_first_batch = False

        def progress(update: ImportProgress) -> None:
            nonlocal shown_first_batch
            if self._detached:
                return
            if update.phase == "reading" and update.files_total:
                percent = 100 * update.bytes_done // max(1, update.bytes_total)
                self._import_note = (
                    f"importing {update.files_done}/{update.files_total} files ({percent}%)"
                )
            new_rows = update.sessions_added + update.sessions_updated
            if new_rows and not shown_first_batch:
                shown_first_batch = True
                self._reload_keeping_highlight()
            else:
                self.refresh_status()

        self._import_note = "importing…"
        self.refresh_status()
        claude_dir, codex_dir = self.import_roots
        try:
            report = await self.orchestrator.import_sources(claude_dir, codex_dir, progress)
        except DelegateError as exc:
            self._import_note = f"import failed: {exc.code}: {exc.message}"
            self.refresh_status()
            return
        if self._detached:
            return
        self._import_note = report.problem_line or ""
        if report.sessions_added or report.sessions_updated:
            self._reload_keeping_highlight()
        else:
            self.refresh_status()

    def action_help(self) -> None:
        rows = []
        # Active bindings reflect the user's keymap, so help shows remapped keys.
        keys_by_id: dict[str, list[str]] = {}
        for key, active in self.active_bindings.items():
            if active.binding.id:
                keys_by_id.setdefault(active.binding.id, []).append(key)
        for declared in self.BINDINGS:
            assert isinstance(declared, Binding)
            keys = ", ".join(
                self.app.get_key_display(Binding(key, ""))
                for key in keys_by_id.get(declared.id or "", declared.key.split(","))
            )
            rows.append((keys, declared.description, declared.tooltip))
        rows += [
            ("↑/↓ pgup/pgdn", "Move", "Move through sessions; more load near the end"),
            ("enter", "Resume", "Open the follow-up box for the highlighted session"),
            ("esc", "Clear filter", "Clear the filter and return to the list"),
            ("ctrl+p", "Commands", "The command palette with every panel action"),
            ("tab", "Focus", "Move between the list, the preview and the history cells"),
        ]
        self.app.push_screen(HelpScreen(rows))
