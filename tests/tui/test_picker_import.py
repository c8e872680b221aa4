"""The picker imports Claude Code and Codex sessions in the background (start, f5)."""

from __future__ import annotations

import json
from pathlib import Path

from tui_support import realdata_homes, screen_text, wait_until

from tui.widgets.session_list import SessionList
from tui.widgets.status_panel import StatusPanel

# What the realdata trees hold (see tests/sources/test_realdata.py).
CLAUDE_SESSIONS, CODEX_SESSIONS = 17, 5
# Of those 22: rows of their own, sub-agents folded under them, hidden warm-ups.
TOP_LEVEL, SUB_AGENTS, WARM_UPS = 11, 9, 2
assert TOP_LEVEL + SUB_AGENTS + WARM_UPS == CLAUDE_SESSIONS + CODEX_SESSIONS


async def test_import_at_start_lists_every_session(tmp_path: Path, make_app) -> None:  # type: ignore[no-untyped-def]
    claude, codex = realdata_homes(tmp_path)
    app = make_app(tmp_path / "data", import_sources=(claude, codex))
    async with app.run_test(size=(160, 48)) as pilot:
        listed = app.screen.query_one(SessionList)
        await wait_until(
            pilot,
            lambda: len(listed.sessions) == TOP_LEVEL,
            seconds=20,
            what="imported sessions listed",
        )
        sources = {s.source for s in listed.sessions}
        assert sources == {"claude-code", "codex"}
        # Every sub-agent is folded under its parent (warm-ups hidden), none is a row.
        assert not any(s.parent_id for s in listed.sessions)
        assert sum(s.child_count for s in listed.sessions) == SUB_AGENTS
        status = app.screen.query_one(StatusPanel).snapshot
        assert status.reusable == CLAUDE_SESSIONS + CODEX_SESSIONS
        assert "importing" not in status.note
        text = screen_text(app)
        assert "claude-code" in text
        assert "codex" in text


async def test_ctrl_r_picks_up_a_new_transcript(tmp_path: Path, make_app) -> None:  # type: ignore[no-untyped-def]
    claude, codex = realdata_homes(tmp_path)
    app = make_app(tmp_path / "data", import_sources=(claude, codex))
    async with app.run_test(size=(160, 48)) as pilot:
        listed = app.screen.query_one(SessionList)
        total = TOP_LEVEL
        await wait_until(pilot, lambda: len(listed.sessions) == total, seconds=20)
        project = claude / "projects" / "-tmp-new-project"
        project.mkdir()
        line = {
            "type": "user",
            "sessionId": "11111111-2222-4333-8444-555555555555",
            "uuid": "u1",
            "timestamp": "2026-11-21T20:59:00Z",
            "cwd": "/tmp/new-project",
            "message": {"role": "user", "content": "brand new session from disk"},
        }
        (project / "11111111-2222-4333-8444-555555555555.jsonl").write_text(json.dumps(line) + "\n")
        await pilot.press("f5")
        await wait_until(pilot, lambda: len(listed.sessions) == total + 1, seconds=20)
        assert listed.sessions[0].title == "brand new session from disk"


async def test_unreadable_files_are_named_in_the_status_panel(tmp_path: Path, make_app) -> None:  # type: ignore[no-untyped-def]
    claude, codex = realdata_homes(tmp_path)
    loop = claude / "projects" / "-loop" / "loop.jsonl"
    loop.parent.mkdir()
    loop.symlink_to(loop)  # a path that can never be read
    app = make_app(tmp_path / "data", import_sources=(claude, codex))
    async with app.run_test(size=(160, 48)) as pilot:
        panel = app.screen.query_one(StatusPanel)
        await wait_until(pilot, lambda: "unreadable" in panel.snapshot.note, seconds=20)
        assert "delegate import --report" in panel.snapshot.note


async def test_a_phrase_only_a_sub_agent_said_finds_it(tmp_path: Path, make_app) -> None:  # type: ignore[no-untyped-def]
    """Sub-agents fold under their parents in the list, but a search looks inside
    them too: a phrase from the middle of a sub-agent's reply lists that sub-agent."""
    claude, codex = realdata_homes(tmp_path)
    app = make_app(tmp_path / "data", import_sources=(claude, codex))
    async with app.run_test(size=(160, 48)) as pilot:
        listed = app.screen.query_one(SessionList)
        await wait_until(pilot, lambda: len(listed.sessions) == TOP_LEVEL, seconds=20)
        await pilot.press(*'"determines if input is directory"')
        await wait_until(
            pilot,
            lambda: [s.conversation_id for s in listed.sessions] == ["c8d9b115"],
            what="the sub-agent as a result",
        )
        assert listed.sessions[0].parent_id is not None
        assert "↳" in screen_text(app)  # marked as a sub-agent
