"""The follow-up box knows before you type: what would refuse the send is shown when it
opens, and a refused send never loses the typed prompt."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from textual.widgets import TextArea
from tui_support import (
    AppFactory,
    insert_sessions,
    picker,
    session_with,
    settle,
    started,
    type_text,
    wait_until,
    widget_text,
    write_config,
)

from core.demo import demo_id
from core.models import SessionState
from tui.modals.follow_up import FollowUpPrompt

CC_ID = "0c0c0c0c-0000-4000-8000-000000000001"


async def open_box(pilot: object) -> FollowUpPrompt:
    await pilot.press("ctrl+f")  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]
    box = pilot.app.screen  # type: ignore[attr-defined]
    assert isinstance(box, FollowUpPrompt)
    return box


def problem_text(box: FollowUpPrompt) -> str:
    return widget_text(box, "#follow-up-problem")


async def test_a_ready_session_opens_the_box_with_no_problem(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        box = await open_box(pilot)
        assert problem_text(box).strip() == ""
        assert box.query_one(TextArea).has_focus


async def test_a_busy_session_opens_the_box_saying_it_is_busy(
    demo_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(demo_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        assert app.orchestrator is not None
        await app.orchestrator.delegate("hold on", "stalled", conversation_id=demo_id(0))
        await wait_until(
            pilot,
            lambda: picker(app).sessions.sessions[0].state is SessionState.RUNNING,
            what="the running row",
        )
        box = await open_box(pilot)
        shown = problem_text(box)
        assert "agent_busy" in shown
        assert "x to stop" in shown  # what to do about it
        # The prompt can wait in the box: typing still works.
        await type_text(pilot, "next, the changelog")
        assert box.query_one(TextArea).text == "next, the changelog"


async def test_a_missing_agent_binary_is_named_when_the_box_opens(
    tmp_path: Path, make_app: AppFactory
) -> None:
    data = write_config(
        tmp_path / "data",
        '[agents.cc]\nrunner = "claude_code"\nbinary = "no-such-agent-binary-anywhere"\n',
    )
    cc = session_with(CC_ID, ["plan it", "planned"], title="plan", agent_id="cc", cwd="/tmp")
    await insert_sessions(data, [cc])
    app = make_app(data)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        box = await open_box(pilot)
        shown = problem_text(box)
        assert "runner_unavailable" in shown
        assert "agents.cc.binary" in shown


async def test_a_missing_working_folder_is_named_when_the_box_opens(
    tmp_path: Path, make_app: AppFactory
) -> None:
    fake = tmp_path / "fake-claude"
    fake.write_text(f"#!{sys.executable}\n")
    fake.chmod(0o755)
    data = write_config(
        tmp_path / "data", f'[agents.cc]\nrunner = "claude_code"\nbinary = "{fake}"\n'
    )
    gone = tmp_path / "deleted-worktree"
    cc = session_with(CC_ID, ["plan it", "planned"], title="plan", agent_id="cc", cwd=str(gone))
    await insert_sessions(data, [cc])
    app = make_app(data)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        box = await open_box(pilot)
        shown = problem_text(box)
        assert "cwd_missing" in shown
        assert str(gone) in shown.replace("\n", "")


async def test_a_refused_send_keeps_the_box_open_with_the_prompt_and_the_reason(
    demo_dir: Path, make_app: AppFactory
) -> None:
    """The box opened on an idle session; another front end took it before the send."""
    app = make_app(demo_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(pilot)
        assert app.orchestrator is not None
        box = await open_box(pilot)
        await type_text(pilot, "a long prompt\nthat took a while to write")
        await app.orchestrator.delegate("first", "stalled", conversation_id=demo_id(0))
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is box
        assert box.query_one(TextArea).text == "a long prompt\nthat took a while to write"
        assert "agent_busy" in widget_text(box, "#follow-up-error")
        # Nothing was sent: the session still has the one run the other front end started.
        assert len(app.orchestrator.running()) == 1


async def test_a_send_refused_because_the_folder_went_missing_keeps_the_prompt(
    tmp_path: Path, make_app: AppFactory
) -> None:
    fake = tmp_path / "fake-claude"
    fake.write_text(f"#!{sys.executable}\n")
    fake.chmod(0o755)
    data = write_config(
        tmp_path / "data", f'[agents.cc]\nrunner = "claude_code"\nbinary = "{fake}"\n'
    )
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    cc = session_with(CC_ID, ["plan", "ok"], title="plan", agent_id="cc", cwd=str(worktree))
    await insert_sessions(data, [cc])
    app = make_app(data)
    async with app.run_test(size=(120, 36)) as pilot:
        await started(pilot)
        box = await open_box(pilot)
        assert problem_text(box).strip() == ""
        await type_text(pilot, "carry on")
        shutil.rmtree(worktree)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is box
        assert box.query_one(TextArea).text == "carry on"
        assert "cwd_missing" in widget_text(box, "#follow-up-error")
