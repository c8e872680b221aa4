"""Two OS processes race a follow-up on one session: exactly one wins."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from support import BASE_US, DELEGATE, cli_env, finished, query, write_config

from core.orchestrator import AgentOrchestrator

RACERS = 2


async def test_two_processes_racing_a_follow_up(tmp_path: Path) -> None:
    # Each streamed chunk waits 0.3 s, so the winner holds the session for ~2 s:
    # far longer than the gap between two processes started together.
    data_dir = write_config(tmp_path / "data", "\n[agents.racer]\ndelay = 0.3\n")
    orch = await AgentOrchestrator.open(data_dir)
    try:
        await orch.store.bulk.insert([finished("c1", BASE_US, agent_id="racer")])
    finally:
        await orch.close()

    async def follow_up(name: str) -> tuple[int, dict[str, object]]:
        request = json.dumps({"conversation_id": "c1", "prompt": f"race from {name}"})
        proc = await asyncio.create_subprocess_exec(
            str(DELEGATE),
            "--data-dir",
            str(data_dir),
            "tool",
            "delegate_agent",
            request,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=cli_env(tmp_path),
            cwd=tmp_path,
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
        assert proc.returncode is not None
        assert out, err.decode()
        return proc.returncode, json.loads(out)

    results = await asyncio.gather(*(follow_up(f"racer-{i}") for i in range(RACERS)))

    winners = [body for code, body in results if code == 0]
    losers = [body for code, body in results if code != 0]
    assert len(winners) == 1, results
    assert losers == [
        {"status": "error", "error": {"code": "agent_busy", "message": "delegate still running"}}
    ] * (RACERS - 1)
    [winner] = winners
    assert winner["status"] == "ok"
    assert winner["conversation_id"] == "c1"
    assert winner["run_status"] == "completed"

    # Only the winner's run and messages were written.
    runs = query(data_dir, "SELECT run_id, status FROM runs WHERE conversation_id = 'c1'")
    assert runs == [(winner["run_id"], "completed")]
    prompts = query(
        data_dir, "SELECT content FROM messages WHERE conversation_id = 'c1' AND role = 'user'"
    )
    race_prompts = [p for (p,) in prompts if p.startswith("race from")]
    assert len(race_prompts) == 1
    assert winner["output"] == f"[racer] turn 2: {race_prompts[0]}"
    assert query(data_dir, "SELECT state FROM sessions") == [("idle",)]
