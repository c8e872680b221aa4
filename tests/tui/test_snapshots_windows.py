"""Snapshots of per-agent windows in the panel (in ``snapshots/test_snapshots_windows/``):
the purge question listing the sessions that depend on the one purged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from test_picker_windows import archive_with_sub_agent
from textual.pilot import Pilot
from tui_support import AppFactory, settle, wait_until

SnapCompare = Callable[..., bool]
MEDIUM = (120, 36)


def test_purge_modal_with_dependants(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    """shift+delete on an archived parent: its sub-agent is listed before the buttons."""

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(
            pilot, lambda: type(pilot.app.screen).__name__ == "SessionPickerScreen", what="picker"
        )
        await settle(pilot)
        await archive_with_sub_agent(pilot, "child-of-archived")
        await pilot.press("shift+delete")
        await wait_until(
            pilot, lambda: type(pilot.app.screen).__name__ == "ConfirmPurge", what="question"
        )
        await settle(pilot)

    assert snap_compare(make_app(demo_dir), terminal_size=MEDIUM, run_before=run_before)
