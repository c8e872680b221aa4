"""A role launch through ``delegate mcp``, as Claude Code or Codex would call it: the
result the primary reads is the compact return, never the delegate's text."""

from __future__ import annotations

import json
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import TextContent
from support import DELEGATE, cli_env
from tool_agents import VERBOSE, make_repo, role_data_dir

from core.returns.model import INVALID_RETURN


async def test_a_role_batch_through_the_mcp_server_answers_compact_returns(
    tmp_path: Path,
) -> None:
    data, repo = role_data_dir(tmp_path), make_repo(tmp_path)
    params = StdioServerParameters(
        command=str(DELEGATE),
        args=["--data-dir", str(data), "mcp"],
        env=cli_env(tmp_path),
        cwd=tmp_path,
    )
    arguments = {
        "agent_role": "developer",
        "cwd": str(repo),
        "batch": [
            {"prompt": "Build AUTH.", "group_id": "AUTH", "agent_id": "dev"},
            {"prompt": "Build PAY.", "group_id": "PAY", "agent_id": "verbose-dev"},
        ],
    }
    with (tmp_path / "mcp-stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            result = await client.call_tool("delegate_agent", arguments)

    [block] = result.content
    assert isinstance(block, TextContent)
    body = json.loads(block.text)
    assert result.structured_content == body
    assert not result.is_error
    good, verbose = body["runs"]
    assert (good["group_id"], good["return"]["status"], good["next_role"]) == (
        "AUTH",
        "READY_FOR_QA",
        "qa_expert",
    )
    assert good[
        "handoff_file"
    ] == ".delegate/artifacts/{}/AUTH/handoffs/handoff_developer.json".format(
        good["artifacts_session"]
    )
    assert (repo / good["handoff_file"]).is_file()
    assert (verbose["return"]["status"], verbose["next_role"]) == (INVALID_RETURN, None)
    # The verbose report stayed in its session: the primary got three lines about it.
    assert "Implementation Complete" not in block.text
    assert VERBOSE[:40] not in block.text
    assert "Traceback" not in (tmp_path / "mcp-stderr.log").read_text()
