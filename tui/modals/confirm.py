"""A question whose "yes" destroys something: only a deliberate key answers it.

Text typed into the list by mistake lands here too (``d`` of "deploy" opens the
dismiss question, ``y`` used to confirm it). So no letter answers: "yes" is a
ctrl-chord, or ``enter`` on the destructive button once the focus was moved to it
(``tab``); ``escape`` or ``enter`` on the safe button says no.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmModal(ModalScreen[bool]):
    """Returns True for the destructive answer, False for the safe one.

    Subclasses give the question (:meth:`question`), the button labels and the
    ``BINDINGS`` (a chord for ``answer(True)``, ``escape`` for ``answer(False)``).
    """

    DEFAULT_CSS = """
    ConfirmModal { align: center middle; }
    ConfirmModal > Vertical {
        width: 64; height: auto; padding: 1 2; border: thick $error; background: $surface;
    }
    ConfirmModal .confirm-buttons { height: auto; margin-top: 1; align-horizontal: right; }
    ConfirmModal Button { margin-left: 2; }
    """

    SAFE_ID = "keep"
    DESTRUCTIVE_ID = "confirm"
    safe_label = "Keep (esc)"
    destructive_label = "Confirm"
    # Focus the destructive button first only where saying yes by mistake loses nothing.
    focus_destructive = False

    def question(self) -> Text:
        raise NotImplementedError

    @property
    def message_text(self) -> str:
        """The question as plain text."""
        return self.question().plain

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question())
            with Horizontal(classes="confirm-buttons"):
                yield Button(self.safe_label, id=self.SAFE_ID)
                yield Button(self.destructive_label, id=self.DESTRUCTIVE_ID, variant="error")

    def on_mount(self) -> None:
        first = self.DESTRUCTIVE_ID if self.focus_destructive else self.SAFE_ID
        self.query_one(f"#{first}", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == self.DESTRUCTIVE_ID)

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
