"""An 80x24 terminal is usable: the preview shows the last messages without focusing
it, ctrl+l adds the history without hiding the preview, every form scrolls so its
fields and its send key stay in reach, and the footer keeps quit."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Select, TextArea
from tui_support import (
    AppFactory,
    insert_sessions,
    picker,
    preview,
    screen_lines,
    screen_text,
    session_list,
    session_with,
    settle,
    started,
    wait_until,
    widget_text,
)

from core.models import Message
from tui.modals.follow_up import FollowUpPrompt
from tui.modals.new_delegate import NewDelegate
from tui.widgets.history import HistoryTimeline

SMALL = (80, 24)


async def _newest(pilot: Pilot[None], count: int) -> list[Message]:
    app = pilot.app
    session = session_list(app).highlighted_session  # type: ignore[arg-type]
    assert session is not None
    page = await app.orchestrator.recent_messages(session.conversation_id, count)  # type: ignore[attr-defined]
    return list(page.messages)


def _on_screen(pilot: Pilot[None], message: Message) -> bool:
    return message.content.splitlines()[0][:30] in screen_text(pilot.app)  # type: ignore[arg-type]


def _in_view(widget: Widget) -> bool:
    """Drawn on the screen now (scrolled out of view, a widget has no region)."""
    region = widget.region
    return region.height > 0 and widget.screen.region.contains_region(region)


async def test_the_preview_shows_the_last_messages_without_focusing_it(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        assert app.focused is not preview(app)
        newest = await _newest(pilot, 2)
        assert all(_on_screen(pilot, m) for m in newest), screen_text(app)
        # Each of the last two with its heading (who, its number), not one line of it.
        session = session_list(app).highlighted_session
        assert session is not None
        total = session.metrics.messages
        for number in (total, total - 1):
            assert f"#{number} ·" in screen_text(app), screen_text(app)
        assert len(session_list(app).sessions) >= 8
        assert sum(1 for line in screen_lines(app) if line.startswith(("idle", "ready"))) >= 8


async def test_ctrl_l_shows_the_history_under_the_preview_not_instead_of_it(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        await pilot.press("ctrl+l")
        await settle(pilot)
        history = picker(app).query_one(HistoryTimeline)
        assert history.display
        assert _in_view(history)
        assert preview(app).display
        assert _in_view(preview(app))
        [newest] = await _newest(pilot, 1)
        assert _on_screen(pilot, newest), screen_text(app)


async def test_the_footer_keeps_quit(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        footer = screen_lines(app)[-1]
        assert "^q" in footer
        assert "Quit" in footer


async def _every_field_in_reach(pilot: Pilot[None], hint: Widget) -> None:
    """Tab through the form: each focused field is drawn, and the send key's line too."""
    seen = set()
    for _ in range(12):
        focused = pilot.app.focused
        assert focused is not None
        assert _in_view(focused), f"{focused} is out of view"
        assert _in_view(hint), f"the send key is out of view, focus on {focused}"
        seen.add(focused.id)
        await pilot.press("tab")
        await settle(pilot)
    assert len(seen) >= 2


async def test_the_new_session_form_scrolls_to_each_field_and_keeps_its_send_key(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewDelegate), what="the form")
        form = app.screen
        await settle(pilot)
        hint = form.query_one("#launch-hint")
        assert "ctrl+s launch" in str(hint.render())
        assert _in_view(hint)
        form.query_one("#launch-capsule", Select).focus()
        await settle(pilot)
        assert _in_view(form.query_one("#launch-capsule", Select))
        await _every_field_in_reach(pilot, hint)


async def test_a_refusal_in_the_new_session_form_is_in_view(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewDelegate), what="the form")
        await pilot.press("ctrl+s")  # no prompt: refused, with the reason
        await settle(pilot)
        error = app.screen.query_one("#launch-error")
        assert "A delegate needs a prompt" in str(error.render())
        assert _in_view(error)


async def test_the_follow_up_box_keeps_its_send_key(demo_dir: Path, make_app: AppFactory) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FollowUpPrompt), what="the box")
        await settle(pilot)
        box = app.screen
        box.query_one(TextArea).insert("\n".join(f"line {n}" for n in range(40)))
        await settle(pilot)
        assert _in_view(box.query_one("#follow-up-hint"))
        assert _in_view(box.query_one(TextArea))


async def test_a_long_title_keeps_to_one_line_in_the_preview(
    data_dir: Path, make_app: AppFactory
) -> None:
    title = "Refactor the billing module so that " + "every invoice line is rounded once " * 4
    await insert_sessions(
        data_dir,
        [session_with("5e55a0c1-0000-4000-8000-00000000000a", [title, "ok"], title=title)],
    )
    app = make_app(data_dir)
    async with app.run_test(size=SMALL) as pilot:
        await started(pilot)
        header = widget_text(preview(app), "#preview-header").splitlines()
        assert header[0].startswith("Refactor the billing module")
        assert header[0].rstrip().endswith("…")
        assert len(header[0].rstrip()) <= preview(app).scrollable_content_region.width
