"""``Continuation``: hand-off documents written, registered, continued, routed, pending."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from handoff_support import config_with_agents, git, make_repo
from support import BASE_US, finished

from core.continuation.service import Continuation
from core.documents.handoff_files import PENDING_NOTE, handoffs_dir
from core.documents.handoff_template import parse_handoff, validate_handoff
from core.errors import AgentBusy
from core.events import HandoffFailed, HandoffWritten, SessionContinued
from core.models import DocumentKind, DocumentStatus, Role, RunStatus
from core.orchestrator import AgentOrchestrator
from core.store import FinishedSession
from core.tools import call_tool


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[AgentOrchestrator, Path]]:
    data_dir = config_with_agents(tmp_path / "data")
    orch = await AgentOrchestrator.open(data_dir)
    try:
        yield orch, make_repo(tmp_path)
    finally:
        await orch.close(wait=False)


def imported(cid: str, repo: Path, messages: int = 2) -> FinishedSession:
    """A Claude Code session a person runs, working in ``repo``."""
    base = finished(cid, BASE_US, messages=messages)
    session = dataclasses.replace(
        base.session, cwd=str(repo), source="claude-code", agent_id="claude-code"
    )
    return dataclasses.replace(base, session=session)


async def _session(orch: AgentOrchestrator, agent: str, repo: Path, prompt: str) -> str:
    [handle] = await orch.delegate(prompt=prompt, agent_id=agent, cwd=str(repo))
    assert (await handle.wait()).status is RunStatus.COMPLETED
    return handle.conversation_id


async def test_an_agent_we_drive_writes_its_own_handoff_and_work_continues_linked(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    cid = await _session(orch, "writer", repo, "implement login")
    outcome = await Continuation(orch).hand_off(cid)

    assert outcome.failure is None
    assert not outcome.pending
    document = outcome.document
    assert document is not None
    assert document.producer == "agent"
    assert document.status is DocumentStatus.CONSUMED
    path = Path(document.path)
    assert path.parent == handoffs_dir(repo)
    text = path.read_text()
    assert validate_handoff(text) == []
    sections = parse_handoff(text)
    assert sections["Current Task"] == "Implementing the login flow."
    # The agent's list of files, and git's beside it.
    assert "Files Modified as the agent knows it" in sections["Files Modified"]
    assert " M auth.py" in sections["Files Modified"]
    # The figures at the top are delegate's, not the agent's.
    assert "**Context Usage**: 140,000 / 200,000 tokens (70%)" in text
    assert "**Branch**: feature/auth" in text
    assert f"**Previous Instance**: {cid}" in text

    successor = outcome.successor_id
    assert successor is not None
    assert successor != cid
    assert document.consumers == (successor,)
    old, new = await orch.get_session(cid), await orch.get_session(successor)
    assert (old.continued_in, new.continued_from) == (successor, None or cid)
    assert new.agent_id == "writer"
    assert new.cwd == str(repo)
    # The first prompt says what to do and where; the hand-off follows it, as context.
    *_, carried, first = (await orch.recent_messages(successor, 10)).messages
    assert first.role is Role.USER
    assert str(path) in first.content
    assert "Implementing the login flow." in carried.content
    [run] = await orch.store.runs.for_session(successor)
    assert "Implementing the login flow." in run.prompt  # the agent read both at once

    kinds = [type(e) for e in await orch.history(10)]
    assert HandoffWritten in kinds
    assert SessionContinued in kinds


async def test_without_the_agents_words_the_handoff_is_built_from_facts_and_git(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    cid = await _session(orch, "mute", repo, "refactor the auth module")
    outcome = await Continuation(orch).hand_off(cid)
    assert outcome.document is not None
    assert outcome.document.producer == "facts"
    text = Path(outcome.document.path).read_text()
    assert validate_handoff(text) == []
    sections = parse_handoff(text)
    assert "refactor the auth module" in sections["Current Task"]
    files = sections["Files Modified"]
    assert " M auth.py" in files
    assert "?? tokens.py" in files
    assert "auth.py" in files.split("Against HEAD:")[1]
    assert "README.md" not in files  # unchanged files are not listed
    assert sections["Active Subagents"] == "- None"
    assert "_Nothing recorded._" in sections["Progress Summary"]  # nothing pending invented


async def test_a_follow_up_to_the_old_id_goes_to_the_newest_of_a_chain_of_four(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    service = Continuation(orch)
    ids = [await _session(orch, "writer", repo, "long task")]
    documents = []
    for _ in range(3):
        outcome = await service.hand_off(ids[-1])
        assert outcome.successor_id is not None
        assert outcome.document is not None
        ids.append(outcome.successor_id)
        documents.append(outcome.document)
    assert await orch.store.sessions.continuation_chain(ids[0]) == ids
    chain = await orch.store.documents.chain(documents[-1].document_id)
    assert [d.document_id for d in chain] == [d.document_id for d in documents]
    third = Path(documents[-1].path).read_text()
    assert "handoff #3 in its chain" in third
    assert Path(documents[-2].path).name in third

    response = await call_tool(
        orch, "delegate_agent", {"conversation_id": ids[0], "prompt": "and the docs?"}
    )
    assert response["status"] == "ok", response
    assert response["conversation_id"] == ids[-1]
    assert response["continued_in"] == ids[-1]
    assert response["requested_conversation_id"] == ids[0]
    # That turn of the newest reached 70 % too (the writer reports 140k of 200k) and,
    # its own turn done, handed off in the tool call itself: no supervisor needed.
    assert response["context"]["crossed"] == ["notify", "reminder", "handoff"]
    newest = response["context"]["handoff"]["continued_in"]
    assert newest not in (None, *ids)
    # A second hand-off of an old member writes nothing new.
    again = await service.hand_off(ids[0])
    assert again.successor_id == ids[1]
    assert len(await orch.store.documents.find(DocumentKind.HANDOFF)) == 4


async def test_a_session_a_person_runs_gets_a_pending_note(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    cid = "0f3a9c1e-1111-2222-3333-444455556666"
    await orch.store.bulk.insert([imported(cid, repo, messages=4)])
    outcome = await Continuation(orch).hand_off(cid)
    assert outcome.pending
    assert outcome.successor_id is None
    assert outcome.document is not None
    assert outcome.document.status is DocumentStatus.PENDING
    assert outcome.document.producer == "facts"
    note = handoffs_dir(repo) / PENDING_NOTE
    assert Path(outcome.document.path).name in note.read_text()
    [written] = [e for e in await orch.history(5) if isinstance(e, HandoffWritten)]
    assert written.pending
    assert "message 3 of" in Path(outcome.document.path).read_text()


async def test_auto_continue_off_leaves_our_session_pending_and_continue_from_resumes_it(
    tmp_path: Path,
) -> None:
    orch = await AgentOrchestrator.open(config_with_agents(tmp_path / "data", auto_continue=False))
    try:
        repo = make_repo(tmp_path)
        cid = await _session(orch, "writer", repo, "implement login")
        service = Continuation(orch)
        outcome = await service.hand_off(cid)
        assert outcome.pending
        assert outcome.document is not None
        assert (handoffs_dir(repo) / PENDING_NOTE).exists()

        successor = await service.continue_from(outcome.document.path)
        assert successor.continued_from == cid
        assert not (handoffs_dir(repo) / PENDING_NOTE).exists()
        document = await orch.store.documents.get(outcome.document.document_id)
        assert document.status is DocumentStatus.CONSUMED
        assert document.consumers == (successor.conversation_id,)
    finally:
        await orch.close(wait=False)


async def test_a_write_failure_is_reported_and_leaves_nothing_registered(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    cid = await _session(orch, "mute", repo, "work")
    (repo / ".delegate").write_text("a file where the folder should be")
    outcome = await Continuation(orch).hand_off(cid)
    assert outcome.document is None
    assert outcome.failure is not None
    assert ".delegate" in outcome.failure
    assert await orch.store.documents.find(DocumentKind.HANDOFF) == []
    [failed] = [e for e in await orch.history(5) if isinstance(e, HandoffFailed)]
    assert failed.stage == "write"
    # The next attempt, once the disk is fixed, writes it.
    (repo / ".delegate").unlink()
    assert (await Continuation(orch).hand_off(cid)).document is not None


async def test_a_failed_continuation_leaves_the_handoff_pending(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    cid = await _session(orch, "broken", repo, "work")
    outcome = await Continuation(orch).hand_off(cid)
    assert outcome.pending
    assert outcome.successor_id is None
    assert outcome.failure is not None
    assert "no tokens left" in outcome.failure
    assert outcome.document is not None
    assert outcome.document.status is DocumentStatus.PENDING
    assert (handoffs_dir(repo) / PENDING_NOTE).exists()
    assert (await orch.get_session(cid)).continued_in is None
    [failed] = [e for e in await orch.history(10) if isinstance(e, HandoffFailed)]
    assert failed.stage == "spawn"


async def test_a_person_opens_the_handoff_in_the_agents_cli(
    tmp_path: Path,
) -> None:
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    data_dir = config_with_agents(tmp_path / "data")
    with (data_dir / "config.toml").open("a") as config:
        config.write(f'\n[agents.claude-code]\nrunner = "claude_code"\nbinary = "{fake}"\n')
    orch = await AgentOrchestrator.open(data_dir)
    try:
        repo = make_repo(tmp_path)
        git(repo, "add", ".")
        cid = "0f3a9c1e-1111-2222-3333-444455556666"
        await orch.store.bulk.insert([imported(cid, repo)])
        service = Continuation(orch)
        outcome = await service.hand_off(cid)
        assert outcome.document is not None
        plan = await service.interactive_plan(outcome.document.document_id)
        assert plan.argv[0] == str(fake)
        assert plan.argv[1].startswith("Read the hand-off document at ")
        assert outcome.document.path in plan.argv[1]
        assert plan.cwd == repo
        assert os.fspath(plan.cwd) in plan.command_line
    finally:
        await orch.close(wait=False)


async def test_a_project_can_turn_auto_continue_off_for_itself(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    (repo / ".delegate").mkdir()
    (repo / ".delegate" / "config.toml").write_text("[context]\nauto_continue = false\n")
    cid = await _session(orch, "writer", repo, "implement login")
    outcome = await Continuation(orch).hand_off(cid)
    assert outcome.pending
    assert outcome.successor_id is None


async def test_the_old_id_routes_to_the_successor_while_its_first_run_reads_the_handoff(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    cid = await _session(orch, "gated", repo, "work")
    task = asyncio.create_task(Continuation(orch).hand_off(cid))
    deadline = asyncio.get_running_loop().time() + 30
    while (successor := (await orch.get_session(cid)).continued_in) is None:
        assert asyncio.get_running_loop().time() < deadline, "never linked"
        await asyncio.sleep(0.02)
    with pytest.raises(AgentBusy):  # routed to the successor, which is busy reading
        await orch.delegate(prompt="and now?", conversation_id=cid)
    (orch.store.path.parent / "go").touch()
    outcome = await task
    assert outcome.successor_id == successor
    [handle] = await orch.delegate(prompt="and now?", conversation_id=cid)
    assert handle.conversation_id == successor
    assert handle.routed_from == cid
