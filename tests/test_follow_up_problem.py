"""``follow_up_problem``: what would refuse a follow-up, known before the prompt is typed.

The panel's follow-up box asks this when it opens. The answer is the very error
``delegate()`` would raise (same code, same message), and asking writes nothing.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
from support import finished, snapshot, write_config

from core.errors import (
    AgentBusy,
    CwdMissing,
    DelegateError,
    RunnerUnavailable,
    SessionNotReady,
    UnknownConversation,
)
from core.models import SessionMode, SessionState
from core.orchestrator import AgentOrchestrator
from core.store import FinishedSession

NOW_US = 1_800_000_000_000_000
# Claude Code sessions have UUID ids (anything else is refused as invalid_id first).
CC_ID = "0c0c0c0c-0000-4000-8000-000000000001"
GONE_ID = "0c0c0c0c-0000-4000-8000-000000000002"


def in_folder(session: FinishedSession, cwd: Path) -> FinishedSession:
    return dataclasses.replace(session, session=dataclasses.replace(session.session, cwd=str(cwd)))


async def refusal(orch: AgentOrchestrator, conversation_id: str) -> DelegateError:
    """The error a real follow-up gets (the scripted agents answer at once otherwise)."""
    with pytest.raises(DelegateError) as refused:
        await orch.delegate("go on", conversation_id=conversation_id)
    return refused.value


@pytest.fixture
def cli_agents(tmp_path: Path) -> Path:
    """A data folder with a Claude Code agent whose binary exists and one whose does not."""
    fake = tmp_path / "fake-claude"
    fake.write_text(f"#!{sys.executable}\n")
    fake.chmod(0o755)
    return write_config(
        tmp_path / "cli-data",
        f'\n[agents.cc]\nrunner = "claude_code"\nbinary = "{fake}"\n'
        '\n[agents.gone]\nrunner = "claude_code"\nbinary = "no-such-agent-binary-anywhere"\n',
    )


async def test_a_session_ready_for_a_follow_up_has_no_problem(orch: AgentOrchestrator) -> None:
    await orch.store.bulk.insert([finished("idle-1", NOW_US, agent_id="slow")])
    assert await orch.follow_up_problem("idle-1") is None


async def test_busy_and_pending_sessions_answer_as_the_send_would(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    await orch.store.bulk.insert(
        [
            finished("busy-1", NOW_US, agent_id="slow", state=SessionState.RUNNING),
            finished(
                "pend-1",
                NOW_US,
                agent_id="slow",
                mode=SessionMode.DETACHED,
                state=SessionState.PENDING,
            ),
        ]
    )
    before = snapshot(data_dir)
    busy = await orch.follow_up_problem("busy-1")
    pending = await orch.follow_up_problem("pend-1")
    assert isinstance(busy, AgentBusy)
    assert isinstance(pending, SessionNotReady)
    assert snapshot(data_dir) == before  # asking writes nothing
    assert (busy.code, busy.message) == ((sent := await refusal(orch, "busy-1")).code, sent.message)
    assert pending.code == (await refusal(orch, "pend-1")).code


async def test_a_missing_agent_binary_is_runner_unavailable_naming_the_setting(
    cli_agents: Path, tmp_path: Path
) -> None:
    orch = await AgentOrchestrator.open(cli_agents)
    try:
        await orch.store.bulk.insert(
            [in_folder(finished(GONE_ID, NOW_US, agent_id="gone"), tmp_path)]
        )
        problem = await orch.follow_up_problem(GONE_ID)
        assert isinstance(problem, RunnerUnavailable)
        assert "agents.gone.binary" in problem.message
        assert problem.message == (await refusal(orch, GONE_ID)).message
    finally:
        await orch.close(wait=False)


async def test_a_missing_working_folder_is_cwd_missing(cli_agents: Path, tmp_path: Path) -> None:
    orch = await AgentOrchestrator.open(cli_agents)
    gone = tmp_path / "deleted-worktree"
    try:
        await orch.store.bulk.insert([in_folder(finished(CC_ID, NOW_US, agent_id="cc"), gone)])
        problem = await orch.follow_up_problem(CC_ID)
        assert isinstance(problem, CwdMissing)
        assert str(gone) in problem.message
        assert (await refusal(orch, CC_ID)).code == "cwd_missing"
    finally:
        await orch.close(wait=False)


async def test_an_unknown_conversation_is_named(orch: AgentOrchestrator) -> None:
    problem = await orch.follow_up_problem("no-such-session")
    assert isinstance(problem, UnknownConversation)
