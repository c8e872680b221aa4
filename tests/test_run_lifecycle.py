"""Runs owned and stoppable from anywhere: heartbeats, the cancel flag,
stale runs interrupted with a history cell, live stderr of a run in flight.

Owners are real second processes (``delegate run``, or ``run_owner.py`` where a
test needs to pick the owner's kind and heartbeat); stops come from this one.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from gated import gated_data_dir, read_until, start_owner, start_run, stop_between_writes
from support import query, run_cli

from core.events import BusEvent, RunActivity, RunInterrupted
from core.models import RunStatus, SessionState
from core.orchestrator import AgentOrchestrator
from core.runs.handle import CANCELLED_BY_USER


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts; none survives it (a stopped one is resumed first)."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.wait(timeout=10)


async def until(check: Callable[[], object], what: str, within_s: float = 20.0) -> None:
    """Wait (polling, with a deadline) until ``check()`` is truthy."""
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def the_run(data: Path) -> tuple[str, str]:
    [(cid, run_id)] = query(data, "SELECT conversation_id, run_id FROM runs")
    return str(cid), str(run_id)


# --- cancel across processes ------------------------------------------------


async def test_stop_run_reaches_a_delegate_run_in_another_process_through_the_flag(
    tmp_path: Path, procs: list[subprocess.Popen[bytes]]
) -> None:
    data, gate = gated_data_dir(tmp_path)
    proc = start_run(tmp_path, data, "--agent", "gated", "explain the build")
    procs.append(proc)
    read_until(proc, b"first half of ")
    cid, run_id = the_run(data)
    # A heartbeat this long means this process never gets to signal the owner:
    # only the flag, read on the owner's next beat, can stop the run.
    orch = await AgentOrchestrator.open(data, heartbeat_s=60)
    try:
        outcome = await orch.stop_run(run_id)
        assert (outcome.how, outcome.run_id, outcome.conversation_id) == ("stopped", run_id, cid)
        run = await orch.store.runs.get(run_id)
    finally:
        await orch.close()
    proc.communicate(timeout=20)
    assert proc.returncode == 1  # not 143: no signal was sent
    assert not gate.exists()
    assert run.status is RunStatus.CANCELLED
    assert run.error == CANCELLED_BY_USER
    assert run.cancel_requested
    assert run.output.startswith("first half of")  # the partial reply is kept
    assert run.owner_kind == "run"
    assert query(data, "SELECT state FROM sessions") == [("idle",)]


async def test_a_one_run_owner_that_does_not_beat_in_time_is_signalled(
    tmp_path: Path, procs: list[subprocess.Popen[bytes]]
) -> None:
    data, _gate = gated_data_dir(tmp_path)
    proc = start_owner(tmp_path, data, "run", heartbeat_s=3600)  # never reads the flag
    procs.append(proc)
    read_until(proc, b"started ")
    _cid, run_id = the_run(data)
    orch = await AgentOrchestrator.open(data, heartbeat_s=0.05)  # signal after 2 x 0.05 s
    try:
        outcome = await orch.stop_run(run_id)
    finally:
        await orch.close()
    assert outcome.how == "stopped"
    proc.communicate(timeout=20)
    assert proc.returncode == 143  # SIGTERM ended it
    assert query(data, "SELECT status FROM runs") == [("cancelled",)]


async def test_a_panel_owner_is_never_signalled_it_stops_the_run_on_its_next_beat(
    tmp_path: Path, procs: list[subprocess.Popen[bytes]]
) -> None:
    data, _gate = gated_data_dir(tmp_path)
    proc = start_owner(tmp_path, data, "panel", heartbeat_s=0.5)
    procs.append(proc)
    read_until(proc, b"started ")
    _cid, run_id = the_run(data)
    # Would signal a one-run owner after 0.02 s: a panel drives other runs too.
    orch = await AgentOrchestrator.open(data, heartbeat_s=0.01)
    try:
        outcome = await orch.stop_run(run_id)
    finally:
        await orch.close()
    assert outcome.how == "stopped"
    proc.communicate(timeout=20)
    assert proc.returncode == 0  # it closed the run itself: no SIGTERM reached it
    assert query(data, "SELECT status, owner_kind FROM runs") == [("cancelled", "panel")]


async def test_the_heartbeat_stamps_runs_while_they_run_and_stops_when_idle(
    tmp_path: Path,
) -> None:
    data, gate = gated_data_dir(tmp_path)
    orch = await AgentOrchestrator.open(data, heartbeat_s=0.05)
    try:
        [handle] = await orch.delegate(prompt="go", agent_id="gated")
        await anext(aiter(handle.stream()))
        [(first,)] = query(data, "SELECT heartbeat_at FROM runs")
        await until(
            lambda: query(data, "SELECT heartbeat_at FROM runs")[0][0] > first, what="a beat"
        )
        gate.touch()
        await handle.wait()
        await until(lambda: not orch.runs.flight.beating, what="idle")
    finally:
        await orch.close()


# --- stale runs ---------------------------------------------------------------


async def test_a_killed_owner_s_run_is_interrupted_with_a_history_cell(
    tmp_path: Path, procs: list[subprocess.Popen[bytes]]
) -> None:
    data, _gate = gated_data_dir(tmp_path)
    proc = start_run(tmp_path, data, "--agent", "gated", "explain the build")
    procs.append(proc)
    read_until(proc, b"first half of ")
    cid, run_id = the_run(data)
    await until(  # the owner stores what it streamed (throttled) as it goes
        lambda: str(query(data, "SELECT live_output FROM runs")[0][0]).startswith("first half"),
        what="the live output in the store",
    )
    proc.kill()  # SIGKILL: no cleanup runs in the owner
    proc.wait(timeout=10)
    orch = await AgentOrchestrator.open(data)
    seen: list[BusEvent] = []
    orch.bus.add_listener(seen.append)
    try:
        started = time.monotonic()
        events = await orch.interrupt_stale_runs()  # the default grace: owner gone is enough
        assert time.monotonic() - started < 5
        assert [(e.run_id, e.conversation_id, e.agent_id) for e in events] == [
            (run_id, cid, "gated")
        ]
        assert "ended before it finished" in events[0].reason
        assert seen == events  # published for this process's front ends
        run = await orch.store.runs.get(run_id)
        assert run.status is RunStatus.INTERRUPTED
        assert run.output.startswith("first half of")  # what it had streamed, kept
        assert (await orch.get_session(cid)).state is SessionState.IDLE
        [stored] = await orch.history(1)
        assert isinstance(stored, RunInterrupted)
        assert stored.run_id == run_id
        assert await orch.interrupt_stale_runs() == []  # once only
    finally:
        await orch.close()
    shown = run_cli("--data-dir", str(data), "history", "--plain", home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "run interrupted" in shown.stdout
    assert "ended before it finished" in shown.stdout


async def test_a_hung_owner_s_run_is_interrupted_once_its_heartbeat_is_older_than_the_grace(
    tmp_path: Path, procs: list[subprocess.Popen[bytes]]
) -> None:
    data, gate = gated_data_dir(tmp_path)
    proc = start_owner(tmp_path, data, "run", heartbeat_s=0.1)
    procs.append(proc)
    read_until(proc, b"started ")
    cid, run_id = the_run(data)
    orch = await AgentOrchestrator.open(data)
    try:
        assert await orch.interrupt_stale_runs(grace_s=2) == []  # it beats: alive
        stop_between_writes(proc, data)  # alive, but silent
        found: list[RunInterrupted] = []

        async def interrupted() -> bool:
            found.extend(await orch.interrupt_stale_runs(grace_s=1))
            return bool(found)

        deadline = time.monotonic() + 20
        while not await interrupted():
            assert time.monotonic() < deadline, "never judged stale"
            await asyncio.sleep(0.1)
        assert "no heartbeat" in found[0].reason
        assert (await orch.get_session(cid)).state is SessionState.IDLE
    finally:
        await orch.close()
    # Woken up, the owner finds its run closed and flagged: it stops, and the
    # first close (interrupted) stays.
    os.kill(proc.pid, signal.SIGCONT)
    gate.touch()
    proc.communicate(timeout=20)
    assert query(data, "SELECT status FROM runs WHERE run_id = ?", (run_id,)) == [("interrupted",)]


# --- live stderr ------------------------------------------------------------------

STAND_IN_CLAUDE = """#!{python}
import json, os, sys, time
print(json.dumps({{"type": "system", "subtype": "init", "session_id": "s"}}), flush=True)
for i in range(3):
    print(f"retrying model request ({{i + 1}}/3)", file=sys.stderr, flush=True)
