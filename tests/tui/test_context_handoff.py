"""A hand-off waiting for a person shows in the header, and one key continues it: in the
agent's own CLI (interactively, the hand-off as its first prompt) or, for delegate's own
agents, in a new linked session."""

from __future__ import annotations

import os
import sqlite3
import sys
from datetime import datetime
from pathlib import Path

import pytest
from panel_context_data import HANDOFF_DOC, HANDOFFS, NEWEST, insert_at, insert_chain
from tui_support import (
    AppFactory,
    history_cells,
    notifications,
    session_list,
    settle,
    started,
    static_text,
    status_panel,
    wait_until,
)

from core.config import DB_FILENAME
from core.continuation.service import Continuation
from core.documents.handoff_template import HANDOFF_SECTIONS, HandoffHeader, render_handoff
from core.models import DocumentStatus

STAND_IN = """#!{python}
import sys
open({record!r}, "w").write(repr(sys.argv))
"""


@pytest.fixture
async def repo(data_dir: Path, tmp_path: Path) -> Path:
    """A repository whose session NEWEST left a hand-off waiting (the file is real)."""
    repo = tmp_path / "billing"
    (repo / ".git").mkdir(parents=True)
    await insert_chain(data_dir, repo)
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
    return repo


def header_text(app) -> str:  # type: ignore[no-untyped-def]
    from tui_support import rendered_text

    return rendered_text(status_panel(app).render(), 200)


async def test_the_header_says_a_hand_off_is_waiting_and_the_key_that_continues_it(
    data_dir: Path, repo: Path, make_app: AppFactory
) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: "hand-off waiting" in header_text(app), what="header")
        text = header_text(app)
        assert "Refactor the billing module" in text
        assert "ctrl+k continues it" in text


async def test_no_header_line_without_a_waiting_hand_off(
    data_dir: Path, repo: Path, make_app: AppFactory
) -> None:
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        db.execute("UPDATE documents SET status = 'consumed'")
    app = make_app(data_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        assert "hand-off" not in header_text(app)
        await pilot.press("ctrl+k")
        await settle(pilot)
        assert any("No hand-off is waiting" in n for n in notifications(app))


async def test_the_key_continues_our_own_session_in_a_new_linked_one(
    data_dir: Path, repo: Path, make_app: AppFactory
) -> None:
    """The echo agent has no CLI to open: the work continues in a new delegate session,
    linked to the one that handed off, and the header line goes."""
    app = make_app(data_dir)
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: "hand-off waiting" in header_text(app), what="header")
        await pilot.press("ctrl+k")
        await wait_until(
            pilot,
            lambda: (
                (s := session_list(app).highlighted_session) is not None
                and s.continued_from == NEWEST
            ),
            seconds=20,
            what="the successor highlighted",
        )
        await wait_until(pilot, lambda: "hand-off waiting" not in header_text(app), what="gone")
        document = await app.orchestrator.store.documents.get(HANDOFF_DOC)
        assert document.status is DocumentStatus.CONSUMED


async def test_the_key_opens_a_claude_code_session_interactively_on_the_hand_off(
    data_dir: Path,
    repo: Path,
    tmp_path: Path,
    make_app: AppFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A session a person runs in Claude Code: its CLI, in the repository, with the hand-off
    as the first prompt. Without a terminal to hand over (a test) the panel says what it
    would run instead."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text(STAND_IN.format(python=sys.executable, record=str(tmp_path / "ran")))
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
        await started(pilot)
        await wait_until(pilot, lambda: "hand-off waiting" in header_text(app), what="header")
        await pilot.press("ctrl+k")
        await wait_until(
            pilot, lambda: any("no terminal" in n for n in notifications(app)), what="notice"
        )
        notice = next(n for n in notifications(app) if "no terminal" in n)
        assert f"cd {repo} && claude" in notice
        assert str(repo / HANDOFFS) in notice
        assert not (tmp_path / "ran").exists()


async def test_a_hand_off_written_while_the_panel_is_open_appears_in_the_header(
    data_dir: Path, tmp_path: Path, make_app: AppFactory
) -> None:
    """A Claude Code session hands off (not ours to continue): the document is left for a
    person, its cell arrives and the header says it waits, without a refresh."""
    project = tmp_path / "project"
    project.mkdir()
    cid = "0000b0b0-0000-4000-8000-00000000b0b0"
    await insert_at(data_dir, {cid: 150_000}, cwd=str(project))
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        db.execute("UPDATE sessions SET source = 'claude-code' WHERE conversation_id = ?", (cid,))
    app = make_app(data_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(pilot)
        assert "hand-off" not in header_text(app)
        outcome = await Continuation(app.orchestrator).hand_off(cid)
        assert outcome.pending, outcome
        await wait_until(pilot, lambda: "hand-off waiting" in header_text(app), what="header")
        assert cid[:8] in header_text(app)
        cells = [static_text(c) for c in history_cells(app)]
        assert any("hand-off waiting" in c and "from facts" in c for c in cells), cells
