"""Moving through the picker: highlight and preview, lazy pages, filter, preview paging."""

from __future__ import annotations

import re
from pathlib import Path

from textual.message import Message
from textual.widgets import Input
from textual.worker import Worker, WorkerState
from tui_support import (
    DEMO_SESSIONS,
    AppFactory,
    notifications,
    picker,
    preview,
    session_list,
    settle,
    started,
    wait_until,
    widget_text,
)

from core.demo import demo_id
from tui.widgets.filter_bar import FilterBar
from tui.widgets.session_list import PAGE_SIZE, SessionList

SEQ = re.compile(r"#(\d+) ·")


def preview_seqs(app: object) -> list[int]:
    """Message numbers shown in the preview, top to bottom (#1 is a conversation's first)."""
    return [int(n) for n in SEQ.findall(widget_text(preview(app), "#preview-messages"))]  # type: ignore[arg-type]


async def test_first_page_is_newest_first_and_previews_the_top_row(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        listed = session_list(app)
        assert len(listed.sessions) == PAGE_SIZE
        assert [s.conversation_id for s in listed.sessions[:3]] == [demo_id(i) for i in range(3)]
        assert listed.highlighted == 0
        assert listed.has_focus
        header = widget_text(preview(app), "#preview-header")
        assert demo_id(0) in header
        assert "Review the retry logic" in header
        page = await app.orchestrator.recent_messages(demo_id(0), 6)  # type: ignore[union-attr]
        assert preview_seqs(app) == sorted(m.seq + 1 for m in page.messages)  # seq counts from 0


async def test_down_and_up_move_the_highlight_and_the_preview_follows(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        orch = app.orchestrator
        assert orch is not None
        listed = session_list(app)
        for expected in (1, 2, 3):
            await pilot.press("down")
            await settle(pilot)
            assert listed.highlighted == expected
            assert demo_id(expected) in widget_text(preview(app), "#preview-header")
            page = await orch.recent_messages(demo_id(expected), 6)
            assert preview_seqs(app) == sorted(
                m.seq + 1 for m in page.messages
            )  # seq counts from 0
            shown = widget_text(preview(app), "#preview-messages")
            assert page.messages[0].content.splitlines()[0] in shown
        await pilot.press("up", "up")
        await settle(pilot)
        assert listed.highlighted == 1
        assert demo_id(1) in widget_text(preview(app), "#preview-header")


async def test_rows_load_a_page_at_a_time_as_the_cursor_nears_the_end(
    demo_dir: Path, make_app: AppFactory
) -> None:
    loaded: list[int] = []

    def hook(message: Message) -> None:
        if isinstance(message, SessionList.Loaded):
            loaded.append(message.count)

    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48), message_hook=hook) as pilot:
        await started(pilot)
        listed = session_list(app)
        assert len(listed.sessions) == PAGE_SIZE
        # Moving within the first rows loads nothing more.
        await pilot.press("down", "down", "down")
        await settle(pilot)
        assert len(listed.sessions) == PAGE_SIZE
        # Near the end of what is loaded, exactly one more page arrives.
        await pilot.press("end")
        await settle(pilot)
        assert len(listed.sessions) == 2 * PAGE_SIZE
        sizes = [len(listed.sessions)]
        while listed.has_more:
            await pilot.press("end")
            await settle(pilot)
            sizes.append(len(listed.sessions))
        assert sizes == list(range(2 * PAGE_SIZE, DEMO_SESSIONS + 1, PAGE_SIZE))
        assert all(count <= PAGE_SIZE for count in loaded)
        ids = [s.conversation_id for s in listed.sessions]
        assert ids == [demo_id(i) for i in range(DEMO_SESSIONS)]
        await pilot.press("end")
        await settle(pilot)
        assert listed.highlighted == DEMO_SESSIONS - 1
        assert demo_id(DEMO_SESSIONS - 1) in widget_text(preview(app), "#preview-header")


