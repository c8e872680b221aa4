"""The line over the list: which sessions it covers, and where the highlight is (``12 / 3,300``)."""

from __future__ import annotations

from rich.text import Text
from textual import getters
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static


def position_text(index: int | None, loaded: int, total: int | None, more: bool) -> str:
    """``12 / 3,300``; ``12 / 25+`` while the total is unknown and more pages remain."""
    at = 0 if index is None or not loaded else index + 1
    if total is not None:
        return f"{at:,} / {total:,}"
    return f"{at:,} / {loaded:,}{'+' if more else ''}"


class ListHeader(Horizontal):
    """The scope on the left (set by the screen), the position on the right."""

    DEFAULT_CSS = """
    ListHeader { height: 1; padding: 0 1; }
    ListHeader > #list-scope { width: 1fr; color: $text-muted; }
    ListHeader > #list-position { width: auto; color: $text-muted; }
    """

    scope = getters.query_one("#list-scope", Static)
    position = getters.query_one("#list-position", Static)

    _position_shown: str | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="list-scope")
        yield Static("", id="list-position")

    def show_scope(self, text: Text) -> None:
        self.scope.update(text)

    def show_position(self, index: int | None, loaded: int, total: int | None, more: bool) -> None:
        text = position_text(index, loaded, total, more)
        if text != self._position_shown:  # an update lays the screen out again
            self._position_shown = text
            self.position.update(text)
