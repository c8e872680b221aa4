"""Seed 003 with the real Claude Code CLI: a session continues without a person.

(a) ``delegate open ID`` runs the real ``claude`` in a tmux pane (a tmux server of
the test's own) against the loopback model server. Once the window passes the
hand-off level, delegate's hooks (given to the CLI as ``--settings``) make the
agent write its hand-off; delegate ends that CLI and starts a new session in the
same pane whose first prompt is the hand-off, linked as the successor. Nobody
types after the one prompt that fills the window.

(b) A session a person runs outside delegate, with ``delegate hooks install
claude-code``: its prompts are refused past the force level (``UserPromptSubmit``),
naming its hand-off and, once continued, its successor; a resumed session is given
its hand-off again (``SessionStart``).

Skipped where tmux is missing (and, outside CI, where the CLI is).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from agent_clis import Agents, find_cli
from model_server import last_user_text
from test_hooks_real import AGENTS_HANDOFF, CLI_TIMEOUT_S
from test_reopen_real import REPO, Pane, first_run_done

from core import ids
from core.importing.importer import import_transcript
from core.models import ContextDocument, DocumentKind, DocumentStatus, Session
from tui.cli import main

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

T = TypeVar("T")


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[Pane]:
    """A tmux server of the test's own (its socket), killed at the end."""
    server = Pane(f"delegate-e2e-{os.getpid()}-{tmp_path.name}")
    yield server
    server.tmux("kill-server")


WAIT_S = 240.0  # a loaded 2-core machine: each hook is a Python start of a few seconds
CONTINUES = "You continue the work of a previous session"


async def eventually(check: Callable[[], Awaitable[T | None]], what: str, shown: Pane) -> T:
    """``check()``'s first answer that is not None, within :data:`WAIT_S`."""
    deadline = time.monotonic() + WAIT_S
    while (found := await check()) is None:
        assert time.monotonic() < deadline, f"never happened: {what}; the pane:\n{shown.text()}"
        await asyncio.sleep(0.3)
    return found


def claude_p(agents: Agents, *args: str) -> subprocess.CompletedProcess[str]:
    """``claude -p ... --output-format json`` in the project, as a person runs it."""
    return subprocess.run(
        [find_cli("claude"), "-p", *args, "--output-format", "json"],
        cwd=agents.workdir,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


async def first_session(agents: Agents) -> Session:
    """One turn of a session a person ran, imported: the window it reports is known."""
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(agents.workdir)], check=True)
    done = await asyncio.to_thread(claude_p, agents, "start on the pong module")
    assert done.returncode == 0, done.stderr[-2000:]
    sid = str(json.loads(done.stdout)["session_id"])
    assert await import_transcript(agents.orch.store, ids.CLAUDE_CODE, sid)
    session = await agents.orch.get_session(sid)
    assert session.context.limit_tokens > 0
    return session


@pytest.mark.parametrize("front", ["open", "panel"])
async def test_a_session_opened_by_delegate_continues_in_the_same_pane_by_itself(
    agents: Agents, pane: Pane, front: str
) -> None:
    """``delegate open ID``, or the panel's ``enter`` on the session: one mechanism."""
    find_cli("claude")
    orch, server = agents.orch, agents.server
    session = await first_session(agents)
    sid = session.conversation_id
    first_run_done(agents.home, agents.workdir, os.environ["ANTHROPIC_API_KEY"])
    server.reply_when("Write a hand-off document", AGENTS_HANDOFF)

    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    env |= {"PYTHONPATH": str(REPO), "TERM": "xterm-256color"}
    data = orch.store.path.parent
    command = [sys.executable, "-m", "tui.cli", "--data-dir", str(data)]
    if front == "open":
        command += ["open", sid]
    window = ["-s", "panel", "-x", "120", "-y", "36", "-c", str(agents.workdir)]
    started = await asyncio.create_subprocess_exec(
        *["tmux", "-L", pane.socket, "-f", "/dev/null", "new-session", "-d", *window, *command],
        env=env,
    )
    assert await asyncio.wait_for(started.wait(), 10) == 0
    if front == "panel":
        await pane.wait_for(lambda s: "start on the pong module" in s, "the panel", 120)
        pane.tmux("send-keys", "-t", "panel", "Enter")
    await pane.wait_for(lambda s: "Claude Code v" in s and "pong 1" in s, "claude, resumed", 120)

    # The window fills past the hand-off level with this one prompt; the successor's
    # first request ends that (the loopback server reports a normal window again).
    server.context_tokens = int(session.context.limit_tokens * 0.75)
    server.context_tokens_until = CONTINUES
    await pane.type("carry on")

    async def handed_off() -> ContextDocument | None:
        found = await orch.store.documents.find(DocumentKind.HANDOFF, source_session=sid)
        return found[0] if found else None

    doc = await eventually(handed_off, "the hook wrote the agent's hand-off", pane)
    assert doc.producer == "agent"
    path = Path(doc.path)
    assert path.parent == agents.workdir / ".delegate" / "handoffs"

    def successor_asked() -> list[dict[str, object]]:
        return [
            c.body
            for c in server.model_calls("/v1/messages")
            if CONTINUES in json.dumps((c.body.get("messages") or [{}])[0])
        ]

    async def asked() -> list[dict[str, object]] | None:
        return successor_asked() or None

    [first, *_] = await eventually(asked, "the successor's first request", pane)
    # Its first prompt is the hand-off itself (the agent's words and delegate's figures).
    opening = json.dumps(first["messages"][0])  # type: ignore[index]
    assert "Teaching the loopback server to answer pong" in opening
    assert str(path) in opening
    assert f"Previous Instance**: {sid}" in opening
    assert "carry on" not in json.dumps(first["messages"])  # a new session, not the old one

    # The same pane shows the new Claude Code session: the hand-off as its prompt, then
    # its first reply ("pong 1": one message in its conversation; the old one's were more).
    def answered(shown: str) -> bool:
        return shown.rfind("● pong 1") > shown.rfind("Instructions for New Instance") > -1

    await pane.wait_for(answered, "the successor answering in the pane", 120)

    async def linked() -> Session | None:
        old = await orch.get_session(sid)
        return old if old.continued_in is not None else None

    old = await eventually(linked, "the successor linked to the old session", pane)
    new_id = old.continued_in
    assert new_id is not None
    assert new_id != sid
    consumed = await orch.store.documents.get(doc.document_id)
    assert consumed.status is DocumentStatus.CONSUMED
    assert consumed.consumers == (new_id,)
    assert not (path.parent / "HANDOFF_PENDING.md").exists()
    new = await orch.get_session(new_id)
    assert new.continued_from == sid
    history = [e.kind for e in (await orch.store.history.events(limit=80)).events]
    assert "handoff_written" in history
    assert "session_continued" in history

    # The person leaves the successor: `delegate open` ends with it; the panel comes back.
    await pane.type("/exit")
    await pane.wait_for(lambda s: "Claude Code v" not in s, "claude left", 60)
    if front == "panel":
        await pane.wait_for(lambda s: "start on the pong module" in s, "the panel back", 60)


