"""Command palette provider: the picker's actions by name (``ctrl+p``)."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

PICKER_COMMANDS = [
    ("Resume session", "resume", "Send a follow-up into the highlighted session"),
    ("Dismiss session", "dismiss_session(True)", "Dismiss the highlighted session"),
    ("Undo dismiss", "undo_dismiss", "Bring back the last dismissed session"),
    ("New delegate", "new_delegate", "Launch a new delegate"),
    ("Filter sessions", "filter", "Filter by agent, title, cwd, branch or id"),
    ("Older messages", "page_older", "Page the preview back"),
    ("Newer messages", "page_newer", "Page the preview forward"),
    ("Stop run", "stop_run", "Stop the highlighted session's run"),
    ("Toggle history", "toggle_history", "Show or hide the history cells"),
    ("Refresh", "refresh", "Reload sessions and status"),
    ("Help", "help", "List every key"),
]


class PickerCommands(Provider):
    """Offers the picker's actions while the picker is the active screen."""

    def _commands(self) -> list[tuple[str, str, str]]:
        from tui.screens.session_picker import SessionPickerScreen

        return PICKER_COMMANDS if isinstance(self.screen, SessionPickerScreen) else []

    async def discover(self) -> Hits:
        for name, action, help_text in self._commands():
            yield DiscoveryHit(name, partial(self.screen.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, action, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(name),
                    partial(self.screen.run_action, action),
                    help=help_text,
                )
