"""The JSON tools of seed 001 section 2: validation, error codes and exact shapes."""

from __future__ import annotations

import asyncio
import base64
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support import BASE_US, finished, query, snapshot

from core import cursors
from core.models import Role
from core.orchestrator import AgentOrchestrator
from core.store import FinishedSession, NewMessage
from core.tools import call_tool, delegate_agent, delegate_sessions

SEED_SESSION_FIELDS = {"conversation_id", "agent_id", "mode", "cwd", "last_interacted_at"}


def assert_error(response: dict[str, Any], code: str, *mentions: str) -> str:
    """The seed's error shape, exactly, with ``code``; the message names ``mentions``."""
    assert response == {
        "status": "error",
        "error": {"code": code, "message": response["error"]["message"]},
    }
    message = response["error"]["message"]
    assert isinstance(message, str)
    assert message
    for word in mentions:
        assert word in message, f"{word!r} not named in {message!r}"
    return message


async def seed(orch: AgentOrchestrator, *sessions: FinishedSession) -> None:
    await orch.store.bulk.insert(list(sessions))


# --- request validation ------------------------------------------------------

AGENT_INVALID = [
    pytest.param(
        {"conversation_id": "c1", "batch": [{"prompt": "a"}]},
        ("conversation_id", "batch", "mutually exclusive"),
        id="conversation-and-batch",
    ),
    pytest.param(
        {"conversation_id": "c1", "prompt": "x", "batch": [{"prompt": "a"}]},
        ("conversation_id", "batch", "mutually exclusive"),
        id="conversation-and-batch-with-prompt",
    ),
    pytest.param({}, ("prompt",), id="empty-request"),
    pytest.param({"agent_id": "echo"}, ("prompt",), id="prompt-missing"),
    pytest.param({"conversation_id": "c1"}, ("prompt",), id="follow-up-without-prompt"),
    pytest.param({"prompt": ""}, ("prompt",), id="empty-prompt"),
    pytest.param({"conversation_id": "c1", "prompt": ""}, ("prompt",), id="empty-follow-up"),
    pytest.param({"prompt": "x", "bogus": 1}, ("bogus",), id="unknown-field"),
    pytest.param({"prompt": 123}, ("prompt",), id="prompt-not-text"),
    pytest.param({"prompt": ["a"]}, ("prompt",), id="prompt-list"),
    pytest.param({"prompt": "x", "agent_id": 5}, ("agent_id",), id="agent-not-text"),
    pytest.param({"prompt": "x", "conversation_id": ""}, ("conversation_id",), id="empty-id"),
    pytest.param({"prompt": "x", "conversation_id": 7}, ("conversation_id",), id="id-not-text"),
    pytest.param({"prompt": "x", "mode": "sideways"}, ("mode",), id="bad-mode"),
    pytest.param({"prompt": "x", "batch": [{"prompt": "a"}]}, ("prompt", "batch"), id="both"),
    pytest.param({"batch": []}, ("batch",), id="empty-batch"),
    pytest.param({"batch": "do it"}, ("batch",), id="batch-not-list"),
    pytest.param({"batch": [{"prompt": ""}]}, ("batch.0.prompt",), id="empty-batch-prompt"),
    pytest.param({"batch": [{"prompt": "a", "x": 1}]}, ("batch.0.x",), id="batch-unknown"),
    pytest.param(
        {"conversation_id": "c1", "prompt": "x", "cwd": "/tmp"}, ("cwd",), id="follow-up-cwd"
    ),
    pytest.param({"prompt": "x", "group_id": "A"}, ("agent_role",), id="group-without-role"),
    pytest.param(
        {"conversation_id": "c1", "prompt": "x", "agent_role": "developer"},
        ("agent_role", "launches"),
        id="role-on-a-follow-up",
    ),
    pytest.param(
        {"agent_role": "qa", "batch": [{"prompt": "a", "group_id": "A"}, {"prompt": "b"}]},
        ("group_id", "every batch item"),
        id="batch-item-without-group",
    ),
    pytest.param(
        {"prompt": "x", "agent_role": "qa", "group_id": "A", "chain": "maybe"},
        ("chain",),
        id="chain-not-boolean",
    ),
]


