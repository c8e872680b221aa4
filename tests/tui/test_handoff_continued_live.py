"""ctrl+k continues the hand-off waiting for a person; every view that said it waits then
says it was continued, and by whom, without a refresh: the header line goes, the history
cell that said "waiting" says "continued in …", the old session's row is ``handoff``."""

from __future__ import annotations

import dataclasses
import os
import re
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from panel_context_data import HANDOFF_DOC, HANDOFFS, NEWEST
from test_context_handoff import header_text, repo  # noqa: F401  (the fixture)
from test_context_history import store_events
from tui_support import (
    FIXED_NOW,
    AppFactory,
    history_cells,
    notifications,
    session_list,
    session_with,
    started,
    static_text,
    wait_until,
)

from core.config import DB_FILENAME
from core.documents.handoff_template import HANDOFF_SECTIONS, HandoffHeader, render_handoff
from core.events import HandoffWritten
from core.models import SessionState
from core.store import Store
from tui.widgets.background_import import BackgroundImport


def write_waiting_document(data_dir: Path, repo: Path) -> None:  # noqa: F811
    """The file of NEWEST's waiting hand-off (``insert_chain`` registers it), written."""
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        (path,) = db.execute(
            "SELECT path FROM documents WHERE document_id = ?", (HANDOFF_DOC,)
        ).fetchone()
    header = HandoffHeader(
        created=datetime(2026, 11, 21, 20, 56),
        previous_instance=NEWEST,
        used_tokens=144_000,
        limit_tokens=200_000,
        project=str(repo),
    )
    sections = {name: f"{name}: see the billing module." for name in HANDOFF_SECTIONS}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(render_handoff(header, sections), encoding="utf-8")


async def waiting_event(data_dir: Path, repo: Path) -> None:  # noqa: F811
    """The history of NEWEST's hand-off, written for a person to continue."""
    path = str(repo / HANDOFFS / "handoff-2026-11-21-205600.md")
    await store_events(
        data_dir,
        [
            HandoffWritten(
                at=FIXED_NOW - timedelta(minutes=4),
                conversation_id=NEWEST,
                agent_id="echo",
                document_id=HANDOFF_DOC,
                path=path,
                producer="facts",
                pending=True,
            )
        ],
    )


async def test_ctrl_k_turns_the_waiting_cell_into_a_continued_one(
    data_dir: Path,
    repo: Path,  # noqa: F811
    make_app: AppFactory,
) -> None:
    await waiting_event(data_dir, repo)
    app = make_app(data_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: "hand-off waiting" in header_text(app), what="header")
        [cell] = history_cells(app)
        assert "waiting for you to continue it" in static_text(cell)
        await pilot.press("ctrl+k")
        await wait_until(
            pilot,
            lambda: "hand-off continued" in static_text(cell),
            seconds=20,
            what="the cell says continued",
        )
        old = await app.orchestrator.get_session(NEWEST)
        assert old.continued_in is not None
        text = static_text(cell)
        assert f"continued in {old.continued_in[:8]}" in text
        assert "waiting" not in text
        await wait_until(pilot, lambda: "hand-off waiting" not in header_text(app), what="gone")
        # enter on the cell opens the session the work continues in.
        cell.focus()
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: (
                (s := session_list(app).highlighted_session) is not None
                and s.conversation_id == old.continued_in
            ),
            what="the successor highlighted",
        )
        assert old.state is SessionState.HANDED_OFF


async def test_a_hand_off_continued_before_the_panel_opened_never_shows_waiting(
    data_dir: Path,
    repo: Path,  # noqa: F811
    make_app: AppFactory,
) -> None:
    """The history read at start holds both events: the cell says continued at once."""
    await waiting_event(data_dir, repo)
    app = make_app(data_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+k")
        await wait_until(
            pilot, lambda: len(history_cells(app)) >= 4, seconds=20, what="the continuation"
        )
    app = make_app(data_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(history_cells(app)) >= 4, what="history")
        [cell] = [c for c in history_cells(app) if static_text(c).startswith("⇢")]
        assert "hand-off continued" in static_text(cell)
        assert "waiting" not in static_text(cell)


async def test_a_claude_code_session_opened_with_ctrl_k_is_linked_once_imported(
    data_dir: Path,
    repo: Path,  # noqa: F811
    tmp_path: Path,
    make_app: AppFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ctrl+k opens Claude Code with an id delegate chose; once an import stores that
    session it is the hand-off's continuation: the waiting line goes, the old session is
    ``handoff`` — with or without the hooks."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ["PATH"]]))
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        db.execute(
            "UPDATE sessions SET source = 'claude-code', agent_id = 'claude-code'"
            " WHERE conversation_id = ?",
            (NEWEST,),
        )
    app = make_app(data_dir)
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        screen = await started(pilot)
        await wait_until(pilot, lambda: "hand-off waiting" in header_text(app), what="header")
        await pilot.press("ctrl+k")
        await wait_until(
            pilot, lambda: any("--session-id" in n for n in notifications(app)), what="notice"
        )
        notice = next(n for n in notifications(app) if "--session-id" in n)
        new = re.search(r"--session-id ([0-9a-f-]{36})", notice)
        assert new is not None
        successor = new.group(1)
        # The person worked in it; an import stores it.
        store = await Store.open(data_dir / DB_FILENAME)
        try:
            base = session_with(
                successor, ["Read the hand-off document", "on it"], title="Read the hand-off"
            )
            session = dataclasses.replace(
                base.session, cwd=str(repo), source="claude-code", agent_id="claude-code"
            )
            await store.bulk.insert([dataclasses.replace(base, session=session)])
        finally:
            await store.close()
        screen.background_import.post_message(BackgroundImport.Progressed("", True, final=True))
        await wait_until(
            pilot, lambda: "hand-off waiting" not in header_text(app), seconds=10, what="gone"
        )
        old = await app.orchestrator.get_session(NEWEST)
        assert old.continued_in == successor
        assert old.state is SessionState.HANDED_OFF
