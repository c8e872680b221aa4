"""An unexpected error, in one short paragraph: the panel keeps running."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui.shared.safe_text import visible

# An exception's text can be long (a validation error lists every field): enough to act on.
MAX_DETAIL_CHARS = 400


def error_summary(error: BaseException) -> str:
    """``Type: first lines of the message``, control characters escaped, never a traceback."""
    detail = visible(str(error)).strip()
    if len(detail) > MAX_DETAIL_CHARS:
        detail = detail[: MAX_DETAIL_CHARS - 1] + "…"
    name = type(error).__name__
    return f"{name}: {detail}" if detail else name


class ErrorModal(ModalScreen[None]):
    """Names what failed and why; closing it returns to the panel."""

    DEFAULT_CSS = """
    ErrorModal { align: center middle; }
    ErrorModal > Vertical {
        width: 72; max-width: 90%; height: auto; padding: 1 2;
        border: thick $error; background: $surface;
    }
    ErrorModal #error-buttons { height: auto; margin-top: 1; align-horizontal: right; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="error.close", tooltip="Back to the panel"),
    ]

    def __init__(self, what: str, error: BaseException) -> None:
        super().__init__()
        self.what = what
        self.summary = error_summary(error)

    @property
    def message_text(self) -> str:
        """What the modal says, as plain text."""
        return (
            f"Something went wrong while {self.what}.\n\n{self.summary}\n\n"
            "The panel keeps running; what failed may be missing from it. "
            "f5 reloads; ctrl+q quits."
        )

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.message_text))  # Text(): the error may quote transcript text
            with Horizontal(id="error-buttons"):
                yield Button("Close (esc)", id="close", variant="primary")

    def on_mount(self) -> None:
        self.query_one(Button).focus()

    def on_button_pressed(self) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