@pytest.mark.parametrize(("request_", "mentions"), AGENT_INVALID)
async def test_delegate_agent_rejects_invalid_requests_and_writes_nothing(
    orch: AgentOrchestrator, data_dir: Path, request_: dict[str, Any], mentions: tuple[str, ...]
) -> None:
    await seed(orch, finished("c1", BASE_US))
    before = snapshot(data_dir)
    response = await delegate_agent(orch, json.dumps(request_))
    assert_error(response, "invalid_request", *mentions)
    assert snapshot(data_dir) == before
    assert orch.running() == []


SESSIONS_INVALID = [
    pytest.param({}, ("operation",), id="operation-missing"),
    pytest.param({"operation": "purge"}, ("operation",), id="unknown-operation"),
    pytest.param({"operation": 1}, ("operation",), id="operation-not-text"),
    pytest.param({"operation": "list", "limit": 0}, ("limit",), id="limit-0"),
    pytest.param({"operation": "list", "limit": 101}, ("limit",), id="limit-101"),
    pytest.param({"operation": "list", "limit": -3}, ("limit",), id="limit-negative"),
    pytest.param({"operation": "list", "limit": "many"}, ("limit",), id="limit-text"),
    pytest.param({"operation": "list", "limit": 2.5}, ("limit",), id="limit-fraction"),
    pytest.param({"operation": "list", "limit": [3]}, ("limit",), id="limit-list"),
    pytest.param({"operation": "list", "cursor": 5}, ("cursor",), id="cursor-not-text"),
    pytest.param({"operation": "list", "bogus": True}, ("bogus",), id="unknown-field"),
    pytest.param({"operation": "messages"}, ("conversation_id",), id="messages-without-id"),
    pytest.param({"operation": "dismiss"}, ("conversation_id",), id="dismiss-without-id"),
    pytest.param(
        {"operation": "messages", "conversation_id": ""}, ("conversation_id",), id="empty-id"
    ),
    pytest.param(
        {"operation": "messages", "conversation_id": "c1", "limit": 101},
        ("limit",),
        id="messages-limit-101",
    ),
    pytest.param(
        {"operation": "dismiss", "conversation_id": "c1", "limit": 3},
        ("limit", "dismiss"),
        id="dismiss-with-limit",
    ),
    pytest.param({"operation": "restore"}, ("conversation_id",), id="restore-without-id"),
    pytest.param({"operation": "purge"}, ("conversation_id",), id="purge-without-id"),
    pytest.param(
        {"operation": "dismiss", "conversation_id": "c1", "name": "x"},
        ("name", "rename"),
        id="name-without-rename",
    ),
    pytest.param(
        {"operation": "dismiss", "conversation_id": "c1", "force": True},
        ("force", "purge"),
        id="force-without-purge",
    ),
    pytest.param(
        {"operation": "messages", "conversation_id": "c1", "archived": True},
        ("archived", "list"),
        id="archived-without-list",
    ),
    pytest.param({"operation": "list", "sort": "size"}, ("sort",), id="sort-unknown"),
    pytest.param(
        {"operation": "rename", "conversation_id": "c1", "name": "two\nlines"},
        ("name", "one line"),
        id="name-two-lines",
    ),
    pytest.param(
        {"operation": "rename", "conversation_id": "c1", "name": "x" * 201},
        ("name", "200"),
        id="name-too-long",
    ),
]


@pytest.mark.parametrize(("request_", "mentions"), SESSIONS_INVALID)
async def test_delegate_sessions_rejects_invalid_requests_and_writes_nothing(
    orch: AgentOrchestrator, data_dir: Path, request_: dict[str, Any], mentions: tuple[str, ...]
) -> None:
    await seed(orch, finished("c1", BASE_US))
    before = snapshot(data_dir)
    response = await delegate_sessions(orch, json.dumps(request_))
    assert_error(response, "invalid_request", *mentions)
    assert snapshot(data_dir) == before


@pytest.mark.parametrize("limit", [1, 100])
async def test_limit_bounds_are_inclusive(orch: AgentOrchestrator, limit: int) -> None:
    await seed(orch, *(finished(f"c{i:03}", BASE_US + i) for i in range(101)))
    page = await delegate_sessions(orch, {"operation": "list", "limit": limit})
    assert len(page["sessions"]) == limit
    messages = await delegate_sessions(
        orch, {"operation": "messages", "conversation_id": "c000", "limit": limit}
    )
    assert len(messages["messages"]) == min(limit, 2)


