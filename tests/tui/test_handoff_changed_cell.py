"""The history cell of a hand-off edited on disk (``handoff_changed``): the person sees
that the document was not given to the new session and how to review it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from panel_context_data import MIDDLE, NEWEST, insert_chain
from test_context_history import store_events
from textual.pilot import Pilot
from tui_support import FIXED_NOW, AppFactory, history_cells, settle, static_text, wait_until

from core.events import HandoffModified, HandoffWritten, HistoryEvent

SnapCompare = Callable[..., bool]
REPO = Path("/home/dev/src/billing")  # shown on screen: the same on every machine


def changed_events(repo: Path) -> list[HistoryEvent]:
    path = str(repo / ".delegate/handoffs/handoff-2026-11-21-205600.md\x1b[2J")
    return [
        HandoffWritten(
            at=FIXED_NOW - timedelta(minutes=3),
            conversation_id=MIDDLE,
            agent_id="echo",
            document_id="doc-edited",
            path=path,
            producer="agent",
            pending=True,
        ),
        HandoffModified(
            at=FIXED_NOW - timedelta(minutes=1),
            conversation_id=MIDDLE,
            document_id="doc-edited",
            path=path,
            consumer=NEWEST,
        ),
    ]


def _data(data_dir: Path) -> Path:
    asyncio.run(insert_chain(data_dir, REPO))
    asyncio.run(store_events(data_dir, changed_events(REPO)))
    return data_dir


async def _ready(pilot: Pilot[None]) -> None:
    await wait_until(
        pilot, lambda: type(pilot.app.screen).__name__ == "SessionPickerScreen", what="picker"
    )
    await wait_until(pilot, lambda: len(history_cells(pilot.app)) == 2, what="two cells")
    await settle(pilot)


async def test_the_changed_cell_says_it_was_not_injected(
    data_dir: Path, make_app: AppFactory
) -> None:
    await insert_chain(data_dir, REPO)
    await store_events(data_dir, changed_events(REPO))
    app = make_app(data_dir)
    async with app.run_test(size=(200, 40)) as pilot:
        await _ready(pilot)
        cell = static_text(history_cells(app)[-1], 200)
        assert "hand-off changed" in cell
        assert "edited since delegate wrote it: not injected" in cell
        assert "review it: delegate handoff show" in cell
        assert "\x1b" not in cell  # a file name is shown as text, never acted on


def test_handoff_changed_cell(
    snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory
) -> None:
    """A hand-off written, then edited on disk: not given to the new session."""
    assert snap_compare(make_app(_data(data_dir)), terminal_size=(140, 30), run_before=_ready)
