"""Runs that say what they are doing: the prompt at once, elapsed time, quiet runs,
cancelled (not failed) with the reply so far, interrupted with the reason."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

from tui_support import (
    DELEGATE,
    FIXED_NOW,
    AppFactory,
    history_cells,
    insert_sessions,
    preview,
    session_list,
    session_with,
    settle,
    started,
    type_text,
    wait_for_row,
    wait_until,
    widget_text,
    write_config,
)

from core.models import RunStatus, SessionState
from tui.widgets.history import RunCancelledCell, RunFailedCell

CC_ID = "0c0c0c0c-0000-4000-8000-000000000001"

# A stand-in agent CLI that says nothing on stdout until its gate file exists; it writes
# to stderr once its speak file exists (at once when that is the gate's own folder).
SILENT_CLI = """#!{python}
import json, os, sys, time
while not os.path.exists({speak!r}):
    time.sleep(0.05)
sys.stderr.write("connecting to the model\\n"); sys.stderr.flush()
while not os.path.exists({gate!r}):
    time.sleep(0.05)
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False,
    "usage": {{"input_tokens": 5, "output_tokens": 2}}}}), flush=True)
"""


class MovingClock:
    """A clock the test moves forward (the app's only source of "now")."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def run_text(app: object) -> str:
    return widget_text(preview(app), "#preview-run")  # type: ignore[arg-type]


def silent_cli_data(tmp_path: Path, speak: Path | None = None) -> tuple[Path, Path]:
    gate = tmp_path / "let-it-answer"
    fake = tmp_path / "fake-claude"
    fake.write_text(
        SILENT_CLI.format(python=sys.executable, gate=str(gate), speak=str(speak or tmp_path))
    )
    fake.chmod(0o755)
    data = write_config(
        tmp_path / "data", f'[agents.cc]\nrunner = "claude_code"\nbinary = "{fake}"\n'
    )
    return data, gate


async def test_the_prompt_shows_at_once_and_a_quiet_run_its_elapsed_time(
    tmp_path: Path, make_app: AppFactory
) -> None:
    """An agent CLI writes its own transcript (read after the run): the prompt sent is
    echoed at once anyway, and the elapsed time ticks on the app's clock."""
    data, gate = silent_cli_data(tmp_path)
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    cc = session_with(CC_ID, ["plan", "ok"], title="plan", agent_id="cc", cwd=str(worktree))
    await insert_sessions(data, [cc])
    clock = MovingClock(FIXED_NOW)
    app = make_app(data, clock=clock, run_quiet_seconds=30)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await type_text(pilot, "Why does the build fail on arm64?")
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: "Why does the build fail on arm64?" in run_text(app),
            what="the prompt echoed",
        )
        assert "running 0s ·" in run_text(app)
        assert "no output" not in run_text(app)
        # Time passes with no output: the elapsed time ticks, then the quiet is named.
        clock.now = FIXED_NOW + timedelta(seconds=75)
        await wait_until(
            pilot, lambda: "running 1m 15s" in run_text(app), what="the elapsed time ticking"
        )
        assert "no output for 1m 15s" in run_text(app)
        # What the agent said on stderr (streamed as it came) is shown once quiet.
        await wait_until(
            pilot, lambda: "connecting to the model" in run_text(app), what="the stderr tail"
        )
        gate.touch()
        await wait_until(
            pilot,
            lambda: session_list(app).sessions[0].state is SessionState.IDLE,
            what="the run to end",
        )
        await wait_until(pilot, lambda: "running" not in run_text(app), what="the block gone")
        # No run on show: no timer ticks in an idle panel.
        assert preview(app)._ticker is None


async def test_stderr_is_not_output_a_late_line_shows_and_the_quiet_keeps_counting(
    tmp_path: Path, make_app: AppFactory
) -> None:
    """An agent that logs to stderr only after a long silence has still said nothing of its
    reply: the quiet goes on counting from the run's start and the line is shown."""
    speak = tmp_path / "say-something"
    data, gate = silent_cli_data(tmp_path, speak)
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    cc = session_with(CC_ID, ["plan", "ok"], title="plan", agent_id="cc", cwd=str(worktree))
    await insert_sessions(data, [cc])
    clock = MovingClock(FIXED_NOW)
    app = make_app(data, clock=clock, run_quiet_seconds=30)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await type_text(pilot, "Why does the build fail on arm64?")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "running 0s ·" in run_text(app), what="the run block")
        clock.now = FIXED_NOW + timedelta(seconds=75)
        await wait_until(
            pilot, lambda: "no output for 1m 15s" in run_text(app), what="the quiet named"
        )
        speak.touch()
        await wait_until(
            pilot,
            lambda: "connecting to the model" in run_text(app),
            seconds=20,
            what="the late stderr line",
        )
        assert "no output for 1m 15s" in run_text(app)
        gate.touch()
        await wait_until(
            pilot,
            lambda: session_list(app).sessions[0].state is SessionState.IDLE,
            seconds=20,
            what="the run to end",
        )


async def test_a_cancelled_run_says_cancelled_and_keeps_its_reply_so_far(
    data_dir: Path, make_app: AppFactory
) -> None:
    gated = session_with("gated-1", ["explain the build", "make"], title="held", agent_id="gated")
    await insert_sessions(data_dir, [gated])
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await type_text(pilot, "write the release notes")
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: "streaming" in widget_text(preview(app), "#preview-live"),
            what="the first streamed word",
        )
        partial = widget_text(preview(app), "#preview-live").split("\n", 1)[1].strip()
        assert partial
        await pilot.press("ctrl+x")
        await settle(pilot)
        await pilot.press("ctrl+x")
        await wait_until(
            pilot,
            lambda: session_list(app).sessions[0].last_run_status is RunStatus.CANCELLED,
            what="the row to know",
        )
        await wait_until(pilot, lambda: "■ cancelled" in run_text(app), what="cancelled label")
        header = widget_text(preview(app), "#preview-header")
        assert "last run cancelled" in header
        assert "failed" not in header
        assert partial in widget_text(preview(app), "#preview-messages")
        cells = history_cells(app)
        assert isinstance(cells[-1], RunCancelledCell)
        assert not any(isinstance(c, RunFailedCell) for c in cells)
        assert "cancelled" in str(cells[-1].render())


def killed_mid_run(data_dir: Path, home: Path) -> int:
    """Start ``delegate run`` with the stalled agent in a real process, kill -9 it once
    its run is stored; returns its pid."""
    runner = subprocess.Popen(
        [DELEGATE, "--data-dir", str(data_dir), "run", "--agent", "stalled", "Sweep the tests"],
        env={**os.environ, "HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_row(data_dir, "SELECT 1 FROM runs")
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    return runner.pid


async def test_an_interrupted_run_says_so_with_its_reason(
    data_dir: Path, make_app: AppFactory, tmp_path: Path
) -> None:
    """A ``delegate run`` killed mid-run: the panel opened afterwards names why it stopped."""
    pid = killed_mid_run(data_dir, tmp_path)
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: "⚠ interrupted" in run_text(app), what="the label")
        assert f"pid {pid}" in run_text(app)
        assert "last run interrupted" in widget_text(preview(app), "#preview-header")
