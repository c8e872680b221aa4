"""A launch with a capsule through the real Claude Code and Codex CLIs: the prompt the
model server received holds the task, then the ``## Context Capsule`` block with the body
and its consumption instructions, in that order (seed 000)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from agent_clis import Agents, find_cli
from capsule_support import capsule_text, make_repo, save

from core.documents.prompt import CAPSULE_HEADING
from core.events import CapsuleGap, CapsuleInjected
from core.models import RunStatus

pytestmark = pytest.mark.e2e

RUN_TIMEOUT_S = 60
TASK = "Make the app print v2 (capsule e2e)."


def strings(value: Any) -> Iterator[str]:
    """Every string inside a decoded JSON request body."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


@pytest.mark.parametrize(
    ("cli", "agent", "path"),
    [
        ("claude", "claude-code", "/v1/messages"),
        ("codex", "codex", "/v1/responses"),
    ],
)
async def test_the_model_receives_the_capsule_after_the_task(
    agents: Agents, cli: str, agent: str, path: str
) -> None:
    find_cli(cli)
    repo = make_repo(agents.workdir)
    save(repo, capsule_text())
    # Claude Code's request carries the last user text the server matches replies on.
    agents.server.reply_when("WIDGET-MARKER-7", "Done.\nCapsule Gap: nothing on the db schema")
    [handle] = await agents.orch.delegate(TASK, agent, cwd=str(repo), capsule="latest")
    run = await asyncio.wait_for(handle.wait(), RUN_TIMEOUT_S)
    assert run.status is RunStatus.COMPLETED, run.error

    [call] = agents.server.model_calls(path)
    [prompt] = [s for s in strings(call.body) if CAPSULE_HEADING in s]
    task = prompt.index(TASK)
    block = prompt.index(CAPSULE_HEADING)
    body = prompt.index("# Mission Snapshot")
    marker = prompt.index("WIDGET-MARKER-7")
    instructions = prompt.index("Treat this capsule as authoritative")
    assert task < block < body < marker < instructions
    assert "primary_objective" not in prompt  # the body, not the front matter

    session = await agents.orch.get_session(handle.conversation_id)  # Codex re-keys it
    assert session.capsule_id == run.capsule_id is not None
    document = await agents.orch.store.documents.get(session.capsule_id)
    assert document.consumers == (handle.conversation_id,)
    history = await agents.orch.history(20)
    [injected] = [e for e in history if isinstance(e, CapsuleInjected)]
    assert injected.conversation_id == handle.conversation_id
    if agent == "claude-code":
        [gap] = [e for e in history if isinstance(e, CapsuleGap)]
        assert (gap.conversation_id, gap.note) == (
            handle.conversation_id,
            "nothing on the db schema",
        )
