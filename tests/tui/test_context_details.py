"""A session's context details: the window (limit, clamp, where it came from), the trend,
turns left, the breakdown by category, thresholds crossed, checkpoints and the hand-off
chain, in the transcript view (ctrl+t); the essentials in the preview header."""

from __future__ import annotations

from pathlib import Path

import pytest
from panel_context_data import CLAMPED, FIRST, MIDDLE, NEWEST, insert_chain
from tui_support import AppFactory, preview, session_list, started, static_text, wait_until

from tui.screens.transcript import TranscriptScreen


@pytest.fixture
async def chain_dir(data_dir: Path, tmp_path: Path) -> Path:
    await insert_chain(data_dir, tmp_path / "billing")
    return data_dir


async def _details(app, pilot, cid: str) -> str:  # type: ignore[no-untyped-def]
    listed = session_list(app)
    if listed.index_of(cid) is None:
        listed.highlight(NEWEST)
        await pilot.press("ctrl+e")  # the sub-agents of NEWEST
        await wait_until(pilot, lambda: listed.index_of(cid) is not None, what="the child")
    assert listed.highlight(cid)
    await pilot.press("ctrl+t")
    await wait_until(pilot, lambda: isinstance(app.screen, TranscriptScreen), what="transcript")
    screen = app.screen
    await wait_until(pilot, lambda: "trend" in static_text(screen.details) or cid == CLAMPED)
    return static_text(screen.details)


async def test_the_transcript_view_shows_the_whole_context_report(
    chain_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(chain_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        text = await _details(app, pilot, NEWEST)
        assert "window  200k, from its model's family (claude-sonnet-4-5)" in text
        assert "▃▄▆▇█ 40k → 144k over 5 turns" in text
        assert "26k a turn · about 2 turns left" in text
        assert "system 3k · context 12k · dialog 80k · tools 49k" in text
        assert "notify 50% ✓ · reminder 60% ✓ · hand-off 70% ✓ · force 90%" in text
        assert "#3 before the split · #5" in text
        assert f"{FIRST[:8]} → {MIDDLE[:8]} → {NEWEST[:8]} (this)" in text
        assert "hand-off waiting: handoff-2026-11-21-205600.md" in text


async def test_a_clamped_sub_agent_says_so(chain_dir: Path, make_app: AppFactory) -> None:
    app = make_app(chain_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        text = await _details(app, pilot, CLAMPED)
        assert "window  32k, clamped below its parent's 200k (small-model)" in text
        assert "no turns measured yet" in text


async def test_the_preview_header_says_the_window_rate_and_chain(
    chain_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(chain_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        assert session_list(app).highlight(NEWEST)
        await wait_until(
            pilot,
            lambda: (
                preview(app).session is not None and preview(app).session.conversation_id == NEWEST
            ),  # type: ignore[union-attr]
            what="NEWEST previewed",
        )
        header = static_text(preview(app).header)
        assert "window 200k (model) · 26k a turn · about 2 turns left" in header
        assert f"continues {MIDDLE[:8]}" in header
        assert session_list(app).highlight(MIDDLE)
        await wait_until(
            pilot,
            lambda: f"continued in {NEWEST[:8]}" in static_text(preview(app).header),
            what="MIDDLE's header",
        )
