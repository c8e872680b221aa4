"""Snapshots of opening a session (in ``snapshots/test_snapshots_reopen/``): the dialog
that offers another folder when the session's is gone, and delegate's own
conversation view with a follow-up streamed in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from tui_support import AppFactory, settle, type_text, wait_until

from tui.modals.cli_exited import CliExited
from tui.widgets.session_list import SessionList

SnapCompare = Callable[..., bool]
MEDIUM = (120, 36)
SESSION_ID = "5e55a0a0-1111-4222-8333-944445555666"
# A folder no machine has: the transcript says the session was worked on there.
GONE = "/nonexistent/worktrees/login-fix"


def claude_home(tmp_path: Path) -> Path:
    claude = tmp_path / "claude"
    project = claude / "projects" / "-nonexistent-worktrees-login-fix"
    project.mkdir(parents=True)
    line = {
        "sessionId": SESSION_ID,
        "cwd": GONE,
        "type": "user",
        "uuid": "u1",
        "timestamp": "2026-11-21T20:00:00.000Z",
        "message": {"role": "user", "content": "fix the flaky login test"},
    }
    (project / f"{SESSION_ID}.jsonl").write_text(json.dumps(line) + "\n")
    return claude


async def _listed(pilot: Pilot[None]) -> SessionList:
    await wait_until(
        pilot,
        lambda: (
            type(pilot.app.screen).__name__ == "SessionPickerScreen"
            and bool(pilot.app.screen.query_one(SessionList).sessions)
        ),
        seconds=20,
        what="a session listed",
    )
    return pilot.app.screen.query_one(SessionList)


def test_other_folder_dialog(
    snap_compare: SnapCompare, tmp_path: Path, make_app: AppFactory
) -> None:
    """enter on a session whose folder is gone: nothing ran, another folder is offered."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _listed(pilot)
        await pilot.press("enter")
        await settle(pilot)

    app = make_app(tmp_path / "data", import_sources=(claude_home(tmp_path), tmp_path))
    assert snap_compare(app, terminal_size=MEDIUM, run_before=run_before)


def test_conversation_view(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """enter on delegate's own session: full screen, a follow-up sent and its reply in."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _listed(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await type_text(pilot, "and the changelog")
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: not pilot.app.orchestrator.running(),  # type: ignore[attr-defined]
            what="the run",
        )
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)


@pytest.mark.parametrize("size", [MEDIUM, (80, 24)], ids=["medium", "80x24"])
def test_cli_exited_with_its_own_words(
    snap_compare: SnapCompare, tmp_path: Path, make_app: AppFactory, size: tuple[int, int]
) -> None:
    """Back from a CLI that exited 1: its last words, redacted, until esc. (``App.run_test``
    cannot hand the terminal over: the dialog is opened as the panel opens it then.)"""

    async def run_before(pilot: Pilot[None]) -> None:
        await _listed(pilot)
        said = (
            f"No conversation found with session ID: {SESSION_ID}\n"
            "hint: ANTHROPIC_API_KEY=[REDACTED] was rejected"
        )
        command = f"cd /home/dev/src/app && claude --resume {SESSION_ID}"
        await pilot.app.push_screen(CliExited("claude", 1, said, command))
        await settle(pilot)

    app = make_app(tmp_path / "data", import_sources=(claude_home(tmp_path), tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=run_before)
