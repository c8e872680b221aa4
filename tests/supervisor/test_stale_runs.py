"""The leader's StaleRuns monitor interrupts a run whose owner went silent."""

from __future__ import annotations

import signal
from pathlib import Path

from gated import gated_data_dir, read_until, start_owner, stop_between_writes
from supervisor_support import recording
from support import query

from core.events import RunInterrupted
from core.orchestrator import AgentOrchestrator
from core.supervisor import StaleRuns, Supervisor

FAST = {"store_poll_s": 0.05, "tick_s": 0.1, "watch_transcripts": False}


async def test_a_silent_owner_s_run_is_interrupted_within_the_grace_period(
    tmp_path: Path,
) -> None:
    data, _gate = gated_data_dir(tmp_path)
    owner = start_owner(tmp_path, data, "run", heartbeat_s=0.1)
    try:
        read_until(owner, b"started ")
        [(run_id, cid)] = query(data, "SELECT run_id, conversation_id FROM runs")
        orch = await AgentOrchestrator.open(data)
        try:
            with recording(orch.bus) as seen:
                async with Supervisor(orch, monitors=[StaleRuns(grace_s=1.0)], **FAST):
                    stop_between_writes(owner, data)  # alive, but no longer beating
                    event = await seen.wait_for(lambda e: isinstance(e, RunInterrupted))
        finally:
            await orch.close()
        assert isinstance(event, RunInterrupted)
        assert (event.run_id, event.conversation_id, event.agent_id) == (run_id, cid, "gated")
        assert "no heartbeat" in event.reason
        assert query(data, "SELECT status FROM runs") == [("interrupted",)]
        assert query(data, "SELECT state, active_run_id FROM sessions") == [("idle", None)]
    finally:
        owner.send_signal(signal.SIGCONT)
        owner.kill()
        owner.wait(timeout=10)
