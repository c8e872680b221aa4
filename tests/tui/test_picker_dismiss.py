"""Dismiss: with and without the confirm modal, the undo window, what the store keeps."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static
from tui_support import (
    DEMO_SESSIONS,
    AppFactory,
    history_cells,
    notifications,
    picker,
    preview,
    session_list,
    settle,
    started,
    static_text,
    status_panel,
    wait_until,
    widget_text,
)

from core.config import DB_FILENAME
from core.demo import demo_id
from tui.app import DelegateApp
from tui.modals.confirm_dismiss import ConfirmDismiss
from tui.widgets.history import SessionDismissedCell

SHORT = 0.3


@pytest.fixture
def make_app(make_app: AppFactory) -> AppFactory:
    """Undo stays possible for the whole test, however slow the machine (unless a test
    passes a short ``undo_seconds`` to wait for the commit)."""

    def make(folder: Path, **kwargs: Any) -> DelegateApp:
        return make_app(folder, **({"undo_seconds": 60.0} | kwargs))

    return make


def listed_ids(app: object) -> list[str]:
    return [s.conversation_id for s in session_list(app).sessions]  # type: ignore[arg-type]


def stored(data_dir: Path, conversation_id: str) -> bool:
    """Whether the session is in the store, seen from another connection."""
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        row = db.execute(
            "SELECT 1 FROM sessions WHERE conversation_id = ?", (conversation_id,)
        ).fetchone()
    return row is not None


def status_text(app: object) -> str:
    return static_text(status_panel(app))  # type: ignore[arg-type]


async def test_dismiss_asks_naming_the_session_then_removes_it(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await started(pilot)
        assert status_text(app).startswith(f"{DEMO_SESSIONS} reusable")
        await pilot.press("down", "ctrl+d")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, ConfirmDismiss)
        text = static_text(modal.query_one(Static))
        assert "Dismiss this session?" in text
        assert f"tester · {demo_id(1)[:8]}" in text
        assert "Write property tests for the cursor encoder" in text

        await pilot.press("ctrl+d", "ctrl+d")
        await settle(pilot)
        assert picker(app).is_current
        assert demo_id(1) not in listed_ids(app)
        assert listed_ids(app)[:2] == [demo_id(0), demo_id(2)]
        assert any("Session dismissed" in n and "ctrl+z to undo" in n for n in notifications(app))
        # Inside the undo window nothing is deleted yet.
        assert stored(demo_dir, demo_id(1))
        await wait_until(
            pilot, lambda: "1 dismissal pending" in status_text(app), what="the pending note"
        )


async def test_the_dismissal_is_committed_when_the_window_closes(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir, undo_seconds=SHORT)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("down", "ctrl+d", "ctrl+d")
        await wait_until(
            pilot, lambda: not stored(demo_dir, demo_id(1)), seconds=5, what="the commit"
        )
        await wait_until(
            pilot,
            lambda: status_text(app).startswith(f"{DEMO_SESSIONS - 1} reusable"),
            what="the status panel to count one less",
        )
        assert "pending" not in status_text(app)
        assert demo_id(1) not in listed_ids(app)
        cells = history_cells(app)
        assert [type(c) for c in cells] == [SessionDismissedCell]
        assert "Write property tests" in str(cells[0].render())


async def test_keeping_the_session_in_the_modal_changes_nothing(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+d")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDismiss)
        await pilot.press("enter")  # on "Keep", which has the focus
        await settle(pilot)
        assert picker(app).is_current
        assert listed_ids(app)[0] == demo_id(0)
        # Escape keeps it too.
        await pilot.press("ctrl+d")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.pause(SHORT)
        assert listed_ids(app)[0] == demo_id(0)
        assert stored(demo_dir, demo_id(0))


async def test_dismiss_now_skips_the_question(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir, undo_seconds=SHORT)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+d", "ctrl+d")
        await settle(pilot)
        assert picker(app).is_current
        assert demo_id(0) not in listed_ids(app)
        # The highlight moves on to the next session, and the preview with it.
        assert session_list(app).highlighted_session is not None
        assert session_list(app).highlighted_session.conversation_id == demo_id(1)
        header = widget_text(preview(app), "#preview-header")
        assert demo_id(1) in header
        assert demo_id(0) not in header
        await wait_until(pilot, lambda: not stored(demo_dir, demo_id(0)), what="the commit")


async def test_undo_brings_the_row_back_and_the_store_keeps_it(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await started(pilot)
        await pilot.press("down", "down", "ctrl+d", "ctrl+d")
        await settle(pilot)
        assert demo_id(2) not in listed_ids(app)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert listed_ids(app)[:4] == [demo_id(i) for i in range(4)]
        assert any("Kept" in n for n in notifications(app))
        assert not len(picker(app).dismissals)  # the window's timer is gone with it
        assert stored(demo_dir, demo_id(2))
        assert demo_id(2) in listed_ids(app)
        assert history_cells(app) == []
        assert status_text(app).startswith(f"{DEMO_SESSIONS} reusable")
        # Nothing left to undo.
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert any("Nothing to undo." in n for n in notifications(app))


async def test_a_reload_inside_the_undo_window_does_not_bring_the_row_back(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+d", "ctrl+d", "f5")
        await settle(pilot)
        assert demo_id(0) not in listed_ids(app)
        await pilot.press("e", "escape")
        await settle(pilot)
        assert demo_id(0) not in listed_ids(app)
        # Undo still works after the reloads, and puts the row back in its place.
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert listed_ids(app)[:2] == [demo_id(0), demo_id(1)]
        assert stored(demo_dir, demo_id(0))


async def test_quitting_commits_pending_dismissals(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+d", "ctrl+d")
        await settle(pilot)
        # A long window (60 s): only quitting can commit it within this test.
        assert stored(demo_dir, demo_id(0))
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert not stored(demo_dir, demo_id(0))
    assert stored(demo_dir, demo_id(1))
