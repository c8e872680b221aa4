"""Ask before dismissing: the modal names the session it would remove."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from core.models import Session
from tui import formatting as fmt
from tui.safe_text import first_line


class ConfirmDismiss(ModalScreen[bool]):
    """Returns True to dismiss, False to keep."""

    DEFAULT_CSS = """
    ConfirmDismiss { align: center middle; }
    ConfirmDismiss > Vertical {
        width: 64; height: auto; padding: 1 2; border: thick $error; background: $surface;
    }
    ConfirmDismiss #dismiss-buttons { height: auto; margin-top: 1; align-horizontal: right; }
    ConfirmDismiss Button { margin-left: 2; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Dismiss", id="dismiss.yes", tooltip="Dismiss the session"),
        Binding("n,escape", "answer(False)", "Keep", id="dismiss.no", tooltip="Keep the session"),
    ]

    def __init__(self, session: Session, now: datetime) -> None:
        super().__init__()
        self.session = session
        self._now = now

    def compose(self) -> ComposeResult:
        s = self.session
        text = Text()
        text.append("Dismiss this session?\n\n", "bold")
        text.append(f"{s.agent_id} · {fmt.short_id(s.conversation_id)}\n", "bold")
        text.append(first_line(s.title or "(untitled)", 56) + "\n")
        text.append(
            f"{s.metrics.turns} turns · {fmt.size(s.metrics.bytes)} · "
            f"last used {fmt.ago(s.last_interacted_at, self._now)}\n\n",
            "dim",
        )
        text.append("It leaves the reusable pool and its stored messages are freed.", "dim")
        with Vertical():
            yield Static(text)
            with Horizontal(id="dismiss-buttons"):
                yield Button("Keep (n)", id="keep")
                yield Button("Dismiss (y)", id="dismiss", variant="error")

    def on_mount(self) -> None:
        self.query_one("#keep", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "dismiss")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
