"""Ask before stopping a run: the ``x`` of a word typed into the list must not end one."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType

from core.models import Session
from tui.modals.confirm import ConfirmModal
from tui.shared import formatting as fmt
from tui.shared.safe_text import first_line


class ConfirmStop(ConfirmModal):
    """Returns True to stop the session's run. "Keep running" has the focus."""

    SAFE_ID = "keep-running"
    DESTRUCTIVE_ID = "stop"
    safe_label = "Keep running (esc)"
    destructive_label = "Stop (ctrl+x)"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+x", "answer(True)", "Stop", id="stop.yes", tooltip="Stop the run"),
        Binding("escape", "answer(False)", "Keep running", id="stop.no", tooltip="Let it run"),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session

    def question(self) -> Text:
        s = self.session
        text = Text()
        text.append("Stop this run?\n\n", "bold")
        text.append(f"{s.agent_id} · {fmt.short_id(s.conversation_id)}\n", "bold")
        text.append(first_line(s.shown_title or "(untitled)", 56) + "\n\n")
        text.append("The agent is stopped; the reply so far is kept.", "dim")
        return text
