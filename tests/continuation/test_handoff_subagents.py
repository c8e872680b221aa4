"""A hand-off lists the sub-agents still at work, detached ones included (seed 003 §2,
"Active subagents (if any)"; edge case 4: "include in handoff with agent_id")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from handoff_support import config_with_agents, make_repo

from core.continuation.service import Continuation
from core.documents.handoff_template import parse_handoff
from core.models import RunStatus, SessionState
from core.orchestrator import AgentOrchestrator

HELD = """
[[rules]]
match = "."
reply = "still working on the migration, more to come"
gate = "{gate}"
gate_after = 1
"""


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[AgentOrchestrator, Path, Path]]:
    data_dir = config_with_agents(tmp_path / "data")
    gate = tmp_path / "release"
    script = data_dir / "held.toml"
    script.write_text(HELD.format(gate=gate), encoding="utf-8")
    with (data_dir / "config.toml").open("a", encoding="utf-8") as config:
        config.write(f'\n[agents.held]\nrunner = "scripted"\nscript = "{script}"\n')
    orch = await AgentOrchestrator.open(data_dir)
    try:
        yield orch, make_repo(tmp_path), gate
    finally:
        gate.touch()  # the detached worker finishes and exits
        await orch.close(wait=False)


async def test_a_running_detached_sub_agent_is_listed_with_its_id_and_state(
    world: tuple[AgentOrchestrator, Path, Path],
) -> None:
    orch, repo, gate = world
    [parent] = await orch.delegate(prompt="plan the migration", agent_id="mute", cwd=str(repo))
    assert (await parent.wait()).status is RunStatus.COMPLETED
    [child] = await orch.delegate(
        prompt="write the migration",
        agent_id="held",
        cwd=str(repo),
        parent_id=parent.conversation_id,
        mode="detached",
    )
    assert (await orch.get_session(child.conversation_id)).state is SessionState.PENDING

    outcome = await Continuation(orch).hand_off(parent.conversation_id)

    assert outcome.document is not None, outcome
    sections = parse_handoff(Path(outcome.document.path).read_text(encoding="utf-8"))
    listed = sections["Active Subagents"]
    assert "None" not in listed
    assert child.conversation_id in listed
    assert "pending" in listed
    assert "sub-agent(s) still running" in sections["Progress Summary"]
    gate.touch()
    assert (await child.wait()).status is RunStatus.COMPLETED


async def test_an_agents_own_handoff_gets_the_sub_agent_it_left_out(
    world: tuple[AgentOrchestrator, Path, Path],
) -> None:
    orch, repo, gate = world
    [parent] = await orch.delegate(prompt="plan the migration", agent_id="writer", cwd=str(repo))
    assert (await parent.wait()).status is RunStatus.COMPLETED
    [child] = await orch.delegate(
        prompt="write the migration",
        agent_id="held",
        cwd=str(repo),
        parent_id=parent.conversation_id,
        mode="detached",
    )

    outcome = await Continuation(orch).hand_off(parent.conversation_id)

    assert outcome.document is not None, outcome
    assert outcome.document.producer == "agent"
    listed = parse_handoff(Path(outcome.document.path).read_text(encoding="utf-8"))[
        "Active Subagents"
    ]
    assert "Active Subagents as the agent knows it" in listed  # the agent's words stay
    assert child.conversation_id in listed
    gate.touch()
    assert (await child.wait()).status is RunStatus.COMPLETED
