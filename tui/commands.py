"""Command palette provider (``ctrl+p``) of the session picker, built from its live bindings.

The screen declares it (``COMMANDS = {PickerCommands}``); each hit runs the
binding's action on that screen, and its help names the key bound to it now,
so a remapped key shows here as it does in the footer and the help.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.shared.keys import declared_bindings, keys_shown, live_keys

# Palette names read better with the object named; other bindings use their description.
PALETTE_NAMES = {
    "picker.open": "Open session",
    "picker.follow_up": "Follow up in the background",
    "picker.archive": "Archive session",
    "picker.undo": "Undo archive",
    "picker.new": "New session",
    "picker.older": "Older messages",
    "picker.newer": "Newer messages",
    "picker.stop": "Stop run",
    "picker.history": "Toggle history",
    "picker.returns": "Compact returns by group",
}
# Already in Textual's own commands ("Quit the application", "Keys").
LEFT_OUT: set[str] = set()


@dataclass(frozen=True)
class PaletteCommand:
    name: str
    action: str
    help: str


class PickerCommands(Provider):
    """The picker's actions, by name, with the keys that run them."""

    def _commands(self) -> Iterator[PaletteCommand]:
        screen = self.screen
        live = live_keys(screen)
        for binding in declared_bindings(screen.BINDINGS):
            if binding.id in LEFT_OUT:
                continue
            keys = keys_shown(screen, binding, live)
            yield PaletteCommand(
                PALETTE_NAMES.get(binding.id or "", binding.description),
                binding.action,
                f"{binding.tooltip} · {keys}",
            )

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(
                command.name, partial(self.screen.run_action, command.action), help=command.help
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(command.name)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(command.name),
                    partial(self.screen.run_action, command.action),
                    help=command.help,
                )
