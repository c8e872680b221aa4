"""The open panel sees what other processes do, without a keypress (its embedded supervisor).

Real parts only: a second ``delegate`` process writing the store, a transcript
appended on disk under a temp Claude Code folder (the real watcher), the real
supervisor with its intervals shrunk through ``create_app(supervise=...)``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import uuid
from pathlib import Path

from tui_support import (
    DELEGATE,
    AppFactory,
    history_cells,
    insert_sessions,
    preview,
    session_list,
    session_with,
    started,
    status_panel,
    wait_until,
    widget_text,
)

from core.models import RunStatus, SessionState
from tui.live import Supervision

REALDATA = Path(__file__).resolve().parents[1] / "fixtures" / "realdata"
TRANSCRIPT = REALDATA / "claude" / "projects" / "-src-deep-manifest"
TRANSCRIPT_ID = "a7da6a22-facc-4fcd-8bab-f83c87862004"
QUICK = Supervision(store_poll_s=0.05, tick_s=0.2, debounce_ms=50, rescan_s=0.5)


async def delegate_cli(data_dir: Path, home: Path, *args: str) -> str:
    """Run the console script in a second process; its stdout."""
    process = await asyncio.create_subprocess_exec(
        DELEGATE,
        "--data-dir",
        str(data_dir),
        *args,
        env={**os.environ, "HOME": str(home)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return out.decode()


def titles(app: object) -> list[str]:
    return [s.title for s in session_list(app).sessions]  # type: ignore[arg-type]


async def test_a_session_launched_by_another_process_appears_without_a_keypress(
    data_dir: Path, make_app: AppFactory, tmp_path: Path
) -> None:
    older = session_with("old-1", ["an older prompt", "a reply"], title="older", minutes_ago=30)
    await insert_sessions(data_dir, [older])
    app = make_app(data_dir, supervise=QUICK)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        assert titles(app) == ["older"]
        await delegate_cli(data_dir, tmp_path, "run", "--agent", "failing", "Hello from afar")
        await wait_until(
            pilot, lambda: titles(app)[:1] == ["Hello from afar"], what="the new row on top"
        )
        row = session_list(app).sessions[0]
        assert row.state is SessionState.IDLE  # its run ended in the other process
        assert "older" in titles(app)
        # The other process's history cells arrive too, each once.
        await wait_until(pilot, lambda: len(history_cells(app)) == 2, what="its two cells")
        await wait_until(
            pilot, lambda: "2 reusable" in widget_text(app.screen, "#status"), what="the status"
        )


async def test_sessions_arriving_together_are_listed_newest_first_and_the_highlight_stays(
    data_dir: Path, make_app: AppFactory
) -> None:
    older = session_with("old-1", ["an older prompt", "a reply"], title="older", minutes_ago=30)
    await insert_sessions(data_dir, [older])
    app = make_app(data_dir, supervise=QUICK)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        assert titles(app) == ["older"]
        # One write of three sessions (as an import's batch commits them): one update.
        batch = [
            session_with(f"new-{n}", ["a prompt", "a reply"], title=f"new {n}", minutes_ago=n)
            for n in (3, 1, 2)
        ]
        await insert_sessions(data_dir, batch)
        await wait_until(pilot, lambda: len(titles(app)) == 4, what="the three new rows")
        assert titles(app) == ["new 1", "new 2", "new 3", "older"]
        highlighted = session_list(app).highlighted_session
        assert highlighted is not None
        assert highlighted.title == "older"


async def test_a_dismissal_in_another_process_removes_the_row(
    data_dir: Path, make_app: AppFactory, tmp_path: Path
) -> None:
    sessions = [
        session_with("keep-1", ["keep me", "ok"], title="keep", minutes_ago=3),
        session_with("gone-2", ["dismiss me", "ok"], title="gone", minutes_ago=5),
    ]
    await insert_sessions(data_dir, sessions)
    app = make_app(data_dir, supervise=QUICK)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        assert titles(app) == ["keep", "gone"]
        await delegate_cli(data_dir, tmp_path, "sessions", "dismiss", "gone-2")
        await wait_until(pilot, lambda: titles(app) == ["keep"], what="the row to go")


def _appended_turn(path: Path, extra_tokens: int) -> str:
    """A new assistant line after the transcript's last one, its context ``extra_tokens``
    larger (what Claude Code writes when the conversation goes on)."""
    last = next(
        json.loads(line)
        for line in reversed(path.read_text(encoding="utf-8").splitlines())
        if '"type":"assistant"' in line
    )
    last["parentUuid"], last["uuid"] = last["uuid"], str(uuid.uuid4())
    last["message"]["id"] = f"msg_{uuid.uuid4().hex}"
    last["message"]["content"] = [{"type": "text", "text": "And one more thing."}]
    last["message"]["usage"]["cache_read_input_tokens"] += extra_tokens
    return json.dumps(last) + "\n"


async def test_a_transcript_appended_on_disk_moves_the_rows_meter(
    data_dir: Path, make_app: AppFactory, tmp_path: Path
) -> None:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    project = claude / "projects" / TRANSCRIPT.name
    project.mkdir(parents=True)
    codex.mkdir()
    transcript = project / f"{TRANSCRIPT_ID}.jsonl"
    shutil.copy(TRANSCRIPT / transcript.name, transcript)
    app = make_app(data_dir, supervise=QUICK, import_sources=(claude, codex))
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_until(
            pilot,
            lambda: any(s.conversation_id == TRANSCRIPT_ID for s in session_list(app).sessions),
            seconds=20,
            what="the imported session",
        )
        before = session_list(app).sessions[0].context.used_tokens
        with transcript.open("a", encoding="utf-8") as file:
            file.write(_appended_turn(transcript, 40_000))
        await wait_until(
            pilot,
            lambda: session_list(app).sessions[0].context.used_tokens >= before + 40_000,
            seconds=10,
            what="the meter to move",
        )
        assert "And one more thing." in widget_text(preview(app), "#preview-messages")


async def test_the_status_says_when_transcripts_are_polled_instead_of_watched(
    data_dir: Path, make_app: AppFactory, tmp_path: Path
) -> None:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    (claude / "projects").mkdir(parents=True)
    (codex / "sessions").mkdir(parents=True)
    polling = Supervision(store_poll_s=0.05, tick_s=0.2, rescan_s=30, force_polling=True)
    app = make_app(data_dir, supervise=polling, import_sources=(claude, codex))
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_until(
            pilot,
            lambda: "watching: polling (polling is forced" in widget_text(app.screen, "#status"),
            what="the fallback notice",
        )
        assert "every 30 s" in widget_text(app.screen, "#status")
    watching = Supervision(store_poll_s=0.05, tick_s=0.2)
    app = make_app(data_dir, supervise=watching, import_sources=(claude, codex))
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_until(
            pilot,
            lambda: (
                app.supervisor is not None  # type: ignore[attr-defined]
                and app.supervisor.watch_status.transcripts == "watching"
            ),  # type: ignore[attr-defined]
            what="watching",
        )
        await pilot.pause(0.2)
        assert "watching" not in widget_text(app.screen, "#status")  # nothing loud
        assert status_panel(app).snapshot.note == ""


async def test_x_stops_a_run_another_process_owns(
    data_dir: Path, make_app: AppFactory, tmp_path: Path
) -> None:
    """A ``delegate run`` in another terminal: its run shows up running, x stops it, and
    the row says cancelled once that process has closed the run."""
    app = make_app(data_dir, supervise=QUICK)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        other = await asyncio.create_subprocess_exec(
            DELEGATE,
            "--data-dir",
            str(data_dir),
            "run",
            "--agent",
            "stalled",
            "Sweep the flaky tests",
            env={**os.environ, "HOME": str(tmp_path)},
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            await wait_until(
                pilot,
                lambda: [s.state for s in session_list(app).sessions] == [SessionState.RUNNING],
                seconds=20,
                what="the other process's run",
            )
            await wait_until(
                pilot,
                lambda: (
                    "Sweep the flaky tests" in widget_text(preview(app), "#preview-run")
                    or "running" in widget_text(preview(app), "#preview-run")
                ),
                what="the run in the preview",
            )
            await pilot.press("ctrl+x")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmStop")
            await pilot.press("ctrl+x")
            await wait_until(
                pilot,
                lambda: session_list(app).sessions[0].state is SessionState.IDLE,
                seconds=20,
                what="the row freed",
            )
            assert session_list(app).sessions[0].last_run_status is RunStatus.CANCELLED
            await wait_until(
                pilot, lambda: "■ cancelled" in widget_text(preview(app), "#preview-run")
            )
            assert await asyncio.wait_for(other.wait(), 20) is not None
        finally:
            if other.returncode is None:
                other.kill()
                await other.wait()
