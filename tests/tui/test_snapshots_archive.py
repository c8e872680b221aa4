"""Snapshots of the archive (in ``snapshots/test_snapshots_archive/``): the archive
question, the row gone with the undo notice, the rename box, the purge question."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot
from tui_support import AppFactory, settle, type_text, wait_until

SnapCompare = Callable[..., bool]
MEDIUM = (120, 36)


async def _ready(pilot: Pilot[None]) -> None:
    await wait_until(
        pilot, lambda: type(pilot.app.screen).__name__ == "SessionPickerScreen", what="picker"
    )
    await settle(pilot)


def test_archive_modal(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """ctrl+d: the question names the session and says nothing is deleted; "Keep" focused."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+d")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)


def test_archived_with_undo(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    """ctrl+d twice: the row gone, the notice says ctrl+z brings it back."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+d", "ctrl+d")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)


def test_rename_box(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """ctrl+r: the session named in the heading, the name being typed, the keys under it."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        await type_text(pilot, "Release checklist")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)


def test_purge_modal(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """shift+delete on an archived session: the question, "Keep" focused, files kept."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        screen = pilot.app.screen
        orch = screen.orchestrator  # type: ignore[attr-defined]
        session = screen.sessions.highlighted_session  # type: ignore[attr-defined]
        archived = await orch.archive(session.conversation_id)
        screen.sessions.replace_session(archived)  # type: ignore[attr-defined]
        await settle(pilot)
        await pilot.press("shift+delete")
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)
