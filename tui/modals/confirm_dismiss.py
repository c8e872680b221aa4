"""Ask before dismissing: the modal names the session it would remove."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType

from core.models import Session
from tui import formatting as fmt
from tui.modals.confirm import ConfirmModal
from tui.safe_text import first_line


class ConfirmDismiss(ConfirmModal):
    """Returns True to dismiss, False to keep. "Keep" has the focus."""

    DESTRUCTIVE_ID = "dismiss"
    destructive_label = "Dismiss (ctrl+d)"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+d", "answer(True)", "Dismiss", id="dismiss.yes", tooltip="Dismiss the session"
        ),
        Binding("escape", "answer(False)", "Keep", id="dismiss.no", tooltip="Keep the session"),
    ]

    def __init__(self, session: Session, now: datetime) -> None:
        super().__init__()
        self.session = session
        self._now = now

    def question(self) -> Text:
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
        return text
