"""The Textual app that ``delegate`` (no arguments) opens, and its factory."""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.app import App
from textual.binding import Binding, BindingType

from core.clock import Clock, system_clock
from core.config import Settings
from core.errors import DelegateError
from core.orchestrator import AgentOrchestrator
from tui.first_page import FirstPage
from tui.list_scope import ListScope
from tui.live import LOG_FILENAME, Supervision, log_core_to
from tui.screens.session_picker import SessionPickerScreen
from tui.shared.workers import WorkFailed
from tui.widgets.background_import import ImportRoots
from tui.widgets.dismissals import UNDO_SECONDS
from tui.widgets.filter_bar import DEBOUNCE_SECONDS
from tui.widgets.preview import QUIET_SECONDS
from tui.widgets.session_list import SessionList

if TYPE_CHECKING:
    from core.supervisor import Supervisor

OrchestratorFactory = Callable[[], Awaitable[AgentOrchestrator]]

STORE_LOOK_S = 1.0
"""How often the panel looks whether its store file is still the one it opened."""
STORE_LOST_NOTICE_S = 60.0
"""How long that notice stays: the panel writes nothing more until it is restarted."""


def _nothing() -> None:
    pass


class DelegateApp(App[None]):
    """Opens the orchestrator, then shows the session picker."""

    TITLE = "delegate"
    CSS_PATH = "app.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            id="app.quit",
            tooltip="Leave delegate (asks first while runs are in flight)",
        ),
    ]

    def __init__(
        self,
        open_orchestrator: OrchestratorFactory,
        *,
        settings: Settings | None = None,
        clock: Clock = system_clock,
        preview_size: int | None = None,
        launch_cwd: Path | None = None,
        import_sources: ImportRoots | None = None,
        undo_seconds: float = UNDO_SECONDS,
        filter_debounce: float = DEBOUNCE_SECONDS,
        cursor_blink: bool = True,
        run_quiet_seconds: float = QUIET_SECONDS,
        supervise: Supervision | None = None,
        scope_cwd: Path | None = None,
        all_projects: bool = False,
        resume_collector: bool = False,
        first_page: FirstPage | None = None,
    ) -> None:
        super().__init__()
        self._kept_page = first_page
        self._resume_collector = resume_collector
        self._scope_cwd = scope_cwd
        self._all_projects = all_projects
        self._supervision = supervise
        self.supervisor: Supervisor | None = None
        self._stop_logging: Callable[[], None] = _nothing
        self._filter_debounce = filter_debounce
        self._run_quiet_seconds = run_quiet_seconds
        self._launch_cwd = launch_cwd
        self._import_sources = import_sources
        self._open_orchestrator = open_orchestrator
        self._settings = settings
        self.clock = clock
        self._preview_size = preview_size
        self._undo_seconds = undo_seconds
        self.cursor_blink = cursor_blink
        self.orchestrator: AgentOrchestrator | None = None
        self._supervise_after_first_page = False
        if settings is not None and settings.keymap:
            self.set_keymap(settings.keymap)

    async def on_mount(self) -> None:
        self.orchestrator = await self._open_orchestrator()
        self._stop_logging = log_core_to(self.orchestrator.data_dir / LOG_FILENAME)
        self._store_look = self.set_interval(STORE_LOOK_S, self._look_at_store)
        settings = self.orchestrator.settings
        if self._settings is None and settings.keymap:
            self.set_keymap(settings.keymap)
        picker = SessionPickerScreen(
            self.orchestrator,
            clock=self.clock,
            preview_size=self._preview_size or settings.preview_messages,
            launch_cwd=self._launch_cwd,
            import_sources=self._import_sources,
            undo_seconds=self._undo_seconds,
            filter_debounce=self._filter_debounce,
            run_quiet_seconds=self._run_quiet_seconds,
            polling_every_s=self._supervision.rescan_s if self._supervision else None,
            scope=ListScope.starting_in(self._scope_cwd, settings, all_projects=self._all_projects),
            first_page=self._kept_page,
        )
        # The supervisor starts once the first page is on screen (see _first_page).
        self._supervise_after_first_page = self._supervision is not None
        await picker.load_first_page()  # the picker's first frame shows rows
        # Pushed once the app's mount is over: Textual drops every frame painted while
        # the app mounts (a batch), so a picker pushed here would paint its rows unseen
        # and show them only at the next change on screen.
        self.call_later(self._show_picker, picker)

    def _look_at_store(self) -> None:
        """Say at once when the store file was replaced or removed under the panel (it
        then writes nothing more there), rather than at the next write it refuses."""
        if self.orchestrator is None:
            return
        lost = self.orchestrator.store_lost()
        if lost is None:
            return
        self._store_look.stop()  # said once: every write says it again anyway
        self.notify(
            f"{lost.code}: {lost.message}",
            title="The store file changed under the panel",
            severity="error",
            timeout=STORE_LOST_NOTICE_S,
            markup=False,
        )

    async def _show_picker(self, picker: SessionPickerScreen) -> None:
        await self.push_screen(picker)
        # What is loaded by now (modules, styles, the picker) lives as long as the app:
        # keep it out of the full collections the garbage collector runs while the
        # user scrolls, which would otherwise stall a frame for tens of milliseconds.
        gc.freeze()
        if self._resume_collector:  # paused for the start (tui.cli.run_app): back on
            self._resume_collector = False
            gc.enable()

    @on(SessionList.Loaded)
    def _first_page(self, event: SessionList.Loaded) -> None:
        """Start watching once the picker's first page is loaded, after the frame that
        shows it: the watcher's imports and threads never delay the first rows."""
        if event.first and self._supervise_after_first_page:
            self._supervise_after_first_page = False
            self.call_after_refresh(self._supervise)

    def _supervise(self) -> None:
        if self._supervision is None or self.orchestrator is None:
            return  # quitting already
        # The picker listens on the bus by now: it hears the first watch status.
        self.supervisor = self._supervision.build(self.orchestrator, self._import_sources)
        self.run_worker(self._start_supervisor(self.supervisor), exit_on_error=False)

    async def _start_supervisor(self, supervisor: Supervisor) -> None:
        """Start watching; a store that cannot be watched leaves the panel as it was
        before live updates (f5 still refreshes), saying so."""
        try:
            await supervisor.start()
        except DelegateError as exc:
            self.notify(
                f"Live updates are off: {exc.message} — f5 refreshes.",
                title="Not watching",
                severity="warning",
                markup=False,
            )

    # --- quitting ------------------------------------------------------------

    def runs_in_flight(self) -> int:
        return len(self.orchestrator.running()) if self.orchestrator is not None else 0

    async def action_quit(self, ask: bool = False) -> None:
        """Quit; ask first when ``ask`` (a bare letter was pressed) or runs are in flight."""
        in_flight = self.runs_in_flight()
        if ask or in_flight:
            from tui.modals.confirm_quit import ConfirmQuit  # only when asking

            if isinstance(self.screen, ConfirmQuit):
                return

            async def answered(yes: bool | None) -> None:
                if yes:
                    await self._quit_now()

            await self.push_screen(ConfirmQuit(in_flight), answered)
            return
        await self._quit_now()

    async def _quit_now(self) -> None:
        await self._close_orchestrator()
        self.exit()

    async def _close_orchestrator(self) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, SessionPickerScreen):
                await screen.flush_dismissals()
        # Work still in flight would query a closed store: stop it first.
        self.workers.cancel_all()
        if self.supervisor is not None:
            supervisor, self.supervisor = self.supervisor, None
            await supervisor.stop()
        self._stop_logging()
        self._stop_logging = _nothing
        if self.orchestrator is not None:
            orchestrator, self.orchestrator = self.orchestrator, None
            await orchestrator.close(wait=False)

    async def on_unmount(self) -> None:
        await self._close_orchestrator()
        gc.unfreeze()  # the process may go on (tests): let it collect all of that again

    # --- the one place worker errors are shown ---------------------------------

    @on(WorkFailed)
    def _work_failed(self, event: WorkFailed) -> None:
        """A typed error is something a person can act on: a toast with its own message.
        Anything else is unexpected: a modal that names what failed (never a traceback)."""
        if isinstance(event.error, DelegateError):
            self.notify(
                event.error.message,
                title=f"Failed {event.what}",
                severity="error",
                markup=False,
            )
            return
        from tui.modals.error import ErrorModal  # only when something failed

        self.push_screen(ErrorModal(event.what, event.error))

    # --- cursor blink (off for deterministic screenshots) ---------------------

    @on(events.DescendantFocus)
    def _steady_cursor(self, event: events.DescendantFocus) -> None:
        # Any widget with a text cursor (Input, TextArea): naming TextArea here would
        # import it, and its document support, before the first frame.
        widget = event.widget
        if not self.cursor_blink and hasattr(widget, "cursor_blink"):
            widget.cursor_blink = False


