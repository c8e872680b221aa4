"""Pickers the capsule editor opens: a filterable list of choices, one to take.

The same modal picks a transcript highlight (the session's messages), an inbox entry
(remember-later reminders) and a file to reference (the repository's files): type to
narrow the list, up/down to move, enter to take, escape to leave.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui.shared.safe_text import first_line

T = TypeVar("T")

MAX_SHOWN = 200
"""Choices listed at once; typing narrows the rest in."""


@dataclass(frozen=True, slots=True)
class Choice(Generic[T]):
    """One row: ``label`` is shown and matched by the filter; ``detail`` dimmed after it."""

    label: str
    value: T
    detail: str = ""


class PickerModal(ModalScreen[T | None], Generic[T]):
    """Returns the value of the choice taken, or None (escape, or nothing to take)."""

    DEFAULT_CSS = """
    PickerModal { align: center middle; }
    PickerModal > Vertical {
        width: 100; max-width: 95%; height: 80%; padding: 0 1;
        border: thick $accent; background: $surface;
    }
    PickerModal #picker-title { height: 1; text-style: bold; }
    PickerModal #picker-filter { margin: 1 0 0 0; }
    PickerModal #picker-list { height: 1fr; border: none; }
    PickerModal #picker-hint { height: 1; color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Leave", id="capsule_picker.leave", tooltip="Take nothing"),
        Binding("down", "move(1)", show=False),
        Binding("up", "move(-1)", show=False),
    ]

    def __init__(self, title: str, choices: Sequence[Choice[T]], *, empty: str) -> None:
        super().__init__()
        self.title_text = title
        self.choices = list(choices)
        self.empty = empty
        self.shown: list[Choice[T]] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, id="picker-title")
            yield Input(placeholder="type to filter", id="picker-filter")
            yield OptionList(id="picker-list")
            yield Static("enter take · ↑↓ move · esc leave", id="picker-hint")

    def on_mount(self) -> None:
        self._show("")
        self.query_one(Input).focus()

    @on(Input.Changed, "#picker-filter")
    def _filter(self, event: Input.Changed) -> None:
        self._show(event.value)

    def _show(self, query: str) -> None:
        needle = query.casefold().strip()
        self.shown = [c for c in self.choices if not needle or needle in c.label.casefold()][
            :MAX_SHOWN
        ]
        options = self.query_one(OptionList)
        options.clear_options()
        if not self.shown:
            options.add_option(Option(Text(self.empty, "dim"), disabled=True))
            return
        for choice in self.shown:
            row = Text(first_line(choice.label, 160))
            if choice.detail:
                row.append(f"  {choice.detail}", "dim")
            options.add_option(Option(row))
        options.highlighted = 0

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if self.shown:
            current = options.highlighted or 0
            options.highlighted = max(0, min(len(self.shown) - 1, current + step))

    @on(Input.Submitted, "#picker-filter")
    def _take_highlighted(self) -> None:
        highlighted = self.query_one(OptionList).highlighted
        if self.shown and highlighted is not None:
            self.dismiss(self.shown[highlighted].value)

    @on(OptionList.OptionSelected, "#picker-list")
    def _take_selected(self, event: OptionList.OptionSelected) -> None:
        if self.shown:
            self.dismiss(self.shown[event.option_index].value)

    def action_leave(self) -> None:
        self.dismiss(None)
