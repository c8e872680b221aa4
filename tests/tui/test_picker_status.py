"""The empty state and the status panel, which follows the core's events live."""

from __future__ import annotations

from pathlib import Path

from tui_support import (
    DEMO_SESSIONS,
    AppFactory,
    insert_sessions,
    picker,
    session_list,
    session_with,
    settle,
    started,
    static_text,
    status_panel,
    type_text,
    wait_until,
    widget_text,
)


def status(app: object) -> str:
    return static_text(status_panel(app))  # type: ignore[arg-type]


async def test_a_fresh_store_explains_how_to_start(data_dir: Path, make_app: AppFactory) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await started(pilot)
        empty = screen.query_one("#empty-state")
        assert empty.display
        assert not session_list(app).display
        text = widget_text(screen, "#empty-state")
        assert "No delegate sessions yet." in text
        assert "ctrl+n starts a new session" in text
        assert "delegate demo --sessions 50" in text
        assert "f5 looks again" in text
        assert "delegate import --report" in text
        assert status(app).startswith("0 reusable · 0 B on disk · 0 running now")
        # The keys the empty state names work at once (the filter box does not eat them).
        await pilot.press("f1")
        await settle(pilot)
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape", "ctrl+n")
        await settle(pilot)
        assert type(app.screen).__name__ == "NewDelegate"


async def test_the_first_launch_replaces_the_empty_state(
    data_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await started(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        await type_text(pilot, "first job")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: session_list(app).display, what="the list to show")
        assert not screen.query_one("#empty-state").display
        assert session_list(app).has_focus
        await wait_until(
            pilot, lambda: status(app).startswith("1 reusable (1 idle)"), what="1 reusable"
        )


async def test_status_counts_states_footprint_and_fullest_meters(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        assert app.orchestrator is not None
        counts = await app.orchestrator.status_counts()
        text = status(app)
        first = text.splitlines()[0]
        assert first.startswith(f"{DEMO_SESSIONS} reusable ({counts['idle']} idle, ")
        assert f"{counts['ready']} ready" in first
        assert "KiB on disk" in first
        assert first.rstrip().endswith("0 running now")
        fullest = await app.orchestrator.fullest_sessions(3)
        second = text.splitlines()[1]
        assert second.startswith("fullest: ")
        for session in fullest:
            assert f"{session.agent_id} {session.conversation_id[:8]}" in second
        assert "% left" in second


async def test_status_follows_dismissals_launches_and_runs(
    data_dir: Path, make_app: AppFactory
) -> None:
    await insert_sessions(
        data_dir,
        [
            session_with("a-1", ["one", "two"], title="first", minutes_ago=3),
            session_with("b-2", ["three", "four"], title="second", minutes_ago=9),
        ],
    )
    app = make_app(data_dir, undo_seconds=0.2)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        assert status(app).startswith("2 reusable (2 idle)")

        await pilot.press("ctrl+d", "ctrl+d")
        await wait_until(
            pilot, lambda: status(app).startswith("1 reusable (1 idle)"), what="one dismissed"
        )

        # A run in flight shows as running now, then the count settles.
        assert app.orchestrator is not None
        await app.orchestrator.delegate("wait for it", "stalled", cwd="/tmp")
        await wait_until(
            pilot,
            lambda: (
                "2 reusable (1 idle, 1 running) " in status(app) and "1 running now" in status(app)
            ),
            what="the running launch",
        )
        for handle in app.orchestrator.running():
            handle.cancel()
        await wait_until(
            pilot, lambda: status(app).startswith("2 reusable (2 idle)"), what="the run to end"
        )
        assert "0 running now" in status(app)
        assert picker(app).is_current
