"""What the list covers: the project the panel started in (worktrees included) or
every project, the current branch, the archive, the order, and sub-agents folded
under their parents. Real git repositories (made with git), real stores."""

from __future__ import annotations

from pathlib import Path

import pytest
from another_process import ARRIVED_TITLE
from list_support import git, scoped_session
from textual.widgets import Input
from tui_support import (
    FIXED_NOW_US,
    AppFactory,
    insert_sessions,
    notifications,
    session_list,
    settle,
    started,
    wait_until,
    widget_text,
    write_config,
    write_from_another_process,
)

from core.config import DB_FILENAME
from core.store import Store
from tui.cli import build_parser
from tui.live import Supervision
from tui.widgets.session_list import SessionList


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    """A repository on ``main`` with a linked worktree on ``feature``: (main, linked)."""
    main = tmp_path / "payments-api"
    main.mkdir()
    git("init", "-q", "-b", "main", cwd=main)
    git("commit", "-q", "--allow-empty", "-m", "start", cwd=main)
    linked = tmp_path / "payments-api-feature"
    git("worktree", "add", "-q", "-b", "feature", str(linked), cwd=main)
    return main.resolve(), linked.resolve()


QUICK = Supervision(store_poll_s=0.05, tick_s=0.2, debounce_ms=50, rescan_s=0.5)


def titles(listed: SessionList) -> list[str]:
    return [s.title for s in listed.sessions]


async def test_started_inside_a_project_it_lists_that_project_and_its_worktrees_first(
    data_dir: Path, make_app: AppFactory, project: tuple[Path, Path]
) -> None:
    main, linked = project
    await insert_sessions(
        data_dir,
        [
            scoped_session("a0000000-0000-4000-8000-000000000000", "in main", main, minutes_ago=3),
            scoped_session(
                "b0000000-0000-4000-8000-000000000000",
                "in the worktree",
                linked / "src",
                minutes_ago=5,
                branch="feature",
            ),
            scoped_session(
                "c0000000-0000-4000-8000-000000000000", "elsewhere", "/srv/other", minutes_ago=1
            ),
        ],
    )
    app = make_app(data_dir, scope_cwd=main)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        screen = await started(pilot)
        listed = session_list(app)
        assert titles(listed) == ["in main", "in the worktree"]
        header = widget_text(screen, "#list-scope")
        assert "payments-api (+1 worktree)" in header
        assert "by last activity" in header
        await wait_until(pilot, lambda: "1 / 2" in widget_text(screen, "#list-position"))

        await pilot.press("ctrl+a")  # every project
        await wait_until(pilot, lambda: len(listed.sessions) == 3, what="every project")
        assert titles(listed) == ["elsewhere", "in main", "in the worktree"]
        assert "all projects" in widget_text(screen, "#list-scope")
        await wait_until(pilot, lambda: "1 / 3" in widget_text(screen, "#list-position"))

        # The toggle works while the search field has focus (it would take ctrl+a).
        screen.query_one("#filter", Input).focus()
        await settle(pilot)
        await pilot.press("ctrl+a")
        await wait_until(pilot, lambda: len(listed.sessions) == 2, what="the project again")

        await pilot.press("ctrl+b")  # the current branch only
        await wait_until(pilot, lambda: titles(listed) == ["in main"], what="branch main only")
        assert "branch main" in widget_text(screen, "#list-scope")
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: len(listed.sessions) == 2, what="every branch")


async def test_outside_a_repository_every_project_is_listed_and_the_toggle_says_why_not(
    data_dir: Path, make_app: AppFactory, tmp_path: Path
) -> None:
    await insert_sessions(
        data_dir,
        [scoped_session("a0000000-0000-4000-8000-000000000000", "one", "/srv/x", minutes_ago=3)],
    )
    plain = tmp_path / "not-a-repo"
    plain.mkdir()
    app = make_app(data_dir, scope_cwd=plain)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        screen = await started(pilot)
        assert "all projects" in widget_text(screen, "#list-scope")
        await pilot.press("ctrl+a")
        await settle(pilot)
        assert any("outside a git repository" in n for n in notifications(app))
        assert titles(session_list(app)) == ["one"]


