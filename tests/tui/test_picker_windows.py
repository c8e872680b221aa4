"""The panel's purge question lists the sessions that depend on the one purged
(guarded delete, seed 004), and purging after it takes the sub-agents along."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import Any

from textual.widgets import Static
from tui_support import (
    AppFactory,
    picker,
    session_list,
    session_with,
    settle,
    started,
    static_text,
    wait_until,
)

from core.config import DB_FILENAME
from tui.modals.confirm_dismiss import ConfirmPurge


def stored(data_dir: Path, conversation_id: str) -> bool:
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        row = db.execute(
            "SELECT 1 FROM sessions WHERE conversation_id = ?", (conversation_id,)
        ).fetchone()
    return row is not None


async def archive_with_sub_agent(pilot: Any, child_id: str) -> str:
    """Give the highlighted session a sub-agent launched through delegate, archive it."""
    screen = picker(pilot.app)
    parent = session_list(pilot.app).highlighted_session
    assert parent is not None
    child = session_with(child_id, ["write the docs", "done"], title="write the docs")
    child = dataclasses.replace(
        child, session=dataclasses.replace(child.session, parent_id=parent.conversation_id)
    )
    await screen.orchestrator.store.bulk.insert([child])
    archived = await screen.orchestrator.archive(parent.conversation_id)
    session_list(pilot.app).replace_session(archived)
    screen.refresh_bindings()
    await settle(pilot)
    return parent.conversation_id


async def test_the_purge_question_lists_dependants_and_purge_takes_them(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir, undo_seconds=60.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        parent = await archive_with_sub_agent(pilot, "child-of-archived")
        await pilot.press("shift+delete")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmPurge), what="question")
        text = static_text(app.screen.query_one(Static))
        assert "1 other session(s) depend on it" in text
        assert "child-of" in text
        assert "write the docs" in text
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: not stored(demo_dir, parent), what="the purge")
        assert not stored(demo_dir, "child-of-archived")


async def test_a_session_nothing_depends_on_is_asked_as_before(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir, undo_seconds=60.0)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        screen = picker(app)
        session = session_list(app).highlighted_session
        assert session is not None
        archived = await screen.orchestrator.archive(session.conversation_id)
        session_list(app).replace_session(archived)
        screen.refresh_bindings()
        await settle(pilot)
        await pilot.press("shift+delete")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmPurge), what="question")
        assert "depend on it" not in static_text(app.screen.query_one(Static))
