"""A real Claude Code turn with delegate's hooks installed is not held up by another
delegate process: while a real process holds the import lock (another import running),
the turn takes about as long as a free one, and the hook says why it deferred."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

import pytest
from agent_clis import Agents, find_cli
from hook_world import hold_import_lock
from test_hooks_real import claude

from core.hooks.entry import HOOK_BUDGET_S
from tui.cli import main

pytestmark = pytest.mark.e2e

SLACK_S = 15.0
"""What a loaded machine may add to a turn (before: the Stop hook waited for the lock,
until Claude Code gave up on it after 60 s)."""


async def test_a_turn_is_not_held_by_another_import(
    agents: Agents, capsys: pytest.CaptureFixture[str]
) -> None:
    find_cli("claude")
    git = ["git", "init", "-q", str(agents.workdir)]
    await asyncio.to_thread(subprocess.run, git, check=True)
    data_dir = agents.orch.store.path.parent
    install = ["--data-dir", str(data_dir), "hooks", "install", "claude-code"]
    assert await asyncio.to_thread(main, install) == 0
    capsys.readouterr()

    started = time.monotonic()
    first = await asyncio.to_thread(claude, agents, "start on the pong module")
    free = time.monotonic() - started
    sid = str(first["session_id"])

    with hold_import_lock(data_dir, os.environ):
        started = time.monotonic()
        await asyncio.to_thread(claude, agents, "--resume", sid, "carry on")
        took = time.monotonic() - started
    assert took < free + HOOK_BUDGET_S + SLACK_S, f"{took:.1f} s (a free turn: {free:.1f} s)"
    log = (data_dir / "hooks.log").read_text()
    assert "import lock" in log
    assert sid in (data_dir / "hook-queue.jsonl").read_text()
