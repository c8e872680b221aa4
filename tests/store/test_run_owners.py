"""A run whose owner is gone is ``interrupted`` by whoever reads it.

The owner is recorded as host identity (boot id + pid namespace) + pid +
process start time, so a reused pid or a reboot is a dead owner too.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import BASE_US, DELEGATE, cli_env, db_path, json_out, query, run_cli

from core import process_identity
from core.models import RunKind, RunStatus, SessionMode, SessionState
from core.store import NewRun, NewSession, Store

GLACIAL = '\n[agents.glacial]\nrunner = "scripted"\ndelay = 30\n'


def test_process_identity_of_this_process() -> None:
    me = process_identity.current()
    assert me.pid == os.getpid()
    assert me.host == socket.gethostname()
    if Path("/proc/self/stat").exists():
        assert me.host_id.startswith("boot:")
        assert me.started is not None
        assert process_identity.start_time(os.getpid()) == me.started
    assert process_identity.liveness(me.host, me.host_id, me.pid, me.started) == "alive"


def test_a_reused_pid_or_another_boot_is_gone_and_another_host_unknown() -> None:
    me = process_identity.current()
    if me.started is None:
        pytest.skip("no process start times on this platform")
    assert process_identity.liveness(me.host, me.host_id, me.pid, me.started + 1) == "gone"
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert process_identity.liveness(me.host, me.host_id, child.pid, None) == "gone"
    _boot, _, namespace = me.host_id.partition("/")
    rebooted = f"boot:00000000-0000-0000-0000-000000000000/{namespace}"
    assert process_identity.liveness(me.host, rebooted, me.pid, me.started) == "gone"
    assert process_identity.liveness("elsewhere", "boot:other/x", me.pid, me.started) == "unknown"
    # A run recorded before host ids were: hostname and pid alone.
    assert process_identity.liveness(me.host, None, me.pid, None) == "alive"
    assert process_identity.liveness("elsewhere", None, me.pid, None) == "unknown"


def _dead_pid() -> int:
    """The pid of a process that has just exited."""
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(dead.stdout)


async def _running_session(store: Store, cid: str) -> str:
    run_id = f"run-{cid}"
    await store.runs.start_launch(
        NewSession(cid, "echo", SessionMode.STANDARD, "/tmp", cid, BASE_US, 1000),
        NewRun(run_id, "echo", RunKind.LAUNCH, "hi", BASE_US),
        None,
    )
    return run_id


async def _set_owner(store: Store, run_id: str, **columns: object) -> None:
    sets = ", ".join(f"{name} = ?" for name in columns)
    async with store.db.transaction() as db:
        await db.execute(f"UPDATE runs SET {sets} WHERE run_id = ?", (*columns.values(), run_id))


async def test_every_reader_interrupts_a_run_whose_owner_is_gone(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "store.sqlite3")
    try:
        me = process_identity.current()
        if me.started is None:
            pytest.skip("no process start times on this platform")
        mine = await _running_session(store, "mine")
        reused = await _running_session(store, "reused")
        elsewhere = await _running_session(store, "elsewhere")
        await _set_owner(store, reused, owner_started=(me.started or 0) + 12345)
        await _set_owner(store, elsewhere, owner_host="far-away", owner_host_id="boot:far/away")
        sessions, _ = await store.sessions.page(10)
        states = {s.conversation_id: s.state for s in sessions}
        assert states == {
            "mine": SessionState.RUNNING,
            "reused": SessionState.IDLE,
            "elsewhere": SessionState.RUNNING,  # left for the heartbeat of its own host
        }
        run = await store.runs.get(reused)
        assert run.status is RunStatus.INTERRUPTED
        assert run.error is not None
        assert str(me.pid) in run.error
        assert (await store.runs.get(mine)).status is RunStatus.RUNNING
        assert (await store.sessions.count_by_state())[SessionState.RUNNING] == 2
    finally:
        await store.close()


@pytest.mark.parametrize("reader", ["get", "count", "dismiss", "claim"])
async def test_each_reader_applies_it(tmp_path: Path, reader: str) -> None:
    store = await Store.open(tmp_path / "store.sqlite3")
    try:
        run_id = await _running_session(store, "c1")
        await _set_owner(store, run_id, owner_pid=_dead_pid())
        if reader == "get":
            assert (await store.sessions.get("c1")).state is SessionState.IDLE
        elif reader == "count":
            assert SessionState.RUNNING not in await store.sessions.count_by_state()
        elif reader == "dismiss":
            await store.tombstones.purge("c1", BASE_US, force=True)
            assert await store.tombstones.is_dismissed("c1")
            return
        else:
            claimed = await store.runs.claim_follow_up(
                "c1", NewRun("r2", "echo", RunKind.FOLLOW_UP, "again", BASE_US + 1), None
            )
            assert claimed.state is SessionState.RUNNING
        assert (await store.runs.get(run_id)).status is RunStatus.INTERRUPTED
    finally:
        await store.close()


async def test_agent_processes_of_a_dead_owner_are_found(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "store.sqlite3")
    agent = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import time; time.sleep(60)"
    )
    try:
        run_id = await _running_session(store, "c1")
        started = process_identity.start_time(agent.pid)
        await store.runs.record_agent_process(run_id, agent.pid, started)
        assert await store.runs.orphaned_agents("c1") == []  # its owner (us) still runs it
        await _set_owner(store, run_id, owner_pid=_dead_pid())
        await store.sessions.get("c1")  # a reader interrupts the run
        orphans = await store.runs.orphaned_agents("c1")
        assert [(o.run_id, o.pid, o.started) for o in orphans] == [(run_id, agent.pid, started)]
        agent.kill()
        await agent.wait()
        assert await store.runs.orphaned_agents("c1") == []
    finally:
        if agent.returncode is None:
            agent.kill()
            await agent.wait()
        await store.close()


def test_a_killed_delegate_run_is_interrupted_for_every_reader(
    data_dir: Path, tmp_path: Path
) -> None:
    config = data_dir / "config.toml"
    config.write_text(config.read_text() + GLACIAL, encoding="utf-8")
    env = cli_env(tmp_path)
    proc = subprocess.Popen(
        [str(DELEGATE), "--data-dir", str(data_dir), "run", "--agent", "glacial", "slow work"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if (
                db_path(data_dir).exists()
                and query(data_dir, "SELECT 1 FROM sqlite_master WHERE name = 'runs'")
                and query(data_dir, "SELECT 1 FROM runs WHERE status = 'running'")
            ):
                break
            time.sleep(0.1)
        else:
            pytest.fail("the run never started")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    listed = run_cli("--data-dir", str(data_dir), "sessions", "list", "--json", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    (session,) = json_out(listed)["sessions"]
    assert session["state"] == "idle"
    assert session["last_run_status"] == "interrupted"
    assert query(data_dir, "SELECT status FROM runs") == [("interrupted",)]
    # The session is usable again: a follow-up starts.
    again = run_cli(
        "--data-dir",
        str(data_dir),
        "run",
        "--session",
        session["conversation_id"],
        "--agent",
        "echo",
        "go on",
        home=tmp_path,
    )
    assert again.returncode == 0, again.stderr
