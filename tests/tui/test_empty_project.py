"""A panel started inside a repository whose project has no sessions: the list itself
says how many sessions other projects hold and the key that shows them, from the first
frame on (never "No delegate sessions yet", which is for a store with none at all)."""

from __future__ import annotations

from pathlib import Path

import pytest
from list_support import git, scoped_session
from tui_support import (
    AppFactory,
    insert_sessions,
    session_list,
    settle,
    started,
    wait_until,
    widget_text,
    write_config,
)

from tui.screens.session_picker import SessionPickerScreen

STORE_EMPTY = "No delegate sessions yet"
PARENT = "a0000000-0000-4000-8000-00000000000a"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository with no session of its own."""
    main = tmp_path / "payments-api"
    main.mkdir()
    git("init", "-q", "-b", "main", cwd=main)
    git("commit", "-q", "--allow-empty", "-m", "start", cwd=main)
    return main.resolve()


async def _sessions_elsewhere(data_dir: Path) -> None:
    """Three top-level sessions in two other folders, and a sub-agent of one (it is no
    row of its own: ctrl+a lists three)."""
    await insert_sessions(
        data_dir,
        [
            scoped_session(PARENT, "in billing", "/srv/billing", minutes_ago=2),
            scoped_session(
                "a0000000-0000-4000-8000-00000000000b",
                "also billing",
                "/srv/billing",
                minutes_ago=4,
            ),
            scoped_session(
                "a0000000-0000-4000-8000-00000000000c", "in docs", "/srv/docs", minutes_ago=6
            ),
            scoped_session(
                "a0000000-0000-4000-8000-00000000000d",
                "a sub-agent",
                "/srv/billing",
                minutes_ago=3,
                parent_id=PARENT,
            ),
        ],
    )


def _empty_text(screen: SessionPickerScreen) -> str:
    return " ".join(widget_text(screen, "#empty-state").split())


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_the_list_says_what_other_projects_hold_and_that_ctrl_a_shows_them(
    data_dir: Path, make_app: AppFactory, project: Path, size: tuple[int, int]
) -> None:
    await _sessions_elsewhere(data_dir)
    app = make_app(data_dir, scope_cwd=project)
    async with app.run_test(size=size) as pilot:
        # Every state the panel passes through on its way up, from its first frame.
        seen: list[str] = []
        while not isinstance(app.screen, SessionPickerScreen) or not app.screen.is_mounted:
            await pilot.pause(0)
        screen = app.screen
        for _ in range(40):
            if screen.empty_state.display:
                seen.append(_empty_text(screen))
            await pilot.pause(0)
        screen = await started(pilot)
        assert seen, "the list never said why it is empty"
        assert not [s for s in seen if STORE_EMPTY in s], seen
        said = _empty_text(screen)
        assert "No sessions in payments-api" in said
        assert "3 sessions in other projects" in said
        assert "ctrl+a shows them" in said
        assert screen.empty_state.display
        assert not session_list(app).display
        await pilot.press("ctrl+a")
        await wait_until(pilot, lambda: len(session_list(app).sessions) == 3, what="every project")
        await settle(pilot)
        assert not screen.empty_state.display
        assert session_list(app).display


async def test_the_hint_names_a_remapped_scope_key(
    tmp_path: Path, make_app: AppFactory, project: Path
) -> None:
    data_dir = write_config(tmp_path / "data", '[keymap]\n"picker.scope" = "f6"\n')
    await _sessions_elsewhere(data_dir)
    app = make_app(data_dir, scope_cwd=project)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await started(pilot)
        assert "f6 shows them" in _empty_text(screen)


async def test_a_store_with_no_session_anywhere_still_says_how_to_start(
    data_dir: Path, make_app: AppFactory, project: Path
) -> None:
    app = make_app(data_dir, scope_cwd=project)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await started(pilot)
        assert STORE_EMPTY in _empty_text(screen)
        assert "other projects" not in _empty_text(screen)
