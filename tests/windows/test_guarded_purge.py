"""Guarded delete (seed 004): purging a session others depend on — sub-agents
launched from it, forks of it, its hand-off chain — is refused with the list,
unless forced."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support import json_out, run_cli

from core.config import DB_FILENAME
from core.errors import HasDependants
from core.models import RunStatus
from core.orchestrator import AgentOrchestrator
from core.tools import call_tool


async def _launch(orch: AgentOrchestrator, prompt: str, **kwargs: object) -> str:
    [handle] = await orch.delegate(prompt=prompt, **kwargs)
    assert (await handle.wait()).status is RunStatus.COMPLETED
    return handle.conversation_id


def _link(data_dir: Path, sql: str, *params: str) -> None:
    """Write a link another part of delegate keeps (a hand-off chain, a fork)."""
    with sqlite3.connect(data_dir / DB_FILENAME) as db:
        db.execute(sql, params)


async def test_purging_a_parent_with_a_sub_agent_is_refused_unless_forced(
    orch: AgentOrchestrator,
) -> None:
    parent = await _launch(orch, "lead")
    child = await _launch(orch, "help", parent_id=parent)
    assert await orch.dependants(parent) == [child]
    assert await orch.dependants(child) == []
    await orch.dismiss(parent)

    with pytest.raises(HasDependants) as refused:
        await orch.purge(parent)
    assert refused.value.dependants == [child]
    assert child in refused.value.message
    assert (await orch.get_session(parent)).conversation_id == parent  # nothing removed

    await orch.purge(parent, with_dependants=True)  # what the panel's confirm sends
    # A sub-agent goes with its parent, as it always did.
    assert not await orch.store.sessions.exists(parent)
    assert not await orch.store.sessions.exists(child)


async def test_chain_links_and_forks_are_dependants(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    old = await _launch(orch, "first")
    new = await _launch(orch, "continued")
    fork = await _launch(orch, "forked")
    _link(data_dir, "UPDATE sessions SET continued_in = ? WHERE conversation_id = ?", new, old)
    _link(data_dir, "UPDATE sessions SET continued_from = ? WHERE conversation_id = ?", old, new)
    _link(data_dir, "UPDATE sessions SET forked_from = ? WHERE conversation_id = ?", old, fork)

    assert sorted(await orch.dependants(old)) == sorted([new, fork])
    assert await orch.dependants(new) == [old]  # the chain holds both ways
    await orch.dismiss(new)
    with pytest.raises(HasDependants):
        await orch.purge(new)
    await orch.purge(old, force=True)  # force: not archived, and dependants or not
    assert not await orch.store.sessions.exists(old)
    assert await orch.store.sessions.exists(new)
    assert await orch.store.sessions.exists(fork)


async def test_the_tool_answers_has_dependants_with_the_list(orch: AgentOrchestrator) -> None:
    parent = await _launch(orch, "lead")
    child = await _launch(orch, "help", parent_id=parent)
    await orch.dismiss(parent)
    response = await call_tool(
        orch, "delegate_sessions", {"operation": "purge", "conversation_id": parent}
    )
    assert response["status"] == "error"
    assert response["error"]["code"] == "has_dependants"
    assert response["error"]["dependants"] == [child]
    forced = await call_tool(
        orch,
        "delegate_sessions",
        {"operation": "purge", "conversation_id": parent, "force": True},
    )
    assert forced["status"] == "ok", forced


def test_cli_purge_lists_dependants_and_force_overrides(tmp_path: Path) -> None:
    data = tmp_path / "data"

    def cli(*args: str):  # type: ignore[no-untyped-def]
        return run_cli("--data-dir", str(data), *args, home=tmp_path)

    parent = json_out(cli("run", "--json", "lead"))["conversation_id"]
    child = json_out(cli("run", "--json", "--parent", parent, "help"))["conversation_id"]
    assert cli("sessions", "dismiss", parent).returncode == 0
    refused = cli("sessions", "dismiss", "--purge", parent)
    assert refused.returncode == 1
    assert "has_dependants" in refused.stderr
    assert child in refused.stderr
    assert "--force" in refused.stderr
    forced = cli("sessions", "dismiss", "--purge", "--force", parent)
    assert forced.returncode == 0, forced.stderr
