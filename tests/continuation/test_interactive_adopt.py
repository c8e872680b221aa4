"""A hand-off a person opens in Claude Code from the panel (ctrl+k): the new session gets
an id delegate chose, and once it is stored it is linked as the continuation — no hooks
needed — so nothing says the hand-off still waits."""

from __future__ import annotations

import dataclasses
import stat
from pathlib import Path

from handoff_support import config_with_agents, make_repo
from support import BASE_US, finished

from core.continuation import Continuation, HandoffResult
from core.documents.handoff_files import PENDING_NOTE, handoffs_dir
from core.events import SessionContinued
from core.models import DocumentStatus, SessionState
from core.orchestrator import AgentOrchestrator
from core.store import FinishedSession

OLD = "0f3a9c1e-1111-2222-3333-444455556666"


def imported(cid: str, repo: Path) -> FinishedSession:
    base = finished(cid, BASE_US, messages=2)
    session = dataclasses.replace(
        base.session, cwd=str(repo), source="claude-code", agent_id="claude-code"
    )
    return dataclasses.replace(base, session=session)


async def test_the_session_a_person_opens_on_a_handoff_is_linked_once_stored(
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
        await orch.store.bulk.insert([imported(OLD, repo)])
        service = Continuation(orch)
        outcome = await service.hand_off(OLD)
        assert outcome.result is HandoffResult.PENDING
        assert outcome.document is not None
        document_id = outcome.document.document_id

        start = await service.interactive_start(document_id)
        new = start.successor_id
        assert new is not None
        assert start.plan.argv[:3] == (str(fake), "--session-id", new)
        assert start.plan.argv[3].startswith("Read the hand-off document at ")

        # The person has not started it yet (or it is not imported): nothing changes.
        assert await service.adopt(document_id, new) is None
        assert (await orch.store.documents.get(document_id)).status is DocumentStatus.PENDING

        await orch.store.bulk.insert([imported(new, repo)])
        adopted = await service.adopt(document_id, new)
        assert adopted is not None
        assert adopted.continued_from == OLD
        old = await orch.get_session(OLD)
        assert old.continued_in == new
        assert old.state is SessionState.HANDED_OFF
        document = await orch.store.documents.get(document_id)
        assert document.status is DocumentStatus.CONSUMED
        assert document.consumers == (new,)
        assert not (handoffs_dir(repo) / PENDING_NOTE).exists()
        [event] = [e for e in await orch.history(10) if isinstance(e, SessionContinued)]
        assert (event.conversation_id, event.successor_id) == (OLD, new)
        assert event.document_id == document_id
        assert await orch.waiting_handoffs() == []
        # Once is enough: the hooks (or a second look) find nothing left to do.
        assert await service.adopt(document_id, new) is None
    finally:
        await orch.close(wait=False)
