"""f5 re-imports, and says that it ran and what it found, also when that is nothing."""

from __future__ import annotations

from pathlib import Path

from import_notice_data import add_session_with_surprises, claude_home
from textual.pilot import Pilot
from textual.worker import WorkerState
from tui_support import notifications, wait_until

from tui.widgets.session_list import SessionList
from tui.widgets.status_panel import StatusPanel


async def _imported(pilot: Pilot[None], sessions: int) -> None:
    listed = pilot.app.screen.query_one(SessionList)
    await wait_until(
        pilot, lambda: len(listed.sessions) == sessions, seconds=20, what="imported sessions"
    )
    await wait_until(pilot, lambda: not _busy(pilot), seconds=20, what="the import done")


def _busy(pilot: Pilot[None]) -> bool:
    return any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in pilot.app.workers)


async def test_f5_says_the_import_ran_when_it_found_nothing(tmp_path: Path, make_app) -> None:  # type: ignore[no-untyped-def]
    claude = claude_home(tmp_path)
    app = make_app(tmp_path / "data", import_sources=(claude, tmp_path / "codex"))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await _imported(pilot, 1)
        assert not any("Import" in n for n in notifications(app))  # the start's is quiet

        await pilot.press("f5")

        await wait_until(
            pilot,
            lambda: any("Import: nothing new, 1 file checked" in n for n in notifications(app)),
            seconds=20,
            what="the f5 notice",
        )


async def test_f5_says_new_sessions_unknown_types_and_damage(tmp_path: Path, make_app) -> None:  # type: ignore[no-untyped-def]
    claude = claude_home(tmp_path)
    app = make_app(tmp_path / "data", import_sources=(claude, tmp_path / "codex"))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await _imported(pilot, 1)
        add_session_with_surprises(claude)

        await pilot.press("f5")

        await wait_until(
            pilot,
            lambda: any("Import: 1 new session" in n for n in notifications(app)),
            seconds=20,
            what="the f5 notice",
        )
        [notice] = [n for n in notifications(app) if "Import:" in n]
        assert "1 new session · 1 of 2 files read" in notice
        assert "3 records of unknown type hologram from Claude Code 2.1.400" in notice
        assert "1 damaged line skipped" in notice
        # The status line keeps the damage (not the unknown type) until it is gone.
        note = app.screen.query_one(StatusPanel).snapshot.note
        assert note == "1 file has skipped lines — see `delegate import --report`"


async def test_an_unknown_type_alone_is_named_in_the_status_not_as_skipped_lines(
    tmp_path: Path,
    make_app,  # type: ignore[no-untyped-def]
) -> None:
    claude = claude_home(tmp_path)
    add_session_with_surprises(claude)
    broken = next(claude.rglob("*002.jsonl"))
    broken.write_text(broken.read_text().rsplit("\n", 2)[0] + "\n")  # no damaged line
    app = make_app(tmp_path / "data", import_sources=(claude, tmp_path / "codex"))
    async with app.run_test(size=(120, 36)) as pilot:
        await _imported(pilot, 2)
        note = app.screen.query_one(StatusPanel).snapshot.note
        assert "skipped lines" not in note
        assert note.startswith("3 records of unknown type `hologram` from Claude Code 2.1.400")
