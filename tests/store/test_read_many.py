"""A batch of changed sessions is read in one go: those that exist, in the order asked."""

from __future__ import annotations

from support import BASE_US, finished

from core.clock import from_us
from core.orchestrator import AgentOrchestrator


async def test_a_batch_read_returns_the_sessions_that_exist_in_the_order_asked(
    orch: AgentOrchestrator,
) -> None:
    await orch.store.bulk.insert([finished(f"s-{n:04d}", BASE_US + n) for n in range(1200)])
    # More ids than one query takes, out of order, repeated, with some that do not exist.
    asked = [f"s-{n:04d}" for n in range(1199, -1, -2)] + ["missing-1", "s-0003", "missing-2"]

    found = await orch.get_sessions(asked)

    assert list(found) == [f"s-{n:04d}" for n in range(1199, -1, -2)]  # s-0003 once
    assert all(found[cid].conversation_id == cid for cid in found)
    # Each row as a single read gives it.
    assert found["s-0003"] == await orch.get_session("s-0003")


async def test_a_batch_read_of_nothing_reads_nothing(orch: AgentOrchestrator) -> None:
    assert await orch.get_sessions([]) == {}
    assert await orch.get_sessions(["not-there"]) == {}


async def test_a_batch_read_can_keep_only_the_sessions_active_lately(
    orch: AgentOrchestrator,
) -> None:
    await orch.store.bulk.insert([finished(f"s-{n}", BASE_US + n) for n in range(10)])
    since = from_us(BASE_US + 7)

    found = await orch.get_sessions([f"s-{n}" for n in range(10)], active_since=since)

    assert list(found) == ["s-7", "s-8", "s-9"]
    assert all(s.last_interacted_at >= since for s in found.values())
