"""The follow-up prompt box: multi-line, ``ctrl+s`` (or ``ctrl+enter``) sends."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from core.models import Session
from tui import formatting as fmt
from tui.safe_text import first_line


class FollowUpPrompt(ModalScreen[str | None]):
    """Returns the prompt to send, or None when cancelled."""

    DEFAULT_CSS = """
    FollowUpPrompt { align: center middle; }
    FollowUpPrompt > Vertical {
        width: 90%; max-width: 100; height: auto; padding: 1 2;
        border: thick $primary; background: $surface;
    }
    FollowUpPrompt TextArea { height: 8; margin: 1 0 0 0; }
    FollowUpPrompt #follow-up-error { color: $error; height: auto; }
    FollowUpPrompt #follow-up-hint { color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+s,ctrl+enter",
            "send",
            "Send",
            id="follow_up.send",
            priority=True,
            tooltip="Send the follow-up into this conversation",
        ),
        Binding(
            "escape", "cancel", "Cancel", id="follow_up.cancel", tooltip="Close without sending"
        ),
    ]

    def __init__(self, session: Session, draft: str = "") -> None:
        super().__init__()
        self.session = session
        self._draft = draft

    def compose(self) -> ComposeResult:
        s = self.session
        heading = Text()
        heading.append("Follow up", "bold")
        heading.append(f"  {s.agent_id} · {fmt.short_id(s.conversation_id)} · ")
        heading.append(first_line(s.title or "(untitled)", 60), "italic")
        with Vertical():
            yield Static(heading)
            yield TextArea(
                self._draft, id="follow-up-text", soft_wrap=True, show_line_numbers=False
            )
            yield Static("", id="follow-up-error")
            yield Static("ctrl+s send · esc cancel", id="follow-up-hint")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_send(self) -> None:
        prompt = self.query_one(TextArea).text
        if not prompt.strip():
            self.query_one("#follow-up-error", Static).update(
                "A follow-up needs a prompt: type what the delegate should do next."
            )
            return
        self.dismiss(prompt)

    def action_cancel(self) -> None:
        self.dismiss(None)