async def test_search_keeps_matching_rows_and_counts_them(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await started(pilot)
        filter_input = screen.query_one("#filter", Input)
        listed = session_list(app)
        assert listed.has_focus
        await pilot.press(*"migration")  # typed into the list: it lands in the search
        await settle(pilot)
        assert filter_input.has_focus
        assert len(listed.sessions) > 1
        assert all("migration" in s.title for s in listed.sessions)
        note = widget_text(screen, "#list-note")
        assert f"{len(listed.sessions)} sessions match 'migration'" in note
        assert listed.sessions[0].conversation_id in widget_text(preview(app), "#preview-header")

        # Arrow keys in the search field move the list; the query stays as typed.
        await pilot.press("down")
        await settle(pilot)
        assert listed.highlighted == 1
        assert filter_input.has_focus
        assert filter_input.value == "migration"
        await pilot.press("up")
        await settle(pilot)
        assert listed.highlighted == 0

        # Escape clears the search: every session is back, the note is gone.
        await pilot.press("escape")
        await settle(pilot)
        assert filter_input.value == ""
        assert not screen.query_one("#list-note").display
        assert len(listed.sessions) == PAGE_SIZE
        assert listed.sessions[0].conversation_id == demo_id(0)
        assert listed.has_focus


async def test_enter_in_the_search_opens_the_highlighted_session(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press(*"migration", "down")
        await settle(pilot)
        chosen = session_list(app).highlighted_session
        assert chosen is not None
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is not picker(app)  # what opens depends on the session's agent
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is picker(app)
        assert session_list(app).highlighted_session == chosen


async def test_search_filters_by_cwd_and_branch(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await started(pilot)
        listed = session_list(app)
        for query, check in (
            ("cwd:mobile-app", lambda s: "mobile-app" in s.cwd),
            ("branch:release/4.2", lambda s: s.git_branch == "release/4.2"),
        ):
            screen.query_one("#filter", Input).value = query
            await settle(pilot)
            assert listed.sessions, query
            assert all(check(s) for s in listed.sessions), query


async def test_search_without_matches_says_so(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await started(pilot)
        await pilot.press(*"zzz-nothing")
        await settle(pilot)
        assert session_list(app).sessions == []
        assert "0 sessions match 'zzz-nothing'" in widget_text(screen, "#list-note")
        assert "No session matches the search." in widget_text(preview(app), "#preview-header")
        # Down and enter in the search field with nothing listed do nothing, without error.
        await pilot.press("down", "enter")
        await settle(pilot)
        assert app.screen is picker(app)
        assert screen.query_one("#filter", Input).has_focus


async def test_preview_pages_older_and_newer(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir, preview_size=6)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await started(pilot)
        newest = preview_seqs(app)
        assert len(newest) == 6
        footer = widget_text(preview(app), "#preview-footer")
        assert "page 1" in footer
        assert "alt+↑ older" in footer
        assert "alt+↓ newer" not in footer

        await pilot.press("alt+up")
        await settle(pilot)
        older = preview_seqs(app)
        assert older == [n - 6 for n in newest]
        footer = widget_text(preview(app), "#preview-footer")
        assert "page 2" in footer
        assert "alt+↓ newer" in footer

        await pilot.press("alt+up")
        await settle(pilot)
        assert preview_seqs(app) == [n - 12 for n in newest]

        await pilot.press("alt+down")
        await settle(pilot)
        assert preview_seqs(app) == older
        await pilot.press("alt+down")
        await settle(pilot)
        assert preview_seqs(app) == newest

        await pilot.press("alt+down")
        await settle(pilot)
        assert any("Already at the newest messages." in n for n in notifications(app))

        # Moving to another session starts again at its newest page.
        await pilot.press("alt+up", "down")
        await settle(pilot)
        assert "page 1" in widget_text(preview(app), "#preview-footer")


async def test_preview_of_a_short_session_has_no_older_page(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await started(pilot)
        listed = session_list(app)
        short = next(i for i, s in enumerate(listed.sessions) if s.metrics.messages <= 6)
        listed.highlighted = short
        await settle(pilot)
        assert "alt+↑ older" not in widget_text(preview(app), "#preview-footer")
        before = preview_seqs(app)
        await pilot.press("alt+up")
        await settle(pilot)
        assert preview_seqs(app) == before
        assert any("No older messages." in n for n in notifications(app))


async def test_tool_calls_collapse_to_one_line(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir, preview_size=100)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        text = widget_text(preview(app), "#preview-messages")
        # One quiet line each: the marker, the tool, the gist; no role label of its own.
        tool_lines = [line for line in text.splitlines() if line.startswith("▸ ")]
        assert tool_lines
        assert all(": ok" in line for line in tool_lines if "result" in line)
        assert not any(line.startswith("tool ") for line in text.splitlines())
        assert picker(app).preview_size == 100


async def test_preview_size_comes_from_the_config(demo_dir: Path, make_app: AppFactory) -> None:
    config = demo_dir / "config.toml"
    config.write_text("preview_messages = 3\n" + config.read_text())
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: len(preview_seqs(app)) == 3, what="3 messages")
        assert "last 3 messages per page" in widget_text(preview(app), "#preview-footer")


async def test_a_small_preview_shows_the_newest_message(
    demo_dir: Path, make_app: AppFactory
) -> None:
    """At 80x24 the page overflows the pane: its end (the newest message) is in view."""
    app = make_app(demo_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        pane = preview(app)
        assert pane.max_scroll_y > 0
        assert pane.scroll_y == pane.max_scroll_y
        await pilot.press("alt+up")
        await settle(pilot)
        assert pane.scroll_y == 0  # an older page reads from its top


async def test_the_filter_waits_for_typing_to_pause_and_drops_superseded_queries(
    demo_dir: Path, make_app: AppFactory
) -> None:
    messages: list[Message] = []
    # Long enough that a loaded machine never lets it lapse between two key presses.
    app = make_app(demo_dir, filter_debounce=1.5)
    async with app.run_test(size=(160, 48), message_hook=messages.append) as pilot:
        await started(pilot)
        await pilot.press(*"migration")
        await settle(pilot)

        def queries() -> list[str]:
            # A bubbling message passes the hook once per node it reaches: count each once.
            changes = {id(m): m for m in messages if isinstance(m, FilterBar.Changed)}
            return [m.filter_query for m in changes.values()]

        assert queries() == ["migration"]  # one query for nine keys
        superseded = [
            m
            for m in messages
            if isinstance(m, Worker.StateChanged)
            and m.worker.name == "filtering"
            and m.state is WorkerState.CANCELLED
        ]
        assert len(superseded) == len("migration") - 1
        listed = session_list(app)
        assert listed.sessions
        assert all("migration" in s.title for s in listed.sessions)
        # Clearing applies at once.
        await pilot.press("escape")
        await settle(pilot)
        assert queries() == ["migration", ""]
        assert listed.sessions[0].conversation_id == demo_id(0)
