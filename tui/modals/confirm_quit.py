"""Ask before quitting: always after a bare ``q``, and whenever runs are in flight."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType

from tui.modals.confirm import ConfirmModal


class ConfirmQuit(ConfirmModal):
    """Returns True to quit. With nothing in flight "Quit" has the focus (enter quits);
    with runs in flight "Stay" has it, since quitting stops them."""

    SAFE_ID = "stay"
    DESTRUCTIVE_ID = "quit"
    safe_label = "Stay (esc)"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "answer(True)", "Quit", id="quit.yes", tooltip="Leave delegate"),
        Binding("escape", "answer(False)", "Stay", id="quit.no", tooltip="Back to the panel"),
    ]

    def __init__(self, runs_in_flight: int) -> None:
        super().__init__()
        self.runs_in_flight = runs_in_flight
        self.focus_destructive = runs_in_flight == 0
        self.destructive_label = "Quit (enter)" if self.focus_destructive else "Quit (ctrl+q)"

    def question(self) -> Text:
        text = Text("Quit delegate?\n\n", "bold")
        n = self.runs_in_flight
        if n:
            text.append(
                f"{n} run{'' if n == 1 else 's'} in flight will be stopped; "
                "the replies so far are kept.\n",
                "bold yellow",
            )
        text.append("Dismissals still inside their undo window are committed.", "dim")
        return text
