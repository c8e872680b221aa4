"""An id delegate printed keeps naming its session after the agent re-keys it.

Codex names its own threads: the session delegate launched under the id it minted
(and printed) is re-keyed to the thread id once the CLI reports it. The old id
stays an alias of the session for as long as the session lives: every lookup
that takes an id (or a unique prefix of one) resolves it, and purging the
session forgets it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import BASE_US, finished

from core.errors import AmbiguousId, UnknownConversation
from core.orchestrator import AgentOrchestrator
from core.tools import call_tool

MINTED = "4b3e6f7a-1111-4222-8333-944455556666"
THREAD = "019d0000-0000-7000-8000-00000000a11a"
LATER = "019d0000-0000-7000-8000-00000000b22b"


async def test_the_old_id_and_its_prefix_name_the_rekeyed_session(
    orch: AgentOrchestrator,
) -> None:
    await orch.store.bulk.insert([finished(MINTED, BASE_US, agent_id="codex")])
    await orch.store.sessions.rekey(MINTED, THREAD)

    assert await orch.store.sessions.current_id(MINTED) == THREAD
    assert await orch.store.sessions.current_id(THREAD) == THREAD
    assert await orch.store.sessions.current_id("nope") is None
    assert await orch.resolve_id(MINTED) == THREAD
    assert await orch.resolve_id(MINTED[:8]) == THREAD
    assert (await orch.get_session(MINTED)).conversation_id == THREAD
    page = await orch.recent_messages(MINTED, 10)
    assert {m.conversation_id for m in page.messages} == {THREAD}
    assert (await orch.context_report(MINTED)).session.conversation_id == THREAD


async def test_every_id_a_session_had_keeps_naming_it(orch: AgentOrchestrator) -> None:
    await orch.store.bulk.insert([finished(MINTED, BASE_US)])
    await orch.store.sessions.rekey(MINTED, THREAD)
    await orch.store.sessions.rekey(THREAD, LATER)
    for old in (MINTED, THREAD, MINTED[:10]):
        assert await orch.resolve_id(old) == LATER


async def test_a_prefix_shared_by_a_session_and_its_own_old_id_is_not_ambiguous(
    orch: AgentOrchestrator,
) -> None:
    await orch.store.bulk.insert([finished("abcdef-old", BASE_US), finished("zzz", BASE_US + 1)])
    await orch.store.sessions.rekey("abcdef-old", "abcdef-new")
    assert await orch.resolve_id("abcdef") == "abcdef-new"
    # Another session's old id sharing the prefix makes it ambiguous, as ids do.
    await orch.store.sessions.rekey("zzz", "abcdef-zzz")
    with pytest.raises(AmbiguousId):
        await orch.resolve_id("abcdef")


async def test_short_ids_stay_unique_against_old_ids(orch: AgentOrchestrator) -> None:
    a_old, b = "0123456789-a-old", "0123456789-b"
    await orch.store.bulk.insert([finished(a_old, BASE_US), finished(b, BASE_US + 1)])
    await orch.store.sessions.rekey(a_old, "ffff-new")
    short = (await orch.short_ids([b]))[b]
    # The printed prefix must not also be the prefix of another session's old id.
    assert not a_old.startswith(short)
    assert await orch.resolve_id(short) == b


async def test_a_session_id_wins_over_an_old_id_equal_to_it(orch: AgentOrchestrator) -> None:
    await orch.store.bulk.insert([finished(MINTED, BASE_US)])
    await orch.store.sessions.rekey(MINTED, THREAD)
    await orch.store.bulk.insert([finished(MINTED, BASE_US + 5)])  # the id, taken again
    assert await orch.resolve_id(MINTED) == MINTED
    assert await orch.resolve_id(THREAD) == THREAD


async def test_purging_the_session_forgets_its_old_ids(orch: AgentOrchestrator) -> None:
    await orch.store.bulk.insert([finished(MINTED, BASE_US)])
    await orch.store.sessions.rekey(MINTED, THREAD)
    await orch.purge(MINTED, force=True)
    for gone in (MINTED, THREAD):
        with pytest.raises(UnknownConversation):
            await orch.resolve_id(gone)
    count = await orch.store.db.fetch_one("SELECT count(*) FROM session_aliases")
    assert count is not None
    assert count[0] == 0


async def test_tools_take_the_old_id(orch: AgentOrchestrator) -> None:
    await orch.store.bulk.insert([finished(MINTED, BASE_US)])
    await orch.store.sessions.rekey(MINTED, THREAD)
    for operation in ("messages", "context", "rename", "dismiss", "restore"):
        request = {"operation": operation, "conversation_id": MINTED}
        answer = await call_tool(orch, "delegate_sessions", request)
        assert answer.get("status") != "error", (operation, answer)
    answer = await call_tool(orch, "delegate_agent", {"prompt": "hi", "conversation_id": MINTED})
    assert answer["status"] == "ok", answer
    assert answer["conversation_id"] == THREAD


# --- a transcript of the same thread -------------------------------------------


def _rollout(codex_home: Path, thread: str) -> Path:
    day = codex_home / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True, exist_ok=True)
    path = day / f"rollout-2026-11-20T10-00-00-{thread}.jsonl"

    def line(kind: str, payload: dict[str, object]) -> str:
        return json.dumps({"timestamp": "2026-11-20T10:00:00Z", "type": kind, "payload": payload})

    user = {"type": "message", "role": "user"}
    user["content"] = [{"type": "input_text", "text": "say pong"}]
    reply = {"type": "message", "role": "assistant"}
    reply["content"] = [{"type": "output_text", "text": "pong"}]
    lines = [
        line("session_meta", {"id": thread, "cwd": "/tmp/project"}),
        line("response_item", user),
        line("response_item", reply),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


async def test_a_transcript_imported_after_the_rekey_updates_the_same_session(
    orch: AgentOrchestrator, tmp_path: Path
) -> None:
    await orch.store.bulk.insert([finished(MINTED, BASE_US, agent_id="codex")])
    await orch.store.sessions.rekey(MINTED, THREAD)
    rollout = _rollout(tmp_path / "codex", THREAD)
    await orch.import_sources(tmp_path / "no-claude", tmp_path / "codex", workers=0)
    page = await orch.list_sessions(10)
    assert [s.conversation_id for s in page.sessions] == [THREAD]
    assert (await orch.get_session(MINTED)).metrics.bytes == rollout.stat().st_size


async def test_a_transcript_imported_before_the_rekey_is_merged_not_duplicated(
    orch: AgentOrchestrator, tmp_path: Path
) -> None:
    """Another process imported the thread's rollout while the launch was in flight."""
    await orch.store.bulk.insert([finished(MINTED, BASE_US, agent_id="codex")])
    rollout = _rollout(tmp_path / "codex", THREAD)
    await orch.import_sources(tmp_path / "no-claude", tmp_path / "codex", workers=0)
    assert len((await orch.list_sessions(10)).sessions) == 2

    await orch.store.sessions.rekey(MINTED, THREAD)
    page = await orch.list_sessions(10)
    assert [s.conversation_id for s in page.sessions] == [THREAD]
    session = await orch.get_session(MINTED)
    assert (session.conversation_id, session.source) == (THREAD, "delegate")
    # The rollout is read again into the session that took its id.
    await orch.import_sources(tmp_path / "no-claude", tmp_path / "codex", workers=0)
    assert (await orch.get_session(THREAD)).metrics.bytes == rollout.stat().st_size
    assert len((await orch.list_sessions(10)).sessions) == 1


async def test_a_rekey_to_the_same_id_changes_nothing(orch: AgentOrchestrator) -> None:
    await orch.store.bulk.insert([finished(MINTED, BASE_US)])
    await orch.store.sessions.rekey(MINTED, MINTED)
    assert await orch.resolve_id(MINTED) == MINTED
    count = await orch.store.db.fetch_one("SELECT count(*) FROM session_aliases")
    assert count is not None
    assert count[0] == 0
    with pytest.raises(UnknownConversation):
        await orch.store.sessions.rekey("nope", "nope")


async def test_a_session_of_delegate_s_own_holding_the_new_id_is_never_dropped(
    orch: AgentOrchestrator,
) -> None:
    await orch.store.bulk.insert([finished(MINTED, BASE_US), finished(THREAD, BASE_US + 1)])
    with pytest.raises(Exception, match="UNIQUE"):
        await orch.store.sessions.rekey(MINTED, THREAD)
    assert await orch.resolve_id(MINTED) == MINTED
    assert await orch.resolve_id(THREAD) == THREAD
