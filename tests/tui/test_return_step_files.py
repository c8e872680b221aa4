"""The group view (f3) names a step's hand-off file only while it is there: a final
step that wrote none, and a file removed since its step, say "no hand-off file"."""

from __future__ import annotations

from pathlib import Path

from return_files_data import chain_data_dir, handoff_of, run_the_chain
from textual.pilot import Pilot
from tui_support import AppFactory, notifications, screen_text, started, wait_until

from core.config import DB_FILENAME
from core.returns.model import AgentRole
from core.store import Store
from core.store.returns import NewReturnStep
from tui.modals.handoff_viewer import HandoffViewer
from tui.returns.groups import ReturnGroupsScreen, StepRow


async def _groups(pilot: Pilot[None]) -> ReturnGroupsScreen:
    await started(pilot)
    await pilot.press("f3")
    await wait_until(
        pilot,
        lambda: isinstance(pilot.app.screen, ReturnGroupsScreen) and pilot.app.screen.loaded,
        what="the group view",
    )
    screen = pilot.app.screen
    assert isinstance(screen, ReturnGroupsScreen)
    return screen


def _row(screen: ReturnGroupsScreen, role: AgentRole) -> StepRow:
    return next(r for r in screen.query(StepRow) if r.step.role is role)


async def _enter_says(pilot: Pilot[None], row: StepRow, note: str) -> None:
    row.focus()
    await pilot.press("enter")
    await wait_until(pilot, lambda: any(note in n for n in notifications(pilot.app)), what=note)
    assert not isinstance(pilot.app.screen, HandoffViewer)


async def test_a_final_step_that_wrote_no_file_names_none(
    tmp_path: Path, make_app: AppFactory
) -> None:
    data, repo = chain_data_dir(tmp_path)
    app = make_app(data)
    async with app.run_test(size=(140, 50)) as pilot:
        await started(pilot)
        await run_the_chain(app.orchestrator, repo)
        assert not handoff_of(repo, "project_manager").exists()
        screen = await _groups(pilot)
        await wait_until(pilot, lambda: len(screen.query(StepRow)) == 4, what="the four steps")
        text = screen_text(app)
        assert "handoff_project_manager.json" not in text
        pm = str(_row(screen, AgentRole.PROJECT_MANAGER).render())
        assert "BAZINGA → end · no hand-off file ·" in pm
        assert "handoff_tech_lead.json" in str(_row(screen, AgentRole.TECH_LEAD).render())
        await _enter_says(pilot, _row(screen, AgentRole.PROJECT_MANAGER), "wrote no hand-off file")


async def test_a_file_removed_since_its_step_is_named_no_more(
    tmp_path: Path, make_app: AppFactory
) -> None:
    data, repo = chain_data_dir(tmp_path)
    app = make_app(data)
    async with app.run_test(size=(140, 50)) as pilot:
        await started(pilot)
        await run_the_chain(app.orchestrator, repo)
        handoff_of(repo, "qa_expert").unlink()
        screen = await _groups(pilot)
        await wait_until(pilot, lambda: len(screen.query(StepRow)) == 4, what="the four steps")
        qa = _row(screen, AgentRole.QA_EXPERT)
        assert "handoff_qa_expert.json" not in screen_text(app)
        assert "PASS → Tech Lead · no hand-off file (removed since it was written) ·" in str(
            qa.render()
        )
        await _enter_says(pilot, qa, "removed since it was written")


async def test_a_step_stored_naming_a_file_never_written_names_none(
    data_dir: Path, tmp_path: Path, make_app: AppFactory
) -> None:
    """As earlier versions recorded a final step: the path it would have had, no file."""
    never = tmp_path / "repo/.delegate/artifacts/crp-old/AUTH/handoffs/handoff_project_manager.json"
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        await store.returns.add(
            NewReturnStep(
                artifacts_session="crp-old",
                group_id="AUTH",
                role=AgentRole.PROJECT_MANAGER,
                status="BAZINGA",
                summary=("Tracked AUTH", "The group is complete", "BAZINGA"),
                created_us=0,
                handoff_path=str(never),
                next_role="end",
            )
        )
    finally:
        await store.close()
    app = make_app(data_dir)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _groups(pilot)
        await wait_until(pilot, lambda: len(screen.query(StepRow)) == 1, what="the step")
        assert "handoff_project_manager.json" not in screen_text(app)
        row = _row(screen, AgentRole.PROJECT_MANAGER)
        assert "BAZINGA → end · no hand-off file ·" in str(row.render())
        await _enter_says(pilot, row, "wrote no hand-off file")
