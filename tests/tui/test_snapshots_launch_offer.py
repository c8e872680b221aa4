"""Snapshot of the launch form offering a capsule (in ``snapshots/test_snapshots_launch_offer/``):
ctrl+n on a session with context worth carrying, launched as its sub-agent with no capsule."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Select, Static
from tui_support import (
    AppFactory,
    insert_sessions,
    session_with,
    settle,
    type_text,
    wait_until,
)

SnapCompare = Callable[..., bool]
PARENT = "1a2b3c4d-0000-4000-8000-000000000001"


def test_launch_form_offers_a_capsule_for_a_sub_agent(
    snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory
) -> None:
    turns = [f"step {i}: what the plan settled" if i % 2 == 0 else "done" for i in range(8)]
    asyncio.run(
        insert_sessions(data_dir, [session_with(PARENT, turns, title="Plan the invoice export")])
    )

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(
            pilot, lambda: type(pilot.app.screen).__name__ == "SessionPickerScreen", what="panel"
        )
        await settle(pilot)
        await pilot.press("ctrl+n")
        await wait_until(
            pilot, lambda: type(pilot.app.screen).__name__ == "NewDelegate", what="the form"
        )
        await type_text(pilot, "Write the export's tests")
        pilot.app.screen.query_one("#launch-parent", Select).value = PARENT
        await wait_until(
            pilot,
            lambda: (
                "holds 4 turns"
                in str(pilot.app.screen.query_one("#launch-capsule-note", Static).render())
            ),
            what="the offer",
        )
        await settle(pilot)

    assert snap_compare(make_app(data_dir), terminal_size=(120, 44), run_before=run_before)
