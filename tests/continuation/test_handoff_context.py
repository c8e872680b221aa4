"""A continuation's hand-off document is stored as context (seed 004): the session that
continues the work keeps it beside its first prompt, and its sub-agents inherit it once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from handoff_support import config_with_agents, make_repo

from core.continuation.service import Continuation
from core.models import Message, MessageCategory, Role, RunStatus
from core.orchestrator import AgentOrchestrator


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[AgentOrchestrator, Path]]:
    orch = await AgentOrchestrator.open(config_with_agents(tmp_path / "data"))
    try:
        yield orch, make_repo(tmp_path)
    finally:
        await orch.close(wait=False)


async def _oldest_first(orch: AgentOrchestrator, cid: str) -> list[Message]:
    return list(reversed((await orch.recent_messages(cid, limit=50)).messages))


async def test_the_handoff_is_context_and_a_sub_agent_of_the_successor_inherits_it(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    [handle] = await orch.delegate(prompt="implement login", agent_id="writer", cwd=str(repo))
    assert (await handle.wait()).status is RunStatus.COMPLETED
    outcome = await Continuation(orch).hand_off(handle.conversation_id)
    assert outcome.document is not None
    assert outcome.successor_id is not None
    path = outcome.document.path
    successor = outcome.successor_id

    prompt, carried = (await _oldest_first(orch, successor))[:2]
    assert (prompt.role, prompt.category) == (Role.USER, MessageCategory.DIALOG)
    assert path in prompt.content  # what to do, and where the document is
    assert "Implementing the login flow." not in prompt.content
    assert carried.category is MessageCategory.CONTEXT
    assert "# Context Handoff" in carried.content
    assert "Implementing the login flow." in carried.content
    assert (await orch.get_session(successor)).metrics.turns == 1  # the hand-off is no turn

    [child] = await orch.delegate(
        prompt="write the docs", agent_id="mute", cwd=str(repo), parent_id=successor
    )
    assert (await child.wait()).status is RunStatus.COMPLETED
    inherited = await _oldest_first(orch, child.conversation_id)
    assert [(m.category, m.content) for m in inherited[:2]] == [
        (MessageCategory.CONTEXT, carried.content),
        (MessageCategory.DIALOG, "write the docs"),
    ]
    assert all(path not in m.content for m in inherited)  # not the successor's prompt