@pytest.mark.parametrize(
    ("raw", "mentions"),
    [
        pytest.param("{not json", ("not valid JSON",), id="broken"),
        pytest.param("", ("not valid JSON",), id="empty"),
        pytest.param('{"operation": "list",}', ("not valid JSON",), id="trailing-comma"),
        pytest.param("[1, 2]", ("JSON object",), id="array"),
        pytest.param('"list"', ("JSON object",), id="string"),
        pytest.param(b"\xff\xfe{", ("not valid JSON",), id="bad-encoding"),
        pytest.param("[" * 100_000, ("not valid JSON",), id="absurd-nesting"),
    ],
)
@pytest.mark.parametrize("tool", ["delegate_sessions", "delegate_agent"])
async def test_invalid_json_is_an_invalid_request(
    orch: AgentOrchestrator, data_dir: Path, tool: str, raw: str | bytes, mentions: tuple[str]
) -> None:
    before = snapshot(data_dir)
    assert_error(await call_tool(orch, tool, raw), "invalid_request", *mentions)
    assert snapshot(data_dir) == before


async def test_unknown_tool_name_is_an_invalid_request(orch: AgentOrchestrator) -> None:
    response = await call_tool(orch, "delegate_everything", "{}")
    assert_error(response, "invalid_request", "delegate_everything")


# --- unknown ids and refused requests ---------------------------------------


@pytest.mark.parametrize(
    ("tool", "request_"),
    [
        ("delegate_sessions", {"operation": "messages", "conversation_id": "nope"}),
        ("delegate_sessions", {"operation": "dismiss", "conversation_id": "nope"}),
        ("delegate_agent", {"conversation_id": "nope", "prompt": "hello again"}),
        ("delegate_agent", {"conversation_id": "nope", "prompt": "hi", "agent_id": "echo"}),
    ],
)
async def test_unknown_conversation(
    orch: AgentOrchestrator, data_dir: Path, tool: str, request_: dict[str, Any]
) -> None:
    await seed(orch, finished("c1", BASE_US))
    before = snapshot(data_dir)
    assert_error(await call_tool(orch, tool, request_), "unknown_conversation", "nope")
    assert snapshot(data_dir) == before


async def test_unknown_agent_starts_nothing(orch: AgentOrchestrator, data_dir: Path) -> None:
    before = snapshot(data_dir)
    response = await delegate_agent(orch, {"prompt": "hi", "agent_id": "nobody"})
    assert_error(response, "unknown_agent", "nobody", "echo")
    batch = {"batch": [{"prompt": "ok"}, {"prompt": "bad", "agent_id": "nobody"}]}
    assert_error(await delegate_agent(orch, batch), "unknown_agent", "nobody")
    assert snapshot(data_dir) == before
    assert orch.running() == []


async def test_launch_in_missing_cwd_starts_nothing(
    orch: AgentOrchestrator, data_dir: Path, tmp_path: Path
) -> None:
    before = snapshot(data_dir)
    missing = str(tmp_path / "missing")
    assert_error(await delegate_agent(orch, {"prompt": "hi", "cwd": missing}), "cwd_missing")
    assert snapshot(data_dir) == before


