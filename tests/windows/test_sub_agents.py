"""Seed 004: a sub-agent launched with a parent gets its own window (clamped to
its model's when smaller, with a note for the parent) and the parent's system
and context messages, copied once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import BASE_US, write_config

from core.errors import UnknownConversation
from core.events import ChildClamped
from core.models import MessageCategory, Role, RunStatus, WindowSource
from core.orchestrator import AgentOrchestrator
from core.store import NewMessage
from core.tools import call_tool
from tui.cli import main as cli_main


async def _parent(orch: AgentOrchestrator, agent: str = "echo") -> str:
    """A finished session of ``agent`` with a system prompt and a context document."""
    [handle] = await orch.delegate(prompt="map the repo", agent_id=agent)
    assert (await handle.wait()).status is RunStatus.COMPLETED
    cid = handle.conversation_id
    await orch.store.messages.append(
        cid,
        [
            NewMessage("sys-1", Role.SYSTEM, "You are terse.", BASE_US, 4),
            NewMessage(
                "ctx-1",
                Role.USER,
                "## Context Capsule\nthe auth module lives in core/auth",
                BASE_US + 1,
                12,
                category=MessageCategory.CONTEXT,
            ),
            NewMessage("tool-1", Role.TOOL, "ls: 3 files", BASE_US + 2, 3, {"name": "shell"}),
        ],
    )
    return cid


async def _child(orch: AgentOrchestrator, parent: str, agent: str, prompt: str) -> str:
    [handle] = await orch.delegate(prompt=prompt, agent_id=agent, parent_id=parent)
    assert (await handle.wait()).status is RunStatus.COMPLETED
    return handle.conversation_id


async def test_a_child_on_a_smaller_model_is_clamped_and_the_parent_told(
    orch: AgentOrchestrator,
) -> None:
    parent = await _parent(orch)  # echo: 200k
    child = await _child(orch, parent, "scribe", "write the docs")  # scribe: 32k

    session = await orch.get_session(child)
    assert session.parent_id == parent
    assert session.context.limit_tokens == 32_000
    assert session.context.window_source is WindowSource.CLAMP
    assert session.context.clamped_from == 200_000
    assert (await orch.get_session(parent)).context.limit_tokens == 200_000  # unchanged
    [event] = [e for e in await orch.history(20) if isinstance(e, ChildClamped)]
    assert (event.conversation_id, event.child_id, event.child_agent_id) == (
        parent,
        child,
        "scribe",
    )
    assert (event.limit_tokens, event.parent_limit_tokens) == (32_000, 200_000)

    # The note reaches the parent in its next prompt, once.
    [again] = await orch.delegate(prompt="status?", conversation_id=parent)
    run = await again.wait()
    assert "32,000" in run.prompt
    assert child in run.prompt
    assert run.prompt.endswith("status?")
    [third] = await orch.delegate(prompt="and now?", conversation_id=parent)
    assert (await third.wait()).prompt == "and now?"


async def test_a_child_with_a_window_as_large_is_not_clamped(orch: AgentOrchestrator) -> None:
    parent = await _parent(orch, "scribe")  # 32k
    child = await _child(orch, parent, "echo", "go")  # 200k
    session = await orch.get_session(child)
    assert session.context.limit_tokens == 200_000
    assert session.context.window_source is not WindowSource.CLAMP
    assert session.context.clamped_from is None
    assert "child_clamped" not in [e.kind for e in await orch.history(10)]
    [again] = await orch.delegate(prompt="status?", conversation_id=parent)
    assert (await again.wait()).prompt == "status?"


async def test_the_child_starts_with_the_parents_system_and_context_only_once(
    orch: AgentOrchestrator,
) -> None:
    parent = await _parent(orch)
    child = await _child(orch, parent, "echo", "first task")

    page = await orch.recent_messages(child, limit=20)
    oldest_first = list(reversed(page.messages))
    assert [(m.category, m.content) for m in oldest_first[:2]] == [
        (MessageCategory.SYSTEM, "You are terse."),
        (MessageCategory.CONTEXT, "## Context Capsule\nthe auth module lives in core/auth"),
    ]
    # No dialog or tool traffic of the parent's reached the child.
    contents = [m.content for m in oldest_first]
    assert "map the repo" not in contents
    assert "ls: 3 files" not in contents
    assert [m.content for m in oldest_first[2:]] == ["first task", "[echo] turn 1: first task"]

    # Later parent messages do not mirror into the child.
    await orch.store.messages.append(
        parent, [NewMessage("sys-2", Role.SYSTEM, "Be verbose now.", BASE_US + 9, 4)]
    )
    [handle] = await orch.delegate(prompt="second task", conversation_id=child)
    await handle.wait()
    contents = [m.content for m in (await orch.recent_messages(child, limit=20)).messages]
    assert "Be verbose now." not in contents
    assert contents.count("You are terse.") == 1


async def test_an_unknown_parent_is_refused_and_nothing_is_launched(
    orch: AgentOrchestrator,
) -> None:
    with pytest.raises(UnknownConversation):
        await orch.delegate(prompt="go", parent_id="no-such-session")
    assert (await orch.list_sessions()).sessions == []


def test_cli_run_parent_launches_a_sub_agent(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(data_dir)
    base = ["--data-dir", str(data_dir)]
    assert cli_main([*base, "run", "--json", "map the repo"]) == 0
    parent = json.loads(capsys.readouterr().out)["conversation_id"]

    code = cli_main([*base, "run", "--json", "--agent", "scribe", "--parent", parent[:8], "docs"])
    assert code == 0
    child = json.loads(capsys.readouterr().out)["conversation_id"]
    assert cli_main([*base, "sessions", "show", child, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["session"]["parent_id"] == parent
    assert shown["session"]["context"]["window_source"] == "clamp"

    assert cli_main([*base, "run", "--parent", parent, "--session", parent, "x"]) == 1
    assert "parent" in capsys.readouterr().err


async def test_the_agent_tool_launches_a_sub_agent(orch: AgentOrchestrator) -> None:
    parent = await _parent(orch)
    response = await call_tool(
        orch,
        "delegate_agent",
        {"prompt": "docs", "agent_id": "scribe", "parent_id": parent},
    )
    assert response["status"] == "ok", response
    child = await orch.get_session(response["conversation_id"])
    assert child.parent_id == parent
    assert child.context.clamped_from == 200_000


REALDATA = Path(__file__).parent.parent / "fixtures" / "realdata"
COMPACTED = "019c8a59-e9dd-71f0-9ae3-4079fe9726a9"  # a Codex rollout with a compaction


async def test_an_imported_parent_is_categorised_on_read_and_shares_its_summary(
    orch: AgentOrchestrator, tmp_path: Path
) -> None:
    codex_home = tmp_path / "codex"
    rollout = next((REALDATA / "codex").rglob(f"*{COMPACTED}.jsonl"))
    target = codex_home / rollout.relative_to(REALDATA / "codex")
    target.parent.mkdir(parents=True)
    target.write_bytes(rollout.read_bytes())
    await orch.import_sources(tmp_path / "no-claude", codex_home, workers=0)

    messages, cursor = [], None
    while True:
        page = await orch.recent_messages(COMPACTED, limit=100, cursor=cursor)
        messages += page.messages
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    categories = {m.category for m in messages}
    assert MessageCategory.TOOLS in categories
    assert MessageCategory.DIALOG in categories
    [summary] = [m for m in messages if m.category is MessageCategory.CONTEXT]
    assert summary.content.startswith("context compacted: ")
    assert all(m.category is MessageCategory.TOOLS for m in messages if m.tool is not None)

    child = await _child(orch, COMPACTED, "echo", "carry on from the summary")
    oldest_first = list(reversed((await orch.recent_messages(child, limit=10)).messages))
    assert [(m.category, m.content) for m in oldest_first[:1]] == [
        (MessageCategory.CONTEXT, summary.content)
    ]
    assert oldest_first[1].content == "carry on from the summary"
