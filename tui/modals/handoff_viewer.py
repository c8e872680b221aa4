"""A role's hand-off file, read-only: its JSON pretty-printed, or why it cannot be shown."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from core.returns.model import AgentRole
from tui.returns.panel import HandoffView, read_handoff_view, shown_path
from tui.shared.safe_text import visible
from tui.shared.workers import ForwardsWorkerErrors


class HandoffViewer(ForwardsWorkerErrors, ModalScreen[None]):
    """Shows the file at ``path`` (read when the viewer opens, in a thread)."""

    DEFAULT_CSS = """
    HandoffViewer { align: center middle; }
    HandoffViewer > Vertical {
        width: 100; max-width: 95%; height: 85%; padding: 0 1;
        border: thick $accent; background: $surface;
    }
    HandoffViewer #handoff-title { height: auto; text-style: bold; }
    HandoffViewer #handoff-path { height: auto; color: $text-muted; }
    HandoffViewer #handoff-body { height: 1fr; margin-top: 1; }
    HandoffViewer #handoff-content.-problem { color: $error; }
    HandoffViewer #handoff-note { height: auto; color: $warning; }
    HandoffViewer #handoff-invalid { height: auto; color: $error; }
    HandoffViewer #handoff-hint { height: auto; color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,enter,q",
            "close",
            "Close",
            id="handoff.close",
            tooltip="Close the hand-off file",
        ),
    ]

    def __init__(
        self, title: str, path: str, *, role: AgentRole | None = None, note: str = ""
    ) -> None:
        super().__init__()
        self.title_text = title
        self.path = path
        self.role = role  # the file is checked against its schema
        self.shown = shown_path(path)
        self.note = note  # e.g. a later step rewrote the file
        self.view: HandoffView | None = None  # once read

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.title_text), id="handoff-title")
            yield Static(Text(visible(self.shown)), id="handoff-path")
            if self.note:
                yield Static(Text(visible(self.note)), id="handoff-note")
            with VerticalScroll(id="handoff-body"):
                yield Static(Text("Reading the file…", "dim"), id="handoff-content")
            yield Static("read-only · esc closes", id="handoff-hint")

    def on_mount(self) -> None:
        self._read()

    @work(group="handoff-read", name="reading a hand-off file", exit_on_error=False)
    async def _read(self) -> None:
        view = await asyncio.to_thread(read_handoff_view, self.path, self.role)
        content = self.query_one("#handoff-content", Static)
        if view.text is not None:
            content.update(Syntax(visible(view.text), "json", word_wrap=True, theme="ansi_dark"))
            if view.invalid is not None:
                invalid = view.invalid.replace(self.path, self.shown)
                warning = Static(Text(visible(invalid)), id="handoff-invalid")
                await self.query_one(Vertical).mount(warning, before="#handoff-body")
        else:
            # The path is on show above: the problem names the file by its place.
            problem = (view.problem or "cannot be shown").replace(self.path, self.shown)
            content.update(Text(visible(problem)))
            content.add_class("-problem")
        self.view = view

    def action_close(self) -> None:
        self.dismiss(None)
