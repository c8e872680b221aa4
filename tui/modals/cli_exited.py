"""An agent CLI opened on the terminal exited with an error: its own last words, kept on
screen until closed (the CLI's screen is gone once the panel draws again)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui.shared.safe_text import visible


class CliExited(ModalScreen[None]):
    """``claude exited with status 1`` and what it printed last (already redacted)."""

    DEFAULT_CSS = """
    CliExited { align: center middle; }
    CliExited > VerticalScroll {
        width: 90%; max-width: 110; height: auto; max-height: 100%; padding: 1 2;
        border: thick $error; background: $surface;
    }
    CliExited #cli-said { margin-top: 1; padding: 0 1; background: $boost; }
    CliExited #cli-command { margin-top: 1; }
    CliExited #cli-exited-buttons { height: auto; margin-top: 1; align-horizontal: right; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="cli_exited.close", tooltip="Back to the panel"),
    ]

    def __init__(self, binary: str, code: int, said: str, command_line: str) -> None:
        super().__init__()
        self.binary = binary
        self.code = code
        self.said = said
        self.command_line = command_line

    @property
    def heading(self) -> str:
        return f"{self.binary} exited with status {self.code}."

    def compose(self) -> ComposeResult:
        with VerticalScroll(can_focus=False):
            yield Static(Text(visible(self.heading), "bold"))
            if self.said:
                yield Static(Text("What it printed last:", "dim"))
                # Text(), never markup: the CLI's words are data.
                yield Static(Text(visible(self.said)), id="cli-said")
            else:
                yield Static(Text("It printed nothing.", "dim"))
            yield Static(Text(visible(f"Ran: {self.command_line}"), "dim"), id="cli-command")
            with Horizontal(id="cli-exited-buttons"):
                yield Button("Close (esc)", id="close", variant="primary")

    def on_mount(self) -> None:
        self.query_one(Button).focus()

    def on_button_pressed(self) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
