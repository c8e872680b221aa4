"""``delegate_sessions`` ``stop``: a tool call stops a run, whichever process drives it.

The run belongs to a real second process (``run_owner.py``, or ``delegate run``);
the stop comes from this process's tools, or from ``delegate tool`` in a third.
The answer is the shape ``delegate runs stop --json`` prints; failures are the
tools' typed errors.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from gated import gated_data_dir, read_until, start_owner, start_run
from support import BASE_US, finished, query, run_cli

from core.models import RunStatus, SessionState
from core.orchestrator import AgentOrchestrator
from core.tools import call_tool

MINTED = "4b3e6f7a-1111-4222-8333-944455556666"
THREAD = "019d0000-0000-7000-8000-00000000a11a"


async def sessions_tool(orch: AgentOrchestrator, request: dict[str, Any]) -> dict[str, Any]:
    return await call_tool(orch, "delegate_sessions", request)


def error_code(answer: dict[str, Any]) -> str:
    assert answer["status"] == "error", answer
    assert set(answer["error"]) >= {"code", "message"}
    return str(answer["error"]["code"])


async def test_a_tool_call_stops_a_run_another_process_owns(tmp_path: Path) -> None:
    data, gate = gated_data_dir(tmp_path)
    # An owner that is never signalled (as an MCP server): only its cancel flag stops it.
    owner = start_owner(tmp_path, data, "mcp", 0.2)
    try:
        read_until(owner, b"started ")
        [(cid, run_id)] = query(data, "SELECT conversation_id, run_id FROM runs")
        orch = await AgentOrchestrator.open(data)
        try:
            started = time.monotonic()
            answer = await sessions_tool(orch, {"operation": "stop", "conversation_id": cid})
            assert answer == {
                "status": "ok",
                "run_id": run_id,
                "conversation_id": cid,
                "how": "stopped",
            }
            assert time.monotonic() - started < 10
            again = await sessions_tool(orch, {"operation": "stop", "run_id": run_id})
            assert error_code(again) == "not_running"
        finally:
            await orch.close()
        assert owner.wait(timeout=20) == 0  # stopped by its flag, not by a signal
    finally:
        owner.kill()
    assert not gate.exists()
    [(status, output)] = query(data, "SELECT status, output FROM runs")
    assert status == RunStatus.CANCELLED.value
    assert output.startswith("first half of")
    assert query(data, "SELECT state FROM sessions") == [(SessionState.IDLE.value,)]


def test_delegate_tool_stops_a_delegate_run_by_a_run_id_prefix(tmp_path: Path) -> None:
    data, gate = gated_data_dir(tmp_path)
    proc = start_run(tmp_path, data, "--agent", "gated", "explain the build")
    try:
        read_until(proc, b"first half of ")
        [(cid, run_id)] = query(data, "SELECT conversation_id, run_id FROM runs")
        request = json.dumps({"operation": "stop", "run_id": run_id[:8]})
        stop = run_cli("--data-dir", str(data), "tool", "delegate_sessions", request, home=tmp_path)
        assert stop.returncode == 0, stop.stderr
        answer = json.loads(stop.stdout)
        assert (answer["status"], answer["run_id"], answer["conversation_id"]) == (
            "ok",
            run_id,
            cid,
        )
        assert answer["how"] in ("stopped", "signalled")
        proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert not gate.exists()
    assert query(data, "SELECT status FROM runs") == [(RunStatus.CANCELLED.value,)]


async def test_a_run_of_this_process_is_stopped_by_the_id_its_launch_printed(
    orch: AgentOrchestrator,
) -> None:
    await orch.store.bulk.insert([finished(MINTED, BASE_US, agent_id="slow")])
    await orch.store.sessions.rekey(MINTED, THREAD)
    [handle] = await orch.delegate(
        prompt="a long answer with many many words to stream", conversation_id=MINTED
    )
    await anext(aiter(handle.stream()))
    answer = await sessions_tool(orch, {"operation": "stop", "conversation_id": MINTED[:8]})
    assert answer == {
        "status": "ok",
        "run_id": handle.run_id,
        "conversation_id": THREAD,
        "how": "cancelled",
    }
    assert (await orch.store.runs.get(handle.run_id)).status is RunStatus.CANCELLED


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        ({"operation": "stop", "conversation_id": "no-such-session"}, "unknown_conversation"),
        ({"operation": "stop", "run_id": "no-such-run"}, "unknown_run"),
        ({"operation": "stop", "conversation_id": "idle-one"}, "not_running"),
        ({"operation": "stop", "conversation_id": "--help"}, "unknown_conversation"),
        ({"operation": "stop", "conversation_id": "bad\x00id"}, "unknown_conversation"),
        ({"operation": "stop", "run_id": "-rf\n"}, "unknown_run"),
        ({"operation": "stop"}, "invalid_request"),
        ({"operation": "stop", "conversation_id": "idle-one", "run_id": "r"}, "invalid_request"),
        ({"operation": "stop", "conversation_id": "idle-one", "limit": 3}, "invalid_request"),
        ({"operation": "stop", "conversation_id": ""}, "invalid_request"),
        ({"operation": "stop", "run_id": 7}, "invalid_request"),
        (
            {"operation": "messages", "conversation_id": "idle-one", "run_id": "r"},
            "invalid_request",
        ),
    ],
)
async def test_a_stop_that_cannot_be_done_is_a_typed_error(
    orch: AgentOrchestrator, request_: dict[str, Any], code: str
) -> None:
    await orch.store.bulk.insert([finished("idle-one", BASE_US)])
    assert error_code(await sessions_tool(orch, request_)) == code


async def test_a_finished_run_named_by_its_id_is_not_running(orch: AgentOrchestrator) -> None:
    [handle] = await orch.delegate(prompt="hello", agent_id="echo")
    await handle.wait()
    answer = await sessions_tool(orch, {"operation": "stop", "run_id": handle.run_id})
    assert error_code(answer) == "not_running"


async def test_delegate_agent_points_a_stop_to_delegate_sessions(orch: AgentOrchestrator) -> None:
    await orch.store.bulk.insert([finished("idle-one", BASE_US)])
    for request in (
        {"operation": "stop", "conversation_id": "idle-one"},
        {"stop": True, "conversation_id": "idle-one"},
    ):
        answer = await call_tool(orch, "delegate_agent", request)
        assert error_code(answer) == "invalid_request"
        assert '"operation": "stop"' in answer["error"]["message"]
        assert "delegate_sessions" in answer["error"]["message"]