async def test_agent_busy_payload_is_exact_and_writes_nothing(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    await seed(orch, finished("c1", BASE_US, agent_id="slow"))
    [handle] = await orch.delegate(prompt="take your time", conversation_id="c1")
    await anext(aiter(handle.stream()))  # started: its history row is written
    before = snapshot(data_dir)
    response = await delegate_agent(orch, {"conversation_id": "c1", "prompt": "are you done?"})
    assert response == {
        "status": "error",
        "error": {"code": "agent_busy", "message": "delegate still running"},
    }
    assert snapshot(data_dir) == before
    await handle.wait()
    again = await delegate_agent(orch, {"conversation_id": "c1", "prompt": "now?"})
    assert again["status"] == "ok"


async def test_dismiss_refused_while_running_writes_nothing(
    orch: AgentOrchestrator, data_dir: Path
) -> None:
    await seed(orch, finished("c1", BASE_US, agent_id="slow"))
    [handle] = await orch.delegate(prompt="busy", conversation_id="c1")
    await anext(aiter(handle.stream()))  # started: its history row is written
    before = snapshot(data_dir)
    response = await delegate_sessions(orch, {"operation": "dismiss", "conversation_id": "c1"})
    assert_error(response, "dismiss_refused", "c1")
    assert snapshot(data_dir) == before
    await handle.wait()
    assert await delegate_sessions(orch, {"operation": "dismiss", "conversation_id": "c1"}) == {
        "status": "ok"
    }


# --- cursors -------------------------------------------------------------------


def _forged(payload: object) -> str:
    raw = json.dumps(payload).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


async def _two_conversations(orch: AgentOrchestrator) -> tuple[str, str, str]:
    """Seed two 12-message conversations; return a session cursor and a cursor of each."""
    await seed(
        orch,
        *(finished(f"c{i}", BASE_US + i, messages=12) for i in range(1, 6)),
    )
    page = await delegate_sessions(orch, {"operation": "list", "limit": 2})
    c1 = await delegate_sessions(
        orch, {"operation": "messages", "conversation_id": "c1", "limit": 3}
    )
    c2 = await delegate_sessions(
        orch, {"operation": "messages", "conversation_id": "c2", "limit": 3}
    )
    return page["next_cursor"], c1["next_cursor"], c2["next_cursor"]


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage",
        "!!!not base64!!!",
        "é",
        "x" * 5000,
        _forged({"v": 1, "k": "s"}),
        _forged({"v": 2, "k": "s", "t": 1, "id": "c1"}),
        _forged({"v": 1, "k": "s", "t": "1", "id": "c1"}),
        _forged({"v": 1, "k": "s", "t": 1.5, "id": "c1"}),
        _forged({"v": 1, "k": "s", "t": 2**64, "id": "c1"}),
        _forged({"v": 1, "k": "s", "t": -(2**70), "id": "c1"}),
        _forged({"v": 1, "k": "s", "t": 1, "id": None}),
        _forged([1, 2, 3]),
        _forged("s"),
        base64.urlsafe_b64encode(b"[" * 100_000).decode(),
        base64.urlsafe_b64encode(b"\xff\xfe\xfd").decode(),
    ],
    ids=lambda cursor: cursor[:24],
)
async def test_list_rejects_bad_cursors(orch: AgentOrchestrator, cursor: str) -> None:
    await seed(orch, finished("c1", BASE_US))
    response = await delegate_sessions(orch, {"operation": "list", "cursor": cursor})
    assert_error(response, "invalid_cursor")


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage",
        _forged({"v": 1, "k": "m", "c": "c1", "s": 2**63}),
        _forged({"v": 1, "k": "m", "c": "c1", "s": "4"}),
        _forged({"v": 1, "k": "m", "c": "c1"}),
        _forged({"v": 1, "k": "m", "c": 1, "s": 4}),
        base64.urlsafe_b64encode(b"{" * 100_000).decode(),
    ],
    ids=lambda cursor: cursor[:24],
)
async def test_messages_rejects_bad_cursors(orch: AgentOrchestrator, cursor: str) -> None:
    await seed(orch, finished("c1", BASE_US, messages=5))
    response = await delegate_sessions(
        orch, {"operation": "messages", "conversation_id": "c1", "cursor": cursor}
    )
    assert_error(response, "invalid_cursor")


async def test_cursors_only_work_where_they_were_minted(orch: AgentOrchestrator) -> None:
    session_cursor, c1_cursor, c2_cursor = await _two_conversations(orch)
    assert session_cursor
    assert c1_cursor
    assert c2_cursor

    def messages(cid: str, cursor: str) -> dict[str, Any]:
        return {"operation": "messages", "conversation_id": cid, "cursor": cursor}

    # A message cursor of another conversation.
    assert_error(await delegate_sessions(orch, messages("c1", c2_cursor)), "invalid_cursor")
    # A session cursor passed as a message cursor, and the other way round.
    assert_error(await delegate_sessions(orch, messages("c1", session_cursor)), "invalid_cursor")
    listing = {"operation": "list", "cursor": c1_cursor}
    assert_error(await delegate_sessions(orch, listing), "invalid_cursor")
    # Each cursor still works where it belongs.
    ok = await delegate_sessions(orch, messages("c1", c1_cursor))
    assert [m["seq"] for m in ok["messages"]] == [8, 7, 6, 5, 4, 3, 2, 1, 0][: len(ok["messages"])]
    ok_list = await delegate_sessions(orch, {"operation": "list", "cursor": session_cursor})
    assert [s["conversation_id"] for s in ok_list["sessions"]] == ["c3", "c2", "c1"]


