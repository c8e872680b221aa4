"""Ids people can type: unique prefixes in, shortest unique prefixes out; typed id errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import BASE_US, finished

from core.errors import AmbiguousId, DelegateError, UnknownConversation, UnknownRun
from core.orchestrator import AgentOrchestrator
from core.tools import call_tool
from tui.cli import main

# Two time-ordered ids (UUIDv7-like) sharing 24 characters, and one loner.
TWIN_A = "019e1695-0522-7c83-8b39-0dd379793f81"
TWIN_B = "019e1695-0522-7c83-8b39-1dd379793f82"
LONER = "abcdef12-3456-4789-8abc-def012345678"


@pytest.fixture
async def three(orch: AgentOrchestrator) -> AgentOrchestrator:
    await orch.store.bulk.insert(
        [finished(cid, BASE_US + i * 1_000_000) for i, cid in enumerate((TWIN_A, TWIN_B, LONER))]
    )
    return orch


async def test_a_unique_prefix_of_six_names_the_session(three: AgentOrchestrator) -> None:
    assert await three.resolve_id("abcdef") == LONER
    assert await three.resolve_id(LONER) == LONER
    assert (await three.get_session("abcdef12")).conversation_id == LONER
    page = await three.recent_messages("abcdef", 5)
    assert {m.conversation_id for m in page.messages} == {LONER}


async def test_too_short_or_unknown_prefixes_are_unknown(three: AgentOrchestrator) -> None:
    for text in ("abcde", "zzzzzz", "", "\udcff\udcfe-id", "abc\x00def"):
        with pytest.raises(UnknownConversation):
            await three.resolve_id(text)


async def test_an_ambiguous_prefix_lists_the_candidates(three: AgentOrchestrator) -> None:
    with pytest.raises(AmbiguousId) as caught:
        await three.resolve_id("019e1695")
    assert caught.value.code == "ambiguous_id"
    assert TWIN_A in caught.value.message
    assert TWIN_B in caught.value.message


async def test_printed_ids_are_the_shortest_unique_prefix(three: AgentOrchestrator) -> None:
    short = await three.short_ids([TWIN_A, TWIN_B, LONER])
    assert short[LONER] == "abcdef12"
    assert short[TWIN_A] == TWIN_A[:25]
    assert short[TWIN_B] == TWIN_B[:25]
    for cid, prefix in short.items():
        assert await three.resolve_id(prefix) == cid


async def test_tools_take_prefixes(three: AgentOrchestrator) -> None:
    page = await call_tool(
        three, "delegate_sessions", {"operation": "messages", "conversation_id": "abcdef"}
    )
    assert page["messages"], page
    reply = await call_tool(three, "delegate_agent", {"conversation_id": "abcdef", "prompt": "hi"})
    assert reply["status"] == "ok", reply
    assert reply["conversation_id"] == LONER
    ambiguous = await call_tool(
        three, "delegate_sessions", {"operation": "dismiss", "conversation_id": "019e1695-05"}
    )
    assert ambiguous["error"]["code"] == "ambiguous_id"
    done = await call_tool(
        three, "delegate_sessions", {"operation": "dismiss", "conversation_id": TWIN_A[:25]}
    )
    assert done == {"status": "ok"}
    # An archived session keeps its id (it can be restored); a purged one frees it.
    purged = await call_tool(
        three, "delegate_sessions", {"operation": "purge", "conversation_id": TWIN_A[:25]}
    )
    assert purged == {"status": "ok"}
    assert await three.resolve_id("019e1695") == TWIN_B  # unique again


async def test_an_unknown_run_is_unknown_run(orch: AgentOrchestrator) -> None:
    with pytest.raises(UnknownRun) as caught:
        await orch.store.runs.get("run-that-never-was")
    assert caught.value.code == "unknown_run"
    assert "conversation" not in caught.value.message


async def test_an_unexpected_failure_in_a_tool_is_one_internal_error(
    orch: AgentOrchestrator,
) -> None:
    # Not JSON text, not a dict: nothing downstream expects it.
    response = await call_tool(orch, "delegate_sessions", 42)  # type: ignore[arg-type]
    assert response["status"] == "error"
    assert response["error"]["code"] in {"internal_error", "invalid_request"}
    assert "\n" not in response["error"]["message"]


def test_cli_takes_prefixes_and_prints_short_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    data = tmp_path / "data"

    async def fill() -> None:
        orch = await AgentOrchestrator.open(data)
        try:
            await orch.store.bulk.insert(
                [finished(c, BASE_US + i) for i, c in enumerate((TWIN_A, TWIN_B, LONER))]
            )
        finally:
            await orch.close()

    asyncio.run(fill())
    assert main(["--data-dir", str(data), "sessions", "show", "abcdef"]) == 0
    assert LONER in capsys.readouterr().out

    assert main(["--data-dir", str(data), "sessions", "show", "019e1695"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("delegate: ambiguous_id: ")
    assert TWIN_A in err
    assert TWIN_B in err

    assert main(["--data-dir", str(data), "sessions", "show", "019e16", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "ambiguous_id"

    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["--data-dir", str(data), "sessions", "list"]) == 0
    out = capsys.readouterr().out
    assert TWIN_A[:25] in out
    assert "abcdef12 " in out


def test_a_data_dir_that_is_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    assert main(["--data-dir", str(not_a_dir), "sessions", "list"]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert err.startswith(("delegate: store_error: ", "delegate: internal_error: "))


def test_delegate_errors_are_typed() -> None:
    for cls in (AmbiguousId, UnknownRun):
        assert issubclass(cls, DelegateError)


async def test_stop_takes_a_prefix(three: AgentOrchestrator) -> None:
    from core.errors import NotRunning

    with pytest.raises(NotRunning):  # the idle session was found by its prefix
        await three.stop_run("abcdef")
    with pytest.raises(AmbiguousId):
        await three.stop_run("019e1695")
    with pytest.raises(UnknownConversation):
        await three.stop_run("no-such-run-or-session")
