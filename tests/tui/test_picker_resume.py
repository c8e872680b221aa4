"""Resume: the follow-up box, the reply in the preview, history cells, busy refusals."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import TextArea
from tui_support import (
    AppFactory,
    history_cells,
    insert_sessions,
    open_gate,
    picker,
    preview,
    session_list,
    session_with,
    settle,
    started,
    type_text,
    wait_until,
    widget_text,
)

from core.demo import demo_id
from core.models import RunStatus, SessionState
from tui.modals.follow_up import FollowUpPrompt
from tui.widgets.history import FollowUpCompletedCell, FollowUpStartedCell


def runs_over(app: object) -> bool:
    orchestrator = app.orchestrator  # type: ignore[attr-defined]
    return orchestrator is not None and not orchestrator.running()


async def test_resume_sends_a_follow_up_and_the_reply_appears(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        turns_before = session_list(app).sessions[0].metrics.turns
        await pilot.press("ctrl+f")
        await settle(pilot)
        box = app.screen
        assert isinstance(box, FollowUpPrompt)
        assert box.session.conversation_id == demo_id(0)
        assert box.query_one(TextArea).has_focus
        await pilot.press(*"go")
        await type_text(pilot, " check the staging logs")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not isinstance(app.screen, FollowUpPrompt)
        await wait_until(pilot, lambda: runs_over(app), what="the follow-up to finish")
        await wait_until(
            pilot,
            lambda: "check the staging logs" in widget_text(preview(app), "#preview-messages"),
            what="the reply in the preview",
        )
        shown = widget_text(preview(app), "#preview-messages")
        assert "[review] turn" in shown
        assert "go check the staging logs" in shown
        row = session_list(app).sessions[0]
        assert row.conversation_id == demo_id(0)
        assert row.state is SessionState.IDLE
        assert row.metrics.turns == turns_before + 1

        cells = history_cells(app)
        assert [type(c) for c in cells] == [FollowUpStartedCell, FollowUpCompletedCell]
        started_event, completed_event = (c.event for c in cells)
        assert started_event.run_id == completed_event.run_id  # type: ignore[union-attr]
        assert completed_event.status is RunStatus.COMPLETED  # type: ignore[union-attr]
        cell_text = str(cells[1].render())
        assert "✓ follow-up completed" in cell_text
        assert "reviewer" in cell_text
        assert "go check the staging logs" in cell_text
        assert "tokens" in cell_text


async def test_the_follow_up_key_opens_the_box_and_escape_closes_it(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        await pilot.press("down", "ctrl+f")
        await settle(pilot)
        assert isinstance(app.screen, FollowUpPrompt)
        assert app.screen.session.conversation_id == demo_id(1)
        await type_text(pilot, "never sent")
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, FollowUpPrompt)
        assert history_cells(app) == []
        assert app.orchestrator is not None
        assert (await app.orchestrator.history(10)) == []


async def test_an_empty_follow_up_is_refused_in_the_box(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        box = app.screen
        assert isinstance(box, FollowUpPrompt)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is box
        assert "A follow-up needs a prompt" in widget_text(box, "#follow-up-error")
        # Whitespace is no prompt either.
        await type_text(pilot, "  \n\t ")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is box
        assert app.orchestrator is not None
        assert (await app.orchestrator.history(10)) == []


async def test_busy_session_refuses_a_second_resume_with_the_reason(
    data_dir: Path, make_app: AppFactory
) -> None:
    # The session belongs to the gated agent: its reply stops after one word
    # until the test opens the gate.
    gated = session_with("gated-1", ["explain the build", "make"], title="held", agent_id="gated")
    await insert_sessions(data_dir, [gated])
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await started(pilot)
        await pilot.press("ctrl+f")
        await settle(pilot)
        await type_text(pilot, "write the release notes now please")
        await pilot.press("ctrl+s")
        await wait_until(
            pilot,
            lambda: session_list(app).sessions[0].state is SessionState.RUNNING,
            what="the row to show the run",
        )
        # The reply streams into the preview while the run goes on.
        await wait_until(
            pilot,
            lambda: "streaming" in widget_text(preview(app), "#preview-live"),
            what="streamed words",
        )
        assert not runs_over(app)

        # The box opens anyway and says why a send would be refused now.
        await pilot.press("ctrl+f")
        await settle(pilot)
        box = app.screen
        assert isinstance(box, FollowUpPrompt)
        assert "agent_busy" in widget_text(box, "#follow-up-problem")
        await pilot.press("escape")
        await settle(pilot)

        # Once the run ends, the session takes follow-ups again.
        open_gate(data_dir)
        await wait_until(pilot, lambda: runs_over(app), seconds=10, what="the gated run")
        await wait_until(
            pilot,
            lambda: session_list(app).sessions[0].state is SessionState.IDLE,
            what="the row to be idle",
        )
        await pilot.press("ctrl+f")
        await settle(pilot)
        assert isinstance(app.screen, FollowUpPrompt)


async def test_a_follow_up_refused_by_the_core_says_why(
    demo_dir: Path, make_app: AppFactory
) -> None:
    """The box was opened while idle, but a run started before it was sent."""
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await started(pilot)
        assert app.orchestrator is not None
        await pilot.press("ctrl+f")
        await settle(pilot)
        await type_text(pilot, "second")
        # Another front end claims the session first, with the stalled agent.
        await app.orchestrator.delegate("first", "stalled", conversation_id=demo_id(0))
        await pilot.press("ctrl+s")
        await settle(pilot)
        # The box stays open with the prompt and the reason; esc goes back.
        assert isinstance(app.screen, FollowUpPrompt)
        assert "agent_busy" in widget_text(app.screen, "#follow-up-error")
        await pilot.press("escape")
        await settle(pilot)
        assert picker(app).is_current
