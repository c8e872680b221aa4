"""A session delegate runs attached (its CLI on a terminal, its hooks in it) is left to its
hooks: the monitor builds no hand-off from facts while the ``attached`` lease is held."""

from __future__ import annotations

from pathlib import Path

import pytest
from context_support import RecordingHandOff, hot_data_dir

from core.clock import to_us
from core.orchestrator import AgentOrchestrator
from core.supervisor import ContextMonitor, Supervisor
from core.supervisor.context_monitor import ATTACHED_LEASE

FAST = {"store_poll_s": 0.05, "tick_s": 0.1, "watch_transcripts": False}


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


async def test_an_attached_session_is_left_to_its_hooks_until_the_lease_goes(
    tmp_path: Path,
) -> None:
    orch = await AgentOrchestrator.open(hot_data_dir(tmp_path))
    handoff = RecordingHandOff(orch)
    monitor = ContextMonitor(handoff)
    supervisor = Supervisor(orch, monitors=[monitor], **FAST)  # driven by hand: not started
    try:
        [handle] = await orch.delegate(prompt="start", agent_id="hot")
        await handle.wait()
        cid = handle.conversation_id
        for prompt in ("half way there", "seventy-five now"):
            [handle] = await orch.delegate(prompt=prompt, agent_id="hot", conversation_id=cid)
            await handle.wait()
        lease, holder = ATTACHED_LEASE.format(cid), "a terminal"
        now = to_us(orch.clock())
        assert await orch.store.leases.acquire(lease, holder, now, 60_000_000)

        await monitor.on_sessions_changed(supervisor, (cid,))
        await monitor.drain()
        assert handoff.calls == []  # its hooks ask the agent instead

        await orch.store.leases.release(lease, holder)  # the CLI left the terminal
        await monitor.on_sessions_changed(supervisor, (cid,))
        await monitor.drain()
        assert handoff.calls == [cid]
    finally:
        await orch.close()
