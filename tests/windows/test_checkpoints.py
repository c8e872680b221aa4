"""Checkpoints (seed 004): mark a session at a message, list, restore (delegate's
own sessions; nothing lost: the state before is saved and the restore undoable),
fork a new session from a mark; never by editing another tool's files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import run_cli

from core.config import Settings
from core.errors import InvalidRequest, UnknownCheckpoint
from core.events import CheckpointMarked
from core.models import Checkpoint, RunStatus, SessionScope
from core.orchestrator import AgentOrchestrator
from core.reopen import fork_plan


async def _session(orch: AgentOrchestrator, *prompts: str) -> str:
    [handle] = await orch.delegate(prompt=prompts[0])
    assert (await handle.wait()).status is RunStatus.COMPLETED
    for prompt in prompts[1:]:
        [more] = await orch.delegate(prompt=prompt, conversation_id=handle.conversation_id)
        assert (await more.wait()).status is RunStatus.COMPLETED
    return handle.conversation_id


async def _contents(orch: AgentOrchestrator, cid: str) -> list[str]:
    page = await orch.recent_messages(cid, limit=100)
    return [m.content for m in reversed(page.messages)]


async def test_mark_and_list(orch: AgentOrchestrator) -> None:
    cid = await _session(orch, "one", "two")  # messages 0..3
    newest = await orch.mark_checkpoint(cid, label="after two")
    first = await orch.mark_checkpoint(cid[:8], seq=1)
    assert (newest.seq, newest.label) == (3, "after two")
    assert (first.seq, first.label) == (1, "")
    assert [c.checkpoint_id for c in await orch.checkpoints(cid)] == [
        newest.checkpoint_id,
        first.checkpoint_id,
    ]
    marked = [e for e in await orch.history(20) if isinstance(e, CheckpointMarked)]
    assert {e.checkpoint_id for e in marked} == {newest.checkpoint_id, first.checkpoint_id}

    with pytest.raises(InvalidRequest, match="no message 9"):
        await orch.mark_checkpoint(cid, seq=9)
    with pytest.raises(InvalidRequest, match="one line"):
        await orch.mark_checkpoint(cid, label="two\nlines")
    with pytest.raises(UnknownCheckpoint):
        await orch.get_checkpoint("no-such-checkpoint")


async def test_restore_rewinds_and_can_be_undone(orch: AgentOrchestrator) -> None:
    cid = await _session(orch, "one", "two", "three")
    everything = await _contents(orch, cid)
    mark = await orch.mark_checkpoint(cid, seq=1)  # after the first reply

    undo = await orch.restore_checkpoint(mark.checkpoint_id)

    assert await _contents(orch, cid) == everything[:2]
    session = await orch.get_session(cid)
    assert (session.metrics.messages, session.metrics.turns) == (2, 1)
    # Nothing lost: the conversation as it was is saved, archived, forked from it.
    saved = await orch.get_session(undo.conversation_id)
    assert saved.forked_from == cid
    assert saved.archived_at is not None
    assert await _contents(orch, saved.conversation_id) == everything
    assert undo.seq == len(everything) - 1
    # The session goes on from the mark.
    [again] = await orch.delegate(prompt="two again", conversation_id=cid)
    assert (await again.wait()).output == "[echo] turn 2: two again"
    # A search no longer finds what was rewound away in it.
    found = await orch.search_sessions("three", scope=SessionScope(archived=True))
    assert cid not in [r.session.conversation_id for r in found.results]

    # Undo: the saved state back into the session (the rewound one saved in turn).
    redo = await orch.restore_checkpoint(undo.checkpoint_id, into=cid)
    assert await _contents(orch, cid) == everything
    assert (await orch.get_session(cid)).metrics.turns == 3
    assert await _contents(orch, redo.conversation_id) == [
        *everything[:2],
        "two again",
        "[echo] turn 2: two again",
    ]


async def test_fork_copies_up_to_the_mark(orch: AgentOrchestrator) -> None:
    cid = await _session(orch, "one", "two")
    everything = await _contents(orch, cid)
    mark = await orch.mark_checkpoint(cid, seq=1)

    fork = await orch.fork_checkpoint(mark.checkpoint_id)

    assert fork.forked_from == cid
    assert fork.conversation_id != cid
    assert await _contents(orch, fork.conversation_id) == everything[:2]
    assert await _contents(orch, cid) == everything  # the original is untouched
    assert fork.conversation_id in await orch.dependants(cid)
    [handle] = await orch.delegate(prompt="branch here", conversation_id=fork.conversation_id)
    assert (await handle.wait()).output == "[echo] turn 2: branch here"
    [event] = [e for e in await orch.history(20) if isinstance(e, CheckpointMarked) and e.forked_to]
    assert event.forked_to == fork.conversation_id


def test_a_cli_agents_session_forks_through_its_own_cli(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from core.models import ContextUsage, Session, SessionMetrics, SessionMode, SessionState

    now = datetime.now(UTC)
    uuid = "0b4c8a52-6a1e-4a55-9e0c-6b0e8f6f3d11"

    def session(agent: str, source: str) -> Session:
        return Session(
            conversation_id=uuid,
            agent_id=agent,
            mode=SessionMode.STANDARD,
            state=SessionState.IDLE,
            cwd=str(tmp_path),
            title="t",
            source=source,
            created_at=now,
            last_interacted_at=now,
            metrics=SessionMetrics(turns=2, messages=4),
            context=ContextUsage(used_tokens=0, limit_tokens=200_000),
        )

    settings = Settings()
    at_end = Checkpoint(checkpoint_id="c", conversation_id=uuid, seq=3, created_at=now)
    claude = fork_plan(session("claude-code", "claude-code"), at_end, settings, find_binary=False)
    assert claude.argv == ("claude", "--resume", uuid, "--fork-session")
    codex = fork_plan(session("codex", "codex"), at_end, settings, find_binary=False)
    assert codex.argv == ("codex", "fork", uuid)
    mid = at_end.model_copy(update={"seq": 1})
    with pytest.raises(InvalidRequest, match="whole session"):
        fork_plan(session("claude-code", "claude-code"), mid, settings, find_binary=False)


def test_checkpoint_cli(tmp_path: Path) -> None:
    data = tmp_path / "data"

    def cli(*args: str):  # type: ignore[no-untyped-def]
        return run_cli("--data-dir", str(data), *args, home=tmp_path)

    def out(*args: str) -> dict:  # type: ignore[type-arg]
        result = cli(*args)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)  # type: ignore[no-any-return]

    cid = out("run", "--json", "one")["conversation_id"]
    out("run", "--json", "--session", cid, "two")
    mark = out("checkpoint", "mark", cid, "--at", "1", "--label", "first reply", "--json")
    assert (mark["seq"], mark["label"]) == (1, "first reply")
    listed = out("checkpoint", "list", cid, "--json")["checkpoints"]
    assert [c["checkpoint_id"] for c in listed] == [mark["checkpoint_id"]]
    human = cli("checkpoint", "list", cid)
    assert "first reply" in human.stdout

    fork = out("checkpoint", "fork", mark["checkpoint_id"][:8], "--json")
    assert fork["session"]["forked_from"] == cid
    restored = out("checkpoint", "restore", mark["checkpoint_id"], "--json")
    assert restored["undo"]["conversation_id"] != cid
    shown = out("sessions", "show", cid, "--json", "--last", "10")
    assert len(shown["messages"]) == 2

    bad = cli("checkpoint", "restore", "nope-nope")
    assert bad.returncode == 1
    assert "unknown_checkpoint" in bad.stderr
