"""Snapshots of compact returns in the panel (in ``snapshots/test_snapshots_returns/``):
the history cells of the return events, the group view (a four-group cycle with groups
done and mid-chain, an invalid return's step, no returns yet) and the hand-off viewer
(a file, a missing one)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from panel_returns_data import PRIMARY, STEPS, handoff_file, insert_return_sessions
from return_files_data import chain_data_dir, handoff_of, run_the_chain
from textual.pilot import Pilot
from tui_support import AppFactory, history_cells, session_list, settle, wait_until

from tui.modals.handoff_viewer import HandoffViewer
from tui.returns.groups import ReturnGroupsScreen, StepRow
from tui.widgets.history import HistoryTimeline

SnapCompare = Callable[..., bool]

# The sessions' folder shows in the panel: the same on every machine (it need not exist).
SHOWN_REPO = Path("/home/dev/src/shop")


@pytest.fixture
def cells_dir(data_dir: Path) -> Path:
    asyncio.run(insert_return_sessions(data_dir, SHOWN_REPO, steps=False))
    return data_dir


@pytest.fixture
def returns_dir(data_dir: Path, tmp_path: Path) -> Path:
    """The steps and their hand-off files (in a folder of this test: the group view and
    the viewer name files by their place inside the artifacts session only)."""
    asyncio.run(insert_return_sessions(data_dir, tmp_path / "repo"))
    return data_dir


async def _picker(pilot: Pilot[None]) -> None:
    await wait_until(
        pilot, lambda: type(pilot.app.screen).__name__ == "SessionPickerScreen", what="picker"
    )
    await settle(pilot)


async def _groups(pilot: Pilot[None]) -> ReturnGroupsScreen:
    await _picker(pilot)
    assert session_list(pilot.app).highlight(PRIMARY)
    await pilot.press("f3")
    await wait_until(
        pilot,
        lambda: isinstance(pilot.app.screen, ReturnGroupsScreen) and pilot.app.screen.loaded,
        what="the group view",
    )
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ReturnGroupsScreen)
    return screen


async def _viewer(
    pilot: Pilot[None], index: int, before_enter: Callable[[], object] = lambda: None
) -> None:
    """The group view, then the viewer of ``STEPS[index]``'s hand-off file."""
    screen = await _groups(pilot)
    before_enter()
    step = STEPS[index]
    row = next(
        r
        for r in screen.query(StepRow)
        if (r.step.group_id, r.step.role, r.step.status) == (step.group, step.role, step.status)
    )
    row.focus()
    await pilot.press("enter")
    await wait_until(
        pilot,
        lambda: isinstance(pilot.app.screen, HandoffViewer) and pilot.app.screen.view is not None,
        what="the viewer",
    )
    await settle(pilot)


def test_return_history_cells(
    snap_compare: SnapCompare, cells_dir: Path, make_app: AppFactory
) -> None:
    """A valid return (its display line, wrapped), an invalid one (rule, reason, tokens),
    a chain that reached the end."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _picker(pilot)
        await wait_until(pilot, lambda: len(history_cells(pilot.app)) == 3, what="cells")
        timeline = pilot.app.screen.query_one(HistoryTimeline)
        await wait_until(
            pilot,
            lambda: timeline.scroll_y == timeline.max_scroll_y,
            what="the newest cell in view",
        )
        await settle(pilot)

    assert snap_compare(make_app(cells_dir), terminal_size=(160, 40), run_before=run_before)


def test_group_view_four_groups(
    snap_compare: SnapCompare, returns_dir: Path, make_app: AppFactory
) -> None:
    """f3 on the primary: its artifacts session, AUTH done to BAZINGA, BILLING back to
    the developer once and waiting on QA."""
    assert snap_compare(make_app(returns_dir), terminal_size=(130, 48), run_before=_groups)


def test_group_view_invalid_step(
    snap_compare: SnapCompare, returns_dir: Path, make_app: AppFactory
) -> None:
    """EXPORT's developer broke the protocol (the rule, why, its size); SEARCH waits on
    the tech lead."""

    async def run_before(pilot: Pilot[None]) -> None:
        screen = await _groups(pilot)
        invalid = next(r for r in screen.query(StepRow) if r.step.group_id == "EXPORT")
        invalid.focus()
        await settle(pilot)
        screen.query_one("#return-groups").scroll_end(animate=False)
        await settle(pilot)

    assert snap_compare(make_app(returns_dir), terminal_size=(130, 40), run_before=run_before)


def test_group_view_empty(snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await _picker(pilot)
        await pilot.press("f3")
        await wait_until(
            pilot,
            lambda: isinstance(pilot.app.screen, ReturnGroupsScreen) and pilot.app.screen.loaded,
            what="the group view",
        )
        await settle(pilot)

    assert snap_compare(make_app(data_dir), terminal_size=(120, 30), run_before=run_before)


def test_handoff_viewer(snap_compare: SnapCompare, returns_dir: Path, make_app: AppFactory) -> None:
    """AUTH's developer's hand-off file, pretty-printed."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _viewer(pilot, 4)

    assert snap_compare(make_app(returns_dir), terminal_size=(130, 40), run_before=run_before)


def test_handoff_viewer_missing_file(
    snap_compare: SnapCompare, returns_dir: Path, tmp_path: Path, make_app: AppFactory
) -> None:
    """SEARCH's QA file removed after the group view read it: the viewer says there is
    none."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _viewer(pilot, 13, before_enter=handoff_file(tmp_path / "repo", STEPS[13]).unlink)

    assert snap_compare(make_app(returns_dir), terminal_size=(130, 30), run_before=run_before)


def test_handoff_viewer_file_not_of_the_role(
    snap_compare: SnapCompare, returns_dir: Path, tmp_path: Path, make_app: AppFactory
) -> None:
    """BILLING's QA file holds a developer's status: shown, with what is wrong above it."""
    handoff_file(tmp_path / "repo", STEPS[9]).write_text(
        '{"from_agent": "qa_expert", "status": "READY_FOR_QA", "summary": "Tested totals",'
        ' "failures": ["tax rounding"]}'
    )

    async def run_before(pilot: Pilot[None]) -> None:
        await _viewer(pilot, 9)

    assert snap_compare(make_app(returns_dir), terminal_size=(130, 30), run_before=run_before)


def test_group_view_narrow(
    snap_compare: SnapCompare, returns_dir: Path, make_app: AppFactory
) -> None:
    """Under 110 columns the sessions are listed over the groups."""
    assert snap_compare(make_app(returns_dir), terminal_size=(80, 30), run_before=_groups)


def test_group_view_steps_without_files(
    snap_compare: SnapCompare, tmp_path: Path, make_app: AppFactory
) -> None:
    """A chain delegate ran to the end: the PM's BAZINGA wrote no hand-off file, and the
    QA's was removed since; neither names a file."""
    data, repo = chain_data_dir(tmp_path)

    async def run_before(pilot: Pilot[None]) -> None:
        await _picker(pilot)
        await run_the_chain(pilot.app.orchestrator, repo)  # type: ignore[attr-defined]
        handoff_of(repo, "qa_expert").unlink()
        await pilot.press("f3")
        await wait_until(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, ReturnGroupsScreen)
                and len(pilot.app.screen.query(StepRow)) == 4
            ),
            what="the four steps",
        )
        await settle(pilot)

    assert snap_compare(make_app(data), terminal_size=(130, 30), run_before=run_before)
