"""A session whose hand-off was continued is ``handed_off`` and names its successor in
every view; one whose hand-off waits for a person (or failed to continue) keeps its state."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from handoff_support import config_with_agents, make_repo
from support import json_out, run_cli

from core.continuation import Continuation, HandoffResult
from core.models import RunStatus, SessionScope, SessionState
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


async def test_a_continued_session_is_handed_off_and_names_its_successor(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    cid = await _session(orch, "writer", repo)
    outcome = await Continuation(orch).hand_off(cid)
    assert outcome.result is HandoffResult.CONTINUED
    old = await orch.get_session(cid)
    assert old.state is SessionState.HANDED_OFF
    assert old.continued_in == outcome.successor_id
    assert outcome.successor_id is not None
    new = await orch.get_session(outcome.successor_id)
    assert new.state is SessionState.IDLE
    listed = {
        s.conversation_id: s
        for s in (await orch.list_sessions(10, scope=SessionScope(top_level=False))).sessions
    }
    assert listed[cid].state is SessionState.HANDED_OFF
    assert listed[cid].continued_in == outcome.successor_id
    # A follow-up to the old id runs in the successor.
    [handle] = await orch.delegate(prompt="and now?", conversation_id=cid)
    assert handle.conversation_id == outcome.successor_id
    await handle.wait()
    assert (await orch.get_session(cid)).state is SessionState.HANDED_OFF


async def test_a_failed_continuation_leaves_the_session_as_it_was(
    world: tuple[AgentOrchestrator, Path],
) -> None:
    orch, repo = world
    cid = await _session(orch, "broken", repo)
    outcome = await Continuation(orch).hand_off(cid)
    assert outcome.result is HandoffResult.SPAWN_FAILED
    session = await orch.get_session(cid)
    assert session.state is SessionState.IDLE
    assert session.continued_in is None


async def test_a_pending_handoff_keeps_the_session_until_someone_continues_it(
    tmp_path: Path,
) -> None:
    orch = await AgentOrchestrator.open(config_with_agents(tmp_path / "data", auto_continue=False))
    try:
        repo = make_repo(tmp_path)
        cid = await _session(orch, "writer", repo)
        service = Continuation(orch)
        outcome = await service.hand_off(cid)
        assert outcome.result is HandoffResult.PENDING
        # Its work has not moved yet: it stays as it was (the force level still applies).
        assert (await orch.get_session(cid)).state is SessionState.IDLE
        assert outcome.document is not None
        successor = await service.continue_from(outcome.document.path)
        old = await orch.get_session(cid)
        assert old.state is SessionState.HANDED_OFF
        assert old.continued_in == successor.conversation_id
    finally:
        await orch.close(wait=False)


def test_the_cli_lists_and_shows_the_state_and_the_successor(tmp_path: Path) -> None:
    data = config_with_agents(tmp_path / "data")
    repo = make_repo(tmp_path)

    def cli(*args: str) -> str:
        done = run_cli("--data-dir", str(data), *args, home=tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stdout

    started = run_cli(
        "--data-dir",
        str(data),
        "run",
        "--agent",
        "writer",
        "--cwd",
        str(repo),
        "--json",
        "go",
        home=tmp_path,
    )
    cid = json_out(started)["conversation_id"]
    written = run_cli("--data-dir", str(data), "handoff", "write", cid, "--json", home=tmp_path)
    successor = json_out(written)["successor_id"]

    listed = json_out(run_cli("--data-dir", str(data), "sessions", "list", "--json", home=tmp_path))
    [row] = [s for s in listed["sessions"] if s["conversation_id"] == cid]
    assert row["state"] == "handed_off"
    assert row["continued_in"] == successor
    plain = [line.split("\t") for line in cli("sessions", "list", "--plain").splitlines()]
    [mine] = [cells for cells in plain if cells[0] == cid]
    assert f"handed_off → {successor}" in mine

    shown = cli("sessions", "show", cid)
    assert "handed_off" in shown
    assert f"its work continues in {successor}" in shown
    assert (
        json_out(
            run_cli("--data-dir", str(data), "sessions", "show", cid, "--json", home=tmp_path)
        )["session"]["continued_in"]
        == successor
    )
