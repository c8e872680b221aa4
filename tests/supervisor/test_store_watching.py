"""The supervisor sees what other processes do to the store: real processes, real SQLite."""

from __future__ import annotations

import asyncio
import re
import subprocess
from pathlib import Path

from supervisor_support import recording
from support import DELEGATE, cli_env

from core.events import (
    DelegateLaunched,
    RunsChanged,
    SessionDismissed,
    SessionsChanged,
    WatchStatus,
)
from core.orchestrator import AgentOrchestrator
from core.supervisor import Supervisor

FAST = {"store_poll_s": 0.05, "tick_s": 0.1, "watch_transcripts": False}


async def delegate_cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real console script in another process (off the event loop)."""
    return await asyncio.to_thread(
        subprocess.run,
        [str(DELEGATE), "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        cwd=data_dir,
        env=cli_env(data_dir.parent),
        timeout=60,
        check=False,
    )


async def test_a_session_launched_by_another_process_is_announced(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    with recording(orch.bus) as seen:
        async with Supervisor(orch, **FAST):
            done = await delegate_cli(data_dir, "run", "hello", "--agent", "echo")
            assert done.returncode == 0, done.stderr
            found = re.search(r"run (\S+) in conversation (\S+)", done.stderr)
            assert found is not None, done.stderr
            run_id, conversation_id = found.groups()
            await seen.wait_for(
                lambda e: isinstance(e, SessionsChanged) and conversation_id in e.conversation_ids
            )
            await seen.wait_for(lambda e: isinstance(e, RunsChanged) and run_id in e.run_ids)
            # The other process's history, re-published here as the ordinary models.
            launched = await seen.wait_for(lambda e: isinstance(e, DelegateLaunched))
            assert isinstance(launched, DelegateLaunched)
            assert launched.conversation_id == conversation_id


async def test_a_dismissal_in_another_process_is_a_removal(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    (handle,) = await orch.delegate("hello", agent_id="echo", cwd=str(data_dir))
    conversation_id = (await handle.wait()).conversation_id
    with recording(orch.bus) as seen:
        async with Supervisor(orch, **FAST):
            done = await delegate_cli(data_dir, "sessions", "dismiss", conversation_id)
            assert done.returncode == 0, done.stderr
            await seen.wait_for(
                lambda e: isinstance(e, SessionsChanged) and e.removed == (conversation_id,)
            )
            await seen.wait_for(lambda e: isinstance(e, SessionDismissed))


async def test_this_process_history_is_not_published_twice(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    with recording(orch.bus) as seen:
        async with Supervisor(orch, **FAST):
            (handle,) = await orch.delegate("hello", agent_id="echo", cwd=str(data_dir))
            run = await handle.wait()
            await seen.wait_for(
                lambda e: (
                    isinstance(e, SessionsChanged) and run.conversation_id in e.conversation_ids
                )
            )
            await asyncio.sleep(0)  # (the feed is read; nothing more is coming)
    launches = [e for e in seen.events if isinstance(e, DelegateLaunched)]
    assert len(launches) == 1


async def test_two_supervisors_elect_one_leader_and_the_other_takes_over(data_dir: Path) -> None:
    one = await AgentOrchestrator.open(data_dir)
    two = await AgentOrchestrator.open(data_dir)
    try:
        with recording(two.bus) as seen:
            first = Supervisor(one, lease_ttl_s=1.0, **FAST)
            second = Supervisor(two, lease_ttl_s=1.0, **FAST)
            await first.start()
            await second.start()
            try:
                assert first.is_leader
                assert not second.is_leader
                assert second.watch_status.leader is False
                await first.stop()
                await seen.wait_for(lambda e: isinstance(e, WatchStatus) and e.leader)
                assert second.is_leader
            finally:
                await first.stop()
                await second.stop()
    finally:
        await one.close()
        await two.close()


async def test_stop_is_idempotent_and_releases_the_lease(orch: AgentOrchestrator) -> None:
    supervisor = Supervisor(orch, **FAST)
    await supervisor.start()
    assert supervisor.is_leader
    await supervisor.stop()
    await supervisor.stop()
    assert await orch.store.leases.holder("supervisor", now_us=0) is None


async def test_a_leader_that_stops_renewing_is_replaced_when_its_lease_expires(
    orch: AgentOrchestrator,
) -> None:
    from core.clock import to_us

    # A leader that died without releasing: its lease row stays until it expires.
    ttl_us = 500_000
    assert await orch.store.leases.acquire("supervisor", "gone", to_us(orch.clock()), ttl_us)
    with recording(orch.bus) as seen:
        async with Supervisor(orch, **FAST) as supervisor:
            assert not supervisor.is_leader
            await seen.wait_for(lambda e: isinstance(e, WatchStatus) and e.leader)
            assert supervisor.is_leader


async def test_the_leader_interrupts_a_run_whose_owner_was_killed(tmp_path: Path) -> None:
    from support import query, write_config

    data_dir = write_config(tmp_path / "data", '[agents.sleepy]\nrunner = "scripted"\ndelay = 5\n')
    orch = await AgentOrchestrator.open(data_dir)
    try:
        with recording(orch.bus) as seen:
            async with Supervisor(orch, **FAST) as supervisor:
                assert supervisor.is_leader
                owner = await asyncio.create_subprocess_exec(
                    *(str(DELEGATE), "--data-dir", str(data_dir), "run", "hi", "--agent", "sleepy"),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    cwd=data_dir,
                    env=cli_env(data_dir.parent),
                )
                try:
                    started = await seen.wait_for(lambda e: isinstance(e, RunsChanged))
                    assert isinstance(started, RunsChanged)
                    (run_id,) = started.run_ids
                finally:
                    owner.kill()
                    await owner.wait()
                # Nobody reads the store here: the leader's StaleRuns monitor acts alone.
                await seen.wait_for(
                    lambda e: (
                        isinstance(e, RunsChanged)
                        and run_id in e.run_ids
                        and query(data_dir, "SELECT status FROM runs WHERE run_id = ?", (run_id,))
                        == [("interrupted",)]
                    )
                )
        state = query(data_dir, "SELECT state, active_run_id FROM sessions")
        assert state == [("idle", None)]
    finally:
        await orch.close()