def create_app(
    data_dir: Path,
    *,
    settings: Settings | None = None,
    clock: Clock = system_clock,
    new_id: Callable[[], str] | None = None,
    preview_size: int | None = None,
    launch_cwd: Path | None = None,
    import_sources: ImportRoots | None = None,
    undo_seconds: float = UNDO_SECONDS,
    filter_debounce: float = DEBOUNCE_SECONDS,
    cursor_blink: bool = True,
    run_quiet_seconds: float = QUIET_SECONDS,
    supervise: Supervision | None = Supervision(),  # noqa: B008 (frozen, shared safely)
    scope_cwd: Path | None = None,
    all_projects: bool = False,
    resume_collector: bool = False,
    first_page: FirstPage | None = None,
) -> DelegateApp:
    """The app over the store in ``data_dir``; shared by the CLI and the tests.

    ``settings``, when given, were loaded and validated before the app exists (so
    a broken ``config.toml`` never reaches Textual); None reads them from
    ``data_dir`` when the app opens. ``clock`` drives every "3m ago" (fixed in
    snapshots); ``new_id`` mints conversation, run and message ids (counted in
    tests); ``launch_cwd`` is the new-delegate form's default working directory
    (the current one if None); ``import_sources`` = ``(claude_dir, codex_dir)``
    imports Claude Code and Codex sessions in the background at start and on
    f5 (``None`` dirs: their defaults), None imports nothing; ``undo_seconds``
    is the undo window of a dismissal; ``filter_debounce`` how long typing in the
    filter must pause before the query runs; ``cursor_blink=False`` keeps text cursors
    solid (screenshots). ``scope_cwd`` is the folder the panel started in: inside a
    git repository the list covers that project (worktrees included) unless
    ``all_projects`` or the ``scope = "all"`` setting says every project; None lists
    every project. ``resume_collector``: the caller paused the garbage collector for
    the start; the app turns it back on once the picker is shown. ``first_page``: where
    the picker keeps its first page for the next start to draw (``tui.first_page``).
    """

    async def open_orchestrator() -> AgentOrchestrator:
        if new_id is None:
            return await AgentOrchestrator.open(
                data_dir, settings=settings, clock=clock, owner_kind="panel"
            )
        return await AgentOrchestrator.open(
            data_dir, settings=settings, clock=clock, new_id=new_id, owner_kind="panel"
        )

    return DelegateApp(
        open_orchestrator,
        settings=settings,
        clock=clock,
        preview_size=preview_size,
        launch_cwd=launch_cwd,
        import_sources=import_sources,
        undo_seconds=undo_seconds,
        filter_debounce=filter_debounce,
        cursor_blink=cursor_blink,
        run_quiet_seconds=run_quiet_seconds,
        supervise=supervise,
        scope_cwd=scope_cwd,
        all_projects=all_projects,
        resume_collector=resume_collector,
        first_page=first_page,
    )
