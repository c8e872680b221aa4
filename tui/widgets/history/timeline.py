"""The history timeline: the latest events as cells, oldest to newest, each event once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from core.events import HistoryEvent, SessionContinued
from tui.shared.workers import ForwardsWorkerErrors
from tui.widgets.history.cells import Clock, HistoryCell, cell_for

HistoryLoader = Callable[[int], Awaitable[list[HistoryEvent]]]  # newest first


EventKey = tuple[str, str, str | None, datetime]


def event_key(event: HistoryEvent) -> EventKey:
    """What makes a history event the same event wherever it came from."""
    return (event.kind, event.conversation_id, getattr(event, "run_id", None), event.at)


class HistoryTimeline(ForwardsWorkerErrors, VerticalScroll):
    """Cells oldest to newest; keeps the latest ``MAX_CELLS``."""

    MAX_CELLS = 200
    ON_OPEN = 50  # events loaded when the pane opens

    DEFAULT_CSS = """
    HistoryTimeline { height: 1fr; }
    HistoryTimeline > #history-empty { color: $text-muted; padding: 0 1; }
    """

    def __init__(
        self,
        load: HistoryLoader,
        clock: Clock,
        *,
        load_on_mount: bool = True,
        id: str | None = None,
    ) -> None:
        """``load_on_mount=False``: the owner calls :meth:`load` when it is time."""
        super().__init__(id=id)
        self._load = load
        self._load_on_mount = load_on_mount
        self._clock = clock
        # Keys of the cells on show: the same event can arrive twice (from this
        # process's bus and again as another process's store change, or in the
        # first load and live), and is shown once.
        self._shown: set[EventKey] = set()

    def compose(self) -> ComposeResult:
        yield Static(
            "No history yet: follow-ups, launches and dismissals appear here.", id="history-empty"
        )

    def on_mount(self) -> None:
        if self._load_on_mount:
            self._load_latest()

    def load(self) -> None:
        """Show the latest events (for an owner that deferred the load on mount)."""
        self._load_latest()

    @work(group="history-load", name="loading the history", exit_on_error=False)
    async def _load_latest(self) -> None:
        events = await self._load(self.ON_OPEN)
        self.add_events(list(reversed(events)))

    def add_events(self, events: list[HistoryEvent]) -> None:
        """Append events (oldest first) as cells, each once, and keep the newest in view."""
        fresh = []
        for event in events:
            key = event_key(event)
            if key not in self._shown:
                self._shown.add(key)
                fresh.append(event)
        if not fresh:
            return
        for placeholder in self.query("#history-empty"):
            placeholder.remove()
        new_cells = [cell_for(e, self._clock) for e in fresh]
        self._mark_continued([*self.query(HistoryCell), *new_cells], fresh)
        mounted = self.mount_all(new_cells)
        cells = list(self.query(HistoryCell))
        for stale in cells[: max(0, len(cells) - self.MAX_CELLS)]:
            self._shown.discard(event_key(stale.event))
            stale.remove()

        async def newest_in_view() -> None:
            # Mounting is deferred: scrolled once the cells are in and laid out.
            await mounted
            self.call_after_refresh(self._follow_newest)

        self.call_later(newest_in_view)

    @staticmethod
    def _mark_continued(cells: list[HistoryCell], events: list[HistoryEvent]) -> None:
        """Cells saying a hand-off waits, whose document a session in ``events`` continued,
        say it was continued (and by whom) from now on."""
        continued = {
            e.document_id: e.successor_id
            for e in events
            if isinstance(e, SessionContinued) and e.document_id
        }
        if not continued:
            return
        for cell in cells:
            document = cell.waiting_document()
            if document is not None and document in continued:
                cell.continued(continued[document])

    def _follow_newest(self) -> None:
        """Scroll to the newest cell; once the cells overflow, stay anchored there, so a
        cell whose height settles later (wrapping) still leaves the newest in view. (A
        short timeline is not anchored: anchored content sits at the bottom.)"""
        if self.max_scroll_y > 0 and not self.is_anchored:
            self.anchor()
        self.scroll_end(animate=False)
