"""The panel's ``enter`` continues a Claude Code session that hands off, in the same terminal.

The real panel runs in a tmux pane of a tmux server of its own. A stand-in
``claude`` first on PATH does what the real CLI does with the hooks delegate gives
it (``--settings``): its turn fills the window past the hand-off level and it runs
the ``Stop`` hook, which asks for the hand-off; it "writes" it and runs the hook
again, which keeps it; then it waits. delegate ends it and starts the successor,
a second stand-in run, with the hand-off as its first prompt and an id of
delegate's own; that one hands off in turn after a turn of its own, and a third
takes the pane (a chain of three). The real CLI does the same end to end in
``tests/e2e/test_continue_real.py``. Skipped where tmux is not installed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_reopen_tmux import REPO, SESSION_ID, Pane, write_transcript

from core.models import DocumentKind, DocumentStatus
from core.orchestrator import AgentOrchestrator

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

HANDOFF = """# Context Handoff

## Current Task

Fixing the flaky login test.

## Progress Summary

### Completed
- Found the race

### In Progress
- The fix

### Pending
- A regression test

## Active Subagents

- None

## Recent Decisions

1. **Decision**: wait on the session cookie. Rationale: it is the race.

## Files Modified

- tests/test_login.py

## Next Steps

1. Land the fix

## Important Context

- The CI runner is slow.

## Links

- tests/test_login.py

## Instructions for New Instance

1. Read this, then continue from Next Steps.
"""

STAND_IN = """#!{python}
import json, os, subprocess, sys, time
args = sys.argv[1:]
with open({record!r}, "a") as f:
    f.write(json.dumps({{"argv": args, "tty": os.isatty(0)}}) + "\\n")
with open({record!r}) as f:
    run = len(f.read().splitlines())
hooks = json.loads(args[args.index("--settings") + 1])["hooks"]
resumed = "--resume" in args
sid = args[args.index("--resume" if resumed else "--session-id") + 1]
transcript = os.path.join({projects!r}, sid + ".jsonl")

def hook(event, **payload):
    command = hooks[event][0]["hooks"][0]["command"]  # a shell line, as Claude Code runs it
    payload |= {{"session_id": sid, "cwd": os.getcwd(), "hook_event_name": event}}
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload),
                          capture_output=True, text=True)

def line(kind, message):
    entry = {{"type": kind, "sessionId": sid, "cwd": os.getcwd(), "message": message,
             "uuid": "%s-%d" % (sid, time.time_ns()), "timestamp": "2026-11-22T10:00:00.000Z"}}
    with open(transcript, "a") as f:
        f.write(json.dumps(entry) + "\\n")

def reply(text, tokens):
    line("assistant", {{"id": "m%d" % time.time_ns(), "role": "assistant",
                      "model": "claude-sonnet-4-5", "content": [{{"type": "text", "text": text}}],
                      "usage": {{"input_tokens": tokens, "output_tokens": 10}}}})

if not resumed:  # a successor: its first turn answers the hand-off; the hook links it
    line("user", {{"role": "user", "content": args[-1]}})
    reply("pong", 1000)
    hook("Stop", stop_hook_active=False)
if run <= {handoffs}:
    line("user", {{"role": "user", "content": "carry on"}})
    print("CLAUDE RUN %d: filling the window" % run, flush=True)
    reply("working", 150000)  # 75% of 200,000
    asked = json.loads(hook("Stop", stop_hook_active=False).stdout)
    assert asked["decision"] == "block", asked
    reply({handoff!r}, 151000)
    hook("Stop", stop_hook_active=True, last_assistant_message={handoff!r})
    print("CLAUDE RUN %d: waiting" % run, flush=True)
    time.sleep(60)
    sys.exit(3)
print("SUCCESSOR CLAUDE " + sid, flush=True)
deadline = time.monotonic() + 60
while not os.path.exists({go!r}) and time.monotonic() < deadline:
    time.sleep(0.05)
"""


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[Pane]:
    server = Pane(f"delegate-test-{os.getpid()}-{tmp_path.name}")
    yield server
    server.tmux("kill-server")


async def test_enter_continues_a_session_that_hands_off_in_the_same_terminal(
    tmp_path: Path, pane: Pane
) -> None:
    home, project, bin_dir = tmp_path / "home", tmp_path / "project", tmp_path / "bin"
    for folder in (home, project, bin_dir):
        folder.mkdir()
    transcript = write_transcript(home, project)
    record, go, data = tmp_path / "claude-ran.jsonl", tmp_path / "go", tmp_path / "data"
    claude = bin_dir / "claude"
    claude.write_text(
        STAND_IN.format(
            python=sys.executable,
            record=str(record),
            projects=str(transcript.parent),
            handoff=HANDOFF,
            handoffs=2,
            go=str(go),
        )
    )
    claude.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "CLAUDE_CONFIG_DIR")}
    env |= {
        "HOME": str(home),
        "PATH": os.pathsep.join([str(bin_dir), env.get("PATH", os.defpath)]),
        "CODEX_HOME": str(home / ".codex"),
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
    }
    panel = [sys.executable, "-m", "tui.cli", "--data-dir", str(data)]
    window = ["-s", "panel", "-x", "120", "-y", "36", "-c", str(tmp_path)]
    tmux = ["tmux", "-L", pane.socket, "-f", "/dev/null", "new-session", "-d", *window, *panel]
    await asyncio.to_thread(subprocess.run, tmux, env=env, check=True, timeout=10)
    await asyncio.to_thread(
        pane.wait_for, lambda: "fix the flaky login test" in pane.text(), "the session", 60
    )

    pane.tmux("send-keys", "-t", "panel", "Enter")

    # Nobody types: the first CLI hands off, is ended, and the successor takes the
    # pane; after a turn of its own it hands off too, and a third takes the pane.
    await asyncio.to_thread(
        pane.wait_for, lambda: "SUCCESSOR CLAUDE" in pane.text(), "the last successor", 180
    )
    runs = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(runs) == 3
    assert runs[0]["argv"][:2] == ["--resume", SESSION_ID]
    chain = [SESSION_ID]
    for run in runs[1:]:
        assert run["tty"] is True
        assert run["argv"][0] == "--session-id"
        assert run["argv"][2] == "--settings"
        prompt = run["argv"][-1]
        assert prompt.startswith("You continue the work of a previous session")
        assert "Fixing the flaky login test." in prompt
        assert f"**Previous Instance**: {chain[-1]}" in prompt
        chain.append(run["argv"][1])
    assert len(set(chain)) == 3

    orch = await AgentOrchestrator.open(data)
    try:
        docs = orch.store.documents
        for old, new in itertools.pairwise(chain):
            [doc] = await docs.find(DocumentKind.HANDOFF, source_session=old)
            assert doc.producer == "agent"
            assert doc.status is DocumentStatus.CONSUMED
            assert doc.consumers == (new,)
            assert (await orch.get_session(old)).continued_in == new
        assert await orch.store.sessions.continuation_chain(SESSION_ID) == chain
        [second] = await docs.find(DocumentKind.HANDOFF, source_session=chain[1])
        assert "handoff #2 in its chain" in Path(second.path).read_text()
    finally:
        await orch.close()
    assert not (project / ".delegate" / "handoffs" / "HANDOFF_PENDING.md").exists()

    go.touch()  # the person leaves the successor: the panel comes back
    await asyncio.to_thread(
        pane.wait_for,
        lambda: "fix the flaky login test" in pane.text() and "SUCCESSOR" not in pane.text(),
        "the panel back",
        60,
    )
