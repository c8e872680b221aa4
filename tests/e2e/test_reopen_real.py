"""Back into the real session with the real Claude Code and Codex CLIs, from the real panel.

The panel runs in a tmux pane (a tmux server of the test's own) over the store a
delegate launch wrote; ``enter`` hands the terminal to ``claude --resume ID``,
which talks to the loopback model server. A prompt typed there reaches the model
with the session's history; ``/exit`` brings the panel back, showing the reply
it re-read from the transcript. Skipped where tmux is missing (and, outside CI,
where the CLI is).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from agent_clis import Agents, find_cli
from model_server import Recorded, conversation_length
from test_real_clis import indexed, processes_with_home, run_to_end

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

REPO = Path(__file__).resolve().parents[2]


class Pane:
    """One tmux server (its own socket) running one command in a 120x36 pane."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        return done.stdout

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "panel")

    async def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "panel", "-l", text)
        await asyncio.sleep(0.3)  # the CLI's input box takes a typed burst before the enter key
        self.tmux("send-keys", "-t", "panel", "Enter")

    async def wait_for(
        self, condition: Callable[[str], bool], what: str, seconds: float = 45
    ) -> str:
        """What the pane shows once ``condition`` holds; the test's own loop keeps
        running meanwhile (its orchestrator may hold the import lock briefly)."""
        deadline = time.monotonic() + seconds
        while True:
            shown = self.text()
            if condition(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the pane shows:\n{shown}")
            await asyncio.sleep(0.2)


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[Pane]:
    server = Pane(f"delegate-e2e-{os.getpid()}-{tmp_path.name}")
    yield server
    server.tmux("kill-server")


def first_run_done(home: Path, workdir: Path, api_key: str) -> None:
    """What a person answers once in Claude Code's first interactive start: onboarding
    done, this folder trusted, this API key approved (kept in ``~/.claude.json``)."""
    path = home / ".claude.json"
    state = json.loads(path.read_text()) if path.exists() else {}
    state["hasCompletedOnboarding"] = True
    state.setdefault("projects", {})[str(workdir)] = {"hasTrustDialogAccepted": True}
    state["customApiKeyResponses"] = {"approved": [api_key[-20:]], "rejected": []}
    path.write_text(json.dumps(state))


async def open_panel(pane: Pane, agents: Agents, cwd: Path) -> None:
    """The real panel over the test's store, in the pane, with the test's environment."""
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    env |= {"PYTHONPATH": str(REPO), "TERM": "xterm-256color"}
    data = agents.orch.store.path.parent
    panel = [sys.executable, "-m", "tui.cli", "--data-dir", str(data)]
    window = ["-s", "panel", "-x", "120", "-y", "36", "-c", str(cwd)]
    started = await asyncio.create_subprocess_exec(
        *["tmux", "-L", pane.socket, "-f", "/dev/null", "new-session", "-d", *window, *panel],
        env=env,
    )
    assert await asyncio.wait_for(started.wait(), 10) == 0


async def test_enter_opens_the_real_claude_and_the_panel_comes_back(
    agents: Agents, pane: Pane, tmp_path: Path
) -> None:
    find_cli("claude")
    [launch] = await agents.orch.delegate("say pong", "claude-code", cwd=str(agents.workdir))
    await run_to_end(launch)
    cid = launch.conversation_id
    [transcript] = list(agents.claude_projects.glob(f"*/{cid}.jsonl"))
    before = await indexed(agents, cid, transcript)
    first_run_done(agents.home, agents.workdir, os.environ["ANTHROPIC_API_KEY"])

    await open_panel(pane, agents, tmp_path)
    await pane.wait_for(lambda s: "say pong" in s and "reusable" in s, "the panel with the session")

    pane.tmux("send-keys", "-t", "panel", "Enter")
    await pane.wait_for(lambda s: "Claude Code v" in s and "pong 1" in s, "claude, resumed")
    await pane.type("what next")
    await pane.wait_for(lambda s: "pong 3" in s, "the reply in claude")
    await pane.type("/exit")
    await pane.wait_for(lambda s: "reusable" in s and "Claude Code v" not in s, "the panel back")
    await pane.wait_for(lambda s: "pong 3" in s, "the reply re-read, in the preview")

    # The model saw the session's history: Claude resumed it, not a new one.
    [last] = [
        c for c in agents.server.model_calls("/v1/messages") if "what next" in json.dumps(c.body)
    ]
    assert conversation_length("/v1/messages", last.body) == 3
    assert "say pong" in json.dumps(last.body["messages"])
    after = await agents.orch.get_session(cid)
    assert after.metrics.messages > before.metrics.messages


async def test_enter_opens_the_real_codex_and_the_panel_comes_back(
    agents: Agents, pane: Pane, tmp_path: Path
) -> None:
    find_cli("codex")
    [launch] = await agents.orch.delegate("say pong", "codex", cwd=str(agents.workdir))
    await run_to_end(launch)
    cid = launch.conversation_id  # the thread id Codex named
    [rollout] = list((agents.codex_home / "sessions").glob(f"*/*/*/rollout-*-{cid}.jsonl"))
    before = await indexed(agents, cid, rollout)
    calls_before = len(agents.server.model_calls("/v1/responses"))
    try:
        await open_panel(pane, agents, tmp_path)
        await pane.wait_for(lambda s: "say pong" in s and "reusable" in s, "the panel")

        pane.tmux("send-keys", "-t", "panel", "Enter")
        await pane.wait_for(lambda s: "OpenAI Codex" in s and "say pong" in s, "codex, resumed")
        await pane.type("what next")

        def asked() -> list[Recorded]:
            """The model calls that carried the prompt typed in Codex (not side requests)."""
            calls = agents.server.model_calls("/v1/responses")[calls_before:]
            return [c for c in calls if "what next" in json.dumps(c.body)]

        await pane.wait_for(lambda _: bool(asked()), "codex to ask the model")
        last = asked()[0]
        reply = f"pong {conversation_length('/v1/responses', last.body)}"
        await pane.wait_for(lambda s: reply in s, "the reply in codex")
        await pane.type("/exit")
        await pane.wait_for(lambda s: "reusable" in s and "OpenAI Codex" not in s, "the panel")
        await pane.wait_for(lambda s: reply in s, "the reply re-read, in the preview")

        # Codex resumed the thread: the model saw the first prompt again.
        assert "say pong" in json.dumps(last.body)
        after = await agents.orch.get_session(cid)
        assert after.metrics.messages > before.metrics.messages
    finally:
        # Interactive Codex leaves a background app-server behind: end the ones it started.
        for pid in processes_with_home(agents.home):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)


