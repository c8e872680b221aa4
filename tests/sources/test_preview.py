"""Previews of imported sessions page backwards through the transcript file."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
from source_homes import Homes
from sources_support import SESSION, assistant, line, user

from core.cursors import MessageCursor, encode_message_cursor
from core.orchestrator import AgentOrchestrator
from core.sources.lines import BackwardLines, ForwardLines
from core.sources.preview import read_page
from core.tools import delegate_sessions

LONG_CLAUDE = "cb2e607c-c758-415a-8b45-c49e4631906a"
LONG_CODEX = "019c8a53-a0dd-7130-bcd7-95445d84846a"


async def _pages(orch: AgentOrchestrator, cid: str, limit: int) -> list[dict[str, object]]:
    seen: list[dict[str, object]] = []
    cursor = None
    while True:
        request: dict[str, object] = {"operation": "messages", "conversation_id": cid}
        request["limit"] = limit
        if cursor:
            request["cursor"] = cursor
        page = await delegate_sessions(orch, request)
        assert "messages" in page, page
        assert len(page["messages"]) <= limit
        seen += page["messages"]
        cursor = page["next_cursor"]
        if cursor is None:
            return seen


@pytest.mark.parametrize("cid", [LONG_CLAUDE, LONG_CODEX])
async def test_pages_cover_the_whole_transcript_newest_first_without_gaps(
    orch: AgentOrchestrator, realdata: Homes, cid: str
) -> None:
    await orch.import_sources(realdata.claude, realdata.codex)
    session = await orch.get_session(cid)

    messages = await _pages(orch, cid, 7)

    seqs = [m["seq"] for m in messages]
    assert seqs == sorted(seqs, reverse=True)
    assert len(set(seqs)) == len(seqs)
    # Every message the import counted is shown once: counting and paging agree.
    assert len(messages) == session.metrics.messages
    assert sum(m["role"] == "user" for m in messages) == session.metrics.turns
    assert all(m["conversation_id"] == cid for m in messages)
    # The same as one big page.
    whole = await orch.recent_messages(cid, 100) if len(messages) <= 100 else None
    if whole is not None:
        assert [m.seq for m in whole.messages] == seqs


async def test_message_shapes_from_a_claude_transcript(
    orch: AgentOrchestrator, realdata: Homes
) -> None:
    await orch.import_sources(realdata.claude, realdata.codex)
    page = await orch.recent_messages(LONG_CLAUDE, 6)
    newest = page.messages[0]
    path = realdata.claude_file(
        "-Users-dain-workspace-coderabbit-review-helper", f"{LONG_CLAUDE}.jsonl"
    )
    data = path.read_bytes()
    # seq is the byte offset of the line: the line there is the message.
    raw = json.loads(data[newest.seq : data.index(b"\n", newest.seq)])
    assert raw["uuid"] == newest.id
    assert newest.role.value == "assistant"
    assert newest.content.startswith("Perfect! I've updated the README")
    assert newest.created_at.isoformat() == "2025-11-17T12:02:50.937000+00:00"
    tools = [m for m in page.messages if m.tool]
    assert any(m.role.value == "tool" and m.tool and "tool_use_id" in m.tool for m in tools)
    call = next(m for m in tools if m.role.value == "assistant")
    assert call.tool is not None
    assert call.tool["name"] == "Edit"


async def test_foreign_cursors_are_refused(orch: AgentOrchestrator, realdata: Homes) -> None:
    await orch.import_sources(realdata.claude, realdata.codex)
    first = await delegate_sessions(
        orch, {"operation": "messages", "conversation_id": LONG_CLAUDE, "limit": 2}
    )
    cursor = first["next_cursor"]
    assert isinstance(cursor, str)
    for bad in (
        {"conversation_id": LONG_CODEX, "cursor": cursor},  # another conversation's
        {
            "conversation_id": LONG_CLAUDE,
            "cursor": encode_message_cursor(MessageCursor(LONG_CLAUDE, 5)),
        },
        {"conversation_id": LONG_CLAUDE, "cursor": "bm90LWEtY3Vyc29y"},
    ):
        response = await delegate_sessions(orch, {"operation": "messages", **bad})
        assert response["status"] == "error"
        assert response["error"]["code"] == "invalid_cursor"  # type: ignore[index]


async def test_unknown_conversation_is_still_unknown(orch: AgentOrchestrator) -> None:
    response = await delegate_sessions(orch, {"operation": "messages", "conversation_id": "nope"})
    assert response["error"]["code"] == "unknown_conversation"  # type: ignore[index]


def _label(index: int) -> str:
    return "prompt" if index % 2 == 0 else "reply"


def _big_transcript(path: Path, size: int) -> int:
    """A Claude Code transcript of about ``size`` bytes; returns its message count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    filler = "lorem ipsum dolor sit amet " * 70  # ~1.9 KB of text per message
    count = 0
    with path.open("wb") as f:
        written = 0
        while written < size:
            ts = f"2026-03-01T{10 + count // 360000 % 10:02d}:00:00.000Z"
            if count % 2 == 0:
                data = line(user(f"u{count}", f"prompt {count} {filler}", ts))
            else:
                data = line(assistant(f"a{count}", f"reply {count} {filler}", f"m{count}", ts))
            f.write(data)
            written += len(data)
            count += 1
    return count


