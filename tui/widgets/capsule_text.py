"""The capsule's text area: Markdown, line numbers, and marks in the gutter.

A line with a secret on it gets a red ``!`` where its number starts, a reference
that drifted since the capsule was written an amber ``≠``: the warning sits on the
line itself, not only in the problems list.
"""

from __future__ import annotations

from typing import Literal

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widgets import TextArea

Mark = Literal["secret", "drift", "problem"]

MARK_LOOK: dict[Mark, tuple[str, Style]] = {
    "secret": ("!", Style(color="red", bold=True)),
    "drift": ("≠", Style(color="yellow", bold=True)),
    "problem": ("•", Style(color="yellow")),
}
# When a line has several marks, the most urgent one shows.
_URGENCY: tuple[Mark, ...] = ("secret", "drift", "problem")


class CapsuleText(TextArea):
    """A Markdown text area whose gutter marks lines (``marks``: 0-based row -> mark)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            "",
            id=id,
            language="markdown",
            soft_wrap=False,
            show_line_numbers=True,
        )
        self._marks: dict[int, Mark] = {}

    @property
    def gutter_width(self) -> int:
        """One cell wider than the line numbers need: the column the marks go in."""
        width = super().gutter_width
        return width + 1 if width else 0

    @property
    def marks(self) -> dict[int, Mark]:
        return dict(self._marks)

    def set_marks(self, marks: dict[int, list[Mark]]) -> None:
        """Replace the marks (row -> the kinds found on it) and redraw."""
        self._marks = {
            row: next(m for m in _URGENCY if m in kinds) for row, kinds in marks.items() if kinds
        }
        self.refresh()

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        row = self.scroll_offset.y + y
        mark = self._marks.get(row)
        if mark is None or row >= self.document.line_count or strip.cell_length < 2:
            return strip
        glyph, style = MARK_LOOK[mark]
        return Strip.join([Strip([Segment(glyph, style)], 1), strip.crop(1)])
