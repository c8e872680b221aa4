"""The group view (f3): each artifacts session's groups as chains, their steps, the
hand-off viewer, live as returns arrive; reached from the panel for the highlighted
session."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from panel_returns_data import (
    ARTIFACTS,
    EARLIER,
    PRIMARY,
    QA,
    STEPS,
    TL,
    Step,
    add_steps,
    conversation_of,
    handoff_file,
    insert_return_sessions,
)
from textual.pilot import Pilot
from tui_support import (
    FIXED_NOW,
    AppFactory,
    notifications,
    picker,
    screen_text,
    session_list,
    started,
    wait_until,
    write_config,
)

from core.config import DB_FILENAME
from core.events import ChainEnded, ReturnAccepted
from core.returns.model import AgentRole, RoleLaunch
from core.store import Store
from tui.modals.handoff_viewer import HandoffViewer
from tui.modals.help import help_rows
from tui.returns.groups import ReturnGroupsScreen, StepRow


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return tmp_path / "repo"


@pytest.fixture
async def returns_dir(data_dir: Path, repo: Path) -> Path:
    await insert_return_sessions(data_dir, repo)
    return data_dir


def groups_screen(pilot: Pilot[None]) -> ReturnGroupsScreen:
    screen = pilot.app.screen
    assert isinstance(screen, ReturnGroupsScreen)
    return screen


async def open_groups(pilot: Pilot[None], highlighted: str | None = None) -> ReturnGroupsScreen:
    await started(pilot)
    if highlighted is not None:
        assert session_list(pilot.app).highlight(highlighted)
    await pilot.press("f3")
    await wait_until(
        pilot,
        lambda: isinstance(pilot.app.screen, ReturnGroupsScreen) and pilot.app.screen.loaded,
        what="the group view",
    )
    return groups_screen(pilot)


def step_rows(screen: ReturnGroupsScreen) -> list[StepRow]:
    return list(screen.query(StepRow))


async def test_the_primary_opens_on_its_session_with_each_group_as_a_chain(
    returns_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(returns_dir)
    async with app.run_test(size=(140, 80)) as pilot:
        screen = await open_groups(pilot, PRIMARY)
        assert screen.shown == ARTIFACTS
        assert [chain.group_id for chain in screen.chains] == [
            "AUTH",
            "BILLING",
            "EXPORT",
            "SEARCH",
        ]
        text = screen_text(app)
        assert f"Compact returns · {ARTIFACTS} · 4 groups, 10 steps · 2 going on" in text
        assert "Group AUTH · 4 steps · done: BAZINGA" in text
        assert "Developer READY_FOR_QA → QA PASS → TL APPROVED → PM BAZINGA" in text
        # BILLING went back to the developer once and waits on QA again.
        assert "Group BILLING · 3 steps · next: QA Expert" in text
        assert "Developer READY_FOR_QA → QA ▶ next → TL · → PM ·" in text
        assert "Group EXPORT · 1 step · stopped: an invalid return" in text
        assert "Group SEARCH · 2 steps · next: Tech Lead" in text
        rows = step_rows(screen)
        assert len(rows) == 10
        first = rows[0].render()
        assert "#1 Developer  READY_FOR_QA → QA Expert · handoff_developer.json" in str(first)
        assert "15 tests passing, 92% coverage" in str(first)
        invalid = next(r for r in rows if r.step.group_id == "EXPORT")
        assert invalid.has_class("-invalid")
        assert "INVALID_RETURN → stop · no hand-off file" in str(invalid.render())
        assert "rule verbose (text around the JSON): 2,140 tokens of text before" in str(
            invalid.render()
        )
        # Both artifacts sessions are listed, the newest first.
        assert "1 group · ended · 1d ago" in text


async def test_a_session_that_ran_a_step_opens_on_its_own_artifacts_session(
    returns_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(returns_dir)
    async with app.run_test(size=(140, 60)) as pilot:
        screen = await open_groups(pilot, conversation_of(0))  # EARLIER's developer
        assert screen.shown == EARLIER
        assert [chain.group_id for chain in screen.chains] == ["LOGIN"]
        await pilot.press("down")  # the list: the other session
        await wait_until(pilot, lambda: screen.shown == ARTIFACTS, what="the other session")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is picker(app), what="back to the panel")


async def test_enter_on_a_step_opens_its_hand_off_file_read_only(
    returns_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(returns_dir)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_groups(pilot, PRIMARY)
        await pilot.press("enter")  # from the list into the steps
        await pilot.press("down")
        assert isinstance(app.focused, StepRow)
        assert (app.focused.step.group_id, app.focused.step.role) == ("AUTH", QA)
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, HandoffViewer) and app.screen.view is not None,
            what="the viewer",
        )
        text = screen_text(app)
        assert "Hand-off of the QA Expert · Group AUTH · #2 PASS" in text
        assert "AUTH/handoffs/handoff_qa_expert.json" in text
        assert '"from_agent": "qa_expert",' in text
        assert '    "passed": 25,' in text  # pretty-printed
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, what="back to the groups")


async def test_a_missing_file_and_an_invalid_one_say_so(
    returns_dir: Path, repo: Path, make_app: AppFactory
) -> None:
    handoff_file(repo, STEPS[5]).write_text('{"from_agent": "qa_expert", "status": "NOPE"}')
    app = make_app(returns_dir)
    async with app.run_test(size=(140, 50)) as pilot:
        await open_groups(pilot, PRIMARY)
        handoff_file(repo, STEPS[4]).unlink()  # AUTH's developer, after the view was read
        await pilot.press("enter", "enter")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, HandoffViewer) and app.screen.view is not None,
            what="the viewer",
        )
        assert "no hand-off file at" in screen_text(app)
        await pilot.press("escape", "down", "enter")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, HandoffViewer) and app.screen.view is not None,
            what="the viewer",
        )
        text = screen_text(app)
        assert "is not a valid qa_expert hand-off file" in text
        assert '"status": "NOPE"' in text  # still shown


async def test_enter_on_an_invalid_return_says_it_has_no_file(
    returns_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(returns_dir)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_groups(pilot, PRIMARY)
        invalid = next(r for r in step_rows(screen) if r.step.group_id == "EXPORT")
        invalid.focus()
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any("no hand-off file" in n for n in notifications(app)),
            what="the note",
        )
        assert app.screen is screen


async def test_a_looped_role_s_earlier_step_says_its_file_was_rewritten(
    returns_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(returns_dir)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_groups(pilot, PRIMARY)
        first_billing = next(r for r in step_rows(screen) if r.step.group_id == "BILLING")
        first_billing.focus()
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, HandoffViewer) and app.screen.view is not None,
            what="the viewer",
        )
        assert "Step #3 wrote this file again since" in screen_text(app)


async def test_returns_and_chain_ends_arriving_update_the_view(
    returns_dir: Path, repo: Path, make_app: AppFactory
) -> None:
    app = make_app(returns_dir)
    async with app.run_test(size=(140, 80)) as pilot:
        screen = await open_groups(pilot, PRIMARY)
        shows = screen.shows
        # BILLING's QA passes: a new step, then its event.
        store = await Store.open(returns_dir / DB_FILENAME)
        try:
            passed = Step(
                ARTIFACTS,
                "BILLING",
                QA,
                "PASS",
                ("Tested the rounding fix", "Ran 14 integration tests", "14/14 passed"),
                TL.value,
                0,
            )
            await add_steps(store, repo, [passed])
        finally:
            await store.close()
        app.orchestrator.bus.publish(
            ReturnAccepted(
                at=FIXED_NOW,
                conversation_id=PRIMARY,
                run_id="run-live",
                agent_id="echo",
                artifacts_session=ARTIFACTS,
                group_id="BILLING",
                role="qa_expert",
                status="PASS",
                summary=passed.summary,
                next_role="tech_lead",
            )
        )
        await wait_until(pilot, lambda: screen.shows > shows, what="the groups again")
        text = screen_text(app)
        assert "Group BILLING · 4 steps · next: Tech Lead" in text
        assert "14/14 passed" in text
        # SEARCH's chain stops at the step limit: no step, but the view says so.
        shows = screen.shows
        app.orchestrator.bus.publish(
            ChainEnded(
                at=FIXED_NOW,
                conversation_id=PRIMARY,
                artifacts_session=ARTIFACTS,
                group_id="SEARCH",
                steps=2,
                final_status="PASS",
                reason="step_limit",
            )
        )
        await wait_until(pilot, lambda: screen.shows > shows, what="the groups again")
        assert "Group SEARCH · 2 steps · stopped: the step limit was reached" in screen_text(app)


async def test_no_returns_yet_says_how_to_get_some(data_dir: Path, make_app: AppFactory) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_groups(pilot)
        assert screen.has_class("-empty")
        assert "No compact returns yet." in screen_text(app)
        assert "delegate run --role developer --group AUTH" in screen_text(app)


async def test_the_help_lists_the_key(returns_dir: Path, make_app: AppFactory) -> None:
    app = make_app(returns_dir)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await started(pilot)
        rows = help_rows(screen, screen.BINDINGS)
        assert any(keys == "f3" and action == "Returns" for keys, action, _ in rows)


async def test_a_live_reload_keeps_the_focused_step_and_the_place(
    returns_dir: Path, make_app: AppFactory
) -> None:
    app = make_app(returns_dir)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await open_groups(pilot, PRIMARY)
        search_qa = step_rows(screen)[-1]
        search_qa.focus()
        await wait_until(pilot, lambda: screen.groups_pane.scroll_y > 0, what="scrolled down")
        # Focus scrolls with an animation: the place is where it ends, not where it passes.
        await pilot.wait_for_scheduled_animations()
        place = screen.groups_pane.scroll_y
        shows = screen.shows
        screen.action_reload()
        await wait_until(pilot, lambda: screen.shows > shows, what="the groups again")
        await wait_until(pilot, lambda: screen.groups_pane.scroll_y == place, what="the same place")
        assert isinstance(app.focused, StepRow)
        assert app.focused.step.step_id == search_qa.step.step_id


async def test_what_agents_wrote_is_shown_as_text(
    data_dir: Path, repo: Path, make_app: AppFactory
) -> None:
    """Ids, statuses, lines and reasons are data: no markup, no escapes, one line each."""
    hostile = Step(
        "crp-\x1b[2Jhostile",
        "G[bold]1[/bold]\nsecond",
        QA,
        "FAIL\x1b]0;pwned\x07",
        ("[red]not red[/red]", "tab\there\nand a newline", "\u202eevil"),
        "developer",
        1,
        handoff=False,
        rule="status\x1b[31m",
        reason="[link=https://evil.example]click[/link]\x00",
    )
    await insert_return_sessions(data_dir, repo, steps=False)
    store = await Store.open(data_dir / DB_FILENAME)
    try:
        await add_steps(store, repo, [hostile])
    finally:
        await store.close()
    app = make_app(data_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_groups(pilot)
        text = screen_text(app)
        assert "\x1b" not in text
        assert "\u202e" not in text
        assert "[red]not red[/red]" in text
        assert "Group G[bold]1[/bold] second" in text
        assert "[link=https://evil.example]click[/link]" in text
        assert len(step_rows(screen)) == 1


# --- end to end: real role launches of scripted agents ---------------------------------

DEV_LINES = ["Implemented AUTH", "Changed src/auth.py and tests", "15 tests pass"]
OWN_HANDOFF = (
    r"(?s)hand-off file `(?P<handoff>\.delegate/artifacts/[\w.-]+/(?P<group>[\w.-]+)"
    r"/handoffs/handoff_developer\.json)`"
)


def role_agents(data_dir: Path) -> Path:
    """``dev`` writes its hand-off file (its scripted Write tool) and answers the minimal
    JSON; ``chatty`` answers a verbose report and writes nothing."""
    answer = json.dumps({"status": "READY_FOR_QA", "summary": DEV_LINES})
    handoff = json.dumps(
        {"from_agent": "developer", "status": "READY_FOR_QA", "summary": "{group} done"}
    )
    scripts = {
        "dev": {
            "rules": [
                {
                    "match": OWN_HANDOFF,
                    "reply": answer,
                    "write": [{"path": "{handoff}", "content": handoff}],
                }
            ]
        },
        "chatty": {"rules": [{"match": ".", "reply": "## Done\n\n" + "All went well. " * 50}]},
    }
    extra = []
    for name, body in scripts.items():
        path = data_dir.parent / f"{name}.json"
        path.write_text(json.dumps(body), encoding="utf-8")
        extra.append(f'\n[agents.{name}]\nrunner = "scripted"\nscript = "{path}"\n')
    return write_config(data_dir, "".join(extra))


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A real git repository the roles work in (their artifacts go under its root)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


async def test_role_launches_appear_live_as_their_returns_are_judged(
    tmp_path: Path, git_repo: Path, make_app: AppFactory
) -> None:
    repo = git_repo
    app = make_app(role_agents(tmp_path / "data"))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await open_groups(pilot)
        assert screen.has_class("-empty")
        orch = app.orchestrator
        session = "crp-20261121-210000-00c0ffee"
        [dev] = await orch.delegate(
            prompt="Add login.",
            agent_id="dev",
            cwd=str(repo),
            roles=[RoleLaunch(AgentRole.DEVELOPER, session, "AUTH")],
        )
        [chatty] = await orch.delegate(
            prompt="Add export.",
            agent_id="chatty",
            cwd=str(repo),
            roles=[RoleLaunch(AgentRole.DEVELOPER, session, "EXPORT")],
        )
        await dev.wait()
        await chatty.wait()
        await wait_until(pilot, lambda: len(step_rows(screen)) == 2, seconds=20, what="both steps")
        assert screen.shown == session
        text = screen_text(app)
        assert "Group AUTH · 1 step · next: QA Expert" in text
        assert "Implemented AUTH" in text
        assert "Group EXPORT · 1 step · stopped: an invalid return" in text
        assert "rule not_json (no JSON return)" in text
        step_rows(screen)[0].focus()
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, HandoffViewer) and app.screen.view is not None,
            what="the viewer",
        )
        text = screen_text(app)
        assert "AUTH/handoffs/handoff_developer.json" in text
        assert '"summary": "AUTH done"' in text
        assert "not a valid" not in text
