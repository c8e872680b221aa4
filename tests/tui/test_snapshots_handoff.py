"""Snapshots of what hand-offs did (in ``snapshots/test_snapshots_handoff/``): the history
cells of each outcome, the sessions whose work moved on (``handoff`` rows naming their
successor), and a hand-off continued with ctrl+k."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from handoff_outcome_data import outcome_events
from panel_context_data import NEWEST, insert_chain
from test_context_history import store_events
from test_handoff_continued_live import waiting_event, write_waiting_document
from textual.pilot import Pilot
from tui_support import (
    AppFactory,
    history_cells,
    notifications,
    settle,
    static_text,
    wait_until,
)

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


# ctrl+k starts a real session in the hand-off's folder: it must exist, and its path shows
# on screen, so it is the same on every run.
CONTINUED_REPO = Path("/tmp/delegate-snapshots/billing")


@pytest.fixture
def waiting_dir(data_dir: Path) -> Iterator[Path]:
    shutil.rmtree(CONTINUED_REPO.parent, ignore_errors=True)
    (CONTINUED_REPO / ".git").mkdir(parents=True)
    asyncio.run(insert_chain(data_dir, CONTINUED_REPO))
    write_waiting_document(data_dir, CONTINUED_REPO)
    asyncio.run(waiting_event(data_dir, CONTINUED_REPO))
    yield data_dir
    shutil.rmtree(CONTINUED_REPO.parent, ignore_errors=True)


def test_handoff_continued_with_ctrl_k(
    snap_compare: SnapCompare, waiting_dir: Path, make_app: AppFactory
) -> None:
    """After ctrl+k: no "waiting" header, the cell that said waiting says continued and
    names the successor, the old session is a ``handoff`` row pointing at it."""

    async def run_before(pilot: Pilot[None]) -> None:
        app = pilot.app
        await wait_until(
            pilot, lambda: type(app.screen).__name__ == "SessionPickerScreen", what="picker"
        )
        await wait_until(pilot, lambda: bool(history_cells(app)), what="the waiting cell")
        await settle(pilot)
        await pilot.press("ctrl+k")
        await wait_until(
            pilot,
            lambda: any("hand-off continued" in static_text(c) for c in history_cells(app)),
            seconds=20,
            what="continued",
        )
        app.screen.sessions.highlight(NEWEST)  # type: ignore[attr-defined]
        await wait_until(pilot, lambda: not notifications(app), seconds=10, what="toast gone")
        await settle(pilot)

    assert snap_compare(make_app(waiting_dir), terminal_size=(140, 36), run_before=run_before)
