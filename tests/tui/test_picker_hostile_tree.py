"""The panel starts and lists the good sessions of a hostile tree (names, FIFOs, loops)."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from hostile_trees import build_hostile_tree, claude_lines, jsonl
from tui_support import wait_until

from tui.app import create_app
from tui.widgets.session_list import SessionList
from tui.widgets.status_panel import StatusPanel

REALDATA = Path(__file__).resolve().parents[1] / "fixtures" / "realdata"
REALDATA_ROWS = 11  # the others are sub-agents, folded under their parents


async def test_a_name_that_is_not_utf8_does_not_stop_the_panel(tmp_path: Path) -> None:
    """``bad\\xff\\xfe.jsonl`` crashed the panel at start (none of the 22 sessions listed)."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    shutil.copytree(REALDATA / "claude", claude)
    shutil.copytree(REALDATA / "codex", codex)
    for path in [*claude.rglob("*"), *codex.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    bad = os.fsencode(claude / "projects" / "-experiments-ideas") + b"/bad\xff\xfe.jsonl"
    fd = os.open(bad, os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, jsonl(claude_lines("11111111-2222-4333-8444-555555555555", "never listed")))
    os.close(fd)

    app = create_app(tmp_path / "data", import_sources=(claude, codex))
    async with app.run_test(size=(160, 48)) as pilot:
        listed = app.screen.query_one(SessionList)
        await wait_until(
            pilot,
            lambda: len(listed.sessions) == REALDATA_ROWS,
            seconds=20,
            what="the good sessions listed",
        )
        status = app.screen.query_one(StatusPanel)
        await wait_until(pilot, lambda: "import" in status.snapshot.note, seconds=20)
        assert "1 odd entry skipped" in status.snapshot.note


async def test_the_panel_lists_a_hostile_tree_and_quits(tmp_path: Path) -> None:
    """FIFOs, device links and loops: the import ends, the panel lists and quits."""
    tree = build_hostile_tree(
        tmp_path / "hostile", only={"fifo_transcript", "fifo_meta", "dev_zero_link", "dir_loops"}
    )
    app = create_app(tmp_path / "data", import_sources=(tree.claude, tree.codex))

    async def run() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            listed = app.screen.query_one(SessionList)
            await wait_until(
                pilot,
                lambda: {s.conversation_id for s in listed.sessions} == set(tree.good),
                seconds=20,
                what="the good sessions listed",
            )
            await pilot.press("ctrl+q")

    await asyncio.wait_for(run(), timeout=60)
