"""Typed words never destroy anything; a worker that fails never takes the picker down."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from textual.widgets import Button, Input
from tui_support import (
    FIXED_NOW_US,
    AppFactory,
    notifications,
    picker,
    session_list,
    settle,
    started,
    wait_until,
)

from core.config import DB_FILENAME
from core.demo import demo_id
from tui.modals.confirm_dismiss import ConfirmDismiss
from tui.modals.confirm_quit import ConfirmQuit
from tui.modals.confirm_stop import ConfirmStop
from tui.modals.error import ErrorModal
from tui.screens.session_picker import SessionPickerScreen


def stored(data_dir: Path, conversation_id: str) -> bool:
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        row = db.execute(
            "SELECT 1 FROM sessions WHERE conversation_id = ?", (conversation_id,)
        ).fetchone()
    return row is not None


def listed_ids(app: object) -> list[str]:
    return [s.conversation_id for s in session_list(app).sessions]  # type: ignore[arg-type]


# --- a worker that fails ----------------------------------------------


def add_history_row_from_a_newer_delegate(data_dir: Path) -> None:
    """A history row of a kind this version does not know (a newer delegate writes those)."""
    payload = {"kind": "context_handed_off", "at": "2026-11-21T20:59:00Z", "capsule": "c1"}
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        db.execute(
            "INSERT INTO history(at, kind, conversation_id, run_id, payload)"
            " VALUES (?, ?, ?, ?, ?)",
            (FIXED_NOW_US, "context_handed_off", demo_id(0), None, json.dumps(payload)),
        )


async def test_an_unknown_history_row_does_not_stop_the_picker(
    demo_dir: Path, make_app: AppFactory
) -> None:
    add_history_row_from_a_newer_delegate(demo_dir)
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await wait_until(
            pilot,
            lambda: any(isinstance(s, SessionPickerScreen) for s in app.screen_stack),
            what="the picker",
        )
        await settle(pilot)
        assert app.return_code is None, "the app exited"
        assert listed_ids(app)[:2] == [demo_id(0), demo_id(1)]
        # Whatever is shown about the row, the picker answers keys.
        if isinstance(app.screen, ErrorModal):
            await pilot.press("escape")
            await settle(pilot)
        await pilot.press("down")
        await settle(pilot)
        assert session_list(app).highlighted == 1
        assert app.return_code is None


async def test_a_failed_worker_is_shown_in_one_place_and_the_app_goes_on(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        screen = await started(pilot)

        async def explode() -> None:
            raise RuntimeError("the disk went away")

        worker = screen.run_worker(explode(), name="reading the disk", exit_on_error=False)
        await wait_until(pilot, lambda: isinstance(app.screen, ErrorModal), what="the error")
        assert worker.error is not None
        text = app.screen.message_text
        assert "reading the disk" in text
        assert "the disk went away" in text
        assert "Traceback" not in text
        await pilot.press("escape")
        await settle(pilot)
        assert picker(app).is_current
        assert app.return_code is None
        assert not [n for n in notifications(app) if "Traceback" in n]


# --- typed words ------------------------------------------------------


# Every printable character a keyboard sends, and words that used to be commands.
TYPED = "".join(chr(c) for c in range(0x20, 0x7F)) + "deploy Deploy quick box yes q d x"


async def test_typed_text_goes_to_the_search_and_destroys_nothing(
    demo_dir: Path, make_app: AppFactory
) -> None:
    """Whatever is typed lands in the search field: no dialog opens, nothing is
    archived, stopped or quit, from the list and from the preview alike."""
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        screen = await started(pilot)
        search = screen.query_one("#filter", Input)
        await pilot.press(*TYPED[:40])
        await settle(pilot)
        screen.query_one("#preview").focus()
        await pilot.press(*TYPED[40:])
        await settle(pilot)
        assert app.screen is picker(app), app.screen
        assert search.value == TYPED
        assert stored(demo_dir, demo_id(0))
        assert not [n for n in notifications(app) if "archived" in n.lower()]
        assert app.return_code is None
        # Backspace typed into the list edits the search too; escape clears it.
        session_list(app).focus()
        await pilot.press("backspace", "backspace")
        assert search.value == TYPED[:-2]
        await pilot.press("escape")
        await settle(pilot)
        assert search.value == ""
        assert listed_ids(app)[0] == demo_id(0)


async def test_a_quit_while_runs_are_in_flight_asks_first(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        assert app.orchestrator is not None
        await app.orchestrator.delegate("take your time", "stalled", conversation_id=demo_id(0))
        await wait_until(pilot, lambda: bool(app.orchestrator.running()), what="the run")  # type: ignore[union-attr]
        await pilot.press("ctrl+q")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, ConfirmQuit)
        assert "1 run in flight" in modal.message_text
        # The safe button has the focus: enter stays.
        focused = app.focused
        assert isinstance(focused, Button)
        assert focused.id == "stay"
        await pilot.press("enter")
        await settle(pilot)
        assert picker(app).is_current
        assert app.return_code is None
        await pilot.press("ctrl+q")
        await settle(pilot)
        await pilot.press("ctrl+q")  # the chord confirms
        await pilot.pause()
    assert app.return_code == 0


async def test_ctrl_q_quits_at_once_when_nothing_runs(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0


async def test_typing_box_stops_no_run(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        assert app.orchestrator is not None
        await app.orchestrator.delegate("take your time", "stalled", conversation_id=demo_id(0))
        await wait_until(pilot, lambda: bool(app.orchestrator.running()), what="the run")  # type: ignore[union-attr]
        await pilot.press(*"box")
        await settle(pilot)
        assert app.screen is picker(app)  # typed into the search
        await pilot.press("escape", "ctrl+x")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmStop)
        focused = app.focused
        assert isinstance(focused, Button)
        assert focused.id == "keep-running"
        await pilot.press(*"yes", "x", "enter")
        await settle(pilot)
        assert picker(app).is_current
        assert app.orchestrator.running()


async def test_the_dismiss_dialog_needs_a_deliberate_key(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir, undo_seconds=60.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+d")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDismiss)
        focused = app.focused
        assert isinstance(focused, Button)
        assert focused.id == "keep"
        await pilot.press(*"yes", "space")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDismiss)
        await pilot.press("enter")  # on the focused "Keep"
        await settle(pilot)
        assert listed_ids(app)[0] == demo_id(0)

        await pilot.press("ctrl+d")
        await settle(pilot)
        await pilot.press("ctrl+d")
        await settle(pilot)
        assert isinstance(app.screen, SessionPickerScreen)
        assert listed_ids(app)[0] == demo_id(1)

        await pilot.press("ctrl+d")
        await settle(pilot)
        await pilot.press("tab", "enter")  # "Dismiss", explicitly focused
        await settle(pilot)
        assert listed_ids(app)[0] == demo_id(2)