async def test_last_20_of_a_100_mb_transcript_reads_under_2_mb(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    path = empty_homes.projects / "-work-app" / f"{SESSION}.jsonl"
    count = _big_transcript(path, 100 * 1024 * 1024)
    assert path.stat().st_size >= 100 * 1024 * 1024

    report = await orch.import_sources(empty_homes.claude, empty_homes.codex)
    assert report.sessions_added == 1
    assert (await orch.get_session(SESSION)).metrics.messages == count

    started = time.perf_counter()
    page = read_page(str(path), "claude-code", SESSION, 20)
    elapsed = time.perf_counter() - started
    assert len(page.messages) == 20
    assert page.bytes_read < 2 * 1024 * 1024
    assert page.messages[0].content.startswith(f"{_label(count - 1)} {count - 1} ")
    assert elapsed < 1.0  # the target is 50 ms; this only catches reading the whole file
    # The same through the tool, and the next page continues right before it.
    tool_page = await orch.recent_messages(SESSION, 20)
    assert [m.seq for m in tool_page.messages] == [m.seq for m in page.messages]
    older = await orch.recent_messages(SESSION, 20, tool_page.next_cursor)
    assert older.messages[0].content.startswith(f"{_label(count - 21)} {count - 21} ")


# --- the line readers --------------------------------------------------------


def _lines(data: bytes, cap: int, chunk: int) -> tuple[list[tuple[int, bytes | None]], int]:
    reader = ForwardLines(io.BytesIO(data), 0, cap=cap, chunk=chunk)
    return list(reader), reader.end


@pytest.mark.parametrize("chunk", [1, 3, 7, 64])
def test_forward_lines_skip_oversized_and_leave_a_torn_tail(chunk: int) -> None:
    data = b"ab\n" + b"x" * 20 + b"\ncd\n\nef"
    lines, end = _lines(data, cap=10, chunk=chunk)
    assert lines == [(0, b"ab"), (3, None), (24, b"cd"), (27, b"")]
    assert end == 28  # "ef" is torn: left for the next read


@pytest.mark.parametrize("chunk", [1, 3, 7, 64])
def test_backward_lines_mirror_forward_lines(chunk: int) -> None:
    data = b"ab\n" + b"x" * 20 + b"\ncd\nlast\nto"
    back = list(BackwardLines(io.BytesIO(data), cap=10, chunk=chunk))
    assert back == [(27, b"last"), (24, b"cd"), (3, None), (0, b"ab")]
    # From a cursor (the offset of a line start), the line before it comes next.
    assert list(BackwardLines(io.BytesIO(data), end=24, cap=10, chunk=chunk)) == [
        (3, None),
        (0, b"ab"),
    ]


def test_backward_lines_never_buffer_an_oversized_line() -> None:
    huge = b"y" * (3 * 1024 * 1024)
    data = b"first\n" + huge + b"\nlast\n"
    reader = BackwardLines(io.BytesIO(data), cap=1024, chunk=64 * 1024)
    out = list(reader)
    assert out == [(len(data) - 5, b"last"), (6, None), (0, b"first")]
