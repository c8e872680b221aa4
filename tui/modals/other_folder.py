"""The session's folder is gone: open its agent in another folder, or not at all."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from core.models import Session
from tui.shared import formatting as fmt


class OtherFolder(ModalScreen[str | None]):
    """Returns an existing folder to open the session's agent in, or None (cancelled)."""

    DEFAULT_CSS = """
    OtherFolder { align: center middle; }
    OtherFolder > Vertical {
        width: 90%; max-width: 100; height: auto; padding: 1 2;
        border: thick $warning; background: $surface;
    }
    OtherFolder Input { margin-top: 1; }
    OtherFolder #other-folder-error { color: $error; height: auto; }
    OtherFolder #other-folder-hint { color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "cancel",
            "Cancel",
            id="other_folder.cancel",
            tooltip="Open nothing and go back to the list",
        ),
    ]

    def __init__(self, session: Session, suggestion: str) -> None:
        super().__init__()
        self.session = session
        self._suggestion = suggestion

    def compose(self) -> ComposeResult:
        s = self.session
        # As Text: the folder name comes from a transcript.
        message = Text()
        message.append("The session's folder is gone\n", "bold")
        message.append(f"{s.agent_id} · {fmt.short_id(s.conversation_id)} was worked on in\n  ")
        message.append(s.cwd or "(no folder recorded)", "italic")
        message.append(
            "\nwhich does not exist here (deleted, or on another machine). "
            "Nothing was started. Open the agent in another folder:"
        )
        with Vertical():
            yield Static(message)
            yield Input(self._suggestion, id="other-folder-path")
            yield Static("", id="other-folder-error")
            yield Static("enter open here · esc cancel", id="other-folder-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        typed = event.value.strip()
        try:
            folder = Path(typed).expanduser()
            exists = bool(typed) and folder.is_dir()
        except (OSError, RuntimeError, ValueError):  # ~nosuchuser, a NUL, a name too long
            exists = False
        if not exists:
            error = f"{typed or '(empty)'} is not a folder: type one that exists."
            self.query_one("#other-folder-error", Static).update(Text(error))
            return
        self.dismiss(str(folder))

    def action_cancel(self) -> None:
        self.dismiss(None)
