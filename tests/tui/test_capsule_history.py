"""History cells for the capsule events: a capsule saved (or drafted by the agent), a
launch that carried one, a gap the session reported, a capsule gone stale."""

from __future__ import annotations

from pathlib import Path

import pytest
from panel_capsule_data import (
    FRESH_DIGEST,
    LAUNCHED,
    PLAIN,
    STALE_RUN,
    insert_capsule_sessions,
)
from tui_support import (
    FIXED_NOW,
    AppFactory,
    history_cells,
    notifications,
    session_list,
    started,
    static_text,
    wait_until,
)

from core.events import CapsuleGap

CELLS = 6
FRESH_FILE, STALE_FILE = (
    "feature-billing/20261121T205000Z.md",
    "feature-billing/20261120T101500Z.md",
)


@pytest.fixture
async def capsule_dir(data_dir: Path, tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    await insert_capsule_sessions(data_dir, repo)
    return data_dir


async def test_each_capsule_event_has_a_cell_that_says_what_happened(
    capsule_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(capsule_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(history_cells(app)) == CELLS, what="the cells")
        cells = [static_text(cell, 200) for cell in history_cells(app)]
        expected = [
            (
                "◆ capsule drafted",
                f"echo · {PLAIN[:8]}",
                "by the agent · feature-billing/20261121T205000Z.md · waiting for your review",
            ),
            ("◆ capsule saved", "", "by you · feature-billing/20261120T101500Z.md"),
            (
                "◆ launched with a capsule",
                f"{LAUNCHED[:8]}",
                f"capsule 1a2b3c4d · digest {FRESH_DIGEST[7:15]} · {FRESH_FILE}",
            ),
            ("◆ launched with a capsule", f"{STALE_RUN[:8]}", "accepted: reference_stale"),
            (
                "⚠ capsule gap",
                f"{LAUNCHED[:8]}",
                "Capsule Gap: which\\x1b[2J currency the invoices use",
            ),
            (
                "⚠ capsule stale",
                "",
                f"{STALE_FILE} · 4 files changed:"
                " billing/invoice.py, billing/tax.py, tests/test_tax.py (+1)",
            ),
        ]
        for text, (title, who, detail) in zip(cells, expected, strict=True):
            assert title in text, text
            assert who in text, text
            assert detail in text, text
        # No session: the heading does not show an empty "·" where it would be.
        assert "  · " not in cells[1].splitlines()[0]
        assert "second line" not in cells[4]
        assert "\x1b" not in "".join(cells)


async def test_enter_on_a_gap_opens_the_session_that_reported_it(
    capsule_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(capsule_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(history_cells(app)) == CELLS, what="the cells")
        gap = next(c for c in history_cells(app) if "capsule gap" in static_text(c))
        gap.focus()
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: (
                (s := session_list(app).highlighted_session) is not None
                and s.conversation_id == LAUNCHED
            ),
            what="the launched session highlighted",
        )


async def test_enter_on_a_capsule_no_session_wrote_says_so(
    capsule_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(capsule_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(history_cells(app)) == CELLS, what="the cells")
        stale = next(c for c in history_cells(app) if "capsule stale" in static_text(c))
        stale.focus()
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any("No session" in n for n in notifications(app)),
            what="a note that no session wrote it",
        )


async def test_a_live_gap_arrives_as_a_cell(capsule_dir: Path, make_app: AppFactory) -> None:
    app = make_app(capsule_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(history_cells(app)) == CELLS, what="the cells")
        app.orchestrator.bus.publish(
            CapsuleGap(
                at=FIXED_NOW,
                conversation_id=STALE_RUN,
                run_id="run-live",
                agent_id="echo",
                document_id="5e6f7a8b-capsule-stale",
                note="the rounding rule",
            )
        )
        await wait_until(pilot, lambda: len(history_cells(app)) == CELLS + 1, what="one more")
        assert "capsule gap" in static_text(history_cells(app)[-1])