async def test_message_cursor_for_an_unknown_conversation(orch: AgentOrchestrator) -> None:
    cursor = cursors.encode_message_cursor(cursors.MessageCursor("ghost", 5))
    response = await delegate_sessions(
        orch, {"operation": "messages", "conversation_id": "ghost", "cursor": cursor}
    )
    assert_error(response, "unknown_conversation", "ghost")


# --- response shapes -----------------------------------------------------------


async def test_list_shape(orch: AgentOrchestrator) -> None:
    await seed(orch, *(finished(f"c{i}", BASE_US + i) for i in range(4)))
    first = await delegate_sessions(orch, '{"operation": "list"}')
    assert set(first) == {"sessions", "next_cursor"}
    assert len(first["sessions"]) == 3  # the seed's default page
    assert isinstance(first["next_cursor"], str)
    for entry in first["sessions"]:
        assert set(entry) >= SEED_SESSION_FIELDS
        assert {"turns", "messages", "tokens", "bytes"} <= set(entry["metrics"])
    top = first["sessions"][0]
    assert top["conversation_id"] == "c3"
    assert top["agent_id"] == "echo"
    assert top["mode"] == "standard"
    assert top["cwd"] == "/tmp/project"
    assert top["last_interacted_at"].startswith("2023-11-14T22:13:20")
    assert top["metrics"] == {
        "turns": 1,
        "messages": 2,
        "tokens": 8,
        "bytes": len("message 0 of c3") * 2,
    }
    json.dumps(first)  # JSON-ready as returned
    last = await delegate_sessions(
        orch, {"operation": "list", "cursor": first["next_cursor"], "limit": 3}
    )
    assert set(last) == {"sessions", "next_cursor"}
    assert [s["conversation_id"] for s in last["sessions"]] == ["c0"]
    assert last["next_cursor"] is None


async def test_messages_shape_with_tool_metadata(orch: AgentOrchestrator) -> None:
    response = await delegate_agent(orch, {"prompt": "build it", "agent_id": "echo"})
    cid = response["conversation_id"]
    await orch.store.messages.append(
        cid,
        [
            NewMessage(
                "tool-1",
                Role.TOOL,
                "shell: ok",
                BASE_US,
                3,
                {"name": "shell", "input": {"cmd": ["ls", "-la"]}},
            )
        ],
    )
    page = await delegate_sessions(orch, {"operation": "messages", "conversation_id": cid})
    assert set(page) == {"messages", "next_cursor"}
    assert page["next_cursor"] is None
    newest, reply, prompt = page["messages"]
    for message in page["messages"]:
        assert {"id", "role", "content", "created_at", "tool", "conversation_id"} <= set(message)
    assert newest["role"] == "tool"
    assert newest["tool"] == {"name": "shell", "input": {"cmd": ["ls", "-la"]}}
    assert reply["role"] == "assistant"
    assert reply["content"] == "[echo] turn 1: build it"
    assert reply["tool"] is None
    assert prompt["role"] == "user"
    assert prompt["content"] == "build it"
    assert prompt["run_id"] == reply["run_id"] == response["run_id"]


