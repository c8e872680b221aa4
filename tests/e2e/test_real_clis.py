"""The real Claude Code and Codex CLIs (and a Chat Completions endpoint) end to end.

Each test drives ``AgentOrchestrator.delegate`` exactly as the front ends do; the
agents talk to the loopback model server of ``model_server.py``, which records
every request, in a HOME under ``tmp_path``.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest
from agent_clis import CODEX_MODEL, Agents, find_cli
from model_server import INPUT_TOKENS_PER_MESSAGE, OUTPUT_TOKENS, conversation_length

from core.models import RunStatus, Session, SessionState
from core.runs.handle import RunHandle

pytestmark = pytest.mark.e2e

RUN_TIMEOUT_S = 60


async def run_to_end(handle: RunHandle) -> None:
    run = await asyncio.wait_for(handle.wait(), RUN_TIMEOUT_S)
    assert run.status is RunStatus.COMPLETED, run.error


def processes_with_home(home: Path) -> list[int]:
    """Live (non-zombie) processes whose environment has ``HOME=home``: our CLIs and kin."""
    marker = f"HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if marker in environ.split(b"\0") and stat[stat.rfind(")") + 2 :][:1] != "Z":
            found.append(int(entry.name))
    return found


async def processes_gone(home: Path) -> bool:
    """Whether every process of ``home`` is gone within a few seconds.

    A run's watchdog (``read goodbye || kill ...``) exits when its pipe closes,
    a moment after the run's result.
    """
    deadline = time.monotonic() + 5
    while processes_with_home(home):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def imports_transcripts(agents: Agents) -> bool:
    return hasattr(agents.orch, "import_sources")


async def indexed(agents: Agents, conversation_id: str, transcript: Path) -> Session:
    """The session once the transcript is imported (that happens after the result)."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while True:
        session = await agents.orch.get_session(conversation_id)
        if session.metrics.bytes == transcript.stat().st_size:
            return session
        assert time.monotonic() < deadline, "the transcript was never imported"
        await asyncio.sleep(0.05)


# --- Claude Code -----------------------------------------------------------


async def test_claude_code_launch_follow_up_transcript_and_meter(agents: Agents) -> None:
    find_cli("claude")
    server = agents.server
    [launch] = await agents.orch.delegate("say pong", "claude-code", cwd=str(agents.workdir))
    await run_to_end(launch)
    conversation_id = launch.conversation_id

    # The id delegate minted is Claude's session id: the transcript carries that name.
    [transcript] = list(agents.claude_projects.glob(f"*/{conversation_id}.jsonl"))
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert {line.get("sessionId") for line in lines if "sessionId" in line} == {conversation_id}

    [follow_up] = await agents.orch.delegate("and again", conversation_id=conversation_id)
    assert follow_up.conversation_id == conversation_id
    await run_to_end(follow_up)

    calls = server.model_calls("/v1/messages")
    assert len(calls) == 2
    first, second = (conversation_length("/v1/messages", c.body) for c in calls)
    assert second > first  # --resume sent the history again, the follow-up on top
    assert "and again" in json.dumps(calls[1].body["messages"])
    assert "say pong" in json.dumps(calls[1].body["messages"])
    assert len(transcript.read_text().splitlines()) > len(lines)  # same file, appended

    session = await agents.orch.get_session(conversation_id)
    assert session.metrics.turns == 2
    assert session.state is SessionState.IDLE
    # The meter holds what the last model call read (input and cache), as Claude
    # reported it; the reply it wrote is not yet part of the context it used.
    assert session.context.used_tokens == INPUT_TOKENS_PER_MESSAGE * second
    assert session.context.limit_tokens == 200_000
    runs = await agents.orch.store.runs.for_session(conversation_id)
    assert [r.output for r in runs] == [f"pong {first}", f"pong {second}"]
    assert runs[1].usage.input_tokens == INPUT_TOKENS_PER_MESSAGE * second

    if imports_transcripts(agents):
        # The importer indexed the transcript Claude Code wrote: previews read it.
        await indexed(agents, conversation_id, transcript)
        page = await agents.orch.recent_messages(conversation_id, 10)
        texts = [m.content for m in page.messages]
        assert any(f"pong {second}" in t for t in texts)
        assert any("and again" in t for t in texts)
    assert await processes_gone(agents.home)


# --- Codex -------------------------------------------------------------------


