"""The real Claude Code driven through ``delegate_agent`` with no supervisor running: the
turn that fills its window past 70 % hands the session off in the tool call itself (the
agent writes its own hand-off, a new Claude Code session continues), and past 90 % the
session is sent nothing more (its hand-off built from facts, the work continued again).

The loopback model server reports the window's fill (``context_tokens``) and plays the
agent writing its hand-off.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_clis import Agents, find_cli
from model_server import last_user_text

from core.documents.handoff_template import validate_handoff
from core.models import DocumentKind, DocumentStatus
from core.tools import call_tool

pytestmark = pytest.mark.e2e

HANDOFF = """# Context Handoff

## Current Task

Teaching the loopback server to answer pong.

## Progress Summary

### Completed
- The pong reply

### In Progress
- Counting the pongs

### Pending
- A ping command

## Active Subagents

- None

## Recent Decisions

1. **Decision**: pong counts messages. Rationale: a test can see history grow.

## Files Modified

- pong.py (new)

## Next Steps

1. Add the ping command

## Important Context

- The reply must stay deterministic.

## Links

- pong.py

## Instructions for New Instance

1. Read this hand-off, then continue from Next Steps.
"""


async def agent(agents: Agents, request: dict[str, Any]) -> dict[str, Any]:
    answer = await call_tool(agents.orch, "delegate_agent", request)
    assert answer["status"] == "ok", answer
    assert answer["run_status"] == "completed", answer
    return answer


async def test_claude_code_over_the_tools_hands_off_at_70_and_again_past_90(
    agents: Agents,
) -> None:
    find_cli("claude")
    orch, server = agents.orch, agents.server
    server.reply_when("Write a hand-off document", HANDOFF)
    first = await agent(
        agents, {"prompt": "start on pong", "agent_id": "claude-code", "cwd": str(agents.workdir)}
    )
    cid = first["conversation_id"]
    window = (await orch.get_session(cid)).context.limit_tokens
    assert window > 0
    assert "context" not in first  # room to spare: nothing said

    server.context_tokens = int(window * 0.75)
    second = await agent(agents, {"conversation_id": cid, "prompt": "carry on"})
    assert second["context"]["crossed"] == ["notify", "reminder", "handoff"]
    successor = second["context"]["handoff"]["continued_in"]
    assert successor not in (None, cid)
    asked = [
        c
        for c in server.model_calls("/v1/messages")
        if "Write a hand-off document" in last_user_text(c.body)
    ]
    assert len(asked) == 1  # the agent was asked once, in its own session
    [document] = await orch.store.documents.find(DocumentKind.HANDOFF, source_session=cid)
    assert document.producer == "agent"
    assert document.status is DocumentStatus.CONSUMED
    assert Path(document.path).parent == agents.workdir / ".delegate" / "handoffs"
    text = Path(document.path).read_text(encoding="utf-8")
    assert validate_handoff(text) == []
    assert "Teaching the loopback server to answer pong" in text
    assert (await orch.get_session(cid)).continued_in == successor

    server.context_tokens = int(window * 0.95)
    third = await agent(agents, {"conversation_id": cid, "prompt": "finish it"})
    assert (third["conversation_id"], third["continued_in"]) == (successor, successor)
    assert "force" in third["context"]["crossed"]
    newest = third["context"]["handoff"]["continued_in"]
    assert newest not in (None, cid, successor)
    [latest] = await orch.store.documents.find(DocumentKind.HANDOFF, source_session=successor)
    assert latest.producer == "facts"  # past force the agent is sent nothing more
    assert len(asked) == len(
        [
            c
            for c in server.model_calls("/v1/messages")
            if "Write a hand-off document" in last_user_text(c.body)
        ]
    )