async def test_dismiss_restore_rename_purge_shapes(orch: AgentOrchestrator) -> None:
    await seed(orch, finished("c1", BASE_US), finished("c2", BASE_US + 1))

    async def ask(**request_: Any) -> dict[str, Any]:
        return await delegate_sessions(orch, request_)

    def listed(page: dict[str, Any]) -> list[str]:
        return [s["conversation_id"] for s in page["sessions"]]

    assert await ask(operation="dismiss", conversation_id="c1") == {"status": "ok"}
    # Dismissing archives: again is fine, and the archive lists it.
    assert await ask(operation="dismiss", conversation_id="c1") == {"status": "ok"}
    assert listed(await ask(operation="list")) == ["c2"]
    assert listed(await ask(operation="list", archived=True)) == ["c1"]
    assert await ask(operation="restore", conversation_id="c1") == {"status": "ok"}
    assert listed(await ask(operation="list", sort="created")) == ["c2", "c1"]
    assert await ask(operation="rename", conversation_id="c1", name="Named") == {"status": "ok"}
    assert (await ask(operation="list"))["sessions"][1]["name"] == "Named"

    refused = await ask(operation="purge", conversation_id="c1")
    assert_error(refused, "dismiss_refused", "archive")
    assert await ask(operation="purge", conversation_id="c1", force=True) == {"status": "ok"}
    gone = await ask(operation="purge", conversation_id="c1", force=True)
    assert_error(gone, "unknown_conversation", "c1")


async def test_delegate_agent_launch_and_follow_up_shapes(orch: AgentOrchestrator) -> None:
    launch = await delegate_agent(orch, '{"prompt": "hello there"}')
    assert launch["status"] == "ok"
    assert launch["kind"] == "launch"
    assert launch["agent_id"] == "echo"
    assert launch["run_status"] == "completed"
    assert launch["output"] == "[echo] turn 1: hello there"
    assert launch["usage"]["output_tokens"] > 0
    assert launch["duration_s"] >= 0
    assert "error" not in launch
    follow = await delegate_agent(
        orch, {"conversation_id": launch["conversation_id"], "prompt": "and again"}
    )
    assert follow["status"] == "ok"
    assert follow["kind"] == "follow_up"
    assert follow["conversation_id"] == launch["conversation_id"]
    assert follow["run_id"] != launch["run_id"]
    assert follow["output"] == "[echo] turn 2: and again"


async def test_batch_launches_one_conversation_per_item(orch: AgentOrchestrator) -> None:
    response = await delegate_agent(
        orch,
        {"batch": [{"prompt": "one"}, {"prompt": "two", "agent_id": "reviewer"}]},
    )
    assert response["status"] == "ok"
    runs = response["runs"]
    assert [r["output"] for r in runs] == ["[echo] turn 1: one", "[review] turn 1: two"]
    assert len({r["conversation_id"] for r in runs}) == 2
    assert len({r["run_id"] for r in runs}) == 2


async def test_detached_launch_returns_at_once(orch: AgentOrchestrator) -> None:
    response = await delegate_agent(
        orch, {"prompt": "background job", "agent_id": "slow", "mode": "detached"}
    )
    assert response["status"] == "ok"
    assert response["run_status"] == "running"
    session = await orch.get_session(response["conversation_id"])
    assert session.state.value == "pending"