@pytest.mark.parametrize("how", ["--all", "config"])
async def test_all_projects_by_flag_or_setting(
    tmp_path: Path, make_app: AppFactory, project: tuple[Path, Path], how: str
) -> None:
    main, _ = project
    data_dir = write_config(tmp_path / "data", 'scope = "all"' if how == "config" else "")
    await insert_sessions(
        data_dir,
        [
            scoped_session("a0000000-0000-4000-8000-000000000000", "in main", main, minutes_ago=3),
            scoped_session(
                "c0000000-0000-4000-8000-000000000000", "elsewhere", "/srv/o", minutes_ago=1
            ),
        ],
    )
    all_projects = how == "--all" and build_parser().parse_args(["--all"]).all_projects
    app = make_app(data_dir, scope_cwd=main, all_projects=all_projects)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await started(pilot)
        assert titles(session_list(app)) == ["elsewhere", "in main"]
        assert "all projects" in widget_text(screen, "#list-scope")


async def test_the_archive_view_and_the_created_order(data_dir: Path, make_app: AppFactory) -> None:
    await insert_sessions(
        data_dir,
        [
            scoped_session(
                "a0000000-0000-4000-8000-000000000000",
                "active lately, made long ago",
                "/srv/x",
                minutes_ago=1,
                created_minutes_ago=600,
            ),
            scoped_session(
                "b0000000-0000-4000-8000-000000000000",
                "made just now",
                "/srv/x",
                minutes_ago=2,
                created_minutes_ago=3,
            ),
            scoped_session(
                "c0000000-0000-4000-8000-000000000000", "put away", "/srv/x", minutes_ago=9
            ),
        ],
    )
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        await store.archive.archive("c0000000-0000-4000-8000-000000000000", FIXED_NOW_US)
    finally:
        await store.close()
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await started(pilot)
        listed = session_list(app)
        assert titles(listed) == ["active lately, made long ago", "made just now"]

        await pilot.press("ctrl+s")  # newest created first
        await wait_until(pilot, lambda: titles(listed)[0] == "made just now", what="created order")
        assert "by created" in widget_text(screen, "#list-scope")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: titles(listed)[0] == "active lately, made long ago")

        await pilot.press("ctrl+g")  # the archive
        await wait_until(pilot, lambda: titles(listed) == ["put away"], what="the archive")
        assert "archive" in widget_text(screen, "#list-scope")
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: len(listed.sessions) == 2, what="the pool again")


PARENT = "90000000-0000-4000-8000-000000000000"


async def _family(data_dir: Path) -> None:
    await insert_sessions(
        data_dir,
        [
            scoped_session(PARENT, "the parent", "/srv/x", minutes_ago=2),
            scoped_session(
                "91000000-0000-4000-8000-000000000000",
                "first helper",
                "/srv/x",
                minutes_ago=4,
                parent_id=PARENT,
            ),
            scoped_session(
                "92000000-0000-4000-8000-000000000000",
                "second helper",
                "/srv/x",
                minutes_ago=3,
                parent_id=PARENT,
            ),
            scoped_session(
                "a0000000-0000-4000-8000-000000000000", "a neighbour", "/srv/x", minutes_ago=1
            ),
            scoped_session(
                "b0000000-0000-4000-8000-000000000000", "an older one", "/srv/x", minutes_ago=9
            ),
        ],
    )


def _row_text(listed: SessionList, index: int) -> str:
    prompt = listed.get_option_at_index(index).prompt
    return "\n".join(t.plain for t in prompt.renderables)  # type: ignore[union-attr]


