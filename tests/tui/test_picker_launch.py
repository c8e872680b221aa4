"""New delegate: the launch form, the new row and its cells, failed runs."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Select, TextArea
from tui_support import (
    DEMO_SESSIONS,
    FAIL_ERROR,
    AppFactory,
    history_cells,
    insert_sessions,
    preview,
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

from core.demo import demo_id
from core.models import RunStatus, SessionState
from tui.modals.follow_up import FollowUpPrompt
from tui.modals.new_delegate import NewDelegate
from tui.widgets.history import (
    DelegateFinishedCell,
    DelegateLaunchedCell,
    FollowUpCompletedCell,
    FollowUpStartedCell,
    RunFailedCell,
)
from tui.widgets.session_list import session_row


def runs_over(app: object) -> bool:
    orchestrator = app.orchestrator  # type: ignore[attr-defined]
    return orchestrator is not None and not orchestrator.running()


async def open_form(pilot: object) -> NewDelegate:
    await pilot.press("ctrl+n")  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]
    form = pilot.app.screen  # type: ignore[attr-defined]
    assert isinstance(form, NewDelegate)
    return form


async def test_new_delegate_launches_into_a_new_row_at_the_top(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        form = await open_form(pilot)
        assert form.query_one("#launch-cwd", Input).value == "/tmp"
        assert form.query_one("#launch-agent", Select).value == "echo"
        assert form.query_one("#launch-prompt", TextArea).has_focus
        await type_text(pilot, "Audit the cache headers\nand list the gaps")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not isinstance(app.screen, NewDelegate)
        await wait_until(pilot, lambda: runs_over(app), what="the launch to finish")
        await wait_until(
            pilot,
            lambda: (
                [type(c) for c in history_cells(app)]
                == [DelegateLaunchedCell, DelegateFinishedCell]
            ),
            what="launched and finished cells",
        )
        listed = session_list(app)
        top = listed.sessions[0]
        assert top.title == "Audit the cache headers"
        assert top.agent_id == "echo"
        assert top.cwd == "/tmp"
        assert top.state is SessionState.IDLE
        assert listed.highlighted == 0
        assert listed.sessions[1].conversation_id == demo_id(0)
        launched = str(history_cells(app)[0].render())
        assert "▶ launched" in launched
        assert "Audit the cache headers" in launched
        await wait_until(
            pilot,
            lambda: (
                "[echo] turn 1: Audit the cache headers"
                in widget_text(preview(app), "#preview-messages")
            ),
            what="the reply in the preview",
        )
        await wait_until(
            pilot,
            lambda: static_text(status_panel(app)).startswith(f"{DEMO_SESSIONS + 1} reusable"),
            what="the status panel to count the new session",
        )


async def test_the_launch_form_refuses_an_empty_prompt_and_a_missing_folder(
    data_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        form = await open_form(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is form
        assert "A delegate needs a prompt" in widget_text(form, "#launch-error")
        await type_text(pilot, "do it")
        form.query_one("#launch-cwd", Input).value = "/definitely/not/here"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is form
        assert "/definitely/not/here is not a directory." in widget_text(form, "#launch-error")
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, NewDelegate)
        assert app.orchestrator is not None
        assert await app.orchestrator.history(5) == []


async def test_a_failed_launch_shows_its_error_and_the_session_stays_usable(
    data_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        form = await open_form(pilot)
        form.query_one("#launch-agent", Select).value = "failing"
        await type_text(pilot, "please explode")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: runs_over(app), what="the failing launch")
        await wait_until(
            pilot,
            lambda: any(isinstance(c, RunFailedCell) for c in history_cells(app)),
            what="a failed cell",
        )
        failed = next(c for c in history_cells(app) if isinstance(c, RunFailedCell))
        assert "✗ run failed" in str(failed.render())
        assert FAIL_ERROR in str(failed.render())
        assert failed.has_class("-failed")
        await wait_until(
            pilot,
            lambda: FAIL_ERROR in widget_text(preview(app), "#preview-messages"),
            what="the error in the preview",
        )
        assert "run failed" in widget_text(preview(app), "#preview-messages")
        row = session_list(app).sessions[0]
        assert row.last_run_status is RunStatus.FAILED
        assert row.state is SessionState.IDLE
        assert "✗ last run failed" in str(session_row(row, app.clock()).renderables[0])

        # The session takes a follow-up, which succeeds.
        await pilot.press("ctrl+f")
        await settle(pilot)
        assert isinstance(app.screen, FollowUpPrompt)
        await type_text(pilot, "try again gently")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: runs_over(app), what="the follow-up")
        await wait_until(
            pilot,
            lambda: isinstance(history_cells(app)[-1], FollowUpCompletedCell),
            what="a completed cell",
        )
        assert "[failing] turn 2: try again gently" in widget_text(
            preview(app), "#preview-messages"
        )
        assert session_list(app).sessions[0].last_run_status is RunStatus.COMPLETED


async def test_a_failed_follow_up_shows_a_failed_cell(data_dir: Path, make_app: AppFactory) -> None:
    await insert_sessions(
        data_dir, [session_with("fails-1", ["hello", "hi"], title="flaky", agent_id="failing")]
    )
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await type_text(pilot, "now explode")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: runs_over(app), what="the follow-up")
        await wait_until(
            pilot,
            lambda: [type(c) for c in history_cells(app)] == [FollowUpStartedCell, RunFailedCell],
            what="started and failed cells",
        )
        assert FAIL_ERROR in str(history_cells(app)[1].render())
        await wait_until(
            pilot,
            lambda: FAIL_ERROR in widget_text(preview(app), "#preview-messages"),
            what="the error in the preview",
        )
        assert session_list(app).sessions[0].last_run_status is RunStatus.FAILED
