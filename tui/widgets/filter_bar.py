"""The filter box and the note under it: owns the query, debounced.

Typing restarts a short wait; only the text still there when it ends becomes
the query (:class:`FilterBar.Changed`), so the store is not asked once per key.
The wait and the match count run as exclusive workers: a newer keystroke
cancels the wait, a newer query cancels the count still in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from rich.text import Text
from textual import events, getters, on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

from tui.workers import ForwardsWorkerErrors

MatchCounter = Callable[[str], Awaitable[int]]

# Long enough to swallow a burst of typing, short enough to feel immediate.
DEBOUNCE_SECONDS = 0.15


class FilterBar(ForwardsWorkerErrors, Vertical):
    """``/ filter`` input plus "N of M match 'q' · K hidden by the filter"."""

    DEFAULT_CSS = """
    FilterBar { height: auto; }
    """

    filter_input = getters.query_one("#filter", Input)
    note = getters.query_one("#list-note", Static)

    class Changed(Message):
        """The query settled on a new value. Handle with ``on_filter_bar_changed``."""

        def __init__(self, query: str) -> None:
            super().__init__()
            self.filter_query = query

    class Done(Message):
        """Enter in the box: open what is highlighted. Handle with ``on_filter_bar_done``."""

    class Moved(Message):
        """An arrow or page key in the box, for the list. Handle with ``on_filter_bar_moved``."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key  # "up", "down", "pageup" or "pagedown"

    def __init__(
        self,
        count_matches: MatchCounter,
        *,
        debounce: float = DEBOUNCE_SECONDS,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._count_matches = count_matches
        self.debounce = debounce
        self.filter_query = ""
        self.matches: int | None = None
        self.total = 0

    def compose(self) -> ComposeResult:
        # Not selected on focus: text typed elsewhere and forwarded here must add to it.
        yield Input(
            placeholder="type to search: agent, title, cwd, branch, id",
            id="filter",
            select_on_focus=False,
        )
        yield Static("", id="list-note")

    def on_mount(self) -> None:
        self.note.display = False

    def focus_input(self) -> None:
        self.filter_input.focus()

    def clear(self) -> None:
        """Empty the box (the cleared query applies at once, without the wait)."""
        if self.filter_input.value:
            self.filter_input.value = ""

    @on(Input.Changed, "#filter")
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        query = event.value.strip()
        self._settle(query, 0.0 if not query else self.debounce)

    @work(group="filter-debounce", name="filtering", exclusive=True, exit_on_error=False)
    async def _settle(self, query: str, wait: float) -> None:
        if wait:
            await asyncio.sleep(wait)  # cancelled by the next keystroke
        if query == self.filter_query:
            return
        self.filter_query = query
        self.matches = None
        self.update_note()
        self.post_message(self.Changed(query))
        if query:
            self._count(query)

    @work(group="filter-count", name="counting matches", exclusive=True, exit_on_error=False)
    async def _count(self, query: str) -> None:
        matches = await self._count_matches(query)
        if query == self.filter_query:
            self.matches = matches
            self.update_note()

    @on(Input.Submitted, "#filter")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Done())

    def on_key(self, event: events.Key) -> None:
        if event.key in ("up", "down", "pageup", "pagedown"):
            event.stop()
            self.post_message(self.Moved(event.key))

    def type_text(self, text: str) -> None:
        """Type ``text`` at the end of the box and focus it ("\\b" deletes a character)."""
        box = self.filter_input
        value = box.value
        for char in text:
            value = value[:-1] if char == "\b" else value + char
        box.value = value
        box.cursor_position = len(value)
        box.focus()

    def set_total(self, total: int) -> None:
        """How many reusable sessions there are (for "N of M match")."""
        self.total = total
        self.update_note()

    def update_note(self) -> None:
        if not self.filter_query:
            self.note.display = False
            return
        text = Text()
        if self.matches is None:
            text.append("filtering…", "dim")
        else:
            hidden = self.total - self.matches
            text.append(f"{self.matches} of {self.total} match ", "bold")
            text.append(repr(self.filter_query))
            text.append(f" · {hidden} hidden by the filter · esc clears", "dim")
        self.note.update(text)
        self.note.display = True
