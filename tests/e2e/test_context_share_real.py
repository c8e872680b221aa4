"""Seed 004's one-time share over real HTTP: a Chat Completions agent launched with a
capsule keeps it as context, and its sub-agent's first model call carries that capsule
(once, before its own prompt) and never the parent's task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_clis import Agents, find_cli
from capsule_support import capsule_text, make_repo, save
from test_real_clis import run_to_end

from core.documents.prompt import CAPSULE_HEADING


async def test_a_sub_agent_of_a_capsule_launched_session_sends_the_capsule_to_its_model(
    agents: Agents, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "project")
    save(repo, capsule_text())
    orch = agents.orch
    [parent] = await orch.delegate("say pong", "chat", cwd=str(repo), capsule="latest")
    await run_to_end(parent)
    [child] = await orch.delegate(
        "child task", "chat", cwd=str(repo), parent_id=parent.conversation_id
    )
    await run_to_end(child)

    first, second = agents.server.model_calls("/v1/chat/completions")
    assert json.dumps(first.body).count("WIDGET-MARKER-7") == 1  # the parent's own prompt
    sent = second.body["messages"]
    assert [m["role"] for m in sent] == ["user", "user"]
    assert sent[0]["content"].startswith(CAPSULE_HEADING)
    assert "WIDGET-MARKER-7" in sent[0]["content"]
    assert sent[1]["content"] == "child task"
    assert "say pong" not in json.dumps(sent)


@pytest.mark.e2e
async def test_a_claude_code_sub_agent_gets_the_capsule_its_claude_parent_was_given(
    agents: Agents, tmp_path: Path
) -> None:
    find_cli("claude")
    repo = make_repo(tmp_path / "project")
    save(repo, capsule_text())
    orch = agents.orch
    [parent] = await orch.delegate("say pong", "claude-code", cwd=str(repo), capsule="latest")
    await run_to_end(parent)
    [child] = await orch.delegate(
        "child task", "claude-code", cwd=str(repo), parent_id=parent.conversation_id
    )
    await run_to_end(child)

    [asked] = [
        c
        for c in agents.server.model_calls("/v1/messages")
        if "child task" in json.dumps(c.body.get("messages"))
    ]
    # The share goes in through Claude Code's system prompt, not as a prompt of its own.
    assert "WIDGET-MARKER-7" in json.dumps(asked.body.get("system"))
    assert "WIDGET-MARKER-7" not in json.dumps(asked.body["messages"])
    assert "say pong" not in json.dumps(asked.body)