while not os.path.exists({gate!r}):
    time.sleep(0.02)
print(json.dumps({{"type": "assistant", "message": {{"id": "m", "content": [
    {{"type": "text", "text": "done"}}]}}}}), flush=True)
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False,
    "usage": {{"input_tokens": 5, "output_tokens": 2}}}}), flush=True)
"""


async def test_stderr_lines_are_stored_and_published_while_the_run_goes_on(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "go"
    cli = tmp_path / "claude"
    cli.write_text(STAND_IN_CLAUDE.format(python=sys.executable, gate=str(gate)))
    cli.chmod(0o755)
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(
        f'[agents.cc]\nrunner = "claude_code"\nbinary = "{cli}"\n', encoding="utf-8"
    )
    orch = await AgentOrchestrator.open(data, activity_interval_s=0.05)
    activity: list[RunActivity] = []
    orch.bus.add_listener(lambda e: activity.append(e) if isinstance(e, RunActivity) else None)
    try:
        [handle] = await orch.delegate(prompt="hello", agent_id="cc", cwd=str(tmp_path))

        def stored_tail() -> str:
            rows = query(data, "SELECT stderr_tail, status FROM runs")
            return str(rows[0][0] or "") if rows and rows[0][1] == "running" else ""

        # Read as another process would, while the CLI still waits for its gate.
        await until(lambda: "(3/3)" in stored_tail(), what="the stderr tail in the store")
        assert stored_tail().splitlines() == [f"retrying model request ({i}/3)" for i in (1, 2, 3)]
        # Stderr is not the reply: the run has still said nothing (its quiet counts on).
        assert query(data, "SELECT last_output_at FROM runs") == [(None,)]
        assert activity
        assert activity[-1].run_id == handle.run_id
        assert activity[-1].stderr_tail.endswith("(3/3)")
        gate.touch()
        run = await handle.wait()
    finally:
        await orch.close()
    assert run.status is RunStatus.COMPLETED
    assert "retrying model request (3/3)" in (run.stderr or "")  # the end-of-run tail stays
