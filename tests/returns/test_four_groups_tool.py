"""End to end through ``delegate_agent``: four developer delegates in parallel, then the
four QA delegates of their groups, scripted agents writing real hand-off files.

The primary's side is what ``delegate_agent`` answers (the JSON text it receives):
for the four developers it must stay under 1,000 tokens in total while the hand-off
files hold the details; a verbose return is caught with its text kept in the session;
each QA delegate is told to read its own group's developer hand-off first.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tool_agents import make_repo, role_data_dir, shown

from core.orchestrator import AgentOrchestrator
from core.returns.model import INVALID_RETURN, AgentRole
from core.returns.prompt import PRIOR_HEADING
from core.returns.schemas import validate_handoff
from core.tokens import count_tokens
from core.tools import call_tool

GROUPS = ("AUTH", "PAY", "SEARCH", "ADMIN")
PRIMARY_BUDGET = 1_000  # tokens the primary may receive for the four developer returns


@pytest.fixture
async def orch(tmp_path: Path) -> AsyncIterator[AgentOrchestrator]:
    orchestrator = await AgentOrchestrator.open(role_data_dir(tmp_path))
    yield orchestrator
    await orchestrator.close(wait=False)


def received(response: dict[str, Any]) -> int:
    """Tokens of the tool result as the primary reads it (the MCP text is this JSON)."""
    return count_tokens(json.dumps(response, ensure_ascii=False))


async def test_four_developers_then_their_qa_through_delegate_agent(
    orch: AgentOrchestrator, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path)
    developers = await call_tool(
        orch,
        "delegate_agent",
        {
            "agent_id": "dev",
            "agent_role": "developer",
            "cwd": str(repo),
            "batch": [{"prompt": f"Implement the {g} feature.", "group_id": g} for g in GROUPS],
        },
    )

    assert developers["status"] == "ok"
    runs = developers["runs"]
    assert [r["group_id"] for r in runs] == list(GROUPS)
    assert {r["return"]["status"] for r in runs} == {"READY_FOR_QA"}
    assert {r["next_role"] for r in runs} == {"qa_expert"}
    assert all("output" not in r for r in runs)
    session = runs[0]["artifacts_session"]
    assert {r["artifacts_session"] for r in runs} == {session}

    # Small for the primary, while the files hold the details.
    primary = received(developers)
    in_files = 0
    for run in runs:
        path = repo / run["handoff_file"]
        text = path.read_text(encoding="utf-8")
        validate_handoff(AgentRole.DEVELOPER, json.loads(text), where=str(path))
        assert f"Reasoning for group {run['group_id']}" in text
        in_files += count_tokens(text)
    assert primary < PRIMARY_BUDGET, f"the primary received {primary} tokens for four returns"
    assert in_files > 4 * primary  # the details went to the files, not to the primary

    # A verbose return is caught; its whole text stays in its session.
    verbose = await call_tool(
        orch,
        "delegate_agent",
        {
            "prompt": "Implement the REPORTS feature.",
            "agent_id": "verbose-dev",
            "agent_role": "developer",
            "group_id": "REPORTS",
            "artifacts_session": session,
            "cwd": str(repo),
        },
    )
    assert verbose["return"]["status"] == INVALID_RETURN
    assert verbose["next_role"] is None
    full = (await orch.get_run(verbose["run_id"])).output
    assert count_tokens(full) > 3_000
    assert received(verbose) < 400  # the seed's verbose report never reaches the primary
    messages = await call_tool(
        orch,
        "delegate_sessions",
        {"operation": "messages", "conversation_id": verbose["conversation_id"]},
    )
    assert any("## Implementation Complete" in m["content"] for m in messages["messages"])

    # The QA delegates of the four groups, launched next, each read their group's file.
    qa = await call_tool(
        orch,
        "delegate_agent",
        {
            "agent_id": "qa",
            "agent_role": "qa_expert",
            "artifacts_session": session,
            "cwd": str(repo),
            "batch": [{"prompt": f"Test the {g} feature.", "group_id": g} for g in GROUPS],
        },
    )

    assert qa["status"] == "ok"
    handoffs = {r["group_id"]: shown(repo, r["handoff_file"]) for r in runs}
    for run in qa["runs"]:
        prompt = (await orch.get_run(run["run_id"])).prompt
        own = handoffs[run["group_id"]]
        assert prompt.index(PRIOR_HEADING) < prompt.index(f"`{own}`")
        assert prompt.index(f"`{own}`") < prompt.index("Test the")
        others = [path for group, path in handoffs.items() if group != run["group_id"]]
        assert not [path for path in others if path in prompt]
        assert run["return"]["status"] == "PASS"
        assert run["next_role"] == "tech_lead"
    assert received(qa) < PRIMARY_BUDGET
    steps = await orch.store.returns.for_session(session)
    assert sorted((s.group_id, s.seq, s.role.value) for s in steps) == sorted(
        [(g, 1, "developer") for g in GROUPS]
        + [(g, 2, "qa_expert") for g in GROUPS]
        + [("REPORTS", 1, "developer")]
    )
