"""Stop any run of this host, not only this process's own."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from gated import gated_data_dir, read_until, start_run
from support import BASE_US, finished, query, run_cli

from core.errors import NotRunning, UnknownConversation
from core.models import RunStatus, SessionState
from core.orchestrator import AgentOrchestrator


def test_sessions_stop_ends_a_run_another_process_drives(tmp_path: Path) -> None:
    data, gate = gated_data_dir(tmp_path)
    proc = start_run(tmp_path, data, "--agent", "gated", "explain the build")
    try:
        read_until(proc, b"first half of ")
        [(cid, run_id)] = query(data, "SELECT conversation_id, run_id FROM runs")
        started = time.monotonic()
        stop = run_cli("--data-dir", str(data), "sessions", "stop", cid, home=tmp_path)
        assert stop.returncode == 0, stop.stderr
        assert f"run {run_id}" in stop.stdout
        assert "stopped" in stop.stdout
        _, err = proc.communicate(timeout=20)
        assert time.monotonic() - started < 10
    finally:
        proc.kill()
    assert not gate.exists()
    # Its owner read the cancel flag on its next heartbeat (no signal needed)
    # and stored its run cancelled; a cancelled run is not a success.
    assert proc.returncode == 1
    assert b"cancelled in" in err
    [(status, output)] = query(data, "SELECT status, output FROM runs")
    assert status == "cancelled"
    assert output.startswith("first half of")
    assert query(data, "SELECT state FROM sessions") == [("idle",)]


def test_sessions_stop_of_an_idle_session_or_an_unknown_id_is_a_typed_error(
    tmp_path: Path,
) -> None:
    data, gate = gated_data_dir(tmp_path)
    gate.touch()
    done = run_cli("--data-dir", str(data), "run", "--agent", "gated", "quick", home=tmp_path)
    assert done.returncode == 0, done.stderr
    [(cid,)] = query(data, "SELECT conversation_id FROM sessions")
    idle = run_cli("--data-dir", str(data), "sessions", "stop", cid, "--json", home=tmp_path)
    assert idle.returncode == 1
    assert json.loads(idle.stdout)["error"]["code"] == "not_running"
    unknown = run_cli("--data-dir", str(data), "sessions", "stop", "nope", home=tmp_path)
    assert unknown.returncode == 1
    assert "unknown_conversation" in unknown.stderr
    assert "Traceback" not in idle.stderr + unknown.stderr


async def test_stop_run_cancels_a_run_of_this_process(orch: AgentOrchestrator) -> None:
    await orch.store.bulk.insert([finished("c1", BASE_US, agent_id="slow")])
    [handle] = await orch.delegate(
        prompt="a long answer with many many words to stream", conversation_id="c1"
    )
    await anext(aiter(handle.stream()))
    outcome = await orch.stop_run("c1")
    assert (outcome.how, outcome.run_id) == ("cancelled", handle.run_id)
    assert (await orch.store.runs.get(handle.run_id)).status is RunStatus.CANCELLED
    assert (await orch.get_session("c1")).state is SessionState.IDLE
    with pytest.raises(NotRunning):
        await orch.stop_run("c1")
    with pytest.raises(UnknownConversation):
        await orch.stop_run("no-such-id")
