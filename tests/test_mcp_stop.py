"""``delegate mcp``: ``delegate_sessions`` ``stop`` cancels a run another process owns.

The run belongs to a real second process (``run_owner.py``); the stop comes from
an MCP client talking to the real ``delegate mcp`` console script, as Claude Code
or Codex would call it.
"""

from __future__ import annotations

from pathlib import Path

from gated import gated_data_dir, read_until, start_owner
from support import query
from test_mcp import call, expect_error, mcp_client

from core.models import RunStatus


async def test_an_mcp_call_stops_a_run_another_process_owns(tmp_path: Path) -> None:
    data, gate = gated_data_dir(tmp_path)
    owner = start_owner(tmp_path, data, "run", 0.2)
    try:
        read_until(owner, b"started ")
        [(cid, run_id)] = query(data, "SELECT conversation_id, run_id FROM runs")
        async with mcp_client(data) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            sessions = tools["delegate_sessions"]
            assert "run_id" in sessions.input_schema["properties"]
            assert "stop" in (sessions.description or "")

            stopped = await call(
                client, "delegate_sessions", {"operation": "stop", "run_id": run_id}
            )
            assert stopped == {
                "status": "ok",
                "run_id": run_id,
                "conversation_id": cid,
                "how": "stopped",
            }
            args = {"operation": "stop", "conversation_id": cid}
            await expect_error(client, "delegate_sessions", args, "not_running")
            args = {"operation": "stop", "conversation_id": "no-such-session"}
            await expect_error(client, "delegate_sessions", args, "unknown_conversation")
            args = {"operation": "stop", "run_id": "no-such-run"}
            await expect_error(client, "delegate_sessions", args, "unknown_run")
            await expect_error(
                client, "delegate_sessions", {"operation": "stop"}, "invalid_request"
            )
        assert owner.wait(timeout=20) == 0  # its cancel flag stopped it, not a signal
    finally:
        owner.kill()
    assert not gate.exists()
    assert query(data, "SELECT status FROM runs") == [(RunStatus.CANCELLED.value,)]
