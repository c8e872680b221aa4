"""The panel shows what each hand-off did (the continuation's one outcome), and a session
whose work moved on is ``handoff`` in the list, naming its successor."""

from __future__ import annotations

from pathlib import Path

import pytest
from handoff_outcome_data import outcome_events
from panel_context_data import FIRST, MIDDLE, insert_chain
from test_context_history import store_events
from tui_support import (
    AppFactory,
    history_cells,
    screen_lines,
    screen_text,
    session_list,
    started,
    static_text,
    wait_until,
)


@pytest.fixture
async def outcome_dir(data_dir: Path, tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    await insert_chain(data_dir, repo)
    await store_events(data_dir, outcome_events(repo))
    return data_dir


async def test_each_outcome_has_a_cell_that_says_what_happened(
    outcome_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(outcome_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(history_cells(app)) == 4, what="4 cells")
        cells = [static_text(cell, 200) for cell in history_cells(app)]
        expected = [
            ("handed off", f"written · handoff-2026-11-21-205600.md · continues in {MIDDLE[:8]}"),
            ("hand-off waiting", "written · handoff-2026-11-21-205601.md · waiting for you"),
            ("hand-off not continued", "· cannot start the session that continues it"),
            ("hand-off not written", "cannot write the hand-off under"),
        ]
        for text, (title, detail) in zip(cells, expected, strict=True):
            assert title in text, text
            assert detail in text, text
        assert "waiting for you (HANDOFF_PENDING.md)" in cells[2]
        assert "it keeps working; past 90% it gets no prompt" in cells[3]


async def test_an_outcome_cell_opens_the_successor(outcome_dir: Path, make_app: AppFactory) -> None:
    app = make_app(outcome_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(history_cells(app)) == 4, what="4 cells")
        history_cells(app)[0].focus()
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: (
                (s := session_list(app).highlighted_session) is not None
                and s.conversation_id == MIDDLE
            ),
            what="the successor highlighted",
        )


async def test_handed_off_rows_say_so_and_name_the_successor(
    outcome_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(outcome_dir)
    async with app.run_test(size=(200, 60)) as pilot:
        await started(pilot)
        listed = session_list(app)
        await wait_until(pilot, lambda: listed.index_of(FIRST) is not None, what="rows")
        await wait_until(
            pilot, lambda: f"→ {MIDDLE[:8]}" in screen_text(app), what="the successor named"
        )
        lines = screen_lines(app)
        [first] = [line for line in lines if "Start the billing refactor" in line]
        assert "handoff " in first
        assert f"→ {MIDDLE[:8]}" in first
        newest = [line for line in lines if "Refactor the billing module" in line]
        assert newest
        assert all("handoff " not in line for line in newest)  # the chain's newest holds it
