"""``delegate_sessions`` operation ``context``: the report a primary agent reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import write_config

from core.orchestrator import AgentOrchestrator
from core.tools import call_tool

SCRIPT = """
[[rules]]
match = "(?i)go"
reply = "ok"
context_tokens = 60000
"""


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    script = tmp_path / "usage.toml"
    script.write_text(SCRIPT, encoding="utf-8")
    return write_config(
        tmp_path / "data",
        f'\n[agents.heavy]\nrunner = "scripted"\nscript = "{script}"\ncontext_limit = 100000\n',
    )


async def test_the_context_operation_reports_figures_window_and_level(
    orch: AgentOrchestrator,
) -> None:
    [handle] = await orch.delegate(prompt="go", agent_id="heavy")
    cid = (await handle.wait()).conversation_id

    answer = await call_tool(
        orch, "delegate_sessions", json.dumps({"operation": "context", "conversation_id": cid})
    )

    context = answer["context"]
    assert (context["conversation_id"], context["used_tokens"]) == (cid, 60_000)
    assert (context["limit_tokens"], context["window_source"]) == (100_000, "config")
    assert (context["percent"], context["level"]) == (60.0, "reminder")
    assert context["trend"] == [60_000]
    assert context["chain"] == [cid]


async def test_the_context_operation_needs_a_known_session(orch: AgentOrchestrator) -> None:
    missing = await call_tool(orch, "delegate_sessions", {"operation": "context"})
    assert missing["error"]["code"] == "invalid_request"
    unknown = await call_tool(
        orch, "delegate_sessions", {"operation": "context", "conversation_id": "nope-nope"}
    )
    assert unknown["error"]["code"] == "unknown_conversation"
    paged = await call_tool(
        orch,
        "delegate_sessions",
        {"operation": "context", "conversation_id": "nope-nope", "limit": 3},
    )
    assert paged["error"]["code"] == "invalid_request"
