"""SVG snapshots of the list's states (in ``snapshots/test_snapshots_list/``): search
results with their highlighted snippets, a refused query, the narrow one-line rows."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from list_support import git, scoped_session
from textual.pilot import Pilot
from textual.widgets import Input
from tui_support import (
    FIXED_NOW_US,
    AppFactory,
    insert_sessions,
    screen_text,
    session_list,
    settle,
    wait_until,
)

from core.config import DB_FILENAME
from core.demo import demo_id
from core.store import Store
from tui.app import DelegateApp

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


# --- scope, order, archive, sub-agents -------------------------------------------


def _pressing(*keys: str, highlight: int | None = None) -> Callable[[Pilot[None]], object]:
    async def run_before(pilot: Pilot[None]) -> None:
        await _ready(pilot)
        if highlight is not None:
            session_list(pilot.app).highlighted = highlight
            await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run_before


def _project_app(tmp_path: Path, data_dir: Path, make_app: AppFactory) -> DelegateApp:
    main = tmp_path / "payments-api"
    main.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["commit", "-q", "--allow-empty", "-m", "start"],
        ["worktree", "add", "-q", "-b", "feature", str(tmp_path / "payments-feature")],
    ):
        git(*args, cwd=main)
    linked = (tmp_path / "payments-feature").resolve()
    main = main.resolve()
    asyncio.run(
        insert_sessions(
            data_dir,
            [
                scoped_session(f"a{n}000000-0000-4000-8000-000000000000", title, cwd, **kw)
                for n, (title, cwd, kw) in enumerate(
                    [
                        ("Fix the refund rounding", main, {"minutes_ago": 3}),
                        (
                            "Idempotency keys for retries",
                            linked,
                            {"minutes_ago": 8, "branch": "feature"},
                        ),
                        ("Tidy the notes folder", "/home/dev/notes", {"minutes_ago": 1}),
                        ("Review the payout report", main / "reports", {"minutes_ago": 30}),
                    ]
                )
            ],
        )
    )
    return make_app(data_dir, scope_cwd=main)


def test_scope_this_project(
    snap_compare: SnapCompare, tmp_path: Path, data_dir: Path, make_app: AppFactory
) -> None:
    """Started in a repository: its sessions and its worktree's; the header names it."""
    app = _project_app(tmp_path, data_dir, make_app)
    assert snap_compare(app, terminal_size=NARROW, run_before=_ready)


def test_scope_all_projects(
    snap_compare: SnapCompare, tmp_path: Path, data_dir: Path, make_app: AppFactory
) -> None:
    """ctrl+a: every project; the header says 'all projects'."""
    app = _project_app(tmp_path, data_dir, make_app)
    assert snap_compare(app, terminal_size=NARROW, run_before=_pressing("ctrl+a"))


def test_scope_current_branch(
    snap_compare: SnapCompare, tmp_path: Path, data_dir: Path, make_app: AppFactory
) -> None:
    """ctrl+b: only the sessions on the current branch (main)."""
    app = _project_app(tmp_path, data_dir, make_app)
    assert snap_compare(app, terminal_size=NARROW, run_before=_pressing("ctrl+b"))


def test_sorted_by_created(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """ctrl+s: newest created first; the header says 'by created'."""
    app = make_app(demo_dir)
    assert snap_compare(app, terminal_size=MEDIUM, run_before=_pressing("ctrl+s"))


def test_archive_view(snap_compare: SnapCompare, demo_dir: Path, make_app: AppFactory) -> None:
    """ctrl+g: the archive (three sessions put away); the header says 'archive'."""

    async def archive_three() -> None:
        store = await Store.open(demo_dir / DB_FILENAME)
        try:
            for index in (1, 4, 6):
                await store.archive.archive(demo_id(index), FIXED_NOW_US)
        finally:
            await store.close()

    asyncio.run(archive_three())
    app = make_app(demo_dir)

    async def run_before(pilot: Pilot[None]) -> None:
        await _pressing("ctrl+g")(pilot)  # type: ignore[misc]
        # The footer offers Restore once the archived row's highlight has arrived.
        await wait_until(pilot, lambda: "Restore" in screen_text(pilot.app), what="Restore")

    assert snap_compare(app, terminal_size=MEDIUM, run_before=run_before)


def _family_app(data_dir: Path, make_app: AppFactory) -> DelegateApp:
    parent = "90000000-0000-4000-8000-000000000000"
    asyncio.run(
        insert_sessions(
            data_dir,
            [
                scoped_session(
                    parent, "Migrate the billing service", "/srv/billing", minutes_ago=2
                ),
                scoped_session(
                    "91000000-0000-4000-8000-000000000000",
                    "Explore: where are invoices written",
                    "/srv/billing",
                    minutes_ago=6,
                    parent_id=parent,
                ),
                scoped_session(
                    "92000000-0000-4000-8000-000000000000",
                    "Run the billing test suite",
                    "/srv/billing",
                    minutes_ago=4,
                    parent_id=parent,
                ),
                scoped_session(
                    "a0000000-0000-4000-8000-000000000000",
                    "Answer the on-call page",
                    "/srv/ops",
                    minutes_ago=1,
                ),
                scoped_session(
                    "b0000000-0000-4000-8000-000000000000",
                    "Draft the quarterly plan",
                    "/srv/notes",
                    minutes_ago=40,
                ),
            ],
        )
    )
    return make_app(data_dir)


def test_subagents_collapsed(
    snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory
) -> None:
    """A parent folds its sub-agents: '▸ 2 sub-agents' after its title."""
    app = _family_app(data_dir, make_app)
    assert snap_compare(app, terminal_size=MEDIUM, run_before=_pressing(highlight=1))


def test_subagents_expanded(
    snap_compare: SnapCompare, data_dir: Path, make_app: AppFactory
) -> None:
    """ctrl+e: the sub-agents right under their parent, indented, each with its meter."""
    app = _family_app(data_dir, make_app)
    assert snap_compare(app, terminal_size=MEDIUM, run_before=_pressing("ctrl+e", highlight=1))


@pytest.mark.parametrize("size", [MEDIUM, NARROW], ids=["medium", "80x24"])
def test_scope_project_without_sessions(
    snap_compare: SnapCompare,
    tmp_path: Path,
    data_dir: Path,
    make_app: AppFactory,
    size: tuple[int, int],
) -> None:
    """Started in a repository with no session of its own: the list says how many the
    other projects hold and that ctrl+a shows them."""
    empty = tmp_path / "fresh-project"
    empty.mkdir()
    git("init", "-q", "-b", "main", cwd=empty)
    _project_app(tmp_path, data_dir, make_app)  # sessions elsewhere
    app = make_app(data_dir, scope_cwd=empty.resolve())
    assert snap_compare(app, terminal_size=size, run_before=_ready)