async def test_past_the_force_level_prompts_are_refused_and_a_resume_gets_the_handoff(
    agents: Agents, capsys: pytest.CaptureFixture[str]
) -> None:
    find_cli("claude")
    orch, server = agents.orch, agents.server
    session = await first_session(agents)
    sid = session.conversation_id
    install = ["--data-dir", str(orch.store.path.parent), "hooks", "install", "claude-code"]
    assert await asyncio.to_thread(main, install) == 0
    assert "UserPromptSubmit" in capsys.readouterr().out
    server.reply_when("Write a hand-off document", AGENTS_HANDOFF)

    # 92%: the turn's Stop hook has the agent write its hand-off, as at 70%.
    server.context_tokens = int(session.context.limit_tokens * 0.92)
    done = await asyncio.to_thread(claude_p, agents, "--resume", sid, "carry on")
    assert done.returncode == 0, done.stderr[-2000:]
    [doc] = await orch.store.documents.find(DocumentKind.HANDOFF, source_session=sid)
    calls = len(server.model_calls("/v1/messages"))

    # The next prompt is refused before it reaches the model, naming the hand-off.
    refused = await asyncio.to_thread(claude_p, agents, "--resume", sid, "one more thing")
    shown = refused.stdout + refused.stderr
    assert "past the 90%" in shown, shown[-2000:]
    assert doc.path in shown
    assert len(server.model_calls("/v1/messages")) == calls  # never sent
    server.context_tokens = None

    # A resumed session is given its hand-off again (SessionStart, source resume): the
    # refusal stands, but what it was told reaches the model once it may talk again.
    # A new session in the project continues the hand-off ...
    second = await asyncio.to_thread(claude_p, agents, "hello")
    assert second.returncode == 0, second.stderr[-2000:]
    new_id = str(json.loads(second.stdout)["session_id"])
    assert (await orch.get_session(sid)).continued_in == new_id

    # ... and the old one's refusal now names it.
    again = await asyncio.to_thread(claude_p, agents, "--resume", sid, "still there?")
    assert f"continues in session {new_id}" in again.stdout + again.stderr

    # The successor resumed gets the hand-off it started from, in its context.
    before = len(server.model_calls("/v1/messages"))
    resumed = await asyncio.to_thread(claude_p, agents, "--resume", new_id, "go on")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    [call, *_] = server.model_calls("/v1/messages")[before:]
    sent = json.dumps(call.body)
    assert "This session started from a hand-off; here it is again." in sent
    assert sent.count("Teaching the loopback server to answer pong") == 2  # at start, again
    assert "go on" in last_user_text(call.body)

    # Compacted, it is given the hand-off again after the compaction's boundary
    # (SessionStart, source compact): Claude Code records what a hook added.
    compacted = await asyncio.to_thread(claude_p, agents, "--resume", new_id, "/compact")
    assert compacted.returncode == 0, compacted.stderr[-2000:]
    transcript = await orch.transcript_path(new_id)
    assert transcript is not None
    lines = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    [boundary] = [i for i, e in enumerate(lines) if e.get("subtype") == "compact_boundary"]
    after = [json.dumps(e) for e in lines[boundary:] if e.get("type") == "attachment"]
    assert any("here it is again" in a and "Teaching the loopback" in a for a in after)
