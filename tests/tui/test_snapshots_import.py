"""Snapshots of what the panel says about an import (in ``snapshots/test_snapshots_import/``):
f5's notice when it found nothing new, and when it found a new session, record types
of a later release and a damaged line (with the status line's note of the damage)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from import_notice_data import add_session_with_surprises, claude_home
from textual.pilot import Pilot
from tui_support import AppFactory, notifications, settle, wait_until

from tui.widgets.session_list import SessionList

SnapCompare = Callable[..., bool]
MEDIUM = (120, 36)


def _f5_after(sessions: int, before_f5: Callable[[], None] = lambda: None) -> Callable[..., object]:
    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(
            pilot, lambda: type(pilot.app.screen).__name__ == "SessionPickerScreen", what="picker"
        )
        listed = pilot.app.screen.query_one(SessionList)
        await wait_until(pilot, lambda: len(listed.sessions) == sessions, seconds=20)
        await settle(pilot)
        before_f5()
        await pilot.press("f5")
        await wait_until(
            pilot,
            lambda: any("Import:" in n for n in notifications(pilot.app)),  # type: ignore[arg-type]
            seconds=20,
            what="the f5 notice",
        )
        await settle(pilot)

    return run_before


def test_f5_found_nothing_new(
    snap_compare: SnapCompare, tmp_path: Path, make_app: AppFactory
) -> None:
    claude = claude_home(tmp_path)
    app = make_app(tmp_path / "data", import_sources=(claude, tmp_path / "codex"))
    assert snap_compare(app, terminal_size=MEDIUM, run_before=_f5_after(1))


def test_f5_found_a_session_unknown_types_and_damage(
    snap_compare: SnapCompare, tmp_path: Path, make_app: AppFactory
) -> None:
    claude = claude_home(tmp_path)
    app = make_app(tmp_path / "data", import_sources=(claude, tmp_path / "codex"))
    run_before = _f5_after(1, lambda: add_session_with_surprises(claude))
    assert snap_compare(app, terminal_size=MEDIUM, run_before=run_before)
