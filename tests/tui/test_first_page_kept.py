"""The picker keeps its first page for the next start (``FirstPageKeeper``).

What is kept must be what the list shows, cell for cell, as a start shows it: the
next start draws it before its imports and the app's first frame lands on it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import COLOR_SYSTEMS
from rich.style import Style
from textual.pilot import Pilot
from textual.strip import Strip
from tui_support import (
    AppFactory,
    fixed_clock,
    screen_lines,
    session_list,
    settle,
    started,
    wait_until,
    write_from_another_process,
)

from tui import first_page
from tui.first_page import FirstPage
from tui.live import Supervision
from tui.screens.session_picker import SessionPickerScreen
from tui.shared.ages import AGE_WIDTH, ago

QUICK = Supervision(store_poll_s=0.05, tick_s=0.2, debounce_ms=50, rescan_s=0.5)


def kept_file(data_dir: Path) -> FirstPage:
    return FirstPage(data_dir, first_page.start_key(["--all"], data_dir))


def cell_style(strip: Strip, column: int) -> Style:
    """The style of the cell at ``column`` in a line of the screen."""
    at = 0
    for segment in strip:
        at += segment.cell_length
        if at > column:
            return segment.style or Style()
    raise AssertionError(f"no cell {column}")


async def kept_stamp(pilot: Pilot[None]) -> int:
    screen = pilot.app.screen
    assert isinstance(screen, SessionPickerScreen)
    return await screen.orchestrator.change_count()


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)])
async def test_the_kept_page_is_what_the_list_shows(
    demo_dir: Path, make_app: AppFactory, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A terminal of every colour, so that the list's and the screen's colours differ.
    monkeypatch.setenv("COLORTERM", "truecolor")
    monkeypatch.setenv("TERM", "xterm-256color")
    page = kept_file(demo_dir)
    app = make_app(demo_dir, first_page=page)
    async with app.run_test(size=size) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: page.load() is not None, what="the kept page")
        rows = page.load()
        assert rows is not None
        assert rows.size == size
        assert rows.compact == session_list(app).compact
        assert rows.compact == (size[0] < 110 and size[1] < 36)  # one-line rows when short
        assert rows.stamp == await kept_stamp(pilot)
        shown = screen_lines(app)
        x, y = rows.origin
        assert len(rows.lines) == session_list(app).scrollable_content_region.height
        for i, line in enumerate(rows.lines):
            assert shown[y + i][x : x + len(line)] == line, f"line {i}"
        # The list's colours: the background the app paints behind a row not highlighted.
        last_row = app.screen._compositor.render_strips()[y + len(rows.lines) - 1]
        behind = cell_style(last_row, x + 1)
        assert app.console.color_system == "truecolor"
        system = COLOR_SYSTEMS["truecolor"]
        painted = Style(bgcolor=behind.bgcolor).render("x", color_system=system)
        assert painted.split("m")[0].removeprefix("\x1b[") in rows.rows_colours
        # Each row's age, where the next start writes it afresh.
        listed = session_list(app).sessions
        assert rows.ages
        for (line_no, column, _), session in zip(rows.ages, listed, strict=False):
            age = rows.lines[line_no][column : column + AGE_WIDTH]
            assert age == f"{ago(session.last_interacted_at, fixed_clock()):>{AGE_WIDTH}}"


async def test_only_the_list_as_a_start_shows_it_is_kept(
    demo_dir: Path, make_app: AppFactory
) -> None:
    page = kept_file(demo_dir)
    app = make_app(demo_dir, first_page=page, supervise=QUICK)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: page.load() is not None, what="the kept page")
        before = page.load()
        assert before is not None
        await pilot.press(*"bisect")  # a search is not what a start shows
        await write_from_another_process(demo_dir)  # the store moves on meanwhile
        await wait_until(
            pilot,
            lambda: any("Bisect the flaky" in line for line in screen_lines(app)),
            what="the new session found by the search",
        )
        await pilot.pause(0.8)  # past the keeper's quiet time
        still = page.load()
        assert still is not None
        assert (still.stamp, still.lines) == (before.stamp, before.lines)

        await pilot.press("escape")  # the search cleared: the list a start shows again
        await wait_until(
            pilot,
            lambda: (rows := page.load()) is not None and rows.stamp != before.stamp,
            what="the page kept again",
        )
        rows = page.load()
        assert rows is not None
        assert any("Bisect the flaky login test" in line for line in rows.lines)


async def test_a_resized_terminal_keeps_the_page_at_its_new_size(
    demo_dir: Path, make_app: AppFactory
) -> None:
    page = kept_file(demo_dir)
    app = make_app(demo_dir, first_page=page)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: page.load() is not None, what="the kept page")
        await pilot.resize_terminal(90, 30)
        await wait_until(
            pilot,
            lambda: (rows := page.load()) is not None and rows.size == (90, 30),
            what="the page kept at the new size",
        )
        await settle(pilot)
        rows = page.load()
        assert rows is not None
        shown = screen_lines(app)
        x, y = rows.origin
        assert all(shown[y + i][x : x + len(line)] == line for i, line in enumerate(rows.lines))


async def test_an_empty_list_keeps_no_page(tmp_path: Path, make_app: AppFactory) -> None:
    data_dir = tmp_path / "empty"
    data_dir.mkdir()
    page = kept_file(data_dir)
    stale = {"format": first_page.FORMAT, "key": page.key, "rows": {}}
    Path(page.path).write_text(json.dumps(stale))  # left by a start when it listed sessions
    app = make_app(data_dir, first_page=page)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: not Path(page.path).exists(), what="the page dropped")
