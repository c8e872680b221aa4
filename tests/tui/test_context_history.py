"""History cells for the context events: thresholds crossed, a child clamped, hand-offs
written or failed, a session continued, checkpoints marked, restored and forked."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from panel_context_data import CLAMPED, FIRST, HANDOFF_DOC, MIDDLE, NEWEST, insert_chain
from tui_support import (
    FIXED_NOW,
    AppFactory,
    history_cells,
    session_list,
    started,
    static_text,
    wait_until,
)

from core.clock import to_us
from core.config import DB_FILENAME
from core.events import (
    CheckpointMarked,
    ChildClamped,
    ContextThresholdCrossed,
    HandoffFailed,
    HandoffWritten,
    HistoryEvent,
    SessionContinued,
)
from core.models import ContextLevel
from core.store import Store


def context_events(repo: Path) -> list[HistoryEvent]:
    """One of each new kind (oldest first), a minute apart."""
    at = [FIXED_NOW - timedelta(minutes=20 - i) for i in range(12)]
    handoff = str(repo / ".delegate/handoffs/handoff-2026-11-21-205600.md")
    common = {"conversation_id": MIDDLE, "agent_id": "echo"}
    return [
        ContextThresholdCrossed(
            at=at[0],
            level=ContextLevel.NOTIFY,
            used_tokens=104_000,
            limit_tokens=200_000,
            percent=52.0,
            **common,
        ),
        ContextThresholdCrossed(
            at=at[1],
            level=ContextLevel.REMINDER,
            used_tokens=122_000,
            limit_tokens=200_000,
            percent=61.0,
            **common,
        ),
        ContextThresholdCrossed(
            at=at[2],
            level=ContextLevel.HANDOFF,
            used_tokens=144_000,
            limit_tokens=200_000,
            percent=72.0,
            estimated=True,
            **common,
        ),
        ContextThresholdCrossed(
            at=at[3],
            level=ContextLevel.FORCE,
            used_tokens=184_000,
            limit_tokens=200_000,
            percent=92.0,
            **common,
        ),
        ChildClamped(
            at=at[4],
            child_id=CLAMPED,
            child_agent_id="tester",
            limit_tokens=32_000,
            parent_limit_tokens=200_000,
            **common,
        ),
        HandoffFailed(at=at[5], stage="write", reason="disk full\x1b[2J while writing", **common),
        HandoffWritten(
            at=at[6],
            document_id=HANDOFF_DOC,
            path=handoff,
            producer="facts",
            previous_id="doc-handoff-0000",
            pending=True,
            **common,
        ),
        HandoffWritten(at=at[7], document_id="doc-2", path=handoff, producer="agent", **common),
        SessionContinued(at=at[8], successor_id=NEWEST, document_id=HANDOFF_DOC, **common),
        CheckpointMarked(
            at=at[9], checkpoint_id="ckpt-1", seq=12, label="before the split", **common
        ),
        CheckpointMarked(at=at[10], checkpoint_id="ckpt-1", seq=12, forked_to=FIRST, **common),
        CheckpointMarked(at=at[11], checkpoint_id="ckpt-1", seq=12, restored=True, **common),
    ]


async def store_events(data_dir: Path, events: list[HistoryEvent]) -> None:
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        for event in events:
            await store.history.add(
                to_us(event.at),
                event.kind,
                event.conversation_id,
                None,
                event.model_dump(mode="json"),
            )
    finally:
        await store.close()


@pytest.fixture
async def chain_dir(data_dir: Path, tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    await insert_chain(data_dir, repo)
    await store_events(data_dir, context_events(repo))
    return data_dir


async def test_each_context_event_has_a_cell_that_says_what_happened(
    chain_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(chain_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(history_cells(app)) == 12, what="12 cells")
        cells = [static_text(cell, 200) for cell in history_cells(app)]
        expected = [
            ("context at 52%", "warning level (104k of 200k tokens)"),
            ("context at 61%", "reminder: a hand-off comes next"),
            ("context at ≈72%", "hand-off level: a hand-off document is written"),
            ("context at 92%", "force level: delegate sends it no more prompts"),
            ("child clamped", f"tester · {CLAMPED[:8]} clamped to 32k tokens (this window 200k)"),
            ("hand-off failed", "writing: disk full\\x1b[2J while writing · retried"),
            (
                # It waited for a person; the session continued later names it.
                "hand-off continued",
                f"from facts · handoff-2026-11-21-205600.md · continued in {NEWEST[:8]}",
            ),
            ("hand-off written", "by the agent · handoff-2026-11-21-205600.md"),
            ("continued", f"in {NEWEST[:8]} from its hand-off"),
            ("checkpoint", "at message #13 · before the split"),
            ("forked", f"from message #13 into {FIRST[:8]}"),
            ("restored", "to message #13 (the state before is kept in an archived copy)"),
        ]
        for text, (title, detail) in zip(cells, expected, strict=True):
            assert title in text, text
            assert detail in text, text
        assert "\x1b" not in "".join(cells)


async def test_a_continued_cell_opens_the_successor(chain_dir: Path, make_app: AppFactory) -> None:
    """enter on "continued" jumps to the session the work went on in."""
    app = make_app(chain_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(history_cells(app)) == 12, what="12 cells")
        continued = next(c for c in history_cells(app) if "continued" in static_text(c))
        continued.focus()
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: (
                (s := session_list(app).highlighted_session) is not None
                and s.conversation_id == NEWEST
            ),
            what="the successor highlighted",
        )


async def test_a_live_crossing_arrives_as_a_cell(chain_dir: Path, make_app: AppFactory) -> None:
    app = make_app(chain_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(history_cells(app)) == 12, what="12 cells")
        app.orchestrator.bus.publish(
            ContextThresholdCrossed(
                at=FIXED_NOW,
                conversation_id=NEWEST,
                agent_id="echo",
                level=ContextLevel.NOTIFY,
                used_tokens=100_000,
                limit_tokens=200_000,
                percent=50.0,
            )
        )
        await wait_until(pilot, lambda: len(history_cells(app)) == 13, what="a 13th cell")
        assert "context at 50%" in static_text(history_cells(app)[-1])