async def test_codex_launch_rekeys_follow_up_resumes_and_meter(agents: Agents) -> None:
    find_cli("codex")
    server = agents.server
    [launch] = await agents.orch.delegate("say pong", "codex", cwd=str(agents.workdir))
    minted = launch.conversation_id
    await run_to_end(launch)

    # Codex named the thread; the session now carries that id, everywhere.
    thread_id = launch.conversation_id
    assert thread_id != minted
    [rollout] = list((agents.codex_home / "sessions").glob(f"*/*/*/rollout-*-{thread_id}.jsonl"))
    meta = json.loads(rollout.read_text().splitlines()[0])
    assert meta["payload"]["id"] == thread_id
    # The id delegate minted (and printed) still names the session.
    assert (await agents.orch.get_session(minted)).conversation_id == thread_id
    history = await agents.orch.history(10)
    assert {e.conversation_id for e in history} == {thread_id}

    [follow_up] = await agents.orch.delegate("and again", conversation_id=thread_id)
    assert follow_up.conversation_id == thread_id
    await run_to_end(follow_up)
    assert len(list((agents.codex_home / "sessions").rglob("rollout-*.jsonl"))) == 1

    calls = server.model_calls("/v1/responses")
    assert len(calls) == 2
    assert all(c.body["model"] == CODEX_MODEL for c in calls)
    first, second = (conversation_length("/v1/responses", c.body) for c in calls)
    assert second == first + 2  # the reply and the follow-up prompt were added

    session = await agents.orch.get_session(thread_id)
    # Meter: the last request (not Codex's cumulative total) against the window it reported.
    token_counts = [
        line["payload"]["info"]
        for line in map(json.loads, rollout.read_text().splitlines())
        if line["type"] == "event_msg" and line["payload"].get("type") == "token_count"
        if line["payload"].get("info")
    ]
    assert session.context.used_tokens == INPUT_TOKENS_PER_MESSAGE * second
    assert session.context.limit_tokens == token_counts[-1]["model_context_window"]
    runs = await agents.orch.store.runs.for_session(thread_id)
    assert [r.output for r in runs] == [f"pong {first}", f"pong {second}"]
    # Each run's own usage, although Codex reports the thread's running total.
    assert [r.usage.input_tokens for r in runs] == [
        INPUT_TOKENS_PER_MESSAGE * first,
        INPUT_TOKENS_PER_MESSAGE * second,
    ]

    if imports_transcripts(agents):
        # The importer indexed the rollout: metrics and preview come from it.
        session = await indexed(agents, thread_id, rollout)
        assert session.metrics.messages >= 2
        assert session.metrics.bytes == rollout.stat().st_size
        page = await agents.orch.recent_messages(thread_id, 10)
        texts = [m.content for m in page.messages]
        assert any(f"pong {second}" in t for t in texts)
    else:
        assert session.metrics.turns == 2
    assert await processes_gone(agents.home)


# --- cancellation --------------------------------------------------------------


@pytest.mark.parametrize(
    ("cli", "agent", "path"),
    [
        ("claude", "claude-code", "/v1/messages"),
        ("codex", "codex", "/v1/responses"),
    ],
)
async def test_cancelling_a_cli_run_leaves_no_process(
    agents: Agents, cli: str, agent: str, path: str
) -> None:
    find_cli(cli)
    [handle] = await agents.orch.delegate("HANG until cancelled", agent, cwd=str(agents.workdir))
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not agents.server.model_calls(path):  # the CLI is waiting on the model now
        assert time.monotonic() < deadline, "the CLI never called the model"
        await asyncio.sleep(0.05)
    assert processes_with_home(agents.home), "the CLI should be running"

    started = time.monotonic()
    assert await agents.orch.cancel(handle.run_id)
    run = await handle.wait()
    assert run.status is RunStatus.CANCELLED
    assert time.monotonic() - started < 10
    assert await processes_gone(agents.home)
    session = await agents.orch.get_session(handle.conversation_id)
    assert session.state is SessionState.IDLE


# --- openai_compat ---------------------------------------------------------------


async def test_openai_compat_sends_stored_history(agents: Agents) -> None:
    server = agents.server
    [launch] = await agents.orch.delegate("say pong", "chat", cwd=str(agents.workdir))
    await run_to_end(launch)
    [follow_up] = await agents.orch.delegate("and again", conversation_id=launch.conversation_id)
    await run_to_end(follow_up)

    calls = server.model_calls("/v1/chat/completions")
    assert [c.body["messages"] for c in calls] == [
        [{"role": "user", "content": "say pong"}],
        [
            {"role": "user", "content": "say pong"},
            {"role": "assistant", "content": "pong 1"},
            {"role": "user", "content": "and again"},
        ],
    ]
    assert calls[0].headers.get("authorization") == "Bearer loopback-key"
    session = await agents.orch.get_session(launch.conversation_id)
    assert session.metrics.turns == 2
    assert session.metrics.messages == 4  # our store is this agent's transcript
    assert session.context.used_tokens == INPUT_TOKENS_PER_MESSAGE * 3 + OUTPUT_TOKENS
    page = await agents.orch.recent_messages(launch.conversation_id, 10)
    assert [m.content for m in page.messages][:2] == ["pong 3", "and again"]


# --- argv: ids and prompts are never options ---------------------------------------


@pytest.mark.parametrize(
    ("cli", "agent", "path"),
    [
        ("claude", "claude-code", "/v1/messages"),
        ("codex", "codex", "/v1/responses"),
    ],
)
async def test_option_shaped_prompts_reach_the_model_as_prompts(
    agents: Agents, cli: str, agent: str, path: str
) -> None:
    """``--session-id=ID``, ``--resume=ID`` and ``resume -- ID PROMPT`` parse as meant."""
    find_cli(cli)
    prompts = ["-p", "--last", "--dangerously-skip-permissions"]
    [launch] = await agents.orch.delegate(prompts[0], agent, cwd=str(agents.workdir))
    await run_to_end(launch)
    for prompt in prompts[1:]:
        [follow_up] = await agents.orch.delegate(prompt, conversation_id=launch.conversation_id)
        assert follow_up.conversation_id == launch.conversation_id
        await run_to_end(follow_up)
    calls = agents.server.model_calls(path)
    assert len(calls) == len(prompts)
    for call, prompt in zip(calls, prompts, strict=True):
        sent = json.dumps(call.body.get("messages") or call.body.get("input"))
        assert json.dumps(prompt) in sent
    # One conversation, each request carrying the turns before it.
    lengths = [conversation_length(path, c.body) for c in calls]
    assert lengths == sorted(set(lengths))  # strictly growing
    assert await processes_gone(agents.home)
