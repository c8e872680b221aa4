"""The search field and the note under it: owns the query, debounced.

Typing restarts a short wait; only the text still there when it ends becomes
the query (:class:`FilterBar.Changed`), so the store is not asked once per key.
The wait runs as an exclusive worker: a newer keystroke cancels it. The note
says how many sessions the search found, or why the query cannot run.
"""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual import events, getters, on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

from tui.shared.safe_text import visible
from tui.shared.workers import ForwardsWorkerErrors

# Long enough to swallow a burst of typing, short enough to feel immediate.
DEBOUNCE_SECONDS = 0.15


class FilterBar(ForwardsWorkerErrors, Vertical):
    """The search input plus "N sessions match 'q'" or the reason it cannot run."""

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

    def __init__(self, *, debounce: float = DEBOUNCE_SECONDS, id: str | None = None) -> None:
        super().__init__(id=id)
        self.debounce = debounce
        self.filter_query = ""
        # What the search found: None while it runs, else (sessions, more pages).
        self.matches: tuple[int, bool] | None = None
        self.refusal: str | None = None  # why the query cannot run

    def compose(self) -> ComposeResult:
        # Not selected on focus: text typed elsewhere and forwarded here must add to it.
        yield Input(
            placeholder='type to search: words, "a phrase", prefix*, agent: state: branch: cwd:',
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
        self.refusal = None
        self.update_note()
        self.post_message(self.Changed(query))

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

    def show_matches(self, sessions: int, more: bool) -> None:
        """The search found ``sessions`` so far; ``more`` when further pages remain."""
        self.matches = (sessions, more)
        self.refusal = None
        self.update_note()

    def show_refusal(self, reason: str) -> None:
        """The query cannot run: ``reason`` (what to type instead) under the field."""
        self.matches = None
        self.refusal = reason
        self.update_note()

    def update_note(self) -> None:
        if not self.filter_query:
            self.note.display = False
            return
        text = Text()
        if self.refusal is not None:
            text.append("✗ ", "bold red")
            text.append(visible(self.refusal), "red")
            text.append(" · esc clears", "dim")
        elif self.matches is None:
            text.append("searching…", "dim")
        else:
            found, more = self.matches
            count = f"{found:,}+" if more else f"{found:,}"
            verb = "matches" if found == 1 and not more else "match"
            text.append(f"{count} session{'' if count == '1' else 's'} {verb} ", "bold")
            text.append(repr(self.filter_query))
            text.append(" · esc clears", "dim")
        self.note.update(text)
        self.note.display = True
