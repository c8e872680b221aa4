"""Seed 003 with no supervisor running: a turn a primary agent drives through
``delegate_agent`` (the JSON tool, ``delegate tool`` and MCP) acts on the levels it
crossed when it ends — the warnings recorded, the hand-off written and the work
continued in a new session, past the force level nothing more sent — and with a
supervisor running too, each level is acted on once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from handoff_support import agent_document, make_repo
from support import query, write_config
from test_mcp import call, mcp_client

from core.documents.handoff_template import validate_handoff
from core.models import DocumentKind, DocumentStatus
from core.orchestrator import AgentOrchestrator
from core.supervisor import Supervisor
from core.tools import call_tool

FAST = {"store_poll_s": 0.05, "tick_s": 0.1, "watch_transcripts": False}
TASK = "Implementing the login flow."


def steady_data_dir(root: Path, *, auto_continue: bool = True) -> Path:
    """The ``steady`` agent writes its own hand-off when asked, and its prompts set its
    context: ``half`` 50 %, ``seventy-five`` 75 %, ``ninety-five`` 95 % of 200,000."""
    data = write_config(root / "data")
    script = data / "steady.toml"
    document = agent_document(TASK).replace("'''", "")
    script.write_text(
        f"""
[[rules]]
match = "hands off to a new one"
reply = '''{document}'''
[[rules]]
match = "(?i)^half"
reply = "planned"
context_tokens = 100000
[[rules]]
match = "(?i)^seventy-five"
reply = "logout written"
context_tokens = 150000
[[rules]]
match = "(?i)^ninety-five"
reply = "tests written"
context_tokens = 190000
[[rules]]
match = "."
reply = "turn {{turn}}: carrying on"
""",
        encoding="utf-8",
    )
    with (data / "config.toml").open("a", encoding="utf-8") as config:
        config.write(
            f'\n[agents.steady]\nrunner = "scripted"\nscript = "{script}"\n'
            "context_limit = 200000\n"
            f"\n[context]\nauto_continue = {str(auto_continue).lower()}\n"
        )
    return data


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[AgentOrchestrator, Path]]:
    orch = await AgentOrchestrator.open(steady_data_dir(tmp_path))
    try:
        yield orch, make_repo(tmp_path)
    finally:
        await orch.close(wait=False)


def cells(data: Path, kind: str, cid: str) -> list[dict[str, Any]]:
    """The history cells of one kind about one session, oldest first (what any process sees)."""
    rows = query(
        data,
        "SELECT payload FROM history WHERE kind = ? AND conversation_id = ? ORDER BY id",
        [kind, cid],
    )
    return [json.loads(payload) for (payload,) in rows]


def levels(data: Path, cid: str) -> list[str]:
    return [cell["level"] for cell in cells(data, "context_threshold", cid)]


async def agent(orch: AgentOrchestrator, request: dict[str, Any]) -> dict[str, Any]:
    answer = await call_tool(orch, "delegate_agent", request)
    assert answer["status"] == "ok", answer
    return answer


async def test_tool_calls_crossing_50_70_90_warn_hand_off_and_continue_with_no_supervisor(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    data = orch.store.path.parent

    # 50 %: the warning is recorded by the turn itself, and the answer says so.
    first = await agent(
        orch, {"prompt": "half: plan the auth work", "agent_id": "steady", "cwd": str(repo)}
    )
    cid = first["conversation_id"]
    assert levels(data, cid) == ["notify"]
    assert first["context"]["crossed"] == ["notify"]
    assert first["context"]["percent"] == 50.0
    assert first["context"]["handoff"] is None

    # 75 %: the reminder and the hand-off; the agent writes it, a new session continues.
    second = await agent(orch, {"conversation_id": cid, "prompt": "seventy-five: logout"})
    assert levels(data, cid) == ["notify", "reminder", "handoff"]
    assert second["context"]["crossed"] == ["reminder", "handoff"]
    handoff = second["context"]["handoff"]
    successor = (await orch.get_session(cid)).continued_in
    assert successor is not None
    assert handoff["continued_in"] == successor
    assert handoff["pending"] is False
    assert handoff["failure"] is None
    [document] = await orch.store.documents.find(DocumentKind.HANDOFF, source_session=cid)
    assert handoff["path"] == document.path
    assert document.producer == "agent"
    assert document.status is DocumentStatus.CONSUMED
    assert Path(document.path).parent == repo / ".delegate" / "handoffs"
    assert validate_handoff(Path(document.path).read_text(encoding="utf-8")) == []
    assert len(cells(data, "handoff_written", cid)) == 1
    assert len(cells(data, "session_continued", cid)) == 1

    # 95 % in the successor, past force in one turn: the agent is sent nothing more, a
    # hand-off from facts is written and the work continues once again.
    third = await agent(orch, {"conversation_id": cid, "prompt": "ninety-five: the tests"})
    assert (third["conversation_id"], third["continued_in"]) == (successor, successor)
    assert levels(data, successor) == ["notify", "reminder", "handoff", "force"]
    assert third["context"]["crossed"] == ["notify", "reminder", "handoff", "force"]
    newest = (await orch.get_session(successor)).continued_in
    assert newest is not None
    assert third["context"]["handoff"]["continued_in"] == newest
    [latest] = await orch.store.documents.find(DocumentKind.HANDOFF, source_session=successor)
    assert latest.producer == "facts"
    assert latest.previous_id == document.document_id

    # The exhausted session is sent nothing: a follow-up to it runs in the newest.
    fourth = await agent(orch, {"conversation_id": successor, "prompt": "status?"})
    assert (fourth["conversation_id"], fourth["continued_in"]) == (newest, newest)
    assert "context" not in fourth  # nothing crossed: not a token more in the answer
    prompts = query(
        data, "SELECT prompt FROM runs WHERE conversation_id = ? ORDER BY started_at", [successor]
    )
    assert len(prompts) == 2  # its first turn and the 95 % one: no hand-off prompt


async def test_past_force_with_auto_continue_off_the_session_is_refused_naming_its_handoff(
    tmp_path: Path,
) -> None:
    orch = await AgentOrchestrator.open(steady_data_dir(tmp_path, auto_continue=False))
    repo = make_repo(tmp_path)
    try:
        first = await agent(
            orch, {"prompt": "ninety-five: all at once", "agent_id": "steady", "cwd": str(repo)}
        )
        cid = first["conversation_id"]
        assert first["context"]["crossed"] == ["notify", "reminder", "handoff", "force"]
        handoff = first["context"]["handoff"]
        assert handoff["pending"] is True
        assert handoff["continued_in"] is None
        [document] = await orch.store.documents.find(DocumentKind.HANDOFF, source_session=cid)
        assert document.status is DocumentStatus.PENDING
        assert handoff["path"] == document.path
        assert (Path(document.path).parent / "HANDOFF_PENDING.md").is_file()

        refused = await call_tool(
            orch, "delegate_agent", {"conversation_id": cid, "prompt": "carry on"}
        )
        assert refused["error"]["code"] == "context_exhausted"
        assert "delegate handoff continue" in refused["error"]["message"]
    finally:
        await orch.close(wait=False)


async def test_with_a_supervisor_running_too_each_level_is_acted_on_once(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    data = orch.store.path.parent
    async with Supervisor(orch, **FAST):  # its context monitor judges the same turns
        first = await agent(
            orch, {"prompt": "half: plan the auth work", "agent_id": "steady", "cwd": str(repo)}
        )
        cid = first["conversation_id"]
        await agent(orch, {"conversation_id": cid, "prompt": "seventy-five: logout"})
        await agent(orch, {"conversation_id": cid, "prompt": "ninety-five: the tests"})
        await asyncio.sleep(1.0)  # the monitor's turn to look at every change
    successor = (await orch.get_session(cid)).continued_in
    assert successor is not None
    assert levels(data, cid) == ["notify", "reminder", "handoff"]
    assert levels(data, successor) == ["notify", "reminder", "handoff", "force"]
    for session in (cid, successor):
        assert (
            len(await orch.store.documents.find(DocumentKind.HANDOFF, source_session=session)) == 1
        )
        assert len(cells(data, "handoff_written", session)) == 1
        assert len(cells(data, "session_continued", session)) == 1
        assert cells(data, "handoff_failed", session) == []


async def test_mcp_calls_crossing_50_70_90_hand_off_with_no_supervisor(tmp_path: Path) -> None:
    data = steady_data_dir(tmp_path)
    repo = make_repo(tmp_path)
    async with mcp_client(data) as client:
        first = await call(
            client,
            "delegate_agent",
            {"prompt": "half: plan the auth work", "agent_id": "steady", "cwd": str(repo)},
        )
        cid = first["conversation_id"]
        assert first["context"]["crossed"] == ["notify"]
        second = await call(
            client, "delegate_agent", {"conversation_id": cid, "prompt": "seventy-five: logout"}
        )
        successor = second["context"]["handoff"]["continued_in"]
        assert successor is not None
        third = await call(
            client, "delegate_agent", {"conversation_id": cid, "prompt": "ninety-five: tests"}
        )
        assert third["continued_in"] == successor
        assert third["context"]["crossed"] == ["notify", "reminder", "handoff", "force"]
        newest = third["context"]["handoff"]["continued_in"]
        assert newest not in (None, successor)
    assert levels(data, cid) == ["notify", "reminder", "handoff"]
    assert levels(data, successor) == ["notify", "reminder", "handoff", "force"]
    assert len(cells(data, "session_continued", cid)) == 1
    assert len(cells(data, "session_continued", successor)) == 1
