"""A wall clock stepped forward or back neither interrupts a live run nor strands a lease:
on one host, heartbeats and leases are judged by the monotonic clock.

The owner of a run is a real second process beating with the real clocks; the
judge (a supervisor, ``watch``) sees the wall clock stepped through the clock it
is given — every process of a host shares one wall clock, so a judge whose wall
clock reads N seconds ahead is what a step of N seconds looks like to it.
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from gated import gated_data_dir, read_until, start_owner, stop_between_writes
from support import query

from core.clock import Clock, system_clock, system_mono
from core.orchestrator import AgentOrchestrator
from core.store import Store
from core.supervisor.leader import LEASE_NAME, Leadership


def stepped(seconds: float) -> Clock:
    """The wall clock as a process sees it after a step of ``seconds`` (back if negative)."""

    def clock() -> datetime:
        return system_clock() + timedelta(seconds=seconds)

    return clock


@pytest.fixture
def owner() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.wait(timeout=10)


@pytest.mark.parametrize("step_s", [40, 120, 3_600])
async def test_a_wall_clock_step_forward_does_not_interrupt_a_live_run(
    tmp_path: Path, owner: list[subprocess.Popen[bytes]], step_s: int
) -> None:
    tmp = tmp_path
    data, _gate = gated_data_dir(tmp)
    proc = start_owner(tmp, data, "run", heartbeat_s=0.1)
    owner.append(proc)
    read_until(proc, b"started ")
    judge = await AgentOrchestrator.open(data, clock=stepped(step_s))
    try:
        for _ in range(5):  # several looks, beats in between
            assert await judge.interrupt_stale_runs() == []  # the default grace (30 s)
            await asyncio.sleep(0.15)
        assert query(data, "SELECT status FROM runs") == [("running",)]
    finally:
        await judge.close()


async def test_a_hung_owner_is_still_interrupted_after_the_wall_clock_went_back(
    tmp_path: Path, owner: list[subprocess.Popen[bytes]]
) -> None:
    tmp = tmp_path
    data, _gate = gated_data_dir(tmp)
    proc = start_owner(tmp, data, "run", heartbeat_s=0.1)
    owner.append(proc)
    read_until(proc, b"started ")
    judge = await AgentOrchestrator.open(data, clock=stepped(-7_200))
    try:
        stop_between_writes(proc, data)  # alive, but silent
        deadline = time.monotonic() + 15
        found = []
        while not found:
            assert time.monotonic() < deadline, "a silent owner was trusted: the clock went back"
            found = await judge.interrupt_stale_runs(grace_s=1)
            await asyncio.sleep(0.1)
        assert "no heartbeat" in found[0].reason
    finally:
        await judge.close()


async def test_a_leader_killed_while_the_clock_was_ahead_does_not_strand_the_lease(
    tmp_path: Path,
) -> None:
    store = await Store.open(tmp_path / "store.db")
    try:
        ahead = Leadership(store, ttl_s=0.3, clock=stepped(7_200))
        assert await ahead.renew()
        # ...and killed (no release); the clock is set back by two hours.
        after = Leadership(store, ttl_s=0.3)
        assert not await after.renew()  # its lease still runs
        await asyncio.sleep(0.5)
        assert await after.renew(), "the lease was stranded until the clock caught up"
        assert await store.leases.holder(LEASE_NAME, int(time.time() * 1e6)) == after.holder
    finally:
        await store.close()


async def test_a_leader_whose_clock_went_back_keeps_its_lease_for_its_term(
    tmp_path: Path,
) -> None:
    store = await Store.open(tmp_path / "store.db")
    try:
        leader = Leadership(store, ttl_s=5)
        assert await leader.renew()
        # Another supervisor whose wall clock reads an hour ahead must not take over.
        contender = Leadership(store, ttl_s=5, clock=stepped(3_600))
        assert not await contender.renew()
    finally:
        await store.close()


async def test_silence_is_measured_by_the_monotonic_clock_it_is_given(
    tmp_path: Path, owner: list[subprocess.Popen[bytes]]
) -> None:
    data, _gate = gated_data_dir(tmp_path)
    proc = start_owner(tmp_path, data, "run", heartbeat_s=0.1)
    owner.append(proc)
    read_until(proc, b"started ")
    stop_between_writes(proc, data)  # silent from now on
    later = {"s": 0.0}
    judge = await AgentOrchestrator.open(
        data,
        clock=stepped(-3_600),  # the wall says the beat is an hour in the future
        mono_clock=lambda: system_mono() + int(later["s"] * 1_000_000),
    )
    try:
        assert await judge.interrupt_stale_runs(grace_s=30) == []
        later["s"] = 31  # 31 s pass by the clock that does not jump
        [event] = await judge.interrupt_stale_runs(grace_s=30)
        assert re.search(r"no heartbeat for 3[12]s", event.reason)
    finally:
        await judge.close()
