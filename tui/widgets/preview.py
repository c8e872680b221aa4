"""The preview pane: the last N messages of the highlighted session, paged.

The pane owns its paging: the stack of cursors it went back through, the
cursor of the next older page, and the worker that loads a page (a newer
request cancels the one in flight). Under the messages it says what the
session's run is doing (:mod:`tui.widgets.run_status`): while a run is on show
a timer ticks its elapsed time (and only then: an idle pane has no timer).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from datetime import datetime

from rich.console import Group, RenderableType
from rich.text import Text
from textual import getters, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Static

from core.clock import Clock
from core.errors import DelegateError
from core.models import ContextDocument, MessagePage, Role, Run, RunStatus, Session, SessionState
from core.redact_stream import StreamRedactor
from tui.shared import formatting as fmt
from tui.shared.context_levels import DEFAULT_THRESHOLDS, ThresholdsFor
from tui.shared.safe_text import first_line, visible
from tui.shared.workers import ForwardsWorkerErrors
from tui.widgets.context_details import capsule_text, preview_line
from tui.widgets.context_meter import meter_text
from tui.widgets.message_view import message_renderable
from tui.widgets.run_status import Activity, run_block

# (conversation id, messages per page, cursor or None for the newest) -> a page
PageLoader = Callable[[str, int, str | None], Awaitable[MessagePage]]
# (conversation id) -> the session's latest run, or None
RunLoader = Callable[[str], Awaitable[Run | None]]
# (capsule id) -> its registry row, or None (read only for a session launched with one)
CapsuleLoader = Callable[[str], Awaitable[ContextDocument | None]]

# A run silent this long shows the tail of its stderr (seconds).
QUIET_SECONDS = 5.0
# How often the elapsed time of a run on show is redrawn (seconds).
TICK_SECONDS = 1.0
# Runs worth reading when a session is previewed: in flight, or ended early.
_RUN_WORTH_SHOWING = (RunStatus.CANCELLED, RunStatus.INTERRUPTED)


class LiveReply:
    """A streamed reply as the panel shows it: redacted by whole lines, each line
    sanitised once and appended (never redone whole), the line still arriving drawn
    up to its last whole word.

    ``\r\n`` is shown as a newline (as :func:`visible` does), so a chunk that ends
    in ``\r`` keeps it back until the next chunk says whether ``\n`` follows.
    """

    def __init__(self) -> None:
        self._lines = Text("assistant (streaming)\n", "bold green")
        self._held_cr = False
        self._redactor = StreamRedactor()  # a secret split across chunks is judged whole
        self.received = False

    @property
    def text(self) -> Text:
        """The lines so far and the line still arriving, as far as it can be shown."""
        shown = self._lines.copy()
        shown.append(visible(self._redactor.pending()))
        return shown

    def append(self, chunk: str) -> None:
        self.received = True
        chunk = self._redactor.feed(chunk)
        if self._held_cr:
            chunk = "\r" + chunk
        self._held_cr = chunk.endswith("\r")
        if self._held_cr:
            chunk = chunk[:-1]
        self._lines.append(visible(chunk))


def stored_activity(run: Run) -> Activity:
    """What the run row says the agent did last (kept by whichever process drives it)."""
    return Activity(
        stderr_tail=run.stderr_tail or "",
        live_output=run.live_output or "",
        last_output_at=run.last_output_at,
    )


def _wants_run(session: Session) -> bool:
    return (
        session.state in (SessionState.RUNNING, SessionState.PENDING)
        or session.last_run_status in _RUN_WORTH_SHOWING
    )


class PreviewPane(ForwardsWorkerErrors, VerticalScroll):
    """Header of the session (pinned), its page of messages (oldest at top), a live reply.

    Messages are numbered in conversation order (#1 is the first), counted back
    from the session's message count over the pages gone back through; ``ctrl+o``
    (:meth:`toggle_expanded`) shows long messages whole.
    """

    DEFAULT_CSS = """
    PreviewPane { height: 1fr; padding: 0 1; }
    PreviewPane > #preview-header { dock: top; padding-bottom: 1; }
    PreviewPane > .preview-message { margin-bottom: 1; }
    PreviewPane > #preview-run { margin: 1 0 0 0; }
    PreviewPane > #preview-live { color: $text-success; }
    PreviewPane > #preview-footer { color: $text-muted; }
    """

    page_number: reactive[int] = reactive(1)

    header = getters.query_one("#preview-header", Static)
    messages = getters.query_one("#preview-messages", Static)
    run_status = getters.query_one("#preview-run", Static)
    live = getters.query_one("#preview-live", Static)
    footer = getters.query_one("#preview-footer", Static)

    def __init__(
        self,
        load_page: PageLoader,
        clock: Clock,
        *,
        size: int,
        load_run: RunLoader | None = None,
        quiet_s: float = QUIET_SECONDS,
        tick_s: float = TICK_SECONDS,
        thresholds: ThresholdsFor | None = None,
        load_capsule: CapsuleLoader | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._load_page = load_page
        self._load_capsule = load_capsule
        # The [context] thresholds that colour the meter, by the session's folder.
        self._thresholds = thresholds or (lambda cwd: DEFAULT_THRESHOLDS)
        self._load_run = load_run
        self._clock = clock
        self.size_per_page = size
        self.quiet_s = quiet_s
        self.tick_s = tick_s
        self.session: Session | None = None
        # The session's latest run when it is worth a word (in flight or ended early).
        self.run: Run | None = None
        self._activity = Activity()
        # (role, run id) of the messages on the page: is the prompt / reply there yet?
        self._on_page: set[tuple[Role, str]] = set()
        self._ticker: Timer | None = None
        # Cursors of the pages gone back through; [None] is the newest page.
        self._cursors: list[str | None] = [None]
        # How many messages each page gone back through held (numbers count back over them).
        self._page_lengths: list[int] = []
        self._older_cursor: str | None = None
        # Long messages shown whole (ctrl+o), until toggled back.
        self.expanded = False
        self._shown: tuple[Session, MessagePage] | None = None  # what ctrl+o redraws
        self._live = LiveReply()
        self._follow_end = True
        self._newer = 0
        # Set by the screen when it is short: the header's title keeps to one line.
        self.one_line_title = False

    def compose(self) -> ComposeResult:
        yield Static(Text("Nothing selected", "dim"), id="preview-header")
        yield Static(id="preview-messages")
        run_status = Static(id="preview-run")
        run_status.display = False  # shown when a run has something to say
        yield run_status
        yield Static(id="preview-live")
        yield Static(id="preview-footer")

    # --- what to show ----------------------------------------------------

    def preview(self, session: Session) -> None:
        """Show the newest page of ``session``."""
        self._cursors = [None]
        self._page_lengths = []
        self._load(session)

    def reload_if_showing(self, session: Session) -> None:
        """``session`` changed: show its newest page again if it is the one on show."""
        if self.session is not None and self.session.conversation_id == session.conversation_id:
            self.preview(session)

    def session_changed(self, session: Session) -> None:
        """``session`` changed (another process, an appended transcript): show it anew
        if it is on show at its newest page; an older page being read stays put."""
        if self.session is None or self.session.conversation_id != session.conversation_id:
            return
        if len(self._cursors) == 1:
            self._load(session)

    def page_older(self) -> bool:
        """Go back a page; False when there is none."""
        if self.session is None or self._older_cursor is None:
            return False
        self._cursors.append(self._older_cursor)
        self._load(self.session)
        return True

    def page_newer(self) -> bool:
        """Go forward a page; False when already at the newest."""
        if self.session is None or len(self._cursors) == 1:
            return False
        self._cursors.pop()
        self._load(self.session)
        return True

    @work(group="preview", name="loading the preview", exclusive=True, exit_on_error=False)
    async def _load(self, session: Session) -> None:
        try:
            page = await self._load_page(
                session.conversation_id, self.size_per_page, self._cursors[-1]
            )
            run = await self._read_run(session)
            capsule = await self._read_capsule(session)
        except DelegateError as exc:
            self.show_empty(exc.message)
            return
        depth = len(self._cursors)
        self._page_lengths = [*self._page_lengths[: depth - 1], len(page.messages)]
        self.show(
            session,
            page,
            self._clock(),
            page_number=depth,
            has_newer=depth > 1,
            size=self.size_per_page,
            run=run,
            newer=sum(self._page_lengths[: depth - 1]),
            capsule=capsule,
        )
        self._older_cursor = page.next_cursor

    async def _read_capsule(self, session: Session) -> ContextDocument | None:
        """The registry row of the session's capsule (is it stale?); most sessions have none
        and cost no query."""
        if self._load_capsule is None or not session.capsule_id:
            return None
        return await self._load_capsule(session.capsule_id)

    async def _read_run(self, session: Session) -> Run | None:
        if self._load_run is None or not _wants_run(session):
            return None
        run = await self._load_run(session.conversation_id)
        if run is None or (run.status is not RunStatus.RUNNING and not _wants_run(session)):
            return None
        return run

    def refresh_run(self, run_ids: tuple[str, ...]) -> None:
        """Runs changed somewhere: read the one on show again if it is among them."""
        if self.session is not None and self.run is not None and self.run.run_id in run_ids:
            self._reload_run(self.session)

    @work(group="preview-run", name="reading the run", exclusive=True, exit_on_error=False)
    async def _reload_run(self, session: Session) -> None:
        run = await self._read_run(session)
        if self.session is None or self.session.conversation_id != session.conversation_id:
            return  # the highlight moved on meanwhile
        self._set_run(run, stored=True)

    # --- rendering -------------------------------------------------------

    def show(
        self,
        session: Session,
        page: MessagePage,
        now: datetime,
        *,
        page_number: int,
        has_newer: bool,
        size: int,
        run: Run | None = None,
        newer: int = 0,
        capsule: ContextDocument | None = None,
    ) -> None:
        """``newer``: how many messages the newer pages hold (the numbers count back over them);
        ``capsule``: the registry row of the capsule the session was launched with."""
        self.page_number = page_number
        self._newer = newer
        header = Text()
        # A short screen (80x24) cuts the title to one line: the messages need the room.
        width = max(20, self.scrollable_content_region.width) if self.one_line_title else 200
        header.append(first_line(session.shown_title or "(untitled)", width), "bold")
        header.append("\n")
        header.append(f"{session.agent_id} · {session.mode.value} · {session.state.value}", "dim")
        header.append(f" · {fmt.size(session.metrics.bytes)} · ", "dim")
        thresholds = self._thresholds(session.cwd)
        header.append_text(meter_text(session.context, thresholds=thresholds, bar_width=10))
        if session.last_run_status is RunStatus.INTERRUPTED:
            # Its process died mid-run: the reply below may stop half way.
            header.append(" · last run interrupted", "dark_orange")
        elif session.last_run_status is RunStatus.CANCELLED:
            header.append(" · last run cancelled", "yellow")
        if context_line := preview_line(session):
            header.append("\n")
            header.append_text(context_line)
        if session.capsule_id:
            header.append("\n")
            header.append_text(capsule_text(session, capsule))
        header.append(f"\n{session.conversation_id}", "dim")
        self.header.update(header)
        self._shown = (session, page)
        self._render_messages(session, page, now)
        self._on_page = {(m.role, m.run_id) for m in page.messages if m.run_id}
        same = self.session is not None and (
            self.session.conversation_id == session.conversation_id
        )
        if same and session.state in (SessionState.RUNNING, SessionState.PENDING):
            # Reloaded mid-run (its row changed): the reply streamed so far stays.
            self._show_live(self._live.text if self._live.received else "")
        else:
            self._live = LiveReply()
            self._show_live("")
        same_run = run is not None and self.run is not None and run.run_id == self.run.run_id
        heard_this_run = run is not None and self._activity.heard_run_id == run.run_id
        if not (same and same_run) and not heard_this_run:
            self._activity = Activity()  # what we heard belongs to another run
        self.session = session
        self._set_run(run, stored=True)
        hints = []
        if page.next_cursor:
            hints.append("alt+↑ older")
        if has_newer:
            hints.append("alt+↓ newer")
        where = f"page {page_number} · last {size} messages per page"
        footer = where + ("  ·  " + "  ".join(hints) if hints else "")
        self.footer.update(Text(footer))
        # The newest page shows its end; older pages read from their top.
        self._follow_end = page_number == 1
        if self._follow_end:
            self.scroll_end(animate=False)
            self.call_after_refresh(self.scroll_end, animate=False)  # once laid out
        else:
            self.scroll_home(animate=False)

    def _render_messages(self, session: Session, page: MessagePage, now: datetime) -> None:
        # The newest message is number ``total``; a page read past the count
        # (appended since the row was read) still numbers from 1 up.
        total = max(session.metrics.messages, self._newer + len(page.messages))
        newest_first = [
            message_renderable(m, now, number=total - self._newer - i, expanded=self.expanded)
            for i, m in enumerate(page.messages)
        ]
        body: RenderableType = (
            Group(*reversed(newest_first))
            if newest_first
            else Text("No messages yet.", "dim italic")
        )
        self.messages.update(body)

    def toggle_expanded(self) -> None:
        """Show long messages whole, or cut again (the scroll position is kept)."""
        self.expanded = not self.expanded
        if self._shown is not None:
            session, page = self._shown
            self._follow_end = False
            self._render_messages(session, page, self._clock())

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        # The new content's height is only known once laid out, which may come
        # after the scroll asked for in show(): keep the end in view then too.
        if self._follow_end and new.height != old.height:
            self.scroll_end(animate=False)

    def on_resize(self) -> None:
        # A box that grows or shrinks (the list above it, the terminal) moves the end too;
        # asked after the refresh, once the new height is laid out.
        if self._follow_end:
            self.call_after_refresh(self.scroll_end, animate=False)

    def _show_live(self, text: Text | str) -> None:
        """The streamed reply under the page; ``-no-live`` while there is none (a short
        screen then spares its blank line)."""
        self.live.update(text)
        self.set_class(not text, "-no-live")

    def show_empty(self, text: str) -> None:
        self.session = None
        self._shown = None
        self._older_cursor = None
        self._set_run(None)
        self.header.update(Text(text, "dim"))
        for part in (self.messages, self.run_status, self.footer):
            part.update("")
        self._show_live("")

    def append_live(self, conversation_id: str, text: str) -> None:
        """A streamed chunk of a reply for the session on show."""
        if self.session is None or self.session.conversation_id != conversation_id:
            return
        self._live.append(text)
        self._show_live(self._live.text)
        self._activity = dataclasses.replace(self._activity, last_output_at=self._clock())
        self._render_run()
        self.scroll_end(animate=False)

    def show_activity(self, conversation_id: str, run_id: str, stderr_tail: str) -> None:
        """The agent of a run this process drives wrote to stderr (``RunActivity``).

        Stderr is not the reply: the quiet is still counted from the last reply chunk, so a
        run that only logs shows those lines under "no output for …" rather than hiding them.
        """
        if self.session is None or self.session.conversation_id != conversation_id:
            return
        if self.run is not None and self.run.run_id != run_id:
            return
        self._activity = dataclasses.replace(
            self._activity, stderr_tail=stderr_tail, heard_run_id=run_id
        )
        self._render_run()

    # --- the run on show -------------------------------------------------

    def _set_run(self, run: Run | None, *, stored: bool = False) -> None:
        """Show ``run``; ``stored``: its row is fresh, so what it says of its activity counts."""
        self.run = run
        if run is not None and stored:
            from_store = stored_activity(run)
            self._activity = self._activity.with_stored(from_store)
            if not self._live.received and from_store.live_output:
                # A run another process drives: its reply so far, as that process stored it.
                self._show_live(
                    Text.assemble(
                        ("assistant (streaming)\n", "bold green"), visible(from_store.live_output)
                    )
                )
        ticking = run is not None and run.status is RunStatus.RUNNING
        if ticking and self._ticker is None:
            self._ticker = self.set_interval(self.tick_s, self._render_run, name="run elapsed")
        elif not ticking and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self._render_run()

    def _render_run(self) -> None:
        run = self.run
        block = (
            run_block(
                run,
                self._clock(),
                self._activity,
                echo_prompt=(Role.USER, run.run_id) not in self._on_page,
                show_partial=(Role.ASSISTANT, run.run_id) not in self._on_page
                and not self._live.received,
                quiet_s=self.quiet_s,
            )
            if run is not None
            else Text()
        )
        self.run_status.update(block)
        self.run_status.display = bool(block)  # no blank line when there is nothing to say
