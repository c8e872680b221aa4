"""A sub-agent that hands off keeps its parent: its successor is the parent's child and
works in the same clamped window (seeds 003 and 004)."""

from __future__ import annotations

from pathlib import Path

from handoff_support import config_with_agents, make_repo

from core.continuation import Continuation, HandoffResult
from core.models import RunStatus, WindowSource
from core.orchestrator import AgentOrchestrator


def _data(root: Path) -> Path:
    data = config_with_agents(root / "data")
    with (data / "config.toml").open("a", encoding="utf-8") as config:
        config.write('\n[agents.small]\nrunner = "scripted"\ncontext_limit = 32000\n')
    return data


async def test_the_successor_of_a_sub_agent_is_its_parents_child_in_the_clamped_window(
    tmp_path: Path,
) -> None:
    orch = await AgentOrchestrator.open(_data(tmp_path))
    try:
        repo = make_repo(tmp_path)
        [parent] = await orch.delegate(prompt="lead the work", agent_id="mute", cwd=str(repo))
        assert (await parent.wait()).status is RunStatus.COMPLETED
        [child] = await orch.delegate(
            prompt="check the invoices",
            agent_id="small",
            cwd=str(repo),
            parent_id=parent.conversation_id,
        )
        assert (await child.wait()).status is RunStatus.COMPLETED
        before = await orch.get_session(child.conversation_id)
        assert before.context.window_source is WindowSource.CLAMP

        outcome = await Continuation(orch).hand_off(child.conversation_id)
        assert outcome.result is HandoffResult.CONTINUED, outcome
        assert outcome.successor_id is not None
        successor = await orch.get_session(outcome.successor_id)
        assert successor.parent_id == parent.conversation_id
        assert successor.agent_id == "small"
        assert successor.context.window_source is WindowSource.CLAMP
        assert successor.context.limit_tokens == before.context.limit_tokens == 32_000
        assert successor.context.clamped_from == before.context.clamped_from == 200_000
        children = [
            s.conversation_id for s in (await orch.list_children(parent.conversation_id)).sessions
        ]
        assert outcome.successor_id in children
        # A follow-up to the old sub-agent's id runs in its successor.
        [again] = await orch.delegate(prompt="and now?", conversation_id=child.conversation_id)
        assert again.conversation_id == outcome.successor_id
        await again.wait()
    finally:
        await orch.close(wait=False)
