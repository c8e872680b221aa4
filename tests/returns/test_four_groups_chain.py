"""The four-group cycle through ``delegate_agent`` with ``"chain": true``, to BAZINGA.

Four developer groups in parallel; delegate routes each group developer -> QA expert
-> tech lead -> project manager. The primary gets one display line per step and the
steps' ids, never an agent's text; the details are in the hand-off files on disk.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from chain_agents import AGENTS, chain_config, git_repo, role_rule

from core.config import load_settings
from core.models import Role
from core.orchestrator import AgentOrchestrator
from core.returns.files import read_handoff
from core.returns.model import AgentRole
from core.returns.parse import parse_return
from core.returns.paths import group_paths
from core.tokens import count_tokens
from core.tools import call_tool

GROUPS = ("AUTH", "BILLING", "SEARCH", "NOTIFY")
CYCLE = (
    AgentRole.DEVELOPER,
    AgentRole.QA_EXPERT,
    AgentRole.TECH_LEAD,
    AgentRole.PROJECT_MANAGER,
)
STATUSES = ("READY_FOR_QA", "PASS", "APPROVED", "BAZINGA")
TIMEOUT_S = 120


async def delegate_chain(orch: AgentOrchestrator, repo: Path) -> dict[str, Any]:
    raw = {
        "agent_id": AGENTS["developer"],
        "agent_role": "developer",
        "cwd": str(repo),
        "chain": True,
        "batch": [{"prompt": f"Build the {g} feature", "group_id": g} for g in GROUPS],
    }
    return await asyncio.wait_for(call_tool(orch, "delegate_agent", raw), TIMEOUT_S)


async def first_prompt(orch: AgentOrchestrator, conversation_id: str) -> str:
    page = await orch.recent_messages(conversation_id, 50)
    return [m.content for m in page.messages if m.role is Role.USER][-1]


async def test_four_groups_run_their_chains_to_bazinga(tmp_path: Path) -> None:
    data_dir = chain_config(tmp_path / "data", {})
    repo = git_repo(tmp_path / "repo")
    orch = await AgentOrchestrator.open(data_dir, settings=load_settings(data_dir))
    try:
        response = await delegate_chain(orch, repo)

        assert set(response) == {"status", "artifacts_session", "groups", "lines"}, response
        session = response["artifacts_session"]
        assert [g["group_id"] for g in response["groups"]] == list(GROUPS)
        for group in response["groups"]:
            steps = group["steps"]
            assert [s["role"] for s in steps] == [r.value for r in CYCLE], group
            assert [s["status"] for s in steps] == list(STATUSES)
            assert (group["final_status"], group["reason"]) == ("BAZINGA", "end")
            # Every hand-off is on disk and valid for its role's schema.
            paths = group_paths(repo, session, group["group_id"])
            for step, role in zip(steps, CYCLE, strict=True):
                assert step["handoff_file"] is not None
                assert step["handoff_file"] == paths.relative(paths.handoff_file(role))
                written = read_handoff(paths, role)
                assert (written.status, written.group_id) == (step["status"], group["group_id"])
            # Every return the primary sees is the agent's minimal JSON, and each later
            # role's prompt named the previous role's hand-off file.
            for index, (step, role) in enumerate(zip(steps, CYCLE, strict=True)):
                run = await orch.get_run(step["run_id"])
                assert run.agent_id == AGENTS[role.value]
                said = parse_return(
                    run.output, role, max_tokens=orch.settings.returns.max_return_tokens
                )
                assert said.valid, said
                assert said.answer.payload() == {
                    "status": step["status"],
                    "summary": step["summary"],
                }
                if index:
                    previous = paths.relative(paths.handoff_file(CYCLE[index - 1]))
                    assert previous in await first_prompt(orch, step["conversation_id"])
        # One display line per step: 16, each group's four in their order.
        lines = response["lines"]
        assert len(lines) == len(GROUPS) * len(CYCLE)
        for g in GROUPS:
            mine = [line for line in lines if f" Group {g} [" in line]
            assert [line.split("[")[1].split("]")[0] for line in mine] == [
                "Developer",
                "QA",
                "TL",
                "PM",
            ]
            assert mine[-1].endswith("→ end")
        # No agent's text or run output travels back: what the primary receives for the
        # whole cycle stays small (the verbose cycle is tens of thousands of tokens). The
        # test folder's own path, in each hand-off file's, is left out of the count.
        text = json.dumps(response, ensure_ascii=False)
        assert '"output"' not in text
        assert count_tokens(text.replace(str(repo), "")) < 200 * len(lines)
    finally:
        await orch.close()


async def test_a_verbose_return_in_one_group_is_caught_and_stops_that_group(
    tmp_path: Path,
) -> None:
    essay = "## Review: APPROVED\n\n" + "The code is clean and well tested. " * 200
    verbose = role_rule("tech_lead", "APPROVED", when="/SEARCH/handoffs/", reply=essay)
    data_dir = chain_config(tmp_path / "data", {"tech_lead": [verbose]})
    repo = git_repo(tmp_path / "repo")
    orch = await AgentOrchestrator.open(data_dir, settings=load_settings(data_dir))
    try:
        response = await delegate_chain(orch, repo)

        reasons = {g["group_id"]: g["reason"] for g in response["groups"]}
        assert reasons == {"AUTH": "end", "BILLING": "end", "SEARCH": "invalid", "NOTIFY": "end"}
        [search] = [g for g in response["groups"] if g["group_id"] == "SEARCH"]
        assert [s["role"] for s in search["steps"]] == ["developer", "qa_expert", "tech_lead"]
        assert search["final_status"] == "INVALID_RETURN"
        assert "clean and well tested" not in json.dumps(response)
        [line] = [line for line in response["lines"] if "Group SEARCH [TL]" in line]
        assert line.endswith("→ stop")
    finally:
        await orch.close()
