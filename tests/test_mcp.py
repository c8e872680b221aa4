"""``delegate mcp`` through the MCP SDK's own stdio client.

Every test launches the real console script (``delegate --data-dir D mcp``) as
a subprocess and talks to it with ``mcp.Client`` over ``stdio_client``, the way
Claude Code or Codex would. Payloads are compared with what ``core.tools``
answers for the same request on the same data.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, TextContent
from support import DELEGATE, cli_env, run_cli, write_config

from core.config import DB_FILENAME
from core.models import AgentRequest, SessionsRequest
from core.orchestrator import AgentOrchestrator
from core.tools import call_tool

DEMO_SESSIONS = 20
SLEEPY = """
[agents.sleepy]
runner = "scripted"
delay = 0.15
persona = "sleepy"
"""


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20 demo sessions made once by ``delegate demo`` (plus a slow agent); copy before use."""
    home = tmp_path_factory.mktemp("mcp-demo")
    data = write_config(home / "data", SLEEPY)
    result = run_cli("--data-dir", str(data), "demo", "--sessions", str(DEMO_SESSIONS), home=home)
    assert result.returncode == 0, result.stderr
    return data


@pytest.fixture
def data(demo_dir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo_dir, tmp_path / "data"))


@asynccontextmanager
async def mcp_client(data_dir: Path, mode: str = "auto") -> AsyncIterator[Client]:
    """A client connected to a fresh ``delegate --data-dir data_dir mcp`` process."""
    params = StdioServerParameters(
        command=str(DELEGATE),
        args=["--data-dir", str(data_dir), "mcp"],
        env=cli_env(data_dir.parent),
        cwd=data_dir.parent,
    )
    errlog_path = data_dir.parent / "mcp-stderr.log"
    with errlog_path.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
            yield client
    stderr = errlog_path.read_text()
    assert "Traceback" not in stderr, stderr


def payload(result: CallToolResult) -> dict[str, Any]:
    """The tool's JSON: the text content, which the structured content must equal."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    body = json.loads(block.text)
    assert isinstance(body, dict)
    assert result.structured_content == body
    assert result.is_error == (body.get("status") == "error")
    return body


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return payload(await client.call_tool(name, arguments))


async def expect_error(client: Client, name: str, arguments: dict[str, Any], code: str) -> str:
    """Call a tool that must fail with ``code``; the seed's error shape, as isError."""
    result = await client.call_tool(name, arguments)
    assert result.is_error
    body = payload(result)
    assert set(body) == {"status", "error"}
    assert body["status"] == "error"
    assert set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code, body
    message = body["error"]["message"]
    assert isinstance(message, str)
    assert message
    return message


