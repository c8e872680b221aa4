"""The agent's draft as a diff against the capsule in the editor: accept or reject.

Nothing the agent wrote enters the capsule until a person has seen what it changes
(``ctrl+a`` or the Accept button takes it, ``escape`` leaves the text as it was).
"""

from __future__ import annotations

import difflib
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui.shared.safe_text import visible


def diff_text(before: str, after: str) -> Text:
    """A unified diff, added lines green and removed lines red."""
    text = Text()
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), "capsule", "draft", lineterm="", n=2
    )
    for line in lines:
        if line.startswith(("---", "+++")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = ""
        text.append(visible(line) + "\n", style)
    if not text:
        text.append("The draft is the same as the capsule.", "dim")
    return text


class DraftDiffModal(ModalScreen[bool]):
    """Returns True when the draft is accepted."""

    DEFAULT_CSS = """
    DraftDiffModal { align: center middle; }
    DraftDiffModal > Vertical {
        width: 110; max-width: 95%; height: 90%; padding: 0 1;
        border: thick $accent; background: $surface;
    }
    DraftDiffModal #draft-title { height: auto; text-style: bold; }
    DraftDiffModal #draft-diff { height: 1fr; }
    DraftDiffModal .draft-buttons { height: auto; align-horizontal: right; }
    DraftDiffModal Button { margin-left: 2; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+a", "answer(True)", "Accept", id="draft.accept", tooltip="Take the draft"),
        Binding("escape", "answer(False)", "Reject", id="draft.reject", tooltip="Keep the text"),
    ]

    def __init__(self, what: str, before: str, after: str) -> None:
        super().__init__()
        self.what = what
        self.before = before
        self.after = after

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"The agent's draft of {self.what}", id="draft-title")
            with VerticalScroll(id="draft-diff"):
                yield Static(diff_text(self.before, self.after))
            with Horizontal(classes="draft-buttons"):
                yield Button("Reject (esc)", id="reject")
                yield Button("Accept (ctrl+a)", id="accept", variant="success")

    def on_mount(self) -> None:
        self.query_one("#accept", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "accept")

    def action_answer(self, accept: bool) -> None:
        self.dismiss(accept)
