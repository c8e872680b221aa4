"""delegate's hooks in the real Claude Code CLI: a session a person runs writes its own
hand-off at the hand-off level, and the next session starts from it.

The CLI runs as a person would run it (``claude -p`` in a project, not driven by
delegate) with the hooks ``delegate hooks install claude-code`` put in its
settings; the loopback model server reports a nearly full window and plays the
agent writing its hand-off.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest
from agent_clis import Agents, find_cli
from model_server import last_user_text

from core.documents.handoff_template import HANDOFF_SECTIONS, validate_handoff
from core.errors import UnknownConversation
from core.models import ContextDocument, DocumentKind, DocumentStatus, Session
from tui.cli import main

pytestmark = pytest.mark.e2e

CLI_TIMEOUT_S = 120
T = TypeVar("T")

AGENTS_HANDOFF = """Here is the hand-off.

# Context Handoff

## Current Task

Teaching the loopback server to answer pong, in the pong module.

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
2. Run the tests

## Important Context

- The reply must stay deterministic.

## Links

- pong.py

## Instructions for New Instance

1. Read this hand-off, then pong.py, then continue from Next Steps.
"""


def claude(agents: Agents, *args: str) -> dict[str, object]:
    """``claude -p ... --output-format json`` in the project, as a person runs it."""
    done = subprocess.run(
        [find_cli("claude"), "-p", *args, "--output-format", "json"],
        cwd=agents.workdir,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


async def test_claude_code_writes_its_own_handoff_at_70_and_the_next_session_gets_it(
    agents: Agents, capsys: pytest.CaptureFixture[str]
) -> None:
    find_cli("claude")
    orch, server = agents.orch, agents.server
    git = ["git", "init", "-q", str(agents.workdir)]
    await asyncio.to_thread(subprocess.run, git, check=True)
    data_dir = orch.store.path.parent
    install = ["--data-dir", str(data_dir), "hooks", "install", "claude-code"]
    assert await asyncio.to_thread(main, install) == 0
    assert "Installed" in capsys.readouterr().out
    server.reply_when("Write a hand-off document", AGENTS_HANDOFF)

    # A first turn with room to spare: the Stop hook imports it, nothing more.
    first = await asyncio.to_thread(claude, agents, "start on the pong module")
    sid = str(first["session_id"])
    session = await orch.get_session(sid)
    assert session.context.limit_tokens > 0
    assert await orch.store.documents.find(DocumentKind.HANDOFF, source_session=sid) == []
    calls_before = len(server.model_calls("/v1/messages"))

    # The window fills to 75%: the next turn ends with the agent writing its hand-off.
    server.context_tokens = int(session.context.limit_tokens * 0.75)
    await asyncio.to_thread(claude, agents, "--resume", sid, "carry on")
    calls = server.model_calls("/v1/messages")[calls_before:]
    asked = [c for c in calls if "Write a hand-off document" in last_user_text(c.body)]
    assert len(asked) == 1  # the Stop hook gave the agent the template, once
    request = last_user_text(asked[0].body)
    for section in HANDOFF_SECTIONS:
        assert f"## {section}" in request

    [doc] = await orch.store.documents.find(DocumentKind.HANDOFF, source_session=sid)
    assert doc.producer == "agent"
    assert doc.status is DocumentStatus.PENDING
    path = Path(doc.path)
    assert path.parent == agents.workdir / ".delegate" / "handoffs"
    assert path.name.startswith("handoff-")
    assert path.suffix == ".md"
    text = path.read_text()
    assert validate_handoff(text) == []
    assert "Teaching the loopback server to answer pong" in text  # the agent's own words
    assert f"**Previous Instance**: {sid}" in text  # delegate's own figures
    assert "(75%)" in text
    assert (path.parent / "HANDOFF_PENDING.md").is_file()
    history = [e.kind for e in (await orch.store.history.events(limit=50)).events]
    assert "handoff_written" in history
    assert "context_threshold" in history

    # A new session in the project is told, and given the hand-off.
    server.context_tokens = None
    before = len(server.model_calls("/v1/messages"))
    second = await asyncio.to_thread(claude, agents, "hello")
    new_calls = server.model_calls("/v1/messages")[before:]
    assert "Teaching the loopback server to answer pong" in json.dumps(new_calls[0].body)
    assert str(path) in json.dumps(new_calls[0].body)
    consumed = await orch.store.documents.get(doc.document_id)
    assert consumed.status is DocumentStatus.CONSUMED
    assert consumed.consumers == (str(second["session_id"]),)
    assert not (path.parent / "HANDOFF_PENDING.md").exists()
    # Its first turn linked the two: the chain runs old -> new.
    old, new = await orch.get_session(sid), await orch.get_session(str(second["session_id"]))
    assert old.continued_in == new.conversation_id
    assert new.continued_from == sid


async def eventually(check: Callable[[], Awaitable[T | None]], what: str) -> T:
    """``check()``'s first answer that is not None, waiting up to a deadline.

    Codex starts ``notify`` and does not wait for it: the turn's effects land a
    moment after ``codex exec`` has exited.
    """
    deadline = time.monotonic() + CLI_TIMEOUT_S
    while (found := await check()) is None:
        assert time.monotonic() < deadline, f"never happened: {what}"
        await asyncio.sleep(0.1)
    return found


def codex(agents: Agents, *args: str) -> str:
    """``codex exec ...`` in the project, as a person runs it; its session id."""
    done = subprocess.run(
        [find_cli("codex"), "exec", "--skip-git-repo-check", *args],
        cwd=agents.workdir,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    [line] = [x for x in done.stderr.splitlines() if x.startswith("session id: ")]
    return line.removeprefix("session id: ").strip()


async def test_codex_notify_judges_each_turn_and_hands_off_from_facts(
    agents: Agents, capsys: pytest.CaptureFixture[str]
) -> None:
    find_cli("codex")
    orch, server = agents.orch, agents.server
    git = ["git", "init", "-q", str(agents.workdir)]
    await asyncio.to_thread(subprocess.run, git, check=True)
    install = ["--data-dir", str(orch.store.path.parent), "hooks", "install", "codex"]
    assert await asyncio.to_thread(main, install) == 0
    assert "Installed" in capsys.readouterr().out

    sid = await asyncio.to_thread(codex, agents, "start on the pong module")

    async def imported() -> Session | None:
        with contextlib.suppress(UnknownConversation):
            return await orch.get_session(sid)
        return None

    session = await eventually(imported, "notify imported the turn")
    assert session.context.limit_tokens > 0
    assert await orch.store.documents.find(DocumentKind.HANDOFF, source_session=sid) == []

    server.context_tokens = int(session.context.limit_tokens * 0.75)
    await asyncio.to_thread(codex, agents, "resume", sid, "carry on")

    async def handed_off() -> list[ContextDocument] | None:
        # Done when it waits for a person (registered first, then marked pending).
        docs = orch.store.documents
        pending = await docs.find(
            DocumentKind.HANDOFF, source_session=sid, status=DocumentStatus.PENDING
        )
        return pending or None

    [doc] = await eventually(handed_off, "notify handed the session off")
    crossed = [c.level.value for c in await orch.store.context.crossings(sid)]
    assert crossed == ["notify", "reminder", "handoff"]
    assert doc.producer == "facts"  # notify cannot ask the agent: built from facts
    assert doc.status is DocumentStatus.PENDING
    assert Path(doc.path).parent == agents.workdir / ".delegate" / "handoffs"
    assert validate_handoff(Path(doc.path).read_text()) == []

    uninstall = ["--data-dir", str(orch.store.path.parent), "hooks", "uninstall", "codex"]
    assert await asyncio.to_thread(main, uninstall) == 0
    assert "notify" not in (agents.codex_home / "config.toml").read_text()
