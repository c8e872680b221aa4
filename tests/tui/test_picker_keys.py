"""Keys: help, the command palette, remapping, history cells, the history toggle, stop."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from textual.command import CommandList, CommandPalette
from textual.widgets import Static
from tui_support import (
    AppFactory,
    history_cells,
    insert_sessions,
    notifications,
    picker,
    preview,
    session_list,
    session_with,
    settle,
    started,
    static_text,
    type_text,
    wait_until,
    write_config,
)

from core.demo import demo_id
from core.models import RunStatus
from tui.commands import PALETTE_NAMES
from tui.modals.confirm_dismiss import ConfirmDismiss
from tui.modals.confirm_quit import ConfirmQuit
from tui.modals.confirm_stop import ConfirmStop
from tui.modals.error import ErrorModal
from tui.modals.follow_up import FollowUpPrompt
from tui.modals.help import HelpScreen
from tui.modals.new_delegate import NewDelegate
from tui.screens.session_picker import SessionPickerScreen
from tui.widgets.history import FollowUpCompletedCell, RunCancelledCell, RunFailedCell


def help_text(screen: HelpScreen) -> str:
    return "\n".join(static_text(s, width=120) for s in screen.query(Static))


async def test_help_lists_every_binding(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        text = help_text(app.screen)
        for binding in SessionPickerScreen.BINDINGS:
            assert binding.description in text, binding  # type: ignore[union-attr]
            assert binding.tooltip.split(" (")[0] in text, binding  # type: ignore[union-attr]
        for key in ("^f", "^d", "^z", "^n", "alt+↑", "alt+↓", "^x", "^l", "f5", "f1"):
            assert any(line.strip().startswith(key) for line in text.splitlines()), key
        for extra in ("type", "esc", "ctrl+q", "ctrl+p", "tab", "pgup/pgdn"):
            assert extra in text
        assert "[keymap]" in text
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, SessionPickerScreen)


async def test_every_binding_has_an_id_and_a_tooltip() -> None:
    from tui.app import DelegateApp
    from tui.modals.help import HelpScreen as Help
    from tui.widgets.history import HistoryCell

    for owner in (
        SessionPickerScreen,
        FollowUpPrompt,
        NewDelegate,
        ConfirmDismiss,
        ConfirmQuit,
        ConfirmStop,
        ErrorModal,
        Help,
        HistoryCell,
        DelegateApp,
    ):
        for binding in owner.BINDINGS:
            assert binding.id, (owner, binding)  # type: ignore[union-attr]
            assert binding.tooltip, (owner, binding)  # type: ignore[union-attr]


async def test_command_palette_offers_the_picker_actions(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        palette = app.screen
        assert isinstance(palette, CommandPalette)

        def prompts() -> str:
            options = palette.query_one(CommandList).options
            return "\n".join(str(o.prompt) for o in options)

        await wait_until(
            pilot, lambda: "Follow up in the background" in prompts(), what="the picker's commands"
        )
        for name in PALETTE_NAMES.values():
            assert name in prompts(), name

        await type_text(pilot, "new sess")
        await wait_until(pilot, lambda: prompts().startswith("New session"), what="a search hit")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, NewDelegate)


async def test_keys_can_be_remapped_in_the_config(tmp_path: Path, make_app: AppFactory) -> None:
    data_dir = tmp_path / "remapped"
    write_config(data_dir, '[keymap]\n"picker.archive" = "alt+k"\n"picker.follow_up" = "f4"\n')
    app = make_app(data_dir)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await started(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        await type_text(pilot, "something to dismiss")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(session_list(app).sessions), what="a session")
        await wait_until(pilot, lambda: not app.orchestrator.running(), what="the run")  # type: ignore[union-attr]
        # The old keys do nothing; the new ones act.
        await pilot.press("ctrl+d", "ctrl+f")
        await settle(pilot)
        assert isinstance(app.screen, SessionPickerScreen)
        await pilot.press("f4")
        await settle(pilot)
        assert isinstance(app.screen, FollowUpPrompt)
        await pilot.press("escape", "alt+k")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDismiss)
        await pilot.press("escape", "f1")
        await settle(pilot)
        text = help_text(app.screen)  # type: ignore[arg-type]
        archive_line = next(line for line in text.splitlines() if " Archive " in f" {line} ")
        assert archive_line.strip().startswith("alt+k"), archive_line
        resume_line = next(line for line in text.splitlines() if "Send a follow-up" in line)
        assert resume_line.strip().startswith("f4"), resume_line


async def test_enter_on_a_history_cell_jumps_to_its_session(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        listed = session_list(app)
        await pilot.press("down", "down", "down", "ctrl+f")
        await settle(pilot)
        await type_text(pilot, "one more pass")
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: any(isinstance(c, FollowUpCompletedCell) for c in history_cells(app)),
            what="a completed cell",
        )
        await pilot.press("home")
        await settle(pilot)
        assert listed.highlighted == 0
        cell = next(c for c in history_cells(app) if isinstance(c, FollowUpCompletedCell))
        cell.focus()
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert listed.highlighted == 3
        assert listed.has_focus
        assert demo_id(3) in static_text(preview(app).query_one("#preview-header", Static))


async def test_a_cell_whose_session_is_not_listed_says_so(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await started(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await type_text(pilot, "hello")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: len(history_cells(app)) == 2, what="two cells")
        await pilot.press("z", "z", "z")
        # The filter applies after its debounce: until then the session is still listed,
        # and enter in the search field would open it.
        await wait_until(pilot, lambda: not session_list(app).sessions, what="nothing listed")
        await pilot.press("enter")  # nothing highlighted: enter opens nothing
        await settle(pilot)
        assert type(app.screen).__name__ == "SessionPickerScreen"
        history_cells(app)[0].focus()
        await settle(pilot)
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any("not in the list" in n for n in notifications(app)),
            what="the note that the session is not listed",
        )


async def test_ctrl_l_toggles_the_history_pane(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await started(pilot)
        history = screen.query_one("#history")
        assert history.display
        assert screen.query_one("#preview").display
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert not history.display
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert history.display

    app = make_app(demo_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(pilot)
        history = screen.query_one("#history")
        assert screen.has_class("-narrow")
        assert not history.display
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert history.display
        assert screen.query_one("#preview").display  # under the preview, not instead of it


async def test_ctrl_x_stops_a_run_this_panel_started(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await started(pilot)
        assert app.orchestrator is not None
        await pilot.press("ctrl+x")
        await settle(pilot)
        assert any("Nothing is running in that session" in n for n in notifications(app))
        await app.orchestrator.delegate("take your time", "stalled", conversation_id=demo_id(0))
        await wait_until(
            pilot, lambda: session_list(app).sessions[0].state.value == "running", what="running"
        )
        await pilot.press("ctrl+x")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmStop)
        await pilot.press("ctrl+x")
        await wait_until(pilot, lambda: not app.orchestrator.running(), what="the stop")  # type: ignore[union-attr]
        await wait_until(
            pilot,
            lambda: any(isinstance(c, RunCancelledCell) for c in history_cells(app)),
            what="a cancelled cell",
        )
        cell = next(c for c in history_cells(app) if isinstance(c, RunCancelledCell))
        assert cell.event.status is RunStatus.CANCELLED  # type: ignore[union-attr]
        assert "run cancelled" in str(cell.render())
        assert not any(isinstance(c, RunFailedCell) for c in history_cells(app))
        assert session_list(app).sessions[0].state.value == "idle"
        assert picker(app).is_current


async def test_the_palette_names_the_keys_bound_now(tmp_path: Path, make_app: AppFactory) -> None:
    data_dir = tmp_path / "remapped"
    write_config(data_dir, '[keymap]\n"picker.archive" = "alt+k"\n')
    app = make_app(data_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        await type_text(pilot, "archive session")

        def prompts() -> str:
            return "\n".join(str(o.prompt) for o in palette.query_one(CommandList).options)

        await wait_until(pilot, lambda: "after confirming" in prompts(), what="the hit")
        assert "Move the highlighted session to the archive, after confirming · alt+k" in prompts()


async def test_ctrl_x_stops_a_run_another_process_drives(
    tmp_path: Path, make_app: AppFactory
) -> None:
    """A ``delegate run`` in another process: x in the panel stops it too."""
    data_dir = write_config(tmp_path / "data")
    await insert_sessions(
        data_dir,
        [session_with("stalled-2", ["a", "b"], title="held", agent_id="stalled", minutes_ago=1)],
    )
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await started(pilot)
        follow_up = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "tui.cli", "--data-dir", str(data_dir), "run"],
            *["--session", "stalled-2", "take your time"],
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:

            async def row_running() -> bool:
                await pilot.press("f5")
                await settle(pilot)
                return session_list(app).sessions[0].state.value == "running"

            for _ in range(200):
                if await row_running():
                    break
                await pilot.pause(0.05)
            assert session_list(app).sessions[0].conversation_id == "stalled-2"
            assert session_list(app).sessions[0].state.value == "running"
            await pilot.press("ctrl+x")
            await settle(pilot)
            assert isinstance(app.screen, ConfirmStop)
            await pilot.press("ctrl+x")
            await wait_until(
                pilot,
                lambda: follow_up.returncode is not None,
                seconds=20,
                what="the other process",
            )
            await wait_until(
                pilot,
                lambda: session_list(app).sessions[0].state.value == "idle",
                seconds=10,
                what="the row to be idle",
            )
        finally:
            if follow_up.returncode is None:
                follow_up.kill()
            await follow_up.wait()
