"""Snapshots of the panel's context states (in ``snapshots/test_snapshots_context/``):
the history cells of the context events, a hand-off waiting in the header, a session's
context details in the transcript view, a clamped sub-agent's."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from panel_context_data import CLAMPED, MIDDLE, NEWEST, insert_chain
from test_context_history import context_events, store_events
from textual.pilot import Pilot
from tui_support import AppFactory, history_cells, settle, wait_until

SnapCompare = Callable[..., bool]
TALL = (160, 64)


# The sessions' folder shows on screen: the same on every machine (it need not exist).
REPO = Path("/home/dev/src/billing")


@pytest.fixture
def chain_dir(data_dir: Path) -> Path:
    asyncio.run(insert_chain(data_dir, REPO))
    return data_dir


async def _ready(pilot: Pilot[None]) -> None:
    await wait_until(
        pilot, lambda: type(pilot.app.screen).__name__ == "SessionPickerScreen", what="picker"
    )
    await settle(pilot)


def test_context_history_cells(
    snap_compare: SnapCompare, chain_dir: Path, make_app: AppFactory
) -> None:
    """Thresholds crossed, a child clamped, a hand-off failed, written and waiting, the
    session continued, a checkpoint marked, forked from and restored to."""
    asyncio.run(store_events(chain_dir, context_events(REPO)))

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await wait_until(pilot, lambda: len(history_cells(pilot.app)) == 12, what="cells")
        await settle(pilot)

    # Tall enough for every cell without scrolling: where a scrolled timeline rests
    # while the header above it grows is a matter of frame timing, not of the cells.
    assert snap_compare(make_app(chain_dir), terminal_size=(160, 84), run_before=run_before)


def test_handoff_waiting_in_the_header(
    snap_compare: SnapCompare, chain_dir: Path, make_app: AppFactory
) -> None:
    """The header names the session whose hand-off waits, and the key that continues it;
    the list shows the chain's sessions and the clamped sub-agent's parent."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        await wait_until(
            pilot,
            lambda: bool(pilot.app.screen.status.snapshot.waiting),  # type: ignore[attr-defined]
            what="the waiting hand-off",
        )
        await settle(pilot)

    assert snap_compare(make_app(chain_dir), terminal_size=(120, 30), run_before=run_before)


def _transcript_of(conversation_id: str, *, unfold: bool = False) -> Callable[[Pilot[None]], Any]:
    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        listed = pilot.app.screen.sessions  # type: ignore[attr-defined]
        if unfold:
            listed.highlight(NEWEST)
            await pilot.press("ctrl+e")
            await wait_until(pilot, lambda: listed.index_of(conversation_id) is not None)
        listed.highlight(conversation_id)
        await settle(pilot)
        await pilot.press("ctrl+t")
        await wait_until(
            pilot, lambda: type(pilot.app.screen).__name__ == "TranscriptScreen", what="view"
        )
        await settle(pilot)

    return run_before


def test_context_details_in_the_transcript_view(
    snap_compare: SnapCompare, chain_dir: Path, make_app: AppFactory
) -> None:
    """ctrl+t: the window and its source, the trend with turns left, the breakdown, the
    levels crossed, checkpoints, the chain of three and the hand-off waiting."""
    run_before = _transcript_of(NEWEST)
    assert snap_compare(make_app(chain_dir), terminal_size=TALL, run_before=run_before)


def test_clamped_sub_agent_details(
    snap_compare: SnapCompare, chain_dir: Path, make_app: AppFactory
) -> None:
    """A sub-agent clamped below its parent's window says so; no turns measured yet."""
    run_before = _transcript_of(CLAMPED, unfold=True)
    assert snap_compare(make_app(chain_dir), terminal_size=(120, 30), run_before=run_before)


def test_preview_header_with_rate_and_chain(
    snap_compare: SnapCompare, chain_dir: Path, make_app: AppFactory
) -> None:
    """The preview header: the window's source, the rate, turns left, the session continued."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        pilot.app.screen.sessions.highlight(MIDDLE)  # type: ignore[attr-defined]
        await settle(pilot)

    assert snap_compare(make_app(chain_dir), terminal_size=(120, 30), run_before=run_before)
