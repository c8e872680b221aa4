"""Snapshots of capsules in the panel (in ``snapshots/test_snapshots_capsule_panel/``):
the history cells of the capsule events, a stale capsule in the preview header, the
capsule in the transcript view's details."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from panel_capsule_data import BRANCH, STALE_RUN, git_repo, insert_capsule_sessions, valid_capsule
from textual.pilot import Pilot
from textual.widgets import Select
from tui_support import (
    AppFactory,
    history_cells,
    preview,
    session_list,
    settle,
    static_text,
    type_text,
    wait_until,
)

from core.capsules.drift import reference_for
from core.capsules.storage import save_capsule
from tui.widgets.history import HistoryTimeline

SnapCompare = Callable[..., bool]

# The sessions' folder shows on screen: the same on every machine (it need not exist).
REPO = Path("/home/dev/src/billing")
CREATED = datetime(2026, 11, 21, 20, 50, tzinfo=UTC)


@pytest.fixture
def capsule_dir(data_dir: Path) -> Path:
    asyncio.run(insert_capsule_sessions(data_dir, REPO, write_draft=False))
    return data_dir


async def _ready(pilot: Pilot[None]) -> None:
    await wait_until(
        pilot, lambda: type(pilot.app.screen).__name__ == "SessionPickerScreen", what="picker"
    )
    await wait_until(pilot, lambda: len(history_cells(pilot.app)) == 6, what="cells")
    timeline = pilot.app.screen.query_one(HistoryTimeline)
    await wait_until(
        pilot,
        lambda: timeline.scroll_y == timeline.max_scroll_y,
        what="the newest cell in view",
    )
    await settle(pilot)


async def _history_hidden(pilot: Pilot[None]) -> None:
    """The cells out of the way: where a scrolled timeline rests while cells settle their
    wrapped height is frame timing, not what these snapshots are about."""
    await _ready(pilot)
    timeline = pilot.app.screen.query_one(HistoryTimeline)
    await pilot.press("ctrl+l")
    await wait_until(pilot, lambda: not timeline.is_on_screen, what="the history hidden")
    await settle(pilot)


async def _stale_session_highlighted(pilot: Pilot[None]) -> None:
    await _history_hidden(pilot)
    assert session_list(pilot.app).highlight(STALE_RUN)
    await wait_until(
        pilot, lambda: "stale" in static_text(preview(pilot.app).header), what="the stale mark"
    )
    await settle(pilot)


def test_capsule_history_cells(
    snap_compare: SnapCompare, capsule_dir: Path, make_app: AppFactory
) -> None:
    """A capsule drafted by the agent and one saved by a person, two launches that carried
    one (one with a problem accepted), a gap the session reported, a capsule gone stale."""
    assert snap_compare(make_app(capsule_dir), terminal_size=(160, 50), run_before=_ready)


def test_stale_capsule_in_the_preview_header(
    snap_compare: SnapCompare, capsule_dir: Path, make_app: AppFactory
) -> None:
    assert snap_compare(
        make_app(capsule_dir), terminal_size=(120, 30), run_before=_stale_session_highlighted
    )


def test_capsule_in_the_transcript_details(
    snap_compare: SnapCompare, capsule_dir: Path, make_app: AppFactory
) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await _stale_session_highlighted(pilot)
        await pilot.press("ctrl+t")
        await wait_until(
            pilot,
            lambda: getattr(pilot.app.screen, "details_loaded", False),
            what="the transcript's details",
        )
        await settle(pilot)

    assert snap_compare(make_app(capsule_dir), terminal_size=(120, 30), run_before=run_before)


def test_launch_form_with_the_latest_capsule_chosen(
    snap_compare: SnapCompare, capsule_dir: Path, make_app: AppFactory
) -> None:
    """ctrl+n, a prompt, "the latest of the branch" chosen in a folder outside git (/tmp)."""

    async def run_before(pilot: Pilot[None]) -> None:
        await _history_hidden(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        await type_text(pilot, "Finish the invoice export")
        pilot.app.screen.query_one("#launch-capsule", Select).value = "latest"
        await wait_until(
            pilot,
            lambda: (
                "git repository" in str(pilot.app.screen.query_one("#launch-capsule-note").render())
            ),
            what="the note",
        )
        await settle(pilot)

    assert snap_compare(make_app(capsule_dir), terminal_size=(120, 40), run_before=run_before)


def test_launch_with_a_stale_capsule_asks_first(
    snap_compare: SnapCompare, data_dir: Path, tmp_path: Path, make_app: AppFactory
) -> None:
    """ctrl+n with the latest capsule, whose referenced file changed since: the question."""
    repo = git_repo(tmp_path)
    recorded = reference_for(repo, "src/app.py")
    (repo / "src" / "app.py").write_text("print('v3')\n")
    references = f"references:\n  - path: {recorded.path}\n    blob: {recorded.blob}\n"
    save_capsule(repo, valid_capsule(references), branch=BRANCH, created=CREATED)

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(
            pilot, lambda: type(pilot.app.screen).__name__ == "SessionPickerScreen", what="picker"
        )
        await pilot.press("ctrl+n")
        await settle(pilot)
        await type_text(pilot, "Teach the app to print v2")
        pilot.app.screen.query_one("#launch-capsule", Select).value = "latest"
        await settle(pilot)
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: type(pilot.app.screen).__name__ == "ConfirmCapsuleLaunch",
            what="the question",
        )
        await settle(pilot)

    app = make_app(data_dir, launch_cwd=repo)
    assert snap_compare(app, terminal_size=(120, 34), run_before=run_before)
