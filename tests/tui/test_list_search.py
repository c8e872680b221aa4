"""Typing searches every session's content: ranked rows with the matching snippet
highlighted, a query that cannot run explained under the field, pages on demand,
and the results re-run when another process changes the sessions."""

from __future__ import annotations

from pathlib import Path

from another_process import ARRIVED_ID
from rich.text import Text
from textual.widgets import Input
from tui_support import (
    AppFactory,
    insert_sessions,
    notifications,
    session_list,
    session_with,
    settle,
    started,
    wait_until,
    widget_text,
    write_from_another_process,
)

from tui.live import Supervision
from tui.screens.session_picker import SessionPickerScreen
from tui.widgets.session_list import HIGHLIGHT_STYLE

QUICK = Supervision(store_poll_s=0.05, tick_s=0.2, debounce_ms=50, rescan_s=0.5)
LOGIN = "10910000-0000-4000-8000-000000000000"
NOTES = "2e1ea5e0-0000-4000-8000-000000000000"


async def _two_sessions(data_dir: Path) -> None:
    await insert_sessions(
        data_dir,
        [
            session_with(
                LOGIN,
                [
                    "Fix the login page",
                    "I traced it: the token refresh races the expiry check on slow clocks.",
                    "Thanks, ship it",
                    "Shipped.",
                ],
                title="Fix the login page",
                minutes_ago=30,
            ),
            session_with(
                NOTES,
                ["Write the release notes", "Done: five bullet points."],
                title="Write the release notes",
                minutes_ago=1,
            ),
        ],
    )


def _search(screen: SessionPickerScreen, query: str) -> None:
    screen.query_one("#filter", Input).value = query


def _row_lines(screen: SessionPickerScreen, index: int) -> list[Text]:
    prompt = session_list(screen.app).get_option_at_index(index).prompt
    return list(prompt.renderables)  # type: ignore[union-attr]


def _highlighted_words(line: Text) -> list[str]:
    return [line.plain[s.start : s.end] for s in line.spans if s.style == HIGHLIGHT_STYLE]


async def test_a_phrase_from_the_middle_of_a_conversation_finds_it_with_the_match_highlighted(
    data_dir: Path, make_app: AppFactory
) -> None:
    await _two_sessions(data_dir)
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await started(pilot)
        assert [s.conversation_id for s in session_list(app).sessions] == [NOTES, LOGIN]
        _search(screen, '"expiry check"')
        await wait_until(
            pilot, lambda: len(session_list(app).sessions) == 1, what="the one search result"
        )
        assert session_list(app).sessions[0].conversation_id == LOGIN
        snippet_line = _row_lines(screen, 0)[-1]
        assert "the token refresh races the expiry check" in snippet_line.plain
        assert _highlighted_words(snippet_line) == ["expiry check"]
        assert "1 session matches" in widget_text(screen, "#list-note")
        # Clearing the field brings back the plain list, without snippets.
        _search(screen, "")
        await wait_until(pilot, lambda: len(session_list(app).sessions) == 2, what="every row")
        assert len(_row_lines(screen, 1)) == 2


async def test_a_query_that_cannot_run_is_explained_under_the_field(
    data_dir: Path, make_app: AppFactory
) -> None:
    await _two_sessions(data_dir)
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        screen = await started(pilot)
        _search(screen, "state:sleepy")
        await wait_until(
            pilot,
            lambda: "state" in widget_text(screen, "#list-note"),
            what="the reason under the field",
        )
        note = widget_text(screen, "#list-note")
        assert "sleepy" in note
        assert session_list(app).sessions == []
        assert notifications(app) == []  # said where it was typed, not in a toast
        # Fixing the query clears the reason.
        _search(screen, "state:idle")
        await wait_until(pilot, lambda: len(session_list(app).sessions) == 2, what="the rows")
        assert "sleepy" not in widget_text(screen, "#list-note")


async def test_search_results_page_on_demand_through_the_next_cursor(
    data_dir: Path, make_app: AppFactory
) -> None:
    many = [
        session_with(
            f"{n:08x}-0000-4000-8000-000000000000",
            [f"Tune the retry budget, take {n}", "done"],
            title=f"Tune the retry budget, take {n}",
            minutes_ago=n + 1,
        )
        for n in range(60)
    ]
    await insert_sessions(data_dir, many)
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await started(pilot)
        listed = session_list(app)
        _search(screen, "retry")
        await wait_until(pilot, lambda: len(listed.sessions) == listed.page_size, what="page 1")
        assert listed.has_more
        assert "/ 25+" in widget_text(screen, "#list-position")
        while listed.has_more:
            await pilot.press("end")
            await settle(pilot)
        ids = [s.conversation_id for s in listed.sessions]
        assert sorted(ids) == sorted(f.session.conversation_id for f in many)
        await pilot.press("end")
        await settle(pilot)
        assert "60 / 60" in widget_text(screen, "#list-position")


async def test_search_results_follow_sessions_another_process_writes(
    data_dir: Path, make_app: AppFactory
) -> None:
    await _two_sessions(data_dir)
    app = make_app(data_dir, supervise=QUICK)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await started(pilot)
        _search(screen, "flaky")
        await wait_until(pilot, lambda: "0 sessions match" in widget_text(screen, "#list-note"))
        await write_from_another_process(data_dir)
        await wait_until(
            pilot,
            lambda: [s.conversation_id for s in session_list(app).sessions] == [ARRIVED_ID],
            what="the new matching session",
        )
        highlighted = [w for line in _row_lines(screen, 0) for w in _highlighted_words(line)]
        assert highlighted == ["flaky"]


async def test_the_position_indicator_counts_the_highlighted_row_against_the_total(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await started(pilot)
        await wait_until(
            pilot, lambda: "1 / 200" in widget_text(screen, "#list-position"), what="1 / 200"
        )
        session_list(app).focus()
        await pilot.press("down", "down")
        await settle(pilot)
        assert "3 / 200" in widget_text(screen, "#list-position")


async def test_a_match_in_the_title_is_highlighted_in_the_title_itself(
    data_dir: Path, make_app: AppFactory
) -> None:
    await _two_sessions(data_dir)
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await started(pilot)
        _search(screen, "release")
        await wait_until(pilot, lambda: len(session_list(app).sessions) == 1, what="the result")
        lines = _row_lines(screen, 0)
        assert len(lines) == 2  # no snippet line repeating the title
        assert _highlighted_words(lines[0]) == ["release"]
