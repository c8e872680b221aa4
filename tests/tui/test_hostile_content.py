"""Transcript content is text: markup, escapes and controls never reach Rich or the terminal."""

from __future__ import annotations

import re
from pathlib import Path

from rich.cells import cell_len
from textual.widgets import Input, Static
from tui_support import (
    MARKUP,
    RAW_CONTROL,
    AppFactory,
    history_cells,
    hostile_sessions,
    insert_sessions,
    notifications,
    preview,
    raw_segments_text,
    screen_lines,
    screen_text,
    session_list,
    settle,
    started,
    static_text,
    type_text,
    wait_until,
    widget_text,
)

from tui.modals.confirm_dismiss import ConfirmDismiss
from tui.modals.follow_up import FollowUpPrompt
from tui.modals.new_delegate import NewDelegate
from tui.widgets.history import FollowUpCompletedCell


async def test_hostile_messages_show_as_text(data_dir: Path, make_app: AppFactory) -> None:
    await insert_sessions(data_dir, hostile_sessions())
    app = make_app(data_dir, preview_size=10)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        shown = widget_text(preview(app), "#preview-messages", width=150)
        assert MARKUP in shown
        assert "\\x1b[31mred text\\x1b[0m then \\x1b]0;pwned\\x07 title" in shown
        assert "bell\\x07 backspace\\x08 cr\\x0dnul\\x00 del\\x7f csi\\x9b end" in shown
        assert "line 12" in shown
        assert "line 13" not in shown
        assert "… 188 more lines" in shown
        assert "漢字テスト 한국어" in shown

        # What reaches the terminal: escaped text, no raw control character at all.
        raw = raw_segments_text(app)
        assert not RAW_CONTROL.search(raw), RAW_CONTROL.findall(raw)
        on_screen = screen_text(app)
        assert MARKUP in on_screen
        assert "\\x1b[31mred text" in on_screen
        assert "漢字テスト" in on_screen
        # The row title keeps its markup literally and its escape escaped.
        assert "[/] cleanup [bold]now\\x1b[2J 漢字" in on_screen
        # Wide and combining characters keep every row exactly one screen wide.
        assert {cell_len(line) for line in screen_lines(app)} == {160}


async def test_the_long_message_is_cut_with_a_count(data_dir: Path, make_app: AppFactory) -> None:
    await insert_sessions(data_dir, hostile_sessions())
    app = make_app(data_dir, preview_size=10)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        text = widget_text(preview(app), "#preview-messages", width=400)
        # Markdown joins the kept lines into one paragraph; the rest are counted.
        kept = " ".join(f"line {i}" for i in range(1, 13))
        assert f"{kept} … 188 more lines" in re.sub(r"\s+", " ", text)
        assert "line 13" not in text


async def test_hostile_titles_in_modals_notifications_and_cells(
    data_dir: Path, make_app: AppFactory
) -> None:
    await insert_sessions(data_dir, hostile_sessions())
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await started(pilot)
        # The follow-up box names the session literally.
        await pilot.press("ctrl+f")
        await settle(pilot)
        box = app.screen
        assert isinstance(box, FollowUpPrompt)
        assert "[/] cleanup [bold]now\\x1b[2J" in static_text(box.query(Static).first())
        # A prompt full of markup goes through as typed and comes back literally.
        await type_text(pilot, "[red]still[/red] \x1b[1m text")
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: any(isinstance(c, FollowUpCompletedCell) for c in history_cells(app)),
            what="the completed cell",
        )
        cell = next(c for c in history_cells(app) if isinstance(c, FollowUpCompletedCell))
        assert "[red]still[/red] \\x1b[1m text" in str(cell.render())
        await wait_until(
            pilot,
            lambda: "[red]still[/red]" in widget_text(preview(app), "#preview-messages"),
            what="the reply",
        )

        # The confirm modal names it literally too.
        await pilot.press("ctrl+d")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, ConfirmDismiss)
        assert "[/] cleanup [bold]now\\x1b[2J" in static_text(modal.query_one(Static))
        # The notification offering undo shows the title as text (no markup error).
        await pilot.press("ctrl+d")
        await settle(pilot)
        assert any("[/] cleanup [bold]now" in n for n in notifications(app))
        assert not RAW_CONTROL.search(raw_segments_text(app))
        assert "[/] cleanup [bold]now" in screen_text(app)
        assert [s.conversation_id for s in session_list(app).sessions] == ["plain-2"]


async def test_a_hostile_working_directory_is_reported_as_typed(
    data_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        form = app.screen
        assert isinstance(form, NewDelegate)
        await type_text(pilot, "go")
        form.query_one("#launch-cwd", Input).value = "/no/[/]such[bold]dir"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is form
        error = widget_text(form, "#launch-error")
        assert "/no/[/]such[bold]dir is not a directory." in error
