"""The transcript view's reader: pages and searches from the end, never reading a file whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from source_homes import Homes
from sources_support import SESSION, assistant, user

from core.errors import InvalidRequest
from core.orchestrator import AgentOrchestrator
from core.sources.transcript import find_before

FILLER = "filler text " * 150  # about 1.8 KB a message


def _big_transcript(path: Path, messages: int) -> Path:
    """``messages`` alternating prompts and replies; the word "needle" only in message 10."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for i in range(messages):
            body = f"message {i} {FILLER}" + (" the needle is here" if i == 10 else "")
            ts = f"2026-03-01T10:{i // 3600 % 60:02d}:{i % 60:02d}.000Z"
            line = user(f"u{i}", body, ts) if i % 2 == 0 else assistant(f"a{i}", body, f"m{i}", ts)
            f.write(json.dumps(line) + "\n")
    return path


async def test_a_search_near_the_end_reads_little_of_a_large_file(
    empty_homes: Homes,
) -> None:
    path = _big_transcript(empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"), 20_000)
    size = path.stat().st_size
    assert size > 30_000_000

    found = find_before(str(path), "claude-code", SESSION, "message 19990 ", None)

    assert found is not None
    assert found.bytes_read < 64 * 1024 * 2
    missing = find_before(str(path), "claude-code", SESSION, "no such words", None)
    assert missing is None


async def test_find_message_returns_the_page_ending_at_the_match(
    orch: AgentOrchestrator, empty_homes: Homes
) -> None:
    _big_transcript(empty_homes.claude_file("-work-app", f"{SESSION}.jsonl"), 400)
    await orch.import_sources(empty_homes.claude, empty_homes.codex)

    match = await orch.find_message(SESSION, "NEEDLE", limit=5)

    assert match is not None
    newest = match.page.messages[0]
    assert "the needle is here" in newest.content
    assert newest.id == match.message_id
    assert [m.content.split()[1] for m in match.page.messages] == ["10", "9", "8", "7", "6"]
    # Searching on from the match finds nothing older.
    assert await orch.find_message(SESSION, "needle", limit=5, cursor=match.resume_cursor) is None


async def test_find_message_in_a_session_delegate_ran(orch: AgentOrchestrator) -> None:
    (handle,) = await orch.delegate("remember the word zebra", agent_id="echo")
    await handle.wait()
    (handle,) = await orch.delegate("something else", conversation_id=handle.conversation_id)
    await handle.wait()

    match = await orch.find_message(handle.conversation_id, "Zebra", limit=1)

    assert match is not None
    assert "zebra" in match.page.messages[0].content


async def test_an_empty_search_is_a_typed_error(orch: AgentOrchestrator) -> None:
    (handle,) = await orch.delegate("hello", agent_id="echo")
    await handle.wait()
    with pytest.raises(InvalidRequest):
        await orch.find_message(handle.conversation_id, "   ", limit=5)


async def test_transcript_details_name_the_file_its_size_and_model(
    orch: AgentOrchestrator, realdata: Homes
) -> None:
    await orch.import_sources(realdata.claude, realdata.codex)
    cid = "cb2e607c-c758-415a-8b45-c49e4631906a"

    details = await orch.transcript_details(cid)

    path = next(realdata.projects.glob(f"*/{cid}.jsonl"))
    assert details is not None
    assert details.path == path
    assert details.size == path.stat().st_size
    assert details.model is not None
    assert details.model.startswith("claude-")