async def test_enter_on_a_session_claude_cannot_resume_keeps_claude_s_own_error(
    agents: Agents, pane: Pane, tmp_path: Path
) -> None:
    """The real Claude Code, asked to resume a conversation whose transcript is gone,
    prints its own error and exits 1: the panel shows those words, not only a status."""
    find_cli("claude")
    [launch] = await agents.orch.delegate("say pong", "claude-code", cwd=str(agents.workdir))
    await run_to_end(launch)
    cid = launch.conversation_id
    [transcript] = list(agents.claude_projects.glob(f"*/{cid}.jsonl"))
    await indexed(agents, cid, transcript)
    transcript.unlink()  # Claude Code no longer knows the conversation
    first_run_done(agents.home, agents.workdir, os.environ["ANTHROPIC_API_KEY"])

    await open_panel(pane, agents, tmp_path)
    await pane.wait_for(lambda s: "say pong" in s and "reusable" in s, "the panel with the session")
    pane.tmux("send-keys", "-t", "panel", "Enter")
    shown = await pane.wait_for(
        lambda s: "claude exited with status 1" in s, "the panel back, saying how claude ended"
    )
    assert f"No conversation found with session ID: {cid}" in shown, shown
    await asyncio.sleep(5)  # a notification would be gone by now
    assert "No conversation found" in pane.text()
