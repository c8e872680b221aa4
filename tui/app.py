"""The Textual app that ``delegate`` (no arguments) opens, and its factory."""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from core.clock import Clock, system_clock
from core.orchestrator import AgentOrchestrator
from tui.commands import PickerCommands
from tui.screens.session_picker import ImportRoots, SessionPickerScreen

OrchestratorFactory = Callable[[], Awaitable[AgentOrchestrator]]


class DelegateApp(App[None]):
    """Opens the orchestrator, then shows the session picker."""

    TITLE = "delegate"
    CSS_PATH = "app.tcss"
    COMMANDS: ClassVar = App.COMMANDS | {PickerCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", show=False, tooltip="Leave delegate"),
    ]

    def __init__(
        self,
        open_orchestrator: OrchestratorFactory,
        *,
        clock: Clock = system_clock,
        preview_size: int | None = None,
        launch_cwd: Path | None = None,
        import_sources: ImportRoots | None = None,
    ) -> None:
        super().__init__()
        self._launch_cwd = launch_cwd
        self._import_sources = import_sources
        self._open_orchestrator = open_orchestrator
        self.clock = clock
        self._preview_size = preview_size
        self.orchestrator: AgentOrchestrator | None = None

    async def on_mount(self) -> None:
        self.orchestrator = await self._open_orchestrator()
        settings = self.orchestrator.settings
        if settings.keymap:
            self.set_keymap(settings.keymap)
        await self.push_screen(
            SessionPickerScreen(
                self.orchestrator,
                clock=self.clock,
                preview_size=self._preview_size or settings.preview_messages,
                launch_cwd=self._launch_cwd,
                import_sources=self._import_sources,
            )
        )
        # What is loaded by now (modules, styles, the picker) lives as long as the app:
        # keep it out of the full collections the garbage collector runs while the
        # user scrolls, which would otherwise stall a frame for tens of milliseconds.
        gc.freeze()

    async def action_quit(self) -> None:
        await self._close_orchestrator()
        self.exit()

    async def _close_orchestrator(self) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, SessionPickerScreen):
                await screen.flush_dismissals()
        # Work still in flight would query a closed store: stop it first.
        self.workers.cancel_all()
        if self.orchestrator is not None:
            orchestrator, self.orchestrator = self.orchestrator, None
            await orchestrator.close(wait=False)

    async def on_unmount(self) -> None:
        await self._close_orchestrator()
        gc.unfreeze()  # the process may go on (tests): let it collect all of that again


def create_app(
    data_dir: Path,
    *,
    clock: Clock = system_clock,
    preview_size: int | None = None,
    launch_cwd: Path | None = None,
    import_sources: ImportRoots | None = None,
) -> DelegateApp:
    """The app over the store in ``data_dir``; shared by the CLI and the tests.

    ``clock`` drives every "3m ago" (fixed in snapshots); ``launch_cwd`` is the
    new-delegate form's default working directory (the current one if None);
    ``import_sources`` = ``(claude_dir, codex_dir)`` imports Claude Code and Codex
    sessions in the background at start and on ctrl+r (``None`` dirs: their
    defaults); leave it None to import nothing.
    """

    async def open_orchestrator() -> AgentOrchestrator:
        return await AgentOrchestrator.open(data_dir, clock=clock)

    return DelegateApp(
        open_orchestrator,
        clock=clock,
        preview_size=preview_size,
        launch_cwd=launch_cwd,
        import_sources=import_sources,
    )
