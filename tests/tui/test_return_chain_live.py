"""The group view while delegate runs two groups' chains to the end with scripted role
agents (developer → QA → tech lead → PM): every step appears as its return is judged,
and each group ends done, with a history cell saying so."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from textual.pilot import Pilot
from tui_support import AppFactory, history_cells, picker, started, wait_until, write_config

from core.chains.runner import run_chains
from core.returns.model import AgentRole, RoleLaunch
from tui.returns.groups import ReturnGroupsScreen, StepRow
from tui.widgets.history import ChainEndedCell

ROLES = {
    "developer": ("dev-bot", "READY_FOR_QA"),
    "qa_expert": ("qa-bot", "PASS"),
    "tech_lead": ("tl-bot", "APPROVED"),
    "project_manager": ("pm-bot", "BAZINGA"),
}
SESSION = "crp-20261121-210500-0c4a1e55"


def role_script(role: str, status: str) -> dict[str, object]:
    """Write this role's hand-off file where its prompt says, then answer the minimal JSON."""
    match = (
        r"(?s).*?(?P<file>\.delegate/artifacts/(?P<session>[\w.-]+)/(?P<group>[\w.-]+)"
        rf"/handoffs/handoff_{role}\.json)"
    )
    handoff = {"from_agent": role, "status": status, "summary": f"{{group}} {status}"}
    answer = {"status": status, "summary": [f"{role} on it", "one file", status]}
    return {
        "rules": [
            {
                "match": match,
                "reply": json.dumps(answer),
                "write": [{"path": "{file}", "content": json.dumps(handoff)}],
            }
        ]
    }


@pytest.fixture
def chain_dir(tmp_path: Path) -> Path:
    extra = ["[returns.agents]"]
    extra += [f'{role} = "{agent}"' for role, (agent, _) in ROLES.items()]
    for role, (agent, status) in ROLES.items():
        path = tmp_path / f"{agent}.json"
        path.write_text(json.dumps(role_script(role, status)), encoding="utf-8")
        extra.append(f'\n[agents.{agent}]\nrunner = "scripted"\nscript = "{path}"')
    return write_config(tmp_path / "data", "\n".join(extra))


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


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


async def test_two_chains_run_to_the_end_in_the_open_view(
    chain_dir: Path, git_repo: Path, make_app: AppFactory
) -> None:
    app = make_app(chain_dir)
    async with app.run_test(size=(160, 60)) as pilot:
        screen = await _groups(pilot)
        orch = app.orchestrator
        report = await run_chains(
            orch,
            first=[
                (f"Build {group}.", RoleLaunch(AgentRole.DEVELOPER, SESSION, group))
                for group in ("AUTH", "SEARCH")
            ],
            agent_id="dev-bot",
            cwd=str(git_repo),
            settings=orch.settings,
        )
        assert len(report.lines) == 8
        await wait_until(
            pilot,
            lambda: len(screen.query(StepRow)) == 8 and all(c.done for c in screen.chains),
            seconds=20,
            what="both chains done",
        )
        assert screen.shown == SESSION
        for chain in screen.chains:
            assert [s.role.value for s in chain.steps] == list(ROLES)
            assert chain.ended is not None
            assert chain.ended.reason == "end"
        cells = [c for c in history_cells(app) if isinstance(c, ChainEndedCell)]
        assert len(cells) == 2
        assert picker(app) is not app.screen  # the view stayed open throughout