async def test_one_megabyte_prompt_is_stored_and_returned_intact(
    orch: AgentOrchestrator, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # past its window, the session hands off: its document lands here
    line = 'Ünïcode prompt line: naïve café 数据 🚀 tabs\tand "quotes" and \\slashes\\\n'
    prompt = (line * (1_000_000 // len(line) + 1))[:1_000_000]
    assert len(prompt) == 1_000_000
    response = await delegate_agent(orch, json.dumps({"prompt": prompt}))
    assert response["status"] == "ok"
    assert response["output"] == f"[echo] turn 1: {prompt}"
    cid = response["conversation_id"]
    page = await delegate_sessions(orch, {"operation": "messages", "conversation_id": cid})
    assert [m["role"] for m in page["messages"]] == ["assistant", "user"]
    assert page["messages"][1]["content"] == prompt
    [(stored,)] = query(data_dir, "SELECT prompt FROM runs WHERE run_id = ?", [response["run_id"]])
    assert stored == prompt
    session = await orch.get_session(cid)
    assert session.title == line.strip()
    assert session.metrics.bytes > 2 * len(prompt.encode())
    # Its own two (a prompt past the window also hands the session off: more elsewhere).
    assert query(data_dir, "SELECT count(*) FROM messages WHERE conversation_id = ?", [cid]) == [
        (2,)
    ]


# --- whatever arrives, the tools answer in the seed's shapes -----------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def _mostly(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good`` three times in four, any JSON value otherwise."""
    return st.sampled_from([good, good, good, _JSON]).flatmap(lambda chosen: chosen)


_IDS = _mostly(st.sampled_from(["c1", "c1", "nope", ""]))
_TEXT = _mostly(st.text(min_size=1, max_size=20))
_SESSIONS_REQUEST = st.fixed_dictionaries(
    {
        "operation": _mostly(
            st.sampled_from(["list", "messages", "dismiss", "restore", "rename", "purge", "x"])
        )
    },
    optional={
        "conversation_id": _IDS,
        "name": _mostly(st.one_of(st.none(), st.text(max_size=30))),
        "force": _mostly(st.booleans()),
        "archived": _mostly(st.booleans()),
        "cursor": _mostly(st.text(max_size=20)),
        "limit": _mostly(st.integers(-2, 102)),
    },
)
_OPTIONS = {
    "agent_id": _mostly(st.sampled_from(["echo", "reviewer", "nobody"])),
    "mode": _mostly(st.sampled_from(["standard", "detached"])),
}
_AGENT_REQUEST = st.one_of(
    st.fixed_dictionaries(  # launch
        {"prompt": _TEXT},
        optional={**_OPTIONS, "cwd": _mostly(st.sampled_from(["/", "/nonexistent/dir"]))},
    ),
    st.fixed_dictionaries({"conversation_id": _IDS, "prompt": _TEXT}, optional=_OPTIONS),
    st.fixed_dictionaries(
        {"batch": _mostly(st.lists(st.fixed_dictionaries({"prompt": _TEXT}), max_size=2))},
        optional=_OPTIONS,
    ),
    st.dictionaries(st.sampled_from(["prompt", "conversation_id", "batch", "cwd", "x"]), _JSON),
)
_CALLS = st.lists(
    st.tuples(st.just("delegate_sessions"), _SESSIONS_REQUEST)
    | st.tuples(st.just("delegate_agent"), _AGENT_REQUEST),
    min_size=1,
    max_size=4,
)


def _check_shape(tool: str, request_: dict[str, Any], response: dict[str, Any]) -> None:
    json.dumps(response)
    event(f"{tool}: {response.get('error', {}).get('code', 'ok')}")
    if response.get("status") == "error":
        assert set(response) == {"status", "error"}
        assert set(response["error"]) == {"code", "message"}
        assert response["error"]["code"] in {
            "invalid_request",
            "invalid_cursor",
            "unknown_conversation",
            "unknown_agent",
            "dismiss_refused",
            "agent_busy",
            "session_not_ready",
            "cwd_missing",
        }
    elif tool == "delegate_agent":
        assert response["status"] == "ok"
        assert ("runs" in response) == ("batch" in request_)
    elif request_["operation"] == "list":
        assert set(response) == {"sessions", "next_cursor"}
    elif request_["operation"] == "messages":
        assert set(response) == {"messages", "next_cursor"}
    else:
        assert response == {"status": "ok"}


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=_CALLS)
def test_tools_never_raise_and_answer_in_the_seed_shapes(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    async def scenario() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            orch = await AgentOrchestrator.open(Path(tmp))
            try:
                await seed(orch, finished("c1", BASE_US, messages=5))
                for tool, request_ in calls:
                    _check_shape(tool, request_, await call_tool(orch, tool, json.dumps(request_)))
            finally:
                await orch.close(wait=False)

    asyncio.run(scenario())


# --- stricter inputs: blank prompts, stringly limits, empty cursors ----------


@pytest.mark.parametrize("prompt", ["   ", "\n\t\n"])
async def test_blank_prompt_is_refused(
    orch: AgentOrchestrator, data_dir: Path, prompt: str
) -> None:
    before = snapshot(data_dir)
    response = await delegate_agent(orch, {"prompt": prompt})
    assert_error(response, "invalid_request", "prompt", "whitespace")
    assert snapshot(data_dir) == before


@pytest.mark.parametrize("limit", ["3", True, 2.0])
async def test_limit_must_be_a_json_integer(orch: AgentOrchestrator, limit: object) -> None:
    response = await delegate_sessions(orch, {"operation": "list", "limit": limit})
    assert_error(response, "invalid_request", "limit")


async def test_empty_cursor_is_invalid_not_ignored(orch: AgentOrchestrator) -> None:
    response = await delegate_sessions(orch, {"operation": "list", "cursor": ""})
    assert_error(response, "invalid_cursor")
