"""A Claude Code sub-agent delegate launched is a session of its own: reopened and forked
in the real CLI (seed 004: each agent keeps its own conversation).

The parent and the child are both launched through ``AgentOrchestrator.delegate`` with
the real Claude Code against the loopback model server. The child's transcript is its
own file under its own id; ``claude --resume CHILD`` (the panel's ``enter``) and
``claude --resume CHILD --fork-session`` (``delegate checkpoint fork``) run on it — here
in print mode, so the test reads what they did — and never touch the parent's file.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from agent_clis import Agents, find_cli
from test_real_clis import indexed, run_to_end

from core.reopen import ReopenPlan, fork_plan, opens_interactively, reopen_plan

pytestmark = pytest.mark.e2e


def session_ids(transcript: Path) -> set[str]:
    lines = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    return {line["sessionId"] for line in lines if "sessionId" in line}


async def run_in_print_mode(plan: ReopenPlan, prompt: str) -> str:
    """Run the plan's command as it is, with a prompt in print mode; the session id the
    CLI reports working in."""
    process = await asyncio.create_subprocess_exec(
        *plan.argv,
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--",
        prompt,
        cwd=plan.cwd,
        env=dict(plan.env),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    events = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    [init] = [e for e in events if e.get("type") == "system" and e.get("subtype") == "init"]
    return str(init["session_id"])


async def test_a_claude_code_sub_agent_reopens_and_forks_on_its_own_transcript(
    agents: Agents,
) -> None:
    find_cli("claude")
    orch = agents.orch
    [parent] = await orch.delegate("say pong", "claude-code", cwd=str(agents.workdir))
    await run_to_end(parent)
    [child] = await orch.delegate(
        "child task", "claude-code", cwd=str(agents.workdir), parent_id=parent.conversation_id
    )
    await run_to_end(child)
    pid, cid = parent.conversation_id, child.conversation_id
    assert cid != pid

    # Each has its own transcript, under its own id.
    [parent_file] = list(agents.claude_projects.glob(f"*/{pid}.jsonl"))
    [child_file] = list(agents.claude_projects.glob(f"*/{cid}.jsonl"))
    assert session_ids(parent_file) == {pid}
    assert session_ids(child_file) == {cid}
    parent_size = parent_file.stat().st_size
    await indexed(agents, cid, child_file)
    session = await orch.get_session(cid)
    assert session.parent_id == pid

    # Reopened: the panel's enter opens it in claude, resuming the child's conversation.
    assert opens_interactively(session, orch.settings)
    plan = reopen_plan(session, orch.settings)
    assert plan.argv[1:] == ("--resume", cid)
    before = child_file.stat().st_size
    assert await run_in_print_mode(plan, "what next") == cid
    [asked] = [
        c for c in agents.server.model_calls("/v1/messages") if "what next" in json.dumps(c.body)
    ]
    assert "child task" in json.dumps(asked.body["messages"])
    assert "say pong" not in json.dumps(asked.body["messages"])
    assert child_file.stat().st_size > before
    assert parent_file.stat().st_size == parent_size

    # Forked: a checkpoint at its newest message forks it into a new Claude session.
    session = await orch.refresh_transcript(cid)  # what the person added, as enter re-reads it
    assert session.metrics.bytes == child_file.stat().st_size
    checkpoint = await orch.mark_checkpoint(cid)
    fork = fork_plan(session, checkpoint, orch.settings)
    assert fork.argv[1:] == ("--resume", cid, "--fork-session")
    forked = await run_in_print_mode(fork, "and in the fork")
    assert forked not in (cid, pid)
    [fork_file] = list(agents.claude_projects.glob(f"*/{forked}.jsonl"))
    assert "child task" in fork_file.read_text()
    assert parent_file.stat().st_size == parent_size
