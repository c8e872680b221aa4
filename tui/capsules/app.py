"""``delegate capsule edit [PATH]``: the capsule editor as an app of its own.

The same :class:`~tui.capsules.editor.CapsuleEditorScreen` the panel pushes,
over an orchestrator opened on the store (so highlights, drafts, launches and
follow-ups work from here too). The app returns the path last saved.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from textual import events, on
from textual.app import App
from textual.widgets import Input, TextArea

from core.clock import Clock, system_clock
from core.config import Settings
from core.errors import DelegateError
from core.orchestrator import AgentOrchestrator
from tui.capsules.editor import CHECK_DELAY, CapsuleEditorScreen
from tui.modals.error import ErrorModal
from tui.shared.workers import WorkFailed

OrchestratorFactory = Callable[[], Awaitable[AgentOrchestrator]]


class CapsuleEditorApp(App[Path | None]):
    """Opens the orchestrator, then the editor; leaving the editor leaves the app."""

    TITLE = "delegate capsule"

    def __init__(
        self,
        open_orchestrator: OrchestratorFactory,
        repo: Path,
        path: Path | None = None,
        session: str | None = None,
        *,
        clock: Clock = system_clock,
        check_delay: float = CHECK_DELAY,
        cursor_blink: bool = True,
        source: str | None = None,
    ) -> None:
        super().__init__()
        self.source = source
        self._open_orchestrator = open_orchestrator
        self.repo = repo
        self.path = path
        self.session = session
        self.clock = clock
        self.check_delay = check_delay
        self.cursor_blink = cursor_blink
        self.orchestrator: AgentOrchestrator | None = None

    async def on_mount(self) -> None:
        self.orchestrator = await self._open_orchestrator()
        if self.orchestrator.settings.keymap:  # the keys a person remapped in config
            self.set_keymap(self.orchestrator.settings.keymap)
        await self.push_screen(
            CapsuleEditorScreen(
                self.repo,
                self.path,
                self.session,
                orchestrator=self.orchestrator,
                clock=self.clock,
                check_delay=self.check_delay,
                source=self.source,
            ),
            self.exit,
        )

    async def on_unmount(self) -> None:
        if self.orchestrator is not None:
            orchestrator, self.orchestrator = self.orchestrator, None
            await orchestrator.close(wait=False)

    @on(WorkFailed)
    def _work_failed(self, event: WorkFailed) -> None:
        """A typed error is a toast with its own message; anything else a modal."""
        if isinstance(event.error, DelegateError):
            self.notify(
                event.error.message, title=f"Failed {event.what}", severity="error", markup=False
            )
            return
        self.push_screen(ErrorModal(event.what, event.error))

    @on(events.DescendantFocus)
    def _steady_cursor(self, event: events.DescendantFocus) -> None:
        if not self.cursor_blink and isinstance(event.widget, Input | TextArea):
            event.widget.cursor_blink = False


def create_capsule_app(
    data_dir: Path,
    repo: Path,
    path: Path | None = None,
    session: str | None = None,
    *,
    settings: Settings | None = None,
    clock: Clock = system_clock,
    new_id: Callable[[], str] | None = None,
    check_delay: float = CHECK_DELAY,
    cursor_blink: bool = True,
) -> CapsuleEditorApp:
    """The editor app over the store in ``data_dir``; shared by the CLI and the tests."""

    async def open_orchestrator() -> AgentOrchestrator:
        if new_id is None:
            return await AgentOrchestrator.open(data_dir, settings=settings, clock=clock)
        return await AgentOrchestrator.open(data_dir, settings=settings, clock=clock, new_id=new_id)

    return CapsuleEditorApp(
        open_orchestrator,
        repo,
        path,
        session,
        clock=clock,
        check_delay=check_delay,
        cursor_blink=cursor_blink,
    )
