"""``enter`` opens a session where it lives; ``ctrl+y`` copies the command that does it.

A Claude Code session opens in ``claude --resume ID`` (the terminal handed over
through ``App.suspend``): ``App.run_test`` has no terminal to hand over, so here
the panel must say so and run nothing; the real hand-over is driven in tmux
(``test_reopen_tmux.py``). Everything before it is tested here: the command line
copied, a missing folder refused with another one offered, delegate's own
sessions opening into the conversation view.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from tui_support import AppFactory, notifications, screen_text, settle, type_text, wait_until

from tui.modals.other_folder import OtherFolder
from tui.screens.conversation import ConversationScreen
from tui.screens.session_picker import SessionPickerScreen
from tui.widgets.session_list import SessionList

SESSION_ID = "5e55a0a0-1111-4222-8333-944445555666"
RECORDER = """#!{python}
import json, os, sys
with open({record!r}, "w") as f:
    json.dump({{"argv": sys.argv[1:], "cwd": os.getcwd()}}, f)
"""


def claude_home(tmp_path: Path, cwd: Path) -> Path:
    """A Claude Code folder holding one session that was worked on in ``cwd``."""
    claude = tmp_path / "claude"
    project = claude / "projects" / str(cwd).replace("/", "-").replace(".", "-")
    project.mkdir(parents=True)
    envelope = {"sessionId": SESSION_ID, "cwd": str(cwd), "version": "2.1.328"}
    lines = [
        {
            **envelope,
            "type": "user",
            "uuid": "u1",
            "timestamp": "2026-11-21T20:00:00.000Z",
            "message": {"role": "user", "content": "fix the flaky login test"},
        },
        {
            **envelope,
            "type": "assistant",
            "uuid": "a1",
            "timestamp": "2026-11-21T20:00:05.000Z",
            "message": {
                "id": "msg1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Done: it waited on a timer."}],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        },
    ]
    (project / f"{SESSION_ID}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return claude


@pytest.fixture
def recorder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in ``claude`` first on PATH; returns the file it would record into."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "claude-ran.json"
    exe = bin_dir / "claude"
    exe.write_text(RECORDER.format(python=sys.executable, record=str(record)))
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ["PATH"]]))
    return record


async def imported(pilot, app) -> SessionPickerScreen:  # type: ignore[no-untyped-def]
    await wait_until(
        pilot,
        lambda: (
            isinstance(app.screen, SessionPickerScreen)
            and any(
                s.conversation_id == SESSION_ID for s in app.screen.query_one(SessionList).sessions
            )
        ),
        seconds=20,
        what="the imported session listed",
    )
    return app.screen  # type: ignore[no-any-return]


async def test_ctrl_y_copies_the_command_line(
    tmp_path: Path, make_app: AppFactory, recorder: Path
) -> None:
    project = tmp_path / "my project's folder"
    project.mkdir()
    app = make_app(tmp_path / "data", import_sources=(claude_home(tmp_path, project), tmp_path))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await imported(pilot, app)
        await pilot.press("ctrl+y")
        await settle(pilot)
        assert app.clipboard == f"cd {shlex.quote(str(project))} && claude --resume {SESSION_ID}"
        assert shlex.split(app.clipboard)[1] == str(project)
        assert not recorder.exists()


async def test_enter_without_a_terminal_to_hand_over_runs_nothing_and_says_so(
    tmp_path: Path, make_app: AppFactory, recorder: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    app = make_app(tmp_path / "data", import_sources=(claude_home(tmp_path, project), tmp_path))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await imported(pilot, app)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SessionPickerScreen)
        await wait_until(
            pilot, lambda: any("ctrl+y" in n for n in notifications(app)), what="the notice"
        )
        assert not recorder.exists()


async def test_a_missing_folder_is_refused_and_another_one_offered(
    tmp_path: Path, make_app: AppFactory, recorder: Path
) -> None:
    gone = tmp_path / "deleted-worktree"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    app = make_app(tmp_path / "data", import_sources=(claude_home(tmp_path, gone), tmp_path))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await imported(pilot, app)
        await pilot.press("enter")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, OtherFolder)
        assert str(gone) in screen_text(app)
        assert not recorder.exists()

        # A folder that is not there either is refused in the dialog, which stays.
        await pilot.press("ctrl+u")
        await type_text(pilot, str(tmp_path / "nowhere"))
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is dialog
        assert "is not a folder" in screen_text(app)

        await pilot.press("ctrl+u")
        await type_text(pilot, str(elsewhere))
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SessionPickerScreen)
        # No terminal to hand over here: the notice names the folder chosen.
        await wait_until(
            pilot, lambda: any(str(elsewhere) in n for n in notifications(app)), what="the notice"
        )
        assert not recorder.exists()


async def test_escape_in_the_folder_dialog_opens_nothing(
    tmp_path: Path, make_app: AppFactory, recorder: Path
) -> None:
    gone = tmp_path / "deleted-worktree"
    app = make_app(tmp_path / "data", import_sources=(claude_home(tmp_path, gone), tmp_path))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await imported(pilot, app)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, OtherFolder)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, SessionPickerScreen)
        assert not recorder.exists()


async def test_enter_on_delegate_own_session_opens_the_conversation_view(
    data_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPickerScreen))
        assert app.orchestrator is not None
        [handle] = await app.orchestrator.delegate("plan the release", agent_id="echo")
        await handle.wait()
        app.screen.query_one(SessionList).reload()
        await wait_until(pilot, lambda: bool(app.screen.query_one(SessionList).sessions))
        await pilot.press("enter")
        await settle(pilot)
        view = app.screen
        assert isinstance(view, ConversationScreen)
        await wait_until(pilot, lambda: "plan the release" in screen_text(app), what="history")

        # The follow-up box is there, focused; the reply streams into the view.
        await type_text(pilot, "and the changelog")
        await pilot.press("ctrl+s")
        await wait_until(
            pilot, lambda: "turn 2: and the changelog" in screen_text(app), what="the reply"
        )
        assert app.screen is view

        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, SessionPickerScreen)
