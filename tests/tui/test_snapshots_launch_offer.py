"""Snapshots of what a launch carries (in ``snapshots/test_snapshots_launch_offer/``): the
launch form offering a capsule (ctrl+n on a session with context worth carrying, launched as
its sub-agent with no capsule), and a capsule stored as context shown in the preview."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Select, Static
from tui_support import (
    AppFactory,
    insert_sessions,
    screen_text,
    session_with,
    settle,
    type_text,
    wait_until,
)

from core.models import MessageCategory, Role
from core.store import NewMessage

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


def test_preview_labels_the_capsule_a_launch_carried_as_context(
    snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory
) -> None:
    session = session_with(PARENT, ["Teach the app to print v2", "done: v2 printed"], title="v2")
    prompt, reply = session.messages
    carried = NewMessage(
        f"{PARENT}/capsule",
        Role.USER,
        "## Context Capsule\n\n# Mission Snapshot\n- **User intent:** the app prints v2.",
        prompt.created_us + 1,
        20,
        run_id=None,
        category=MessageCategory.CONTEXT,
    )
    session = dataclasses.replace(session, messages=[prompt, carried, reply])
    asyncio.run(insert_sessions(data_dir, [session]))

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(
            pilot, lambda: type(pilot.app.screen).__name__ == "SessionPickerScreen", what="panel"
        )
        await wait_until(
            pilot, lambda: "user · context" in screen_text(pilot.app), what="the capsule shown"
        )
        await settle(pilot)

    assert snap_compare(make_app(data_dir), terminal_size=(120, 30), run_before=run_before)
