"""SVG snapshots of the list's states (in ``snapshots/test_snapshots_list/``): search
results with their highlighted snippets, a refused query, the narrow one-line rows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input
from tui_support import AppFactory, settle, wait_until

SnapCompare = Callable[..., bool]
WIDE = (160, 48)
MEDIUM = (120, 36)
NARROW = (80, 24)


async def _ready(pilot: Pilot[None]) -> None:
    await wait_until(
        pilot, lambda: type(pilot.app.screen).__name__ == "SessionPickerScreen", what="picker"
    )
    await settle(pilot)


def _searching(query: str) -> Callable[[Pilot[None]], object]:
    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        field = pilot.app.screen.query_one("#filter", Input)
        field.focus()
        field.value = query
        await settle(pilot)

    return run_before


def test_search_results_with_highlights(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    """'"smallest fix"': ranked rows, each with the matching snippet, the phrase highlighted."""
    app = make_app(demo_dir)
    assert snap_compare(app, terminal_size=MEDIUM, run_before=_searching('"smallest fix"'))


def test_search_refused(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """'state:sleepy': the reason in red under the field, an empty list, no toast."""
    app = make_app(demo_dir)
    assert snap_compare(app, terminal_size=MEDIUM, run_before=_searching("state:sleepy"))


def test_search_narrow(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """80x24 while searching: one-line rows, each with its snippet line."""
    app = make_app(demo_dir)
    assert snap_compare(app, terminal_size=NARROW, run_before=_searching("migration"))


def test_list_narrow(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """80x24: one-line rows, ten sessions, the position over the list."""
    assert snap_compare(make_app(demo_dir), terminal_size=NARROW, run_before=_ready)


def test_list_wide_meter_levels(
    snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory
) -> None:
    """160x48: idle rows dim; ready, and meters past warn, hand-off and forced, coloured."""
    assert snap_compare(make_app(demo_dir), terminal_size=WIDE, run_before=_ready)
