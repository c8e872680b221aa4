"""Archive (ctrl+d, asked first), undo (ctrl+z restores), rename (ctrl+r): what the store keeps.

Archiving is written at once and deletes nothing; undo restores the session.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static
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
    type_text,
    wait_until,
    widget_text,
)

from core.config import DB_FILENAME
from core.demo import demo_id
from tui.app import DelegateApp
from tui.modals.confirm_dismiss import ConfirmDismiss, ConfirmPurge
from tui.modals.rename import RenameSession
from tui.widgets.history import SessionDismissedCell, SessionRenamedCell, SessionRestoredCell

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


def archived(data_dir: Path, conversation_id: str) -> bool:
    """Whether the stored session is in the archive, seen from another connection."""
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        row = db.execute(
            "SELECT archived_at IS NOT NULL FROM sessions WHERE conversation_id = ?",
            (conversation_id,),
        ).fetchone()
    return bool(row and row[0])


def stored_name(data_dir: Path, conversation_id: str) -> str | None:
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        row = db.execute(
            "SELECT name FROM sessions WHERE conversation_id = ?", (conversation_id,)
        ).fetchone()
    return row[0] if row else None


def status_text(app: object) -> str:
    return static_text(status_panel(app))  # type: ignore[arg-type]


async def test_archive_asks_naming_the_session_then_archives_it(
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
        assert "Archive this session?" in text
        assert f"tester · {demo_id(1)[:8]}" in text
        assert "Write property tests for the cursor encoder" in text
        assert "transcript files are never deleted" in text
        assert modal.focused is not None
        assert modal.focused.id == "keep"

        await pilot.press("ctrl+d")
        await settle(pilot)
        assert picker(app).is_current
        assert demo_id(1) not in listed_ids(app)
        assert listed_ids(app)[:2] == [demo_id(0), demo_id(2)]
        assert any("Session archived" in n and "ctrl+z to undo" in n for n in notifications(app))
        # Written at once, and nothing deleted: the archive keeps it.
        await wait_until(pilot, lambda: archived(demo_dir, demo_id(1)), what="the archive")
        assert stored(demo_dir, demo_id(1))


async def test_the_archive_leaves_the_counts_and_shows_in_the_history(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir, undo_seconds=SHORT)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("down", "ctrl+d", "ctrl+d")
        await wait_until(
            pilot, lambda: archived(demo_dir, demo_id(1)), seconds=5, what="the archive"
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


async def test_the_highlight_moves_on_after_an_archive(
    demo_dir: Path, make_app: AppFactory
) -> None:
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
        await wait_until(pilot, lambda: archived(demo_dir, demo_id(0)), what="the archive")


async def test_undo_restores_the_session(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await started(pilot)
        await pilot.press("down", "down", "ctrl+d", "ctrl+d")
        await settle(pilot)
        assert demo_id(2) not in listed_ids(app)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert listed_ids(app)[:4] == [demo_id(i) for i in range(4)]
        assert any("Restored" in n for n in notifications(app))
        await wait_until(
            pilot,
            lambda: (
                [type(c) for c in history_cells(app)] == [SessionDismissedCell, SessionRestoredCell]
            ),
            what="archived, then restored, in the history",
        )
        assert stored(demo_dir, demo_id(2))
        assert not archived(demo_dir, demo_id(2))
        assert demo_id(2) in listed_ids(app)
        await wait_until(
            pilot,
            lambda: status_text(app).startswith(f"{DEMO_SESSIONS} reusable"),
            what="the count back",
        )
        # Nothing left to undo.
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert any("Nothing to undo." in n for n in notifications(app))


async def test_a_reload_after_an_archive_does_not_bring_the_row_back(
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
        await wait_until(pilot, lambda: not archived(demo_dir, demo_id(0)), what="the restore")


async def test_quitting_right_after_an_archive_keeps_it(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+d", "ctrl+d", "ctrl+q")
        await pilot.pause()
    assert archived(demo_dir, demo_id(0))
    assert not archived(demo_dir, demo_id(1))


async def test_rename_names_the_row_and_escape_changes_nothing(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert isinstance(app.screen, RenameSession)
        await type_text(pilot, "Release plan")
        await pilot.press("escape")
        await settle(pilot)
        assert picker(app).is_current
        assert stored_name(demo_dir, demo_id(0)) is None

        await pilot.press("ctrl+r")
        await settle(pilot)
        await type_text(pilot, "Release plan")
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: stored_name(demo_dir, demo_id(0)) == "Release plan",
            what="the name stored",
        )
        await wait_until(
            pilot,
            lambda: any(isinstance(c, SessionRenamedCell) for c in history_cells(app)),
            what="the rename in the history",
        )
        renamed = next(c for c in history_cells(app) if isinstance(c, SessionRenamedCell))
        assert "Release plan" in str(renamed.render())
        highlighted = session_list(app).highlighted_session
        assert highlighted is not None
        assert highlighted.shown_title == "Release plan"  # the row's session, renamed

        # An empty name clears it: the first prompt shows again.
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.screen.query_one(Input).value == "Release plan"  # the name to edit
        await pilot.press("end", *["backspace"] * len("Release plan"), "enter")
        await wait_until(
            pilot, lambda: stored_name(demo_dir, demo_id(0)) is None, what="the name cleared"
        )


async def _highlight_archived(pilot: Any, app: DelegateApp) -> str:
    """Archive the highlighted session in the store and show its row as archived
    (what the archive view lists), highlighted."""
    screen = picker(app)
    session = session_list(app).highlighted_session
    assert session is not None
    archived_session = await screen.orchestrator.archive(session.conversation_id)
    session_list(app).replace_session(archived_session)
    screen.refresh_bindings()
    await settle(pilot)
    return session.conversation_id


async def test_ctrl_d_restores_an_archived_session(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await started(pilot)
        cid = await _highlight_archived(pilot, app)
        assert archived(demo_dir, cid)
        await pilot.press("ctrl+d")  # no question: restoring loses nothing
        await wait_until(pilot, lambda: not archived(demo_dir, cid), what="the restore")
        assert not isinstance(app.screen, ConfirmDismiss)
        await wait_until(
            pilot, lambda: any("Restored" in n for n in notifications(app)), what="the notice"
        )


async def test_purge_asks_and_only_the_purge_button_purges(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        # A session of the pool is not purged: shift+delete does nothing.
        await pilot.press("shift+delete")
        await settle(pilot)
        assert picker(app).is_current
        cid = await _highlight_archived(pilot, app)
        await pilot.press("shift+delete")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, ConfirmPurge)
        text = static_text(modal.query_one(Static))
        assert "Purge this archived session?" in text
        assert "transcript files are never deleted" in text
        await pilot.press("enter")  # on "Keep"
        await settle(pilot)
        assert picker(app).is_current
        assert stored(demo_dir, cid)
        await pilot.press("shift+delete")
        await settle(pilot)
        await pilot.press("ctrl+d", "y", "escape")  # no chord or letter purges
        await settle(pilot)
        assert stored(demo_dir, cid)
        await pilot.press("shift+delete")
        await settle(pilot)
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: not stored(demo_dir, cid), what="the purge")
        assert cid not in listed_ids(app)
