"""Seed 004's one-time share for delegate's own sessions: what a launch carries (a
capsule) is stored as context beside the prompt, so a sub-agent of that session starts
with it, once, and never with the prompt itself; the meters still count it."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from capsule_support import capsule_text, make_repo, save
from rich.console import Console

from core.documents.prompt import CAPSULE_HEADING
from core.models import Message, MessageCategory, Role, RunStatus
from core.orchestrator import AgentOrchestrator
from tui.cli import main as cli_main
from tui.widgets.message_view import message_renderable

TASK = "Make the app print v2."


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path)
    save(root, capsule_text())
    return root


async def _oldest_first(orch: AgentOrchestrator, cid: str) -> list[Message]:
    return list(reversed((await orch.recent_messages(cid, limit=50)).messages))


async def _launch(orch: AgentOrchestrator, repo: Path, **extra: str) -> str:
    [handle] = await orch.delegate(prompt=TASK, agent_id="echo", cwd=str(repo), **extra)
    run = await handle.wait()
    assert run.status is RunStatus.COMPLETED, run.error
    # The agent received the task and the capsule in one prompt, as before.
    assert run.output.index(TASK) < run.output.index(CAPSULE_HEADING)
    return handle.conversation_id


async def test_a_capsule_is_stored_as_context_beside_the_prompt(
    orch: AgentOrchestrator, repo: Path
) -> None:
    cid = await _launch(orch, repo, capsule="latest")
    prompt, carried, reply = await _oldest_first(orch, cid)
    assert (prompt.role, prompt.category, prompt.content) == (
        Role.USER,
        MessageCategory.DIALOG,
        TASK,
    )
    assert carried.category is MessageCategory.CONTEXT
    assert carried.content.startswith(CAPSULE_HEADING)
    assert "WIDGET-MARKER-7" in carried.content
    assert TASK not in carried.content
    assert reply.role is Role.ASSISTANT

    # The meters count it: a context message is in the context, not a turn.
    session = await orch.get_session(cid)
    assert session.metrics.turns == 1
    assert carried.token_count > 0
    stored = prompt.token_count + carried.token_count + reply.token_count
    assert session.context.used_tokens == stored
    report = await orch.context_report(cid)
    assert report.breakdown[MessageCategory.CONTEXT.value] == carried.token_count


async def test_a_sub_agent_inherits_the_capsule_once_and_not_the_task(
    orch: AgentOrchestrator, repo: Path
) -> None:
    parent = await _launch(orch, repo, capsule="latest")
    [parent_capsule] = [
        m for m in await _oldest_first(orch, parent) if m.category is MessageCategory.CONTEXT
    ]
    [handle] = await orch.delegate(
        prompt="write the tests", agent_id="echo", cwd=str(repo), parent_id=parent
    )
    assert (await handle.wait()).status is RunStatus.COMPLETED
    child = handle.conversation_id
    messages = await _oldest_first(orch, child)
    assert [(m.category, m.content) for m in messages[:2]] == [
        (MessageCategory.CONTEXT, parent_capsule.content),
        (MessageCategory.DIALOG, "write the tests"),
    ]
    assert all(TASK not in m.content for m in messages)

    [again] = await orch.delegate(prompt="and the docs", conversation_id=child)
    assert (await again.wait()).status is RunStatus.COMPLETED
    contents = [m.content for m in await _oldest_first(orch, child)]
    assert contents.count(parent_capsule.content) == 1  # copied at launch, never again


def test_the_preview_and_the_transcript_show_context_apart(
    data_dir: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--data-dir", str(data_dir)]
    launch = ["run", "--json", "--agent", "echo", "--cwd", str(repo), "--capsule", "latest", TASK]
    assert cli_main([*base, *launch]) == 0
    cid = json.loads(capsys.readouterr().out)["conversation_id"]

    # `sessions show`: the capsule under a label of its own, the prompt as the person's.
    assert cli_main([*base, "sessions", "show", cid]) == 0
    shown = capsys.readouterr().out
    assert re.search(r"^user \(context\) · #2$", shown, re.MULTILINE), shown
    assert re.search(r"^user · #1$", shown, re.MULTILINE), shown
    assert cli_main([*base, "sessions", "show", cid, "--json"]) == 0
    messages = json.loads(capsys.readouterr().out)["messages"]
    assert [m["category"] for m in reversed(messages)] == ["dialog", "context", "dialog"]

    # The preview and the transcript view: a "context" label, quiet, beside the role.
    at = datetime(2026, 1, 1, tzinfo=UTC)
    carried = Message(
        id="m",
        conversation_id="c",
        seq=1,
        role=Role.USER,
        content=f"{CAPSULE_HEADING}\n\n# Mission Snapshot",
        created_at=at,
        category=MessageCategory.CONTEXT,
    )
    console = Console(width=80, record=True)
    console.print(message_renderable(carried, at, number=2))
    assert console.export_text().splitlines()[0].startswith("user · context  #2")
