"""How the list looks: quiet idle rows, coloured signals, rows that stay put when the
list gains focus, and at least eight sessions on an 80x24 terminal."""

from __future__ import annotations

from pathlib import Path

from tui_support import (
    AppFactory,
    fixed_clock,
    screen_lines,
    session_list,
    settle,
    started,
)

from core.demo import generate
from core.tokens import count_tokens
from tui.widgets.session_row import session_row


async def test_idle_is_dim_and_ready_carries_the_colour(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        rows = {s.state.value: s for s in session_list(app).sessions}
        idle_badge = session_row(rows["idle"], fixed_clock()).renderables[0].spans[0]  # type: ignore[attr-defined]
        ready_badge = session_row(rows["ready"], fixed_clock()).renderables[0].spans[0]  # type: ignore[attr-defined]
        assert idle_badge.style == "dim"
        assert "cyan" in str(ready_badge.style)


async def test_the_rows_do_not_move_when_the_list_gains_focus(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await started(pilot)
        listed = session_list(app)
        assert listed.has_focus
        focused = screen_lines(app)
        screen.filter_bar.focus_input()
        await settle(pilot)
        assert not listed.has_focus
        blurred = screen_lines(app)
        title = listed.sessions[1].title[:30]
        where = [(i, line.index(title)) for i, line in enumerate(focused) if title in line]
        assert where
        assert where == [(i, line.index(title)) for i, line in enumerate(blurred) if title in line]


async def test_an_80x24_terminal_shows_at_least_eight_sessions(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        text = "\n".join(screen_lines(app))
        firsts = [s.title[:20] for s in session_list(app).sessions[:12]]
        shown = sum(1 for line in screen_lines(app) if any(t in line for t in firsts))
        assert shown >= 8, text


def test_the_demo_store_spreads_context_over_every_meter_level_and_varies_titles() -> None:
    from core.tokens import meter_level

    sessions = list(generate(60, 1_800_000_000_000_000, count_tokens))
    levels = set()
    for demo in sessions:
        used = demo.context_tokens
        assert used is not None
        levels.add(meter_level(used, demo.session.context_limit))
    assert levels == {"ok", "warn", "handoff", "force"}
    titles = [d.session.title for d in sessions]
    # No title comes back within the next twenty rows.
    for i, title in enumerate(titles):
        assert title not in titles[i + 1 : i + 21], (i, title)


async def test_a_session_still_being_counted_says_so_instead_of_its_turns(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        session = session_list(app).sessions[0]
    counted = session_row(session, fixed_clock()).renderables[1].plain  # type: ignore[attr-defined]
    listed = session_row(session.model_copy(update={"counting": True}), fixed_clock())
    listed_line = listed.renderables[1].plain  # type: ignore[attr-defined]

    assert " turn" in counted
    assert "counting…" in listed_line
    assert " turn" not in listed_line