async def core_answer(data_dir: Path, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """What ``core.tools.call_tool`` answers in-process on the same data (read-only calls)."""
    orch = await AgentOrchestrator.open(data_dir)
    try:
        return await call_tool(orch, name, arguments)
    finally:
        await orch.close()


# --- tests -----------------------------------------------------------------


async def test_lists_the_two_tools_with_the_model_schemas(data: Path) -> None:
    # "legacy" is the initialize handshake today's Claude Code and Codex use.
    async with mcp_client(data, mode="legacy") as client:
        assert client.server_info is not None
        assert client.server_info.name == "delegate"
        assert "delegate_sessions" in (client.instructions or "")
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(tools) == {"delegate_sessions", "delegate_agent"}
    sessions, agent = tools["delegate_sessions"], tools["delegate_agent"]
    assert sessions.input_schema == SessionsRequest.model_json_schema()
    assert agent.input_schema == AgentRequest.model_json_schema()
    assert set(sessions.input_schema["properties"]) == {
        "operation",
        "conversation_id",
        "query",
        "cursor",
        "limit",
        "name",
        "force",
        "archived",
        "sort",
        "run_id",
    }
    assert sessions.input_schema["required"] == ["operation"]
    assert sessions.input_schema["additionalProperties"] is False
    assert {"prompt", "agent_id", "conversation_id", "batch", "cwd", "mode"} <= set(
        agent.input_schema["properties"]
    )
    # The descriptions teach the flow: list -> messages -> follow up -> dismiss; busy = retry.
    for word in ("list", "messages", "dismiss", "next_cursor", "conversation_id"):
        assert word in (sessions.description or "")
    for word in ("conversation_id", "run_id", "agent_busy", "retry", "detached"):
        assert word in (agent.description or "")
    # Compact returns: the role fields, in the schema and taught by the description.
    role_fields = ("agent_role", "group_id", "artifacts_session", "chain")
    assert set(role_fields) <= set(agent.input_schema["properties"])
    assert "group_id" in agent.input_schema["$defs"]["BatchItem"]["properties"]
    for word in (*role_fields, "INVALID_RETURN", "handoff_file", "next_role", "never its output"):
        assert word in (agent.description or "")


async def test_pages_sessions_and_previews_messages(data: Path) -> None:
    async with mcp_client(data) as client:
        first = await call(client, "delegate_sessions", {"operation": "list", "limit": 7})
        pages, cursor = [first], first["next_cursor"]
        while cursor is not None:
            page = await call(
                client, "delegate_sessions", {"operation": "list", "limit": 7, "cursor": cursor}
            )
            pages.append(page)
            cursor = page["next_cursor"]
        default_page = await call(client, "delegate_sessions", {"operation": "list"})

        newest = first["sessions"][0]["conversation_id"]
        preview = await call(
            client,
            "delegate_sessions",
            {"operation": "messages", "conversation_id": newest, "limit": 4},
        )
        older = await call(
            client,
            "delegate_sessions",
            {
                "operation": "messages",
                "conversation_id": newest,
                "limit": 4,
                "cursor": preview["next_cursor"],
            },
        )

    assert [len(p["sessions"]) for p in pages] == [7, 7, 6]
    sessions = [s for p in pages for s in p["sessions"]]
    assert len({s["conversation_id"] for s in sessions}) == DEMO_SESSIONS
    stamps = [s["last_interacted_at"] for s in sessions]
    assert stamps == sorted(stamps, reverse=True)
    assert len(default_page["sessions"]) == 3  # the seed's default page size

    # Exactly the payloads of core.tools on the same data.
    assert first == await core_answer(data, "delegate_sessions", {"operation": "list", "limit": 7})
    assert preview == await core_answer(
        data, "delegate_sessions", {"operation": "messages", "conversation_id": newest, "limit": 4}
    )

    assert set(preview) == {"messages", "next_cursor"}
    assert len(preview["messages"]) == len(older["messages"]) == 4
    seqs = [m["seq"] for m in preview["messages"] + older["messages"]]
    assert seqs == sorted(seqs, reverse=True)  # newest first, paging back
    assert seqs == list(range(seqs[0], seqs[0] - 8, -1))  # no gap, no overlap
    assert {m["conversation_id"] for m in preview["messages"]} == {newest}


def _roomy(session: dict[str, Any]) -> bool:
    context = session["context"]
    return bool(context["used_tokens"] < context["limit_tokens"] * 0.4)


async def test_follow_up_then_dismiss(data: Path) -> None:
    async with mcp_client(data) as client:
        listing = await call(client, "delegate_sessions", {"operation": "list", "limit": 20})
        # Not the newest (it moves to the top), and with room in its window: a turn that
        # crossed a context level would hand the session off and go on elsewhere.
        target = next(s for s in listing["sessions"][1:] if _roomy(s))
        conversation_id = target["conversation_id"]

        first = await call(
            client,
            "delegate_agent",
            {"conversation_id": conversation_id, "prompt": "now add the tests"},
        )
        second = await call(
            client, "delegate_agent", {"conversation_id": conversation_id, "prompt": "and docs"}
        )
        preview = await call(
            client,
            "delegate_sessions",
            {"operation": "messages", "conversation_id": conversation_id, "limit": 2},
        )
        after = await call(client, "delegate_sessions", {"operation": "list", "limit": 1})

        dismissed = await call(
            client,
            "delegate_sessions",
            {"operation": "dismiss", "conversation_id": conversation_id},
        )
        remaining = await call(client, "delegate_sessions", {"operation": "list", "limit": 100})
        archive = await call(
            client, "delegate_sessions", {"operation": "list", "archived": True, "limit": 100}
        )
        # Archived, not gone: its messages are still there until it is purged.
        kept = await call(
            client,
            "delegate_sessions",
            {"operation": "messages", "conversation_id": conversation_id, "limit": 1},
        )
        purged = await call(
            client,
            "delegate_sessions",
            {"operation": "purge", "conversation_id": conversation_id},
        )
        await expect_error(
            client,
            "delegate_sessions",
            {"operation": "messages", "conversation_id": conversation_id},
            "unknown_conversation",
        )
        await expect_error(
            client,
            "delegate_agent",
            {"conversation_id": conversation_id, "prompt": "still there?"},
            "unknown_conversation",
        )

    for run in (first, second):
        assert run["status"] == "ok"
        assert run["kind"] == "follow_up"
        assert run["conversation_id"] == conversation_id
        assert run["agent_id"] == target["agent_id"]  # defaults to the session's agent
        assert run["run_status"] == "completed"
        assert run["output"]
        assert set(run["usage"]) == {"input_tokens", "output_tokens"}
    assert first["run_id"] != second["run_id"]  # a fresh run id per call

    # The follow-up landed in that conversation, newest first, and moved it to the top.
    newest_two = preview["messages"]
    assert [m["role"] for m in newest_two] == ["assistant", "user"]
    assert newest_two[1]["content"] == "and docs"
    assert newest_two[0]["run_id"] == newest_two[1]["run_id"] == second["run_id"]
    assert after["sessions"][0]["conversation_id"] == conversation_id
    assert after["sessions"][0]["metrics"]["turns"] == target["metrics"]["turns"] + 2

    assert dismissed == {"status": "ok"}
    ids = {s["conversation_id"] for s in remaining["sessions"]}
    assert conversation_id not in ids
    assert len(ids) == DEMO_SESSIONS - 1
    assert [s["conversation_id"] for s in archive["sessions"]] == [conversation_id]
    assert kept["messages"]
    assert purged == {"status": "ok"}


async def test_errors_come_back_as_is_error_results(data: Path) -> None:
    async with mcp_client(data) as client:
        listing = await call(client, "delegate_sessions", {"operation": "list", "limit": 2})
        one, other = (s["conversation_id"] for s in listing["sessions"])
        other_cursor = (
            await call(
                client,
                "delegate_sessions",
                {"operation": "messages", "conversation_id": other, "limit": 1},
            )
        )["next_cursor"]

        await expect_error(
            client,
            "delegate_sessions",
            {"operation": "messages", "conversation_id": "no-such-id"},
            "unknown_conversation",
        )
        await expect_error(
            client,
            "delegate_sessions",
            {"operation": "dismiss", "conversation_id": "no-such-id"},
            "unknown_conversation",
        )
        missing = await expect_error(
            client, "delegate_sessions", {"operation": "messages"}, "invalid_request"
        )
        limit = await expect_error(
            client, "delegate_sessions", {"operation": "list", "limit": 0}, "invalid_request"
        )
        unknown_field = await expect_error(
            client, "delegate_sessions", {"operation": "list", "page": 2}, "invalid_request"
        )
        exclusive = await expect_error(
            client,
            "delegate_agent",
            {"conversation_id": one, "batch": [{"prompt": "x"}]},
            "invalid_request",
        )
        no_prompt = await expect_error(
            client, "delegate_agent", {"conversation_id": one}, "invalid_request"
        )
        for cursor in ("", "not-a-cursor", other_cursor):
            await expect_error(
                client,
                "delegate_sessions",
                {"operation": "messages", "conversation_id": one, "cursor": cursor},
                "invalid_cursor",
            )
        await expect_error(
            client,
            "delegate_sessions",
            {"operation": "list", "cursor": other_cursor},
            "invalid_cursor",
        )
        await expect_error(
            client, "delegate_agent", {"prompt": "hi", "agent_id": "nobody"}, "unknown_agent"
        )
        await expect_error(client, "delegate_nothing", {}, "invalid_request")
        # The server is still serving after all that.
        assert len((await call(client, "delegate_sessions", {"operation": "list"}))["sessions"])

    assert "conversation_id" in missing
    assert "limit" in limit
    assert "page" in unknown_field
    assert "mutually exclusive" in exclusive
    assert "prompt" in no_prompt


async def test_agent_busy_means_wait_and_retry(data: Path) -> None:
    async with mcp_client(data) as client:
        listing = await call(client, "delegate_sessions", {"operation": "list", "limit": 1})
        conversation_id = listing["sessions"][0]["conversation_id"]
        results: dict[str, dict[str, Any]] = {}

        async def slow_follow_up() -> None:
            results["slow"] = await call(
                client,
                "delegate_agent",
                {"conversation_id": conversation_id, "agent_id": "sleepy", "prompt": "think hard"},
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow_follow_up)
            with anyio.fail_after(10):  # wait until the run is in flight
                while True:
                    page = await call(client, "delegate_sessions", {"operation": "list"})
                    if page["sessions"][0]["state"] == "running":
                        break
                    await anyio.sleep(0.02)
            message = await expect_error(
                client,
                "delegate_agent",
                {"conversation_id": conversation_id, "prompt": "are you done?"},
                "agent_busy",
            )
        retried = await call(
            client,
            "delegate_agent",
            {"conversation_id": conversation_id, "prompt": "are you done?"},
        )

    assert message == "delegate still running"
    assert results["slow"]["run_status"] == "completed"
    assert retried["status"] == "ok"
    assert retried["conversation_id"] == conversation_id
    assert retried["run_id"] != results["slow"]["run_id"]


async def test_a_broken_config_is_reported_on_every_call(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / "config.toml").write_text("default_agent = 3\n", encoding="utf-8")
    async with mcp_client(data) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        message = await expect_error(
            client, "delegate_sessions", {"operation": "list"}, "invalid_config"
        )
    assert names == {"delegate_sessions", "delegate_agent"}
    assert "config.toml" in message


async def test_a_store_that_cannot_open_is_one_typed_line_on_every_call(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / DB_FILENAME).write_bytes(b"this is not a database" * 100)
    async with mcp_client(data) as client:
        result = await client.call_tool("delegate_sessions", {"operation": "list"})
    body = payload(result)
    assert result.is_error
    assert body["error"]["code"] in {"store_error", "internal_error"}
    assert "\n" not in body["error"]["message"]


async def test_ids_may_be_unique_prefixes(data: Path) -> None:
    async with mcp_client(data) as client:
        listing = await call(client, "delegate_sessions", {"operation": "list", "limit": 1})
        cid = listing["sessions"][0]["conversation_id"]
        page = await call(
            client, "delegate_sessions", {"operation": "messages", "conversation_id": cid[:12]}
        )
        assert page["messages"]
        assert {m["conversation_id"] for m in page["messages"]} == {cid}


@pytest.mark.parametrize("stop", ["close stdin", "SIGTERM"])
def test_the_process_exits_promptly(data: Path, stop: str) -> None:
    """A client closing stdin, or a supervisor's SIGTERM, ends the server at once, exit 0."""
    process = subprocess.Popen(
        [str(DELEGATE), "--data-dir", str(data), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(data.parent),
        cwd=data.parent,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    process.stdin.write((json.dumps(initialize) + "\n").encode())
    process.stdin.flush()
    reply = json.loads(process.stdout.readline())  # serving: the store is open
    assert reply["result"]["serverInfo"]["name"] == "delegate"

    if stop == "SIGTERM":
        process.send_signal(signal.SIGTERM)
    else:
        process.stdin.close()
    try:
        # A bound for a hang, not a timing: a server that waits for anything fails here.
        returncode = process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    assert process.stderr is not None
    stderr = process.stderr.read().decode()
    assert returncode == 0, stderr
    assert process.stdout.read() == b""  # nothing but protocol on stdout
    assert "Traceback" not in stderr
    for pipe in (process.stdin, process.stdout, process.stderr):
        pipe.close()


async def test_capsule_gaps_over_mcp_answer_as_the_tool_does(data: Path) -> None:
    async with mcp_client(data) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "capsule_gaps" in (tools["delegate_sessions"].description or "")
        operations = tools["delegate_sessions"].input_schema["properties"]["operation"]["enum"]
        assert "capsule_gaps" in operations
        answer = await call(client, "delegate_sessions", {"operation": "capsule_gaps"})
        await expect_error(
            client,
            "delegate_sessions",
            {"operation": "capsule_gaps", "conversation_id": "no-such-session"},
            "unknown_conversation",
        )
    assert answer == await core_answer(data, "delegate_sessions", {"operation": "capsule_gaps"})
    assert answer == {"gaps": []}
