"""Chains run by delegate: each return routed to the next role until the end or a stop.

Scripted role agents write their hand-off files and answer the minimal JSON; the
orchestrator judges and records each return, ``run_chains`` follows the routes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from chain_agents import AGENTS, chain_config, git_repo, role_rule

from core.chains.report import ChainReport, StopReason
from core.chains.runner import ChainStart, run_chains
from core.config import ReturnsSettings, Settings, default_routes, load_settings
from core.errors import InvalidConfig, InvalidRequest
from core.events import ChainEnded, DelegateLaunched
from core.models import Role
from core.orchestrator import AgentOrchestrator
from core.returns.model import INVALID_RETURN, AgentRole, RoleLaunch

SESSION = "crp-20261127-060000-ab12"
DEV, QA, TL, PM = (
    AgentRole.DEVELOPER,
    AgentRole.QA_EXPERT,
    AgentRole.TECH_LEAD,
    AgentRole.PROJECT_MANAGER,
)
TIMEOUT_S = 60  # a chain that waits forever fails the test instead of hanging it


@asynccontextmanager
async def opened(
    tmp_path: Path,
    rules: dict[str, Any] | None = None,
    *,
    returns: str = "",
    routes: dict[str, str] | None = None,
) -> AsyncIterator[tuple[AgentOrchestrator, Path]]:
    data_dir = chain_config(tmp_path / "data", rules or {}, returns=returns)
    settings = load_settings(data_dir)
    if routes is not None:
        # A table missing a route: the config merges the built-in table under any file,
        # so only a table built in code can leave a status without a next role.
        table = ReturnsSettings.model_construct(**{**dict(settings.returns), "routes": routes})
        settings = settings.model_copy(update={"returns": table})
    orch = await AgentOrchestrator.open(data_dir, settings=settings)
    try:
        yield orch, git_repo(tmp_path / "repo")
    finally:
        await orch.close()


async def chain(
    orch: AgentOrchestrator, repo: Path, *groups: str, task: str = "Build the {group} feature"
) -> ChainReport:
    first = [
        (task.format(group=group), RoleLaunch(DEV, SESSION, group)) for group in groups or ("AUTH",)
    ]
    return await asyncio.wait_for(
        run_chains(orch, first=first, agent_id="dev-bot", cwd=str(repo), settings=orch.settings),
        TIMEOUT_S,
    )


def handoff(role: AgentRole, group: str = "AUTH") -> str:
    return f".delegate/artifacts/{SESSION}/{group}/handoffs/handoff_{role.value}.json"


async def first_prompt(orch: AgentOrchestrator, conversation_id: str | None) -> str:
    """What the agent was sent: the first user message of its session."""
    assert conversation_id is not None
    page = await orch.recent_messages(conversation_id, 50)
    return [m.content for m in page.messages if m.role is Role.USER][-1]


async def agents_run(orch: AgentOrchestrator) -> list[str]:
    return sorted(run.agent_id for run in await orch.list_runs(limit=100))


async def chain_ends(orch: AgentOrchestrator) -> dict[str, ChainEnded]:
    return {e.group_id: e for e in await orch.history(100) if isinstance(e, ChainEnded)}


async def test_a_qa_fail_loops_back_to_the_developer_then_passes_on_to_the_end(
    tmp_path: Path,
) -> None:
    rules = {"qa_expert": [role_rule("qa_expert", "FAIL", when="Step 2 of group")]}
    async with opened(tmp_path, rules) as (orch, repo):
        report = await chain(orch, repo)

        [group] = report.groups
        assert [(s.role, s.status) for s in group.steps] == [
            (DEV, "READY_FOR_QA"),
            (QA, "FAIL"),
            (DEV, "READY_FOR_QA"),
            (QA, "PASS"),
            (TL, "APPROVED"),
            (PM, "BAZINGA"),
        ]
        assert [s.next_role for s in group.steps] == [
            "qa_expert",
            "developer",
            "qa_expert",
            "tech_lead",
            "project_manager",
            "end",
        ]
        assert (group.reason, group.final_status) == (StopReason.END, "BAZINGA")
        # One display line per step, in the order they ended, each naming where it went.
        assert len(report.lines) == 6
        assert report.lines[1].startswith("❌ Group AUTH [QA] | Tested AUTH |")
        assert report.lines[1].endswith("→ Developer")
        assert report.lines[-1].endswith("→ end")
        # Each later role ran as the agent [returns] agents names, and was told where
        # the previous role's hand-off file is: the developer, after QA's FAIL, QA's.
        runs = [await orch.get_run(s.run_id) for s in group.steps if s.run_id]
        assert [r.agent_id for r in runs] == [AGENTS[s.role.value] for s in group.steps]
        assert handoff(QA) in await first_prompt(orch, group.steps[2].conversation_id)
        assert "returned FAIL" in await first_prompt(orch, group.steps[2].conversation_id)
        assert handoff(DEV) in await first_prompt(orch, group.steps[3].conversation_id)
        ended = (await chain_ends(orch))["AUTH"]
        assert (ended.steps, ended.final_status, ended.reason) == (6, "BAZINGA", "end")
        assert ended.artifacts_session == SESSION
        assert ended.conversation_id == group.steps[-1].conversation_id


async def test_an_invalid_return_stops_the_group_and_nothing_is_guessed(tmp_path: Path) -> None:
    verbose = "## QA Expert: Test Results - PASS\n\nAll 25 tests pass.\n\n**Status:** PASS"
    rules = {"qa_expert": [role_rule("qa_expert", "PASS", reply=verbose)]}
    async with opened(tmp_path, rules) as (orch, repo):
        report = await chain(orch, repo)

        [group] = report.groups
        assert [(s.role, s.status) for s in group.steps] == [
            (DEV, "READY_FOR_QA"),
            (QA, INVALID_RETURN),
        ]
        assert (group.reason, group.final_status) == (StopReason.INVALID, INVALID_RETURN)
        assert group.steps[-1].next_role is None
        assert report.lines[-1].endswith("→ stop")
        # The verbose text never reaches the primary; no tech lead was launched.
        assert "All 25 tests pass" not in str(report.payload())
        assert await agents_run(orch) == ["dev-bot", "qa-bot"]
        assert (await chain_ends(orch))["AUTH"].reason == "invalid"


async def test_a_status_without_a_route_stops_the_group(tmp_path: Path) -> None:
    routes = {k: v for k, v in default_routes().items() if k != "PASS"}
    async with opened(tmp_path, routes=routes) as (orch, repo):
        report = await chain(orch, repo)

        [group] = report.groups
        assert [(s.role, s.status) for s in group.steps] == [
            (DEV, "READY_FOR_QA"),
            (QA, "PASS"),
        ]
        assert group.reason is StopReason.NO_ROUTE
        assert group.steps[-1].next_role is None
        assert report.lines[-1].endswith("→ stop")
        assert await agents_run(orch) == ["dev-bot", "qa-bot"]
        assert (await chain_ends(orch))["AUTH"].reason == "no_route"


async def test_a_chain_that_keeps_looping_stops_at_max_chain_steps(tmp_path: Path) -> None:
    rules = {"qa_expert": [role_rule("qa_expert", "FAIL")]}
    async with opened(tmp_path, rules, returns="max_chain_steps = 3") as (orch, repo):
        report = await chain(orch, repo)

        [group] = report.groups
        assert [(s.role, s.status) for s in group.steps] == [
            (DEV, "READY_FOR_QA"),
            (QA, "FAIL"),
            (DEV, "READY_FOR_QA"),
        ]
        assert group.reason is StopReason.STEP_LIMIT
        assert await agents_run(orch) == ["dev-bot", "dev-bot", "qa-bot"]
        ended = (await chain_ends(orch))["AUTH"]
        assert (ended.steps, ended.reason) == (3, "step_limit")


async def test_a_failed_run_stops_its_group_only(tmp_path: Path) -> None:
    broken = role_rule("qa_expert", "PASS", when="/BILLING/handoffs/", fail="tests exploded")
    async with opened(tmp_path, {"qa_expert": [broken]}) as (orch, repo):
        report = await chain(orch, repo, "AUTH", "BILLING")

        auth, billing = report.groups
        assert (auth.group_id, auth.reason, len(auth.steps)) == ("AUTH", StopReason.END, 4)
        assert (billing.group_id, billing.reason) == ("BILLING", StopReason.FAILED)
        assert [s.role for s in billing.steps] == [DEV, QA]
        assert billing.final_status == INVALID_RETURN  # no final message: not passed on
        assert billing.steps[-1].next_role is None
        assert sum("Group BILLING" in line for line in report.lines) == 2
        assert sum("Group AUTH" in line for line in report.lines) == 4
        ends = await chain_ends(orch)
        assert {g: e.reason for g, e in ends.items()} == {"AUTH": "end", "BILLING": "failed"}


async def test_groups_run_in_parallel(tmp_path: Path) -> None:
    # AUTH's developer cannot finish before BILLING's project manager has written its
    # file (after BILLING's first three steps were reported): run one group after the
    # other and this chain never ends.
    gate = tmp_path / "repo" / handoff(PM, "BILLING")
    held = role_rule("developer", "READY_FOR_QA", when="/AUTH/handoffs/", gate=gate)
    async with opened(tmp_path, {"developer": [held]}) as (orch, repo):
        report = await chain(orch, repo, "AUTH", "BILLING")

        assert [g.reason for g in report.groups] == [StopReason.END, StopReason.END]
        assert [line.split(" | ")[0] for line in report.lines[:3]] == [
            "🔨 Group BILLING [Developer]",
            "✅ Group BILLING [QA]",
            "👔 Group BILLING [TL]",
        ]
        assert len(report.lines) == 8


async def test_a_next_role_that_cannot_launch_stops_its_group_with_the_reason(
    tmp_path: Path,
) -> None:
    async with opened(tmp_path, returns="") as (orch, repo):
        settings = with_agents(orch, {**AGENTS, "tech_lead": "nobody"})
        report = await asyncio.wait_for(
            run_chains(
                orch,
                first=[ChainStart("Build it", RoleLaunch(DEV, SESSION, "AUTH"), "dev-bot")],
                agent_id=None,
                cwd=str(repo),
                settings=settings,
            ),
            TIMEOUT_S,
        )

        [group] = report.groups
        assert [s.role for s in group.steps] == [DEV, QA]
        assert group.reason is StopReason.FAILED
        assert "tech_lead" in group.error
        assert "nobody" in group.error
        assert report.payload()["groups"][0]["error"] == group.error


@pytest.mark.parametrize(
    "first",
    [
        [],
        [("a", RoleLaunch(DEV, SESSION, "AUTH")), ("b", RoleLaunch(DEV, SESSION, "AUTH"))],
        [("a", RoleLaunch(DEV, SESSION, "AUTH")), ("b", RoleLaunch(DEV, SESSION + "x", "B"))],
    ],
    ids=["no group", "one group twice", "two artifacts sessions"],
)
async def test_a_call_that_cannot_chain_starts_nothing(
    tmp_path: Path, first: list[tuple[str, RoleLaunch]]
) -> None:
    async with opened(tmp_path) as (orch, repo):
        with pytest.raises(InvalidRequest):
            await run_chains(
                orch, first=first, agent_id="dev-bot", cwd=str(repo), settings=orch.settings
            )
        assert await orch.list_runs() == []


async def test_a_cancelled_chain_still_says_where_its_group_stopped(tmp_path: Path) -> None:
    gate = tmp_path / "never"  # QA's run waits for it: the chain is cancelled meanwhile
    held = role_rule("qa_expert", "PASS", gate=gate)
    async with opened(tmp_path, {"qa_expert": [held]}) as (orch, repo):
        qa_started = asyncio.Event()
        orch.bus.add_listener(
            lambda e: (
                qa_started.set()
                if isinstance(e, DelegateLaunched) and e.agent_id == "qa-bot"
                else None
            )
        )
        task = asyncio.create_task(chain(orch, repo))
        await asyncio.wait_for(qa_started.wait(), TIMEOUT_S)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

        ended = (await chain_ends(orch))["AUTH"]
        assert (ended.steps, ended.final_status, ended.reason) == (1, "READY_FOR_QA", "cancelled")
        gate.touch()  # the run itself goes on, as a standard launch's does when its caller goes


async def test_summary_lines_reach_the_primary_as_one_flat_line_each(tmp_path: Path) -> None:
    lines = ["Did \x1b[2Jthe work\u202e", "Changed\ta.py\r", "Tests \x07pass"]
    reply = json.dumps({"status": "READY_FOR_QA", "summary": lines})
    rules = {"developer": [role_rule("developer", "READY_FOR_QA", reply=reply)]}
    async with opened(tmp_path, rules) as (orch, repo):
        report = await chain(orch, repo)

        assert report.lines
        for line in report.lines:
            assert line.isprintable(), repr(line)


def with_agents(orch: AgentOrchestrator, agents: dict[str, str]) -> Settings:
    returns = orch.settings.returns.model_copy(update={"agents": agents})
    return orch.settings.model_copy(update={"returns": returns})


async def test_returns_agents_take_the_roles_short_names(tmp_path: Path) -> None:
    short = {"qa": "qa-bot", "TL": "tl-bot", "pm": "pm-bot"}
    async with opened(tmp_path) as (orch, repo):
        report = await run_chains(
            orch,
            first=[("Build it", RoleLaunch(DEV, SESSION, "AUTH"))],
            agent_id="dev-bot",
            cwd=str(repo),
            settings=with_agents(orch, short),
        )

        [group] = report.groups
        assert group.reason is StopReason.END
        runs = [await orch.get_run(s.run_id) for s in group.steps if s.run_id]
        assert [r.agent_id for r in runs] == ["dev-bot", "qa-bot", "tl-bot", "pm-bot"]


async def test_a_returns_agents_key_that_is_no_role_starts_nothing(tmp_path: Path) -> None:
    async with opened(tmp_path) as (orch, repo):
        with pytest.raises(InvalidConfig, match="wizard"):
            await run_chains(
                orch,
                first=[("Build it", RoleLaunch(DEV, SESSION, "AUTH"))],
                agent_id="dev-bot",
                cwd=str(repo),
                settings=with_agents(orch, {"wizard": "qa-bot"}),
            )
        assert await orch.list_runs() == []
