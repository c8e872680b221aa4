"""One typed answer for every hand-off: written or not (where), continued (in whom) or
pending (the note a person reads), and what follows a failure (seed 003 edge cases 1-2)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from handoff_support import config_with_agents, make_repo

from core.continuation import Continuation, HandoffOutcome, HandoffResult
from core.documents.handoff_files import PENDING_NOTE, handoffs_dir
from core.events import HandoffSettled
from core.models import DocumentStatus, RunStatus
from core.orchestrator import AgentOrchestrator


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[AgentOrchestrator, Path]]:
    orch = await AgentOrchestrator.open(config_with_agents(tmp_path / "data"))
    try:
        yield orch, make_repo(tmp_path)
    finally:
        await orch.close(wait=False)


async def _session(orch: AgentOrchestrator, agent: str, repo: Path) -> str:
    [handle] = await orch.delegate(prompt="work on it", agent_id=agent, cwd=str(repo))
    assert (await handle.wait()).status is RunStatus.COMPLETED
    return handle.conversation_id


async def _settled(orch: AgentOrchestrator, cid: str) -> HandoffOutcome:
    [event] = [e for e in await orch.history(20) if isinstance(e, HandoffSettled)]
    assert event.conversation_id == cid
    return event.outcome


async def test_a_continued_handoff_says_where_it_was_written_and_who_continues(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    cid = await _session(orch, "writer", repo)
    outcome = await Continuation(orch).hand_off(cid)
    assert outcome.result is HandoffResult.CONTINUED
    assert outcome.written
    assert outcome.continued
    assert not outcome.pending
    assert outcome.document is not None
    assert Path(outcome.document.path).parent == handoffs_dir(repo)
    assert outcome.folder == str(repo)
    assert outcome.successor_id == (await orch.get_session(cid)).continued_in
    assert outcome.failure is None
    # The panel's history and the JSON answers carry the very same outcome.
    assert await _settled(orch, cid) == outcome
    assert HandoffOutcome.model_validate(outcome.model_dump(mode="json")) == outcome


async def test_a_write_failure_says_nothing_was_written_and_what_follows(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    cid = await _session(orch, "mute", repo)
    (repo / ".delegate").write_text("a file where the folder should be")
    outcome = await Continuation(orch).hand_off(cid)
    assert outcome.result is HandoffResult.WRITE_FAILED
    assert not outcome.written
    assert not outcome.continued
    assert not outcome.pending
    assert outcome.folder == str(repo)
    assert outcome.failure is not None
    assert ".delegate" in outcome.failure
    # Edge case 1: it keeps working; past the force level it is sent nothing more.
    assert outcome.force_percent == 90
    assert outcome.pending_note is None
    assert await _settled(orch, cid) == outcome


async def test_a_project_force_level_is_the_one_a_failed_write_names(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    cid = await _session(orch, "mute", repo)
    (repo / ".delegate").mkdir()
    (repo / ".delegate" / "config.toml").write_text("[context]\nforce = 85\n")
    (repo / ".delegate" / "handoffs").write_text("a file where the folder should be")
    outcome = await Continuation(orch).hand_off(cid)
    assert outcome.result is HandoffResult.WRITE_FAILED
    assert outcome.force_percent == 85


async def test_a_spawn_failure_says_written_not_continued_and_where_the_note_is(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    cid = await _session(orch, "broken", repo)
    outcome = await Continuation(orch).hand_off(cid)
    assert outcome.result is HandoffResult.SPAWN_FAILED
    assert outcome.written
    assert outcome.pending
    assert not outcome.continued
    assert outcome.document is not None
    assert outcome.document.status is DocumentStatus.PENDING
    assert outcome.pending_note == str(handoffs_dir(repo) / PENDING_NOTE)
    assert Path(outcome.pending_note).is_file()
    assert outcome.failure is not None
    assert "no tokens left" in outcome.failure
    assert await _settled(orch, cid) == outcome


async def test_an_unreachable_agent_is_a_spawn_failure_too(
    tmp_path: Path,
) -> None:
    """The agent's CLI is gone by the time the continuation starts (uninstalled since)."""
    data = config_with_agents(tmp_path / "data")
    config = data / "config.toml"
    base = config.read_text()
    config.write_text(base + '\n[agents.flip]\nrunner = "scripted"\ncontext_limit = 200000\n')
    repo = make_repo(tmp_path)
    orch = await AgentOrchestrator.open(data)
    try:
        cid = await _session(orch, "flip", repo)
    finally:
        await orch.close(wait=False)
    missing = tmp_path / "bin" / "claude"
    config.write_text(base + f'\n[agents.flip]\nrunner = "claude_code"\nbinary = "{missing}"\n')
    orch = await AgentOrchestrator.open(data)
    try:
        outcome = await Continuation(orch).hand_off(cid)
        assert outcome.result is HandoffResult.SPAWN_FAILED, outcome
        assert outcome.written
        assert outcome.pending
        assert not outcome.continued
        assert outcome.failure is not None
        assert "not found" in outcome.failure
        assert outcome.pending_note is not None
        assert Path(outcome.pending_note).is_file()
    finally:
        await orch.close(wait=False)


async def test_a_second_ask_names_the_successor_and_announces_nothing(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    cid = await _session(orch, "writer", repo)
    first = await Continuation(orch).hand_off(cid)
    again = await Continuation(orch).hand_off(cid)
    assert again.result is HandoffResult.ALREADY
    assert again.successor_id == first.successor_id
    assert len([e for e in await orch.history(30) if isinstance(e, HandoffSettled)]) == 1
