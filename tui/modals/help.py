"""Help: every binding of the screen underneath, with what it does."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from tui.shared.keys import declared_bindings, keys_shown, live_keys

HelpRow = tuple[str, str, str]  # keys, action, what it does


def help_rows(screen: Screen[Any], bindings: Iterable[BindingType]) -> list[HelpRow]:
    """One row per binding, with the keys active now (so remapped keys show)."""
    live = live_keys(screen)
    return [
        (keys_shown(screen, binding, live), binding.description, binding.tooltip)
        for binding in declared_bindings(bindings)
    ]


class HelpScreen(ModalScreen[None]):
    """Lists ``(keys, description, tooltip)`` rows given by the opener."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90%; max-width: 100; height: 80%; padding: 1 2;
        border: thick $primary; background: $surface;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,f1,q,question_mark", "close", "Close", id="help.close", tooltip="Close the help"
        ),
    ]

    def __init__(self, rows: list[HelpRow]) -> None:
        super().__init__()
        self._rows = rows

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=True, header_style="bold", expand=True)
        table.add_column("key", no_wrap=True, style="bold cyan")
        table.add_column("action", no_wrap=True)
        table.add_column("what it does")
        for keys, description, tooltip in self._rows:
            table.add_row(keys, description, Text(tooltip))
        with VerticalScroll():
            yield Static(Text("Keys of the session picker", "bold"))
            yield Static(table)
            yield Static(
                Text(
                    "\nRemap any key in config.toml under [keymap], by binding id, "
                    'e.g. picker.archive = "alt+a" (ctrl, alt or function keys: what can be '
                    "typed goes to the search). Escape closes this help.",
                    "dim",
                )
            )

    def action_close(self) -> None:
        self.dismiss(None)
