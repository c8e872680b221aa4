"""Past the force threshold delegate sends a session no further prompt: every way in
(orchestrator, JSON tool, CLI, detached) answers ``context_exhausted`` naming where the
work continues, or how to continue it (seed 003 §7, docs/context.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from context_support import hot_data_dir
from support import query, run_cli

from core.context.thresholds import exhausted
from core.errors import ContextExhausted
from core.orchestrator import AgentOrchestrator
from core.store.database import Database
from core.tools import call_tool


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions launched without a folder work in the test's own (hand-offs land there)."""
    monkeypatch.chdir(tmp_path)


async def _session_at(orch: AgentOrchestrator, prompt: str, cwd: Path | None = None) -> str:
    [handle] = await orch.delegate(
        prompt=prompt, agent_id="hot", cwd=str(cwd) if cwd is not None else None
    )
    await handle.wait()
    return handle.conversation_id


async def _link(db: Database, old: str, new: str) -> None:
    """The hand-off chain, as a continuation records it."""
    async with db.transaction() as conn:
        await conn.execute(
            "UPDATE sessions SET continued_in = ? WHERE conversation_id = ?", (new, old)
        )
        await conn.execute(
            "UPDATE sessions SET continued_from = ? WHERE conversation_id = ?", (old, new)
        )


async def test_a_follow_up_past_force_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    data = hot_data_dir(tmp_path)
    orch = await AgentOrchestrator.open(data)
    try:
        full = await _session_at(orch, "ninety-five and counting")
        before = query(data, "SELECT count(*) FROM runs")
        with pytest.raises(ContextExhausted) as caught:
            await orch.delegate(prompt="one more thing", conversation_id=full)
        assert caught.value.code == "context_exhausted"
        assert "95%" in caught.value.message
        assert "delegate handoff continue" in caught.value.message
        assert query(data, "SELECT count(*) FROM runs") == before
        # Detached follow-ups too, before any worker starts.
        with pytest.raises(ContextExhausted):
            await orch.delegate(prompt="one more", conversation_id=full, mode="detached")
        # The follow-up box asks the same question before the prompt is typed.
        problem = await orch.follow_up_problem(full)
        assert isinstance(problem, ContextExhausted)
        # Below force, follow-ups go on as ever.
        warm = await _session_at(orch, "seventy-five")
        [handle] = await orch.delegate(prompt="go on", conversation_id=warm)
        assert (await handle.wait()).status.value == "completed"
        assert await orch.follow_up_problem(warm) is None
    finally:
        await orch.close()


async def test_a_follow_up_to_a_continued_session_is_judged_by_the_chain_s_newest(
    tmp_path: Path,
) -> None:
    orch = await AgentOrchestrator.open(hot_data_dir(tmp_path))
    try:
        first = await _session_at(orch, "ninety-five")
        second = await _session_at(orch, "ninety-five again")
        await _link(orch.store.db, first, second)
        # The work is in `second`, itself past force: refused, naming it.
        with pytest.raises(ContextExhausted) as caught:
            await orch.delegate(prompt="more", conversation_id=first)
        assert caught.value.conversation_id == second
        assert caught.value.successor_id is None
        payload = await call_tool(
            orch, "delegate_agent", {"conversation_id": first, "prompt": "more"}
        )
        assert payload["status"] == "error"
        assert payload["error"]["code"] == "context_exhausted"
        assert payload["error"]["successor_id"] is None
        assert second in payload["error"]["message"]
        # Continued once more into a fresh session: the follow-up runs there.
        third = await _session_at(orch, "start fresh")
        await _link(orch.store.db, second, third)
        [handle] = await orch.delegate(prompt="more", conversation_id=first)
        assert (await handle.wait()).status.value == "completed"
        assert (handle.conversation_id, handle.routed_from) == (third, first)
    finally:
        await orch.close()


async def test_the_refusal_names_the_successor_when_the_session_itself_is_asked(
    tmp_path: Path,
) -> None:
    orch = await AgentOrchestrator.open(hot_data_dir(tmp_path))
    try:
        first = await _session_at(orch, "ninety-five")
        second = await _session_at(orch, "start fresh")
        await _link(orch.store.db, first, second)
        refusal = await exhausted(orch.store, orch.settings, await orch.get_session(first))
        assert refusal is not None
        assert refusal.successor_id == second
        assert f"continues in session {second}" in refusal.message
    finally:
        await orch.close()


async def test_a_project_with_thresholds_off_or_a_higher_force_is_not_refused(
    tmp_path: Path,
) -> None:
    orch = await AgentOrchestrator.open(hot_data_dir(tmp_path))
    off, late = tmp_path / "off", tmp_path / "late"
    for folder, table in ((off, "enabled = false"), (late, "force = 99")):
        (folder / ".git").mkdir(parents=True)
        (folder / ".delegate").mkdir()
        (folder / ".delegate" / "config.toml").write_text(f"[context]\n{table}\n")
    try:
        for folder in (off, late):
            full = await _session_at(orch, "ninety-five", folder)
            [handle] = await orch.delegate(prompt="still fine", conversation_id=full)
            assert (await handle.wait()).status.value == "completed"
    finally:
        await orch.close()


def test_the_cli_says_context_exhausted_in_one_line_and_exits_1(tmp_path: Path) -> None:
    # Not continued automatically: the hand-off waits for a person, the session stays.
    data = hot_data_dir(tmp_path, "[context]\nauto_continue = false")
    launched = run_cli(
        "--data-dir", str(data), "run", "--agent", "hot", "--json", "ninety-five", home=tmp_path
    )
    assert launched.returncode == 0, launched.stderr
    cid = json.loads(launched.stdout)["conversation_id"]
    refused = run_cli("--data-dir", str(data), "run", "--session", cid, "more", home=tmp_path)
    assert refused.returncode == 1
    assert refused.stderr.startswith("delegate: context_exhausted: ")
    assert "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "delegate handoff continue" in refused.stderr
    as_tool = run_cli(
        "--data-dir",
        str(data),
        "tool",
        "delegate_agent",
        json.dumps({"conversation_id": cid, "prompt": "more"}),
        home=tmp_path,
    )
    assert as_tool.returncode == 1
    assert json.loads(as_tool.stdout)["error"]["code"] == "context_exhausted"