async def test_sub_agents_fold_under_their_parent_and_expand_in_place(
    data_dir: Path, make_app: AppFactory
) -> None:
    await _family(data_dir)
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        listed = session_list(app)
        assert titles(listed) == ["a neighbour", "the parent", "an older one"]
        assert "▸ 2 sub-agents" in _row_text(listed, 1)

        listed.highlighted = 1
        await pilot.press("ctrl+e")
        await wait_until(pilot, lambda: len(listed.sessions) == 5, what="the sub-agents")
        # Right under the parent, oldest first, never among other sessions; each has a meter.
        assert titles(listed) == [
            "a neighbour",
            "the parent",
            "first helper",
            "second helper",
            "an older one",
        ]
        assert "▾ 2 sub-agents" in _row_text(listed, 1)
        assert "↳ first helper" in _row_text(listed, 2)
        assert "left" in _row_text(listed, 2)  # its own meter

        # left on a sub-agent folds its parent and highlights it.
        listed.highlighted = 3
        await pilot.press("left")
        await wait_until(pilot, lambda: len(listed.sessions) == 3, what="folded")
        assert listed.highlighted_session is not None
        assert listed.highlighted_session.conversation_id == PARENT
        await pilot.press("right")
        await wait_until(pilot, lambda: len(listed.sessions) == 5, what="unfolded by right")
        # A reload keeps it unfolded.
        app.screen.action_refresh()  # type: ignore[attr-defined]
        await settle(pilot)
        assert len(listed.sessions) == 5


async def test_a_setting_hides_sub_agents_entirely(tmp_path: Path, make_app: AppFactory) -> None:
    data_dir = write_config(tmp_path / "data", "subagents = false")
    await _family(data_dir)
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        listed = session_list(app)
        assert titles(listed) == ["a neighbour", "the parent", "an older one"]
        assert "sub-agent" not in _row_text(listed, 1)
        listed.highlighted = 1
        await pilot.press("ctrl+e")
        await settle(pilot)
        assert len(listed.sessions) == 3


async def test_a_session_another_process_writes_outside_the_project_stays_out(
    data_dir: Path, make_app: AppFactory, project: tuple[Path, Path]
) -> None:
    main, _ = project
    await insert_sessions(
        data_dir,
        [scoped_session("a0000000-0000-4000-8000-000000000000", "in main", main, minutes_ago=3)],
    )
    app = make_app(data_dir, scope_cwd=main, supervise=QUICK)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await started(pilot)
        await write_from_another_process(data_dir)  # a session in another folder
        await wait_until(
            pilot, lambda: "2 reusable" in widget_text(screen, "#status"), what="the arrival"
        )
        assert titles(session_list(app)) == ["in main"]
        await pilot.press("ctrl+a")
        await wait_until(pilot, lambda: ARRIVED_TITLE in titles(session_list(app)))


async def test_the_search_covers_the_scope_too(
    data_dir: Path, make_app: AppFactory, project: tuple[Path, Path]
) -> None:
    main, _ = project
    await insert_sessions(
        data_dir,
        [
            scoped_session(
                "a0000000-0000-4000-8000-000000000000", "tune the cache", main, minutes_ago=3
            ),
            scoped_session(
                "c0000000-0000-4000-8000-000000000000", "cache elsewhere", "/srv/o", minutes_ago=1
            ),
        ],
    )
    app = make_app(data_dir, scope_cwd=main)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await started(pilot)
        listed = session_list(app)
        screen.query_one("#filter", Input).value = "cache"
        await wait_until(pilot, lambda: titles(listed) == ["tune the cache"], what="in the project")
        await pilot.press("ctrl+a")
        await wait_until(pilot, lambda: len(listed.sessions) == 2, what="every project's matches")


async def test_a_project_without_sessions_says_so_and_names_the_key_for_every_project(
    data_dir: Path, make_app: AppFactory, project: tuple[Path, Path]
) -> None:
    """Started in a project with no sessions yet, the panel must not look like an
    empty store: it says where it looked and which key shows every project."""
    main, _ = project
    await insert_sessions(
        data_dir,
        [
            scoped_session(
                "c0000000-0000-4000-8000-000000000000", "elsewhere", "/srv/o", minutes_ago=1
            )
        ],
    )
    app = make_app(data_dir, scope_cwd=main)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await started(pilot)
        await wait_until(
            pilot,
            lambda: "No sessions in payments-api." in widget_text(screen, "#preview-header"),
            what="the empty project's note",
        )
        assert "ctrl+a shows every project" in widget_text(screen, "#preview-header")
        await pilot.press("ctrl+g")  # the archive of this project: both named
        await wait_until(
            pilot,
            lambda: "in the archive in payments-api" in widget_text(screen, "#preview-header"),
            what="the empty archive's note",
        )
        await pilot.press("ctrl+g", "ctrl+a")
        await wait_until(pilot, lambda: titles(session_list(app)) == ["elsewhere"])
