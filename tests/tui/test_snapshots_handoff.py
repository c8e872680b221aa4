"""Snapshots of what hand-offs did (in ``snapshots/test_snapshots_handoff/``): the history
cells of each outcome, the sessions whose work moved on (``handoff`` rows naming their
successor), and a hand-off continued with ctrl+k."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from handoff_outcome_data import outcome_events
from panel_context_data import insert_chain
from test_context_history import store_events
from textual.pilot import Pilot
from tui_support import AppFactory, history_cells, settle, wait_until

SnapCompare = Callable[..., bool]

# The sessions' folder shows on screen: the same on every machine (it need not exist).
REPO = Path("/home/dev/src/billing")


@pytest.fixture
def outcome_dir(data_dir: Path) -> Path:
    asyncio.run(insert_chain(data_dir, REPO))
    asyncio.run(store_events(data_dir, outcome_events(REPO)))
    return data_dir


def test_handoff_outcome_cells_and_handed_off_rows(
    snap_compare: SnapCompare, outcome_dir: Path, make_app: AppFactory
) -> None:
    """Continued, waiting, written but not continued, not written; the chain's older
    sessions are ``handoff`` rows naming the session their work continues in."""

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(
            pilot, lambda: type(pilot.app.screen).__name__ == "SessionPickerScreen", what="picker"
        )
        await wait_until(pilot, lambda: len(history_cells(pilot.app)) == 4, what="cells")
        await settle(pilot)

    assert snap_compare(make_app(outcome_dir), terminal_size=(140, 36), run_before=run_before)
