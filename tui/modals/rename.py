"""Name a session: one line, ``enter`` saves, ``escape`` leaves the name as it was.

An empty name clears it (the session shows its first prompt again). The name
lives in delegate's store only; another tool's files are never written.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from core.conversations.archive import NAME_CHARS
from core.models import Session
from tui.shared import formatting as fmt
from tui.shared.safe_text import first_line


class RenameSession(ModalScreen[str | None]):
    """Returns the name typed ("" clears it), or None when cancelled."""

    DEFAULT_CSS = """
    RenameSession { align: center middle; }
    RenameSession > Vertical {
        width: 70; height: auto; padding: 1 2; border: thick $primary; background: $surface;
    }
    RenameSession Input { margin-top: 1; }
    RenameSession #rename-hint { color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape", "cancel", "Cancel", id="rename.cancel", tooltip="Keep the name as it was"
        ),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session

    def compose(self) -> ComposeResult:
        s = self.session
        heading = Text()
        heading.append("Rename this session\n", "bold")
        heading.append(f"{s.agent_id} · {fmt.short_id(s.conversation_id)} · ")
        heading.append(first_line(s.title or "(untitled)", 40), "italic")
        with Vertical():
            yield Static(heading)
            yield Input(
                value=s.name or "",
                placeholder=first_line(s.title or "a name", 60),
                max_length=NAME_CHARS,
                id="rename-input",
            )
            yield Static("enter saves · an empty name clears it · esc cancels", id="rename-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
